"""Meta-solvers: known answers, the name table, config options, plugins, OpenSpiel agreement."""

from __future__ import annotations

import numpy as np
import pytest

from light_league.agents.meta_solvers import (
    META_SOLVERS,
    MetaSolver,
    PRDOptions,
    build_meta_solver,
    resolve_meta_solver,
)
from light_league.config import load_config
from light_league.errors import ConfigError
from light_league.game_theory.meta_solvers import (
    alpharank,
    maxent_nash,
    nash,
    prd,
    qre,
    total_variation,
    uniform,
)

RPS = np.array([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]])
#: biased RPS: the unique Nash is (1/4, 1/2, 1/4)
BIASED_RPS = np.array([[0.0, -1.0, 2.0], [1.0, 0.0, -1.0], [-2.0, 1.0, 0.0]])
BIASED_NASH = np.array([0.25, 0.5, 0.25])
#: RPS with rock cloned: every (a, 1/3 - a, 1/3, 1/3) is a Nash; the maximum-entropy one splits rock
CLONED_RPS = np.array([[0, 0, -1, 1], [0, 0, -1, 1], [1, 1, 0, -1], [-1, -1, 1, 0]], dtype=float)


def win_rates(a: np.ndarray) -> np.ndarray:
    """A win-rate matrix P (P + P^T = 1) with the same meta-game as the antisymmetric ``a``."""
    return 0.5 + a / (2.0 * np.abs(a).max())


def dominated_game() -> np.ndarray:
    """Biased RPS plus a fourth member that loses to everybody (strictly dominated)."""
    a = np.zeros((4, 4))
    a[:3, :3] = BIASED_RPS
    a[:3, 3], a[3, :3] = 1.5, -1.5
    return a


def test_name_table() -> None:
    assert sorted(META_SOLVERS) == [
        "alpharank",
        "least_exploitable",
        "maxent_nash",
        "nash",
        "prd",
        "qre",
        "uniform",
    ]
    for name, solver in META_SOLVERS.items():
        assert solver.name == name and resolve_meta_solver(name) is solver


#: the solvers of the payoff table alone (a game solver also reads the members' policies)
TABLE_SOLVERS = sorted(name for name, solver in META_SOLVERS.items() if not solver.game)


@pytest.mark.parametrize("name", TABLE_SOLVERS)
def test_every_solver_returns_a_mixture_and_ignores_a_shift(name: str) -> None:
    solver = META_SOLVERS[name]
    options = PRDOptions(iterations=3000, dt=0.01) if name == "prd" else None
    p = win_rates(BIASED_RPS)
    x = solver(p, options)
    assert x.shape == (3,) and x.min() >= 0.0 and x.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(solver(p - 0.5, options), x, atol=1e-9)  # P and P - 0.5: same game


@pytest.mark.parametrize("name", TABLE_SOLVERS)
def test_rps_is_uniform_for_every_solver(name: str) -> None:
    options = PRDOptions(iterations=2000, dt=0.01) if name == "prd" else None
    np.testing.assert_allclose(META_SOLVERS[name](win_rates(RPS), options), np.full(3, 1 / 3), atol=1e-6)


def test_nash_and_maxent_nash_on_biased_rps() -> None:
    np.testing.assert_allclose(nash(BIASED_RPS), BIASED_NASH, atol=1e-9)
    np.testing.assert_allclose(maxent_nash(BIASED_RPS), BIASED_NASH, atol=1e-7)


def test_maxent_nash_is_the_centre_of_a_continuum_of_equilibria() -> None:
    x = maxent_nash(CLONED_RPS)
    np.testing.assert_allclose(x, [1 / 6, 1 / 6, 1 / 3, 1 / 3], atol=1e-6)
    # the LP gives a vertex of the same equilibrium set (all rock mass on one clone)
    lp = nash(CLONED_RPS)
    assert lp[0] + lp[1] == pytest.approx(1 / 3) and (CLONED_RPS.T @ lp).min() == pytest.approx(0.0, abs=1e-9)
    # every mixture is an equilibrium of the all-draws game: the maximum-entropy one is uniform
    np.testing.assert_allclose(maxent_nash(np.full((5, 5), 0.5)), np.full(5, 0.2), atol=1e-6)
    # three clones of paper: equal thirds of paper's 1/3
    three = np.array(
        [[0, -1, -1, -1, 1], [1, 0, 0, 0, -1], [1, 0, 0, 0, -1], [1, 0, 0, 0, -1], [-1, 1, 1, 1, 0]]
    )
    np.testing.assert_allclose(
        maxent_nash(three.astype(float)), [1 / 3, 1 / 9, 1 / 9, 1 / 9, 1 / 3], atol=1e-6
    )


def test_maxent_nash_is_an_equilibrium_on_random_games() -> None:
    rng = np.random.default_rng(3)
    for _ in range(10):
        n = int(rng.integers(3, 12))
        u = np.triu(rng.normal(size=(n, n)), 1)
        a = u - u.T
        x = maxent_nash(a)
        assert x.min() >= 0.0 and x.sum() == pytest.approx(1.0)
        assert (a.T @ x).min() >= -1e-7  # guarantees the value 0 of a symmetric zero-sum game
        ent = -(x[x > 0] * np.log(x[x > 0])).sum()
        lp = nash(a)
        assert ent >= -(lp[lp > 0] * np.log(lp[lp > 0])).sum() - 1e-7


def test_dominated_member_gets_nothing() -> None:
    a = dominated_game()
    for x in (nash(a), maxent_nash(a), qre(a, temperature=1e-3)):
        assert x[3] == pytest.approx(0.0, abs=1e-6)
        np.testing.assert_allclose(x[:3], BIASED_NASH, atol=5e-3)
    assert prd(a, iterations=20_000, dt=0.01)[3] < 0.01  # the average keeps the early, uniform iterates
    assert alpharank(win_rates(a))[3] < 1e-6


def test_qre_is_the_logit_fixed_point_and_tends_to_nash() -> None:
    a = win_rates(BIASED_RPS) - 0.5
    for t in (1.0, 0.1, 0.02):
        x = qre(a, temperature=t)
        logits = a @ x / t
        np.testing.assert_allclose(x, np.exp(logits) / np.exp(logits).sum(), atol=1e-8)
    np.testing.assert_allclose(qre(a, temperature=1e-3), BIASED_NASH, atol=1e-2)
    np.testing.assert_allclose(qre(a, temperature=100.0), np.full(3, 1 / 3), atol=1e-2)  # hot: uniform


def test_batched_solvers_match_one_by_one() -> None:
    rng = np.random.default_rng(0)
    stack = rng.uniform(size=(4, 5, 5))
    stack = np.triu(stack, 1) + np.tril(1.0 - np.swapaxes(np.triu(stack, 1), 1, 2), -1) + 0.5 * np.eye(5)
    for name in ("prd", "qre", "uniform"):
        solver = META_SOLVERS[name]
        assert solver.batched
        options = PRDOptions(iterations=500, dt=0.01) if name == "prd" else None
        batch = solver.solve_many(stack, options)
        # (a batch stops when its slowest member converges: agreement to the solver tolerance)
        np.testing.assert_allclose(batch, np.stack([solver(p, options) for p in stack]), atol=1e-7)
    assert uniform(stack).shape == (4, 5)


def test_total_variation() -> None:
    assert total_variation(np.array([1.0, 0.0]), np.array([0.0, 1.0])) == 1.0
    assert total_variation(np.array([0.5, 0.5]), np.array([0.5, 0.5])) == 0.0


# ---------------------------------------------------------------------------- config


def test_config_picks_a_solver_with_validated_options() -> None:
    cfg = load_config(None, ["league.meta_solver.name=prd", "league.meta_solver.iterations=10"])
    solver, options = build_meta_solver(cfg.league.meta_solver)
    assert solver is META_SOLVERS["prd"] and options == PRDOptions(iterations=10)
    shorthand = load_config(None, ["league.meta_solver=qre"])
    assert build_meta_solver(shorthand.league.meta_solver)[0] is META_SOLVERS["qre"]
    assert load_config(None).league.meta_solver == {"name": "nash"}


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ({"name": "nahs"}, "unknown meta-solver 'nahs'; did you mean nash?"),
        (
            {"name": "prd", "iteratons": 5},
            "league.meta_solver.iteratons: unknown key; did you mean iterations?",
        ),
        ({"name": "qre", "temperature": -1}, "league.meta_solver.temperature: -1 is invalid"),
        ({"name": "nash", "tol": 1}, "league.meta_solver.tol: unknown key"),
        ({"name": "no_such_module_xyz:f"}, "cannot import module 'no_such_module_xyz'"),
        ({"name": "numpy:not_there"}, "module 'numpy' has no 'not_there'"),
        ({"name": "numpy:pi"}, "is 3.14"),
    ],
)
def test_bad_solver_config_is_one_line(raw: dict[str, object], fragment: str) -> None:
    with pytest.raises(ConfigError) as excinfo:
        build_meta_solver(raw)
    assert fragment in str(excinfo.value)
    assert "\n" not in str(excinfo.value)


def test_module_function_plugin_with_and_without_options(
    tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pathlib import Path

    folder = Path(str(tmp_path))
    (folder / "my_solvers_for_test.py").write_text(
        "import numpy as np\n"
        "from light_league.config_base import Section\n"
        "def first(payoff):\n"
        "    out = np.zeros(len(payoff)); out[0] = 1.0; return out\n"
        "class LastOptions(Section):\n"
        "    weight: float = 1.0\n"
        "def last(payoff, *, weight):\n"
        "    out = np.full(len(payoff), 1.0 - weight); out[-1] = weight; return out / out.sum()\n"
        "last.Config = LastOptions\n"
    )
    monkeypatch.syspath_prepend(str(folder))
    solver, options = build_meta_solver({"name": "my_solvers_for_test:first"})
    assert isinstance(solver, MetaSolver)
    np.testing.assert_allclose(solver(np.full((3, 3), 0.5), options), [1.0, 0.0, 0.0])
    solver, options = build_meta_solver({"name": "my_solvers_for_test:last", "weight": 0.8})
    np.testing.assert_allclose(solver(np.full((3, 3), 0.5), options), [1 / 6, 1 / 6, 2 / 3])
    with pytest.raises(ConfigError, match="unknown key"):
        build_meta_solver({"name": "my_solvers_for_test:first", "weight": 0.5})


# ---------------------------------------------------------------------------- OpenSpiel


def random_tables(count: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        n = int(rng.integers(3, 9))
        u = np.triu(rng.uniform(size=(n, n)), 1)
        out.append(u + np.tril(1.0 - u.T, -1) + 0.5 * np.eye(n))
    return out


@pytest.mark.openspiel
def test_prd_agrees_with_openspiel_on_20_random_matrices() -> None:
    osprd = pytest.importorskip("open_spiel.python.algorithms.projected_replicator_dynamics")
    settings = {"iterations": 500, "dt": 0.01, "gamma": 1e-6}  # the same steps: equal to 1e-15 at any count
    worst = 0.0
    for k, p in enumerate(random_tables(20, seed=11)):
        a = p - 0.5 if k % 2 == 0 else np.random.default_rng(k).normal(size=p.shape)  # half general zero-sum
        ours = prd(a, **settings)
        theirs = osprd.projected_replicator_dynamics(
            [a, -a], prd_iterations=settings["iterations"], prd_dt=settings["dt"], prd_gamma=settings["gamma"]
        )[0]
        worst = max(worst, float(np.abs(ours - theirs).max()))
    assert worst < 1e-4


@pytest.mark.openspiel
@pytest.mark.parametrize(
    "settings",
    [{}, {"m": 10, "alpha": 5.0}, {"use_inf_alpha": True, "inf_alpha_eps": 0.01}],
    ids=["defaults", "m10_alpha5", "inf_alpha"],
)
def test_alpharank_agrees_with_openspiel_on_20_random_matrices(settings: dict[str, object]) -> None:
    osar = pytest.importorskip("open_spiel.python.egt.alpharank")
    worst = 0.0
    with np.errstate(over="ignore"):  # OpenSpiel's fixation formula overflows (harmlessly) at alpha 100
        for p in random_tables(20, seed=12):
            theirs = osar.compute([p], **settings)[2]
            worst = max(worst, float(np.abs(alpharank(p, **settings) - theirs).max()))  # type: ignore[arg-type]
    assert worst < 1e-4


def test_a_game_solver_without_the_game_is_named() -> None:
    with pytest.raises(ValueError, match="meta-solver 'least_exploitable' needs the members' game"):
        META_SOLVERS["least_exploitable"](win_rates(RPS))


@pytest.mark.openspiel
def test_least_exploitable_reads_the_policies_not_the_table() -> None:
    """Its mixture is the game tree's least exploitable one, whatever the table says."""
    pytest.importorskip("pyspiel")
    from light_league.algorithms import game_tree
    from light_league.algorithms.tabular import TabularPolicy
    from light_league.evaluation.evaluation_manager import MemberGame

    table = game_tree.infostate_table("kuhn_poker")
    obs, mask = np.concatenate(table.obs), np.concatenate(table.mask)
    rng = np.random.default_rng(0)
    policies = [TabularPolicy(obs, rng.dirichlet(np.ones(2), size=len(mask))) for _ in range(3)]
    expected = game_tree.least_exploitable("kuhn_poker", policies).weights
    solver = META_SOLVERS["least_exploitable"]
    for payoff in (win_rates(RPS), win_rates(BIASED_RPS)):
        x = solver(payoff, None, game=MemberGame("kuhn_poker", policies))
        np.testing.assert_array_equal(x, expected)
    assert game_tree.nash_conv("kuhn_poker", policies, expected) <= 1e-9 + min(
        game_tree.nash_conv("kuhn_poker", p) for p in policies
    )
