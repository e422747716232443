# Producer replicate weights (issue 21, item 1): a public-use file ships its BRR (or Fay) replicate
# weights as columns repw1, repw2, ... beside the full-sample weight, and the analyst declares them
# with svrepdesign(repweights = "repw[0-9]+", type = "BRR" | "Fay", combined.weights = TRUE).
# The weights are survey's own for apistrat in half-sample pairs (the dpairs design of
# survey_api.R): as.svrepdesign(dpairs, type = "BRR") and (type = "Fay", fay.rho = 0.3), written
# out as a producer would ship them; the reference is then svrepdesign on that file alone, so
# nothing of the pairing is needed to reproduce it. Answers: awards_yes (direct) and the
# randomized answers of rr_answers_apistrat.csv (survey_api_rr.R); a randomized answer's reference
# is svymean of its unbiased transform r = (answer - a) / b, which the weighted pseudo-MLE equals
# where it lies inside (0, 1).
#
# Run from the repository root:  Rscript tools/r_reference/survey_api_producer_brr.R
# (after survey_api_rr.R). Writes tests/reference/survey_api/producer_<type>_apistrat.csv and
# producer_replicates.json.

source(file.path("tools", "r_reference", "common.R"))
suppressPackageStartupMessages(library(survey))

script <- "tools/r_reference/survey_api_producer_brr.R"
out_dir <- file.path(reference_root, "survey_api")
packages <- c("survey", "jsonlite")

data(api)
rr <- read.csv(file.path(out_dir, "rr_answers_apistrat.csv"), colClasses = c(cds = "character"))
stopifnot(identical(rr$cds, as.character(apistrat$cds)))
apistrat$awards_yes <- as.numeric(apistrat$awards == "Yes")
rr_names <- c("warner", "fr", "mangat")
for (name in rr_names) {
  apistrat[[paste0("answer_", name)]] <- rr[[paste0("answer_", name)]]
  apistrat[[paste0("r_", name)]] <- rr[[paste0("r_", name)]]
}
pairs_setup <- c(
  "apistrat_pairs <- apistrat[order(apistrat$stype, apistrat$snum), ]",
  "apistrat_pairs$pair <- paste(apistrat_pairs$stype, (ave(seq_along(apistrat_pairs$snum), apistrat_pairs$stype, FUN = seq_along) + 1) %/% 2)",
  "dpairs <- svydesign(id = ~snum, strata = ~pair, weights = ~pw, data = apistrat_pairs)"
)
env <- new.env(parent = globalenv())
assign("apistrat", apistrat, envir = env)
for (line in pairs_setup) eval(parse(text = line)[[1]], env)

made <- list(
  BRR = 'as.svrepdesign(dpairs, type = "BRR")',
  Fay = 'as.svrepdesign(dpairs, type = "Fay", fay.rho = 0.3)'
)
declared <- list(
  BRR = 'svrepdesign(data = producer, repweights = "repw[0-9]+", weights = ~pw, type = "BRR", combined.weights = TRUE)',
  Fay = 'svrepdesign(data = producer, repweights = "repw[0-9]+", weights = ~pw, type = "Fay", rho = 0.3, combined.weights = TRUE)'
)
results <- list()
for (type in names(made)) {
  source_design <- eval(parse(text = made[[type]]), env)
  repw <- weights(source_design, type = "analysis")
  colnames(repw) <- paste0("repw", seq_len(ncol(repw)))
  pairs <- get("apistrat_pairs", envir = env)
  producer <- data.frame(snum = pairs$snum, stype = pairs$stype, pw = pairs$pw,
                         awards_yes = pairs$awards_yes)
  for (name in rr_names) {
    producer[[paste0("answer_", name)]] <- pairs[[paste0("answer_", name)]]
    producer[[paste0("r_", name)]] <- pairs[[paste0("r_", name)]]
  }
  producer <- cbind(producer, repw)
  file <- paste0("producer_", tolower(type), "_apistrat.csv")
  write_reference_csv(producer, file.path(out_dir, file))
  # the reference reads the file back, as a user of the public-use file would
  producer <- read.csv(file.path(out_dir, file))
  design <- eval(parse(text = declared[[type]]))
  per_variable <- list()
  for (name in c("direct", rr_names)) {
    variable <- if (name == "direct") "awards_yes" else paste0("r_", name)
    calls <- list(mean = sprintf("svymean(~%s, design)", variable),
                  total = sprintf("svytotal(~%s, design)", variable))
    m <- eval(parse(text = calls$mean))
    t <- eval(parse(text = calls$total))
    per_variable[[name]] <- list(
      variable = variable, calls = calls,
      mean = as.numeric(coef(m)), mean_se = as.numeric(SE(m)),
      interior = coef(m) > 0 && coef(m) < 1,
      total = as.numeric(coef(t)), total_se = as.numeric(SE(t)))
  }
  results[[type]] <- list(
    file = file,
    made_by = made[[type]],
    design_call = declared[[type]],
    replicates = ncol(repw),
    scale = design$scale,
    rscales_distinct = length(unique(design$rscales)),
    degf = degf(design),
    sum_weights = sum(producer$pw),
    results = per_variable)
}

write_reference_json(list(
  provenance = provenance(script, packages),
  what = paste(
    "apistrat with producer replicate weights repw1..repwR (analysis weights, combined.weights = TRUE),",
    "made by survey's as.svrepdesign on the half-sample pairs of survey_api.R and written out as a",
    "data producer ships them (rows in apistrat_pairs order). The statistics come from svrepdesign on",
    "the file alone: svymean and svytotal of awards_yes (direct) and of the transforms r_<design> of",
    "rr_answers_apistrat.csv (survey_api_rr.R, where a and b are given)."),
  setup = I(c("library(survey)", "data(api)",
              "# apistrat gets awards_yes and answer_/r_ warner, fr, mangat from rr_answers_apistrat.csv",
              pairs_setup,
              "# producer <- read.csv(<file>) after writing the weights of made_by as repw1..repwR")),
  results = results
), file.path(out_dir, "producer_replicates.json"))

cat("producer replicate-weight reference written to", out_dir, "\n")
