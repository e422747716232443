"""A design defined in this file only, registered, and run end to end by the real CLI.

The toy design ("forced no"): a respondent answers truthfully with probability
p and "no" otherwise, after the paper's "don't know" branch (probability d).
Among the answers, P(yes) = pi p, so pi_hat = (yes / (yes + no)) / p in closed
form: the oracle for the report's estimate. Nothing outside this file knows the
design: it proves that adding a design touches only its class and
:func:`~surveykit.designs.register_design` (issue 20, item 3). Every command
runs for real (Click's CliRunner, in this process, where the design is
registered) on a real SQLite file; the XLSForm goes through pyxform and ODK
Validate as ODK Central does on upload.
"""

from __future__ import annotations

import csv
import json
import math
from collections import Counter
from dataclasses import dataclass
from typing import ClassVar

import httpx
import numpy as np
import pytest
from click.testing import CliRunner
from field_clients import convert
from openpyxl import load_workbook
from web_support import serving

from surveykit.cli import main
from surveykit.designs import (
    DONT_KNOW,
    NO,
    YES,
    Design,
    Instruction,
    Protocol,
    make_design,
    register_design,
    unregister_design,
)
from surveykit.designs.base import (
    BINARY_STATES,
    DontKnowBranch,
    Structure,
    as_fraction,
    check_dont_know,
    check_probability,
    instructions_with_dont_know,
    matrix_from_instructions,
    readonly,
)
from surveykit.errors import ParameterError
from surveykit.store import open_engine
from surveykit.web.app import create_app

P, D, PI = 0.75, 0.1, 0.3
RESPONDENTS = 600


@dataclass(frozen=True, kw_only=True)
class ForcedNo(DontKnowBranch, Design):
    """Answer truthfully with probability p, else "no" (a toy: it protects only "no")."""

    model: ClassVar[str] = "toy_forced_no"
    summary: ClassVar[str] = "truthful with probability p, else no"

    p: float
    dont_know: float = 0.0

    def __post_init__(self) -> None:
        p = check_probability("p", self.p)
        if p == 0:
            raise ParameterError("p (0) must be above 0: with p = 0 everybody answers no")
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "dont_know", float(check_dont_know(self.dont_know)))

    def parameters(self) -> dict[str, object]:
        return {"p": self.p, "dont_know": self.dont_know}

    def _build(self) -> Structure:
        p = as_fraction(self.p)
        instructions = instructions_with_dont_know(
            [Instruction("truthful", p), Instruction("say", 1 - p, say=NO)],
            self.designed_dont_know)
        responses = (YES, NO, DONT_KNOW)
        matrix = matrix_from_instructions(instructions, BINARY_STATES, responses)
        return Structure(
            states=BINARY_STATES, categories=BINARY_STATES, responses=responses,
            groups=("1",), base=readonly(matrix[None]),
            slopes=readonly(np.zeros((0, 1, 3, 2))), nuisance=(),
            protocol=Protocol("instructions", (instructions,)),
            privacy_states=BINARY_STATES, state_parameters={})


SURVEY = f"""name = "toy"
title = "A survey with a design from a test file"

[design]
model = "toy-no"
p = {P}
dont_know = {D}

[[questions]]
id = "fare_dodging"
text = "Have you ever travelled without a ticket?"
"""


@pytest.fixture
def toy():
    register_design(ForcedNo, aliases=["toy_no"], example={"p": "0.75"})
    yield ForcedNo
    unregister_design("toy_forced_no")


def run(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, (args, result.output, result.exception)
    return result.output


def test_registered_toy_design_runs_through_add_generate_export_import_and_report(
        toy, tmp_path):
    db = f"sqlite:///{tmp_path / 'toy.db'}"
    survey = tmp_path / "toy.toml"
    survey.write_text(SURVEY, encoding="utf-8")
    run("init", "--db", db)
    run("survey", "add", str(survey), "--db", db)

    # generate: slips drawn from the toy's protocol; the key file (audits only) says which
    key = tmp_path / "key.csv"
    run("generate", "--survey", "toy", "--respondents", str(RESPONDENTS), "--out",
        str(tmp_path / "forms"), "--key-file", str(key), "--seed", "20", "--db", db)
    with key.open(encoding="utf-8", newline="") as stream:
        drawn = list(csv.DictReader(stream))
    codes = Counter(row["code"] for row in drawn)
    assert set(codes) == {"truthful", "say:no", "dont_know"}
    expected = {"truthful": P * (1 - D), "say:no": (1 - P) * (1 - D), "dont_know": D}
    for code, share in expected.items():  # within 4 standard errors of the protocol's shares
        sd = math.sqrt(RESPONDENTS * share * (1 - share))
        assert abs(codes[code] - RESPONDENTS * share) < 4 * sd, (code, codes)
    slips = "".join(path.read_text(encoding="utf-8")
                    for path in (tmp_path / "forms").rglob("*.html"))
    assert "Have you ever travelled without a ticket?" in slips

    # export: a self-randomized XLSForm (a die table realizes 27/40, 9/40, 4/40) that
    # pyxform converts and ODK Validate accepts
    xlsx = tmp_path / "toy.xlsx"
    run("export", "xlsform", "--survey", "toy", "--out", str(xlsx), "--db", db)
    rows = list(load_workbook(xlsx)["survey"].iter_rows(values_only=True))
    assert any(row[1] == "fare_dodging" for row in rows[1:])
    convert(xlsx, tmp_path / "toy.xml")

    # import: each issued respondent answers as their slip says, from a seeded true state
    rng = np.random.default_rng(20)
    answers = tmp_path / "answers.csv"
    with answers.open("w", encoding="utf-8", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(["respondent_id", "question_id", "answer"])
        for row in drawn:
            state = YES if rng.random() < PI else NO
            instruction = {"truthful": Instruction("truthful", as_fraction(1)),
                           "say:no": Instruction("say", as_fraction(1), say=NO),
                           "dont_know": Instruction("dont_know", as_fraction(1))}[row["code"]]
            writer.writerow([row["respondent_id"], row["question_id"],
                             instruction.response(state)])
    run("import", str(answers), "--survey", "toy", "--db", db)

    # report: the estimate is the closed form on the imported counts
    report = json.loads(run("report", "--survey", "toy", "--format", "json", "--db", db))
    (question,) = report["questions"]
    yes, no, dont_know = question["yes"], question["no"], question["dont_know"]
    assert yes + no + dont_know == RESPONDENTS
    assert dont_know == codes["dont_know"]
    pi_hat = yes / (yes + no) / P
    assert question["pi_hat"] == pytest.approx(pi_hat, abs=1e-9)
    assert abs(pi_hat - PI) < 4 * math.sqrt(PI * (1 - PI) / (yes + no) / P)
    assert "toy_forced_no" in run("report", "--survey", "toy", "--db", db)

    # the same counts typed into `estimate`, by the design's alias
    typed = json.loads(run("estimate", "--design", "toy_no", "--param", f"p={P}",
                           "--dont-know", str(D), "--counts",
                           f"yes={yes},no={no},dont_know={dont_know}", "--format", "json"))
    assert typed["pi_hat"] == pytest.approx(pi_hat, abs=1e-9)


def test_the_web_page_draws_the_toy_designs_instructions_with_their_probabilities(
        toy, tmp_path):
    """The survey page's browser draw: uniform 53-bit integers below each rule's threshold,
    cumulative in the protocol's order (truthful 27/40, "no" 9/40, "don't know" 4/40)."""
    db = f"sqlite:///{tmp_path / 'toy.db'}"
    survey = tmp_path / "toy.toml"
    survey.write_text(SURVEY, encoding="utf-8")
    run("init", "--db", db)
    run("survey", "add", str(survey), "--db", db)
    engine = open_engine(db)
    try:
        with serving(create_app(engine, "toy")) as url, \
                httpx.Client(base_url=url, timeout=30) as client:
            page = client.get("/survey.json").json()
    finally:
        engine.dispose()
    (question,) = page["questions"]
    assert question["id"] == "fare_dodging"
    (rules,) = question["rules"]
    assert [rule["lines"] for rule in rules] == [
        ["Answer truthfully."], ['Answer "No", whatever the truth is.'],
        ["Answer \"don't know\", whatever the truth is."]]
    cumulative = [P * (1 - D), (1 - D), 1.0]
    assert [rule["below"] / 2**53 for rule in rules] == pytest.approx(cumulative, abs=2**-52)


def test_toy_design_is_a_preset_only_while_registered(toy):
    assert make_design("toy_no", p=P).matrix()[0].tolist() == [[P, 0.0], [1 - P, 1.0],
                                                               [0.0, 0.0]]
    unregister_design("toy_forced_no")
    with pytest.raises(ParameterError, match="unknown design 'toy_no'"):
        make_design("toy_no", p=P)
    register_design(ForcedNo, aliases=["toy_no"], example={"p": "0.75"})


def test_a_name_in_use_is_refused(toy):
    @dataclass(frozen=True, kw_only=True)
    class Other(ForcedNo):
        model: ClassVar[str] = "warner"

    with pytest.raises(ParameterError, match="design name 'warner' is taken"):
        register_design(Other)
