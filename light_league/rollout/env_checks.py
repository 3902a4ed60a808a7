"""What an env returns, checked at every step before a policy or a learner sees it: finite
numbers (:func:`check_finite`) and a legal action for every agent that must act
(:func:`check_legal_actions`); each failure is one line naming env, agent, game and step."""

from __future__ import annotations

from typing import Any

import numpy as np

from light_league.envs.base import BatchStep, EnvSpec
from light_league.errors import EnvContractError, NonFiniteError


def check_finite(step: BatchStep, spec: EnvSpec, game_steps: np.ndarray) -> None:
    """Raise :class:`NonFiniteError` naming the env, agent and step where ``step`` (what the env
    returned) holds a NaN or an infinity: in a reward, observation or state, or in the episode
    return or outcome of a game that ended. ``game_steps[b]``: the steps game ``b`` has taken
    (0 at a reset)."""
    for field in ("reward", "obs", "state"):
        values = getattr(step, field)
        if not np.isfinite(values).all():
            b, i = (int(x) for x in np.argwhere(~np.isfinite(values))[0][:2])
            _non_finite(spec, field, values[b, i], f"agent {spec.agents[i]!r}", game_steps[b], b)
    ended = np.flatnonzero(step.done)
    for field in ("seat_return", "outcome"):
        values = getattr(step, field)[ended]
        if not np.isfinite(values).all():
            bad = np.argwhere(~np.isfinite(values))[0]
            seat = f"seat {int(bad[1])}" if values.ndim > 1 else "seat 0"
            b = int(ended[bad[0]])
            _non_finite(spec, field, values[tuple(bad)], seat, game_steps[b], b)


def check_legal_actions(step: BatchStep, spec: EnvSpec, game_steps: np.ndarray) -> None:
    """Raise :class:`EnvContractError` naming the env, agent and step where an agent that must act
    (``active``) has no legal action: a policy would be sent an all-masked row, and its sample
    would be action 0 without a word."""
    stuck = step.active & ~step.action_mask.any(axis=-1)
    if stuck.any():
        b, i = (int(x) for x in np.argwhere(stuck)[0])
        raise EnvContractError(
            f"env {spec.name!r} gave agent {spec.agents[i]!r} no legal action {_where(game_steps[b], b)} while "
            "it must act (every entry of its action mask is False); an agent that acts needs at least one "
            "legal action: fix the env's action mask, or mark the agent inactive"
        )


def _where(step: int, game: int) -> str:
    return f"at step {int(step)} of game {game}" if step else f"on reset of game {game}"


def _non_finite(spec: EnvSpec, field: str, value: Any, who: str, step: int, game: int) -> None:
    where = _where(step, game)
    shown = np.asarray(value).tolist()
    raise NonFiniteError(
        f"env {spec.name!r} returned a non-finite {field} ({shown if np.ndim(shown) == 0 else shown[:8]}) "
        f"for {who} {where}; a run trains only on finite numbers: fix the env's {field}"
    )
