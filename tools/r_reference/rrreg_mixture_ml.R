# Maximum likelihood of RRreg's continuous mixture designs (mix.norm, mix.exp, mix.unknown)
# on the seeded data of rrreg_continuous.R, with standard errors from numDeriv's Richardson
# Hessian (accurate to about 1e-9, where optim's own finite differences in
# rruni_continuous.json's maximum_likelihood_by_hand are good to about 1e-6).
#
# RRreg has no likelihood for these designs (RRuni gives the moment estimator); the fits
# below are written out by hand, as in rrreg_continuous.R: the true values are normal
# (mix.norm, mix.unknown) or exponential (mix.exp); the masking distribution is the design's
# (mix.unknown: the unrelated answers are normal too, their mean and sd estimated).
#
# Run from the repository root:  Rscript tools/r_reference/rrreg_mixture_ml.R
# Reads tests/reference/rrreg/rruni_mix_*.csv; writes tests/reference/rrreg/mixture_ml.json.

source(file.path("tools", "r_reference", "common.R"))
suppressPackageStartupMessages(library(numDeriv))

script <- "tools/r_reference/rrreg_mixture_ml.R"
out_dir <- file.path(reference_root, "rrreg")
packages <- c("numDeriv", "jsonlite")

read_data <- function(name) utils::read.csv(file.path(out_dir, name))

# Maximize with optim (BFGS, reltol 1e-15) from `start`, then Newton steps with numDeriv's
# gradient and Hessian until the step is below 1e-12 (relative); SEs from the Hessian.
# (optim's line search may try p outside (0, 1), where log() warns; those trials are refused)
fit <- function(loglik, start, lower_ok) {
  opt <- suppressWarnings(optim(start, loglik, method = "BFGS",
                                control = list(fnscale = -1, reltol = 1e-15, maxit = 10000)))
  theta <- opt$par
  for (i in 1:50) {
    g <- numDeriv::grad(loglik, theta)
    h <- numDeriv::hessian(loglik, theta)
    step <- solve(-h, g)
    while (!lower_ok(theta + step) || loglik(theta + step) < loglik(theta) - 1e-12 * abs(loglik(theta))) {
      step <- step / 2
    }
    theta <- theta + step
    if (all(abs(step) <= 1e-12 * pmax(1, abs(theta)))) break
  }
  h <- numDeriv::hessian(loglik, theta)
  list(estimate = theta, se = sqrt(diag(solve(-h))), log_likelihood = loglik(theta),
       gradient = numDeriv::grad(loglik, theta), optim_convergence = opt$convergence,
       newton_steps = i)
}

as_named <- function(values, names) as.list(setNames(as.numeric(values), names))

result <- list()

# mix.norm: p = 0.7, masking N(40, 15); true values N(mu, sigma)
z <- read_data("rruni_mix_norm.csv")$response
ll_norm <- function(theta) sum(log(0.7 * dnorm(z, theta[1], theta[2]) + 0.3 * dnorm(z, 40, 15)))
f <- fit(ll_norm, c(mean(z), sd(z)), function(t) t[2] > 0)
result$mix_norm <- list(
  data = "rruni_mix_norm.csv (response)",
  loglik = "sum(log(0.7 * dnorm(z, mu, sigma) + 0.3 * dnorm(z, 40, 15)))",
  estimate = as_named(f$estimate, c("mu", "sigma")), se = as_named(f$se, c("mu", "sigma")),
  log_likelihood = f$log_likelihood, gradient = f$gradient)

# mix.norm with the share answering truthfully estimated too
ll_norm_p <- function(theta) {
  sum(log(theta[3] * dnorm(z, theta[1], theta[2]) + (1 - theta[3]) * dnorm(z, 40, 15)))
}
f <- fit(ll_norm_p, c(mean(z), sd(z), 0.7), function(t) t[2] > 0 && t[3] > 0 && t[3] < 1)
result$mix_norm_p_estimated <- list(
  data = "rruni_mix_norm.csv (response)",
  loglik = "sum(log(p * dnorm(z, mu, sigma) + (1 - p) * dnorm(z, 40, 15)))",
  estimate = as_named(f$estimate, c("mu", "sigma", "p")),
  se = as_named(f$se, c("mu", "sigma", "p")),
  log_likelihood = f$log_likelihood, gradient = f$gradient)

# mix.exp: p = 0.7, masking exponential with mean 10; true values exponential with mean mu
z <- read_data("rruni_mix_exp.csv")$response
ll_exp <- function(theta) sum(log(0.7 * dexp(z, 1 / theta[1]) + 0.3 * dexp(z, 1 / 10)))
f <- fit(ll_exp, mean(z), function(t) t[1] > 0)
result$mix_exp <- list(
  data = "rruni_mix_exp.csv (response)",
  loglik = "sum(log(0.7 * dexp(z, 1 / mu) + 0.3 * dexp(z, 1 / 10)))",
  estimate = as_named(f$estimate, "mu"), se = as_named(f$se, "mu"),
  log_likelihood = f$log_likelihood, gradient = f$gradient)

# mix.unknown: groups 1 and 2 answer truthfully with p = 0.8 and 0.3, else the unrelated
# question; both normal
d <- read_data("rruni_mix_unknown.csv")
z <- d$response
p <- c(0.8, 0.3)[d$group]
ll_unknown <- function(theta) {
  sum(log(p * dnorm(z, theta[1], theta[2]) + (1 - p) * dnorm(z, theta[3], theta[4])))
}
f <- fit(ll_unknown, c(50, 10, 30, 8), function(t) t[2] > 0 && t[4] > 0)
names_unknown <- c("mu", "sigma", "mu_unrelated", "sigma_unrelated")
result$mix_unknown <- list(
  data = "rruni_mix_unknown.csv (response, group)",
  loglik = paste("sum(log(p[group] * dnorm(z, mu, sigma) + (1 - p[group]) *",
                 "dnorm(z, mu_unrelated, sigma_unrelated))), p = c(0.8, 0.3)"),
  estimate = as_named(f$estimate, names_unknown), se = as_named(f$se, names_unknown),
  log_likelihood = f$log_likelihood, gradient = f$gradient)

write_reference_json(list(
  provenance = provenance(script, packages, extra = list(
    note = paste("Not RRreg: RRreg 0.7.5 has no likelihood for its continuous designs. optim",
                 "(BFGS, reltol 1e-15), then Newton steps with numDeriv's Richardson gradient",
                 "and Hessian; standard errors are sqrt(diag(solve(-hessian))) at the maximum,",
                 "on the parameters as named (sigma, not log sigma)."))),
  fits = result
), file.path(out_dir, "mixture_ml.json"))

cat("mixture ML reference written to", out_dir, "\n")
