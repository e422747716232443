"""A numeric question as a covariate of another randomized question's (logistic) model is
refused, in one line that says why (the transform's noise biases a non-linear model, with no
known correction) and what to do; with and without [sampling], in [[models]] and regress."""

from __future__ import annotations

from store_support import run_cli

SURVEY = '''name = "mixed"
title = "Mixed questions"

[mechanism]
p = 0.6
q = 0.2

[[questions]]
id = "cheat"
text = "Have you ever copied answers during an exam?"

[[questions]]
id = "income"
text = "How much income did you leave out?"
type = "number"
range = [0, 100]
[questions.design]
model = "eriksson"
p = 0.6
scrambler = [0, 10, 50, 100]

[covariates]
age = "number"
{models}{sampling}'''
SAMPLING = '\n[sampling]\nweight = "w"\n'
REASON = ("uses the numeric question 'income' as a covariate of question 'cheat', whose "
          "answers are randomized too: income's unbiased transform is its true value plus "
          "noise, and in a model that is not linear in the covariate (the logistic model of "
          "a randomized answer) that noise biases every coefficient, with no known "
          "correction; fit each question on the covariates instead (\"cheat ~ age\", "
          "\"income ~ age\"), or use 'income' as a predictor of a covariate (\"satisfaction "
          "~ income\": linear, with the randomization corrected)")


def test_a_declared_model_with_a_numeric_covariate_is_refused_at_survey_add(sqlite_url,
                                                                           tmp_path):
    path = tmp_path / "mixed.toml"
    path.write_text(SURVEY.format(models='\n[[models]]\nformula = "cheat ~ income"\n',
                                  sampling=""), encoding="utf-8")
    assert run_cli("init", "--db", sqlite_url).exit_code == 0
    result = run_cli("survey", "add", str(path), "--db", sqlite_url)
    assert result.exit_code != 0
    assert REASON in result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1


def test_regress_with_a_numeric_covariate_says_why_it_is_refused(engine, tmp_path):
    url = engine.url.render_as_string(hide_password=False)
    for name, sampling in (("srs", ""), ("sampled", SAMPLING)):
        path = tmp_path / f"{name}.toml"
        path.write_text(SURVEY.format(models="", sampling=sampling).replace(
            'name = "mixed"', f'name = "{name}"'), encoding="utf-8")
        assert run_cli("survey", "add", str(path), "--db", url).exit_code == 0
        result = run_cli("regress", "--survey", name, "--formula", "cheat ~ income + age",
                         "--db", url)
        assert result.exit_code != 0, result.output
        assert REASON in result.output, result.output
        assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1
