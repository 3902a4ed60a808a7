"""The exploitability probe: how much a fresh learner wins against a frozen target.

A league hands its user a policy (its newest main agent) or a mixture of members (the
meta-strategy). How exploitable that output is has an exact answer only where a best response
can be computed over the game tree (Kuhn, Leduc); on any other game the probe answers it the way
an adversary would: a fresh learner of the run's own kind trains against the frozen target for a
budget of env steps (the target's member drawn per episode by its weight, the learner's seat per
episode), then plays fresh evaluation games against it, seats alternated. Its mean payoff and win
rate, with 95% intervals, are the probe's reading: a lower bound on what a best response wins.
Where the env has an exact evaluator the exact best response's payoff against the same target is
reported beside it, which is how the probe itself is checked (docs/evaluation.md).

The probe is a plain class over policies: the ``exploit`` command feeds it members read from a run
directory, the Runner members pulled from the PolicyServer (``evaluation.probe``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from light_league import envs
from light_league.algorithms.base import Learner, Policy, RecurrentPolicy, hidden_dim
from light_league.algorithms.registry import make_learner
from light_league.config_base import Section
from light_league.rollout.episode import EpisodeLoop
from light_league.rollout.head_to_head import head_to_head
from light_league.seeding import derive_seed
from light_league.utils.atomic import atomic_write_json


@dataclass(frozen=True)
class ProbeTarget:
    """What the probe plays against: a name (``main``, ``meta`` or a member id), the generation it
    was read at, and the members with their weights (an episode's opponent is drawn by them)."""

    name: str
    generation: int
    weights: dict[str, float]


@dataclass
class ProbeResult:
    """One probe's reading (``RUN_DIR/exploit/<target>_gen<G>.json``)."""

    target: str
    generation: int
    weights: dict[str, float]
    env_steps: int
    games: int
    #: the probe's mean payoff per game against the target (its seat's episode return)
    probe_payoff: float
    probe_payoff_ci95: list[float]
    #: wins + draws / 2 from the probe's side; None where the env has no win/loss outcome
    probe_win_rate: float | None
    probe_win_rate_ci95: list[float] | None
    #: the exact best response's mean payoff against the target, seats alternated (Kuhn, Leduc)
    best_response_payoff: float | None
    #: the probe's exact expected payoff against the target, seats alternated (Kuhn, Leduc)
    probe_payoff_exact: float | None
    seed: int
    seconds: float
    #: the probe's learner: kind, its settings, games per batch and steps per update
    learner: dict[str, Any] = field(default_factory=dict)
    #: ``[env_steps, mean payoff of its training games since the last point]`` along training
    curve: list[list[float]] = field(default_factory=list)
    #: with ``restarts``: each learner's win rate (else payoff) over its selection games
    restart_readings: list[float] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def headline(self) -> float:
        """The figure a user reads: the win rate where the env has one, else the payoff."""
        return self.probe_win_rate if self.probe_win_rate is not None else self.probe_payoff


@dataclass(frozen=True)
class ProbeSettings:
    """How a probe trains and scores: the learner (kind, class and config), the rollout shape and budgets."""

    learner_kind: str
    learner: type[Learner]
    learner_config: Section
    num_envs: int
    steps_per_update: int
    env_steps: int
    games: int
    #: learners trained from different seeds; the best on its own games is scored again
    restarts: int = 1
    #: how the trained probe plays its evaluation games: ``sample`` (from its action
    #: probabilities, as it trained) or ``greedy`` (its most probable legal action)
    play: str = "sample"

    def describe(self) -> dict[str, Any]:
        return {
            "kind": self.learner_kind,
            "config": self.learner_config.model_dump(mode="json"),
            "num_envs": self.num_envs,
            "steps_per_update": self.steps_per_update,
            "restarts": self.restarts,
            "play": self.play,
        }


#: ``progress(env_steps_done, env_steps_total)`` while the probe trains
Progress = Callable[[int, int], None]


class Probe:
    """Trains a fresh learner against a frozen target and scores it (one call per reading)."""

    def __init__(self, env_name: str, env_options: Mapping[str, Any], settings: ProbeSettings) -> None:
        self.env_name = env_name
        self.env_options = dict(env_options)
        self.settings = settings

    def run(
        self,
        target: ProbeTarget,
        policies: Mapping[str, Policy],
        *,
        seed: int,
        progress: Progress | None = None,
    ) -> ProbeResult:
        """Train, then score, a probe against ``target`` (``policies`` holds each member's policy).

        With ``restarts`` above 1, that many learners train from different seeds, each plays
        ``games`` games against the target, and the best of them is scored again on fresh games
        (the reported reading: selected on other games, so not biased upward by the choice)."""
        s = self.settings
        start = time.perf_counter()
        weights = {k: float(w) for k, w in target.weights.items() if w > 0}
        opponents = {k: policies[k] for k in weights}
        env = envs.make_batched(self.env_name, num_envs=min(s.games, 256), **self.env_options)
        try:
            trials: list[tuple[float, Learner, int, list[list[float]]]] = []
            for k in range(s.restarts):
                shifted = (
                    None
                    if progress is None
                    else _shifted(progress, k * s.env_steps, s.restarts * s.env_steps)
                )
                learner, env_steps, curve = self.train(
                    opponents, weights, seed if k == 0 else derive_seed(seed, "restart", k), shifted
                )
                reading = 0.0
                if s.restarts > 1:
                    trial = head_to_head(
                        env,
                        self.playing(learner.policy),
                        opponents,
                        weights,
                        s.games,
                        seed=derive_seed(seed, "select", k),
                    )
                    reading = trial.score if env.spec.win_loss else trial.payoff
                trials.append((reading, learner, env_steps, curve))
            chosen = max(range(len(trials)), key=lambda k: trials[k][0])
            _, learner, env_steps, curve = trials[chosen]
            probe = self.playing(learner.policy)
            games = head_to_head(env, probe, opponents, weights, s.games, seed=derive_seed(seed, "score"))
        finally:
            env.close()
        win_loss = env.spec.win_loss
        exact = exact_values(self.env_name, probe, opponents, weights)
        return ProbeResult(
            target=target.name,
            generation=target.generation,
            weights=weights,
            env_steps=env_steps,
            games=games.games,
            probe_payoff=games.payoff,
            probe_payoff_ci95=list(games.payoff_ci95),
            probe_win_rate=games.score if win_loss else None,
            probe_win_rate_ci95=list(games.score_ci95) if win_loss else None,
            best_response_payoff=None if exact is None else exact[0],
            probe_payoff_exact=None if exact is None else exact[1],
            seed=seed,
            seconds=round(time.perf_counter() - start, 3),
            learner=s.describe(),
            curve=curve,
            restart_readings=[round(t[0], 6) for t in trials] if s.restarts > 1 else [],
        )

    def playing(self, policy: Policy) -> Policy:
        """The policy the trained learner's ``policy`` plays its evaluation games with (``play``)."""
        return greedy(policy) if self.settings.play == "greedy" else policy

    def train(
        self,
        opponents: Mapping[str, Policy],
        weights: Mapping[str, float],
        seed: int,
        progress: Progress | None,
    ) -> tuple[Learner, int, list[list[float]]]:
        """A fresh learner trained against the mixture ``weights`` of ``opponents``, the env steps
        it trained and its training curve (``ProbeResult.curve``)."""
        s = self.settings
        env = envs.make_batched(self.env_name, num_envs=s.num_envs, **self.env_options)
        try:
            learner = make_learner(
                s.learner, env.spec, s.learner_config, seed=derive_seed(seed, "probe_learner")
            )
            loop = EpisodeLoop(env, seed=derive_seed(seed, "probe_rollout"))
            done = 0
            curve: list[list[float]] = []
            returns: list[float] = []
            every = max(s.env_steps // 20, 1)
            mark = every
            while done < s.env_steps:
                res = loop.collect(learner.policy, opponents, weights, s.steps_per_update, learner_id="probe")
                learner.update(res.batch)
                done += res.env_steps
                returns.extend(r.player_return for r in res.results)
                if done >= mark or done >= s.env_steps:
                    curve.append([float(done), float(np.mean(returns)) if returns else float("nan")])
                    returns, mark = [], done + every
                if progress is not None:
                    progress(min(done, s.env_steps), s.env_steps)
            return learner, done, curve
        finally:
            env.close()


class GreedyPolicy:
    """A policy's mode: its most probable legal action, always (the first where several tie).

    A best response never needs to mix, so a probe may hand over its trained policy's mode: on
    battalion that plays ``scripted_l5`` better than sampling does (docs/evaluation.md)."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy

    def log_probs(self, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray) -> np.ndarray:
        return _mode(self.policy.log_probs(obs, mask, agent_idx))


class GreedyRecurrentPolicy(GreedyPolicy):
    """The mode of a recurrent policy; its hidden states advance as the policy's own."""

    def __init__(self, policy: RecurrentPolicy) -> None:
        super().__init__(policy)  # type: ignore[arg-type]  # a recurrent policy plays log_probs too
        self.recurrent = policy

    @property
    def hidden_dim(self) -> int:
        return self.recurrent.hidden_dim

    def step_log_probs(
        self, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray, hidden: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        logp, after = self.recurrent.step_log_probs(obs, mask, agent_idx, hidden)
        return _mode(logp), after


def greedy(policy: Policy) -> Policy:
    """``policy``'s mode (:class:`GreedyPolicy`, or :class:`GreedyRecurrentPolicy` for a policy
    with memory)."""
    if hidden_dim(policy):
        return GreedyRecurrentPolicy(policy)  # type: ignore[arg-type]
    return GreedyPolicy(policy)


def _mode(logp: np.ndarray) -> np.ndarray:
    """Log-probabilities that choose each row's most probable action; a row with a NaN is passed
    on as it is, so the episode loop's non-finite check names it."""
    if np.isnan(logp).any():
        return logp
    out = np.full(logp.shape, -np.inf, dtype=np.float32)
    out[np.arange(len(logp)), np.argmax(logp, axis=1)] = 0.0
    return out


def _shifted(progress: Progress, offset: int, total: int) -> Progress:
    """``progress`` of one restart as part of all of them."""
    return lambda done, _: progress(offset + done, total)


def exact_values(
    env_name: str, probe: Policy, opponents: Mapping[str, Policy], weights: Mapping[str, float]
) -> tuple[float, float] | None:
    """``(best response payoff, probe payoff)`` against the mixture, exactly and averaged over the
    two seats, where the env plays an OpenSpiel game and open_spiel is installed; else None."""
    if envs.exact_game(env_name) is None:
        return None
    try:
        import pyspiel  # noqa: F401
    except ImportError:
        return None
    from light_league.algorithms import game_tree

    ids = list(weights)
    mixture = game_tree.mixture_policy(env_name, [opponents[k] for k in ids], [weights[k] for k in ids])
    best = 0.5 * sum(game_tree.best_response_value(env_name, mixture, p) for p in (0, 1))
    payoffs = game_tree.expected_payoff_matrix(env_name, [probe, mixture], [mixture, probe])
    return float(best), float(0.5 * (payoffs[0, 0] - payoffs[1, 1]))


def probe_path(run_dir: Path, target: str, generation: int) -> Path:
    """``RUN_DIR/exploit/<target>_gen<G>.json`` (a member id as target keeps its own name)."""
    return Path(run_dir) / "exploit" / f"{target}_gen{generation}.json"


def save_probe(run_dir: Path, result: ProbeResult) -> Path:
    """Write ``result`` to :func:`probe_path` (atomically)."""
    path = probe_path(run_dir, result.target, result.generation)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, result.to_json())
    return path


def probe_summary(result: ProbeResult) -> dict[str, Any]:
    """What a generation record keeps of a probe (``probe.<target>`` in ``generations.jsonl``)."""
    return {
        "generation": result.generation,
        "env_steps": result.env_steps,
        "games": result.games,
        "payoff": round(result.probe_payoff, 6),
        "payoff_ci95": [round(x, 6) for x in result.probe_payoff_ci95],
        "win_rate": None if result.probe_win_rate is None else round(result.probe_win_rate, 6),
        "win_rate_ci95": None
        if result.probe_win_rate_ci95 is None
        else [round(x, 6) for x in result.probe_win_rate_ci95],
        "best_response_payoff": None
        if result.best_response_payoff is None
        else round(result.best_response_payoff, 6),
    }
