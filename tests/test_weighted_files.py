"""Weighted counts of files where they lie (issue 21 item 5): ``counts --data`` on a survey with
``[sampling]`` is one GROUP BY over the CSV or Parquet files
(:mod:`surveykit.counting.weighted_files`), and its table equals the one the store makes from
the same file imported (:func:`surveykit.store.design_values.weighted_cells`: what ``counts
--data`` made before, through a scratch import) for survey's api samples under several designs
(strata and fpc; one stage of clusters; two stages whose weights come from the fpc; strata with
nested clusters and an fpc), wide, long and Parquet files, and a numeric question.

Cells, keys, groups, responses and respondents are compared exactly; the sums of weights to
1e-12 (an engine adds the same doubles in another order). A file the fast path cannot vouch
for (a bad weight, a PSU in two strata, a lonely PSU, an fpc that changes within a stratum)
gets None from it, and ``counts --data`` says what the import says, with file and line.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from sampling_support import REFERENCE, sample
from store_support import run_cli

from surveykit.counting.sources import expand_paths
from surveykit.counting.weighted_files import weighted_file_cells
from surveykit.sampling.counts import design_keys
from surveykit.store import database as store
from surveykit.store import engine_for
from surveykit.store.design_values import weighted_cells

QUESTIONS = {
    "awards": ('{ model = "direct" }', "awards_yes"),
    "warner": ('{ model = "warner", p = 0.7 }', "answer_warner"),
    "gw": ('{ model = "generalized_warner", p = 0.6, q = 0.2 }', "answer_gw"),
}
NUMERIC = '''
[[questions]]
id = "score"
text = "What was the school's API score in 2000, divided by 100?"
type = "number"
range = [0, 10]
decimals = 2
[questions.design]
model = "eriksson"
p = 0.6
scrambler = [0, 1, 3, 5, 8]
dont_know = 0.1
'''
#: name -> (api sample, [sampling] section, the design columns the file carries)
DESIGNS = {
    "strata_fpc": ("apistrat", 'weight = "pw"\nstrata = "stype"\nfpc = "fpc"\n',
                   ("pw", "stype", "fpc")),
    "clusters_fpc": ("apiclus1", 'weight = "pw"\nclusters = ["dnum"]\nfpc = "fpc"\n',
                     ("pw", "dnum", "fpc", "stype")),
    "two_stages": ("apiclus2", 'clusters = ["dnum", "snum"]\nfpc = ["fpc1", "fpc2"]\n',
                   ("dnum", "snum", "fpc1", "fpc2")),
    "strata_clusters_fpc": ("apistrat", 'weight = "pw"\nstrata = "stype"\nclusters = ["dnum"]'
                                        '\nfpc = "fpc"\nnest = true\nlonely_psu = "certainty"\n',
                            ("pw", "stype", "dnum", "fpc")),
}


def survey_text(design: str) -> str:
    questions = "".join(f'\n[[questions]]\nid = "{q}"\ntext = "Award ({q})?"\ndesign = {d}\n'
                        for q, (d, _) in QUESTIONS.items())
    covariates = '\n[covariates]\nstype = "category"\n' if "stype" in DESIGNS[design][2] \
        and "strata" not in DESIGNS[design][1] else ""
    return (f'name = "api"\ntitle = "Awards"\n{questions}{NUMERIC}{covariates}\n[sampling]\n'
            + DESIGNS[design][1])


def answers(design: str) -> pd.DataFrame:
    """The api sample as a wide file, one row per school; some answers left empty."""
    name, _, columns = DESIGNS[design]
    data = sample(name)
    numeric = pd.read_csv(REFERENCE / f"numeric_answers_{name}.csv", dtype={"answer": str})
    assert numeric["pw"].tolist() == pytest.approx(data["pw"].tolist())  # the same schools
    out = pd.DataFrame({"respondent_id": "s" + data["snum"].astype(str)})
    for question, (_, column) in QUESTIONS.items():
        out[question] = data[column].map({"1": "yes", "0": "no"}).fillna(data[column])
    out["score"] = numeric["answer"]
    out.loc[out.index % 7 == 3, "warner"] = ""       # respondents without an answer keep
    out.loc[out.index % 11 == 5, "score"] = ""       # their PSU
    for column in columns:
        out[column] = data[column]
    return out


def long_file(frame: pd.DataFrame, columns) -> pd.DataFrame:
    """The same answers in the long layout (design values repeated on every row)."""
    rows = frame.melt(id_vars=["respondent_id", *columns],
                      value_vars=[*QUESTIONS, "score"], var_name="question_id",
                      value_name="answer")
    return rows[rows["answer"].fillna("") != ""]


def setup(tmp_path: Path, design: str, layout: str = "csv") -> tuple[str, Path]:
    """A database with the survey (nothing imported) and the answers file."""
    url = f"sqlite:///{tmp_path / 'api.db'}"
    survey_file = tmp_path / "api.toml"
    survey_file.write_text(survey_text(design), encoding="utf-8")
    frame = answers(design)
    if layout == "parquet":
        path = tmp_path / "answers.parquet"
        frame.astype(str).replace("nan", "").to_parquet(path, index=False)
    elif layout == "long":
        path = tmp_path / "answers.csv"
        long_file(frame, DESIGNS[design][2]).to_csv(path, index=False)
    else:
        path = tmp_path / "answers.csv"
        frame.to_csv(path, index=False)
    assert run_cli("init", "--db", url).exit_code == 0
    result = run_cli("survey", "add", str(survey_file), "--db", url)
    assert result.exit_code == 0, result.output
    return url, path


def fast_cells(url: str, path: Path) -> pd.DataFrame | None:
    with engine_for(url) as engine:
        survey = store.load_survey(engine, "api")
    return weighted_file_cells(survey, expand_paths([path]))


def stored_cells(url: str, path: Path) -> pd.DataFrame:
    result = run_cli("import", str(path), "--survey", "api", "--db", url)
    assert result.exit_code == 0, result.output
    with engine_for(url) as engine:
        return weighted_cells(engine, "api")[1]


def assert_same_cells(got: pd.DataFrame, expected: pd.DataFrame, keys) -> None:
    def rows(table):
        out = {}
        for record in table.to_dict("records"):
            key = (record["question"], *(float(record[k]) if k.startswith("fpc")
                                          else str(record[k]) for k in keys),
                   None if pd.isna(record["group"]) else int(record["group"]),
                   None if pd.isna(record["response"]) else str(record["response"]))
            assert key not in out, key
            out[key] = record
        return out

    got_rows, expected_rows = rows(got), rows(expected)
    assert sorted(got_rows, key=repr) == sorted(expected_rows, key=repr)
    for key, record in expected_rows.items():
        mine = got_rows[key]
        assert mine["n"] == record["n"], key
        for column in ("weight", "weight2"):
            if column in record:
                assert mine[column] == pytest.approx(record[column], rel=1e-12), (key, column)


@pytest.mark.parametrize("design", sorted(DESIGNS))
def test_one_group_by_over_the_file_equals_the_imported_cells(tmp_path, design):
    url, path = setup(tmp_path, design)
    fast = fast_cells(url, path)
    assert fast is not None  # the file is valid: no import, no row-by-row reading
    expected = stored_cells(url, path)
    with engine_for(url) as engine:
        keys = design_keys(store.load_survey(engine, "api").sampling)
    assert list(fast.columns) == list(expected.columns)
    assert_same_cells(fast, expected, keys)
    assert set(fast["question"]) == {*QUESTIONS, "score"}


@pytest.mark.parametrize("layout", ["parquet", "long"])
def test_parquet_and_long_files_give_the_same_cells(tmp_path, layout):
    url, path = setup(tmp_path, "strata_clusters_fpc", layout)
    fast = fast_cells(url, path)
    assert fast is not None
    expected = stored_cells(url, path)
    assert_same_cells(fast, expected, ["stratum", "psu", "fpc"])


def test_counts_data_writes_the_weighted_table_of_the_store(tmp_path):
    """The CLI: counts --data (nothing imported) and counts after import print the same
    table."""
    url, path = setup(tmp_path, "strata_fpc")
    counted = run_cli("counts", "--survey", "api", "--data", str(path), "--format", "csv",
                      "--db", url)
    assert counted.exit_code == 0, counted.output
    assert run_cli("import", str(path), "--survey", "api", "--db", url).exit_code == 0
    stored = run_cli("counts", "--survey", "api", "--format", "csv", "--db", url)
    from io import StringIO

    got, expected = (pd.read_csv(StringIO(text), dtype={"response": str},
                                 keep_default_na=False, na_values=[""])
                     for text in (counted.output, stored.output))
    assert list(got.columns) == list(expected.columns)
    assert_same_cells(got, expected, ["stratum", "fpc"])


#: name -> (design, how to break the file, words of the import's message)
BAD = {
    "negative weight": ("strata_fpc", lambda f: f.assign(pw=f["pw"].where(f.index != 6, -3.5)),
                        ["column 'pw', line 8", "-3.5"]),
    "weight not a number": ("strata_fpc",
                            lambda f: f.assign(pw=f["pw"].astype(object).where(
                                f.index != 9, "heavy")), ["line 11", "heavy"]),
    "empty stratum": ("strata_fpc", lambda f: f.assign(stype=f["stype"].where(f.index != 4, "")),
                      ["column 'stype', line 6"]),
    "psu in two strata": ("strata_clusters_fpc",
                          lambda f: f.assign(dnum=f["dnum"].where(f.index != 0, 0)).pipe(
                              lambda g: g.assign(dnum=g["dnum"].where(g.index != 199, 0))),
                          ["in a second stratum"]),
    "fpc changes within a stratum": ("strata_fpc",
                                     lambda f: f.assign(fpc=f["fpc"].where(f.index != 12, 99)),
                                     ["column 'fpc', line 16", "line 14", "(99)", "differs"]),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_design_value_is_the_imports_one_line_error(tmp_path, case):
    design, breaks, words = BAD[case]
    if case == "psu in two strata":  # without nest, a PSU lies in one stratum
        DESIGNS_WITHOUT_NEST = DESIGNS[design][1].replace("nest = true\n", "")
        url, path = setup(tmp_path, design)
        (tmp_path / "api.toml").write_text(survey_text(design).replace(
            DESIGNS[design][1], DESIGNS_WITHOUT_NEST), encoding="utf-8")
        url = f"sqlite:///{tmp_path / 'other.db'}"
        assert run_cli("init", "--db", url).exit_code == 0
        assert run_cli("survey", "add", str(tmp_path / "api.toml"), "--db", url).exit_code == 0
    else:
        url, path = setup(tmp_path, design)
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    breaks(frame).to_csv(path, index=False)
    assert fast_cells(url, path) is None
    result = run_cli("counts", "--survey", "api", "--data", str(path), "--format", "csv",
                     "--db", url)
    message = result.output.strip()
    assert result.exit_code != 0, result.output
    if case == "weight not a number":  # a cell import refuses: its list of bad rows
        assert message.startswith(f"Error: 1 bad row in {path}")
        assert "line 11, column pw, value 'heavy': not a number" in message
        return
    assert "\n" not in message, result.output
    assert message.startswith(f"Error: {path}") and message.endswith("nothing was imported")
    for word in words:
        assert word in message, message


def test_a_sampled_survey_whose_respondents_skip_a_question_reports(tmp_path):
    """Regression: the store's cells read an unanswered cell's response as NaN under pandas 3
    (a column of texts), and report and counts refused every survey where a respondent left a
    question empty ("group NULL is not a group")."""
    url, path = setup(tmp_path, "strata_fpc")
    assert run_cli("import", str(path), "--survey", "api", "--db", url).exit_code == 0
    result = run_cli("report", "--survey", "api", "--db", url, "--format", "json")
    assert result.exit_code == 0, result.output
    made = run_cli("counts", "--survey", "api", "--db", url, "--format", "csv").output
    skipped = [line for line in made.splitlines() if line.startswith("api,warner,")
               and line.split(",")[5] == ""]
    assert sum(int(line.split(",")[7]) for line in skipped) == len(range(3, 200, 7))


def test_dask_on_a_local_cluster_gives_duckdbs_cells(tmp_path):
    """--engine dask on a sampled survey: the same cells as DuckDB's query, computed by the
    workers of a real cluster, for a CSV and a Parquet file counted together."""
    distributed = pytest.importorskip("distributed")
    url, path = setup(tmp_path, "strata_clusters_fpc")
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    first, second = tmp_path / "first.csv", tmp_path / "second.parquet"
    frame.iloc[:120].to_csv(first, index=False)
    frame.iloc[120:].to_parquet(second, index=False)
    with engine_for(url) as engine:
        survey = store.load_survey(engine, "api")
    paths = expand_paths([first, second])
    duckdb_cells = weighted_file_cells(survey, paths)
    assert duckdb_cells is not None
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        dask_cells = weighted_file_cells(survey, paths, engine="dask",
                                         scheduler=cluster.scheduler_address)
        counted = run_cli("counts", "--survey", "api", "--data", str(first), str(second),
                          "--engine", "dask", "--scheduler", cluster.scheduler_address,
                          "--format", "csv", "--db", url)
    assert dask_cells is not None
    assert_same_cells(dask_cells, duckdb_cells, ["stratum", "psu", "fpc"])
    assert counted.exit_code == 0, counted.output
    from io import StringIO

    printed = pd.read_csv(StringIO(counted.output), dtype={"response": str, "psu": str},
                          keep_default_na=False, na_values=[""])
    assert_same_cells(printed, duckdb_cells, ["stratum", "psu", "fpc"])
    # the whole file imported: the store's cells
    assert_same_cells(dask_cells, stored_cells(url, path), ["stratum", "psu", "fpc"])
