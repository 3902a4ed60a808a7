"""TrainingManager: runs a generation's tasks, all learners concurrently on the shared workers.

Each round, every learner whose task still has steps left gets one rollout request on every
worker (its opponents sampled per episode from the task's distribution); then every such
learner takes one update on the trajectories of its current version and publishes new weights.
A task ends when its env-step budget is spent. Games still in progress then go on in the next generation's calls against the opponents
they were drawn with (each result says which generation drew it: ``MatchResult.drawn_generation``).

With ``overlap`` (``execution.overlap``) the workers play the next round while the learners
update on the last one: the next round's requests go out, with the versions the learners have
before that update, before the update starts. Each batch is then one version behind the
learner that updates on it (from the second update of a generation on; the first is on
trajectories of its own version), the learner takes exactly that round's batches, and the PPO
ratio is taken against the behaviour policy's own log-probabilities (``policy_lag`` in the
training metrics). The budgets and the rounds are the same as without overlap: a round is sent
only for tasks with steps left, and nothing is under way when ``run`` returns (a checkpoint
finds every trajectory used). On the local backend a call runs when it is sent, so the order is
the same but nothing runs side by side.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from light_league.execution.base import Executor, Handle
from light_league.rollout.rollout_manager import Collection, RolloutManager
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
        self,
        executor: Executor,
        rollout: RolloutManager,
        learners: dict[str, Handle],
        *,
        steps_per_call: int,
        overlap: bool = False,
    ) -> None:
        self.executor = executor
        self.rollout = rollout
        self.learners = learners
        self.steps_per_call = steps_per_call
        self.overlap = overlap
        self.versions = {lid: executor.invoke(h, LearnerComponent.get_version) for lid, h in learners.items()}
        #: learners that compute their policy from the opponents alone (exact best responses):
        #: one train_step per generation, no rollouts
        self.oracle = any(not getattr(h.cls, "plays_rollouts", True) for h in learners.values())

    def _train_steps(
        self, tasks: list[TrainingTask], batches: dict[str, int] | None = None
    ) -> dict[str, UpdateResult | None]:
        """One ``train_step`` of every task's learner, all submitted before any is awaited; the
        learners' versions follow what they published. With ``batches`` (overlap), each learner
        takes that many of its queued batches, one version behind it at most."""
        futures = {
            t.learner_id: self.executor.submit_method(
                self.learners[t.learner_id],
                LearnerComponent.train_step,
                t.opponents,
                **({"batches": batches.get(t.learner_id, 0), "max_lag": 1} if batches is not None else {}),
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

        def start_round() -> tuple[list[TrainingTask], Collection] | None:
            active = [t for t in tasks if left[t.learner_id] > 0]
            if not active:
                return None
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
            # a local executor plays the whole round here, a remote one only sends it
            start = time.perf_counter()
            collection = self.rollout.start_collect(requests)
            out.rollout_s += time.perf_counter() - start
            return active, collection

        pending = start_round()
        while pending is not None:
            active, collection = pending
            start = time.perf_counter()
            reports = collection.result()
            out.rollout_s += time.perf_counter() - start
            for rep in reports:
                out.results.extend(rep.results)
                out.env_steps[rep.learner_id] = out.env_steps.get(rep.learner_id, 0) + rep.env_steps
                left[rep.learner_id] -= rep.env_steps
                if progress is not None:
                    progress(rep.env_steps)
            batches = None
            if self.overlap:  # the next round plays while the learners update on this one
                batches = {rep.learner_id: rep.batches for rep in reports}
                pending = start_round()
            start = time.perf_counter()
            for lid, result in self._train_steps(active, batches).items():
                if result is None:
                    continue
                acc = sums.setdefault(lid, {})
                for k, v in result.metrics.items():
                    acc[k] = acc.get(k, 0.0) + float(v)
                out.updates[lid] = out.updates.get(lid, 0) + 1
            out.update_s += time.perf_counter() - start
            if not self.overlap:
                pending = start_round()
        out.metrics = {lid: {k: v / out.updates[lid] for k, v in acc.items()} for lid, acc in sums.items()}
        return out

    def reset(self, learner_id: str, source: str | None = None) -> None:
        """Reset ``learner_id`` to its initial weights, or to learner ``source``'s current ones."""
        handle = self.learners[learner_id]
        self.versions[learner_id] = self.executor.invoke(handle, LearnerComponent.reset, source)

    def snapshot(self, learner_id: str) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """``(policy meta, weights)`` a snapshot of ``learner_id`` freezes (None: its last
        published policy)."""
        return self.executor.invoke(self.learners[learner_id], LearnerComponent.snapshot)

    def refresh_versions(self) -> None:
        self.versions = {
            lid: self.executor.invoke(h, LearnerComponent.get_version) for lid, h in self.learners.items()
        }
