"""RolloutWorker: owns batched envs, pulls the weights it needs, plays, pushes trajectories.

One :class:`~light_league.rollout.episode.EpisodeLoop` per learner keeps that learner's games
running across calls. Policies are cached (bounded, least recently used first out); only
versions newer than the cached ones are pulled from the PolicyServer.
"""

from __future__ import annotations

import time
import zlib
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from light_league.algorithms.base import Policy, TrainablePolicy
from light_league.rollout.episode import EpisodeLoop, EvaluationResult, MatchResult
from light_league.rollout.policies import policy_from_entry


@dataclass
class RolloutRequest:
    learner_id: str
    learner_version: int
    opponents: dict[str, float]
    num_steps: int
    learner_seat: int | None = None


@dataclass
class RolloutReport:
    learner_id: str
    results: list[MatchResult] = field(default_factory=list)
    env_steps: int = 0
    samples: int = 0
    seconds: float = 0.0


class RolloutWorker:
    def __init__(
        self,
        env_name: str,
        env_options: dict[str, Any],
        *,
        num_envs: int,
        seed: int,
        policy_server: Any,
        episode_server: Any,
        cache_size: int = 16,
        torch_threads: int = 1,
    ) -> None:
        import envs

        if torch_threads:
            import torch

            torch.set_num_threads(torch_threads)
        self._make_env = lambda: envs.make_batched(env_name, num_envs, **env_options)
        self.env_name = env_name
        self._seed = seed
        self._policy_server = policy_server
        self._episode_server = episode_server
        self._cache: OrderedDict[str, tuple[int, Policy]] = OrderedDict()
        self._cache_size = cache_size
        self._loops: dict[str, EpisodeLoop] = {}
        self._eval_loop: EpisodeLoop | None = None

    def ping(self) -> bool:
        return True

    # ------------------------------------------------------------------ policies
    def _policies(self, wanted: dict[str, int]) -> dict[str, Policy]:
        """Policies for ``wanted`` (id -> minimum version), pulling only what is missing or stale."""
        have = {pid: (self._cache[pid][0] if pid in self._cache else 0) for pid in wanted}
        stale = {pid: v for pid, v in have.items() if v < max(wanted[pid], 1)}
        if stale:
            for pid, entry in self._policy_server.pull(stale).items():
                self._cache[pid] = (entry.version, policy_from_entry(entry, self.env_name))
        out = {}
        for pid in wanted:
            self._cache.move_to_end(pid)
            out[pid] = self._cache[pid][1]
        while len(self._cache) > max(self._cache_size, len(wanted)):
            old = next(iter(self._cache))
            if old in wanted:
                break
            self._cache.popitem(last=False)
        return out

    def _loop(self, learner_id: str) -> EpisodeLoop:
        if learner_id not in self._loops:
            seed = int(
                np.random.SeedSequence([self._seed, zlib.crc32(learner_id.encode())]).generate_state(1)[0]
            )
            self._loops[learner_id] = EpisodeLoop(self._make_env(), seed=seed)
        return self._loops[learner_id]

    # ------------------------------------------------------------------ work
    def run(self, requests: list[RolloutRequest]) -> list[RolloutReport]:
        """Play each request's steps; trajectories go to the EpisodeServer, results come back."""
        reports = []
        for req in requests:
            start = time.perf_counter()
            wanted = {pid: 0 for pid in req.opponents}
            wanted[req.learner_id] = req.learner_version
            pols = self._policies(wanted)
            learner = pols[req.learner_id]
            if not isinstance(learner, TrainablePolicy):
                raise TypeError(f"learner {req.learner_id!r} has no critic ({type(learner).__name__})")
            opponents = {pid: pols[pid] for pid in req.opponents}
            res = self._loop(req.learner_id).collect(
                learner,
                opponents,
                req.opponents,
                req.num_steps,
                learner_id=req.learner_id,
                learner_seat=req.learner_seat,
                policy_version=req.learner_version,
            )
            self._episode_server.push(req.learner_id, res.batch)
            reports.append(
                RolloutReport(
                    req.learner_id,
                    res.results,
                    res.env_steps,
                    res.batch.num_samples,
                    time.perf_counter() - start,
                )
            )
        return reports

    def evaluate(self, pairings: list[tuple[str, str, int]]) -> EvaluationResult:
        ids = sorted({p for a, b, _ in pairings for p in (a, b)})
        pols = self._policies({pid: 0 for pid in ids})
        if self._eval_loop is None:
            seed = int(np.random.SeedSequence([self._seed, 7919]).generate_state(1)[0])
            self._eval_loop = EpisodeLoop(self._make_env(), seed=seed)
        return self._eval_loop.evaluate(pols, pairings)

    def reset_loops(self) -> None:
        """Drop in-progress games (after a resume or a learner reset)."""
        self._loops.clear()
