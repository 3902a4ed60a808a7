"""RolloutWorker: owns batched envs, pulls the weights it needs, plays, pushes trajectories.

One :class:`~light_league.rollout.episode.EpisodeLoop` per learner keeps that learner's games
running across calls, generations and resets: a game ends against the opponent it was drawn
with, so no game is dropped and the results are not biased toward short games. Policies are
cached (least recently used first out beyond ``cache_size``, never one a round needs); only
versions newer than the cached ones are pulled from the PolicyServer. Frozen policies whose class
declares the bank hook (MAPPO's does; :func:`light_league.algorithms.base.bank_signature`) are run
through one bank per signature (:mod:`light_league.rollout.policy_bank`).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from light_league.algorithms.base import Policy, TrainablePolicy
from light_league.algorithms.registry import build_policy
from light_league.data_buffer.stores import EpisodeStore, PolicyStore
from light_league.execution.base import TypedFuture, start_call
from light_league.rollout.episode import EpisodeLoop, EvaluationResult, MatchResult
from light_league.rollout.policy_bank import BankedPolicy, build_banks
from light_league.seeding import EVALUATION_STREAM, derive_seed
from light_league.types import pack_results, unpack_results


@dataclass
class RolloutRequest:
    learner_id: str
    learner_version: int
    opponents: dict[str, float]
    num_steps: int
    learner_seat: int | None = None
    #: the generation whose distribution ``opponents`` is (stamped on the games it draws)
    generation: int = 0


@dataclass
class RolloutReport:
    learner_id: str
    results: list[MatchResult] = field(default_factory=list)
    env_steps: int = 0
    samples: int = 0
    seconds: float = 0.0
    #: trajectory batches pushed to the EpisodeServer for the learner (one per worker and call)
    batches: int = 0
    #: the push of the trajectories to the EpisodeServer, under way (the driver waits for it)
    pushed: TypedFuture[None] | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "results": pack_results(self.results)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, results=unpack_results(state["results"]))


class RolloutWorker:
    def __init__(
        self,
        env_name: str,
        env_options: dict[str, object],
        *,
        num_envs: int,
        seed: int,
        policy_server: PolicyStore,
        episode_server: EpisodeStore,
        cache_size: int = 16,
        torch_threads: int = 1,
        policy_banks: bool = True,
    ) -> None:
        from light_league import envs

        if torch_threads:
            import torch

            torch.set_num_threads(torch_threads)
        self._make_env = lambda: envs.make_batched(env_name, num_envs, **env_options)
        self.env_name = env_name
        self.env_options = dict(env_options)
        self._seed = seed
        self._policy_server = policy_server
        self._episode_server = episode_server
        self._cache: OrderedDict[str, tuple[int, Policy]] = OrderedDict()
        self._cache_size = cache_size
        self._frozen: set[str] = set()  #: cached ids that are frozen (never change)
        #: run frozen opponents through policy banks (off: one forward pass per policy, the path
        #: before banks, which ``bench/population_rollout.py`` measures against)
        self.policy_banks = policy_banks
        self._bank_key: tuple[str, ...] = ()
        self._bank_members: dict[str, BankedPolicy] = {}
        self._loops: dict[str, EpisodeLoop] = {}
        self._eval_loop: EpisodeLoop | None = None

    def ping(self) -> bool:
        return True

    # ------------------------------------------------------------------ policies
    def _policies(self, wanted: dict[str, int]) -> dict[str, Policy]:
        """Policies for ``wanted`` (id -> minimum version), pulling only what is missing or stale.

        Frozen policies with the bank hook come back as members of a bank (one per signature, over
        every such frozen one cached), so the episode loop runs them in one pass.
        The cache keeps at least everything wanted now (all of a round's requests ask together),
        so a population larger than ``cache_size`` is not pulled again every round.
        """
        have = {pid: (self._cache[pid][0] if pid in self._cache else 0) for pid in wanted}
        stale = {pid: v for pid, v in have.items() if v < max(wanted[pid], 1)}
        if stale:
            for pid, entry in self._policy_server.pull(stale).items():
                self._cache[pid] = (
                    entry.version,
                    build_policy(
                        entry.weights, entry.policy_meta, env_name=self.env_name, env_options=self.env_options
                    ),
                )
                if entry.frozen:
                    self._frozen.add(pid)
                else:
                    self._frozen.discard(pid)
        for pid in wanted:
            self._cache.move_to_end(pid)
        while len(self._cache) > max(self._cache_size, len(wanted)):
            old = next(iter(self._cache))
            if old in wanted:
                break
            self._cache.popitem(last=False)
            self._frozen.discard(old)
        banked = self._banked() if self.policy_banks else {}
        return {pid: banked.get(pid, self._cache[pid][1]) for pid in wanted}

    def _banked(self) -> dict[str, BankedPolicy]:
        """Bank members of the cached frozen policies (rebuilt when that set changes)."""
        key = tuple(sorted(self._frozen))
        if key != self._bank_key:
            self._bank_key = key
            self._bank_members = build_banks({pid: self._cache[pid][1] for pid in key}) if key else {}
        return self._bank_members

    def _loop(self, learner_id: str) -> EpisodeLoop:
        if learner_id not in self._loops:
            seed = derive_seed(self._seed, learner_id, bits=32)
            self._loops[learner_id] = EpisodeLoop(self._make_env(), seed=seed)
        return self._loops[learner_id]

    # ------------------------------------------------------------------ work
    def run(self, requests: list[RolloutRequest]) -> list[RolloutReport]:
        """Play each request's steps; trajectories go to the EpisodeServer, results come back.

        The policies of all requests are pulled in one round trip: each request's opponents with
        positive probability, the opponents of its games in progress, and the learners.
        """
        wanted: dict[str, int] = {}
        for req in requests:
            ids = [pid for pid, p in req.opponents.items() if p > 0]
            for pid in [*ids, *self._loop(req.learner_id).opponents_in_use()]:
                wanted.setdefault(pid, 0)
        for req in requests:
            wanted[req.learner_id] = max(wanted.get(req.learner_id, 0), req.learner_version)
        pols = self._policies(wanted)
        return [self._run_one(req, pols) for req in requests]

    def _run_one(self, req: RolloutRequest, pols: dict[str, Policy]) -> RolloutReport:
        start = time.perf_counter()
        # the learner itself, never a bank member; its version may be newer than the request's
        # when acting and learning overlap (the learner published while this call started)
        version, learner = self._cache[req.learner_id]
        if not isinstance(learner, TrainablePolicy):
            raise TypeError(f"learner {req.learner_id!r} has no critic ({type(learner).__name__})")
        res = self._loop(req.learner_id).collect(
            learner,
            pols,
            req.opponents,
            req.num_steps,
            learner_id=req.learner_id,
            learner_seat=req.learner_seat,
            policy_version=version,
            generation=req.generation,
            mirror=bool(getattr(learner, "mirrors_self_play", False)),
        )
        # sent without waiting: the driver waits for it (RolloutManager.collect) while this
        # worker's report travels, before any learner pulls
        pushed = start_call(self._episode_server.push, req.learner_id, res.batch)
        return RolloutReport(
            req.learner_id,
            res.results,
            res.env_steps,
            res.batch.num_samples,
            time.perf_counter() - start,
            batches=1,
            pushed=pushed,
        )

    def evaluate(self, pairings: list[tuple[str, str, int]], paired: bool = False) -> EvaluationResult:
        ids = sorted({p for a, b, _ in pairings for p in (a, b)})
        pols = self._policies({pid: 0 for pid in ids})
        if self._eval_loop is None:
            seed = derive_seed(self._seed, EVALUATION_STREAM, bits=32)
            self._eval_loop = EpisodeLoop(self._make_env(), seed=seed)
        return self._eval_loop.evaluate(pols, pairings, paired=paired)
