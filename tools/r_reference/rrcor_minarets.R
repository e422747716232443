# Reference values for surveykit's correlate (issue 24): RRreg's RRcor on the minarets data.
# Run from the repository root: Rscript tools/r_reference/rrcor_minarets.R
# Writes tests/reference/rrcor_minarets.json.
suppressMessages({
  library(RRreg)
  library(jsonlite)
})
data(minarets)
rr <- minarets[minarets$RRdesign == 1, ]
call <- paste0('RRcor(x = rr$rrt, y = rr[, c("age", "leftRight")], models = c("SLD", "d", "d"), ',
               'p.list = list(c(2/12, 10/12)), group = rr$condition)')
point <- RRcor(x = rr$rrt, y = rr[, c("age", "leftRight")], models = c("SLD", "d", "d"),
               p.list = list(c(2/12, 10/12)), group = rr$condition)
uni <- RRuni(rr$rrt, model = "SLD", p = c(2/12, 10/12), group = rr$condition, MLest = FALSE)
bs_n <- 1000
set.seed(2018)
boot <- RRcor(x = rr$rrt, y = rr[, c("age", "leftRight")], models = c("SLD", "d", "d"),
              p.list = list(c(2/12, 10/12)), group = rr$condition, bs.n = bs_n, bs.type = "se.n")
probs <- c(0.05, 0.25, 0.5, 0.75, 0.95)
out <- list(
  provenance = list(
    r_version = R.version.string,
    packages = list(RRreg = as.character(packageVersion("RRreg")),
                    jsonlite = as.character(packageVersion("jsonlite"))),
    script = "tools/r_reference/rrcor_minarets.R",
    call = "Rscript tools/r_reference/rrcor_minarets.R",
    date = as.character(Sys.Date()),
    platform = R.version$platform,
    data = "RRreg's data(minarets), rows with RRdesign == 1 (tests/data/minarets.csv)"
  ),
  n = nrow(rr),
  call = call,
  r = list(rrt_age = point$r[1, 2], rrt_leftRight = point$r[1, 3], age_leftRight = point$r[2, 3]),
  rruni = list(call = 'RRuni(rr$rrt, model = "SLD", p = c(2/12, 10/12), group = rr$condition, MLest = FALSE)',
               pi = uni$pi, t = uni$t),
  bootstrap = list(
    call = paste0(sub(")$", "", call), ', bs.n = ', bs_n, ', bs.type = "se.n") after set.seed(2018)'),
    replicates = bs_n,
    failed = sum(is.na(boot$samples.n[1, 2, ])),
    se = list(rrt_age = boot$rSE.n[1, 2], rrt_leftRight = boot$rSE.n[1, 3]),
    quantiles = list(probs = probs,
                     rrt_age = unname(quantile(boot$samples.n[1, 2, ], probs, na.rm = TRUE)),
                     rrt_leftRight = unname(quantile(boot$samples.n[1, 3, ], probs, na.rm = TRUE)))
  )
)
writeLines(toJSON(out, auto_unbox = TRUE, digits = NA, pretty = TRUE),
           "tests/reference/rrcor_minarets.json")
