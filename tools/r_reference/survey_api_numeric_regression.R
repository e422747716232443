# Reference values for regression with a scrambled numeric outcome under a complex sample
# (issue 23 item 2 with issue 21 item 4): svyglm(family = gaussian()) of the design's
# unbiased transform r = (z - a) / b on ell and meals.
#
# The numeric question: y = api00 / 100, asked with Eriksson's design (RRTCS's eriksson:
# with probability p = 0.6 the true value, otherwise a card of the deck 0, 1, 3, 5, 8 drawn
# at random), and "don't know" for about 10% of the schools (seeded draws). Eriksson's
# transform: a = (1 - p) mean(deck), b = p (RRTCS's ErikssonData example). "Don't know"
# answers carry no value: the fit uses subset(design, answered), as svyglm's subset design
# keeps every PSU and stratum for the variance.
#
# Run from the repository root:  Rscript tools/r_reference/survey_api_numeric_regression.R
# Also regTermTest's design-based Wald and working-Wald (Rao-Scott) tests of ell and meals.
# Writes tests/reference/survey_api/numeric_answers_<sample>.csv and numeric_regression.json.

source(file.path("tools", "r_reference", "common.R"))
suppressPackageStartupMessages(library(survey))

script <- "tools/r_reference/survey_api_numeric_regression.R"
out_dir <- file.path(reference_root, "survey_api")
packages <- c("survey", "jsonlite")
seed <- 20261127L
set.seed(seed, kind = "Mersenne-Twister", normal.kind = "Inversion", sample.kind = "Rejection")

data(api)
p <- 0.6
deck <- c(0, 1, 3, 5, 8)
a <- (1 - p) * mean(deck)
b <- p

samples <- list(
  apistrat = list(data = apistrat, columns = c("stype", "pw", "fpc"),
                  setup = "svydesign(id = ~1, strata = ~stype, weights = ~pw, data = frame, fpc = ~fpc)"),
  apiclus1 = list(data = apiclus1, columns = c("dnum", "pw", "fpc"),
                  setup = "svydesign(id = ~dnum, weights = ~pw, data = frame, fpc = ~fpc)"),
  apiclus2 = list(data = apiclus2, columns = c("dnum", "snum", "pw", "fpc1", "fpc2"),
                  setup = "svydesign(id = ~dnum + snum, weights = ~pw, fpc = ~fpc1 + fpc2, data = frame)")
)

cases <- list()
for (name in names(samples)) {
  s <- samples[[name]]
  frame <- s$data
  n <- nrow(frame)
  y <- frame$api00 / 100
  truthful <- runif(n) < p
  card <- sample(deck, n, replace = TRUE)
  dont_know <- runif(n) < 0.1
  z <- ifelse(truthful, y, card)
  frame$answer <- ifelse(dont_know, "dont_know", as.character(z))
  frame$r <- ifelse(dont_know, NA, (z - a) / b)
  frame$answered <- !dont_know
  write_reference_csv(frame[, c(s$columns, "ell", "meals", "answer")],
                      file.path(out_dir, paste0("numeric_answers_", name, ".csv")))
  design <- eval(parse(text = s$setup))
  call <- quote(svyglm(r ~ ell + meals, design = subset(design, answered),
                       family = gaussian()))
  fit <- eval(call)
  V <- vcov(fit)
  wald <- regTermTest(fit, ~ell + meals)
  working <- regTermTest(fit, ~ell + meals, method = "WorkingWald")
  cases[[name]] <- list(
    sample = name,
    setup = c(paste0("frame <- ", name, "  # with answer, r and answered as above"),
              paste0("design <- ", s$setup)),
    call = call_text(call),
    n = sum(!dont_know), dont_know = sum(dont_know),
    coefficients = named(coef(fit)),
    se = named(sqrt(diag(V))),
    vcov = matrix_json(V),
    df_residual = fit$df.residual,
    reg_term_test = list(
      terms = c("ell", "meals"),
      wald = list(call = "regTermTest(fit, ~ell + meals)", F = as.numeric(wald$Ftest),
                  df = wald$df, ddf = wald$ddf, p = as.numeric(wald$p)),
      working_wald = list(call = "regTermTest(fit, ~ell + meals, method = \"WorkingWald\")",
                          chisq = as.numeric(working$chisq), lambda = as.numeric(working$lambda),
                          ddf = working$ddf, p = as.numeric(working$p)))
  )
}

write_reference_json(list(
  provenance = provenance(script, packages, extra = list(seed = seed)),
  design = list(model = "eriksson", p = p, scrambler = deck, dont_know = 0.1,
                a = a, b = b, outcome = "api00 / 100"),
  note = paste("answers: numeric_answers_<sample>.csv (z, or dont_know);",
               "r = (z - a) / b; svyglm on the answered schools"),
  cases = unname(cases)
), file.path(out_dir, "numeric_regression.json"))
