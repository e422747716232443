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

import atexit
import functools
import json
import shutil
import tempfile
from pathlib import Path

import pandas as pd
import pytest
from dask_support import local_cluster
from migrated import migrated_sqlite
from sampling_support import REFERENCE, reference, sample
from store_support import run_cli

from surveykit.counting.sources import expand_paths
from surveykit.counting.weighted_files import weighted_file_cells
from surveykit.sampling.counts import design_keys
from surveykit.store import database as store
from surveykit.store import engine_for
from surveykit.store.design_values import weighted_cells
from tests.numeric_support import api_score_question

QUESTIONS = {
    "awards": ('{ model = "direct" }', "awards_yes"),
    "warner": ('{ model = "warner", p = 0.7 }', "answer_warner"),
    "gw": ('{ model = "generalized_warner", p = 0.6, q = 0.2 }', "answer_gw"),
}
NUMERIC = "\n" + api_score_question()
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


@pytest.fixture(scope="module")
def dask_cluster():
    """One real LocalCluster for this module's Dask tests (started once: tests/dask_support.py)."""
    with local_cluster() as cluster:
        yield cluster


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


def _scratch() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="surveykit-weighted-files-"))
    atexit.register(shutil.rmtree, folder, True)
    return folder


@functools.cache
def _built(design: str, layout: str, imported: bool) -> tuple[Path, Path]:
    """A database with the survey (and, if ``imported``, the answers file imported by the
    CLI) and the answers file, made once per process: tests get copies (see setup)."""
    folder = _scratch()
    url = migrated_sqlite(folder / "api.db")
    survey_file = folder / "api.toml"
    survey_file.write_text(survey_text(design), encoding="utf-8")
    frame = answers(design)
    if layout == "parquet":
        path = folder / "answers.parquet"
        frame.astype(str).replace("nan", "").to_parquet(path, index=False)
    elif layout == "long":
        path = folder / "answers.csv"
        long_file(frame, DESIGNS[design][2]).to_csv(path, index=False)
    else:
        path = folder / "answers.csv"
        frame.to_csv(path, index=False)
    result = run_cli("survey", "add", str(survey_file), "--db", url)
    assert result.exit_code == 0, result.output
    if imported:
        result = run_cli("import", str(path), "--survey", "api", "--db", url)
        assert result.exit_code == 0, result.output
    return folder / "api.db", path


def setup(tmp_path: Path, design: str, layout: str = "csv", *, imported: bool = False
          ) -> tuple[str, Path]:
    """A database with the survey (nothing imported, or with ``imported`` the answers file
    imported) and the answers file, in tmp_path: copies of the ones _built makes once."""
    database, answers_file = _built(design, layout, imported)
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "api.toml").write_text(survey_text(design), encoding="utf-8")
    shutil.copyfile(database, tmp_path / "api.db")
    path = tmp_path / answers_file.name
    shutil.copyfile(answers_file, path)
    return f"sqlite:///{tmp_path / 'api.db'}", path


def fast_cells(url: str, path: Path) -> pd.DataFrame | None:
    with engine_for(url) as engine:
        survey = store.load_survey(engine, "api")
    return weighted_file_cells(survey, expand_paths([path]))


def stored_cells(url: str, path: Path) -> pd.DataFrame:
    result = run_cli("import", str(path), "--survey", "api", "--db", url)
    assert result.exit_code == 0, result.output
    with engine_for(url) as engine:
        return weighted_cells(engine, "api")[1]


def imported_cells(tmp_path: Path, design: str) -> pd.DataFrame:
    """The store's cells of the design's wide file imported by the CLI (made once)."""
    url, _ = setup(tmp_path / "imported", design, imported=True)
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
    expected = imported_cells(tmp_path, design)
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
    url, _ = setup(tmp_path / "imported", "strata_fpc", imported=True)
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
        url = migrated_sqlite(tmp_path / "other.db")
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


def test_a_design_value_that_differs_between_a_respondents_rows_is_left_to_the_import(
        tmp_path):
    """A long file repeats the design values on each of a respondent's rows: values that
    agree once trimmed (as import trims) stay on the GROUP BY path; a weight that differs on
    one row sends the files to the import, which lists the rows that disagree."""
    url, path = setup(tmp_path, "strata_clusters_fpc", "long")
    rows = pd.read_csv(path, dtype=str, keep_default_na=False)
    mine = rows.index[rows["respondent_id"] == rows["respondent_id"].iloc[0]]
    assert len(mine) > 1
    weight = rows.loc[mine[0], "pw"]
    rows.loc[mine[-1], "pw"] = f" {weight}\t"
    rows.to_csv(path, index=False)
    assert fast_cells(url, path) is not None
    rows.loc[mine[-1], "pw"] = repr(float(weight) + 1)
    rows.to_csv(path, index=False)
    assert fast_cells(url, path) is None
    result = run_cli("counts", "--survey", "api", "--data", str(path), "--format", "csv",
                     "--db", url)
    assert result.exit_code != 0, result.output   # the import's list of the bad rows
    assert result.output.startswith(f"Error: 4 bad rows in {path}")
    assert f"column pw, value {repr(float(weight) + 1)!r}: this respondent's pw differs " \
           "between rows of this file" in result.output

def test_a_sampled_survey_whose_respondents_skip_a_question_reports(tmp_path):
    """Regression: the store's cells read an unanswered cell's response as NaN under pandas 3
    (a column of texts), and report and counts refused every survey where a respondent left a
    question empty ("group NULL is not a group")."""
    url, path = setup(tmp_path, "strata_fpc", imported=True)  # imported by the CLI
    result = run_cli("report", "--survey", "api", "--db", url, "--format", "json")
    assert result.exit_code == 0, result.output
    made = run_cli("counts", "--survey", "api", "--db", url, "--format", "csv").output
    skipped = [line for line in made.splitlines() if line.startswith("api,warner,")
               and line.split(",")[5] == ""]
    assert sum(int(line.split(",")[7]) for line in skipped) == len(range(3, 200, 7))


def test_dask_on_a_local_cluster_gives_duckdbs_cells(tmp_path, dask_cluster):
    """--engine dask on a sampled survey: the same cells as DuckDB's query, computed by the
    workers of a real cluster, for a CSV and a Parquet file counted together."""
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
    dask_cells = weighted_file_cells(survey, paths, engine="dask",
                                     scheduler=dask_cluster.scheduler_address)
    counted = run_cli("counts", "--survey", "api", "--data", str(first), str(second),
                      "--engine", "dask", "--scheduler", dask_cluster.scheduler_address,
                      "--format", "csv", "--db", url)
    assert dask_cells is not None
    assert_same_cells(dask_cells, duckdb_cells, ["stratum", "psu", "fpc"])
    assert counted.exit_code == 0, counted.output
    from io import StringIO

    printed = pd.read_csv(StringIO(counted.output), dtype={"response": str, "psu": str},
                          keep_default_na=False, na_values=[""])
    assert_same_cells(printed, duckdb_cells, ["stratum", "psu", "fpc"])
    # the whole file imported: the store's cells
    assert_same_cells(dask_cells, imported_cells(tmp_path, "strata_clusters_fpc"),
                      ["stratum", "psu", "fpc"])


# -- the producer's replicate weights in a counts file (issue 21 item 5) -----------------------

@functools.cache
def _producer_database(kind: str) -> Path:
    """A database with the producer's survey of ``kind`` added, made once per process."""
    from test_producer_replicates import survey_text as producer_survey

    folder = _scratch()
    url = migrated_sqlite(folder / "public.db")
    survey_file = folder / "public_use.toml"
    survey_file.write_text(producer_survey(kind), encoding="utf-8")
    result = run_cli("survey", "add", str(survey_file), "--db", url)
    assert result.exit_code == 0, result.output
    return folder / "public.db"


def _producer(tmp_path: Path, kind: str, frame: pd.DataFrame | None = None
              ) -> tuple[str, Path]:
    """A copy of the database with the producer's survey (nothing imported) and the
    producer's file (or ``frame``) as a CSV file in tmp_path."""
    from test_producer_replicates import producer_file

    shutil.copyfile(_producer_database(kind), tmp_path / "public.db")
    path = tmp_path / f"public_use_{kind}.csv"
    (producer_file(kind) if frame is None else frame).to_csv(path, index=False)
    return f"sqlite:///{tmp_path / 'public.db'}", path


@functools.cache
def _producer_counts(kind: str) -> str:
    """What ``counts --data`` prints for the producer's file of ``kind`` (run once per
    process: the BRR table is also the plain file of the test of the scratch import)."""
    folder = _scratch()
    url, path = _producer(folder, kind)
    made = run_cli("counts", "--survey", "public_use", "--data", str(path), "--format", "csv",
                   "--db", url)
    assert made.exit_code == 0, made.output
    return made.output


#: survey's degf of the producer's files (R's svrepdesign: the rank of the weights - 1)
PRODUCER_DEGF = {kind: result["degf"] for kind, result in
                 reference("producer_replicates")["results"].items()}


def _replicate_report(url: str, *options: str) -> dict:
    import json

    result = run_cli("report", "--survey", "public_use", "--db", url, "--format", "json",
                     "--variance", "replicates", *options)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def _same_estimates(got: dict, expected: dict) -> None:
    for mine, theirs in zip(got["questions"], expected["questions"], strict=True):
        assert mine["id"] == theirs["id"] and mine["counts"] == theirs["counts"]
        assert mine["variance_method"] == theirs["variance_method"]
        assert mine["df"] == theirs["df"]
        for key in ("estimate", "se", "ci_low", "ci_high", "total", "total_se", "deff"):
            assert mine[key] == pytest.approx(theirs[key], rel=1e-9), (mine["id"], key)


@pytest.mark.parametrize("kind", ["BRR", "Fay"])
def test_a_counts_file_with_replicate_sums_reports_the_stored_replicate_variance(
        tmp_path, kind):
    """counts --data writes the sums of each replicate weight per cell (rep1 ... rep104) and
    their degrees of freedom; report --counts-file --variance replicates equals the report
    from the stored answers of the same file to 1e-9, and R's svrepdesign to 1e-6."""
    from test_producer_replicates import check_against_r

    url, path = _producer(tmp_path, kind)
    made = _producer_counts(kind)  # counts --data of the file at path
    header = made.splitlines()[0].split(",")
    assert header[-106:] == ["weight2", *(f"rep{j}" for j in range(1, 105)), "replicate_df"]
    counts_file = tmp_path / "weighted.csv"
    counts_file.write_text(made, encoding="utf-8")
    from_file = _replicate_report(url, "--counts-file", str(counts_file))
    check_against_r(from_file, kind)  # df: survey's degf, the rank of the weights - 1
    assert run_cli("import", str(path), "--survey", "public_use", "--db", url).exit_code == 0
    _same_estimates(from_file, _replicate_report(url))
    degf = PRODUCER_DEGF[kind]
    assert from_file["sampling"]["df"] == degf and from_file["questions"][0]["df"] == degf
    text = run_cli("report", "--counts-file", str(counts_file), "--db", url,
                   "--variance", "replicates").output
    assert f"variance replicates ({kind}), {degf} degrees of freedom" in text


def test_replicate_sums_of_files_the_group_by_cannot_vouch_for_come_from_the_import(
        tmp_path):
    """A weight in Arabic-Indic digits: the import reads it (Python's float does), the
    GROUP BY's plain-digit check does not, so the files go through the scratch import; the
    counts file still carries the replicate sums and degrees of freedom, and reports alike."""
    from test_producer_replicates import producer_file

    frame = producer_file("BRR")
    digits = str.maketrans("0123456789", "\u0660\u0661\u0662\u0663\u0664\u0665\u0666\u0667"
                                         "\u0668\u0669")
    odd = frame.astype({"pw": object})
    odd.loc[3, "pw"] = repr(float(frame.loc[3, "pw"])).translate(digits)
    url, path = _producer(tmp_path, "BRR", odd)
    with engine_for(url) as engine:
        survey = store.load_survey(engine, "public_use")
    assert weighted_file_cells(survey, expand_paths([path])) is None
    plain = tmp_path / "plain.csv"
    frame.to_csv(plain, index=False)
    assert weighted_file_cells(survey, expand_paths([plain])) is not None
    made = run_cli("counts", "--survey", "public_use", "--data", str(path), "--format",
                   "csv", "--db", url)
    assert made.exit_code == 0, made.output
    # the plain file's table by the GROUP BY: counts --data of the same file (made once)
    files = {"odd": tmp_path / "odd_weighted.csv", "plain": tmp_path / "plain_weighted.csv"}
    files["odd"].write_text(made.output, encoding="utf-8")
    files["plain"].write_text(_producer_counts("BRR"), encoding="utf-8")
    from io import StringIO

    odd_table, plain_table = (pd.read_csv(StringIO(f.read_text()), keep_default_na=False,
                                          na_values=[""]) for f in files.values())
    assert list(odd_table.columns) == list(plain_table.columns)
    assert (odd_table["replicate_df"] == 100).all() and (plain_table["replicate_df"] == 100).all()
    _same_estimates(_replicate_report(url, "--counts-file", str(files["odd"])),
                    _replicate_report(url, "--counts-file", str(files["plain"])))


def test_replicate_columns_in_kobo_group_paths_are_matched_by_the_pattern(tmp_path):
    """A KoboToolbox export writes group paths in its headers ("design/repw1"): the pattern
    "repw*" matches the path's end as the import matches every other column, so the import
    and counts --data read the 104 replicate columns, and both reports equal R's."""
    from test_producer_replicates import check_against_r, producer_file

    frame = producer_file("BRR")
    paths = {column: ("design/" if column == "pw" or column.startswith("repw") else "data/")
             + column for column in frame.columns}
    kobo = pd.concat([pd.DataFrame({"start": "2026-11-01T09:00:00", "_id": range(len(frame))}),
                      frame.rename(columns=paths),
                      pd.DataFrame({"_uuid": [f"uuid-{i}" for i in range(len(frame))],
                                    "_submission_time": "2026-11-02T10:00:00"})], axis=1)
    url, path = _producer(tmp_path, "BRR", kobo)
    made = run_cli("counts", "--survey", "public_use", "--data", str(path), "--format", "csv",
                   "--db", url)
    assert made.exit_code == 0, made.output
    assert "rep104,replicate_df" in made.output.splitlines()[0]
    counts_file = tmp_path / "weighted.csv"
    counts_file.write_text(made.output, encoding="utf-8")
    check_against_r(_replicate_report(url, "--counts-file", str(counts_file)), "BRR")
    imported = run_cli("import", str(path), "--survey", "public_use", "--db", url)
    assert imported.exit_code == 0, imported.output
    check_against_r(_replicate_report(url), "BRR")
    import sqlite3

    with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
        names = {name for (name,) in conn.execute("SELECT DISTINCT name FROM covariates")}
    assert names == {"pw", *(f"repw{j}" for j in range(1, 105))}


def test_the_rank_of_the_replicate_weights_from_their_gram_matrix_is_rs_degf():
    """gram_rank is R's qr(W, tol = 1e-5)$rank from W'W (what a GROUP BY sums): survey's degf
    for the producer files (rank-deficient: 104 replicates, degf 100, from R 4.2.2 / survey
    4.1.1, tests/reference/survey_api/producer_replicates.json), and n - 1 for JK1 weights of
    n PSUs (the closed form: each replicate drops one PSU, n independent columns)."""
    import numpy as np

    from surveykit.sampling.counts import gram_rank

    for kind, degf in PRODUCER_DEGF.items():
        data = pd.read_csv(REFERENCE / reference("producer_replicates")["results"][kind]["file"])
        weights = data[[c for c in data.columns if c.startswith("repw")]].to_numpy()
        assert gram_rank(weights.T @ weights) - 1 == degf
    rng = np.random.default_rng(7)
    for n in (2, 5, 40):
        psu = np.repeat(np.arange(n), 3)
        weight = rng.uniform(1, 50, psu.size)
        jk1 = np.where(psu[:, None] == np.arange(n)[None, :], 0.0, n / (n - 1)) * weight[:, None]
        assert gram_rank(jk1.T @ jk1) - 1 == n - 1
        doubled = np.concatenate([jk1, jk1[:, :1] + jk1[:, 1:2]], axis=1)  # one dependent
        assert gram_rank(doubled.T @ doubled) - 1 == n - 1


# -- the documented warehouse GROUP BY (docs/complex-samples.md) --------------------------------

WAREHOUSE_SURVEY = '''name = "api_rep"
title = "Awards, with the producer's replicate weights"

[[questions]]
id = "awards"
text = "Did the school get an award?"
design = { model = "direct" }

[[questions]]
id = "warner"
text = "Did the school get an award (Warner)?"
design = { model = "warner", p = 0.7 }

[sampling]
weight = "pw"
strata = "stype"
clusters = ["dnum"]
fpc = "fpc"
nest = true
replicate_weights = "repw*"
replicate_type = "BRR"
'''


def test_the_documented_warehouse_group_by_reports_as_the_stored_answers(tmp_path):
    """The SQL of docs/complex-samples.md, run as written in DuckDB over a warehouse's two
    tables (respondents with their design columns and replicate weights; answers given), is
    a counts file: report --counts-file equals the report from the same data imported, with
    the linearization variance (df too) and with the producer's replicate weights."""
    import re

    import duckdb

    doc = (Path(__file__).resolve().parent.parent / "docs" / "complex-samples.md").read_text(
        encoding="utf-8")
    sql = re.search(r"<!-- surveykit: warehouse GROUP BY -->\n```sql\n(.*?)```", doc, re.S)
    assert sql is not None
    producer = pd.read_csv(REFERENCE / "producer_brr_apistrat.csv")
    schools = sample("apistrat")[["snum", "dnum", "fpc"]]
    data = producer.merge(schools, on="snum", validate="one_to_one")
    data = pd.concat([data, pd.DataFrame({"id": "s" + data["snum"].astype(str)})], axis=1)
    repw = [c for c in data.columns if c.startswith("repw")]
    respondents = data[["id", "stype", "dnum", "fpc", "pw", *repw]]
    answered = pd.DataFrame({"id": data["id"], "awards": data["awards_yes"].map(
        {1: "yes", 0: "no"}), "warner": data["answer_warner"].map({1: "yes", 0: "no"})})
    answered.loc[answered.index % 9 == 4, "warner"] = None  # skipped: keeps its PSU
    answers = answered.melt(id_vars="id", var_name="question", value_name="answer").dropna()
    answers["grp"] = 1
    with duckdb.connect() as con:
        con.register("respondents", respondents)
        con.register("answers", answers)
        table = con.execute(sql.group(1)).df()
    assert {"rep1", "rep104", "weight", "n", "psu"} <= set(table.columns)
    counts_file = tmp_path / "warehouse.csv"
    table.to_csv(counts_file, index=False)
    url = migrated_sqlite(tmp_path / "api_rep.db")
    (tmp_path / "api_rep.toml").write_text(WAREHOUSE_SURVEY, encoding="utf-8")
    assert run_cli("survey", "add", str(tmp_path / "api_rep.toml"), "--db", url).exit_code == 0
    wide = respondents.merge(answered, on="id").rename(columns={"id": "respondent_id"})
    wide_file = tmp_path / "api_rep.csv"
    wide.to_csv(wide_file, index=False)
    result = run_cli("import", str(wide_file), "--survey", "api_rep", "--db", url)
    assert result.exit_code == 0, result.output
    import json

    def report(*options):
        made = run_cli("report", "--survey", "api_rep", "--db", url, "--format", "json",
                       *options)
        assert made.exit_code == 0, made.output
        return json.loads(made.output)

    for variance in ("linearization", "replicates"):
        from_file = report("--counts-file", str(counts_file), "--variance", variance)
        stored = report("--variance", variance)
        for mine, theirs in zip(from_file["questions"], stored["questions"], strict=True):
            assert mine["counts"] == theirs["counts"] and mine["missing"] == theirs["missing"]
            assert mine["variance_method"] == theirs["variance_method"]
            for key in ("estimate", "se", "total", "total_se", "deff"):
                assert mine[key] == pytest.approx(theirs[key], rel=1e-9), (variance, key)
            if variance == "linearization":
                assert mine["df"] == theirs["df"]
            else:  # no replicate_df in the SQL: the cells' rank, at most the respondents'
                assert mine["df"] <= theirs["df"] == PRODUCER_DEGF["BRR"]


def numeric_section(report: dict) -> dict:
    section, = (q for q in report["questions"] if q["type"] == "number")
    return section


@pytest.mark.parametrize("design", sorted(DESIGNS))
def test_a_numeric_question_is_reported_from_the_files_cells_as_from_the_store(tmp_path,
                                                                               design):
    """``report --data`` sums a numeric question's answers per cell (one cell per reported
    number) and estimates its weighted mean and total from those cells: equal to the stored
    report of the same file imported (the kept cells' per-PSU sums), with don't-know answers
    and respondents without an answer. Before, the counts table's numeric question got no
    weighted estimate at all."""
    url, path = setup(tmp_path, design)
    result = run_cli("report", "--survey", "api", "--data", str(path), "--format", "json",
                     "--db", url)
    assert result.exit_code == 0, result.output
    from_files = numeric_section(json.loads(result.output))
    url, _ = setup(tmp_path / "imported", design, imported=True)
    stored = numeric_section(json.loads(run_cli("report", "--survey", "api", "--format",
                                                "json", "--db", url).output))
    # two stages: a district where one school answered is a lonely unit at stage 2 among
    # the answering respondents; both ways say so and fall back to the same SRS estimate
    assert stored["weighted"] is (design != "two_stages")
    assert from_files["weighted"] is stored["weighted"]
    assert from_files.get("warnings") == stored.get("warnings")
    for key in ("n", "dont_know", "missing", "groups"):
        assert from_files[key] == stored[key], key
    for key in ("mean", "se", "ci_low", "ci_high", "total", "total_se"):
        assert from_files[key] == pytest.approx(stored[key], rel=1e-9), key
