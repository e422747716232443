# RRreg 0.7.5: RRuni with the continuous designs mix.norm, mix.exp (RRgen data) and
# mix.unknown (simulated by hand: RRgen lacks it), seeded; the data stored as CSV.
#
# Run from the repository root:  Rscript tools/r_reference/rrreg_continuous.R
# Writes tests/reference/rrreg/rruni_continuous.json and rruni_*.csv, rrcor_mix_unknown.csv.

source(file.path("tools", "r_reference", "common.R"))
suppressPackageStartupMessages(library(RRreg))

script <- "tools/r_reference/rrreg_continuous.R"
out_dir <- file.path(reference_root, "rrreg")
packages <- c("RRreg", "jsonlite")
seed <- 20240521L

# ---------------------------------------------------------------------------
# (b) RRuni with the continuous designs
# ---------------------------------------------------------------------------
record_rruni <- function(call_text_, env) {
  run <- capture_run(parse(text = call_text_)[[1]], env)
  out <- list(call = call_text_, warnings = I(run$warnings), error = run$error)
  if (is.null(run$error)) {
    v <- run$value
    out$result <- v[setdiff(names(v), c("call"))]
    out$result$description <- v$call
  }
  out
}

# The formula RRreg evidently intends for mix.norm / mix.exp: its own function
# bodies, with the missing variable 'pt' bound to p[1] (RRreg 0.7.5 and 0.7.6 leave it
# unbound, so R finds stats::pt, the t distribution function, and fails).
patched <- function(fun_name, response, p) {
  fun <- get(fun_name, envir = asNamespace("RRreg"))
  environment(fun) <- list2env(list(pt = p[1]), parent = asNamespace("RRreg"))
  fun(response, p)
}

continuous <- list()
env <- new.env(parent = globalenv())

# mix.norm: true values N(50, 10); masking N(40, 15); truthful with probability 0.7
set.seed(seed)
assign("mixnorm", RRgen(n = 1000, pi.true = c(50, 10), model = "mix.norm", p = c(0.7, 40, 15)), envir = env)
write_reference_csv(get("mixnorm", env), file.path(out_dir, "rruni_mix_norm.csv"))
mn <- record_rruni('RRuni(response = mixnorm$response, model = "mix.norm", p = c(0.7, 40, 15))', env)
resp <- get("mixnorm", env)$response
fix <- patched("RRuni.mix.norm", resp, c(0.7, 40, 15))
mn$data <- list(file = "rruni_mix_norm.csv",
                generated_by = paste0("set.seed(", seed, "); RRgen(n = 1000, pi.true = c(50, 10), model = \"mix.norm\", p = c(0.7, 40, 15))"),
                columns = names(get("mixnorm", env)))
mn$rrreg_formula_with_pt_bound <- list(
  how = "RRreg:::RRuni.mix.norm evaluated with pt = p[1] = 0.7 (see note)",
  pi = fix$pi,
  piSE_as_returned = fix$piSE,
  piSE_intended = fix$piSE[1],
  formula = "pi = (mean(z) - (1 - p[1]) * p[2]) / p[1]; SE = sd(z) / (sqrt(n) * p[1]) (sd with divisor n - 1)",
  note = "RRreg writes sd(z)/(sqrt(n)*p) with the whole vector p, so it returns three numbers; the first is the SE"
)
# Maximum likelihood of the normal mixture (by hand; RRreg has no likelihood for it)
ll_norm <- function(theta, z, design) {
  sum(log(design[1] * dnorm(z, theta[1], exp(theta[2])) + (1 - design[1]) * dnorm(z, design[2], design[3])))
}
opt <- optim(c(mean(resp), log(sd(resp))), ll_norm, z = resp, design = c(0.7, 40, 15), method = "BFGS",
             control = list(fnscale = -1, reltol = 1e-15, maxit = 1000), hessian = TRUE)
cov_log <- solve(-opt$hessian)
mn$maximum_likelihood_by_hand <- list(
  how = paste("optim(BFGS, reltol 1e-15) of sum(log(p1*dnorm(z, mu, sigma) + (1-p1)*dnorm(z, p2, p3)))",
              "over (mu, log sigma); SEs from the numerical Hessian (delta method for sigma). Not RRreg."),
  mu = opt$par[1], sigma = exp(opt$par[2]),
  mu_se = sqrt(cov_log[1, 1]), sigma_se = exp(opt$par[2]) * sqrt(cov_log[2, 2]),
  log_likelihood = opt$value, convergence = opt$counts, converged = opt$convergence == 0
)
continuous$mix.norm <- mn

# mix.exp: true values exponential with mean 20; masking exponential with mean 10
set.seed(seed + 1L)
assign("mixexp", RRgen(n = 1000, pi.true = 20, model = "mix.exp", p = c(0.7, 10)), envir = env)
write_reference_csv(get("mixexp", env), file.path(out_dir, "rruni_mix_exp.csv"))
me <- record_rruni('RRuni(response = mixexp$response, model = "mix.exp", p = c(0.7, 10))', env)
resp <- get("mixexp", env)$response
fix <- patched("RRuni.mix.exp", resp, c(0.7, 10))
me$data <- list(file = "rruni_mix_exp.csv",
                generated_by = paste0("set.seed(", seed + 1L, "); RRgen(n = 1000, pi.true = 20, model = \"mix.exp\", p = c(0.7, 10))"),
                columns = names(get("mixexp", env)))
me$rrreg_formula_with_pt_bound <- list(
  how = "RRreg:::RRuni.mix.exp evaluated with pt = p[1] = 0.7",
  pi = fix$pi, piSE_as_returned = fix$piSE, piSE_intended = fix$piSE[1],
  formula = "pi = (mean(z) - (1 - p[1]) * p[2]) / p[1]; SE = sd(z) / (sqrt(n) * p[1])"
)
ll_exp <- function(log_mu, z, design) {
  sum(log(design[1] * dexp(z, 1 / exp(log_mu)) + (1 - design[1]) * dexp(z, 1 / design[2])))
}
opt <- optimize(ll_exp, interval = log(c(0.1, 1000)), z = resp, design = c(0.7, 10), maximum = TRUE, tol = 1e-12)
h <- optimHess(opt$maximum, function(x) ll_exp(x, resp, c(0.7, 10)))
me$maximum_likelihood_by_hand <- list(
  how = paste("optimize (tol 1e-12) of sum(log(p1*dexp(z, 1/mu) + (1-p1)*dexp(z, 1/p2))) over log mu;",
              "SE from the numerical Hessian (delta method). Not RRreg."),
  mu = exp(opt$maximum), mu_se = exp(opt$maximum) * sqrt(1 / -h[1, 1]), log_likelihood = opt$objective
)
continuous$mix.exp <- me

# mix.unknown: RRgen does not generate it, so by hand: two groups answer the sensitive
# question with probabilities p = (0.8, 0.3), otherwise an unrelated question with
# unknown distribution. True X ~ N(50, 10), unrelated Y ~ N(30, 8), 500 per group.
set.seed(seed + 2L)
n_mu <- 1000
mixunknown <- data.frame(group = rep(1:2, each = n_mu / 2))
mixunknown$true <- rnorm(n_mu, 50, 10)
mixunknown$unrelated <- rnorm(n_mu, 30, 8)
mixunknown$sensitive_asked <- as.integer(runif(n_mu) < c(0.8, 0.3)[mixunknown$group])
mixunknown$response <- ifelse(mixunknown$sensitive_asked == 1, mixunknown$true, mixunknown$unrelated)
# a direct covariate for RRcor, drawn after the other columns (RRuni does not use it)
mixunknown$covariate <- 0.5 * mixunknown$true + rnorm(n_mu, 0, 5)
assign("mixunknown", mixunknown, envir = env)
write_reference_csv(mixunknown, file.path(out_dir, "rruni_mix_unknown.csv"))
mu <- record_rruni('RRuni(response = mixunknown$response, model = "mix.unknown", p = c(0.8, 0.3), group = mixunknown$group)', env)
mu$data <- list(file = "rruni_mix_unknown.csv",
                generated_by = paste0("set.seed(", seed + 2L, "); group = rep(1:2, each = 500); true = rnorm(1000, 50, 10); ",
                                      "unrelated = rnorm(1000, 30, 8); sensitive_asked = runif(1000) < c(0.8, 0.3)[group]; ",
                                      "response = ifelse(sensitive_asked, true, unrelated); ",
                                      "covariate = 0.5 * true + rnorm(1000, 0, 5)"),
                columns = names(mixunknown))
mu$formula <- paste(
  "RRuni.mix.unknown: m_g = mean(z in group g), v_g = var(z in group g) / n_g;",
  "pi = ((1 - p2) m1 - (1 - p1) m2) / (p1 - p2); piUQ = (p2 m1 - p1 m2) / (p2 - p1);",
  "piSE = sqrt((1-p2)^2 v1 + (1-p1)^2 v2) / |p1 - p2|; piUQSE = sqrt(p2^2 v1 + p1^2 v2) / |p2 - p1|.",
  "y.var and x.var (used only by RRcor) contain '(1 - p[2] * piUQ)' where '(1 - p[2]) * piUQ' is",
  "evidently meant; they are stored as RRreg returns them. logLik is NA: RRreg has no likelihood",
  "for the continuous designs (RRuni.ll fails inside try()).")
continuous$mix.unknown <- mu

# y.var and x.var as RRreg would compute them with the parentheses evidently meant
fixed_variances <- local({
  p <- c(0.8, 0.3); z <- mixunknown$response; g <- mixunknown$group
  m1 <- mean(z[g == 1]); m2 <- mean(z[g == 2])
  pi <- ((1 - p[2]) * m1 - (1 - p[1]) * m2) / (p[1] - p[2])
  piUQ <- (p[2] * m1 - p[1] * m2) / (p[2] - p[1])
  num <- p[2] * (p[1] * pi + (1 - p[1]) * piUQ)^2 - p[1] * (p[2] * pi + (1 - p[2]) * piUQ)^2
  y.var <- var(z[g == 1]) - piUQ^2 + num / (p[2] - p[1])
  num <- (1 - p[2]) * (p[1] * pi + (1 - p[1]) * piUQ)^2 - (1 - p[1]) * (p[2] * pi + (1 - p[2]) * piUQ)^2
  x.var <- var(z[g == 2]) - pi^2 + num / (p[1] - p[2])
  list(y.var = y.var, x.var = x.var,
       note = "not RRreg's output: RRreg's two lines with '(1 - p[2]) * piUQ' in place of '(1 - p[2] * piUQ)'")
})
continuous$mix.unknown$variances_with_parentheses_fixed <- fixed_variances

# RRcor with a continuous mixture variable and a direct covariate (point estimate)
cor_mu <- record_rruni(paste0('RRcor(x = mixunknown[, c("response", "covariate")], models = c("mix.unknown", "d"), ',
                              'p.list = list(c(0.8, 0.3)), group = mixunknown$group)'), env)
if (is.null(cor_mu$error)) {
  cor_mu$result <- list(r = matrix_json(cor_mu$result$r), n = cor_mu$result$n)
}
cor_mu$note <- paste("data: rruni_mix_unknown.csv (covariate column). RRcor returns NaN for the pair:",
                     "its y.var from RRuni is negative here (the parenthesization above), so the",
                     "correction factor's square root is NaN. RRcor refuses in effect.")
cor_mn <- record_rruni(paste0('RRcor(x = cbind(mixnorm$response, rnorm(1000)), models = c("mix.norm", "d"), ',
                              'p.list = list(c(0.7, 40, 15)))'), env)

write_reference_json(list(
  provenance = provenance(script, packages, extra = list(
    seed = seed,
    note = paste("RRreg 0.7.5 (and 0.7.6, github danheck/RRreg fa0eca0: same code) cannot run RRuni",
                 "with mix.norm or mix.exp: R/RRuni_models.R uses an undefined variable 'pt', which",
                 "resolves to stats::pt and stops with 'non-numeric argument to binary operator'.",
                 "The error is stored; rrreg_formula_with_pt_bound runs RRreg's own code with pt = p[1]."))),
  rruni = continuous,
  rrcor_mix_unknown = cor_mu,
  rrcor_mix_norm = c(cor_mn, list(note = "fails like RRuni: RRcor calls RRuni for every RR variable"))
), file.path(out_dir, "rruni_continuous.json"))

cat("RRreg continuous reference written to", out_dir, "\n")
