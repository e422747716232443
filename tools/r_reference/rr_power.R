# rr 1.4.2: power.rr.test on its documented example, the cases issue 24 names, and a
# grid over designs, n, alpha, one/two-sided and one/two-sample tests; plus the numbers
# behind power.rr.plot's documented example (power.rr.plot draws them and returns nothing).
#
# Run from the repository root:  Rscript tools/r_reference/rr_power.R
# Writes tests/reference/rr_power.json.

source(file.path("tools", "r_reference", "common.R"))
suppressPackageStartupMessages(library(rr))

script <- "tools/r_reference/rr_power.R"
packages <- c("rr", "jsonlite")

run_power <- function(label, source, expr_text) {
  expr <- parse(text = expr_text)[[1]]
  run <- capture_run(expr, globalenv())
  matched <- match.call(rr::power.rr.test, expr)
  arguments <- lapply(as.list(matched)[-1], function(a) eval(a, globalenv()))
  result <- run$value
  out <- list(label = label, source = source, call = expr_text, arguments = arguments,
              warnings = I(unique(run$warnings)), error = run$error)
  if (is.null(run$error)) {
    out$result <- list(
      power = result$power,
      n = result$n,
      presp = result$presp,
      presp.null = result$presp.null,
      sig.level = result$sig.level,
      type = result$type,
      alternative = result$alternative,
      design = result$design,
      r = result$r
    )
  }
  out
}

cases <- list()
add <- function(label, source, expr_text) {
  cases[[length(cases) + 1]] <<- run_power(label, source, expr_text)
}

# --- documented example and the cases named in issue 24 ------------------------
add("forced-known, documented example", "man/power.rr.test.Rd \\examples",
    'power.rr.test(p = 2/3, p1 = 1/6, p0 = 1/6, n = 200, presp = .2, presp.null = 0, design = "forced-known", sig.level = .01, type = "one.sample", alternative = "one.sided")')
add("mirrored p = 0.7, n = 500, two-sided", "issue 24 Checks",
    'power.rr.test(p = 0.7, n = 500, presp = .2, presp.null = 0, design = "mirrored", sig.level = .05, type = "one.sample", alternative = "two.sided")')
add("forced-known two-sample, n = 500 per group, 0.2 vs 0.1", "issue 24 Checks (a two-sample case)",
    'power.rr.test(p = 2/3, p1 = 1/6, p0 = 1/6, n = 500, prespT = .2, prespC = .1, prespC.null = .1, design = "forced-known", sig.level = .05, type = "two.sample", alternative = "two.sided")')

# --- grid of 20 cases: 4 designs x 5 test settings ------------------------------
designs <- list(
  mirrored = 'p = 0.8, design = "mirrored"',
  `forced-known` = 'p = 0.7, p1 = 0.15, p0 = 0.15, design = "forced-known"',
  disguised = 'p = 0.75, design = "disguised"',
  `unrelated-known` = 'p = 0.7, q = 0.3, design = "unrelated-known"'
)
settings <- list(
  'n = 300, presp = .15, presp.null = 0, sig.level = .05, type = "one.sample", alternative = "one.sided"',
  'n = 1000, presp = .3, presp.null = .2, sig.level = .05, type = "one.sample", alternative = "two.sided"',
  'n = 150, presp = .1, presp.null = .05, sig.level = .1, type = "one.sample", alternative = "two.sided"',
  'n = 800, prespT = .3, prespC = .2, prespC.null = .2, sig.level = .05, type = "two.sample", alternative = "one.sided"',
  'n = 2000, prespT = .25, prespC = .2, prespT.null = .22, prespC.null = .2, sig.level = .01, type = "two.sample", alternative = "two.sided"'
)
for (design in names(designs)) {
  for (i in seq_along(settings)) {
    add(paste0("grid: ", design, ", setting ", i), "grid (this script)",
        paste0("power.rr.test(", designs[[design]], ", ", settings[[i]], ")"))
  }
}

# --- checks of the formula's edges -----------------------------------------------
add("size: alternative equal to the null gives power = alpha (two-sided)", "edge (this script)",
    'power.rr.test(p = 0.7, n = 400, presp = .1, presp.null = .1, design = "mirrored", sig.level = .05, type = "one.sample", alternative = "two.sided")')
add("direct question as forced-known with p = 1, p1 = p0 = 0", "edge (this script)",
    'power.rr.test(p = 1, p1 = 0, p0 = 0, n = 100, presp = .3, presp.null = .2, design = "forced-known", sig.level = .05, type = "one.sample", alternative = "one.sided")')
add("modified design forced-unknown (two groups, r = 1/2)", "edge (this script)",
    'power.rr.test(p = 0.7, p1 = 0.3, p0 = 0, n = 600, presp = .2, presp.null = 0, design = "forced-unknown", sig.level = .05, type = "one.sample", alternative = "two.sided")')
add("modified design unrelated-unknown (two groups, r = 0.6)", "edge (this script)",
    'power.rr.test(p = 0.8, q = 0.4, r = 0.6, n = 600, presp = .2, presp.null = .1, design = "unrelated-unknown", sig.level = .05, type = "one.sample", alternative = "one.sided")')

# --- solving for n (power given): rr's search, with its quirk --------------------
add("solve n: mirrored p = 0.7, power 0.8, one-sided", "n-search (this script)",
    'power.rr.test(p = 0.7, power = 0.8, presp = .1, presp.null = 0, design = "mirrored", sig.level = .05, type = "one.sample", alternative = "one.sided")')
add("solve n: forced-known two-sample, power 0.9, two-sided", "n-search (this script)",
    'power.rr.test(p = 2/3, p1 = 1/6, p0 = 1/6, power = 0.9, prespT = .3, prespC = .2, prespC.null = .2, design = "forced-known", sig.level = .05, type = "two.sample", alternative = "two.sided")')

add("refused: n = NULL written out together with power", "n-search (this script)",
    'power.rr.test(p = 0.7, n = NULL, power = 0.8, presp = .1, presp.null = 0, design = "mirrored", sig.level = .05, type = "one.sample", alternative = "one.sided")')

# --- power.rr.plot's documented example: the numbers it draws ----------------------
plot_call <- paste(
  'presp.seq <- seq(from = 0, to = .15, by = .0025);',
  'n.seq <- c(250, 500, 1000, 2000, 2500);',
  'power.rr.plot(p = 2/3, p1 = 1/6, p0 = 1/6, n.seq = n.seq, presp.seq = presp.seq, presp.null = 0,',
  'design = "forced-known", sig.level = .01, type = "one.sample", alternative = "one.sided", legend = TRUE)')
presp.seq <- seq(from = 0, to = .15, by = .0025)
n.seq <- c(250, 500, 1000, 2000, 2500)
# power.rr.plot computes exactly this loop (rr/R/power.R) before drawing:
plot_power <- lapply(n.seq, function(n) vapply(presp.seq, function(ps)
  rr::power.rr.test(p = 2/3, p1 = 1/6, p0 = 1/6, n = n, presp = ps, presp.null = 0,
                    design = "forced-known", sig.level = .01, type = "one.sample",
                    alternative = "one.sided")$power, numeric(1)))
names(plot_power) <- paste0("n=", n.seq)
# and the plot itself runs (to a null device) without error:
grDevices::pdf(NULL)
plot_run <- capture_run(parse(text = plot_call), globalenv())
grDevices::dev.off()

formula <- list(
  source = "rr 1.4.2, R/power.R (power.rr.test, its inner se.f.rr) and R/rr.R (rrcd)",
  c_d = paste(
    "rrcd(): P(yes) = c * pi + d.",
    "forced-known: c = p, d = p1 (p0 only checked: p + p0 + p1 must be 1).",
    "mirrored and disguised: c = 2p - 1, d = 1 - p (p = 0.5 refused).",
    "unrelated-known: c = p, d = (1 - p) * q (with a warning that q is assumed independent of covariates)."),
  information = paste(
    "Fisher information of ONE answer at prevalence pi, then vcov = 1 / (n * I), se = sqrt(vcov).",
    "forced-known, unrelated-known: I = c^2 * (1/(c*pi + d) + 1/(1 - c*pi - d)).",
    "mirrored, disguised: I = c^2 * ((c*pi + d)^-2 * ((1 - 2d)*pi + d) + (1 - c*pi - d)^-2 * ((2d - 1)*pi + (1 - d)));",
    "with d = 1 - p this equals the forced-known form (1 - 2d = c).",
    "forced-unknown, unrelated-unknown (two groups, share r in group 1, default r = 1/2; q default 1 and p0 default 0 for forced-unknown):",
    "I = r p^2 / ((p pi + (1-p) q)(1 - p pi - (1-p) q)) + (1-r)(1-p)^2 / (((1-p) pi + p q)(1 - (1-p) pi - p q))."),
  one_sample = paste(
    "se = se(n, presp) at the ALTERNATIVE, se.null = se(n, presp.null) at the NULL (default presp.null = 0).",
    "one.sided: power = P(N(presp, se) > presp.null + qnorm(1 - alpha) * se.null) (an upper-tail test only).",
    "two.sided: power = P(N(presp, se) < presp.null - qnorm(1 - alpha/2) * se.null) + P(N(presp, se) > presp.null + qnorm(1 - alpha/2) * se.null)."),
  two_sample = paste(
    "n is the size of EACH group (both se use n).",
    "presp = prespT - prespC; se = sqrt(se(n, prespT)^2 + se(n, prespC)^2);",
    "presp.null = prespT.null - prespC.null (prespT.null defaults to prespC.null);",
    "se.null = sqrt(se(n, prespT.null)^2 + se(n, prespC.null)^2); thresholds as in one_sample."),
  solve_n = paste(
    "With power given and n = NULL, rr scans n = 1, 2, ..., 100000 (2.. for the unknown designs)",
    "and returns the FIRST n with |power - power(n)| < 0.01: not the smallest n reaching the power,",
    "so power(n) may be up to 0.01 below the target. The returned 'power' is the target as given.",
    "n must be left out (not written n = NULL) or rr stops: Exactly one of 'n' or 'power' must be NULL.")
)

write_reference_json(list(
  provenance = provenance(script, packages),
  formula = formula,
  cases = cases,
  power_rr_plot = list(
    source = "man/power.rr.plot.Rd \\examples",
    call = plot_call,
    plot_ran = is.null(plot_run$error),
    plot_warnings = I(plot_run$warnings),
    note = "power.rr.plot returns nothing; these are the power.rr.test values it draws, one curve per n",
    presp_seq = presp.seq,
    n_seq = n.seq,
    power = plot_power
  )
), file.path(reference_root, "rr_power.json"))

cat("rr power reference written\n")
