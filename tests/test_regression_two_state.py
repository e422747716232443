"""The closed-form likelihood of two-state designs (surveykit.estimation.latent.TwoStateModel)
against the general mixture over states (LatentModel), its test oracle.

Both compute the same log-likelihood, gradient and Hessian by different formulas (the
posterior form c + d expit(z'beta) in one pass; a log-sum-exp over states with Louis'
identity), so they must agree to rounding: 1e-8 relative here, on every two-state design
in the registry, with its don't-know branch, two groups and respondents asked directly
where the design allows them.
"""

from __future__ import annotations

import numpy as np
import pytest
from regression_simulation import simulate_rows

from surveykit.designs.registry import EXAMPLES, make_design, parse_parameters
from surveykit.errors import ParameterError
from surveykit.estimation import regression
from surveykit.estimation.answers import code_answers
from surveykit.estimation.formulas import build_matrix, parse_formula
from surveykit.estimation.latent import LatentModel, TwoStateModel, maximize


def _two_state_cases():
    cases = []
    for name, example in EXAMPLES.items():
        parameters = parse_parameters(name, dict(example))
        design = make_design(name, **parameters)
        s = design.structure
        if not len(s.states) == len(s.categories) == 2:
            continue
        cases.append(pytest.param(design, id=name))
        try:
            with_dk = make_design(name, **parameters, dont_know=0.2)
        except ParameterError:
            continue        # generalized Warner: its don't-know branch is 1 - p - q already
        cases.append(pytest.param(with_dk, id=f"{name}-dk"))
    return cases


CASES = _two_state_cases()


def _models(design, n=1500, seed=0):
    """Both models on the same simulated rows: covariates x1, x2, groups, and 20% asked
    directly where the design's answers include its categories."""
    rng = np.random.default_rng(seed)
    nuisance = [0.3 if p.name != "t" else 0.7 for p in design.structure.nuisance] or None
    direct = 0.2 if set(design.structure.categories) <= set(design.response_labels) else 0.0
    frame = simulate_rows(design, n=n, beta=[-0.4, 0.8, -0.6], rng=rng, nuisance=nuisance,
                          direct_share=direct)
    rows = code_answers(design, frame.rrt, frame.group, column="rrt")
    Z = build_matrix(parse_formula("rrt ~ x1 + x2", list(frame.columns)),
                     frame.loc[rows.kept]).values
    fast = regression._model(design, rows, Z, None)
    general = regression._model(design, rows, Z, None, general=True)
    return fast, general, rows


def _close(a, b, what):
    scale = max(1.0, float(np.max(np.abs(b))))
    assert np.max(np.abs(np.asarray(a) - np.asarray(b))) <= 1e-8 * scale, what


def _each_equals_its_single_point_pass(fast, points, together, *, value_rel=1e-13,
                                       exact_largest=False):
    """Each point's (value, gradient, Hessian, largest predictor) from a pass over many
    points equals what a pass over that point alone gives."""
    for x, (value, gradient, hessian, largest) in zip(points, together, strict=True):
        alone = fast.evaluate(x)
        assert value == pytest.approx(alone[0], rel=value_rel)
        _close(gradient, alone[1], "gradient")
        _close(hessian, alone[2], "Hessian")
        if exact_largest:
            assert largest == alone[3]
        else:
            assert largest == pytest.approx(alone[3], rel=1e-13)


def test_every_two_state_design_of_the_registry_is_covered():
    names = {case.id for case in CASES}
    assert {"warner", "warner-dk", "sld", "sld-dk", "uqtunknown-dk", "kuk-dk", "direct",
            "custom", "generalized_warner", "fr-dk"} <= names
    assert not {"cdm", "grr"} & names


@pytest.mark.parametrize("design", CASES)
def test_closed_form_equals_the_general_likelihood_at_random_points(design):
    fast, general, rows = _models(design)
    assert isinstance(fast, TwoStateModel) and type(general) is LatentModel
    assert len(set(rows.groups.tolist())) >= len(design.group_names)
    rng = np.random.default_rng(1)
    for _ in range(4):
        x = np.concatenate([rng.normal(scale=1.5, size=3),
                            rng.uniform(0.1, 0.95, size=fast.J)])
        value, gradient, hessian, largest = fast.evaluate(x)
        value_g, gradient_g, hessian_g, largest_g = general.evaluate(x)
        _close(value, value_g, "log-likelihood")
        _close(gradient, gradient_g, "gradient")
        _close(hessian, hessian_g, "Hessian")
        assert largest == pytest.approx(largest_g, rel=1e-12)
        assert fast.loglik(x) == pytest.approx(value_g, rel=1e-12)


@pytest.mark.parametrize("design", CASES)
def test_closed_form_fit_equals_the_general_fit(design):
    fast, general, _ = _models(design, seed=2)
    start = np.concatenate([np.zeros(3), np.full(fast.J, 0.5)])
    a = maximize(fast, start)
    b = maximize(general, start)
    assert a.converged and b.converged
    _close(a.x, b.x, "estimates")
    _close(a.loglik, b.loglik, "maximum")
    _close(np.linalg.inv(-a.hessian), np.linalg.inv(-b.hessian), "covariance")


def test_far_in_the_tails_the_log_scale_keeps_both_paths_equal():
    """Linear predictors of several hundred make a row's likelihood underflow to 0 in the
    direct form; those rows are computed on the log scale, as the general path does."""
    fast, general, _ = _models(make_design("warner", p=0.8, dont_know=0.2), seed=3)
    for x in ([300.0, 200.0, -100.0], [-700.0, 50.0, 400.0]):
        value, gradient, hessian, _ = fast.evaluate(np.array(x))
        value_g, gradient_g, hessian_g, _ = general.evaluate(np.array(x))
        assert np.isfinite(value)
        _close(value, value_g, "log-likelihood")
        _close(gradient, gradient_g, "gradient")
        _close(hessian, hessian_g, "Hessian")


def test_one_pass_over_many_points_equals_one_pass_per_point():
    fast, _, _ = _models(make_design("sld", p=[0.2, 0.8], dont_know=0.1), seed=4)
    rng = np.random.default_rng(5)
    points = np.column_stack([rng.normal(size=(6, 3)), rng.uniform(0.2, 1.0, size=6)])
    together = fast.evaluate_points(points)
    _each_equals_its_single_point_pass(fast, points, together)
    gradient_only = fast.evaluate_points(points, hessian=False)
    for (_, g, _, _), (_, g_full, _, _) in zip(gradient_only, together, strict=True):
        _close(g, g_full, "gradient without the Hessian")


@pytest.mark.parametrize("mask", [[True, False, True, False, False, True],
                                  [False, False, False, False, False, True],
                                  [True, False, False, False, False, False]])
def test_hessians_for_some_points_only(mask):
    """One pass with Hessians for some points (a climb's step beside other starts' values and
    gradients): those points equal their single-point pass, Hessian included; the others have
    the same value and gradient and zero Hessians; results come back in the points' order."""
    fast, _, _ = _models(make_design("sld", p=[0.2, 0.8], dont_know=0.1), seed=12)
    rng = np.random.default_rng(13)
    points = np.column_stack([rng.normal(size=(6, 3)), rng.uniform(0.2, 1.0, size=6)])
    points[1, 0] = 80.0  # rows on the log scale for a point without a Hessian
    mixed = fast.evaluate_points(points, hessian=np.array(mask))
    for x, wanted, (value, gradient, hessian, largest) in zip(points, mask, mixed, strict=True):
        value_1, gradient_1, hessian_1, largest_1 = fast.evaluate(x)
        assert value == pytest.approx(value_1, rel=1e-13)
        _close(gradient, gradient_1, "gradient")
        assert largest == largest_1
        if wanted:
            _close(hessian, hessian_1, "Hessian")
        else:
            assert not np.any(hessian)


def test_chunks_of_rows_add_up_to_the_whole(monkeypatch):
    import surveykit.estimation.latent as latent

    fast, _, _ = _models(make_design("sld", p=[0.2, 0.8]), n=1000, seed=6)
    x = np.array([-0.3, 0.7, -0.5, 0.6])
    whole = fast.evaluate(x)
    monkeypatch.setattr(latent, "_CHUNK", 97)
    chunked = fast.evaluate(x)
    assert chunked[0] == pytest.approx(whole[0], rel=1e-13)
    _close(chunked[2], whole[2], "Hessian")


def test_matrix_products_in_blocks_of_rows_add_up_to_the_whole(monkeypatch):
    """Many points' products with Z run in blocks of rows (one BLAS thread each); blocks of
    64 rows give what one point's whole-chunk products give."""
    import surveykit.estimation.latent as latent

    fast, _, _ = _models(make_design("sld", p=[0.2, 0.8]), n=1000, seed=8)
    rng = np.random.default_rng(9)
    points = np.column_stack([rng.normal(size=(5, 3)), rng.uniform(0.2, 1.0, size=5)])
    monkeypatch.setattr(latent, "_ONE_THREAD", 1)
    _each_equals_its_single_point_pass(fast, points, fast.evaluate_points(points),
                                       exact_largest=True)


@pytest.mark.parametrize(("name", "parameters", "formula", "kind"), [
    ("sld", {"p": [0.2, 0.8]}, "rrt ~ x1", TwoStateModel),
    ("grr", {"p": 0.7, "categories": ["a", "b", "c"]}, "rrt ~ x1", LatentModel),
    ("cdm", {"p": [0.3, 0.7]}, "rrt ~ x1", LatentModel),
    ("warner", {"p": 0.8}, "y ~ rrt + x1", LatentModel),
])
def test_regress_takes_the_closed_form_only_for_two_states_as_the_outcome(name, parameters,
                                                                          formula, kind):
    design = make_design(name, **parameters)
    rng = np.random.default_rng(7)
    beta = [[0.2, -0.4], [0.8, -0.5], [-0.6, 0.3]] if name == "grr" else [0.2, 0.8, -0.6]
    frame = simulate_rows(design, n=2000, beta=beta, rng=rng, gamma=0.1,
                          outcome=("gaussian", [1.0, 2.0, -0.5], 1.5))
    group = "group" if len(design.group_names) > 1 else None
    fit = regression.regress(frame, formula, sensitive="rrt", design=design, group=group)
    assert type(fit.model) is kind


@pytest.mark.parametrize("rows_per_chunk", [1024, 64])
def test_many_points_over_two_threads_equal_one_pass_per_point(monkeypatch, rows_per_chunk):
    """Many points over enough rows: the two halves of the rows run in two threads and their
    sums are added. Forced here on 1,500 rows (one or many chunks a half): every point equals
    its own single-point pass, the halves' largest predictor is the larger, and two calls
    agree to the last bit (the halves are added in one order, whichever ends first)."""
    import surveykit.estimation.latent as latent

    fast, _, _ = _models(make_design("sld", p=[0.2, 0.8], dont_know=0.1), seed=10)
    rng = np.random.default_rng(11)
    points = np.column_stack([rng.normal(size=(7, 3)), rng.uniform(0.2, 1.0, size=7)])
    points[0, 1] = 60.0  # a predictor far out: rows on the log scale in one half or both
    monkeypatch.setattr(latent, "_SPLIT_ROWS", 1)
    monkeypatch.setattr(latent, "_BATCH_CELLS", rows_per_chunk * 10)
    assert latent._threads() is not None  # two cores here: the split path runs
    first = fast.evaluate_points(points)
    _each_equals_its_single_point_pass(fast, points, first, value_rel=1e-12)
    again = fast.evaluate_points(points)
    for one, other in zip(first, again, strict=True):
        assert one[0] == other[0] and np.array_equal(one[1], other[1])
        assert np.array_equal(one[2], other[2])


def _evaluate_in_child(model, points, out) -> None:
    out.put([value for value, *_ in model.evaluate_points(points)])


def test_a_forked_child_evaluates_many_points_with_a_thread_of_its_own(monkeypatch):
    """A process forked after the parent used the second thread (multiprocessing's default
    on Linux, joblib, a web server's workers) gets the pool but not its thread: without a
    pool of its own, its first split evaluation would wait forever."""
    import multiprocessing

    import surveykit.estimation.latent as latent

    fast, _, _ = _models(make_design("sld", p=[0.2, 0.8]), seed=12)
    points = np.column_stack([np.zeros((3, 3)), np.full(3, 0.7)])
    monkeypatch.setattr(latent, "_SPLIT_ROWS", 1)
    expected = [value for value, *_ in fast.evaluate_points(points)]  # the parent's thread
    context = multiprocessing.get_context("fork")
    out = context.Queue()
    child = context.Process(target=_evaluate_in_child, args=(fast, points, out))
    child.start()
    try:
        assert out.get(timeout=60) == expected
    finally:
        child.join(timeout=60)
        if child.is_alive():
            child.kill()
    assert child.exitcode == 0
