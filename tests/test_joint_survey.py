"""``surveykit joint --survey``: the joint analysis of a stored survey's questions.

Oracles: with direct questions the joint shares are the observed cross-table's
shares; with randomized designs (the SLD in two groups beside a one-group
crosswise question) the stored path equals :func:`surveykit.joint` on the very
rows that were imported, so the one SQL query that cross-classifies the answers
is checked against pandas. Privacy: the loss of answering all the questions is the
sum of the questions' losses, written "inf" (never null) when one is unbounded.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from migrated import migrated_sqlite
from store_support import run_cli

from surveykit import joint, store
from surveykit.definition.survey import parse_survey
from surveykit.store.importer import import_responses
from surveykit.workflows.joint import joint_for_survey

MIXED = Path(__file__).parent / "surveys" / "mixed.toml"

DIRECT = """
name = "plain"
title = "Two direct questions"
[design]
model = "direct"
[[questions]]
id = "smoked"
text = "Have you ever smoked?"
[[questions]]
id = "drank"
text = "Have you ever drunk alcohol?"
[[questions]]
id = "skipped"
text = "Have you ever skipped a class?"
"""


def _stored(engine, source: str, name: str):
    survey = parse_survey(source, name)
    store.add_survey(engine, survey)
    return survey


def _write_long(path: Path, rows: list[tuple[str, str | None, str, str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(["respondent_id", "group", "question_id", "answer"])
        for respondent, group, question, answer in rows:
            writer.writerow([respondent, group or "", question, answer])
    return path


def test_direct_questions_give_the_observed_cross_table(engine, tmp_path):
    _stored(engine, DIRECT, "plain")
    rng = np.random.default_rng(7)
    smoked = rng.random(400) < 0.3
    drank = rng.random(400) < np.where(smoked, 0.8, 0.5)
    rows = []
    for i, (s, d) in enumerate(zip(smoked, drank, strict=True)):
        rows += [(f"r{i}", None, "smoked", "yes" if s else "no"),
                 (f"r{i}", None, "drank", "yes" if d else "no")]
    rows += [("only-one", None, "smoked", "yes"), ("only-two", None, "drank", "no")]
    import_responses(engine, _write_long(tmp_path / "plain.csv", rows), "plain")

    result = joint_for_survey(engine, "plain", ["smoked", "drank"])
    estimate = result.estimate
    assert estimate.n == 400
    assert dict(estimate.left_out) == {"missing answers": 2}
    table = pd.crosstab(smoked, drank, normalize=True)
    for (s, d), share in zip(estimate.states, estimate.shares, strict=True):
        assert share == pytest.approx(table.loc[s == "yes", d == "yes"], abs=1e-9)
    pair = estimate.pair("smoked", "drank")
    assert pair["phi"].estimate == pytest.approx(np.corrcoef(smoked, drank)[0, 1], abs=1e-9)


def _simulate_mixed(survey, n: int, seed: int) -> pd.DataFrame:
    """Respondents in groups short/long; doping (SLD, t = 0.9) and tax (crosswise) drawn
    from their designs' matrices, with true states that go together."""
    rng = np.random.default_rng(seed)
    doped = rng.random(n) < 0.25
    evaded = rng.random(n) < np.where(doped, 0.6, 0.2)
    group = np.where(rng.random(n) < 0.5, "short", "long")
    out = {"respondent_id": [f"m{i}" for i in range(n)], "group": group}
    for name, truth, nuisance in (("doping", doped, [0.9]), ("tax", evaded, None)):
        design = survey.question(name).design
        matrices = design.matrix(np.array(nuisance) if nuisance else None)
        labels = design.response_labels
        answers = []
        for state, g in zip(truth, group, strict=True):
            gi = design.group_index(g) if len(design.group_names) > 1 else 0
            column = matrices[gi][:, design.state_labels.index("yes" if state else "no")]
            answers.append(labels[rng.choice(len(labels), p=column / column.sum())])
        out[name] = answers
    return pd.DataFrame(out)


def test_stored_answers_give_the_estimate_of_the_same_rows(engine, tmp_path):
    survey = _stored(engine, MIXED.read_text(encoding="utf-8"), "mixed.toml")
    frame = _simulate_mixed(survey, 1500, seed=24)
    rows = [(r.respondent_id, r.group, q, getattr(r, q)) for r in frame.itertuples()
            for q in ("doping", "tax")]
    import_responses(engine, _write_long(tmp_path / "mixed.csv", rows), "mixed")

    stored = joint_for_survey(engine, "mixed", ["doping", "tax"]).estimate
    designs = {q: survey.question(q).design for q in ("doping", "tax")}
    oracle = joint(frame, designs, groups={"doping": "group"})
    assert stored.states == oracle.states and stored.n == oracle.n == 1500
    np.testing.assert_allclose(stored.shares, oracle.shares, rtol=0, atol=1e-9)
    assert stored.nuisance["doping.t"] == pytest.approx(oracle.nuisance["doping.t"], abs=1e-9)
    both = stored.pair("doping", "tax")["both"]
    assert both.estimate == pytest.approx(oracle.pair("doping", "tax")["both"].estimate,
                                          abs=1e-9)
    # the truth (0.25 * 0.6 = 0.15 did both) within 3.5 standard errors
    assert abs(both.estimate - 0.15) < 3.5 * both.se


def test_cli_prints_the_pair_and_the_composed_privacy_loss(tmp_path):
    url = migrated_sqlite(tmp_path / "plain.db")
    (tmp_path / "plain.toml").write_text(DIRECT, encoding="utf-8")
    assert run_cli("survey", "add", str(tmp_path / "plain.toml"), "--db", url).exit_code == 0
    rows = [(f"r{i}", None, q, a) for i, (x, y, z) in enumerate(
        [("yes", "yes", "no")] * 30 + [("yes", "no", "no")] * 20 + [("no", "yes", "yes")] * 10
        + [("no", "no", "yes")] * 40) for q, a in (("smoked", x), ("drank", y),
                                                  ("skipped", z))]
    path = _write_long(tmp_path / "plain.csv", rows)
    assert run_cli("import", str(path), "--survey", "plain", "--db", url).exit_code == 0

    text = run_cli("joint", "--survey", "plain", "--questions", "smoked,drank", "--db", url)
    assert text.exit_code == 0, text.output
    assert "100 respondents answered both" in " ".join(text.output.split())
    lines = {line.split("  ")[1].strip(): line.split() for line in text.output.splitlines()
             if line.startswith("  ") and "  " in line.strip()}
    assert lines["drank among smoked"][3] == "0.6000"       # 30 of the 50 smokers
    assert lines["smoked and drank"][3] == "0.3000"
    assert "independence: LR =" in text.output

    data = json.loads(run_cli("joint", "--survey", "plain", "--questions",
                              "smoked,drank,skipped", "--db", url,
                              "--format", "json").output)
    assert data["survey"] == "plain" and data["n"] == 100
    assert len(data["pairs"]) == 3
    assert data["pairs"][0]["b_given_a"]["estimate"] == pytest.approx(0.6)
    # a direct question gives everything away: every loss is infinite, and says so
    together = data["privacy"]["together"]
    assert together["epsilon_shafer"] == "inf"
    assert together["epsilon_shafer_finite"] is False
    assert "null" not in json.dumps(data["privacy"])


def test_composed_loss_is_the_sum_of_the_questions_losses(engine, tmp_path):
    survey = _stored(engine, MIXED.read_text(encoding="utf-8"), "mixed.toml")
    frame = _simulate_mixed(survey, 300, seed=3)
    rows = [(r.respondent_id, r.group, q, getattr(r, q)) for r in frame.itertuples()
            for q in ("doping", "tax")]
    import_responses(engine, _write_long(tmp_path / "mixed.csv", rows), "mixed")
    result = joint_for_survey(engine, "mixed", ["tax", "doping"])
    for semantics in ("shafer", "walley"):
        expected = sum(survey.question(q).design.privacy_loss(semantics)
                       for q in ("tax", "doping"))
        assert result.composed[semantics] == pytest.approx(expected, rel=1e-12)
        assert math.isfinite(expected) or result.to_dict()["privacy"]["together"][
            f"epsilon_{semantics}"] == "inf"
    assert result.estimate.questions == ("tax", "doping")


@pytest.fixture(scope="module")
def plain_url(tmp_path_factory) -> str:
    """The direct survey with three respondents, none of whom answered smoked and skipped;
    the refusals below only read it."""
    folder = tmp_path_factory.mktemp("plain")
    url = migrated_sqlite(folder / "plain.db")
    (folder / "plain.toml").write_text(DIRECT, encoding="utf-8")
    assert run_cli("survey", "add", str(folder / "plain.toml"), "--db", url).exit_code == 0
    rows = [("a", None, "smoked", "yes"), ("a", None, "drank", "no"),
            ("b", None, "skipped", "no")]
    assert run_cli("import", str(_write_long(folder / "p.csv", rows)), "--survey", "plain",
                   "--db", url).exit_code == 0
    return url


@pytest.mark.parametrize(("questions", "message"), [
    ("smoked", "name 2 to 4 questions"),
    ("smoked,SMOKED", "is named twice"),
    ("smoked,drnk", "did you mean 'drank'?"),
    ("smoked,skipped", "have no respondent in common"),
])
def test_bad_questions_are_one_line(plain_url, questions, message):
    result = run_cli("joint", "--survey", "plain", "--questions", questions, "--db", plain_url)
    assert result.exit_code in (1, 2)
    assert message in result.output
    assert len(result.output.strip().splitlines()) == 1, result.output
