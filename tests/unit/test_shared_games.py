"""Shared games (``evaluation.shared_games``): every cell of a payoff table from one set of uniformly
random games, reweighted per member. Checked against the members' exact payoffs (Kuhn, Leduc and a
matrix game), for the played table's win-rate layout, determinism, and what a run records."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from fixed_policies import Pure, random_tabular

from light_league import envs
from light_league.envs.matrix_games import BIASED_RPS
from light_league.envs.parallel import UniformRandomPolicy
from light_league.evaluation.shared_games import SharedGames

pytest.importorskip("pyspiel")

from light_league.algorithms import game_tree as ex

ROOT = Path(__file__).resolve().parents[2]


class Fixed:
    """The same mixed action everywhere (a matrix-game strategy)."""

    def __init__(self, probs: list[float]) -> None:
        self.probs = np.array(probs)

    def log_probs(self, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):  # a pure strategy: log 0 = -inf off its action
            return np.log(np.broadcast_to(self.probs, mask.shape)).astype(np.float32)


def shared(env: str, games: int, seed: int = 0, behaviour: str = "estimated") -> SharedGames:
    return SharedGames(lambda n: envs.make_batched(env, n), games, seed, behaviour=behaviour)


@pytest.fixture(scope="module")
def kuhn_pool() -> SharedGames:
    return shared("kuhn_poker", 400_000)


@pytest.fixture(scope="module")
def kuhn_uniform() -> SharedGames:
    """The same games, weighted by the uniform choice that played them (ordinary importance sampling)."""
    return shared("kuhn_poker", 400_000, behaviour="uniform")


def test_kuhn_values_match_the_exact_payoffs(kuhn_pool: SharedGames) -> None:
    """Every cell of five members (three random strategies, a pure one, uniform play) is within a
    few hundredths of a chip of its exact value; one set of games serves all 25 cells."""
    spec = envs.make_batched("kuhn_poker", 1).spec
    members = {f"r{k}": random_tabular("kuhn_poker", k) for k in range(3)}
    members["first"] = Pure(0)  # a pure strategy: log-probability -inf on the other action
    members["uniform"] = UniformRandomPolicy(spec)  # type: ignore[assignment]
    values = kuhn_pool.values(members)
    exact = ex.expected_payoff_matrix("kuhn_poker", list(members.values()), list(members.values()))
    assert values.shape == (5, 5)
    assert np.abs(values - exact).max() < 0.03, np.abs(values - exact).max()
    # twelve information states and 30 distinct games make up Kuhn's pool
    assert kuhn_pool.distinct_games == 30 and len(kuhn_pool.rows_obs) == 12
    assert kuhn_pool.counts.sum() == 400_000


def test_uniform_play_keeps_every_game(kuhn_uniform: SharedGames) -> None:
    """Weighted by the uniform choice, the behaviour policy itself has weight 1 on every game: its
    value is the pool's mean return, and it keeps all the games as effective games."""
    spec = envs.make_batched("kuhn_poker", 1).spec
    uniform = {"u": UniformRandomPolicy(spec)}
    value = kuhn_uniform.values(uniform)[0, 0]  # type: ignore[arg-type]
    assert value == pytest.approx(kuhn_uniform.return_sum.sum() / kuhn_uniform.games)
    assert kuhn_uniform.effective_games(["u"]) == pytest.approx(400_000)
    with pytest.raises(ValueError, match="behaviour 'learned' is not one of uniform, estimated"):
        shared("kuhn_poker", 10, behaviour="learned")


def test_the_estimated_behaviour_is_each_historys_action_shares(kuhn_pool: SharedGames) -> None:
    """``estimated``: at each decision the weights divide by the share of the games reaching the
    same history that took that action. At the first decision (seat 0 sees its card) that is the
    action's share among the games dealt that card: about a half, not exactly; and over the
    actions the shares of one history sum to 1."""
    h, a = kuhn_pool.histories, kuhn_pool.num_actions
    first = h[:, 0]
    row, action = first // (2 * a), (first // 2) % a
    for r in np.unique(row):
        for b in range(a):
            took = (row == r) & (action == b)
            share = kuhn_pool.counts[took].sum() / kuhn_pool.counts[row == r].sum()
            assert np.allclose(np.exp(kuhn_pool._log_mu[took, 0]), share)
            assert share != 0.5 and share == pytest.approx(0.5, abs=0.01)
    # the second decision: the shares over the actions taken after one history sum to one
    prefix = {tuple(g[:1]) + (g[1] // (2 * a),) for g in h if g[1] >= 0}
    for key in prefix:
        on = [i for i, g in enumerate(h) if g[1] >= 0 and tuple(g[:1]) + (g[1] // (2 * a),) == key]
        shares = {int(h[i, 1]): float(np.exp(kuhn_pool._log_mu[i, 1])) for i in on}
        assert sum(shares.values()) == pytest.approx(1.0)


def test_the_estimated_behaviour_cancels_the_action_draws_luck(
    kuhn_pool: SharedGames, kuhn_uniform: SharedGames
) -> None:
    """On the same games, the table the meta-solver reads (each cell the row's mean over both
    seats) is nearer the exact payoffs with the estimated behaviour than with the uniform weights,
    on each of three independent sets of games, and less than half as far over the three (rms over
    the cells; five fixed strategies). Seeds far apart: a poker env seeded ``s`` deals its ``b``-th
    game stream from ``s + b``, so nearby pool seeds share their deals."""
    members = {f"r{k}": random_tabular("kuhn_poker", k) for k in range(5)}
    pols = list(members.values())
    seat0 = ex.expected_payoff_matrix("kuhn_poker", pols, pols)
    exact = (seat0 - seat0.T) / 2
    pools = [(kuhn_pool, kuhn_uniform)]
    pools += [
        (shared("kuhn_poker", 100_000, s), shared("kuhn_poker", 100_000, s, "uniform"))
        for s in (10**7, 2 * 10**7)
    ]
    errors = []
    for estimated, uniform in pools:
        pair = []
        for pool in (estimated, uniform):
            v = pool.values(members)
            pair.append(float(np.sqrt(np.mean(((v - v.T) / 2 - exact) ** 2))))
        assert pair[0] < pair[1], pair
        errors.append(pair)
    est, uni = np.sum(errors, axis=0)
    assert est < 0.5 * uni, errors


def test_rates_are_a_played_tables_layout(kuhn_pool: SharedGames) -> None:
    """Win rates in [0, 1], both seats weighted alike: ``rates + rates.T == 1``, 0.5 on the diagonal,
    and the row member's mean outcome over both seats (chips mapped from Kuhn's [-2, 2])."""
    members = {f"r{k}": random_tabular("kuhn_poker", k) for k in range(3)}
    rates = kuhn_pool.rates(members)
    values = kuhn_pool.values(members)
    assert np.allclose(rates + rates.T, 1.0) and np.allclose(np.diag(rates), 0.5)
    lo, hi = kuhn_pool.score_range  # a poker outcome is the chips mapped linearly from [lo, hi]
    assert rates[0, 1] == pytest.approx(0.5 + (values[0, 1] - values[1, 0]) / (2 * (hi - lo)))
    kuhn_pool.forget(["r0"])
    assert kuhn_pool.effective_games() == kuhn_pool.effective_games(["r0"]) < kuhn_pool.games


def test_the_seed_fixes_the_games() -> None:
    a, b, c = shared("kuhn_poker", 5_000, 3), shared("kuhn_poker", 5_000, 3), shared("kuhn_poker", 5_000, 4)
    assert np.array_equal(a.histories, b.histories) and np.array_equal(a.counts, b.counts)
    assert not (np.array_equal(a.histories, c.histories) and np.array_equal(a.counts, c.counts))
    with pytest.raises(ValueError, match="at least 1 game"):
        shared("kuhn_poker", 0)


def test_leduc_and_a_matrix_game() -> None:
    """Leduc (up to eight decisions a game, 936 information states) and biased RPS (both seats
    move at once): the estimates are near the exact values."""
    leduc = shared("leduc_poker", 100_000)  # max error 0.011 here (0.012 with 300,000 games)
    members = [random_tabular("leduc_poker", k) for k in range(2)]
    values = leduc.values({"a": members[0], "b": members[1]})
    exact = ex.expected_payoff_matrix("leduc_poker", members, members)
    assert np.abs(values - exact).max() < 0.15, (values, exact)
    assert len(leduc.rows_obs) == 936
    rps = shared("biased_rps", 100_000)
    mixed = {"a": Fixed([0.2, 0.5, 0.3]), "b": Fixed([0.6, 0.1, 0.3])}
    got = rps.values(mixed)  # type: ignore[arg-type]
    payoff = np.array(BIASED_RPS)
    p = np.array([mixed["a"].probs, mixed["b"].probs])
    assert np.abs(got - p @ payoff @ p.T).max() < 0.03, (got, p @ payoff @ p.T)
    # a win / draw / loss game's rates are win rates (a win 1, a draw 0.5), not mapped chips
    wins = {"a": Fixed([1.0, 0.0, 0.0]), "b": Fixed([0.0, 1.0, 0.0])}
    plain = shared("rps", 20_000)
    assert plain.rates(wins)[0, 1] == pytest.approx(0.0, abs=0.03)  # rock loses to paper every game


@pytest.mark.integration
def test_a_run_reads_its_meta_strategy_from_the_shared_games(
    tmp_path: Path, tiny_kuhn_overrides: list[str]
) -> None:
    """A tiny Kuhn league with ``evaluation.shared_games`` weighted by the estimated behaviour:
    every generation records the effective games, the meta-strategy is a mixture of the members,
    and the played table is still there; the run's saved config keeps the behaviour."""
    import json

    from light_league.cli import main

    run = tmp_path / "run"
    argv = ["--config", str(ROOT / "expr_configs" / "league_kuhn.yaml"), "--run-dir", str(run)]
    shared = ["evaluation.shared_games=20000", "evaluation.shared_games_behaviour=estimated"]
    assert main([*argv, *tiny_kuhn_overrides, *shared, "logging.console=quiet"]) == 0
    assert "shared_games_behaviour: estimated" in (run / "config.yaml").read_text()
    records = [json.loads(line) for line in (run / "generations.jsonl").read_text().splitlines()]
    assert len(records) == 3
    for record in records:
        assert 0 < record["shared_effective_games"] <= 20000
        assert sum(record["meta_strategy"].values()) == pytest.approx(1.0, abs=1e-6)
        assert record["games"]["eval"] > 0  # the played evaluation still feeds the table and the ratings


def test_recurrent_policies_are_refused() -> None:
    from light_league.build import validate
    from light_league.config import load_config
    from light_league.errors import ConfigError

    config = load_config(
        str(ROOT / "expr_configs" / "rps_tiny.yaml"),
        ["evaluation.shared_games=1000", "learner.mappo.recurrent.cell=gru"],
    )
    with pytest.raises(
        ConfigError, match=r"evaluation.shared_games needs feed-forward policies.*shared_games=0"
    ):
        validate(config)
