# R survey 4.1-1 on its api data (California Academic Performance Index, the package's
# documentation examples): means, totals, domains, proportions' intervals, degrees of
# freedom, design effects and svyglm, under linearization (dstrat, dclus1, dclus2) and
# replicate weights (JK1, JKn, bootstrap with a seed; BRR and Fay on 2-PSU strata), plus
# the lonely-PSU options on a design built with one lonely PSU.
#
# Run from the repository root:  Rscript tools/r_reference/survey_api.R
# Writes tests/reference/survey_api/*.csv and *.json.

source(file.path("tools", "r_reference", "common.R"))
suppressPackageStartupMessages(library(survey))

script <- "tools/r_reference/survey_api.R"
out_dir <- file.path(reference_root, "survey_api")
packages <- c("survey", "jsonlite")
seed <- 20240521L

# ---------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------
data(api)
data(scd)
columns <- c("cds", "stype", "snum", "dnum", "cnum", "pw", "fpc", "fpc1", "fpc2", "api00", "api99",
             "target", "growth", "sch.wide", "comp.imp", "both", "awards", "meals", "ell", "yr.rnd",
             "mobility", "enroll", "api.stu", "full", "emer", "avg.ed")
export <- function(frame, name) {
  keep <- intersect(columns, names(frame))
  write_reference_csv(frame[, keep], file.path(out_dir, paste0(name, ".csv")))
  list(file = paste0(name, ".csv"), rows = nrow(frame), columns = keep)
}
data_files <- list(
  apistrat = export(apistrat, "apistrat"),
  apiclus1 = export(apiclus1, "apiclus1"),
  apiclus2 = export(apiclus2, "apiclus2"),
  apipop = export(apipop, "apipop")
)
write_reference_csv(scd, file.path(out_dir, "scd.csv"))
data_files$scd <- list(file = "scd.csv", rows = nrow(scd), columns = names(scd))

# Variables the statistics use (0/1 indicators built from the factors)
setup_variables <- c(
  'apistrat$awards_yes <- as.numeric(apistrat$awards == "Yes")',
  'apistrat$sch_wide_yes <- as.numeric(apistrat$sch.wide == "Yes")',
  'apiclus1$awards_yes <- as.numeric(apiclus1$awards == "Yes")',
  'apiclus1$sch_wide_yes <- as.numeric(apiclus1$sch.wide == "Yes")',
  'apiclus2$awards_yes <- as.numeric(apiclus2$awards == "Yes")',
  'apiclus2$sch_wide_yes <- as.numeric(apiclus2$sch.wide == "Yes")'
)
for (line in setup_variables) eval(parse(text = line))

# ---------------------------------------------------------------------------
# Serializers
# ---------------------------------------------------------------------------

svystat_json <- function(x) {
  out <- list(estimate = named(coef(x)), se = named(setNames(SE(x), names(coef(x)))),
              vcov = matrix_json(vcov(x)))
  d <- attr(x, "deff")
  if (!is.null(d)) out$deff <- named(setNames(deff(x), names(coef(x))))
  out
}

svyby_json <- function(b) {
  frame <- as.data.frame(b)
  rows <- lapply(seq_len(nrow(frame)), function(i) as.list(frame[i, , drop = FALSE]))
  # coef(b) and vcov(b) are named "domain:variable"; the SEs are sqrt(diag(vcov(b)))
  list(rows = rows, estimate = named(coef(b)),
       se = named(setNames(sqrt(diag(vcov(b))), names(coef(b)))),
       vcov = matrix_json(vcov(b)))
}

ciprop_json <- function(x) {
  ci <- attr(x, "ci")
  list(estimate = as.numeric(x), se = as.numeric(sqrt(attr(x, "var"))), ci_low = unname(ci[1]),
       ci_high = unname(ci[2]), level = 0.95)
}

glm_json <- function(m) {
  s <- summary(m)
  list(coefficients = named(coef(m)), vcov = matrix_json(vcov(m)),
       se = named(setNames(sqrt(diag(vcov(m))), names(coef(m)))),
       t_value = named(setNames(s$coefficients[, 3], rownames(s$coefficients))),
       p_value = named(setNames(s$coefficients[, 4], rownames(s$coefficients))),
       df_residual = m$df.residual, dispersion = as.numeric(s$dispersion))
}

confint_json <- function(ci) {
  rows <- rownames(ci)
  setNames(lapply(seq_len(nrow(ci)), function(i) list(low = ci[i, 1], high = ci[i, 2])), rows)
}

# Evaluate one statistic's call text in env; keep the call, value, warnings or error.
statistic <- function(label, text, env, serialize) {
  run <- capture_run(parse(text = text)[[1]], env)
  out <- list(label = label, call = text, warnings = I(unique(run$warnings)), error = run$error)
  if (is.null(run$error)) {
    value <- tryCatch(serialize(run$value), error = function(e) e)
    if (inherits(value, "error")) stop("serializing ", text, ": ", conditionMessage(value))
    out$value <- value
  }
  out
}

design_summary <- function(d) {
  if (inherits(d, "svyrep.design")) {
    list(kind = "replicate", type = d$type, replicates = ncol(d$repweights), scale = d$scale,
         rscales_distinct = unique(unname(d$rscales)), rscales = unname(d$rscales), mse = d$mse,
         degf = degf(d), n = nrow(d$variables), sum_weights = sum(weights(d, "sampling")))
  } else {
    list(kind = "linearization", n = nrow(d$variables), degf = degf(d),
         strata = length(unique(d$strata[, 1])), psus = length(unique(paste(d$strata[, 1], d$cluster[, 1]))),
         sum_weights = sum(weights(d)))
  }
}

# The standard battery of statistics on one design.
battery <- function(design_name, env, glm = TRUE) {
  d <- design_name
  v <- "~api00 + awards_yes + sch_wide_yes"
  stats <- list(
    statistic("mean", sprintf("svymean(%s, %s, deff = TRUE)", v, d), env, svystat_json),
    statistic("mean, deff with replacement", sprintf('svymean(%s, %s, deff = "replace")', v, d), env, svystat_json),
    statistic("total", sprintf("svytotal(%s, %s, deff = TRUE)", v, d), env, svystat_json),
    statistic("domain means by stype", sprintf("svyby(~api00 + awards_yes, ~stype, %s, svymean, deff = TRUE, covmat = TRUE)", d), env, svyby_json),
    statistic("domain totals by stype", sprintf("svyby(~api00 + awards_yes, ~stype, %s, svytotal, deff = TRUE, covmat = TRUE)", d), env, svyby_json),
    statistic("degrees of freedom", sprintf("degf(%s)", d), env, function(x) x),
    statistic("confint of the mean (normal)", sprintf("confint(svymean(%s, %s))", v, d), env, confint_json),
    statistic("confint of the mean (t, degf)", sprintf("confint(svymean(%s, %s), df = degf(%s))", v, d, d), env, confint_json),
    statistic("confint of the total (normal)", sprintf("confint(svytotal(%s, %s))", v, d), env, confint_json)
  )
  for (method in c("logit", "likelihood", "beta", "mean", "xlogit", "asin")) {
    stats[[length(stats) + 1]] <- statistic(
      paste("svyciprop", method), sprintf('svyciprop(~awards_yes, %s, method = "%s")', d, method), env, ciprop_json)
  }
  stats[[length(stats) + 1]] <- statistic(
    "svyciprop logit, sch_wide", sprintf('svyciprop(~sch_wide_yes, %s, method = "logit")', d), env, ciprop_json)
  if (glm) {
    stats[[length(stats) + 1]] <- statistic(
      "svyglm quasibinomial", sprintf("svyglm(awards_yes ~ api00 + ell, design = %s, family = quasibinomial())", d),
      env, glm_json)
    stats[[length(stats) + 1]] <- statistic(
      "svyglm gaussian", sprintf("svyglm(api00 ~ ell + meals, design = %s)", d), env, glm_json)
  }
  stats
}

replicate_weights_file <- function(d, name) {
  w <- weights(d, "analysis")
  frame <- data.frame(row = seq_len(nrow(w)), sampling_weight = weights(d, "sampling"))
  frame <- cbind(frame, setNames(as.data.frame(unname(w)), paste0("rep", seq_len(ncol(w)))))
  write_reference_csv(frame, file.path(out_dir, paste0(name, "_repweights.csv")))
  paste0(name, "_repweights.csv")
}

design_files <- list()
write_design <- function(name, design_call, setup, env, note = NULL, weights_file = FALSE, glm = TRUE,
                         extra_stats = list()) {
  run <- capture_run(parse(text = paste(name, "<-", design_call))[[1]], env)
  body <- list(
    provenance = provenance(script, packages, extra = list(seed = seed)),
    design = name,
    setup = I(c("library(survey)", "data(api)", "data(scd)", setup_variables, setup)),
    design_call = paste(name, "<-", design_call),
    design_warnings = I(unique(run$warnings)),
    design_error = run$error,
    note = note
  )
  if (is.null(run$error)) {
    d <- get(name, envir = env)
    body$summary <- design_summary(d)
    if (weights_file) body$replicate_weights <- replicate_weights_file(d, name)
    body$statistics <- c(battery(name, env, glm = glm), extra_stats)
  }
  write_reference_json(body, file.path(out_dir, paste0(name, ".json")))
  design_files[[name]] <<- list(file = paste0(name, ".json"), call = body$design_call,
                                error = run$error, replicate_weights = body$replicate_weights)
  invisible(body)
}

env <- new.env(parent = globalenv())
for (line in setup_variables) eval(parse(text = line), env)
assign("apistrat", apistrat, env); assign("apiclus1", apiclus1, env); assign("apiclus2", apiclus2, env)

# ---------------------------------------------------------------------------
# Linearization designs (survey's svydesign examples)
# ---------------------------------------------------------------------------
write_design("dstrat", "svydesign(id = ~1, strata = ~stype, weights = ~pw, data = apistrat, fpc = ~fpc)", NULL, env)
write_design("dclus1", "svydesign(id = ~dnum, weights = ~pw, data = apiclus1, fpc = ~fpc)", NULL, env)
write_design("dclus2", "svydesign(id = ~dnum + snum, fpc = ~fpc1 + fpc2, data = apiclus2)", NULL, env,
             note = "two-stage with both fpcs: svyrecvar's multistage variance (a term per stage)")

# ---------------------------------------------------------------------------
# Replicate designs
# ---------------------------------------------------------------------------
for (base in c("dstrat", "dclus1", "dclus2")) {
  base_call <- design_files[[base]]$call
  for (type in c("JK1", "JKn")) {
    name <- paste0(base, "_", tolower(type))
    write_design(name, sprintf('as.svrepdesign(%s, type = "%s")', base, type), base_call, env,
                 weights_file = base != "dstrat",
                 note = if (base == "dstrat") paste("replicate weights not stored (200 x 200):",
                                                    "delete-one-PSU jackknife, deterministic") else NULL)
  }
  name <- paste0(base, "_boot")
  set.seed(seed)
  write_design(name, sprintf('as.svrepdesign(%s, type = "bootstrap", replicates = 50)', base),
               c(base_call, paste0("set.seed(", seed, ")")), env, weights_file = TRUE,
               note = paste("random replicate weights: stored in the CSV (columns rep1..rep50 are the",
                            "analysis weights of each replicate, row = row of the data file)"))
}

# BRR and Fay: survey's documented example (scd: 3 strata x 2 ambulance PSUs)
scd_setup <- c(
  "scdnofpc <- svydesign(data = scd, prob = ~1, id = ~ambulance, strata = ~ESA, nest = TRUE)",
  "scddes <- svydesign(data = scd, prob = ~1, id = ~ambulance, strata = ~ESA, nest = TRUE, fpc = rep(5, 6))"
)
for (line in scd_setup) eval(parse(text = line), env)
scd_stats <- function(d) {
  list(
    statistic("ratio alive/arrests (documented)", sprintf("svyratio(~alive, ~arrests, design = %s)", d), env,
              function(x) list(ratio = as.numeric(coef(x)), se = as.numeric(SE(x)))),
    statistic("mean", sprintf("svymean(~alive + arrests, %s, deff = TRUE)", d), env, svystat_json),
    statistic("total", sprintf("svytotal(~alive + arrests, %s, deff = TRUE)", d), env, svystat_json),
    statistic("degrees of freedom", sprintf("degf(%s)", d), env, function(x) x)
  )
}
write_scd <- function(name, design_call, setup, note = NULL) {
  run <- capture_run(parse(text = paste(name, "<-", design_call))[[1]], env)
  d <- get(name, envir = env)
  body <- list(
    provenance = provenance(script, packages),
    design = name,
    setup = I(c("library(survey)", "data(scd)", setup)),
    design_call = paste(name, "<-", design_call),
    design_warnings = I(unique(run$warnings)),
    note = note,
    summary = design_summary(d),
    replicate_weights = if (inherits(d, "svyrep.design")) replicate_weights_file(d, name) else NULL,
    statistics = scd_stats(name)
  )
  write_reference_json(body, file.path(out_dir, paste0(name, ".json")))
  design_files[[name]] <<- list(file = paste0(name, ".json"), call = body$design_call,
                                replicate_weights = body$replicate_weights)
}
write_scd("scdnofpc_lin", "scdnofpc", scd_setup, "the linearization design itself, for comparison")
write_scd("scd2brr", 'as.svrepdesign(scdnofpc, type = "BRR")', scd_setup)
write_scd("scd2fay", 'as.svrepdesign(scdnofpc, type = "Fay", fay.rho = 0.3)', scd_setup)
write_scd("scd2jkn", 'as.svrepdesign(scdnofpc, type = "JKn")', scd_setup)
write_scd("scd2jknf", 'as.svrepdesign(scddes, type = "JKn")', scd_setup, "JKn with finite population correction")
write_scd("scdrep", 'svrepdesign(data = scd, type = "BRR", repweights = 2 * cbind(c(1,0,1,0,1,0), c(1,0,0,1,0,1), c(0,1,1,0,0,1), c(0,1,0,1,1,0)), combined.weights = FALSE)',
          character(), "producer-supplied BRR weights (Levy and Lemeshow), survey's svrepdesign example")

# BRR / Fay on the api data: apistrat with schools paired within stype into pseudo-strata
# of two PSUs each (100 pairs), the layout BRR needs.
pair_setup <- c(
  "apistrat_pairs <- apistrat[order(apistrat$stype, apistrat$snum), ]",
  "apistrat_pairs$pair <- paste(apistrat_pairs$stype, (ave(seq_along(apistrat_pairs$snum), apistrat_pairs$stype, FUN = seq_along) + 1) %/% 2)",
  "dpairs <- svydesign(id = ~snum, strata = ~pair, weights = ~pw, data = apistrat_pairs)"
)
for (line in pair_setup) eval(parse(text = line), env)
write_reference_csv(data.frame(snum = env$apistrat_pairs$snum, pair = env$apistrat_pairs$pair),
                    file.path(out_dir, "apistrat_pairs.csv"))
write_design("dpairs_lin", "dpairs", pair_setup, env,
             note = paste("apistrat_pairs.csv gives each school's pseudo-stratum (rows in the order used);",
                          "no fpc, so the with-replacement variance of 2 PSUs per stratum"))
write_design("dpairs_brr", 'as.svrepdesign(dpairs, type = "BRR")', pair_setup, env, weights_file = TRUE,
             glm = TRUE, note = "BRR with survey's Hadamard matrix; weights stored (rows in apistrat_pairs order)")
write_design("dpairs_fay", 'as.svrepdesign(dpairs, type = "Fay", fay.rho = 0.3)', pair_setup, env,
             glm = FALSE, note = paste("Fay's BRR with rho = 0.3. Weights not stored: each is the BRR weight's",
                                       "rule with rho, pw * (2 - 0.3) where dpairs_brr has 2 * pw and pw * 0.3",
                                       "where it has 0 (checked on this run)"))

# ---------------------------------------------------------------------------
# Lonely PSU: apistrat with one high school moved into a stratum of its own
# ---------------------------------------------------------------------------
lonely_setup <- c(
  "apistrat_lonely <- apistrat",
  'apistrat_lonely$stratum <- as.character(apistrat_lonely$stype)',
  'apistrat_lonely$stratum[which(apistrat_lonely$stype == "H")[1]] <- "H-lonely"',
  "dlonely <- svydesign(id = ~1, strata = ~stratum, weights = ~pw, data = apistrat_lonely, fpc = ~fpc)",
  "apistrat_certain <- apistrat_lonely",
  'apistrat_certain$fpc[apistrat_certain$stratum == "H-lonely"] <- 1',
  "dcertain <- svydesign(id = ~1, strata = ~stratum, weights = ~pw, data = apistrat_certain, fpc = ~fpc)"
)
for (line in lonely_setup) eval(parse(text = line), env)
lonely_row <- which(apistrat$stype == "H")[1]
lonely_cases <- list()
for (option in c("fail", "certainty", "adjust", "average", "remove")) {
  options(survey.lonely.psu = option)
  for (d in c("dlonely", "dcertain")) {
    lonely_cases[[length(lonely_cases) + 1]] <- list(
      option = option, design = d,
      setup_option = sprintf('options(survey.lonely.psu = "%s")', option),
      statistics = list(
        statistic("mean", sprintf("svymean(~api00 + awards_yes, %s, deff = TRUE)", d), env, svystat_json),
        statistic("total", sprintf("svytotal(~api00 + awards_yes, %s)", d), env, svystat_json),
        statistic("domain means by stype", sprintf("svyby(~api00 + awards_yes, ~stype, %s, svymean, covmat = TRUE)", d), env, svyby_json),
        statistic("degrees of freedom", sprintf("degf(%s)", d), env, function(x) x),
        statistic("svyglm quasibinomial", sprintf("svyglm(awards_yes ~ api00 + ell, design = %s, family = quasibinomial())", d), env, glm_json)
      )
    )
  }
}
options(survey.lonely.psu = "fail")
write_reference_json(list(
  provenance = provenance(script, packages),
  setup = I(c("library(survey)", "data(api)", setup_variables, lonely_setup)),
  lonely_row = lonely_row,
  lonely_school = list(snum = apistrat$snum[lonely_row], cds = apistrat$cds[lonely_row]),
  note = paste(
    "dlonely: stratum 'H-lonely' holds one school (row lonely_row of apistrat.csv; its fpc 755 says",
    "it is a sample, so its PSU is lonely). dcertain: the same with fpc 1 for that stratum (sampled",
    "with certainty; survey does not treat it as lonely). survey.adjust.domain.lonely is left FALSE.",
    "remove is survey's fifth option, stored for completeness."),
  cases = lonely_cases
), file.path(out_dir, "lonely_psu.json"))
design_files$lonely_psu <- list(file = "lonely_psu.json")

write_reference_json(list(
  provenance = provenance(script, packages, extra = list(seed = seed)),
  data = data_files,
  indicator_variables = I(setup_variables),
  designs = design_files,
  formulas = list(
    deff = paste("svymean: deff = v / vsrs, vsrs = svyvar(x) / n * (N - n) / N with N = sum(weights),",
                 "n = number of nonzero weights; deff = 'replace' drops (N - n)/N. svytotal: vsrs =",
                 "svyvar(x) * N^2 * (N - n) / (N * n) (or * N^2 / n with 'replace')."),
    degf = "linearization: PSUs - strata; replicate designs: rank of the replicate weight matrix minus 1 (survey's degf.svyrep.design: qr(weights)$rank - 1)",
    lonely_psu = paste(
      "survey:::onestrat: a stratum's PSU totals are centred at their mean and scaled by f * n/(n-1);",
      "a lonely PSU (n = 1): certainty and remove contribute its centred total (0); adjust does not",
      "centre it (its deviation from 0, i.e. from the grand mean of the influence values); average",
      "drops it and survey:::onestage multiplies the sum over the other strata by",
      "nstrata / (nstrata - lonely strata); fail stops. A stratum whose fpc equals its PSU count",
      "(f = 0) contributes 0 under every option."),
    replicate_variance = "scale * sum(rscales * (theta_r - center)^2), center = mean of the replicates when mse = FALSE (survey's default), the full-sample estimate when mse = TRUE",
    ciprop = paste(
      "svyciprop(level = 0.95, df = degf(design)): mean: confint(svymean, df) on the proportion;",
      "logit: svyglm(y ~ 1, quasibinomial), Wald interval on the logit scale with ddf = df, then expit;",
      "likelihood: the same fit, confint(method = 'likelihood') (Rao-Scott scaled profile), expit;",
      "beta (Korn-Graubard): n.eff = p(1-p)/var * (qt(alpha/2, n-1)/qt(alpha/2, df))^2,",
      "ci = (qbeta(alpha/2, n.eff p, n.eff (1-p) + 1), qbeta(1-alpha/2, n.eff p + 1, n.eff (1-p)));",
      "xlogit / asin: Wald interval of the transformed mean (svycontrast), back-transformed.",
      "The stored se is sqrt of the svymean variance for every method.")
  )
), file.path(out_dir, "index.json"))

cat("survey api reference written to", out_dir, "\n")
