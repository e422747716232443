# RRreg's and rr's answers on small, stated data sets, for docs/from-r.md (issue 22): the
# standard error's divisor, moment against maximum-likelihood estimates, the boundary, and
# the standard errors of a regression (rr: outer product of the scores; RRreg: the Hessian).
# Writes tests/reference/from_r/from_r.json and tests/reference/from_r/warner_x.csv.
source(file.path("tools", "r_reference", "common.R"))
suppressPackageStartupMessages({library(RRreg); library(rr)})

script <- "tools/r_reference/from_r.R"
out <- file.path(reference_root, "from_r")
seed <- 20221127
cases <- list()

# Run `expr` (quoted), keep the call's text and the named parts of its value.
run <- function(expr, parts, setup = NULL) {
  result <- capture_run(expr)
  value <- result$value
  kept <- lapply(parts, function(f) f(value))
  c(list(call = call_text(expr), setup = setup, warnings = result$warnings,
         error = result$error), kept)
}
uni <- list(pi = function(v) v$pi, piSE = function(v) v$piSE)
logit <- list(coefficients = function(v) named(setNames(v$est, v$coef.names)),
              se = function(v) named(setNames(v$se, v$coef.names)))
rrlog <- list(coefficients = function(v) named(v$coefficients),
              se = function(v) named(sqrt(diag(v$vcov))),
              loglik = function(v) v$logLik)

# Warner, p = 0.7, 420 "yes" of 1,000 (inside), and 280 of 1,000 (the moment estimate < 0)
for (yes in c(420, 280)) {
  response <- c(rep(1, yes), rep(0, 1000 - yes))
  d <- data.frame(y = response)
  setup <- sprintf("response <- c(rep(1, %d), rep(0, %d)); d <- data.frame(y = response)",
                   yes, 1000 - yes)
  cases[[sprintf("warner_%d", yes)]] <- list(
    counts = list(yes = yes, no = 1000 - yes), design = "warner", p = 0.7,
    RRuni = run(quote(RRuni(response = response, model = "Warner", p = 0.7)), uni, setup),
    RRlog = run(quote(RRlog(y ~ 1, data = d, model = "Warner", p = 0.7)), rrlog, setup),
    rrreg = run(quote(rrreg(y ~ 1, data = d, p = 0.7, design = "mirrored")), logit, setup))
}

# Kuk with 3 cards, p = (0.7, 0.3): 10, 30, 40, 20 respondents drew 0, 1, 2, 3 red cards
response <- c(rep(0, 10), rep(1, 30), rep(2, 40), rep(3, 20))
cases$kuk_3 <- list(
  counts = list("0" = 10, "1" = 30, "2" = 40, "3" = 20), design = "kuk", p = c(0.7, 0.3),
  repetitions = 3,
  RRuni = run(quote(RRuni(response = response, model = "Kuk", p = c(0.7, 0.3), Kukrep = 3)),
              uni, "response <- c(rep(0, 10), rep(1, 30), rep(2, 40), rep(3, 20))"))

# A regression: Warner p = 0.7, 2,000 rows, log-odds -0.5 + 0.8 x, x ~ N(0, 1)
set.seed(seed, kind = "Mersenne-Twister", normal.kind = "Inversion", sample.kind = "Rejection")
n <- 2000
x <- round(rnorm(n), 6)
truth <- rbinom(n, 1, plogis(-0.5 + 0.8 * x))
keep <- rbinom(n, 1, 0.7)
y <- ifelse(keep == 1, truth, 1 - truth)
d <- data.frame(y = y, x = x)
write_reference_csv(d, file.path(out, "warner_x.csv"))
setup <- "d <- read.csv('tests/reference/from_r/warner_x.csv')"
cases$warner_x <- list(
  data = "warner_x.csv (y: the Warner answer, 1 = agrees with the statement; x)",
  design = "warner", p = 0.7,
  RRlog = run(quote(RRlog(y ~ x, data = d, model = "Warner", p = 0.7)), rrlog, setup),
  rrreg = run(quote(rrreg(y ~ x, data = d, p = 0.7, design = "mirrored")), logit, setup))

write_reference_json(list(
  provenance = provenance(script, c("RRreg", "rr", "jsonlite"), extra = list(seed = seed)),
  cases = cases), file.path(out, "from_r.json"))
