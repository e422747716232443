"""Declaring a sampling design and reading its values: one-line errors that name the key or
the column, the row and the value; the counts table round-trips."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from surveykit.designs import Warner
from surveykit.errors import ParameterError
from surveykit.sampling import (
    ReplicateWeights,
    SamplingDesign,
    WeightedCounts,
    survey_estimate,
    weighted_counts,
)

DESIGN = Warner(p=0.7)


def one_line(error) -> str:
    message = str(error.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize(("kwargs", "expected"), [
    ({"lonely_psu": "drop"}, "lonely_psu ('drop') must be one of fail, certainty, adjust"),
    ({"clusters": ("a", "b"), "fpc": ("f",)}, "fpc (['f']) must give one column per stage"),
    ({"population": -5}, "population (-5) must be a positive number"),
    ({"weight": ""}, "weight ('') must be a column name"),
    ({"clusters": ("a", "a")}, "clusters (['a', 'a']) names a column twice"),
    ({"strata": "a", "clusters": ("a",)}, "strata ('a') is also a cluster column"),
    ({"nest": "yes"}, "nest ('yes') must be true or false"),
])
def test_bad_declarations_are_refused_naming_the_key(kwargs, expected):
    with pytest.raises(ParameterError) as error:
        SamplingDesign(**kwargs)
    assert expected in one_line(error)


@pytest.mark.parametrize(("kwargs", "expected"), [
    ({"type": "SDR", "pattern": "r*"}, "replicate_type ('SDR') must be one of JK1, JKn, BRR"),
    ({"type": "JK1"}, "give the replicate columns (a list) or one pattern"),
    ({"type": "JK1", "pattern": "r*", "columns": ("r1",)}, "not both and not neither"),
    ({"type": "Fay", "pattern": "r*"}, "replicate_type Fay needs rho"),
    ({"type": "BRR", "pattern": "r*", "rho": 0.5}, "give it with replicate_type Fay only"),
    ({"type": "JKn", "pattern": "r*"}, "replicate_type JKn needs replicate_rscales"),
    ({"type": "JK1", "pattern": "r*", "rscales": [1, -1]}, "replicate_rscales[1] (-1)"),
])
def test_bad_replicate_declarations_are_refused(kwargs, expected):
    with pytest.raises(ParameterError) as error:
        ReplicateWeights(**kwargs)
    assert expected in one_line(error)


def test_the_sampling_section_is_read_and_written_back():
    section = {"weight": "wt", "strata": "region", "clusters": ["village", "household"],
               "fpc": ["n_villages", "n_households"], "lonely_psu": "adjust", "nest": True}
    design = SamplingDesign.from_mapping(section)
    assert design.to_dict() == section
    replicated = SamplingDesign.from_mapping({"weight": "wt", "replicate_weights": "repw*",
                                              "replicate_type": "Fay", "replicate_rho": 0.5})
    assert replicated.replicate_weights.rho == 0.5
    assert SamplingDesign.from_mapping(replicated.to_dict()) == replicated
    with pytest.raises(ParameterError) as error:
        SamplingDesign.from_mapping({"weights": "wt"})
    assert "[sampling] has no key 'weights'" in one_line(error)
    with pytest.raises(ParameterError) as error:
        SamplingDesign.from_mapping({"replicate_type": "JK1"})
    assert "replicate_weights and replicate_type go together" in one_line(error)
    with pytest.raises(ParameterError) as error:
        SamplingDesign.from_mapping({"replicate_rho": 0.5})
    assert "needs replicate_weights and replicate_type" in one_line(error)


def _frame(**changes) -> pd.DataFrame:
    frame = pd.DataFrame({
        "answer": ["yes", "no", "yes", "no", "yes", "no", "yes", "no"],
        "pw": [10.0, 10.0, 12.0, 12.0, 20.0, 20.0, 25.0, 25.0],
        "stratum": ["a", "a", "a", "a", "b", "b", "b", "b"],
        "psu": ["1", "1", "2", "2", "3", "3", "4", "4"],
        "fpc": [10, 10, 10, 10, 8, 8, 8, 8]})
    for column, (row, value) in changes.items():
        frame[column] = frame[column].astype(object)
        frame.loc[row, column] = value
    return frame


SAMPLING = SamplingDesign(weight="pw", strata="stratum", clusters=("psu",), fpc=("fpc",))


@pytest.mark.parametrize(("changes", "expected"), [
    ({"pw": (2, -3.0)}, "column 'pw', row 3: holds -3, which is not positive"),
    ({"pw": (2, 0.0)}, "column 'pw', row 3: holds 0, which is not positive"),
    ({"pw": (4, None)}, "column 'pw', row 5: is empty; every respondent needs a weight"),
    ({"pw": (1, "heavy")}, "column 'pw', row 2: holds 'heavy', not a number"),
    ({"stratum": (0, None)}, "column 'stratum', row 1 is empty"),
    ({"psu": (7, None)}, "column 'psu', row 8 is empty"),
    ({"psu": (4, "1")}, "column 'psu', row 5: cluster '1' is in a second stratum"),
    ({"fpc": (0, 3)}, "column 'fpc', row 2: the fpc (10) differs from row 1's (3)"),
    ({"fpc": (0, "many")}, "column 'fpc', row 1: holds 'many', not a number"),
])
def test_bad_design_values_name_column_row_and_value(changes, expected):
    with pytest.raises(ParameterError) as error:
        weighted_counts(_frame(**changes), SAMPLING, design=DESIGN, answer="answer")
    assert expected in one_line(error)


def test_an_fpc_below_the_psus_sampled_is_refused():
    frame = _frame()
    frame["fpc"] = [1.5] * 4 + [8] * 4
    with pytest.raises(ParameterError) as error:
        weighted_counts(frame, SAMPLING, design=DESIGN, answer="answer")
    assert "stratum stratum = 'a' has a population of 1.5 but 2 sampled PSUs" in one_line(error)
    frame["fpc"] = [0.5] * 4 + [8] * 4
    with pytest.raises(ParameterError) as error:
        weighted_counts(frame, SAMPLING, design=DESIGN, answer="answer")
    assert "mixes sampling fractions (0.5) and population sizes (8)" in one_line(error)


def test_fractions_and_population_sizes_give_the_same_design():
    sizes = weighted_counts(_frame(), SAMPLING, design=DESIGN, answer="answer")
    frame = _frame()
    frame["fpc"] = [0.2] * 4 + [0.25] * 4
    fractions = weighted_counts(frame, SAMPLING, design=DESIGN, answer="answer")
    assert np.array_equal(sizes.population, fractions.population)


def test_nested_cluster_identifiers_with_nest():
    frame = _frame(psu=(4, "1"))
    frame.loc[5, "psu"] = "1"
    nested = SamplingDesign(weight="pw", strata="stratum", clusters=("psu",), nest=True)
    counts = weighted_counts(frame, nested, design=DESIGN, answer="answer")
    assert counts.psu_count == 4


def test_a_lonely_psu_is_refused_only_under_fail():
    frame = _frame()
    frame["psu"] = ["1", "1", "2", "2", "3", "3", "3", "3"]
    with pytest.raises(ParameterError) as error:
        weighted_counts(frame, SAMPLING, design=DESIGN, answer="answer")
    assert "stratum stratum = 'b' has only one PSU" in one_line(error)
    lenient = SamplingDesign(weight="pw", strata="stratum", clusters=("psu",), fpc=("fpc",),
                             lonely_psu="certainty")
    counts = weighted_counts(frame, lenient, design=DESIGN, answer="answer")
    assert counts.psu_count == 3


def test_negative_replicate_weights_are_refused():
    frame = _frame()
    frame["rep1"] = 1.0
    frame["rep2"] = [1.0, -1.0] + [1.0] * 6
    design = SamplingDesign(weight="pw", replicate_weights=ReplicateWeights(
        type="BRR", pattern="rep*"))
    with pytest.raises(ParameterError) as error:
        weighted_counts(frame, design, design=DESIGN, answer="answer")
    assert "column 'rep2', row 2: holds -1, which is not >= 0" in one_line(error)
    design = SamplingDesign(weight="pw", replicate_weights=ReplicateWeights(
        type="BRR", pattern="w*"))
    with pytest.raises(ParameterError) as error:
        weighted_counts(_frame(), design, design=DESIGN, answer="answer")
    assert "replicate_weights ('w*') matches no column" in one_line(error)


def test_empty_answers_keep_their_psu_in_the_design():
    frame = _frame()
    frame.loc[[2, 3], "answer"] = None          # PSU 2 answered nothing
    counts = weighted_counts(frame, SAMPLING, design=DESIGN, answer="answer")
    assert counts.psu_count == 4 and counts.n == 6
    estimate = survey_estimate(DESIGN, counts)
    assert estimate.df == 2


def test_the_counts_table_round_trips():
    frame = _frame()
    frame["region"] = ["x", "y"] * 4
    counts = weighted_counts(frame, SAMPLING, design=DESIGN, answer="answer", domain="region")
    again = WeightedCounts.from_table(counts.to_table(), SAMPLING,
                                      responses=DESIGN.response_labels)
    a, b = survey_estimate(DESIGN, counts), survey_estimate(DESIGN, again)
    assert a.estimate == b.estimate and a.se == pytest.approx(b.se, rel=1e-14)
    assert [d.se for d in a.domains] == pytest.approx([d.se for d in b.domains], rel=1e-14)


@pytest.mark.parametrize(("table", "expected"), [
    ({"response": ["yes"], "n": [1]}, "counts table: column 'weight' is missing"),
    ({"response": ["maybe"], "weight": [2.0], "weight2": [2.0], "n": [2]},
     "response 'maybe' is not an answer of design 'warner'"),
    ({"response": ["yes"], "weight": [-1.0], "weight2": [1.0], "n": [1]},
     "a cell's sum of weights is -1"),
    ({"response": ["yes"], "weight": [1.0], "weight2": [1.0], "n": [1.5]},
     "column 'n' must hold whole numbers"),
    ({"response": ["yes", "no"], "weight": [1.0], "n": [1, 1]},
     "column 'response' has 2 values, not 1"),
    ({"response": ["yes"], "weight": [1.0], "n": [1]}, "need weight2, the sum of squared"),
])
def test_bad_counts_tables_are_refused(table, expected):
    with pytest.raises(ParameterError) as error:
        survey_estimate(DESIGN, WeightedCounts.from_table(table, SamplingDesign()))
    assert expected in one_line(error)


def test_a_clustered_design_needs_its_psus_in_the_table():
    with pytest.raises(ParameterError) as error:
        WeightedCounts.from_table({"response": ["yes"], "weight": [1.0], "n": [1]},
                                  SamplingDesign(clusters=("village",)))
    assert "give the column(s) psu" in one_line(error)
