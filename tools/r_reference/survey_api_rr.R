# Randomized answers on a public complex sample (issue 21's "write the randomized-response
# cases yourself"): the true trait is awards == "Yes" in survey's api samples; each school's
# answer is drawn with RRreg::RRgen for six single-group RRreg designs (seeded); the
# reference is survey's svymean/svytotal/svyby of the design's unbiased transform
# r = (answer - a) / b, a = P(yes | no), b = P(yes | yes) - P(yes | no) from RRreg::getPW,
# which the weighted pseudo-MLE equals where it lies inside (0, 1).
#
# Run from the repository root:  Rscript tools/r_reference/survey_api_rr.R
# Writes tests/reference/survey_api/rr_answers_<sample>.csv and rr_designs.json.

source(file.path("tools", "r_reference", "common.R"))
suppressPackageStartupMessages({
  library(survey)
  library(RRreg)
})

script <- "tools/r_reference/survey_api_rr.R"
out_dir <- file.path(reference_root, "survey_api")
packages <- c("survey", "RRreg", "jsonlite")
seed <- 20240521L

data(api)
rr_designs <- list(
  warner = list(model = "Warner", p_text = "0.7"),
  fr = list(model = "FR", p_text = "c(1/6, 1/6)"),
  uqtknown = list(model = "UQTknown", p_text = "c(0.7, 0.3)"),
  crosswise = list(model = "Crosswise", p_text = "0.25"),
  mangat = list(model = "Mangat", p_text = "0.8"),
  triangular = list(model = "Triangular", p_text = "0.3")
)
for (name in names(rr_designs)) {
  rr_designs[[name]]$p <- eval(parse(text = rr_designs[[name]]$p_text))
  pw <- getPW(rr_designs[[name]]$model, rr_designs[[name]]$p)
  rr_designs[[name]]$a <- pw["1", "0"]
  rr_designs[[name]]$b <- pw["1", "1"] - pw["1", "0"]
  rr_designs[[name]]$P_yes_given_no <- pw["1", "0"]
  rr_designs[[name]]$P_yes_given_yes <- pw["1", "1"]
}

samples <- list(apistrat = apistrat, apiclus1 = apiclus1, apiclus2 = apiclus2)
answers <- list()
k <- 0L
for (sample_name in names(samples)) {
  frame <- samples[[sample_name]]
  out <- data.frame(cds = frame$cds, snum = frame$snum, awards_yes = as.numeric(frame$awards == "Yes"))
  for (name in names(rr_designs)) {
    k <- k + 1L
    set.seed(seed + k)
    generated <- RRgen(trueState = out$awards_yes, model = rr_designs[[name]]$model, p = rr_designs[[name]]$p)
    stopifnot(identical(as.numeric(generated$true), out$awards_yes))
    out[[paste0("answer_", name)]] <- generated$response
    out[[paste0("r_", name)]] <- (generated$response - rr_designs[[name]]$a) / rr_designs[[name]]$b
    rr_designs[[name]]$generated[[sample_name]] <- sprintf(
      'set.seed(%d); RRgen(trueState = as.numeric(%s$awards == "Yes"), model = "%s", p = %s)$response',
      seed + k, sample_name, rr_designs[[name]]$model, rr_designs[[name]]$p_text)
  }
  answers[[sample_name]] <- out
  write_reference_csv(out, file.path(out_dir, paste0("rr_answers_", sample_name, ".csv")))
}

env <- new.env(parent = globalenv())
for (sample_name in names(samples)) {
  merged <- cbind(samples[[sample_name]], answers[[sample_name]][, -(1:2)])
  assign(sample_name, merged, envir = env)
}
design_setup <- c(
  "dstrat <- svydesign(id = ~1, strata = ~stype, weights = ~pw, data = apistrat, fpc = ~fpc)",
  "dclus1 <- svydesign(id = ~dnum, weights = ~pw, data = apiclus1, fpc = ~fpc)",
  "dclus2 <- svydesign(id = ~dnum + snum, fpc = ~fpc1 + fpc2, data = apiclus2)",
  'dstrat_jkn <- as.svrepdesign(dstrat, type = "JKn")',
  'dclus1_jk1 <- as.svrepdesign(dclus1, type = "JK1")',
  'dclus2_jk1 <- as.svrepdesign(dclus2, type = "JK1")'
)
design_warnings <- list()
for (line in design_setup) {
  run <- capture_run(parse(text = line)[[1]], env)
  if (length(run$warnings)) design_warnings[[line]] <- I(run$warnings)
}

results <- list()
for (d in c("dstrat", "dclus1", "dclus2", "dstrat_jkn", "dclus1_jk1", "dclus2_jk1")) {
  per_design <- list()
  for (name in c("direct", names(rr_designs))) {
    variable <- if (name == "direct") "awards_yes" else paste0("r_", name)
    calls <- list(
      mean = sprintf("svymean(~%s, %s, deff = TRUE)", variable, d),
      total = sprintf("svytotal(~%s, %s)", variable, d),
      by_stype = sprintf("svyby(~%s, ~stype, %s, svymean, covmat = TRUE)", variable, d),
      confint_t = sprintf("confint(svymean(~%s, %s), df = degf(%s))", variable, d, d)
    )
    values <- lapply(calls, function(text) eval(parse(text = text), env))
    m <- values$mean
    by <- values$by_stype
    per_design[[name]] <- list(
      variable = variable,
      calls = calls,
      mean = as.numeric(coef(m)), mean_se = as.numeric(SE(m)), deff = as.numeric(deff(m)),
      interior = coef(m) > 0 && coef(m) < 1,
      total = as.numeric(coef(values$total)), total_se = as.numeric(SE(values$total)),
      ci_t_low = values$confint_t[1, 1], ci_t_high = values$confint_t[1, 2],
      degf = degf(get(d, envir = env)),
      by_stype = list(estimate = named(coef(by)), se = named(setNames(sqrt(diag(vcov(by))), names(coef(by)))),
                      vcov = matrix_json(vcov(by)))
    )
  }
  results[[d]] <- per_design
}

write_reference_json(list(
  provenance = provenance(script, packages, extra = list(seed = seed)),
  what = paste(
    "For each api sample and each design, rr_answers_<sample>.csv holds the true trait (awards_yes),",
    "the randomized answer (answer_<design>, drawn by RRgen from the true trait) and the transform",
    "r_<design> = (answer - a) / b. Join to apistrat.csv / apiclus1.csv / apiclus2.csv by row order",
    "(same order) or cds. The statistics are survey's, on r (and on awards_yes as 'direct')."),
  setup = I(c("library(survey)", "library(RRreg)", "data(api)",
              "# each sample gets columns awards_yes, answer_<design>, r_<design> from rr_answers_<sample>.csv",
              design_setup)),
  design_warnings = design_warnings,
  designs = rr_designs,
  not_covered = paste(
    "No 'don't know' design (RRgen has none) and no two-group design (SLD, UQTunknown, CDM):",
    "there the pseudo-MLE is not the weighted mean of a per-answer transform, so svymean is no oracle."),
  results = results
), file.path(out_dir, "rr_designs.json"))

cat("survey api randomized-response reference written to", out_dir, "\n")
