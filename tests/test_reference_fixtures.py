"""The R reference fixtures under tests/reference/ are whole, carry provenance and agree
with the formulas their JSON states.

The fixtures are made by the R scripts in tools/r_reference/ (README there); R does not
run here. These tests check the files themselves: every JSON parses and names the R
version, package versions, script, call and date; every CSV has a header and rectangular
rows; and a few stored numbers are recomputed from the stored data with the formula the
fixture documents (RRTCS's estimator from its transformed variable, survey's replicate
variance from the stored replicate weights, rr's power from the stated Fisher
information), so a fixture whose data and numbers drifted apart fails here.
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "tests" / "reference"
JSON_FILES = sorted(REFERENCE.rglob("*.json"))
CSV_FILES = sorted(REFERENCE.rglob("*.csv"))


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_there_are_fixtures_for_every_topic():
    topics = {path.relative_to(REFERENCE).parts[0] for path in JSON_FILES}
    assert {"rrtcs", "rr_power.json", "rrreg", "survey_api"} <= topics


@pytest.mark.parametrize("path", JSON_FILES, ids=lambda p: str(p.relative_to(REFERENCE)))
def test_every_json_fixture_carries_provenance_from_an_existing_script(path):
    provenance = load(path)["provenance"]
    assert provenance["r_version"].startswith("R version 4.")
    assert provenance["packages"] and all(provenance["packages"].values())
    assert (ROOT / provenance["script"]).is_file()
    assert provenance["script"] in provenance["call"]
    assert len(provenance["date"]) == 10 and provenance["date"][4] == "-"


@pytest.mark.parametrize("path", CSV_FILES, ids=lambda p: str(p.relative_to(REFERENCE)))
def test_every_csv_fixture_is_utf8_with_a_header_and_rectangular_rows(path):
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    header, body = rows[0], rows[1:]
    assert body, "no data rows"
    assert all(name and not name.replace(".", "").isdigit() for name in header)
    assert {len(row) for row in body} == {len(header)}


def rrtcs_cases():
    for path in sorted((REFERENCE / "rrtcs").glob("*.json")):
        for case in load(path).get("cases", []):
            if "result" in case:
                yield pytest.param(case, id=f"{path.stem}:{case['call'][:40]}")


def argument_vector(argument) -> np.ndarray:
    if "data_set" in argument:
        frame = pd.read_csv(REFERENCE / "rrtcs" / "data" / f"{argument['data_set']}.csv")
        return frame[argument["column"]].to_numpy(dtype=float)
    if "constant" in argument:
        return np.full(argument["length"], argument["constant"])
    return np.asarray(argument["values"], dtype=float)


@pytest.mark.parametrize("case", list(rrtcs_cases()))
def test_rrtcs_estimate_is_the_horvitz_thompson_sum_of_the_stored_transformed_variable(case):
    # Estimator(): total = sum(r / pi); mean = total / N (N given, else round(sum(1 / pi))).
    pi = argument_vector(case["arguments"]["pi"])
    r = np.asarray(case["result"]["transformed_variable"], dtype=float)
    assert len(r) == len(pi) == case["n"]
    total = np.sum(r / pi)
    if case["result"]["type"] == "total":
        expected = total
    else:
        population = case["arguments"].get("N") or round(np.sum(1 / pi))
        expected = total / population
    assert case["result"]["estimate"] == pytest.approx(expected, rel=1e-12)
    variance = case["result"]["variance"]
    if variance is not None:
        z = norm.ppf(1 - (1 - case["result"]["confidence_level"]) / 2)
        half = z * math.sqrt(variance)
        assert case["result"]["ci_low"] == pytest.approx(expected - half, rel=1e-12, abs=1e-12)
        assert case["result"]["ci_high"] == pytest.approx(expected + half, rel=1e-12, abs=1e-12)


REPLICATE_DESIGNS = ["dclus1_boot", "dstrat_boot", "dclus2_boot", "dclus1_jk1", "dclus2_jk1",
                     "dpairs_brr", "scd2brr", "scdrep"]


@pytest.mark.parametrize("name", REPLICATE_DESIGNS)
def test_survey_replicate_standard_error_follows_from_the_stored_replicate_weights(name):
    fixture = load(REFERENCE / "survey_api" / f"{name}.json")
    summary = fixture["summary"]
    weights = pd.read_csv(REFERENCE / "survey_api" / fixture["replicate_weights"])
    replicates = weights[[f"rep{i}" for i in range(1, summary["replicates"] + 1)]].to_numpy()
    data_file = "scd.csv" if name.startswith("scd") else {
        "dclus1": "apiclus1.csv", "dstrat": "apistrat.csv", "dclus2": "apiclus2.csv"}.get(
            name.split("_")[0], "apistrat.csv")
    data = pd.read_csv(REFERENCE / "survey_api" / data_file)
    if name.startswith("dpairs"):
        order = pd.read_csv(REFERENCE / "survey_api" / "apistrat_pairs.csv")
        data = order[["snum"]].merge(data, on="snum", how="left")
    variable = "alive" if name.startswith("scd") else "api00"
    y = data[variable].to_numpy(dtype=float)
    full = np.sum(weights["sampling_weight"] * y) / np.sum(weights["sampling_weight"])
    theta = replicates.T @ y / replicates.sum(axis=0)
    center = full if summary["mse"] else theta.mean()
    variance = summary["scale"] * np.sum(np.asarray(summary["rscales"]) * (theta - center) ** 2)
    mean = next(s for s in fixture["statistics"] if s["label"] == "mean")["value"]
    assert mean["estimate"][variable] == pytest.approx(full, rel=1e-12)
    assert mean["se"][variable] == pytest.approx(math.sqrt(variance), rel=1e-10)


def rr_standard_error(design: str, arguments: dict, prevalence: float, n: float) -> float:
    p = arguments["p"]
    if design == "forced-known":
        c, d = p, arguments["p1"]
    elif design in ("mirrored", "disguised"):
        c, d = 2 * p - 1, 1 - p
    else:  # unrelated-known
        c, d = p, (1 - p) * arguments["q"]
    yes = c * prevalence + d
    return math.sqrt(1 / (n * c**2 * (1 / yes + 1 / (1 - yes))))


def rr_power_cases():
    for case in load(REFERENCE / "rr_power.json")["cases"]:
        arguments = case["arguments"]
        known = arguments["design"] in ("forced-known", "mirrored", "disguised", "unrelated-known")
        if case["error"] is None and known and "power" not in arguments:
            yield pytest.param(case, id=case["label"][:50])


@pytest.mark.parametrize("case", list(rr_power_cases()))
def test_rr_power_equals_the_fisher_information_formula_the_fixture_states(case):
    a = case["arguments"]
    n, alpha = a["n"], a["sig.level"]
    if a["type"] == "one.sample":
        effect, null = a["presp"], a.get("presp.null", 0)
        se = rr_standard_error(a["design"], a, effect, n)
        se_null = rr_standard_error(a["design"], a, null, n)
    else:
        c_null = a["prespC.null"]
        t_null = a.get("prespT.null", c_null)
        effect, null = a["prespT"] - a["prespC"], t_null - c_null
        se = math.hypot(rr_standard_error(a["design"], a, a["prespT"], n),
                        rr_standard_error(a["design"], a, a["prespC"], n))
        se_null = math.hypot(rr_standard_error(a["design"], a, t_null, n),
                             rr_standard_error(a["design"], a, c_null, n))
    if a["alternative"] == "one.sided":
        power = norm.sf(null + norm.ppf(1 - alpha) * se_null, effect, se)
    else:
        z = norm.ppf(1 - alpha / 2)
        power = norm.cdf(null - z * se_null, effect, se) + norm.sf(null + z * se_null, effect, se)
    assert case["result"]["power"] == pytest.approx(power, rel=1e-10)
