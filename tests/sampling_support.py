"""Shared pieces of the complex-sample tests: survey's api data and R's reference values
(tests/reference/survey_api/, made by tools/r_reference/survey_api*.R; README there)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd

from surveykit.sampling import SamplingDesign

REFERENCE = Path(__file__).resolve().parent / "reference" / "survey_api"

#: survey's svydesign calls on the api samples, as surveykit declares them.
DESIGNS: dict[str, tuple[str, SamplingDesign]] = {
    # svydesign(id = ~1, strata = ~stype, weights = ~pw, data = apistrat, fpc = ~fpc)
    "dstrat": ("apistrat", SamplingDesign(weight="pw", strata="stype", fpc=("fpc",))),
    # svydesign(id = ~dnum, weights = ~pw, data = apiclus1, fpc = ~fpc)
    "dclus1": ("apiclus1", SamplingDesign(weight="pw", clusters=("dnum",), fpc=("fpc",))),
    # svydesign(id = ~dnum + snum, fpc = ~fpc1 + fpc2, data = apiclus2): weights from the fpc
    "dclus2": ("apiclus2", SamplingDesign(clusters=("dnum", "snum"), fpc=("fpc1", "fpc2"))),
}
#: survey's replicate versions (as.svrepdesign) and the variance method that makes them.
REPLICATE_DESIGNS: dict[str, tuple[str, str]] = {
    "dstrat_jkn": ("dstrat", "jackknife"), "dclus1_jk1": ("dclus1", "jackknife"),
    "dclus2_jk1": ("dclus2", "jackknife"),
}


@cache
def reference(name: str) -> dict:
    return json.loads((REFERENCE / f"{name}.json").read_text(encoding="utf-8"))


def statistic(name: str, label: str) -> dict:
    """The value of one statistic (by label) of a design's reference file."""
    found = [s for s in reference(name)["statistics"] if s["label"] == label]
    assert len(found) == 1, (name, label)
    assert found[0]["error"] is None, found[0]["error"]
    return found[0]["value"]


@cache
def _sample(name: str) -> pd.DataFrame:
    return pd.read_csv(REFERENCE / f"{name}.csv", keep_default_na=False,
                       na_values=[""], dtype={"cds": str})


def sample(name: str) -> pd.DataFrame:
    """An api sample with the direct answer ``awards_yes`` ("yes"/"no") and the randomized
    answers of rr_answers_<name>.csv and complex_answers_<name>.csv (same row order)."""
    frame = _sample(name).copy()
    frame["awards_yes"] = np.where(frame["awards"] == "Yes", "yes", "no")
    rr = pd.read_csv(REFERENCE / f"rr_answers_{name}.csv", dtype={"cds": str})
    complex_answers = pd.read_csv(REFERENCE / f"complex_answers_{name}.csv", dtype={"cds": str})
    assert (rr["cds"] == frame["cds"]).all() and (complex_answers["cds"] == frame["cds"]).all()
    extra = {f"answer_{c[len('answer_'):]}": rr[c].astype(str)
             for c in rr.columns if c.startswith("answer_")}
    extra["answer_gw"] = complex_answers["answer_gw"].map({1: "yes", 0: "no", 2: "dont_know"})
    extra["answer_sld"] = complex_answers["answer_sld"].map({1: "yes", 0: "no"})
    extra["group_sld"] = complex_answers["group_sld"]
    return pd.concat([frame, pd.DataFrame(extra)], axis=1)


def with_replicates(frame: pd.DataFrame, file: str) -> pd.DataFrame:
    """``frame`` with the replicate analysis weights of ``file`` (rep1..repR) and the full-sample
    weight as ``full_weight``."""
    weights = pd.read_csv(REFERENCE / file)
    columns = {c: weights[c].to_numpy() for c in weights.columns if c.startswith("rep")}
    columns["full_weight"] = weights["sampling_weight"].to_numpy()
    return pd.concat([frame.reset_index(drop=True), pd.DataFrame(columns)], axis=1)


def pairs_sample() -> pd.DataFrame:
    """apistrat in the order of R's apistrat_pairs (by stype, snum) with its ``pair`` strata."""
    pairs = pd.read_csv(REFERENCE / "apistrat_pairs.csv")
    frame = sample("apistrat").set_index("snum").loc[pairs["snum"]].reset_index()
    frame["pair"] = pairs["pair"].to_numpy()
    return frame
