"""The exploitability probe and the head-to-head scorer, against answers known exactly.

* ``head_to_head`` on rock-paper-scissors: pure strategies give exact scores, seats alternate, an
  opponent mixture is drawn per game by its weights, the intervals hold the mean;
* ``match`` plays the benchmarks' protocol to the game: the first half of the games in seat 0,
  the rest in seat 1, on an episode loop seeded with its seed;
* ``exact_values``: the best response's payoff against a mixture, averaged over the seats, is
  NashConv / 2 in a zero-sum game, and the exact best response itself reaches it;
* the probe against a fixed exploitable Kuhn policy (always bet) reaches most of the exact gain
  at a small budget, and its JSON has every documented field.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from fixed_policies import Pure

from light_league import envs
from light_league.build import probe_settings
from light_league.config import load_config
from light_league.evaluation.probe import Probe, ProbeTarget, exact_values, probe_path, save_probe
from light_league.rollout.episode import EpisodeLoop
from light_league.rollout.head_to_head import FOCAL, head_to_head, match

ROOT = Path(__file__).resolve().parents[2]


ROCK, PAPER, SCISSORS = 0, 1, 2


def test_head_to_head_scores_pure_strategies_exactly_and_alternates_seats() -> None:
    env = envs.make_batched("rps", num_envs=16)
    won = head_to_head(env, Pure(PAPER), {"rock": Pure(ROCK)}, {"rock": 1.0}, 101, seed=3)
    assert (won.games, won.wins, won.draws, won.losses) == (101, 101, 0, 0)
    assert won.score == 1.0 and won.score_ci95[1] == 1.0 and 0.97 < won.score_ci95[0] < 1.0
    assert won.payoff > 0 and won.payoff_ci95 == (won.payoff, won.payoff)  # every game the same
    lost = head_to_head(env, Pure(ROCK), {"paper": Pure(PAPER)}, {"paper": 1.0}, 40, seed=3)
    assert lost.score == 0.0 and lost.payoff == -won.payoff
    drawn = head_to_head(env, Pure(ROCK), {"rock": Pure(ROCK)}, {"rock": 1.0}, 40, seed=3)
    assert drawn.score == 0.5 and drawn.draws == 40 and drawn.payoff == 0.0


def test_head_to_head_draws_the_opponent_per_game_by_weight() -> None:
    env = envs.make_batched("rps", num_envs=64)
    opponents = {"rock": Pure(ROCK), "scissors": Pure(SCISSORS)}
    result = head_to_head(env, Pure(PAPER), opponents, {"rock": 3.0, "scissors": 1.0}, 2000, seed=0)
    assert sum(result.opponents.values()) == 2000
    share = result.opponents["rock"] / 2000
    assert abs(share - 0.75) < 0.03  # about 4 standard deviations
    assert result.score == pytest.approx(share)  # paper beats rock, loses to scissors
    low, high = result.score_ci95
    assert low < 0.75 < high


def test_head_to_head_refuses_what_it_cannot_score() -> None:
    env = envs.make_batched("rps", num_envs=4)
    with pytest.raises(ValueError, match="at least 1"):
        head_to_head(env, Pure(ROCK), {"r": Pure(ROCK)}, {"r": 1.0}, 0, seed=0)
    with pytest.raises(ValueError, match="focal"):
        head_to_head(env, Pure(ROCK), {FOCAL: Pure(ROCK)}, {FOCAL: 1.0}, 4, seed=0)
    with pytest.raises(ValueError, match="positive weight"):
        head_to_head(env, Pure(ROCK), {"r": Pure(ROCK)}, {"r": 0.0}, 4, seed=0)


class Uniform:
    """Every legal action alike (the games' outcomes then depend on the loop's seed only)."""

    def log_probs(self, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray) -> np.ndarray:
        return np.where(mask, -np.log(mask.sum(1, keepdims=True)), -np.inf)


def test_match_plays_half_the_games_in_each_seat_on_a_loop_seeded_with_its_seed() -> None:
    env = envs.make_batched("rps", num_envs=8)
    result = match(env, Uniform(), Uniform(), 101, seed=7)
    played = EpisodeLoop(env, seed=7).evaluate(
        {"a": Uniform(), "b": Uniform()}, [("a", "b", 50), ("b", "a", 51)]
    )
    score = np.mean([r.outcome if r.player_id == "a" else 1.0 - r.outcome for r in played.results])
    assert result.games == 101 and result.opponents == {"opponent": 101}
    assert result.score == score and result.wins + result.draws + result.losses == 101
    assert match(env, Uniform(), Uniform(), 101, seed=8).score != score
    won = match(env, Pure(PAPER), Pure(ROCK), 9, seed=0)
    assert (won.score, won.wins) == (1.0, 9) and won.score_ci95[1] == 1.0
    with pytest.raises(ValueError, match="at least 1"):
        match(env, Pure(ROCK), Pure(ROCK), 0, seed=0)


@pytest.mark.openspiel
def test_exact_best_response_payoff_is_half_the_nash_conv() -> None:
    pytest.importorskip("pyspiel")
    from light_league.algorithms import game_tree

    bet, check = Pure(1), Pure(0)
    weights = {"bet": 0.3, "check": 0.7}
    opponents = {"bet": bet, "check": check}
    best, probe = exact_values("kuhn_poker", bet, opponents, weights)  # type: ignore[misc]
    assert best == pytest.approx(game_tree.nash_conv("kuhn_poker", [bet, check], [0.3, 0.7]) / 2, abs=1e-6)
    mixture = game_tree.mixture_policy("kuhn_poker", [bet, check], [0.3, 0.7])
    response = [game_tree.best_response("kuhn_poker", mixture, None, p)[0] for p in (0, 1)]
    seat0 = game_tree.expected_payoff("kuhn_poker", response[0], mixture)
    seat1 = -game_tree.expected_payoff("kuhn_poker", mixture, response[1])
    assert best == pytest.approx(0.5 * (seat0 + seat1), abs=1e-6)
    assert probe < best
    assert exact_values("rps", bet, opponents, weights) is None  # no exact evaluator


@pytest.mark.slow  # a learning threshold: trains a learner, then checks it reached a bar
@pytest.mark.openspiel
def test_probe_finds_most_of_the_gain_against_always_bet_on_kuhn(tmp_path: Path) -> None:
    """A fresh MAPPO learner with league_kuhn.yaml's probe settings, 20,000 env steps against a
    policy that always bets, best of two restarts: its exact payoff is at least 80% of the best
    response's (measured: 97%), and its payoff over 4,000 fresh games agrees with the exact one."""
    pytest.importorskip("pyspiel")
    config = load_config(ROOT / "expr_configs" / "league_kuhn.yaml", ["evaluation.probe.restarts=2"])
    probe = Probe("kuhn_poker", {}, probe_settings(config, env_steps=20_000, games=4000))
    steps: list[int] = []
    result = probe.run(
        ProbeTarget("always_bet", 3, {"bet": 1.0}),
        {"bet": Pure(1)},
        seed=0,
        progress=lambda done, total: steps.append(done),
    )
    assert result.best_response_payoff == pytest.approx(1 / 3, abs=1e-9)
    assert result.probe_payoff_exact is not None and result.probe_payoff_exact >= 0.8 / 3
    low, high = result.probe_payoff_ci95
    assert low <= result.probe_payoff_exact <= high
    assert result.probe_win_rate is None and result.probe_win_rate_ci95 is None  # a chip game
    assert steps[-1] == 40_000 and result.env_steps >= 20_000 and result.games == 4000
    assert len(result.restart_readings) == 2  # each restart's payoff over its own selection games
    path = save_probe(tmp_path, result)
    assert path == probe_path(tmp_path, "always_bet", 3) == tmp_path / "exploit" / "always_bet_gen3.json"
    saved = json.loads(path.read_text())
    assert set(saved) >= {
        "target",
        "generation",
        "weights",
        "env_steps",
        "games",
        "probe_payoff",
        "probe_payoff_ci95",
        "probe_win_rate",
        "best_response_payoff",
    }
    assert saved["target"] == "always_bet" and saved["weights"] == {"bet": 1.0}
    assert saved["learner"]["kind"] == "mappo" and saved["learner"]["config"]["num_mini_batch"] == 4


def test_probe_settings_take_the_role_and_decay_over_the_probes_own_updates() -> None:
    config = load_config(
        ROOT / "expr_configs" / "league_leduc.yaml",
        ["evaluation.probe.num_envs=100", "evaluation.probe.steps_per_update=10"],
    )
    settings = probe_settings(config, env_steps=50_000)
    mappo = settings.learner_config.model_dump()
    assert mappo["clip_param"] == 0.2  # the main exploiter's, from learner.mappo_by_role
    assert mappo["entropy_coef"] == 0.05 and mappo["lr"] == 0.002  # evaluation.probe.learner over it
    assert mappo["lr_decay_updates"] == 50  # 50,000 steps / (100 games x 10 steps)
    plain = probe_settings(load_config(ROOT / "expr_configs" / "league.yaml", []))
    assert (plain.num_envs, plain.steps_per_update) == (64, 50)  # the run's 2 workers x 32 games x 50 steps
    assert plain.learner_config.model_dump()["lr_schedule"] == "constant"


def test_probe_plays_and_trains_recurrent_policies() -> None:
    """Against a recurrent target on recall, the probe of league_recall.yaml's settings is recurrent
    too; both carry their states through training and the evaluation games."""
    from light_league.algorithms.base import hidden_dim
    from light_league.algorithms.mappo import MAPPOLearner

    config = load_config(ROOT / "expr_configs" / "league_recall.yaml", [])
    settings = probe_settings(config, env_steps=2048, games=64)
    spec = envs.make_batched("recall", 1).spec
    target = MAPPOLearner(spec, config.learner.mappo, seed=1).policy
    assert hidden_dim(target) > 0
    result = Probe("recall", {}, settings).run(
        ProbeTarget("target", 0, {"target": 1.0}), {"target": target}, seed=0
    )
    assert result.learner["config"]["recurrent"]["cell"] == "gru" and result.env_steps >= 2048
    assert result.games == 64 and result.probe_win_rate is not None


class _Fixed:
    """Fixed action probabilities (one row repeated), illegal actions masked out."""

    def __init__(self, probs: list[float]) -> None:
        self.logp = np.log(np.asarray(probs, dtype=np.float32))

    def log_probs(self, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray) -> np.ndarray:
        return np.where(mask, np.broadcast_to(self.logp, mask.shape), -np.inf).astype(np.float32)


def test_greedy_plays_the_most_probable_legal_action_and_passes_nan_on() -> None:
    from light_league.evaluation.probe import greedy

    policy = greedy(_Fixed([0.2, 0.5, 0.3]))
    mask = np.array([[True, True, True], [True, False, True], [True, False, False]])
    logp = policy.log_probs(np.zeros((3, 1)), mask, np.zeros(3, dtype=np.int64))
    assert logp.dtype == np.float32
    assert np.argmax(logp, axis=1).tolist() == [1, 2, 0]  # the mode among the legal actions
    assert np.isfinite(logp).sum(axis=1).tolist() == [1, 1, 1] and np.exp(logp).sum(axis=1).tolist() == [
        1,
        1,
        1,
    ]
    broken = greedy(_Fixed([np.nan, 0.5, 0.5])).log_probs(
        np.zeros((1, 1)), mask[:1], np.zeros(1, dtype=np.int64)
    )
    assert np.isnan(broken).any()  # left for the episode loop's non-finite check to name


def test_greedy_recurrent_policy_keeps_its_memory() -> None:
    from light_league.algorithms.base import hidden_dim
    from light_league.algorithms.mappo import MAPPOLearner
    from light_league.evaluation.probe import GreedyRecurrentPolicy, greedy

    config = load_config(ROOT / "expr_configs" / "league_recall.yaml", [])
    spec = envs.make_batched("recall", 1).spec
    inner = MAPPOLearner(spec, config.learner.mappo, seed=1).policy
    policy = greedy(inner)
    assert isinstance(policy, GreedyRecurrentPolicy) and hidden_dim(policy) == hidden_dim(inner) > 0
    obs = np.random.default_rng(0).normal(size=(4, spec.obs_dim)).astype(np.float32)
    mask = np.ones((4, spec.num_actions), dtype=bool)
    idx = np.zeros(4, dtype=np.int64)
    hidden = np.zeros((4, hidden_dim(inner)), dtype=np.float32)
    logp, after = policy.step_log_probs(obs, mask, idx, hidden)
    want, want_after = inner.step_log_probs(obs, mask, idx, hidden)
    np.testing.assert_array_equal(after, want_after)
    assert np.argmax(logp, axis=1).tolist() == np.argmax(want, axis=1).tolist()


@pytest.mark.slow  # a learning threshold: trains a learner, then checks it reached a bar
def test_a_greedy_probe_scores_its_mode_and_says_so() -> None:
    """``evaluation.probe.play=greedy``: against always-bet on Kuhn the probe's evaluation games
    are played by its mode (a pure strategy), and the reading names how it played."""
    pytest.importorskip("pyspiel")
    config = load_config(ROOT / "expr_configs" / "league_kuhn.yaml", ["evaluation.probe.play=greedy"])
    settings = probe_settings(config, env_steps=20_000, games=2000)
    assert settings.play == "greedy"
    result = Probe("kuhn_poker", {}, settings).run(
        ProbeTarget("always_bet", 0, {"bet": 1.0}), {"bet": Pure(1)}, seed=0
    )
    assert result.learner["play"] == "greedy"
    assert result.probe_payoff_exact is not None and result.probe_payoff_exact >= 0.8 / 3
    low, high = result.probe_payoff_ci95
    assert low <= result.probe_payoff_exact <= high
