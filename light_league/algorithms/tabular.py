"""A policy stored as a table: one row of action probabilities per observation.

The key of a row is the exact bytes of the float32 observation vector, so a table built from an
environment's information-state encodings (``light_league.evaluation.exploitability`` does this
for the poker games) answers for exactly those observations. It is what the exact best-response
oracle returns and what the PolicyServer stores for policy kind ``"tabular"``.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

Unseen = Literal["error", "uniform"]


class TabularPolicy:
    """``log_probs`` by table lookup; satisfies the ``Policy`` protocol.

    ``unseen`` says what an observation missing from the table gets: ``"error"`` (the default,
    a ``KeyError`` naming the observation) or ``"uniform"`` (uniform over the legal actions).
    Probabilities the table puts on actions the mask forbids are dropped and the rest renormalised;
    a row with no probability on any legal action is an error.
    """

    def __init__(self, obs: np.ndarray, probs: np.ndarray, *, unseen: Unseen = "error") -> None:
        obs = np.ascontiguousarray(obs, dtype=np.float32)
        probs = np.asarray(probs, dtype=np.float32)
        if obs.ndim != 2 or probs.ndim != 2 or obs.shape[0] != probs.shape[0]:
            raise ValueError(
                f"obs (K, obs_dim) and probs (K, A) must have K rows each, got {obs.shape} and {probs.shape}"
            )
        if (probs < 0).any() or not np.allclose(probs.sum(axis=1), 1.0, atol=1e-4):
            raise ValueError(
                "every row of probs must be a probability distribution (non-negative, sums to 1)"
            )
        if unseen not in ("error", "uniform"):
            raise ValueError(f"unseen must be 'error' or 'uniform', got {unseen!r}")
        self._obs, self._probs, self._unseen = obs, probs, unseen
        self._row = {row.tobytes(): i for i, row in enumerate(obs)}
        if len(self._row) != obs.shape[0]:
            raise ValueError(
                f"obs has duplicate rows ({obs.shape[0] - len(self._row)} duplicates); keep one per observation"
            )

    @property
    def obs_dim(self) -> int:
        return int(self._obs.shape[1])

    @property
    def num_actions(self) -> int:
        return int(self._probs.shape[1])

    def rows(self, obs: np.ndarray) -> np.ndarray:
        """(N,) table row of each observation, -1 where unseen (an error unless ``unseen='uniform'``)."""
        obs = np.ascontiguousarray(obs, dtype=np.float32)
        if obs.ndim != 2 or obs.shape[1] != self.obs_dim:
            raise ValueError(f"obs must have shape (N, {self.obs_dim}), got {obs.shape}")
        idx = np.fromiter((self._row.get(o.tobytes(), -1) for o in obs), dtype=np.int64, count=obs.shape[0])
        if self._unseen == "error" and (idx < 0).any():
            missing = obs[int(np.flatnonzero(idx < 0)[0])]
            raise KeyError(f"observation not in the tabular policy: {missing.tolist()}")
        return idx

    def action_probs(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(N, A) float64 probabilities over the legal actions."""
        mask = np.asarray(mask, dtype=bool)
        idx = self.rows(obs)
        table = np.where(idx[:, None] >= 0, self._probs[np.maximum(idx, 0)], 1.0).astype(np.float64)
        p = np.where(mask, table, 0.0)
        total = p.sum(axis=1, keepdims=True)
        if (total <= 0).any():
            row = int(np.flatnonzero(total[:, 0] <= 0)[0])
            raise ValueError(
                f"tabular policy has no probability on the legal actions of row {row} (mask {mask[row].tolist()})"
            )
        return p / total

    def log_probs(self, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            return np.log(self.action_probs(obs, mask)).astype(np.float32)

    def get_weights(self) -> dict[str, np.ndarray]:
        return {"obs": self._obs.copy(), "probs": self._probs.copy()}

    @classmethod
    def from_weights(
        cls, weights: dict[str, np.ndarray], meta: dict[str, Any] | None = None
    ) -> TabularPolicy:
        """Rebuild from :meth:`get_weights` (and optionally :meth:`policy_meta`)."""
        missing = {"obs", "probs"} - set(weights)
        if missing:
            raise KeyError(f"tabular weights need 'obs' and 'probs', missing {sorted(missing)}")
        unseen = (meta or {}).get("unseen", "error")
        return cls(weights["obs"], weights["probs"], unseen=unseen)

    def policy_meta(self) -> dict[str, Any]:
        return {
            "kind": "tabular",
            "obs_dim": self.obs_dim,
            "num_actions": self.num_actions,
            "num_rows": int(self._obs.shape[0]),
            "unseen": self._unseen,
        }
