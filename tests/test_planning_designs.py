"""Planning any design: the free parameter for a budget, the precision, the sample size.

Oracles: the closed forms of each design's loss (the largest ratio of its
matrix entries, Def. 3.1) solved for the parameter by hand; the delta-method
variances of the closed-form estimators (Moshagen et al. 2012 for the SLD;
Wang et al. 2017 for k-RR); and seeded simulations of the planned surveys.
"""

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from surveykit.cli import main
from surveykit.designs import GeneralizedRandomizedResponse, GeneralizedWarner, make_design
from surveykit.errors import ParameterError
from surveykit.estimation import binomial
from surveykit.estimation.estimate import fit_counts
from surveykit.planning import (
    free_parameter,
    parse_free_parameters,
    plan_design,
    precision,
    solve_for_budget,
)
from surveykit.simulation import simulate_counts

EPSILONS = [0.3, 1.0, math.log(3), 2.5, 6.0]


def run(args):
    return CliRunner().invoke(main, args, prog_name="surveykit")


@pytest.mark.parametrize("epsilon", EPSILONS)
@pytest.mark.parametrize(
    ("name", "parameters", "expected"),
    [
        # Warner: loss ln(p / (1 - p))
        ("warner", {}, lambda e: math.exp(e) / (1 + math.exp(e))),
        # crosswise: Warner's matrix with p the innocuous share, taken below 1/2
        ("crosswise", {}, lambda e: 1 / (1 + math.exp(e))),
        # forced response, forced yes = forced no = f: loss ln((1 - f) / f)
        ("fr", {}, lambda e: 1 / (1 + math.exp(e))),
        # m = 3 equal forced answers: loss ln((1 - 2f) / f)
        ("fr", {"categories": ["a", "b", "c"]}, lambda e: 1 / (math.exp(e) + 2)),
        # k-RR: loss ln(p (k - 1) / (1 - p))
        ("grr", {"k": 4}, lambda e: math.exp(e) / (math.exp(e) + 3)),
        # unrelated question with known innocuous share u < 1/2: the yes ratio
        # (s + (1 - s) u) / ((1 - s) u) = e^eps gives s = u (e^eps - 1) / (1 + u (e^eps - 1))
        ("uqtknown", {"p": [None, 0.0833]},
         lambda e: 0.0833 * math.expm1(e) / (1 + 0.0833 * math.expm1(e))),
    ],
)
def test_budget_solves_the_closed_form(name, parameters, expected, epsilon):
    design, value = solve_for_budget(free_parameter(name, parameters), epsilon=epsilon)
    assert value == pytest.approx(expected(epsilon), rel=1e-9, abs=1e-12)
    # on the inside of the boundary: the budget passes, a hair less fails
    assert design.epsilon_shafer <= epsilon
    assert design.epsilon_shafer > epsilon - 1e-9


@pytest.mark.parametrize("dont_know", [0.0, 0.2, 0.5])
@pytest.mark.parametrize("epsilon", [0.5, 1.1, 3.0])
def test_generalized_warner_is_corollary_3_12_and_the_walley_design(dont_know, epsilon):
    shafer = plan_design("generalized_warner", epsilon=epsilon, dont_know=dont_know)
    oracle = GeneralizedWarner.optimal(epsilon=epsilon, dont_know=dont_know)
    assert shafer.design.p == pytest.approx(oracle.p, rel=1e-9)
    assert shafer.design.q == pytest.approx(oracle.q, rel=1e-9)
    if 1 - 2 / (math.exp(epsilon) + 1) > dont_know:  # else no Walley design exists
        walley = plan_design("generalized_warner", epsilon=epsilon, dont_know=dont_know,
                             semantics="walley")
        oracle = GeneralizedWarner.for_walley_budget(epsilon=epsilon, dont_know=dont_know)
        assert walley.design.q == pytest.approx(oracle.q, rel=1e-9)
        assert walley.design.epsilon_walley <= epsilon


def test_walley_budget_with_dont_know_spends_the_walley_loss():
    plan = plan_design("warner", epsilon=1.0, semantics="walley", dont_know=0.3)
    assert plan.losses["walley"] == pytest.approx(1.0, abs=1e-9)
    assert plan.losses["walley"] <= 1.0
    assert plan.losses["shafer"] < plan.losses["walley"]  # don't know costs Walley more


def test_grr_solution_is_the_presets_own_epsilon_parameterization():
    plan = plan_design("grr", {"categories": ["a", "b", "c"]}, epsilon=1.3)
    oracle = GeneralizedRandomizedResponse(epsilon=1.3, categories=["a", "b", "c"])
    assert plan.design.p == pytest.approx(oracle.p, rel=1e-9)


def test_two_group_designs_solve_the_marked_entry_at_the_nuisance_values():
    plan = plan_design("sld", parse_free_parameters("sld", {"p": "0.1667,?"}), epsilon=2.0,
                       nuisance={"t": 0.9}, n=1000)
    assert plan.free.label == "p[2]"
    assert plan.design.p[0] == 0.1667
    assert plan.budget_at == {"t": 0.9}
    at = plan.design.privacy_loss("shafer", {"t": 0.9})
    assert at <= 2.0 and at > 2.0 - 1e-9
    assert plan.losses["shafer"] == math.inf  # the worst case over t is unbounded
    # of the two values that spend the budget, the more precise one is chosen
    other = plan_design("sld", {"p": [0.1667, None]}, epsilon=2.0, nuisance={"t": 0.9}, n=1000)
    assert other.value == plan.value


@pytest.mark.parametrize(
    ("name", "parameters", "extra", "message"),
    [
        ("triangular", {}, {},
         "design 'triangular' loses unbounded privacy (Shafer) for every p: respondents in "
         "state 'yes' never answer 'no', so that answer rules the state out; no value meets a "
         "finite budget"),
        ("sld", {"p": [0.1667, None]}, {},
         "design 'sld' loses unbounded privacy (Shafer) for every p[2] in the worst case over t "
         "in [0, 1] (give --nuisance t=VALUE to plan at a value): respondents in state 'yes' "
         "never answer 'yes' (at t = 0), so that answer rules the state out; no value meets a "
         "finite budget"),
        ("sld", {}, {},
         "design 'sld' has no single free parameter: mark the entries to solve for with ?, "
         "e.g. --param p=0.1667,? (p[2] for the budget, given p[1])"),
        ("warner", {"p": 0.7}, {},
         "p is what the budget chooses for design 'warner'; drop --param p (or drop --epsilon "
         "to evaluate the design as given)"),
        ("direct", {}, {},
         "design 'direct' has no parameter to solve for a budget; drop --epsilon to see its "
         "privacy loss and precision as given"),
        ("cdmsym", {"p": [0.2, 0.1, None, None]}, {},
         "no value of p[3] = p[4] meets a Shafer budget of 1 for design 'cdmsym': the smallest "
         "loss is 2.079 (at p[3] = p[4] = 0.1125); raise the budget or change the other "
         "parameters"),
    ],
)
def test_budget_refusals_say_why(name, parameters, extra, message):
    with pytest.raises(ParameterError) as error:
        plan_design(name, parameters, epsilon=1.0, **extra)
    assert str(error.value) == message


def test_sld_fisher_standard_error_is_the_delta_method_of_the_closed_form():
    """Moshagen et al. (2012): pi = 1 - (l1 - l2)/(p2 - p1), so with group sizes n1, n2
    Var(pi) = (l1 (1 - l1)/n1 + l2 (1 - l2)/n2) / (p2 - p1)^2 (the design is exactly
    identified, so the inverse Fisher information is this delta-method variance)."""
    p1, p2, pi, t = 0.1667, 0.8333, 0.3, 0.9
    design = make_design("sld", p=[p1, p2])
    result = precision(design, n=1000, pi=pi, nuisance={"t": t}, allocation=[0.3, 0.7])
    assert result.group_sizes == (300, 700) and result.method == "fisher"
    l1 = pi * t + (1 - pi) * (1 - p1)
    l2 = pi * t + (1 - pi) * (1 - p2)
    variance = (l1 * (1 - l1) / 300 + l2 * (1 - l2) / 700) / (p2 - p1) ** 2
    assert result.se == pytest.approx(math.sqrt(variance), rel=1e-9)


def test_k_rr_fisher_standard_errors_are_wang_et_als_variances():
    """Wang, Blocki, Li and Jha (2017), direct encoding: Var(share_i) =
    f_i (1 - f_i) / (n (p - q)^2), f_i = q + (p - q) share_i, q = (1 - p)/(k - 1)."""
    shares = (0.2, 0.5, 0.3)
    design = make_design("grr", p=0.6, categories=["a", "b", "c"])
    result = precision(design, n=900, pi=shares)
    q = 0.4 / 2
    for label, share in zip("abc", shares, strict=True):
        f = q + (0.6 - q) * share
        expected = math.sqrt(f * (1 - f) / (900 * (0.6 - q) ** 2))
        assert result.se_by_category[label] == pytest.approx(expected, rel=1e-9)
    assert result.se == max(result.se_by_category.values())


def test_one_group_binary_fisher_matches_the_binomial_information_of_kuks_cards():
    """Kuk with 3 draws: I(pi) = n sum_r (P(r|yes) - P(r|no))^2 / P(r), the information of
    one multinomial in one parameter."""
    from scipy import stats

    pi, n = 0.4, 500
    yes, no = stats.binom.pmf(range(4), 3, 0.7), stats.binom.pmf(range(4), 3, 0.3)
    information = n * np.sum((yes - no) ** 2 / (pi * yes + (1 - pi) * no))
    design = make_design("kuk", p=[0.7, 0.3], repetitions=3)
    assert precision(design, n=n, pi=pi).se == pytest.approx(1 / math.sqrt(information),
                                                             rel=1e-9)


@pytest.mark.parametrize("name", ["warner", "crosswise", "fr", "uqtknown", "mangat"])
def test_one_group_yes_no_designs_keep_the_exact_conditional_variance(name):
    parameters = {"warner": {"p": 0.7, "dont_know": 0.2}, "crosswise": {"p": 0.25},
                  "fr": {"p": [0.1, 0.2], "dont_know": 0.1}, "uqtknown": {"p": [0.7, 0.0833]},
                  "mangat": {"p": 0.7}}[name]
    design = make_design(name, **parameters)
    plan = plan_design(name, parameters, target_se=0.04, pi=0.3)
    assert plan.precision.method == "exact"
    exact = math.sqrt(binomial.conditional_variance(design, pi=0.3, n=plan.n))
    before = math.sqrt(binomial.conditional_variance(design, pi=0.3, n=plan.n - 1))
    assert plan.se == exact <= 0.04 < before


@pytest.mark.parametrize(
    ("name", "parameters", "nuisance", "allocation"),
    [("sld", {"p": [0.1667, 0.8333]}, {"t": 0.9}, None),
     ("uqtunknown", {"p": [0.8, 0.3]}, {"pi_innocuous": 0.3}, [0.4, 0.6]),
     ("cdm", {"p": [0.3, 0.7]}, {"gamma": 0.05}, None),
     ("grr", {"p": 0.6, "k": 3}, {}, None)],
)
def test_planned_n_is_the_smallest_that_meets_the_target(name, parameters, nuisance, allocation):
    pi = (0.2, 0.5, 0.3) if name == "grr" else 0.3
    plan = plan_design(name, parameters, pi=pi, nuisance=nuisance, allocation=allocation,
                       target_se=0.03)
    assert plan.se <= 0.03
    fewer = precision(plan.design, n=plan.n - 1, pi=pi, nuisance=nuisance,
                      allocation=allocation)
    assert fewer.se > 0.03


def _simulated_se(plan, shares, nuisance_vector, reps, seed):
    rng = np.random.default_rng(seed)
    counts = simulate_counts(plan.design, shares=shares, n=list(plan.precision.group_sizes),
                             reps=reps, rng=rng, nuisance=nuisance_vector)
    estimates = np.array([fit_counts(plan.design, c).pi_mle for c in counts])
    variance = estimates.var(ddof=1)
    centred = estimates - estimates.mean()
    variance_se = math.sqrt((np.mean(centred**4) - variance**2) / reps)
    return estimates, variance, variance_se


@pytest.mark.slow
def test_planned_sld_sample_gives_the_target_standard_error_in_a_seeded_simulation():
    """600 simulated SLD surveys of the planned size: the variance of pi_mle agrees with
    target^2 within 4 Monte Carlo standard errors, the SD within 10%, no bias beyond 3 SE.
    Slow (600 two-group fits): the default suite checks the planned standard error exactly
    (test_sld_fisher_standard_error_is_the_delta_method_of_the_closed_form), and the
    estimator's standard error equals the same closed form to 1e-8 in
    tests/test_design_oracles.py."""
    plan = plan_design("sld", {"p": [0.1667, 0.8333]}, nuisance={"t": 0.9}, pi=0.3,
                       target_se=0.04)
    estimates, variance, variance_se = _simulated_se(plan, 0.3, [0.9], reps=600,
                                                     seed=20240601)
    assert abs(variance - plan.se**2) <= 4 * variance_se
    assert abs(math.sqrt(variance) / 0.04 - 1) < 0.10
    assert abs(estimates.mean() - 0.3) <= 3 * math.sqrt(variance / estimates.size)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "parameters", "nuisance", "vector", "allocation", "pi"),
    [("sld", {"p": [0.2, 0.7]}, {"t": 0.8}, [0.8], [0.3, 0.7], 0.3),
     ("uqtunknown", {"p": [0.8, 0.3], "dont_know": 0.1}, {"pi_innocuous": 0.3}, [0.3], None,
      0.25),
     ("cdm", {"p": [0.3, 0.7]}, {"gamma": 0.1}, [], None, 0.2),
     ("kuk", {"p": [0.7, 0.3], "repetitions": 3}, {}, [], None, 0.4)],
)
def test_planned_samples_give_the_target_standard_error_slow(name, parameters, nuisance,
                                                             vector, allocation, pi):
    """4000 simulated surveys per design, the prevalence well inside (0, 1) and nuisance
    values off their bounds (at a bound the estimate is truncated and varies less than the
    Fisher information says): the variance within 4 Monte Carlo SE of the planned SE^2, and
    no bias beyond 3 SE."""
    plan = plan_design(name, parameters, nuisance=nuisance, pi=pi, allocation=allocation,
                       target_se=0.035)
    # the CDM's states are yes, no and cheater
    shares = [pi, 1 - pi - nuisance["gamma"], nuisance["gamma"]] if name == "cdm" else pi
    estimates, variance, variance_se = _simulated_se(plan, shares, vector or None, reps=4000,
                                                     seed=7)
    target = plan.precision.se
    assert abs(variance - target**2) <= 4 * variance_se
    assert abs(estimates.mean() - pi) <= 3 * math.sqrt(variance / estimates.size)


# -- the command line ---------------------------------------------------------------------------


def test_cli_plans_any_design_within_80_columns():
    result = run(["design", "--design", "sld", "--param", "p=0.1667,?", "--epsilon", "2",
                  "--nuisance", "t=0.9", "--pi", "0.3", "--target-se", "0.05"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert max(map(len, lines)) <= 80
    assert lines[0] == "Design sld for a Shafer budget of 2 at t = 0.9"
    assert "solved          p[2] = 0.738906 (spends the budget)" in lines
    assert "privacy loss    worst case (t in [0, 1]): Shafer inf, Walley inf" in lines
    assert "                at t = 0.9: Shafer 2.0000, Walley 2.0000" in lines
    assert "respondents     912 in 2 groups: 1 456, 2 456 (equal allocation)" in lines
    assert "standard error  0.0500 (inverse Fisher information; target 0.05)" in lines


def test_cli_json_is_the_plan():
    result = run(["design", "--design", "uqtknown", "--param", "p=?,0.0833", "--epsilon", "2",
                  "--n", "800", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    plan = plan_design("uqtknown", {"p": [None, 0.0833]}, epsilon=2.0, n=800)
    assert data == json.loads(json.dumps(plan.to_dict()))
    assert data["solved"]["parameter"] == "p[1]"
    assert data["variance"] == "exact" and data["n"] == 800


def test_cli_without_epsilon_evaluates_the_design_as_given():
    result = run(["design", "--design", "grr", "--param", "p=0.6", "--param",
                  "categories=a,b,c", "--pi", "0.2,0.5,0.3", "--n", "900"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == "Design grr as given"
    assert "precision at    shares a 0.2, b 0.5, c 0.3" in result.stdout
    assert "by category: a " in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--design", "triangular", "--epsilon", "1"],
         "Error: design 'triangular' loses unbounded privacy (Shafer) for every p: respondents "
         "in state 'yes' never answer 'no', so that answer rules the state out; no value meets "
         "a finite budget"),
        (["--design", "warner", "--param", "p=?", "--n", "10"],
         "Error: entries marked ? are solved for a budget: give --epsilon"),
        (["--design", "sld", "--param", "p=0.2,0.8", "--allocation", "0.3,0.3", "--n", "10"],
         "Error: allocation ([0.3, 0.3]) must be positive shares of the respondents that add "
         "up to 1, e.g. 0.5,0.5"),
        (["--design", "sld", "--param", "p=0.2,0.8", "--allocation", "1", "--n", "10"],
         "Error: allocation ([1.0]) must give one share per group of design 'sld', which has "
         "2 groups"),
        (["--design", "sld", "--param", "p=0.2,0.8", "--nuisance", "u=0.3", "--n", "10"],
         "Error: design 'sld' has no parameter 'u' to plan at; its unknown parameters are t"),
        (["--design", "sld", "--param", "p=0.2,0.8", "--nuisance", "t", "--n", "10"],
         "Error: Invalid value for '--nuisance': 't' must be NAME=VALUE, e.g. t=0.9 "
         "(see 'surveykit design --help')"),
        (["--design", "sld", "--param", "p=0.2,0.8", "--n", "10", "--target-se", "0.1"],
         "Error: give either n or target_se, not both"),
        (["--design", "warner", "--param", "p=0.7", "--pi", "0.2,0.8", "--n", "10"],
         "Error: pi ((0.2, 0.8)) must be one prevalence for a yes/no design"),
        (["--design", "warner", "--epsilon", "1", "--plot", "x.png"],
         None),
        (["--epsilon", "1", "--nuisance", "t=0.9"],
         "Error: --param, --nuisance and --allocation need --design NAME "
         "(see 'surveykit design --help')"),
        (["--design", "bogus", "--epsilon", "1"], "Error: unknown design 'bogus'"),
    ],
)
def test_cli_bad_input_is_one_line_with_status_2(args, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run(["design", *args])
    if message is None:  # a good request: the plot is written
        assert result.exit_code == 0, result.output
        assert (tmp_path / "x.png").read_bytes().startswith(b"\x89PNG")
        return
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().startswith(message)
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(("args", "magic"), [
    (["--design", "sld", "--param", "p=0.1667,?", "--nuisance", "t=0.9"], b"<?xml"),
    (["--design", "kuk", "--param", "p=?,0.3", "--param", "repetitions=2"], b"<?xml")])
def test_cli_plot_draws_the_trade_off_of_any_design(tmp_path, args, magic):
    path = tmp_path / "plan.svg"
    result = run(["design", *args, "--epsilon", "1.5", "--target-se", "0.05", "--plot",
                  str(path)])
    assert result.exit_code == 0, result.output
    assert path.read_bytes().startswith(magic)
    assert f"Wrote the trade-off picture to {path}" in result.stderr


def test_cli_plot_needs_a_free_parameter(tmp_path):
    result = run(["design", "--design", "warner", "--param", "p=0.7", "--n", "100", "--plot",
                  str(tmp_path / "p.png")])
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        "Error: --plot draws the trade-off along the design's free parameter: give --epsilon")


def test_console_script_plans_and_fails_cleanly():
    import subprocess

    ok = subprocess.run(["surveykit", "design", "--design", "warner", "--epsilon", "1",
                         "--target-se", "0.03", "--format", "json"], capture_output=True,
                        text=True)
    assert ok.returncode == 0, ok.stderr
    data = json.loads(ok.stdout)
    assert data["solved"] == {"parameter": "p", "value": pytest.approx(math.exp(1) /
                                                                        (1 + math.exp(1)))}
    assert data["n"] == plan_design("warner", epsilon=1.0, target_se=0.03).n
    # the failure in this process: the console script's wiring is what needed the process
    bad = run(["design", "--design", "mangat", "--epsilon", "1"])
    assert bad.exit_code == 2
    assert bad.stderr.strip().splitlines() == [
        "Error: design 'mangat' loses unbounded privacy (Shafer) for every p: respondents in "
        "state 'yes' never answer 'no', so that answer rules the state out; no value meets a "
        "finite budget"]
