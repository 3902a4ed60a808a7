"""TrainingManager: runs a generation's tasks, all learners concurrently on the shared workers.

Each round, every learner whose task still has steps left gets one rollout request on every
worker (its opponents sampled per episode from the task's distribution); then every such
learner takes one update on the trajectories of its current version and publishes new weights.
A task ends when its env-step budget is spent. Games still in progress then go on in the next
generation's calls against the opponents they were drawn with (each result says which
generation drew it: ``MatchResult.drawn_generation``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from light_league.execution.base import Executor, Handle
from light_league.rollout.rollout_manager import RolloutManager
from light_league.rollout.rollout_worker import RolloutRequest
from light_league.training.component import LearnerComponent, UpdateResult
from light_league.types import MatchResult, TrainingTask


@dataclass
class TrainingOutcome:
    results: list[MatchResult] = field(default_factory=list)
    env_steps: dict[str, int] = field(default_factory=dict)
    #: per learner: the metrics of its last update, averaged over the generation's updates
    metrics: dict[str, dict[str, float]] = field(default_factory=dict)
    updates: dict[str, int] = field(default_factory=dict)
    rollout_s: float = 0.0
    update_s: float = 0.0


class TrainingManager:
    def __init__(
        self, executor: Executor, rollout: RolloutManager, learners: dict[str, Handle], *, steps_per_call: int
    ) -> None:
        self.executor = executor
        self.rollout = rollout
        self.learners = learners
        self.steps_per_call = steps_per_call
        self.versions = {lid: executor.invoke(h, LearnerComponent.get_version) for lid, h in learners.items()}
        #: learners that compute their policy from the opponents alone (exact best responses):
        #: one train_step per generation, no rollouts
        self.oracle = any(not getattr(h.cls, "plays_rollouts", True) for h in learners.values())

    def _train_steps(self, tasks: list[TrainingTask]) -> dict[str, UpdateResult | None]:
        """One ``train_step`` of every task's learner, all submitted before any is awaited; the
        learners' versions follow what they published."""
        futures = {
            t.learner_id: self.executor.submit_method(
                self.learners[t.learner_id], LearnerComponent.train_step, t.opponents
            )
            for t in tasks
        }
        results = {lid: fut.result() for lid, fut in futures.items()}
        for lid, result in results.items():
            if result is not None:
                self.versions[lid] = result.version
        return results

    def _run_oracles(self, tasks: list[TrainingTask]) -> TrainingOutcome:
        out = TrainingOutcome()
        start = time.perf_counter()
        for lid, result in self._train_steps(tasks).items():
            if result is None:
                raise RuntimeError(f"learner {lid!r} computed no policy from its opponents")
            out.metrics[lid] = dict(result.metrics)
            out.updates[lid] = 1
            out.env_steps[lid] = 0
        out.update_s = time.perf_counter() - start
        return out

    def run(
        self,
        tasks: list[TrainingTask],
        progress: Callable[[int], None] | None = None,
        *,
        generation: int = 0,
    ) -> TrainingOutcome:
        """Run ``tasks`` to their step budgets; ``generation`` is stamped on the games they draw."""
        if self.oracle:
            return self._run_oracles(tasks)
        out = TrainingOutcome()
        left = {t.learner_id: t.env_steps for t in tasks}
        sums: dict[str, dict[str, float]] = {}
        while any(v > 0 for v in left.values()):
            active = [t for t in tasks if left[t.learner_id] > 0]
            requests = [
                RolloutRequest(
                    t.learner_id,
                    self.versions[t.learner_id],
                    t.opponents,
                    self.steps_per_call,
                    t.seat,
                    generation,
                )
                for t in active
            ]
            start = time.perf_counter()
            reports = self.rollout.collect(requests)
            out.rollout_s += time.perf_counter() - start
            for rep in reports:
                out.results.extend(rep.results)
                out.env_steps[rep.learner_id] = out.env_steps.get(rep.learner_id, 0) + rep.env_steps
                left[rep.learner_id] -= rep.env_steps
                if progress is not None:
                    progress(rep.env_steps)
            start = time.perf_counter()
            for lid, result in self._train_steps(active).items():
                if result is None:
                    continue
                acc = sums.setdefault(lid, {})
                for k, v in result.metrics.items():
                    acc[k] = acc.get(k, 0.0) + float(v)
                out.updates[lid] = out.updates.get(lid, 0) + 1
            out.update_s += time.perf_counter() - start
        out.metrics = {lid: {k: v / out.updates[lid] for k, v in acc.items()} for lid, acc in sums.items()}
        return out

    def reset(self, learner_id: str, source: str | None = None) -> None:
        """Reset ``learner_id`` to its initial weights, or to learner ``source``'s current ones."""
        handle = self.learners[learner_id]
        self.versions[learner_id] = self.executor.invoke(handle, LearnerComponent.reset, source)

    def refresh_versions(self) -> None:
        self.versions = {
            lid: self.executor.invoke(h, LearnerComponent.get_version) for lid, h in self.learners.items()
        }
