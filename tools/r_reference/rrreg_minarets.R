# RRreg 0.7.5: RRuni (SLD) and RRcor on the minarets data (Heck and Moshagen 2018,
# JSS 85(2), sections 4.1-4.2): point estimates, the published bootstrap call (seeded;
# about 15 minutes, mostly its parametric p-values) and a replayable nonparametric bootstrap.
#
# Run from the repository root:  Rscript tools/r_reference/rrreg_minarets.R
# Writes tests/reference/rrreg/rrcor_minarets.json.

source(file.path("tools", "r_reference", "common.R"))
suppressPackageStartupMessages(library(RRreg))

script <- "tools/r_reference/rrreg_minarets.R"
out_dir <- file.path(reference_root, "rrreg")
packages <- c("RRreg", "jsonlite")
seed <- 20240521L

upper <- function(m) {
  # the pairs (i < j) of a correlation-like matrix, named "a~b"
  m <- as.matrix(m)
  out <- list()
  for (i in seq_len(nrow(m) - 1)) for (j in (i + 1):ncol(m)) {
    out[[paste0(rownames(m)[i], "~", colnames(m)[j])]] <- m[i, j]
  }
  out
}

# ---------------------------------------------------------------------------
# (d) the minarets data: the repository already carries tests/data/minarets.csv
# ---------------------------------------------------------------------------
data(minarets, package = "RRreg")
carried <- utils::read.csv(file.path("tests", "data", "minarets.csv"))
same_columns <- identical(names(carried), names(minarets))
same_values <- same_columns && nrow(carried) == nrow(minarets) &&
  isTRUE(all.equal(as.data.frame(lapply(carried, as.numeric)),
                   as.data.frame(lapply(minarets, as.numeric)),
                   tolerance = 1e-14, check.attributes = FALSE))
minarets_check <- list(
  file = "tests/data/minarets.csv",
  rows = nrow(minarets),
  columns = names(minarets),
  equal_to_RRreg_0.7.5_minarets = same_values,
  tolerance = 1e-14,
  note = "not exported again: the repository's CSV equals RRreg's data set"
)
if (!same_values) {
  write_reference_csv(minarets, file.path(out_dir, "minarets.csv"))
  minarets_check$note <- "the repository's CSV differs: RRreg 0.7.5's data written to tests/reference/rrreg/minarets.csv"
}

minarets_RR <- subset(minarets, RRdesign == 1)

# RRuni: the SLD prevalence and the share t of honest carriers (JSS section 4.1)
uni_call <- 'RRuni(response = rrt, data = minarets_RR, model = "SLD", p = c(2/12, 10/12), group = condition)'
unimod <- eval(parse(text = uni_call))
uni_json <- list(call = uni_call, n = unimod$n, pi = unimod$pi, piSE = unimod$piSE,
                 t = unimod$t, tSE = unimod$tSE, logLik = unimod$logLik,
                 logLik_note = paste("RRreg's logLik for SLD is its 1e6 sentinel, not a log-likelihood:",
                                     "RRuni calls RRuni.ll(par = res$pi) without t, so par[2] is NA."),
                 published = list(source = "Heck and Moshagen (2018), JSS 85(2), p. 11-12",
                                  pi = 0.870695, piSE = 0.041118, t = 0.635806, tSE = 0.017344))

# RRcor point estimates (no bootstrap: deterministic)
point_call <- paste0('RRcor(x = minarets_RR[, c("rrt", "age", "leftRight")], models = c("SLD", "d", "d"), ',
                     'p.list = list(c(2/12, 10/12)), group = minarets_RR[, "condition"])')
point <- eval(parse(text = point_call))

# The published call, with its bootstrap (se.n) and parametric p-values (pval), seeded
jss_call <- paste0('RRcor(x = minarets_RR[, c("rrt", "age", "leftRight")], models = c("SLD", "d", "d"), ',
                   'p.list = list(c(2/12, 10/12)), group = minarets_RR[, "condition"], ',
                   'bs.type = c("se.n", "pval"), bs.n = 1000, nCPU = 1)')
set.seed(seed)
started <- Sys.time()
jss <- eval(parse(text = jss_call))
jss_seconds <- as.numeric(difftime(Sys.time(), started, units = "secs"))

# Nonparametric bootstrap alone: with bs.type = "se.n" nothing else draws random
# numbers before the resampling loop, so the row indices can be re-drawn here with
# the same seed and stored (first 10 replicates) for Python to replay exactly.
np_call <- paste0('RRcor(x = minarets_RR[, c("rrt", "age", "leftRight")], models = c("SLD", "d", "d"), ',
                  'p.list = list(c(2/12, 10/12)), group = minarets_RR[, "condition"], ',
                  'bs.type = "se.n", bs.n = 1000, nCPU = 1)')
set.seed(seed)
np <- eval(parse(text = np_call))
n_rr <- nrow(minarets_RR)
set.seed(seed)
indices <- lapply(1:1000, function(i) sample(1:n_rr, n_rr, TRUE))
replayed <- lapply(1:10, function(i) RRcor(x = as.matrix(minarets_RR[, c("rrt", "age", "leftRight")])[indices[[i]], ],
                                            models = c("SLD", "d", "d"), p.list = list(c(2/12, 10/12)),
                                            group = as.matrix(minarets_RR[, "condition"])[indices[[i]], ])$r)
replay_matches <- all(vapply(1:10, function(i) isTRUE(all.equal(replayed[[i]], np$samples.n[, , i],
                                                                 check.attributes = FALSE, tolerance = 0)), TRUE))
replicate_estimates <- t(vapply(1:1000, function(i) {
  m <- np$samples.n[, , i]
  c(m[1, 2], m[1, 3], m[2, 3])
}, numeric(3)))
colnames(replicate_estimates) <- c("rrt~age", "rrt~leftRight", "age~leftRight")

write_reference_json(list(
  provenance = provenance(script, packages, extra = list(seed = seed)),
  data = list(file = "tests/data/minarets.csv", subset = "RRdesign == 1 (minarets_RR, 1256 rows, in file order)",
              check = minarets_check),
  rruni_sld = uni_json,
  rrcor_point = list(
    call = point_call,
    note = "bs.n = 0: deterministic point estimates; use these for 1e-6 checks",
    n = point$n,
    models = point$models,
    r = matrix_json(point$r),
    pairs = upper(point$r),
    n_mat = matrix_json(point$n.mat),
    quirk = paste(
      "RRcor's weights for averaging subgroup correlations use quotient.list[[j]] where j is the",
      "last value of an earlier loop (always m, the last variable), not the pair's k.",
      "With SLD first and two direct variables this has no effect (the direct quotient is 0",
      "and cancels), but it matters when a later pair has a two-group RR variable not in last place.")
  ),
  rrcor_published_call = list(
    call = jss_call,
    setup = paste0("data(minarets, package = \"RRreg\"); minarets_RR <- subset(minarets, RRdesign == 1); set.seed(", seed, ")"),
    seconds = jss_seconds,
    r = matrix_json(jss$r),
    rSE_n = matrix_json(jss$rSE.n),
    prob = matrix_json(jss$prob),
    pairs = upper(jss$r),
    se_pairs = upper(jss$rSE.n),
    p_pairs = upper(jss$prob),
    published = list(
      source = "Heck and Moshagen (2018), JSS 85(2), section 4.2, p. 12 (printed to 6 decimals; their seed unknown)",
      r = list(`rrt~age` = -0.054478, `rrt~leftRight` = 0.593345, `age~leftRight` = -0.005980),
      se_n = list(`rrt~age` = 0.118752, `rrt~leftRight` = 0.141630, `age~leftRight` = 0.035393),
      p_value = list(`rrt~age` = 0.623246, `rrt~leftRight` = 0.006006, `age~leftRight` = 0.974975)
    ),
    note = paste("Bootstrap SEs and p-values are random: compare them within Monte Carlo error, the point",
                 "estimates exactly. pval is a parametric bootstrap under r = 0 (RRsimu); se.n resamples",
                 "whole rows (sample(1:n, n, TRUE)) and re-runs RRcor, SE = sd over replicates.")
  ),
  rrcor_nonparametric_bootstrap = list(
    call = np_call,
    setup = paste0("set.seed(", seed, ")"),
    rSE_n = matrix_json(np$rSE.n),
    se_pairs = upper(np$rSE.n),
    replay = list(
      how = paste0("set.seed(", seed, "); indices[[i]] <- sample(1:1256, 1256, TRUE) for i = 1..1000, ",
                   "in order; replicate i is RRcor on minarets_RR[indices[[i]], ] (1-based row numbers of minarets_RR)"),
      replayed_first_10_equal_RRcor_samples = replay_matches,
      first_10_indices = indices[1:10],
      first_10_r = lapply(replayed, function(m) upper(`dimnames<-`(m, dimnames(point$r))))
    ),
    replicate_estimates = list(columns = colnames(replicate_estimates),
                               values = unname(replicate_estimates))
  )
), file.path(out_dir, "rrcor_minarets.json"))

cat("RRreg minarets reference written to", out_dir, "\n")
