# Shared helpers for the reference-value scripts in tools/r_reference/.
#
# Every script sources this file, runs from the repository root
# (Rscript tools/r_reference/<topic>.R) and writes under tests/reference/.
# JSON numbers carry 15 significant digits; CSV files are UTF-8 with a header.

suppressPackageStartupMessages(library(jsonlite))

reference_root <- file.path("tests", "reference")

if (!file.exists(file.path("tools", "r_reference", "common.R"))) {
  stop("run the scripts from the repository root: Rscript tools/r_reference/<topic>.R")
}

# Versions of R and of the packages a script used, the script, the call, the date.
provenance <- function(script, packages, call = paste("Rscript", script), extra = list()) {
  versions <- lapply(packages, function(p) as.character(utils::packageVersion(p)))
  names(versions) <- packages
  c(list(
    r_version = R.version.string,
    packages = versions,
    script = script,
    call = call,
    date = format(Sys.Date(), "%Y-%m-%d"),
    platform = R.version$platform
  ), extra)
}

# A JSON file with 15 significant digits, NA written as null, NULL as null.
write_reference_json <- function(value, path) {
  dir.create(dirname(path), recursive = TRUE, showWarnings = FALSE)
  text <- jsonlite::toJSON(value, digits = I(15), auto_unbox = TRUE, null = "null",
                           na = "null", pretty = TRUE, matrix = "rowmajor")
  writeLines(enc2utf8(as.character(text)), path, useBytes = TRUE)
  invisible(path)
}

# A CSV file, UTF-8, header, no row names, numbers with 15 significant digits, NA empty.
write_reference_csv <- function(frame, path) {
  dir.create(dirname(path), recursive = TRUE, showWarnings = FALSE)
  frame <- as.data.frame(frame, stringsAsFactors = FALSE)
  for (name in names(frame)) {
    column <- frame[[name]]
    if (is.factor(column)) frame[[name]] <- as.character(column)
    if (is.array(column) && length(dim(column)) == 1) frame[[name]] <- as.vector(column)
    if (is.character(frame[[name]])) frame[[name]] <- enc2utf8(frame[[name]])
  }
  utils::write.csv(frame, path, row.names = FALSE, na = "", fileEncoding = "UTF-8")
  invisible(path)
}

# Evaluate an expression, keeping its value, its warnings and its error (if any).
capture_run <- function(expr, envir = parent.frame()) {
  warnings <- character()
  value <- withCallingHandlers(
    tryCatch(eval(expr, envir), error = function(e) structure(list(message = conditionMessage(e)),
                                                               class = "captured_error")),
    warning = function(w) {
      warnings <<- c(warnings, conditionMessage(w))
      invokeRestart("muffleWarning")
    }
  )
  list(value = value, warnings = warnings,
       error = if (inherits(value, "captured_error")) value$message else NULL)
}

# A call's text as one string, exactly as written (deparse of the parsed expression).
call_text <- function(expr) paste(deparse(expr, width.cutoff = 500L), collapse = "\n")

# A matrix as a JSON-friendly object: row names, column names and rows.
matrix_json <- function(m) {
  m <- as.matrix(m)
  list(rows = if (is.null(rownames(m))) NULL else rownames(m),
       columns = if (is.null(colnames(m))) NULL else colnames(m),
       values = unname(m))
}

# A named numeric vector as a JSON object (name: value).
named <- function(x) as.list(setNames(as.numeric(x), names(x)))
