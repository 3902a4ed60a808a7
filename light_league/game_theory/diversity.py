"""Behavioural diversity of a population from its trajectories.

Each agent's behaviour is summarised by a fixed-length **embedding** made of three blocks:

* **actions**: with integer action ids of shape ``(T,)``, the frequency of each id in
  ``range(n_actions)``; with real-valued actions of shape ``(T,)`` or ``(T, action_dim)``, each
  dimension squashed to (0, 1) by ``(tanh(a) + 1) / 2`` and histogrammed into ``n_bins`` bins;
* **positions**: an ``n_bins x n_bins`` occupancy heatmap of ``(T, 2)`` positions in [0, 1]
  (values outside are clipped); all zeros when a batch has no positions;
* **statistics**: mean and standard deviation of the (squashed or id / (n_actions - 1)) actions,
  mean and standard deviation of the positions, and the mean step length between positions.

Every feature is non-negative and each block is scaled to unit length, so the blocks weigh
equally and the cosine distance ``1 - cos`` of two embeddings lies in [0, 1]: 0 for identical
behaviour, near 1 for agents that share nothing. The population's diversity is the mean (or
min, or median) pairwise distance.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from light_league.game_theory.names import unknown_choice

REDUCTIONS = ("mean", "min", "median")


@dataclass
class TrajectoryBatch:
    """One agent's behaviour over ``T`` steps.

    ``actions``: integer ids ``(T,)`` or real-valued ``(T,)`` / ``(T, action_dim)``.
    ``positions``: ``(T, 2)`` normalised to [0, 1], or None for games without positions.
    """

    actions: np.ndarray
    positions: np.ndarray | None
    agent_id: str

    def __post_init__(self) -> None:
        self.actions = np.asarray(self.actions)
        if self.actions.ndim not in (1, 2) or self.actions.shape[0] == 0:
            raise ValueError(
                f"actions of {self.agent_id!r} must have shape (T,) or (T, action_dim) with T >= 1, "
                f"got {self.actions.shape}"
            )
        if self.positions is not None:
            self.positions = np.asarray(self.positions, dtype=np.float64)
            if self.positions.shape != (self.actions.shape[0], 2):
                raise ValueError(
                    f"positions of {self.agent_id!r} must have shape (T, 2) = ({self.actions.shape[0]}, 2) "
                    f"to match the actions, got {self.positions.shape}"
                )

    @property
    def discrete(self) -> bool:
        """True for integer action ids of shape ``(T,)``."""
        return self.actions.ndim == 1 and np.issubdtype(self.actions.dtype, np.integer)


def _action_blocks(batch: TrajectoryBatch, n_bins: int, n_actions: int) -> tuple[np.ndarray, np.ndarray]:
    """(action histogram, action mean/std) of a batch; features in [0, 1]."""
    if batch.discrete:
        ids = batch.actions.astype(np.int64)
        if ids.min() < 0 or ids.max() >= n_actions:
            raise ValueError(
                f"action ids of {batch.agent_id!r} span [{ids.min()}, {ids.max()}] but n_actions={n_actions}; "
                "pass n_actions=<number of discrete actions>"
            )
        hist = np.bincount(ids, minlength=n_actions) / ids.size
        scaled = (ids / max(n_actions - 1, 1))[:, None]
    else:
        real = batch.actions.astype(np.float64).reshape(batch.actions.shape[0], -1)
        if not np.all(np.isfinite(real)):
            raise ValueError(f"actions of {batch.agent_id!r} contain NaN or inf")
        scaled = (np.tanh(real) + 1.0) / 2.0
        bins = np.minimum((scaled * n_bins).astype(np.int64), n_bins - 1)
        hist = np.concatenate([np.bincount(col, minlength=n_bins) for col in bins.T]) / scaled.shape[0]
    stats = np.concatenate([scaled.mean(axis=0), scaled.std(axis=0)])
    return hist.astype(np.float64), stats


def _position_blocks(batch: TrajectoryBatch, n_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """(occupancy heatmap, position mean/std/step length) of a batch; zeros without positions."""
    if batch.positions is None:
        return np.zeros(n_bins * n_bins), np.zeros(5)
    pos = np.clip(batch.positions, 0.0, 1.0)
    if not np.all(np.isfinite(pos)):
        raise ValueError(f"positions of {batch.agent_id!r} contain NaN")
    cells = np.minimum((pos * n_bins).astype(np.int64), n_bins - 1)
    heat = np.bincount(cells[:, 0] * n_bins + cells[:, 1], minlength=n_bins * n_bins) / pos.shape[0]
    steps = np.linalg.norm(np.diff(pos, axis=0), axis=1)
    step = min(float(steps.mean()), 1.0) if steps.size else 0.0
    return heat.astype(np.float64), np.concatenate([pos.mean(axis=0), pos.std(axis=0), [step]])


def behaviour_features(
    batch: TrajectoryBatch, n_bins: int = 8, *, n_actions: int | None = None
) -> list[np.ndarray]:
    """The three unnormalised feature blocks (actions, positions, statistics) of a batch."""
    if int(n_bins) < 1:
        raise ValueError(f"n_bins must be >= 1, got {n_bins}")
    action_hist, action_stats = _action_blocks(batch, int(n_bins), int(n_actions or n_bins))
    heat, position_stats = _position_blocks(batch, int(n_bins))
    return [action_hist, heat, np.concatenate([action_stats, position_stats])]


def _unit_blocks(blocks: list[np.ndarray]) -> np.ndarray:
    """Scale each block to unit L2 norm (an all-zero block stays zero) and concatenate."""
    scaled = [b / n if (n := np.linalg.norm(b)) > 0.0 else b for b in blocks]
    return np.concatenate(scaled)


def embed_trajectory(batch: TrajectoryBatch, n_bins: int = 8, *, n_actions: int | None = None) -> np.ndarray:
    """Fixed-length behaviour embedding of a batch (see the module docstring).

    ``n_actions`` (discrete actions only) defaults to ``n_bins``. The length depends only on
    ``n_bins``, ``n_actions`` and the action dimension, so agents of one game embed alike.
    """
    return _unit_blocks(behaviour_features(batch, n_bins, n_actions=n_actions))


def pairwise_cosine_distances(embeddings: np.ndarray) -> np.ndarray:
    """``(N, N)`` matrix of ``1 - cos(e_i, e_j)`` for the rows of ``embeddings`` (diagonal 0)."""
    e = np.asarray(embeddings, dtype=np.float64)
    if e.ndim != 2:
        raise ValueError(f"embeddings must have shape (N, D), got {e.shape}")
    norms = np.linalg.norm(e, axis=1)
    zero = np.flatnonzero(norms == 0.0)
    if zero.size:
        raise ValueError(
            f"embedding rows {zero.tolist()} are all zeros; cosine distance is undefined for them"
        )
    unit = e / norms[:, None]
    dist = np.clip(1.0 - unit @ unit.T, 0.0, 2.0)
    np.fill_diagonal(dist, 0.0)
    return dist


def diversity_score(
    embeddings: np.ndarray | Mapping[str, np.ndarray] | DiversityTracker, reduce: str = "mean"
) -> float:
    """Mean, min or median pairwise cosine distance of a population; 0.0 below two members."""
    if reduce not in REDUCTIONS:
        raise unknown_choice("diversity reduction", reduce, REDUCTIONS)
    if isinstance(embeddings, DiversityTracker):
        embeddings = embeddings.embeddings()
    if isinstance(embeddings, Mapping):
        rows = [np.asarray(r, dtype=np.float64) for r in embeddings.values()]
        if len({r.shape for r in rows}) > 1:
            shapes = {k: np.shape(v) for k, v in embeddings.items()}
            raise ValueError(f"embeddings must all have one length, got {shapes}; embed every agent alike")
        matrix = np.stack(rows) if rows else np.zeros((0, 0))
    else:
        matrix = np.asarray(embeddings, dtype=np.float64)
    if matrix.shape[0] < 2:
        return 0.0
    dist = pairwise_cosine_distances(matrix)
    pairs = dist[np.triu_indices(dist.shape[0], k=1)]
    if reduce == "min":
        return float(pairs.min())
    return float(np.median(pairs) if reduce == "median" else pairs.mean())


class DiversityTracker:
    """Accumulates each agent's trajectories and scores the population's diversity.

    An agent's embedding pools all its batches: the feature blocks are averaged with weights
    equal to the batch lengths, then scaled to unit length as in :func:`embed_trajectory`.
    """

    def __init__(self, n_bins: int = 8, *, n_actions: int | None = None) -> None:
        if int(n_bins) < 1:
            raise ValueError(f"n_bins must be >= 1, got {n_bins}")
        self.n_bins = int(n_bins)
        self.n_actions = n_actions
        self._sums: dict[str, list[np.ndarray]] = {}
        self._steps: dict[str, int] = {}

    def update(self, agent_id: str, batch: TrajectoryBatch) -> None:
        """Add a batch of ``agent_id``'s behaviour."""
        if batch.agent_id != agent_id:
            raise ValueError(
                f"batch belongs to {batch.agent_id!r}, not {agent_id!r}; pass the batch's own agent id"
            )
        blocks = behaviour_features(batch, self.n_bins, n_actions=self.n_actions)
        steps = batch.actions.shape[0]
        if agent_id in self._sums:
            old = self._sums[agent_id]
            if [b.shape for b in old] != [b.shape for b in blocks]:
                raise ValueError(
                    f"batch of {agent_id!r} embeds to a different length than its earlier batches; "
                    "keep the action shape fixed per agent"
                )
            self._sums[agent_id] = [o + steps * b for o, b in zip(old, blocks)]
        else:
            self._sums[agent_id] = [steps * b for b in blocks]
        self._steps[agent_id] = self._steps.get(agent_id, 0) + steps

    def embeddings(self, among: Collection[str] | None = None) -> dict[str, np.ndarray]:
        """Agent id -> pooled embedding, in the order agents were first seen (only those in
        ``among`` when given)."""
        return {
            a: _unit_blocks([s / self._steps[a] for s in sums])
            for a, sums in self._sums.items()
            if among is None or a in among
        }

    def pairwise_distances(self) -> tuple[list[str], np.ndarray]:
        """(agent ids, their pairwise cosine-distance matrix)."""
        emb = self.embeddings()
        ids = list(emb)
        matrix = np.stack([emb[a] for a in ids]) if ids else np.zeros((0, 0))
        return ids, pairwise_cosine_distances(matrix) if ids else np.zeros((0, 0))

    def diversity_score(self, reduce: str = "mean") -> float:
        """Diversity of the tracked agents (see :func:`diversity_score`)."""
        return diversity_score(self.embeddings(), reduce=reduce)

    def __len__(self) -> int:
        return len(self._sums)

    def state_dict(self) -> dict[str, Any]:
        """JSON-able state: settings plus each agent's step count and summed feature blocks."""
        return {
            "n_bins": self.n_bins,
            "n_actions": self.n_actions,
            "agents": {
                a: {"steps": self._steps[a], "blocks": [b.tolist() for b in sums]}
                for a, sums in self._sums.items()
            },
        }

    @classmethod
    def from_state_dict(cls, state: Mapping[str, Any]) -> DiversityTracker:
        """Rebuild a tracker from :meth:`state_dict` output (for resuming a run)."""
        try:
            tracker = cls(int(state["n_bins"]), n_actions=state["n_actions"])
            for agent_id, entry in state["agents"].items():
                tracker._sums[str(agent_id)] = [np.asarray(b, dtype=np.float64) for b in entry["blocks"]]
                tracker._steps[str(agent_id)] = int(entry["steps"])
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(
                f"diversity state must be DiversityTracker.state_dict() output ({exc.__class__.__name__}: {exc})"
            ) from None
        return tracker
