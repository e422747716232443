"""`surveykit estimate --design NAME --param ... --counts ...`: every design from the command line.

Reference values are closed forms (their sources named at each test); the CLI
must print exactly what the library computes.
"""

import json
import subprocess

import pytest
from click.testing import CliRunner

from surveykit.cli import main
from surveykit.designs import make_design
from surveykit.designs.registry import EXAMPLES, PRESETS, parse_parameters
from surveykit.estimation import estimate

SLD = ["estimate", "--design", "sld", "--param", "p=0.1667,0.8333"]


def run(args):
    return CliRunner().invoke(main, args, catch_exceptions=False, prog_name="surveykit")


def run_json(args):
    result = run([*args, "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def example_counts(name):
    """Counts for every group of a preset's example design: a plausible survey of each."""
    design = make_design(name, **parse_parameters(name, EXAMPLES[name]))
    args = []
    for g, group in enumerate(design.group_names):
        answers = design.answer_labels
        cells = ",".join(f"{label}={30 + 17 * i + 11 * g}" for i, label in enumerate(answers))
        args += ["--counts", f"{group}:{cells}"]
    return design, args


def example_args(name):
    args = ["estimate", "--design", name]
    for key, value in EXAMPLES[name].items():
        args += ["--param", f"{key}={value}"]
    return args


def test_sld_matches_the_closed_form_of_moshagen_musch_and_erdfelder():
    """Moshagen, Musch and Erdfelder (2012), Eq. 3-4: with yes shares l1, l2 of the groups,
    pi = 1 - (l1 - l2) / (p2 - p1) and t = (l1 - (1 - pi)(1 - p1)) / pi."""
    data = run_json([*SLD, "--counts", "1:yes=60,no=40", "--counts", "2:yes=35,no=65"])
    p1, p2, l1, l2 = 0.1667, 0.8333, 0.60, 0.35
    pi = 1 - (l1 - l2) / (p2 - p1)
    t = (l1 - (1 - pi) * (1 - p1)) / pi
    assert data["pi_mle"] == pytest.approx(pi, abs=1e-8)
    assert data["parameters"]["t"]["estimate"] == pytest.approx(t, abs=1e-8)
    assert data["design"] == {"name": "sld", "parameters": {"p": [0.1667, 0.8333],
                                                            "dont_know": 0.0}}
    assert data["counts"] == {"1": {"yes": 60, "no": 40, "dont_know": 0},
                              "2": {"yes": 35, "no": 65, "dont_know": 0}}


def test_json_is_the_library_estimate_to_dict():
    design = make_design("sld", p=[0.1667, 0.8333], dont_know=0.1)
    expected = estimate(design=design, counts={1: {"yes": 60, "no": 40, "dont_know": 10},
                                               2: {"yes": 35, "no": 65, "dont_know": 12}})
    data = run_json([*SLD, "--dont-know", "0.1", "--counts", "yes=60,no=40,dont_know=10",
                     "--counts", "yes=35,no=65,dont_know=12"])
    assert data == json.loads(json.dumps(expected.to_dict()))
    assert set(data["fit"]) == {"g2", "df", "p_value"} and data["fit"]["df"] == 2
    assert {"epsilon_shafer_at_estimate", "epsilon_walley_at_estimate"} <= set(data)
    assert data["epsilon_shafer"] == "inf"  # unbounded in the worst case over t


def test_groups_go_by_position_number_or_name_with_the_same_estimate():
    ordered = run_json([*SLD, "--counts", "yes=60,no=40", "--counts", "yes=35,no=65"])
    numbered = run_json([*SLD, "--counts", "2:yes=35,no=65", "--counts", "1:yes=60,no=40"])
    named = run_json([*SLD, "--param", "groups=red,blue", "--counts", "blue:yes=35,no=65",
                      "--counts", "RED:yes=60,no=40"])
    assert ordered["pi_mle"] == numbered["pi_mle"] == named["pi_mle"]
    assert list(named["counts"]) == ["red", "blue"]
    assert named["counts"]["red"]["yes"] == 60


def test_binary_designs_take_one_and_zero_and_the_spellings_of_dont_know():
    words = run_json(["estimate", "--design", "warner", "--param", "p=0.7", "--dont-know",
                      "0.2", "--counts", "yes=30,no=50,dont_know=20"])
    digits = run_json(["estimate", "--design", "warner", "--param", "p=0.7", "--dont-know",
                       "0.2", "--counts", "1=30,0=50,don't know=20"])
    assert words == digits


def test_dont_know_with_design_is_the_designed_probability():
    flag = run_json(["estimate", "--design", "fr", "--param", "p=0.1,0.2", "--dont-know", "0.2",
                     "--counts", "yes=312,no=451,dont_know=237"])
    param = run_json(["estimate", "--design", "fr", "--param", "p=0.1,0.2", "--param",
                      "dont_know=0.2", "--counts", "yes=312,no=451,dont_know=237"])
    assert flag == param
    assert flag["design"]["parameters"]["dont_know"] == 0.2
    # Boruch's forced response given an answer: pi = (yes share - forced yes) / truthful
    assert flag["pi_mle"] == pytest.approx((312 / 763 - 0.2) / 0.7, abs=1e-8)
    assert flag["fit"]["df"] == 1  # the designed don't-know share is tested


def test_generalized_warner_by_name_gives_the_old_forms_json():
    old = run_json(["estimate", "--yes", "312", "--no", "451", "--dont-know-count", "237",
                    "--p", "0.6", "--q", "0.2"])
    new = run_json(["estimate", "--design", "generalized_warner", "--param", "p=0.6",
                    "--param", "q=0.2", "--counts", "yes=312,no=451,dont_know=237"])
    assert new == old


def test_binary_json_keeps_the_old_keys_and_k_categories_list_estimates():
    binary = run_json(["estimate", "--design", "crosswise", "--param", "p=0.25",
                       "--counts", "yes=40,no=60"])
    assert {"yes", "no", "dont_know", "pi_hat", "pi_mle", "se", "ci_low", "ci_high",
            "epsilon_shafer", "epsilon_walley", "design", "parameters", "loglik"} <= set(binary)
    assert "fit" not in binary  # df = 0
    # crosswise: P(yes) = pi p + (1 - pi)(1 - p), so pi = (0.4 - 0.75) / (0.25 - 0.75)
    assert binary["pi_mle"] == pytest.approx(0.7, abs=1e-8)
    k = run_json(["estimate", "--design", "grr", "--param", "p=0.6", "--param",
                  "categories=a,b,c", "--counts", "a=100,b=140,c=60"])
    assert k["pi_mle"] is None and k["se"] is None
    # k-RR: share_i = (freq_i - (1 - p)/(k - 1)) / (p - (1 - p)/(k - 1))  (Wang et al. 2017)
    shares = {e["category"]: e["estimate"] for e in k["estimates"]}
    for label, n in (("a", 100), ("b", 140), ("c", 60)):
        assert shares[label] == pytest.approx((n / 300 - 0.2) / 0.4, abs=1e-8)


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_estimates_from_the_command_line_within_80_columns(name):
    design, counts = example_counts(name)
    result = run([*example_args(name), *counts])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(map(len, lines)) <= 80
    assert lines[0].startswith(f"design          {name}")
    assert any(line.startswith("privacy loss    ") and "Shafer" in line for line in lines)
    assert any(line.startswith("fit") for line in lines)
    for parameter in design.nuisance:
        assert any(line.startswith(parameter.name) for line in lines)
    if design.nuisance:
        assert "                at the estimate (" in result.stdout
    data = run_json([*example_args(name), *counts])
    assert data["design"] == design.spec()


def test_text_shows_groups_estimates_nuisance_fit_privacy_and_warnings():
    result = run([*SLD, "--counts", "1:yes=60,no=40", "--counts", "2:yes=35,no=65,dk=3"])
    assert result.exit_code == 0
    assert result.stdout.splitlines()[3:5] == [
        "answers         group 1: yes 60, no 40 (n = 100)",
        "                group 2: yes 35, no 65, don't know 3 (n = 103)",
    ]
    assert "pi (yes)           0.6250" in result.stdout
    assert "95% CI (likelihood-ratio)" in result.stdout
    assert "t                  0.4600" in result.stdout
    assert "privacy loss    worst case (t in [0, 1]): Shafer inf, Walley inf\n" \
           "                at the estimate (t = 0.46): Shafer 1.1754, Walley 1.1754\n" \
        in result.stdout
    assert 'warning         3 "don\'t know" answer(s) in group 2 although' in result.stdout


def test_text_shows_a_fit_test_where_the_design_is_over_identified():
    result = run(["estimate", "--design", "kuk", "--param", "p=0.7,0.3", "--param",
                  "repetitions=3", "--counts", "0=10,1=30,2=40,3=20"])
    assert "fit             G2 = 2.176 on 2 degrees of freedom, p = 0.337" in result.stdout


def test_help_lists_every_design_with_its_summary_within_80_columns():
    text = run(["estimate", "--help"]).stdout
    assert max(map(len, text.splitlines())) <= 80
    listing = text.split("Designs (--design NAME")[1]
    for name, cls in PRESETS.items():
        line = next(line for line in listing.splitlines() if line.split()[:1] == [name])
        assert cls.summary.split()[0] in line
    assert "--dont-know is a probability, as in every command" in text
    assert "sld: stochastic_lie_detector" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--design", "foo", "--counts", "yes=1"],
         "Error: unknown design 'foo'; the designs are warner, generalized_warner, fr, uqtknown, "
         "uqtunknown, mangat, kuk, crosswise, triangular, cdm, cdmsym, sld, grr, direct, custom "
         "(long names: cheater_detection, cheater_detection_symmetric, cheating_detection, "
         "cheating_detection_symmetric, direct_question, forced_response, "
         "generalized_randomized_response, gw, k_rr, krr, stochastic_lie_detector, "
         "unrelated_question, unrelated_question_known, unrelated_question_unknown)"),
        ([*SLD[1:], "--param", "q=0.3", "--counts", "yes=1"],
         "Error: design 'sld' has no parameter 'q'; its parameters are p, dont_know, groups"),
        (["--design", "sld", "--counts", "yes=1"],
         "Error: design 'sld' needs p (e.g. p=0.1667,0.8333)"),
        (["--design", "sld", "--param", "p", "--counts", "yes=1"],
         "Error: Invalid value for '--param': 'p' must be KEY=VALUE, e.g. p=0.1667,0.8333 "
         "(see 'surveykit estimate --help')"),
        (["--design", "sld", "--param", "p=0.1,x", "--counts", "yes=1"],
         "Error: p ('x') must be a number"),
        (["--design", "sld", "--param", "p=0.1", "--param", "p=0.2", "--counts", "yes=1"],
         "Error: Invalid value for '--param': p is given twice (p=0.1 and p=0.2); give it once "
         "(see 'surveykit estimate --help')"),
        (["--design", "sld", "--param", "p=0.3,0.3", "--counts", "yes=1"],
         "Error: p ([0.3, 0.3]): the two groups must answer truthfully with different "
         "probabilities; with equal ones pi and the honesty t cannot be told apart"),
        ([*SLD[1:], "--counts", "yes=60,no=40"],
         "Error: design 'sld' has 2 groups, so it takes 2 --counts (one per group, group 1 "
         "first); got 1: --counts 1:yes=N,no=N --counts 2:yes=N,no=N"),
        (["--design", "warner", "--param", "p=0.7", "--counts", "yes=6", "--counts", "yes=3"],
         "Error: design 'warner' has 1 group, so it takes 1 --counts (one per group, group 1 "
         "first); got 2"),
        ([*SLD[1:], "--counts", "1:yes=60", "--counts", "3:yes=35"],
         "Error: group '3' is not a group of design 'sld', which has 2 groups: 1, 2"),
        ([*SLD[1:], "--counts", "1:yes=60", "--counts", "1:yes=35"],
         "Error: --counts: group 1 is given twice; give one --counts per group"),
        ([*SLD[1:], "--counts", "1:yes=60", "--counts", "yes=35"],
         "Error: Invalid value for '--counts': name the group in every --counts "
         "(1:yes=60,no=40) or in none (then the first --counts is group 1) "
         "(see 'surveykit estimate --help')"),
        ([*SLD[1:], "--counts", "yes=60,maybe=3", "--counts", "yes=35"],
         "Error: response 'maybe' is not an answer of design 'sld'; its answers are yes, no, "
         "dont_know"),
        ([*SLD[1:], "--counts", "yes=60,y=3", "--counts", "yes=35"],
         "Error: --counts 'yes=60,y=3': 'yes' and 'y' are both the answer 'yes'; give each "
         "answer once"),
        ([*SLD[1:], "--counts", "yes=60,no", "--counts", "yes=35"],
         "Error: Invalid value for '--counts': 'yes=60,no': 'no' must be LABEL=N, e.g. "
         "yes=30,no=50,dont_know=20 (see 'surveykit estimate --help')"),
        ([*SLD[1:], "--counts", "yes=2.5", "--counts", "yes=35"],
         "Error: Invalid value for '--counts': 'yes=2.5': the count of 'yes' ('2.5') must be a "
         "whole number, 0 or more (see 'surveykit estimate --help')"),
        ([*SLD[1:], "--counts", ":yes=2", "--counts", "yes=35"],
         "Error: Invalid value for '--counts': ':yes=2': the group before ':' is empty; write "
         "GROUP:LABEL=N,... (e.g. 2:yes=35,no=65) (see 'surveykit estimate --help')"),
        ([*SLD[1:]],
         "Error: give the answers with --counts, one per group: --counts 1:yes=N,no=N "
         "--counts 2:yes=N,no=N (see 'surveykit estimate --help')"),
        ([*SLD[1:], "--counts", "yes=6", "--counts", "yes=3", "--method", "wilson-cc"],
         "Error: method ('wilson-cc') needs a one-group yes/no design; design 'sld' takes "
         "likelihood-ratio (the default) or wald"),
        (["--design", "generalized_warner", "--param", "p=0.6", "--param", "q=0.2",
          "--dont-know", "0.2", "--counts", "yes=3"],
         "Error: design 'generalized_warner' has no parameter 'dont_know'; its parameters are "
         "p, q"),
        (["--design", "warner", "--param", "p=0.7", "--dont-know", "0.1", "--param",
          "dont_know=0.2", "--counts", "yes=3"],
         "Error: --dont-know (0.1) and --param dont_know=0.2 both give the don't-know "
         "probability; give one (see 'surveykit estimate --help')"),
        (["--design", "warner", "--param", "p=0.7", "--dont-know", "1.5", "--counts", "yes=3"],
         "Error: dont_know (1.5) must be a probability between 0 and 1"),
        (["--design", "warner", "--param", "p=0.7", "--yes", "3", "--counts", "yes=3"],
         "Error: --yes belongs to the 0.1 form without --design; with --design give the "
         "answers as --counts yes=N,no=N,dont_know=N and the design's parameters as --param "
         "KEY=VALUE (see 'surveykit estimate --help')"),
        (["--counts", "yes=3"],
         "Error: --param and --counts need --design NAME (see 'surveykit estimate --help')"),
        (["--yes", "3", "--no", "4", "--dont-know-count", "0.5", "--p", "0.6", "--q", "0.2"],
         "Error: Invalid value for '--dont-know-count': '0.5' is not a valid integer. "
         "(see 'surveykit estimate --help')"),
    ],
)
def test_bad_input_is_one_line_with_status_2(args, message):
    result = CliRunner().invoke(main, ["estimate", *args], prog_name="surveykit")
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == message
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([*SLD[1:], "--counts", "yes=0,no=0", "--counts", "yes=0,no=0,dont_know=4"],
         "Error: no yes/no answers: pi cannot be estimated"),
        ([*SLD[1:], "--counts", "yes=0,no=0", "--counts", "yes=35,no=65"],
         "Error: design 'sld' needs answers from every group to estimate pi; group 1 has none "
         "(other than \"don't know\")"),
        (["--design", "kuk", "--param", "p=1,0", "--param", "repetitions=2", "--counts",
          "0=5,1=3,2=4"],
         "Error: 3 answer(s) '1', which design 'kuk' never gives; check the design's "
         "parameters or the answers"),
    ],
)
def test_data_problems_exit_1(args, message):
    result = CliRunner().invoke(main, ["estimate", *args], prog_name="surveykit")
    assert result.exit_code == 1, result.output
    assert result.stderr.strip() == message


def test_console_script_estimates_any_design_and_fails_cleanly():
    args = [*SLD, "--counts", "1:yes=60,no=40", "--counts", "2:yes=35,no=65"]
    ok = subprocess.run(["surveykit", *args, "--format", "json"], capture_output=True,
                        text=True)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["pi_mle"] == pytest.approx(1 - 0.25 / 0.6666, abs=1e-8)
    # the failures in this process: the console script's wiring is what needed the process
    bad = CliRunner().invoke(main, args[:-2], prog_name="surveykit")
    assert bad.exit_code == 2
    assert bad.stderr.strip().splitlines() == [
        "Error: design 'sld' has 2 groups, so it takes 2 --counts (one per group, group 1 "
        "first); got 1: --counts 1:yes=N,no=N --counts 2:yes=N,no=N"]
    empty = CliRunner().invoke(main, [*SLD, "--counts", "yes=0", "--counts", "no=0"],
                               prog_name="surveykit")
    assert empty.exit_code == 1
    assert empty.stderr.strip() == "Error: no yes/no answers: pi cannot be estimated"
