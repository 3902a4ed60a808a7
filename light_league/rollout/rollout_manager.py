"""RolloutManager: spreads rollout and evaluation work over the workers and replaces dead ones.

Every call is one round trip per worker carrying ``steps_per_call × envs_per_worker`` env steps
per learner. When a worker dies mid-call (Ray actor lost), it is replaced by a fresh one built
with the same arguments and its share of the work is redone; after ``max_restarts`` replacements
the run fails with a clear error. A worker whose *dependency* died (the PolicyServer or the
EpisodeServer) raises ``ComponentLost`` instead, which is not retried: the run stops and is
resumed from its last checkpoint.

With ``placement_log`` set, the node of every worker (and of the ``pinned`` components) is
appended to that JSON-lines file when the manager starts and whenever a worker is replaced.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from light_league.execution.base import Executor, Future, Handle, WorkerDied
from light_league.rollout.episode import Behaviour, EvaluationResult, MatchResult
from light_league.rollout.rollout_worker import RolloutReport, RolloutRequest, RolloutWorker
from light_league.utils.atomic import JsonlLog

log = logging.getLogger(__name__)


class WorkersExhausted(RuntimeError):
    """Rollout workers died more often than ``execution.max_worker_restarts`` allows."""


class RolloutManager:
    def __init__(
        self,
        executor: Executor,
        workers: list[Handle],
        *,
        max_restarts: int,
        placement_log: Path | None = None,
        pinned: Sequence[Handle] = (),
    ) -> None:
        if not workers:
            raise ValueError("RolloutManager needs at least one worker")
        self.executor = executor
        self.workers = workers
        self.max_restarts = max_restarts
        self.restarts = 0
        self._placement = JsonlLog(placement_log) if placement_log is not None else None
        self._record_placement([*pinned, *workers], "start")

    def _record_placement(self, handles: Sequence[Handle], event: str) -> None:
        if self._placement is None:
            return
        driver = self.executor.node_id
        when = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        for name, node in self.executor.placement(handles).items():
            record = {"time": when, "event": event, "component": name, "node": node, "driver_node": driver}
            self._placement.append(record)

    @property
    def num_workers(self) -> int:
        return len(self.workers)

    def _on_all(
        self,
        calls: list[tuple[Callable[..., Any], tuple[Any, ...]]],
        settle: Callable[[Any], None] | None = None,
    ) -> list[Any]:
        """Run ``calls[i]`` (a RolloutWorker method, its arguments) on worker ``i`` concurrently;
        redo the call of any worker that dies. ``settle(result)`` waits for what a call left
        under way (a worker that dies meanwhile has its call redone too)."""
        return self._finish(self._start(calls), calls, settle)

    def _start(self, calls: list[tuple[Callable[..., Any], tuple[Any, ...]]]) -> list[Future]:
        return [self.executor.submit(w, m.__name__, *a) for w, (m, a) in zip(self.workers, calls)]

    def _finish(
        self,
        futures: list[Future],
        calls: list[tuple[Callable[..., Any], tuple[Any, ...]]],
        settle: Callable[[Any], None] | None = None,
    ) -> list[Any]:
        results: list[Any] = []
        for i, fut in enumerate(futures):
            while True:
                try:
                    result = fut.result()
                    if settle is not None:
                        settle(result)
                    results.append(result)
                    break
                except WorkerDied as exc:
                    fut = self._replace(i, exc, calls[i])
        return results

    def _replace(self, i: int, exc: WorkerDied, call: tuple[Callable[..., Any], tuple[Any, ...]]) -> Any:
        """Replace worker ``i`` (again, if the replacement dies too) and resubmit its call."""
        while True:
            self.restarts += 1
            if self.restarts > self.max_restarts:
                raise WorkersExhausted(
                    f"rollout workers died {self.restarts} times (execution.max_worker_restarts="
                    f"{self.max_restarts}); last: {exc}"
                ) from exc
            log.warning("rollout worker %d died (%s); replacing it and redoing its work", i, exc)
            try:
                self.workers[i] = self.executor.restart(self.workers[i])
                self._record_placement([self.workers[i]], "replaced")
                return self.executor.submit(self.workers[i], call[0].__name__, *call[1])
            except WorkerDied as again:
                exc = again

    def collect(self, requests: list[RolloutRequest]) -> list[RolloutReport]:
        """Every worker plays every request once; reports are merged per learner."""
        return self.start_collect(requests).result()

    def start_collect(self, requests: list[RolloutRequest]) -> Collection:
        """:meth:`collect` without waiting: the workers play while the caller goes on (the
        learners update on the previous round's trajectories, ``execution.overlap``)."""
        calls: list[tuple[Callable[..., Any], tuple[Any, ...]]] = [
            (RolloutWorker.run, (requests,))
        ] * self.num_workers
        return Collection(self, requests, calls, self._start(calls))

    def evaluate(
        self,
        pairings: list[tuple[str, str, int]],
        progress: Callable[[int], None] | None = None,
        *,
        paired: bool = False,
    ) -> EvaluationResult:
        """Play every pairing's quota, split evenly over the workers (a pairing and its mirror
        split alike, so ``paired`` pairs them on each worker)."""
        shares: list[list[tuple[str, str, int]]] = [[] for _ in self.workers]
        for a, b, n in pairings:
            base, extra = divmod(n, self.num_workers)
            for i in range(self.num_workers):
                k = base + (1 if i < extra else 0)
                if k:
                    shares[i].append((a, b, k))
        outs: list[EvaluationResult] = self._on_all([(RolloutWorker.evaluate, (s, paired)) for s in shares])
        results: list[MatchResult] = []
        behaviour: dict[str, Behaviour] = {}
        steps = 0
        for out in outs:
            results.extend(out.results)
            steps += out.env_steps
            for pid, beh in out.behaviour.items():
                acc = behaviour.setdefault(pid, Behaviour())
                acts, pos = beh.arrays()
                acc.add(acts, pos)
        if progress is not None:
            progress(len(results))
        return EvaluationResult(results, steps, behaviour)


class Collection:
    """A round of rollout calls under way (:meth:`RolloutManager.start_collect`)."""

    def __init__(
        self,
        manager: RolloutManager,
        requests: list[RolloutRequest],
        calls: list[tuple[Callable[..., Any], tuple[Any, ...]]],
        futures: list[Future],
    ) -> None:
        self._manager = manager
        self._requests = requests
        self._calls = calls
        self._futures = futures

    def result(self) -> list[RolloutReport]:
        """Wait for every worker's call and for its trajectories to be in the EpisodeServer (a
        dead worker's call is redone); the reports merged per learner."""
        per_worker = self._manager._finish(self._futures, self._calls, _pushed)
        merged = {r.learner_id: RolloutReport(r.learner_id) for r in self._requests}
        for reports in per_worker:
            for rep in reports:
                m = merged[rep.learner_id]
                m.results.extend(rep.results)
                m.env_steps += rep.env_steps
                m.samples += rep.samples
                m.batches += rep.batches
                m.seconds = max(m.seconds, rep.seconds)
        return list(merged.values())


def _pushed(reports: list[RolloutReport]) -> None:
    """Wait until the trajectories of ``reports`` are in the EpisodeServer (a learner pulls next)."""
    for rep in reports:
        if rep.pushed is not None:
            rep.pushed.result()
