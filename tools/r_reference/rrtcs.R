# RRTCS 0.0.4: every bundled data set as CSV, and every estimator's documentation
# examples run exactly (the code of man/*.Rd \examples, read from the installed
# package's help database), each result stored as JSON with the R call beside it.
#
# Run from the repository root:  Rscript tools/r_reference/rrtcs.R
# Writes tests/reference/rrtcs/data/<DataSet>.csv and tests/reference/rrtcs/<Function>.json.

source(file.path("tools", "r_reference", "common.R"))
suppressPackageStartupMessages({
  library(RRTCS)
  library(sampling)
  library(samplingVarEst)
})

script <- "tools/r_reference/rrtcs.R"
out_dir <- file.path(reference_root, "rrtcs")
packages <- c("RRTCS", "sampling", "samplingVarEst", "jsonlite")

# ---------------------------------------------------------------------------
# 1. Data sets
# ---------------------------------------------------------------------------
data_sets <- data(package = "RRTCS")$results[, "Item"]
data_index <- list()
for (name in data_sets) {
  holder <- new.env()
  data(list = name, package = "RRTCS", envir = holder)
  value <- get(name, envir = holder)
  path <- file.path(out_dir, "data", paste0(name, ".csv"))
  if (is.matrix(value)) {
    # ChaudhuriChristofidesDatapij: the n x n matrix of second-order inclusion
    # probabilities, rows and columns in the order of ChaudhuriChristofidesData.
    frame <- as.data.frame(unname(value))
    names(frame) <- paste0("unit", seq_len(ncol(value)))
    write_reference_csv(frame, path)
  } else {
    write_reference_csv(value, path)
  }
  data_index[[name]] <- list(
    file = paste0("data/", name, ".csv"),
    title = unname(data(package = "RRTCS")$results[data_sets == name, "Title"]),
    class = class(value)[1],
    rows = nrow(value),
    columns = if (is.matrix(value)) ncol(value) else names(value)
  )
}
write_reference_json(list(
  provenance = provenance(script, packages, extra = list(
    note = paste("Every data set of data(package = \"RRTCS\"), written with write.csv",
                 "(15 significant digits, no row names, UTF-8). The matrix",
                 "ChaudhuriChristofidesDatapij is written with columns unit1..unit100."))),
  data_sets = data_index
), file.path(out_dir, "data_sets.json"))

# ---------------------------------------------------------------------------
# 2. Documentation examples of every estimator
# ---------------------------------------------------------------------------
estimators <- setdiff(getNamespaceExports("RRTCS"), "ResamplingVariance")
estimators <- sort(estimators)
rd_db <- tools::Rd_db("RRTCS")

example_code <- function(rd_name) {
  connection <- textConnection("lines", "w", local = TRUE)
  tools::Rd2ex(rd_db[[rd_name]], out = connection, commentDonttest = FALSE)
  close(connection)
  if (!exists("lines") || length(lines) == 0) return(character())
  # drop the '### Name:' header Rd2ex writes
  start <- grep("^### \\*\\* Examples", lines)
  if (length(start) == 0) return(character())
  lines[(start + 1):length(lines)]
}

# Which loaded data set column equals a vector argument (so the JSON can point to the CSV).
locate_vector <- function(value, env, data_names) {
  for (name in rev(data_names)) {
    frame <- get(name, envir = env)
    if (is.data.frame(frame)) {
      for (column in names(frame)) {
        if (length(frame[[column]]) == length(value) && isTRUE(all(frame[[column]] == value))) {
          return(list(data_set = name, column = column))
        }
      }
    } else if (is.matrix(frame) && is.matrix(value) && identical(dim(frame), dim(value)) &&
               isTRUE(all(frame == value))) {
      return(list(data_set = name, matrix = TRUE))
    }
  }
  NULL
}

describe_argument <- function(value, env, data_names, expression_text) {
  if (is.null(value)) return(NULL)
  if (is.character(value)) return(value)
  if (length(value) <= 10 && !is.matrix(value)) return(unname(value))
  where <- locate_vector(value, env, data_names)
  if (!is.null(where)) return(c(where, list(expression = expression_text, length = length(value))))
  if (is.matrix(value)) {
    return(list(expression = expression_text, dim = dim(value),
                note = "matrix not stored: recompute it from the expression"))
  }
  if (length(unique(value)) == 1) {
    return(list(expression = expression_text, length = length(value), constant = value[1]))
  }
  list(expression = expression_text, values = unname(value))
}

# The data sets whose columns the arguments are (so Python reads those CSV files).
referenced_data_sets <- function(arguments) {
  sets <- unlist(lapply(arguments, function(a) if (is.list(a)) a$data_set else NULL))
  I(unique(as.character(sets)))
}

result_json <- function(result) {
  variance <- if (is.null(result$Variance)) NA else result$Variance
  interval <- if (is.null(result$ConfidenceInterval)) c(NA, NA) else result$ConfidenceInterval
  list(
    name = result$Name,
    model = result$Model,
    type = result$Type,
    parameters = as.list(result$Param),
    confidence_level = result$ConfidenceLevel,
    estimate = result$Estimation,
    variance = variance,
    standard_error = if (is.na(variance) || variance < 0) NA else sqrt(variance),
    ci_low = interval[1],
    ci_high = interval[2],
    ci_method = "normal: estimate -/+ qnorm(1 - (1 - cl) / 2) * sqrt(variance)",
    transformed_variable = if (is.null(result$TransformedVariable)) NULL else unname(result$TransformedVariable),
    transformed_variance = if (is.null(result$TransformedVariance)) NULL else unname(result$TransformedVariance)
  )
}

run_examples <- function(function_name, rd_name, code_lines, extra = FALSE) {
  exprs <- parse(text = code_lines, keep.source = TRUE)
  sources <- vapply(attr(exprs, "srcref"), function(s) paste(as.character(s), collapse = "\n"), "")
  env <- new.env(parent = globalenv())
  data_names <- character()
  setup <- character()
  cases <- list()
  last_estimate <- NULL
  for (i in seq_along(exprs)) {
    expr <- exprs[[i]]
    text <- sources[i]
    head <- if (is.call(expr)) as.character(expr[[1]]) else ""
    is_assignment <- head %in% c("=", "<-")
    rhs <- if (is_assignment) expr[[3]] else expr
    rhs_head <- if (is.call(rhs)) as.character(rhs[[1]])[1] else ""
    if (head == "data") data_names <- c(data_names, as.character(expr[[2]]))
    run <- capture_run(expr, env)
    if (head == "data") {
      # data() loads into env; keep the name for the argument pointers
    }
    records <- rhs_head %in% c(estimators, "ResamplingVariance") && !is.null(run$value)
    if (records) {
      value <- if (is_assignment) get(as.character(expr[[2]]), envir = env) else run$value
      case <- list(
        source = if (extra) "not a documentation example (the Rd has none): see note" else
          paste0("man/", rd_name, " \\examples"),
        setup = I(setup),
        call = text,
        warnings = I(run$warnings),
        error = run$error
      )
      if (rhs_head == "ResamplingVariance") {
        matched <- match.call(ResamplingVariance, rhs)
        arguments <- list()
        for (argument in setdiff(names(matched)[-1], "output")) {
          arg_text <- call_text(matched[[argument]])
          arguments[[argument]] <- describe_argument(eval(matched[[argument]], env), env,
                                                     data_names, arg_text)
        }
        case$function_name <- "ResamplingVariance"
        case$arguments <- arguments
        case$output_of <- if (!is.null(last_estimate)) last_estimate$call else NULL
        case$data_sets <- referenced_data_sets(arguments)
        case$resampling_variance <- value
        case$option_meaning <- c("1" = "jackknife (strata and clusters if str/clu given)",
                                 "2" = "Escobar-Berger (2013) jackknife, needs pij",
                                 "3" = "Campbell-Berger-Skinner jackknife, needs pij")[
                                   as.character(eval(matched$option, env))]
      } else {
        fun <- get(rhs_head, envir = asNamespace("RRTCS"))
        matched <- match.call(fun, rhs)
        arguments <- list()
        for (argument in names(matched)[-1]) {
          arg_text <- call_text(matched[[argument]])
          arguments[[argument]] <- describe_argument(eval(matched[[argument]], env), env,
                                                     data_names, arg_text)
        }
        case$function_name <- rhs_head
        case$matched_call <- call_text(value$Call)
        case$arguments <- arguments
        case$data_sets <- referenced_data_sets(arguments)
        case$n <- length(eval(matched$pi, env))
        case$result <- result_json(value)
        last_estimate <- case
      }
      cases[[length(cases) + 1]] <- case
      setup <- character()
    } else {
      setup <- c(setup, text)
    }
  }
  cases
}

# Mangat and MangatUB have no \examples in RRTCS 0.0.4 and no data set of their own:
# they are run on the closest bundled data (same response coding), with the
# parameters of the sibling examples, so that their formulas have a reference too.
extra_examples <- list(
  Mangat = c(
    "N=802",
    "data(MangatSinghData)",
    "dat=with(MangatSinghData,data.frame(z,Pi))",
    "p=0.7",
    "alpha=0.5",
    "t=0.55",
    "cl=0.95",
    "Mangat(dat$z,p,alpha,t,dat$Pi,\"mean\",cl,N)",
    "Mangat(dat$z,p,alpha,t,dat$Pi,\"total\",cl)"
  ),
  MangatUB = c(
    "N=802",
    "data(MangatSinghSinghUBData)",
    "dat=with(MangatSinghSinghUBData,data.frame(I,J,Pi))",
    "p1=0.6",
    "p2=0.8",
    "t=0.5",
    "cl=0.95",
    "MangatUB(dat$I,dat$J,p1,p2,t,dat$Pi,\"mean\",cl,N)",
    "MangatUB(dat$I,dat$J,p1,p2,t,dat$Pi,\"total\",cl)"
  )
)

variance_note <- paste(
  "RRTCS Estimator(): r = transformed variable, vr = its randomization variance (per respondent).",
  "total: estimate = sum(r/pi); variance = sum(vr/pi) + sampling::varest(r, pik = pi)",
  "(Deville's approximation: a = (1-pi)/sum(1-pi), A = sum(a*r/pi),",
  "varest = sum((1-pi)*(r/pi - A)^2) / (1 - sum(a^2))).",
  "mean with N: estimate = sum(r/pi)/N; variance = (sum(vr/pi) + varest(r, pik = pi)) / N^2.",
  "mean with pij and no N: N = round(sum(1/pi)); variance = (sum(vr/pi) +",
  "sampling::vartaylor_ratio(r, rep(1, n), pij)$estvar) / N^2.",
  "mean with neither: only the estimate (a warning says why).",
  "Interval: estimate -/+ qnorm(1-(1-cl)/2)*sqrt(variance).")

all_files <- list()
for (function_name in estimators) {
  rd_name <- paste0(function_name, ".Rd")
  code <- example_code(rd_name)
  cases <- list()
  example_text <- NULL
  if (length(code) > 0 && any(grepl(paste0("\\b", function_name, "\\("), code))) {
    example_text <- paste(code, collapse = "\n")
    cases <- run_examples(function_name, rd_name, code)
  }
  extra <- FALSE
  if (length(cases) == 0 && function_name %in% names(extra_examples)) {
    example_text <- paste(extra_examples[[function_name]], collapse = "\n")
    cases <- run_examples(function_name, rd_name, extra_examples[[function_name]], extra = TRUE)
    extra <- TRUE
  }
  file_name <- paste0(function_name, ".json")
  write_reference_json(list(
    provenance = provenance(script, packages, extra = list(
      rd_file = paste0("man/", rd_name),
      documentation_example = !extra,
      note = if (extra) paste(
        "RRTCS 0.0.4 has no \\examples for", function_name, "and no data set made with its",
        "design; the cases run it on the data named in data_sets with the parameters shown,",
        "to pin its formula, not to reproduce a published analysis.") else NULL)),
    function_name = function_name,
    function_source = paste(deparse(get(function_name, envir = asNamespace("RRTCS"))), collapse = "\n"),
    example_code = example_text,
    variance_formula = variance_note,
    cases = cases
  ), file.path(out_dir, file_name))
  all_files[[function_name]] <- list(file = file_name, cases = length(cases),
                                     documentation_example = !extra)
}

# The ResamplingVariance examples (jackknife, Escobar-Berger, Campbell-Berger-Skinner).
code <- example_code("ResamplingVariance.Rd")
cases <- run_examples("ResamplingVariance", "ResamplingVariance.Rd", code)
write_reference_json(list(
  provenance = provenance(script, packages, extra = list(rd_file = "man/ResamplingVariance.Rd",
                                                         documentation_example = TRUE)),
  function_name = "ResamplingVariance",
  example_code = paste(code, collapse = "\n"),
  variance_formula = variance_note,
  pij_note = paste("samplingVarEst::Pkl.Hajek.s(pi) is Hajek's approximation of the",
                   "second-order inclusion probabilities, recomputed from pi, not stored:",
                   "pkl = pk*pl*(1 - (1-pk)*(1-pl)/d), d = sum(1-pk), diagonal pk."),
  cases = cases
), file.path(out_dir, "ResamplingVariance.json"))
all_files[["ResamplingVariance"]] <- list(file = "ResamplingVariance.json", cases = length(cases),
                                          documentation_example = TRUE)

write_reference_json(list(
  provenance = provenance(script, packages),
  estimators = all_files
), file.path(out_dir, "index.json"))

cat("RRTCS reference written to", out_dir, "\n")
