# Reference model matrices for tests/test_formulas.py, made by R's own model.matrix.
# Regenerate (R >= 4.2, with jsonlite) from this folder:
#   Rscript model_matrices.R > model_matrices.json
# The data are small and fixed, so that every column can be compared exactly.
suppressPackageStartupMessages(library(jsonlite))
d <- data.frame(
  a = c(1.5, 2, 3, 4, 5, 6, 7.25, 8, 9, 10.5, 11, 12),
  b = c(2L, 1L, 0L, 1L, 3L, 2L, 0L, 1L, 2L, 3L, 1L, 0L),
  f = c("x", "y", "z", "x", "y", "z", "x", "y", "z", "x", "y", "z"),
  g = c("u", "v", "u", "v", "u", "v", "v", "u", "v", "u", "v", "u"),
  L = c(TRUE, FALSE, TRUE, TRUE, FALSE, FALSE, TRUE, FALSE, TRUE, FALSE, TRUE, FALSE),
  cov.age = c(21, 34, 45, 23, 67, 38, 29, 51, 44, 19, 60, 33),
  stringsAsFactors = FALSE)
d[["my col"]] <- c(0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5, 6.5)
# surveykit's C() and relevel() take text columns as R's factor() would
ff <- function(x) factor(x)
formulas <- c(
  "~ a", "~ a + b", "~ b:a + a", "~ a + b:a", "~ b %in% a", "~ a + b %in% a", "~ a/b",
  "~ (a + b)/f", "~ f", "~ f:g", "~ f * g", "~ a:f", "~ a + a:f", "~ 0 + f + g",
  "~ 0 + a + f + g", "~ 0 + a:f + g", "~ f:g - 1", "~ L", "~ a * L", "~ (a + b + f)^2",
  "~ (a + f + g)^3", "~ a * b * f - a:b:f", "~ a + b - 1 + 1", "~ -1 + a", "~ a:b:f + f",
  "~ `a` + a", "~ f - 1", "~ a:f:g", "~ f:g + f", "~ g + f:g",
  "~ I(a^2) + I((a/10)^2) + I(a * 2) + I(-a) + I(a - -1) + I(2 * (a + 1))",
  "~ I(a/1e5) + I(a * 1e5) + I(a * 10000) + I(a * 1e-4) + I(a * 123456) + I(a * 0.1234567890123456789)",
  "~ I(a^-1) + I(a^(-1)) + I((a))", "~ I(a + b + a) + I(a - b * 2/3)",
  "~ log(a) + exp(a/10) + sqrt(a) + abs(a - 5) + log2(a) + log10(a) + log1p(a)",
  "~ poly(a, 2)", "~ poly(a, 3) + f", "~ poly(a, 2):f", "~ poly(a)", "~ poly(a, 1)",
  "~ poly(cov.age, 4)",
  "~ scale(a)", "~ scale(a) * f", "~ log(scale(a) + 3)",
  "~ factor(b)", "~ factor(b) + a", "~ factor(a)", "~ factor(f, levels = c(\"z\", \"x\", \"y\"))",
  "~ relevel(factor(g), ref = \"v\")", "~ relevel(factor(b), ref = \"2\")",
  "~ factor(b):f", "~ C(factor(f)) + a",
  "~ I((cov.age/10)^2) + cov.age", "~ `my col` + a:`my col`"
)
out <- lapply(formulas, function(text) {
  m <- model.matrix(as.formula(text), d)
  list(formula = text, columns = I(colnames(m)), values = unname(split(unclass(m), col(m))))
})
# New data coded like d (predictions): the stateful transforms keep what they learnt from d
# (R's makepredictcall: poly's coefficients, scale's centre and scale, the factor levels).
newdata <- data.frame(a = c(0.5, 6, 20), b = c(2L, 0L, 3L), f = c("z", "x", "x"),
                      g = c("v", "v", "u"), L = c(FALSE, TRUE, TRUE),
                      cov.age = c(18, 40, 90), stringsAsFactors = FALSE)
# (Not log(scale(a) + 3): R's makepredictcall sees only a variable's outermost call, so R
# rescales a nested scale() by the new data's own mean; surveykit keeps the data's.)
predicted <- c("~ poly(a, 2)", "~ poly(cov.age, 4) + f", "~ scale(a) * f", "~ factor(b) + a", "~ relevel(factor(g), ref = \"v\")", "~ f:g", "~ a * L",
               "~ poly(a, 2):f + I(a^2)")
predictions <- lapply(predicted, function(text) {
  frame <- model.frame(as.formula(text), d)
  tt <- terms(frame)
  m <- model.matrix(tt, model.frame(tt, newdata, xlev = .getXlevels(tt, frame)))
  list(formula = text, columns = I(colnames(m)), values = unname(split(unclass(m), col(m))))
})
cat(toJSON(list(
  provenance = paste0("R's model.matrix, ", R.version.string,
                      "; tests/golden/formulas/model_matrices.R"),
  data = d, matrices = out, newdata = newdata, predictions = predictions),
  digits = NA, pretty = FALSE, auto_unbox = TRUE, dataframe = "columns"))
cat("\n")
