"""The learner's decisions of a rollout, recorded stream by stream and compacted into a :class:`SampleBatch`.

A stream is one (game, team position) of the learner's side (:class:`StreamRecorder`); the
episode loop also records the mirror seat of self-play games into a second recorder and
:func:`with_mirror` appends its streams to the learner's batch.
"""

from __future__ import annotations

import numpy as np

from light_league.data_buffer.episode import SampleBatch
from light_league.envs.base import EnvSpec


def with_mirror(batch: SampleBatch, recorder: StreamRecorder, spec: EnvSpec, version: int) -> SampleBatch:
    """``batch`` with the recorder's streams that hold a decision appended as mirror streams."""
    mirrored = recorder.build(np.zeros(recorder.n, dtype=np.float32), spec, version, 0)
    mirrored = mirrored.streams(np.asarray(mirrored.valid.any(axis=0)))
    joined = SampleBatch.concat([batch, mirrored]) if mirrored.shape[1] else batch
    flags = np.zeros(joined.shape[1], dtype=bool)
    flags[batch.shape[1] :] = True
    joined.mirror = flags
    return joined


class StreamRecorder:
    """Collects the learner's decisions per stream (game × team position) and compacts them."""

    def __init__(self, num_envs: int, team: int, num_steps: int, hidden_dim: int = 0) -> None:
        self.team = team
        n = num_envs * team
        self.n = n
        self.hidden_dim = hidden_dim  #: width of the learner's hidden states (0: it has none)
        self.rows: list[
            tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]
        ] = []
        self.hidden: list[np.ndarray] = []
        self.count = np.zeros(n, dtype=np.int64)  # decisions recorded per stream
        self.last = np.full(n, -1, dtype=np.int64)  # flat index of each stream's pending decision
        self.rewards = np.zeros(num_steps * n, dtype=np.float32)
        self.dones = np.zeros(num_steps * n, dtype=bool)
        self.seats = np.zeros(num_steps * n, dtype=np.int8)
        self.total = 0

    def add_decisions(
        self,
        t: int,
        stream: np.ndarray,
        obs: np.ndarray,
        state: np.ndarray,
        mask: np.ndarray,
        actions: np.ndarray,
        logp: np.ndarray,
        values: np.ndarray,
        hidden: np.ndarray | None = None,
        *,
        seat: np.ndarray,
    ) -> None:
        self.rows.append((t, stream, obs, state, mask, actions, logp, values))
        if hidden is not None:
            self.hidden.append(hidden)
        flat = self.total + np.arange(stream.size)
        self.seats[flat] = seat
        self.last[stream] = flat
        self.count[stream] += 1
        self.total += stream.size

    def add_rewards(self, reward: np.ndarray) -> None:
        """``reward`` (B, K): credit each stream's pending decision (dropped if none yet)."""
        r = reward.reshape(-1)
        hit = (self.last >= 0) & (r != 0)
        self.rewards[self.last[hit]] += r[hit]

    def end_episodes(self, games: np.ndarray) -> None:
        streams = (games[:, None] * self.team + np.arange(self.team)[None, :]).reshape(-1)
        pending = self.last[streams]
        self.dones[pending[pending >= 0]] = True
        self.last[streams] = -1

    def build(self, boot: np.ndarray, spec: EnvSpec, version: int, env_steps: int) -> SampleBatch:
        t_max = max(int(self.count.max()), 1)
        n = self.n
        obs = np.zeros((t_max, n, spec.obs_dim), dtype=np.float32)
        state = np.zeros((t_max, n, spec.state_dim), dtype=np.float32)
        mask = np.zeros((t_max, n, spec.num_actions), dtype=bool)
        actions = np.zeros((t_max, n), dtype=np.int64)
        logp = np.zeros((t_max, n), dtype=np.float32)
        values = np.zeros((t_max, n), dtype=np.float32)
        valid = np.zeros((t_max, n), dtype=bool)
        pos = np.zeros(n, dtype=np.int64)
        flat_time = np.zeros(self.total, dtype=np.int64)
        flat_stream = np.zeros(self.total, dtype=np.int64)
        offset = 0
        for _, stream, o, s, m, a, lp, v in self.rows:
            ti = pos[stream]
            obs[ti, stream] = o
            state[ti, stream] = s
            mask[ti, stream] = m
            actions[ti, stream] = a
            logp[ti, stream] = lp
            values[ti, stream] = v
            valid[ti, stream] = True
            flat_time[offset : offset + stream.size] = ti
            flat_stream[offset : offset + stream.size] = stream
            offset += stream.size
            pos[stream] += 1
        rewards = np.zeros((t_max, n), dtype=np.float32)
        dones = np.zeros((t_max, n), dtype=bool)
        rewards[flat_time, flat_stream] = self.rewards[: self.total]
        dones[flat_time, flat_stream] = self.dones[: self.total]
        seat = np.zeros((t_max, n), dtype=np.int8)
        seat[flat_time, flat_stream] = self.seats[: self.total]
        hidden = None
        if self.hidden_dim:
            hidden = np.zeros((t_max, n, self.hidden_dim), dtype=np.float32)
            if self.hidden:
                hidden[flat_time, flat_stream] = np.concatenate(self.hidden)
        # streams whose last decision ended an episode bootstrap from 0
        last_done = np.zeros(n, dtype=bool)
        has = self.count > 0
        last_done[has] = dones[self.count[has] - 1, np.nonzero(has)[0]]
        boot = np.where(last_done | ~has, 0.0, boot).astype(np.float32)
        return SampleBatch(
            obs=obs,
            state=state,
            action_mask=mask,
            agent_idx=np.tile(np.arange(self.team), n // self.team),
            actions=actions,
            logp=logp,
            values=values,
            rewards=rewards,
            dones=dones,
            valid=valid,
            bootstrap_values=boot,
            policy_version=version,
            env_steps=env_steps,
            hidden=hidden,
            seat=seat,
        )
