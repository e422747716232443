# Reference values for a numeric question's mean and total under a complex sample, overall
# and by domain, with the linearization and the jackknife variance (issue 23 phase 2):
# survey's svymean, svytotal and svyby on the design's unbiased transform, the full design
# kept (svyby), and RRreg's mix.unknown (two groups, unknown unrelated distribution) as a
# contrast of the groups' weighted means (svyby(..., covmat = TRUE) and svycontrast: the
# mean is linear in the group means, so the delta method is this contrast).
#
# Eriksson (p = 0.6, deck 0, 1, 3, 5, 8, "don't know" 0.1): the answers of
# numeric_answers_<sample>.csv, written by survey_api_numeric_regression.R (run it first);
# r = (z - a) / b with a = (1 - p) mean(deck), b = p; the domain mean is over the
# answered (svyby on subset(design, answered): "don't know" carries no value), the total
# is svytotal of r' = r / (1 - 0.1) for an answer and 0 for "don't know" over everyone.
# Domains: by = "high" where meals >= 50, else "low".
#
# mix.unknown: y = api00 / 100, the unrelated value ell / 10, group 1 or 2 drawn with
# probability 1/2 each, truthful with probability p = (0.8, 0.3) (seeded draws); answers
# in numeric_mix_unknown_<sample>.csv. mu = ((1 - p2) m1 - (1 - p1) m2) / (p1 - p2).
# The designs without fpc: surveykit leaves mix.unknown's fpc out (its randomization
# variance is unknown), and the Eriksson cases are given with and without fpc.
#
# Run from the repository root:  Rscript tools/r_reference/survey_api_numeric_domains.R
# Writes tests/reference/survey_api/numeric_domains.json, numeric_mix_unknown_<sample>.csv and
# numeric_boot_<sample>_repweights.csv (survey's bootstrap replicate weights, as a producer's).

source(file.path("tools", "r_reference", "common.R"))
suppressPackageStartupMessages(library(survey))

script <- "tools/r_reference/survey_api_numeric_domains.R"
out_dir <- file.path(reference_root, "survey_api")
packages <- c("survey", "jsonlite")
seed <- 20261128L
set.seed(seed, kind = "Mersenne-Twister", normal.kind = "Inversion", sample.kind = "Rejection")

p <- 0.6
deck <- c(0, 1, 3, 5, 8)
a <- (1 - p) * mean(deck)
b <- p
d <- 0.1

setups <- list(
  apistrat = list(fpc = "svydesign(id = ~1, strata = ~stype, weights = ~pw, data = frame, fpc = ~fpc)",
                  nofpc = "svydesign(id = ~1, strata = ~stype, weights = ~pw, data = frame)"),
  apiclus1 = list(fpc = "svydesign(id = ~dnum, weights = ~pw, data = frame, fpc = ~fpc)",
                  nofpc = "svydesign(id = ~dnum, weights = ~pw, data = frame)"),
  apiclus2 = list(fpc = "svydesign(id = ~dnum + snum, weights = ~pw, fpc = ~fpc1 + fpc2, data = frame)",
                  nofpc = "svydesign(id = ~dnum + snum, weights = ~pw, data = frame)")
)

by_values <- function(x) {
  list(domains = as.character(x[, 1]), estimate = as.numeric(x[, 2]),
       se = as.numeric(SE(x)))
}

# a sample's Eriksson answers with the transform r, r' and the domain (see the top)
eriksson_frame <- function(name) {
  frame <- read.csv(file.path(out_dir, paste0("numeric_answers_", name, ".csv")),
                    stringsAsFactors = FALSE)
  frame$answered <- frame$answer != "dont_know"
  z <- suppressWarnings(as.numeric(frame$answer))
  frame$r <- ifelse(frame$answered, (z - a) / b, NA)
  frame$r1 <- ifelse(frame$answered, (z - a) / b / (1 - d), 0)
  frame$by <- ifelse(frame$meals >= 50, "high", "low")
  frame
}

cases <- list()
for (name in names(setups)) {
  frame <- eriksson_frame(name)
  for (variant in c("fpc", "nofpc")) {
    setup <- setups[[name]][[variant]]
    design <- eval(parse(text = setup))
    answered <- subset(design, answered)
    mean_all <- svymean(~r, answered)
    total_all <- svytotal(~r1, design)
    by_mean <- svyby(~r, ~by, answered, svymean)
    by_total <- svyby(~r1, ~by, design, svytotal)
    replicate <- as.svrepdesign(design, type = "auto")
    jk_mean <- svymean(~r, subset(replicate, answered))
    jk_total <- svytotal(~r1, replicate)
    jk_by_mean <- svyby(~r, ~by, subset(replicate, answered), svymean)
    jk_by_total <- svyby(~r1, ~by, replicate, svytotal)
    cases[[length(cases) + 1]] <- list(
      sample = name, fpc = variant == "fpc",
      setup = c(paste0("frame <- read.csv(\"numeric_answers_", name, ".csv\")",
                       "  # answered, r, r1 and by as above"),
                paste0("design <- ", setup),
                "replicate <- as.svrepdesign(design, type = \"auto\")"),
      replicate_type = replicate$type,
      linearization = list(
        mean = list(call = "svymean(~r, subset(design, answered))",
                    estimate = as.numeric(coef(mean_all)), se = as.numeric(SE(mean_all))),
        total = list(call = "svytotal(~r1, design)",
                     estimate = as.numeric(coef(total_all)), se = as.numeric(SE(total_all))),
        by_mean = c(list(call = "svyby(~r, ~by, subset(design, answered), svymean)"),
                    by_values(by_mean)),
        by_total = c(list(call = "svyby(~r1, ~by, design, svytotal)"), by_values(by_total))),
      jackknife = list(
        mean = list(call = "svymean(~r, subset(replicate, answered))",
                    estimate = as.numeric(coef(jk_mean)), se = as.numeric(SE(jk_mean))),
        total = list(call = "svytotal(~r1, replicate)",
                     estimate = as.numeric(coef(jk_total)), se = as.numeric(SE(jk_total))),
        by_mean = c(list(call = "svyby(~r, ~by, subset(replicate, answered), svymean)"),
                    by_values(jk_by_mean)),
        by_total = c(list(call = "svyby(~r1, ~by, replicate, svytotal)"),
                     by_values(jk_by_total)))
    )
  }
}

# mix.unknown on the designs without fpc
data(api)
p_groups <- c(0.8, 0.3)
weights_of <- c(g1 = (1 - p_groups[2]) / (p_groups[1] - p_groups[2]),
                g2 = -(1 - p_groups[1]) / (p_groups[1] - p_groups[2]))
mix_cases <- list()
for (name in names(setups)) {
  frame <- get(name)
  n <- nrow(frame)
  y <- frame$api00 / 100
  unrelated <- frame$ell / 10
  group <- sample(1:2, n, replace = TRUE)
  truthful <- runif(n) < p_groups[group]
  frame$z <- ifelse(truthful, y, unrelated)
  frame$group <- group
  frame$by <- ifelse(frame$meals >= 50, "high", "low")
  columns <- intersect(c("stype", "dnum", "snum", "pw", "fpc", "fpc1", "fpc2"), names(frame))
  write_reference_csv(frame[, c(columns, "meals", "group", "z")],
                      file.path(out_dir, paste0("numeric_mix_unknown_", name, ".csv")))
  setup <- setups[[name]]$nofpc
  design <- eval(parse(text = setup))
  groups <- svyby(~z, ~group, design, svymean, covmat = TRUE)
  mu <- svycontrast(groups, list(mu = c("1" = weights_of[[1]], "2" = weights_of[[2]])))
  cells <- svyby(~z, ~by + group, design, svymean, covmat = TRUE)
  domain_mu <- list()
  for (label in c("high", "low")) {
    contrast <- setNames(c(weights_of[[1]], weights_of[[2]]), paste0(label, ".", 1:2))
    value <- svycontrast(cells, list(mu = contrast))
    domain_mu[[label]] <- list(estimate = as.numeric(coef(value)), se = as.numeric(SE(value)))
  }
  mix_cases[[length(mix_cases) + 1]] <- list(
    sample = name,
    setup = c(paste0("frame <- read.csv(\"numeric_mix_unknown_", name, ".csv\")"),
              paste0("design <- ", setup)),
    call = "svycontrast(svyby(~z, ~group, design, svymean, covmat = TRUE), list(mu = c(\"1\" = (1 - p2) / (p1 - p2), \"2\" = -(1 - p1) / (p1 - p2))))",
    domain_call = "svycontrast(svyby(~z, ~by + group, design, svymean, covmat = TRUE), list(mu = c(<by>.1 = ..., <by>.2 = ...)))",
    mean = list(estimate = as.numeric(coef(mu)), se = as.numeric(SE(mu))),
    domains = domain_mu)
}

# the producer's replicate weights: survey's bootstrap (50 replicates, seeded) of the
# designs with fpc, stored as analysis weights, and the estimates svrepdesign makes with them
boot_cases <- list()
for (name in names(setups)) {
  frame <- eriksson_frame(name)
  design <- eval(parse(text = setups[[name]]$fpc))
  boot <- as.svrepdesign(design, type = "bootstrap", replicates = 50)
  repweights <- weights(boot, "analysis")
  colnames(repweights) <- paste0("rep", seq_len(ncol(repweights)))
  file <- paste0("numeric_boot_", name, "_repweights.csv")
  write_reference_csv(repweights, file.path(out_dir, file))
  mean_all <- svymean(~r, subset(boot, answered))
  total_all <- svytotal(~r1, boot)
  by_mean <- svyby(~r, ~by, subset(boot, answered), svymean)
  by_total <- svyby(~r1, ~by, boot, svytotal)
  boot_cases[[length(boot_cases) + 1]] <- list(
    sample = name, replicate_weights = file,
    setup = c(paste0("design <- ", setups[[name]]$fpc),
              "boot <- as.svrepdesign(design, type = \"bootstrap\", replicates = 50)"),
    scale = boot$scale, rscales = as.numeric(boot$rscales), mse = boot$mse,
    mean = list(call = "svymean(~r, subset(boot, answered))",
                estimate = as.numeric(coef(mean_all)), se = as.numeric(SE(mean_all))),
    total = list(call = "svytotal(~r1, boot)",
                 estimate = as.numeric(coef(total_all)), se = as.numeric(SE(total_all))),
    by_mean = c(list(call = "svyby(~r, ~by, subset(boot, answered), svymean)"),
                by_values(by_mean)),
    by_total = c(list(call = "svyby(~r1, ~by, boot, svytotal)"), by_values(by_total)))
}

# mix.unknown as a regression outcome: E[z | x, g] = p_g (b0 + b1 meals) + (1 - p_g) theta,
# least squares of z on p_g, p_g meals and 1 - p_g (no intercept) with svyglm's sandwich
regression_cases <- list()
for (name in names(setups)) {
  frame <- read.csv(file.path(out_dir, paste0("numeric_mix_unknown_", name, ".csv")))
  frame$pg <- p_groups[frame$group]
  setup <- setups[[name]]$nofpc
  design <- eval(parse(text = setup))
  call <- quote(svyglm(z ~ 0 + pg + I(pg * meals) + I(1 - pg), design = design,
                       family = gaussian()))
  fit <- eval(call)
  regression_cases[[length(regression_cases) + 1]] <- list(
    sample = name,
    setup = c(paste0("frame <- read.csv(\"numeric_mix_unknown_", name, ".csv\")"),
              "frame$pg <- c(0.8, 0.3)[frame$group]", paste0("design <- ", setup)),
    call = call_text(call), terms = c("(Intercept)", "meals", "(unrelated mean)"),
    coefficients = as.numeric(coef(fit)), se = as.numeric(sqrt(diag(vcov(fit)))))
}

write_reference_json(list(
  provenance = provenance(script, packages, extra = list(seed = seed)),
  eriksson = list(model = "eriksson", p = p, scrambler = deck, dont_know = d, a = a, b = b,
                  answers = "numeric_answers_<sample>.csv (survey_api_numeric_regression.R)",
                  by = "ifelse(meals >= 50, \"high\", \"low\")",
                  cases = cases),
  mix_unknown = list(model = "mix_unknown", p = p_groups,
                     truth = "api00 / 100", unrelated = "ell / 10",
                     answers = "numeric_mix_unknown_<sample>.csv (z, group)",
                     by = "ifelse(meals >= 50, \"high\", \"low\")",
                     cases = mix_cases, regression = regression_cases),
  bootstrap = list(note = paste("the Eriksson answers with the producer's replicate weights",
                                "numeric_boot_<sample>_repweights.csv (analysis weights)"),
                   cases = boot_cases)
), file.path(out_dir, "numeric_domains.json"))
