# RRreg 0.7.5: powerplot's example from man/powerplot.Rd (commented out there: '# Not run'),
# seeded, with the power of every (n, cor, method) cell.
#
# Run from the repository root:  Rscript tools/r_reference/rrreg_powerplot.R
# Writes tests/reference/rrreg/powerplot.json.

source(file.path("tools", "r_reference", "common.R"))
suppressPackageStartupMessages(library(RRreg))

script <- "tools/r_reference/rrreg_powerplot.R"
out_dir <- file.path(reference_root, "rrreg")
packages <- c("RRreg", "jsonlite")
seed <- 20240521L

# ---------------------------------------------------------------------------
# (c) powerplot: the example in man/powerplot.Rd (commented out there: '# Not run')
# ---------------------------------------------------------------------------
pp_call <- 'powerplot(100, n = c(150, 250), cor = c(0, .3, .5), method = "RRlog", pi = .6, model = "Warner", p = .3)'
grDevices::pdf(NULL)
set.seed(seed)
started <- Sys.time()
pp_run <- capture_run(parse(text = pp_call)[[1]], globalenv())
pp_seconds <- as.numeric(difftime(Sys.time(), started, units = "secs"))
grDevices::dev.off()
pp <- pp_run$value
pp_json <- list(call = pp_call, setup = paste0("set.seed(", seed, ")"), seconds = pp_seconds,
                warnings = I(unique(pp_run$warnings)), error = pp_run$error)
if (is.null(pp_run$error)) {
  res <- pp$res
  rows <- list()
  for (i in seq_along(pp$n)) for (j in seq_along(pp$cor)) for (k in seq_len(dim(res)[3])) {
    rows[[length(rows) + 1]] <- list(n = pp$n[i], cor = pp$cor[j], method = dimnames(res)[[3]][k],
                                     power = res[i, j, k])
  }
  pp_json$power <- rows
  pp_json$numRep <- pp$numRep
  pp_json$alpha <- pp$alpha
  pp_json$monte_carlo_se <- "sqrt(power * (1 - power) / numRep) per cell (numRep = 100)"
  pp_json$what_power_is <- paste("RRsimu: share of numRep simulated data sets (RRgen Warner p = 0.3, pi = 0.6,",
                                 "normal covariate correlated cor with the true state) where RRlog's test of the",
                                 "covariate's coefficient rejects at alpha = 0.05 (the 'RRlog' column is the",
                                 "likelihood-ratio test, as RRsimu reports it)")
}
write_reference_json(list(
  provenance = provenance(script, packages, extra = list(seed = seed, rd_file = "man/powerplot.Rd")),
  powerplot = pp_json
), file.path(out_dir, "powerplot.json"))

cat("RRreg powerplot reference written to", out_dir, "\n")
