"""The trajectory format passed from rollout workers to the episode server and learners.

A :class:`SampleBatch` holds ``N`` **streams**: one stream per (game, learner agent). A stream lists
that agent's own decisions in time order (turn-based games skip the other player's turns), so
shapes are time-major ``(T, N, ...)`` and streams shorter than ``T`` are padded at the end
(``valid`` False). Rewards received between two decisions of an agent are summed onto the
earlier decision. ``dones[t, n]`` marks the last decision of an episode; ``bootstrap_values[n]``
is the critic's value after the stream's last entry (0 when that entry ended an episode).
Values are in return units (a learner that normalises values does so internally).

**Mirror streams.** A learner whose policy asks for them (``mirrors_self_play``) also gets, in
self-play games (the opponent drawn is the learner itself), the opponent seat's decisions: streams
flagged in ``mirror[n]``, played by the learner's published policy (``log_probs``) where its own
seat plays its behaviour (``evaluate``). The regret learner's average strategy learns from them.

A recurrent policy's batches also carry ``hidden[t, n]``: the agent's hidden state *before*
decision ``t`` (zeros at an episode's first decision), what a learner needs to train on chunks
of a stream from where the rollout was; ``None`` for memoryless policies.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np


@dataclass
class SampleBatch:
    obs: np.ndarray  #: (T, N, obs_dim) float32
    state: np.ndarray  #: (T, N, state_dim) float32
    action_mask: np.ndarray  #: (T, N, A) bool
    agent_idx: np.ndarray  #: (N,) int64, position of the stream's agent within its team
    actions: np.ndarray  #: (T, N) int64
    logp: np.ndarray  #: (T, N) float32, behaviour log-probability of the action
    values: np.ndarray  #: (T, N) float32
    rewards: np.ndarray  #: (T, N) float32
    dones: np.ndarray  #: (T, N) bool
    valid: np.ndarray  #: (T, N) bool
    bootstrap_values: np.ndarray  #: (N,) float32
    policy_version: int = 0
    env_steps: int = 0  #: environment steps (all games) that produced this batch
    hidden: np.ndarray | None = None  #: (T, N, H) float32 hidden state before each decision, or None
    #: (N,) bool: the stream is a mirror stream (see the module docstring), or None: none is
    mirror: np.ndarray | None = None
    #: (T, N) int8: the seat (0 or 1) of each decision's player (a stream's seat may change from
    #: one episode to the next); None where the collector did not record it
    seat: np.ndarray | None = None

    _TIME_FIELDS = (
        "obs",
        "state",
        "action_mask",
        "actions",
        "logp",
        "values",
        "rewards",
        "dones",
        "valid",
        "hidden",
        "seat",
    )

    @property
    def num_samples(self) -> int:
        return int(self.valid.sum())

    @property
    def shape(self) -> tuple[int, int]:
        return int(self.valid.shape[0]), int(self.valid.shape[1])

    def streams(self, keep: np.ndarray) -> SampleBatch:
        """The batch of the streams ``keep`` selects (a bool mask or indices over ``N``)."""
        out: dict[str, object] = {}
        for f in fields(SampleBatch):
            value = getattr(self, f.name)
            if value is None or f.name in ("policy_version", "env_steps"):
                out[f.name] = value
            elif f.name in SampleBatch._TIME_FIELDS:
                out[f.name] = value[:, keep]
            else:
                out[f.name] = value[keep]
        return SampleBatch(**out)  # type: ignore[arg-type]

    @staticmethod
    def concat(batches: list[SampleBatch]) -> SampleBatch:
        """Join batches along the stream axis, padding time to the longest."""
        if not batches:
            raise ValueError("SampleBatch.concat needs at least one batch")
        if len(batches) == 1:
            return batches[0]
        t_max = max(b.shape[0] for b in batches)
        if len({b.hidden is None for b in batches}) > 1:
            raise ValueError("SampleBatch.concat: some batches carry hidden states and others not")
        out: dict[str, object] = {}
        for f in fields(SampleBatch):
            name = f.name
            if name in ("hidden", "seat") and any(getattr(b, name) is None for b in batches):
                out[name] = None  # (seats recorded by some batches only: none is known)
            elif name in SampleBatch._TIME_FIELDS:
                parts = []
                for b in batches:
                    arr = getattr(b, name)
                    pad = t_max - arr.shape[0]
                    if pad:
                        arr = np.concatenate([arr, np.zeros((pad, *arr.shape[1:]), dtype=arr.dtype)], axis=0)
                    parts.append(arr)
                out[name] = np.concatenate(parts, axis=1)
            elif name in ("agent_idx", "bootstrap_values"):
                out[name] = np.concatenate([getattr(b, name) for b in batches], axis=0)
            elif name == "mirror":
                flags = [b.mirror for b in batches]
                out[name] = (
                    None
                    if all(f is None for f in flags)
                    else np.concatenate(
                        [np.zeros(b.shape[1], dtype=bool) if f is None else f for b, f in zip(batches, flags)]
                    )
                )
            elif name == "policy_version":
                out[name] = min(b.policy_version for b in batches)
            elif name == "env_steps":
                out[name] = sum(b.env_steps for b in batches)
        return SampleBatch(**out)  # type: ignore[arg-type]
