"""One policy against an opponent (or a mixture of them) over fresh games in both seats: its score
and payoff with 95% intervals.

* :func:`head_to_head`: the opponent is a weighted mixture of policies; each game draws its
  opponent from the weights, as a league's training games do, and the focal policy takes seat 0
  in even games and seat 1 in odd ones (what ``main.py exploit`` and the probe score with);
* :func:`match`: one opponent, the focal policy in seat 0 for the first half of the games and in
  seat 1 for the rest, the episode loop seeded with ``seed`` itself (what the benchmarks score
  with: ``bench/scripted_headroom.py``, ``league_quality.py --reevaluate``, ...).

The **score** is the mean outcome from the focal side (1 win, 0.5 draw, 0 loss; for a chip game
the return mapped to [0, 1]) with its Jeffreys interval; the **payoff** is the mean episode
return of the focal seat with its Student-t interval.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from light_league.algorithms.base import Policy
from light_league.envs.base import BatchedEnv
from light_league.game_theory.uncertainty import mean_interval, score_interval
from light_league.rollout.episode import EpisodeLoop

#: the focal policy's id in the games' bookkeeping (an opponent id may be anything else)
FOCAL = "<focal>"
#: the opponent's id in :func:`match`
OPPONENT = "opponent"


@dataclass(frozen=True)
class HeadToHead:
    """The focal policy's results over ``games`` games (outcomes from its side)."""

    games: int
    score: float  #: mean outcome: wins + draws / 2 for a win/draw/loss game
    score_ci95: tuple[float, float]
    payoff: float  #: mean episode return of the focal seat
    payoff_ci95: tuple[float, float]
    wins: int
    draws: int
    losses: int
    #: games per opponent id
    opponents: dict[str, int]

    def to_json(self) -> dict[str, Any]:
        return {
            "games": self.games,
            "score": self.score,
            "score_ci95": list(self.score_ci95),
            "payoff": self.payoff,
            "payoff_ci95": list(self.payoff_ci95),
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "opponents": dict(self.opponents),
        }


def opponent_draws(weights: Mapping[str, float], games: int, rng: np.random.Generator) -> list[str]:
    """One opponent id per game, drawn from ``weights`` (positive entries; normalised here)."""
    ids = [k for k, w in weights.items() if w > 0]
    p = np.array([weights[k] for k in ids], dtype=np.float64)
    if not ids or not np.isfinite(p).all():
        raise ValueError(f"an opponent mixture needs a positive weight, got {dict(weights)}")
    return [ids[i] for i in rng.choice(len(ids), size=games, p=p / p.sum())]


def head_to_head(
    env: BatchedEnv,
    policy: Policy,
    opponents: Mapping[str, Policy],
    weights: Mapping[str, float],
    games: int,
    *,
    seed: int,
) -> HeadToHead:
    """``policy`` against the mixture ``weights`` of ``opponents`` for ``games`` fresh games."""
    if games < 1:
        raise ValueError(f"games must be at least 1, got {games}")
    if FOCAL in opponents:
        raise ValueError(f"{FOCAL!r} is the focal policy's own id; rename that opponent")
    rng = np.random.default_rng(seed)
    drawn = opponent_draws(weights, games, rng)
    quota = Counter((opp, k % 2) for k, opp in enumerate(drawn))
    pairings = [(FOCAL, opp, n) if seat == 0 else (opp, FOCAL, n) for (opp, seat), n in sorted(quota.items())]
    return _play(env, policy, opponents, pairings, Counter(drawn), seed=int(rng.integers(2**31 - 1)))


def match(env: BatchedEnv, policy: Policy, opponent: Policy, games: int, *, seed: int) -> HeadToHead:
    """``policy`` against ``opponent`` for ``games`` fresh games: ``games // 2`` in seat 0, then
    the rest in seat 1, on an episode loop seeded with ``seed`` (``opponents`` of the result
    names the opponent ``"opponent"``)."""
    if games < 1:
        raise ValueError(f"games must be at least 1, got {games}")
    half = games // 2
    pairings = [(FOCAL, OPPONENT, half), (OPPONENT, FOCAL, games - half)]
    return _play(env, policy, {OPPONENT: opponent}, pairings, {OPPONENT: games}, seed=seed)


def _play(
    env: BatchedEnv,
    policy: Policy,
    opponents: Mapping[str, Policy],
    pairings: list[tuple[str, str, int]],
    drawn: Mapping[str, int],
    *,
    seed: int,
) -> HeadToHead:
    """Play ``pairings`` (one side of each is :data:`FOCAL`; ``drawn``: games per opponent) and
    score them from the focal side."""
    played = EpisodeLoop(env, seed=seed).evaluate({FOCAL: policy, **opponents}, pairings)
    if played.seat_returns is None:  # pragma: no cover - evaluate always records them
        raise RuntimeError("the episode loop returned no seat returns")
    first = np.array([r.player_id == FOCAL for r in played.results])
    outcome = np.array([r.outcome for r in played.results], dtype=np.float64)
    outcome = np.where(first, outcome, 1.0 - outcome)
    payoff = np.where(first, played.seat_returns[:, 0], played.seat_returns[:, 1])
    score = float(outcome.mean())
    return HeadToHead(
        games=len(outcome),
        score=score,
        score_ci95=score_interval(score, len(outcome)),
        payoff=float(payoff.mean()),
        payoff_ci95=mean_interval(payoff),
        wins=int((outcome > 0.5).sum()),
        draws=int((outcome == 0.5).sum()),
        losses=int((outcome < 0.5).sum()),
        opponents=dict(drawn),
    )
