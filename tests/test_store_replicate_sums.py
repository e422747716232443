"""``counts --format csv`` from the store writes the sums of the producer's replicate weights.

A survey whose ``[sampling]`` declares replicate weights gets, from ``counts --data`` (one
GROUP BY over the files, :mod:`surveykit.counting.weighted_files`), a weighted counts table
with ``rep1`` ... ``repR`` (each replicate's analysis weights summed per cell) and
``replicate_df``. The store's table (:func:`surveykit.store.design_values.weighted_cells`,
one GROUP BY on SQLite and PostgreSQL) carries the same columns, so a team that imported its
files and exports counts keeps the replicate variance:

* the store's table equals the files' cell by cell (keys, n exactly; sums to 1e-12: the two
  engines add the same doubles in another order), for the producer's BRR weights (104
  replicates, rank 101: R's degf 100) and for JK1 factors of a clustered design
  (``replicate_combined = false``: factor times weight, summed in SQL);
* files the fast path cannot vouch for (imported into a scratch SQLite first) give the same
  table;
* ``report --counts-file`` of the store's table with ``--variance replicates`` gives the
  estimates and standard errors of ``report --survey`` with ``--variance replicates`` (which
  reads every respondent's row) to 1e-12;
* a stored replicate weight changed outside surveykit (negative, not a number, NaN,
  deleted) is refused with the report's one-line message, not summed.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from io import StringIO
from pathlib import Path

import migrated
import pandas as pd
import pytest
from migrated import migrated_sqlite
from sampling_support import reference, sample, with_replicates
from sqlalchemy import Engine, delete, update
from store_support import run_cli
from test_producer_replicates import QUESTIONS, producer_file
from test_producer_replicates import survey_text as producer_survey

from surveykit.counting.sources import expand_paths
from surveykit.counting.weighted_files import weighted_file_cells
from surveykit.store import database as store
from surveykit.store import engine_for, tables

#: relative tolerance of sums and estimates (the same doubles added in another order)
TOLERANCE = 1e-12

#: the producer's questions, with JK1 factors of a one-stage cluster design
JK1_SURVEY = producer_survey("BRR").split("[sampling]")[0] + (
    '[sampling]\nweight = "pw"\nclusters = ["dnum"]\nreplicate_weights = "jk*"\n'
    'replicate_type = "JK1"\nreplicate_combined = false\n')


def jk1_factors_file() -> pd.DataFrame:
    """apiclus1's answers to the producer's questions with survey's JK1 replicate weights
    (as.svrepdesign of dclus1, R's file dclus1_jk1_repweights.csv) written as factors of the
    full-sample weight (jk1 ... jk15)."""
    frame = with_replicates(sample("apiclus1"), "dclus1_jk1_repweights.csv")
    replicates = [c for c in frame.columns if c.startswith("rep")]
    out = pd.DataFrame({"respondent_id": "s" + frame["snum"].astype(str),
                        **{question: frame[column]
                           for question, (_, _, column) in QUESTIONS.items()},
                        "pw": frame["pw"], "dnum": frame["dnum"]})
    factors = {f"jk{j + 1}": frame[c] / frame["pw"] for j, c in enumerate(replicates)}
    return pd.concat([out, pd.DataFrame(factors)], axis=1)


#: the producer's questions, with JK1 factors of a two-stage design whose weights come from
#: the fpc (no weight column)
JK1_FPC_SURVEY = producer_survey("BRR").split("[sampling]")[0] + (
    '[sampling]\nclusters = ["dnum", "snum"]\nfpc = ["fpc1", "fpc2"]\n'
    'replicate_weights = "jk*"\nreplicate_type = "JK1"\nreplicate_combined = false\n')


def jk1_fpc_factors_file() -> pd.DataFrame:
    """apiclus2's answers with survey's JK1 replicate weights of dclus2 (R's file
    dclus2_jk1_repweights.csv: 40 PSUs) as factors of its full-sample weight, and the fpc
    columns the weights come from."""
    frame = with_replicates(sample("apiclus2"), "dclus2_jk1_repweights.csv")
    replicates = [c for c in frame.columns if c.startswith("rep")]
    out = pd.DataFrame({"respondent_id": "s" + frame["snum"].astype(str),
                        **{question: frame[column]
                           for question, (_, _, column) in QUESTIONS.items()},
                        **{c: frame[c] for c in ("dnum", "snum", "fpc1", "fpc2")}})
    factors = {f"jk{j + 1}": frame[c] / frame["full_weight"]
               for j, c in enumerate(replicates)}
    return pd.concat([out, pd.DataFrame(factors)], axis=1)


#: kind -> (survey file, response file, replicates, survey's degf: R's svrepdesign for the
#: producer's BRR weights (tests/reference/survey_api/producer_replicates.json), PSUs - 1 for
#: JK1, whose replicates each drop one of the 15 PSUs)
KINDS = {
    "BRR": (lambda: producer_survey("BRR"), lambda: producer_file("BRR"), 104,
            reference("producer_replicates")["results"]["BRR"]["degf"]),
    "JK1 factors": (lambda: JK1_SURVEY, jk1_factors_file, 15, 14),
    # two stages, weights from the fpc: the factors times the design's weights
    "JK1 factors, fpc weights": (lambda: JK1_FPC_SURVEY, jk1_fpc_factors_file, 40, 39),
    # the replicate columns listed, not matched by a pattern
    "BRR listed": (lambda: producer_survey("BRR").replace(
        '"repw*"', "[" + ", ".join(f'"repw{j}"' for j in range(1, 105)) + "]"),
        lambda: producer_file("BRR"), 104,
        reference("producer_replicates")["results"]["BRR"]["degf"]),
}
#: the kinds the reports and the scratch import are checked on
REPORTED = ["BRR", "JK1 factors", "JK1 factors, fpc weights"]


def url_of(engine: Engine) -> str:
    return engine.url.render_as_string(hide_password=False)


def add_survey(url: str, folder: Path, kind: str, frame: pd.DataFrame | None = None
               ) -> Path:
    """The survey of ``kind`` added to the database at ``url`` (nothing imported) and its
    response file (or ``frame``) written in ``folder``."""
    text, made, _, _ = KINDS[kind]
    survey_file = folder / "public_use.toml"
    survey_file.write_text(text(), encoding="utf-8")
    result = run_cli("survey", "add", str(survey_file), "--db", url)
    assert result.exit_code == 0, result.output
    path = folder / "answers.csv"
    (made() if frame is None else frame).to_csv(path, index=False)
    return path


def import_file(url: str, path: Path) -> None:
    result = run_cli("import", str(path), "--survey", "public_use", "--db", url)
    assert result.exit_code == 0, result.output


def counts_csv(url: str, *data: Path) -> str:
    options = [option for path in data for option in ("--data", str(path))]
    result = run_cli("counts", "--survey", "public_use", "--format", "csv", "--db", url,
                     *options)
    assert result.exit_code == 0, result.output
    return result.output


def fast_path_vouches(url: str, path: Path) -> bool:
    with engine_for(url) as engine:
        survey = store.load_survey(engine, "public_use")
    return weighted_file_cells(survey, expand_paths([path])) is not None


def read_table(text: str) -> pd.DataFrame:
    return pd.read_csv(StringIO(text), dtype={"response": str, "psu": str},
                       keep_default_na=False, na_values=[""])


def assert_same_table(got: str, expected: str, replicates: int, degf: int) -> None:
    """Two weighted counts tables with the same header and cells: keys, n and replicate_df
    exactly, every sum (weight, weight2, rep1 ... repR) to TOLERANCE."""
    mine, theirs = read_table(got), read_table(expected)
    assert list(mine.columns) == list(theirs.columns)
    sums = [f"rep{j + 1}" for j in range(replicates)]
    assert list(mine.columns)[-replicates - 1:] == [*sums, "replicate_df"]
    assert (mine["replicate_df"] == degf).all() and (theirs["replicate_df"] == degf).all()
    keys = [c for c in mine.columns if c not in ("weight", "weight2", "n", *sums)]
    mine, theirs = (table.sort_values(keys, na_position="first").reset_index(drop=True)
                    for table in (mine, theirs))
    assert mine[keys].astype(str).equals(theirs[keys].astype(str))
    assert mine["n"].tolist() == theirs["n"].tolist()
    for column in ("weight", *(["weight2"] if "weight2" in mine.columns else []), *sums):
        assert mine[column].to_numpy() == pytest.approx(
            theirs[column].to_numpy(), rel=TOLERANCE, abs=0), column
    assert (mine[sums].to_numpy() > 0).any()  # the sums are there, not zeros


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_the_stored_counts_table_carries_the_replicate_sums_of_counts_data(
        engine, tmp_path, kind):
    """counts --format csv after import equals counts --data of the same file (one GROUP BY
    over the file), replicate sums and degrees of freedom included."""
    url = url_of(engine)
    path = add_survey(url, tmp_path, kind)
    assert fast_path_vouches(url, path)
    from_files = counts_csv(url, path)
    import_file(url, path)
    _, _, replicates, degf = KINDS[kind]
    assert_same_table(counts_csv(url), from_files, replicates, degf)


def replicate_report(url: str, *options: str) -> dict:
    result = run_cli("report", "--survey", "public_use", "--db", url, "--format", "json",
                     "--variance", "replicates", *options)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.mark.parametrize("kind", REPORTED)
def test_the_stored_counts_table_reports_the_stored_replicate_variance(engine, tmp_path,
                                                                       kind):
    """report --counts-file of the store's table with --variance replicates equals report
    --survey with --variance replicates (every respondent's row) to 1e-12."""
    url = url_of(engine)
    import_file(url, add_survey(url, tmp_path, kind))
    counts_file = tmp_path / "weighted.csv"
    counts_file.write_text(counts_csv(url), encoding="utf-8")
    from_table = replicate_report(url, "--counts-file", str(counts_file))
    from_rows = replicate_report(url)
    _, _, _, degf = KINDS[kind]
    assert from_table["sampling"]["df"] == from_rows["sampling"]["df"] == degf
    assert len(from_table["questions"]) == len(from_rows["questions"]) >= 2
    for mine, theirs in zip(from_table["questions"], from_rows["questions"], strict=True):
        assert mine["id"] == theirs["id"] and mine["counts"] == theirs["counts"]
        assert mine["variance_method"] == theirs["variance_method"] == \
            f"replicates ({kind.split()[0]})"
        assert mine["df"] == theirs["df"] == degf
        for key in ("estimate", "se", "ci_low", "ci_high", "total", "total_se", "deff"):
            assert mine[key] == pytest.approx(theirs[key], rel=TOLERANCE), (mine["id"], key)


def arabic_weight(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with one weight (or, without a weight column, one fpc) in Arabic-Indic
    digits: the import reads it (Python's float does), the GROUP BY over the files does not
    vouch for it."""
    digits = str.maketrans("0123456789", "\u0660\u0661\u0662\u0663\u0664\u0665\u0666\u0667"
                                         "\u0668\u0669")
    column = "pw" if "pw" in frame.columns else "fpc1"
    odd = frame.astype({column: object})
    odd.loc[3, column] = repr(float(frame.loc[3, column])).translate(digits)
    return odd


@pytest.mark.parametrize("kind", REPORTED)
def test_files_imported_into_the_scratch_store_give_the_fast_paths_replicate_sums(
        tmp_path, kind):
    """A file the fast path cannot vouch for is imported into a scratch SQLite and counted
    there by the store's GROUP BY: its table equals the fast path's of the same answers
    (written plainly) and the stored table of the file imported."""
    url = migrated_sqlite(tmp_path / "surveykit.db")
    plain = add_survey(url, tmp_path, kind)
    odd = tmp_path / "odd.csv"
    arabic_weight(pd.read_csv(plain)).to_csv(odd, index=False)
    assert fast_path_vouches(url, plain) and not fast_path_vouches(url, odd)
    _, _, replicates, degf = KINDS[kind]
    from_scratch = counts_csv(url, odd)
    assert_same_table(from_scratch, counts_csv(url, plain), replicates, degf)
    import_file(url, odd)
    assert_same_table(counts_csv(url), from_scratch, replicates, degf)


#: how a stored replicate weight is changed outside surveykit -> words of the message
CHANGED = {
    "negative": ("-0.5", ["'repw7'", "-0.5", "of 0 or more"]),
    "not a number": ("heavy", ["'repw7'", "'heavy', not a number"]),
    "nan": ("NaN", ["'repw7'", "'NaN', not a number"]),
    "deleted": (None, ["'repw7'", "is empty"]),
}


def brr_imported(url: str) -> None:
    """Fill ``url`` with the producer's BRR survey and file imported (made once per process:
    tests/migrated.py)."""
    with tempfile.TemporaryDirectory() as folder:
        import_file(url, add_survey(url, Path(folder), "BRR"))


@pytest.fixture(params=migrated.DATABASES)
def brr_url(request, tmp_path) -> Iterator[str]:
    with migrated.filled_database(request.param, brr_imported, tmp_path) as url:
        yield url


@pytest.mark.parametrize("change", sorted(CHANGED))
def test_a_stored_replicate_weight_changed_outside_surveykit_is_refused_not_summed(
        brr_url, change):
    """SQLite reads "heavy" as 0 and PostgreSQL reads "NaN" as a number: the store's GROUP
    BY refuses both, as a negative or missing value, and the rows name the value and the
    respondent; the report with --variance replicates says the same in one line (a stored
    text that is no number made it fail with a pandas ValueError)."""
    url = brr_url
    value, words = CHANGED[change]
    covariates = tables.covariates
    respondent = producer_file("BRR").loc[5, "respondent_id"]
    which = (covariates.c.name == "repw7") & (covariates.c.respondent_id == respondent)
    with engine_for(url) as engine, engine.begin() as conn:
        conn.execute(delete(covariates).where(which) if value is None
                     else update(covariates).where(which).values(value=value))
    for command, named in ((("counts", "--format", "csv"), [f"respondent {respondent!r}"]),
                           (("report", "--variance", "replicates"), [])):
        result = run_cli(*command, "--survey", "public_use", "--db", url)
        assert result.exit_code != 0, result.output
        assert len(result.output.strip().splitlines()) == 1, result.output
        assert result.output.startswith("Error: ")
        for word in (*words, *named):
            assert word in result.output, (word, result.output)
