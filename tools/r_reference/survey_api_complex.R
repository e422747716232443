# Reference values for complex-sample estimation beyond survey_api_rr.R (issue 21, phase 1):
#
# 1. svyglm(quasibinomial) on the direct question with glm's convergence tightened
#    (epsilon = 1e-14): glm's default stops one IRLS step early and its sandwich is then off by
#    about 2e-6 relative, more than the 1e-6 a comparison needs; plus regTermTest's Wald and
#    working-Wald (Rao-Scott) tests.
# 2. A "don't know" design: the generalized Warner design (p = 0.6 truthful, q = 0.2 opposite,
#    0.2 "don't know") applied to awards == "Yes" with seeded draws; the weighted pseudo-MLE is
#    svyratio(~r, ~answered) with r = (yes - a * answered) / b, a = q / (p + q),
#    b = (p - q) / (p + q) (the Warner estimate among those who answered yes or no).
# 3. A two-group design with a nuisance parameter: the stochastic lie detector (SLD;
#    Moshagen et al. 2012) with p = (0.2, 0.8) and honesty t = 0.7, groups drawn at random;
#    the pseudo-MLE is a closed form of the two groups' weighted yes-shares
#    lambda_g = pi t + (1 - pi)(1 - p_g): pi = 1 - (lambda_1 - lambda_2) / (p_2 - p_1),
#    t = (lambda_1 - (1 - pi)(1 - p_1)) / pi, linearized by svycontrast (replicates: the
#    closed form on every replicate's lambdas, and svrVar).
# 4. Regression with a randomized outcome: the weighted pseudo-likelihood of the Warner
#    answers of survey_api_rr.R (p = 0.7) and of the SLD answers above (with t), logistic in
#    ell and meals, maximized by Newton's method with exact derivatives, and the sandwich
#    svyrecvar(w s A^-1, ...) exactly as survey's svy.varcoef builds it for svyglm.
#
# Run from the repository root:  Rscript tools/r_reference/survey_api_complex.R
# Writes tests/reference/survey_api/complex_answers_<sample>.csv and complex_designs.json.

source(file.path("tools", "r_reference", "common.R"))
suppressPackageStartupMessages({
  library(survey)
  library(RRreg)
})

script <- "tools/r_reference/survey_api_complex.R"
out_dir <- file.path(reference_root, "survey_api")
packages <- c("survey", "RRreg", "jsonlite")
seed <- 20240601L

data(api)
samples <- list(apistrat = apistrat, apiclus1 = apiclus1, apiclus2 = apiclus2)
rr_answers <- lapply(names(samples), function(s)
  read.csv(file.path(out_dir, paste0("rr_answers_", s, ".csv")), stringsAsFactors = FALSE))
names(rr_answers) <- names(samples)

# -- the designs' matrices, P(answer | true state), answers 1 (yes), 0 (no), 2 (don't know) --
gw <- list(p = 0.6, q = 0.2)
gw_matrix <- rbind(yes = c(yes = gw$p, no = gw$q), no = c(yes = gw$q, no = gw$p),
                   dont_know = c(yes = 1 - gw$p - gw$q, no = 1 - gw$p - gw$q))
sld <- list(p = c(0.2, 0.8), t = 0.7)
# P(answer 1 | state) in group g: carriers (state 1) answer 1 with probability t, non-carriers
# with probability 1 - p_g; RRreg's getPW gives the same matrix:
for (g in 1:2) {
  pw <- getPW("SLD", p = sld$p, group = g, par2 = sld$t)
  stopifnot(abs(pw["1", "1"] - sld$t) < 1e-12, abs(pw["1", "0"] - (1 - sld$p[g])) < 1e-12)
}

answers <- list()
k <- 0L
for (sample_name in names(samples)) {
  frame <- samples[[sample_name]]
  truth <- as.numeric(frame$awards == "Yes")
  n <- nrow(frame)
  k <- k + 1L
  set.seed(seed + k)
  u <- runif(n)
  # generalized Warner: yes with P(yes | state), no with P(no | state), else don't know
  p_yes <- ifelse(truth == 1, gw$p, gw$q)
  p_no <- ifelse(truth == 1, gw$q, gw$p)
  gw_answer <- ifelse(u < p_yes, 1, ifelse(u < p_yes + p_no, 0, 2))
  k <- k + 1L
  set.seed(seed + k)
  group <- sample(1:2, n, replace = TRUE)
  v <- runif(n)
  p1 <- ifelse(truth == 1, sld$t, 1 - sld$p[group])
  sld_answer <- as.numeric(v < p1)
  answers[[sample_name]] <- data.frame(
    cds = frame$cds, snum = frame$snum, awards_yes = truth, answer_gw = gw_answer,
    group_sld = group, answer_sld = sld_answer)
  write_reference_csv(answers[[sample_name]],
                      file.path(out_dir, paste0("complex_answers_", sample_name, ".csv")))
}

a_gw <- gw$q / (gw$p + gw$q)
b_gw <- (gw$p - gw$q) / (gw$p + gw$q)
env <- new.env(parent = globalenv())
for (sample_name in names(samples)) {
  merged <- samples[[sample_name]]
  extra <- answers[[sample_name]]
  merged$awards_yes <- extra$awards_yes
  merged$gw_yes <- as.numeric(extra$answer_gw == 1)
  merged$gw_answered <- as.numeric(extra$answer_gw != 2)
  merged$gw_r <- (merged$gw_yes - a_gw * merged$gw_answered) / b_gw
  merged$one <- 1
  merged$sld_group <- factor(extra$group_sld)
  merged$sld_yes <- extra$answer_sld
  merged$warner_answer <- rr_answers[[sample_name]]$answer_warner
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
linearization <- c("dstrat", "dclus1", "dclus2")
replicate_designs <- c("dstrat_jkn", "dclus1_jk1", "dclus2_jk1")

# -- 1. svyglm with tight convergence, and regTermTest ---------------------------------------
svyglm_results <- list()
for (d in linearization) {
  call <- sprintf(paste0("svyglm(awards_yes ~ api00 + ell, design = %s, family = quasibinomial(),",
                         " control = glm.control(epsilon = 1e-14, maxit = 100))"), d)
  g <- eval(parse(text = call), env)
  tests <- list()
  for (terms in c("~ell", "~api00 + ell")) {
    for (method in c("Wald", "WorkingWald")) {
      test_call <- sprintf('regTermTest(g, %s, method = "%s")', terms, method)
      r <- eval(parse(text = test_call))
      tests[[length(tests) + 1]] <- list(
        call = test_call, terms = attr(terms(as.formula(terms)), "term.labels"),
        method = method,
        statistic = if (method == "Wald") as.numeric(r$Ftest) else as.numeric(r$chisq),
        df = r$df, ddf = r$ddf, p = as.numeric(r$p),
        lambda = if (method == "Wald") NULL else as.numeric(r$lambda))
    }
  }
  s <- summary(g)
  svyglm_results[[d]] <- list(
    call = call, iterations = g$iter, coefficients = named(coef(g)),
    vcov = matrix_json(vcov(g)), se = named(sqrt(diag(vcov(g)))),
    p_value = named(s$coefficients[, 4]), df_residual = g$df.residual,
    naive_cov = matrix_json(g$naive.cov), term_tests = tests)
}

# -- 2. the "don't know" design: svyratio ------------------------------------------------------
gw_results <- list()
for (d in c(linearization, replicate_designs)) {
  design <- get(d, env)
  ratio <- svyratio(~gw_r, ~gw_answered, design)
  by <- svyby(~gw_r, ~stype, denominator = ~gw_answered, design = design, FUN = svyratio,
              covmat = TRUE)
  totals <- svytotal(~gw_r + gw_answered + one, design, return.replicates = TRUE)
  total <- svycontrast(totals, quote(one * gw_r / gw_answered))
  estimate <- as.numeric(coef(ratio))
  gw_results[[d]] <- list(
    calls = list(
      ratio = sprintf("svyratio(~gw_r, ~gw_answered, %s)", d),
      by_stype = sprintf(paste0("svyby(~gw_r, ~stype, denominator = ~gw_answered, design = %s, ",
                                "FUN = svyratio, covmat = TRUE)"), d),
      total = sprintf(paste0("svycontrast(svytotal(~gw_r + gw_answered + one, %s, ",
                             "return.replicates = TRUE), quote(one * gw_r / gw_answered))"), d)),
    estimate = estimate, se = as.numeric(sqrt(vcov(ratio))),
    interior = estimate > 0 && estimate < 1,
    total = as.numeric(coef(total)), total_se = as.numeric(SE(total)),
    degf = degf(design),
    by_stype = list(estimate = named(coef(by)),
                    se = named(setNames(as.numeric(SE(by)), names(coef(by))))))
}

# -- 3. the SLD: closed form of the groups' yes-shares ------------------------------------------
sld_pi <- function(l1, l2) 1 - (l1 - l2) / (sld$p[2] - sld$p[1])
sld_t <- function(l1, l2) (l1 - (1 - sld_pi(l1, l2)) * (1 - sld$p[1])) / sld_pi(l1, l2)
contrasts <- list(
  pi = substitute(1 - (`1` - `2`) / D, list(D = sld$p[2] - sld$p[1])),
  t = substitute((`1` - ((`1` - `2`) / D) * (1 - P1)) / (1 - (`1` - `2`) / D),
                 list(D = sld$p[2] - sld$p[1], P1 = sld$p[1])))
sld_results <- list()
for (d in c(linearization, replicate_designs)) {
  design <- get(d, env)
  replicate <- inherits(design, "svyrep.design")
  shares <- svyby(~sld_yes, ~sld_group, design, svymean, covmat = TRUE,
                  return.replicates = replicate)
  l <- as.numeric(coef(shares))
  estimate <- c(pi = sld_pi(l[1], l[2]), t = sld_t(l[1], l[2]))
  if (replicate) {
    reps <- attr(shares, "replicates")
    thetas <- cbind(sld_pi(reps[, 1], reps[, 2]), sld_t(reps[, 1], reps[, 2]))
    v <- survey:::svrVar(thetas, design$scale, design$rscales, mse = design$mse, coef = estimate)
    how <- "the closed form on each replicate's group shares (svyby(..., return.replicates = TRUE)), then survey:::svrVar"
  } else {
    v <- vcov(svycontrast(shares, contrasts))
    how <- "svycontrast(shares, list(pi = ..., t = ...)) (delta method)"
  }
  per_domain <- list()
  for (st in c("E", "H", "M")) {
    sub <- svyby(~sld_yes, ~sld_group, subset(design, stype == st), svymean, covmat = TRUE,
                 return.replicates = replicate)
    ls <- as.numeric(coef(sub))
    est <- c(pi = sld_pi(ls[1], ls[2]), t = sld_t(ls[1], ls[2]))
    if (replicate) {
      reps <- attr(sub, "replicates")
      vs <- survey:::svrVar(cbind(sld_pi(reps[, 1], reps[, 2]), sld_t(reps[, 1], reps[, 2])),
                            design$scale, design$rscales, mse = design$mse, coef = est)
    } else {
      vs <- vcov(svycontrast(sub, contrasts))
    }
    vs <- as.matrix(vs)
    dimnames(vs) <- list(c("pi", "t"), c("pi", "t"))
    per_domain[[st]] <- list(estimate = named(est), se = named(sqrt(diag(vs))))
  }
  v <- as.matrix(v)
  dimnames(v) <- list(c("pi", "t"), c("pi", "t"))
  sld_results[[d]] <- list(
    calls = list(shares = sprintf(paste0("svyby(~sld_yes, ~sld_group, %s, svymean, covmat = TRUE",
                                         if (replicate) ", return.replicates = TRUE)" else ")"), d),
                 variance = how,
                 domains = "the same on subset(design, stype == s) for s in E, H, M"),
    group_shares = l, estimate = named(estimate),
    se = named(sqrt(diag(v))), vcov = matrix_json(v),
    interior = estimate[["pi"]] > 0 && estimate[["pi"]] < 1 && estimate[["t"]] > 0 &&
      estimate[["t"]] < 1,
    domains = per_domain, degf = degf(design))
}

# -- 4. regression with a randomized outcome -----------------------------------------------------
# Row likelihood L_i = c_i + d_i expit(z_i' beta) with c_i = P(answer | no), d_i = P(answer | yes)
# - c_i, both affine in the nuisance t (SLD): c = c0 + t c1, d = d0 + t d1.
row_parts <- function(model, answer, group) {
  n <- length(answer)
  if (model == "warner") {
    p <- 0.7
    py <- ifelse(answer == 1, p, 1 - p)       # P(answer | yes)
    pn <- ifelse(answer == 1, 1 - p, p)       # P(answer | no)
    return(list(c0 = pn, c1 = rep(0, n), d0 = py - pn, d1 = rep(0, n), nuisance = FALSE))
  }
  # SLD: P(1 | yes) = t, P(1 | no, g) = 1 - p_g
  pn <- ifelse(answer == 1, 1 - sld$p[group], sld$p[group])
  list(c0 = pn, c1 = rep(0, n), d0 = ifelse(answer == 1, 0, 1) - pn,
       d1 = ifelse(answer == 1, 1, -1), nuisance = TRUE)
}
pseudo_loglik <- function(theta, Z, parts, w) {
  q <- ncol(Z)
  t <- if (parts$nuisance) theta[q + 1] else 0
  pr <- plogis(drop(Z %*% theta[1:q]))
  L <- parts$c0 + t * parts$c1 + (parts$d0 + t * parts$d1) * pr
  if (any(L <= 0) || (parts$nuisance && (t < 0 || t > 1))) return(-Inf)
  sum(w * log(L))
}
derivatives <- function(theta, Z, parts, w) {
  q <- ncol(Z)
  t <- if (parts$nuisance) theta[q + 1] else 0
  pr <- plogis(drop(Z %*% theta[1:q]))
  d <- parts$d0 + t * parts$d1
  L <- parts$c0 + t * parts$c1 + d * pr
  dp <- pr * (1 - pr)
  s_beta <- Z * (d * dp / L)
  scores <- s_beta
  if (parts$nuisance) scores <- cbind(scores, (parts$c1 + parts$d1 * pr) / L)
  h_bb <- crossprod(Z * w * (d * dp * (1 - 2 * pr) / L - (d * dp / L)^2), Z)
  H <- h_bb
  if (parts$nuisance) {
    e <- (parts$c1 + parts$d1 * pr) / L
    h_bt <- colSums(Z * w * (parts$d1 * dp / L - (d * dp / L) * e))
    h_tt <- -sum(w * e^2)
    H <- rbind(cbind(h_bb, h_bt), c(h_bt, h_tt))
  }
  list(scores = scores, gradient = colSums(scores * w), hessian = H)
}
newton <- function(theta, Z, parts, w) {
  for (iteration in 1:200) {
    dv <- derivatives(theta, Z, parts, w)
    # Newton's step where -H is positive definite, else the step of -H with its eigenvalues
    # made positive (an ascent direction either way)
    e <- eigen(-dv$hessian, symmetric = TRUE)
    definite <- min(e$values) > 0
    step <- drop(e$vectors %*% (crossprod(e$vectors, dv$gradient) / pmax(abs(e$values), 1e-8)))
    value <- pseudo_loglik(theta, Z, parts, w)
    size <- 1
    while (!(pseudo_loglik(theta + size * step, Z, parts, w) >= value - 1e-12) && size > 1e-8)
      size <- size / 2
    theta <- theta + size * step
    # the Newton decrement g' (-H)^-1 g: below 1e-20 |loglik| the step changes theta by less
    # than 1e-10 relative
    if (definite && sum(dv$gradient * step) < 1e-20 * abs(value)) break
  }
  dv <- derivatives(theta, Z, parts, w)
  list(theta = theta, iterations = iteration, gradient = dv$gradient, hessian = dv$hessian,
       scores = dv$scores)
}
regression_results <- list()
for (model in c("warner", "sld")) {
  for (d in c(linearization, replicate_designs)) {
    design <- get(d, env)
    vars <- design$variables
    Z <- cbind(`(Intercept)` = 1, ell = vars$ell, meals = vars$meals)
    answer <- if (model == "warner") vars$warner_answer else vars$sld_yes
    group <- as.integer(as.character(vars$sld_group))
    parts <- row_parts(model, answer, group)
    w <- weights(design, "sampling")
    if (inherits(design, "svyrep.design")) w <- design$pweights
    start <- c(0, 0, 0, if (parts$nuisance) 0.5)
    fit <- newton(start, Z, parts, w)
    names(fit$theta) <- c(colnames(Z), if (parts$nuisance) "t")
    A_inv <- solve(-fit$hessian)
    if (inherits(design, "svyrep.design")) {
      repw <- weights(design, "analysis")
      thetas <- t(sapply(seq_len(ncol(repw)), function(r)
        newton(fit$theta, Z, parts, repw[, r])$theta))
      v <- survey:::svrVar(thetas, design$scale, design$rscales, mse = design$mse,
                           coef = fit$theta)
      how <- "refit on every replicate's analysis weights, then survey:::svrVar"
    } else {
      influence <- (fit$scores * w) %*% A_inv
      v <- svyrecvar(influence, design$cluster, design$strata, design$fpc,
                     postStrata = design$postStrata)
      how <- "svyrecvar((w * scores) %*% solve(-hessian), design$cluster, design$strata, design$fpc)"
    }
    v <- as.matrix(v)
    dimnames(v) <- list(names(fit$theta), names(fit$theta))
    regression_results[[model]][[d]] <- list(
      formula = "answer ~ ell + meals (logistic model of the true state)",
      fit = "Newton's method on sum_i w_i log L_i with exact gradient and Hessian",
      variance = how, iterations = fit$iterations,
      max_abs_gradient = max(abs(fit$gradient)),
      coefficients = named(fit$theta), se = named(sqrt(diag(v))), vcov = matrix_json(v),
      degf = degf(design))
  }
}

result <- list(
  provenance = provenance(script, packages, extra = list(seed = seed)),
  what = paste(
    "complex_answers_<sample>.csv (rows in the order of apistrat/apiclus1/apiclus2): the true",
    "trait awards_yes, answer_gw (1 yes, 0 no, 2 don't know) under the generalized Warner",
    "design, group_sld (1 or 2) and answer_sld (1 yes, 0 no) under the SLD. Warner answers",
    "for the regression are survey_api_rr.R's answer_warner."),
  setup = c("library(survey)", "library(RRreg)", "data(api)",
            "# each sample gets the columns of complex_answers_<sample>.csv and of rr_answers_<sample>.csv",
            sprintf("gw_r <- (gw_yes - %s * gw_answered) / %s", format(a_gw, digits = 15),
                    format(b_gw, digits = 15)),
            design_setup),
  design_warnings = design_warnings,
  designs = list(
    generalized_warner = list(p = gw$p, q = gw$q, dont_know = 1 - gw$p - gw$q,
                              matrix = matrix_json(gw_matrix), a = a_gw, b = b_gw,
                              drawn = "set.seed(seed + 2k - 1); u <- runif(n); yes if u < P(yes | state), no if u < P(yes | state) + P(no | state), else don't know"),
    sld = list(p = sld$p, t = sld$t,
               drawn = "set.seed(seed + 2k); group <- sample(1:2, n, replace = TRUE); v <- runif(n); answer 1 if v < (state yes: t; no: 1 - p[group])")),
  svyglm = svyglm_results,
  dont_know = gw_results,
  sld = sld_results,
  regression = regression_results)
write_reference_json(result, file.path(out_dir, "complex_designs.json"))
cat("wrote", file.path(out_dir, "complex_designs.json"), "\n")
