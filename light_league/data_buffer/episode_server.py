"""EpisodeServer: bounded, per-learner trajectory store, on-policy by version.

Rollout workers ``push`` :class:`SampleBatch` es tagged with the learner version that produced
them; a learner ``pull`` s what its current version or a version at most ``execution.overlap``'s
lag older produced (older batches are dropped: MAPPO is on-policy, with a lag of one version
when acting and learning overlap). Each learner's queue is bounded; when full the oldest batch
is dropped and counted.
"""

from __future__ import annotations

from collections import defaultdict, deque

from light_league.data_buffer.episode import SampleBatch


class EpisodeServer:
    def __init__(self, *, max_batches_per_learner: int = 256) -> None:
        if max_batches_per_learner < 1:
            raise ValueError(f"max_batches_per_learner must be >= 1, got {max_batches_per_learner}")
        self._queues: dict[str, deque[SampleBatch]] = defaultdict(
            lambda: deque(maxlen=max_batches_per_learner)
        )
        self.dropped: dict[str, int] = defaultdict(int)

    def push(self, learner_id: str, batch: SampleBatch) -> None:
        queue = self._queues[learner_id]
        if len(queue) == queue.maxlen:
            self.dropped[learner_id] += 1
        queue.append(batch)

    def pull(self, learner_id: str, min_version: int, limit: int | None = None) -> SampleBatch | None:
        """The queued batches of ``learner_id`` with version ≥ ``min_version``, oldest first and at
        most ``limit`` of them (None: all), joined; None if none. Older batches met on the way are
        dropped; batches past ``limit`` stay queued (the next round's, pushed while this one's
        learner was updating)."""
        queue = self._queues.get(learner_id)
        if not queue:
            return None
        fresh: list[SampleBatch] = []
        while queue and (limit is None or len(fresh) < limit):
            batch = queue.popleft()
            if batch.policy_version >= min_version:
                fresh.append(batch)
            else:
                self.dropped[learner_id] += 1
        return SampleBatch.concat(fresh) if fresh else None

    def size(self, learner_id: str) -> int:
        return len(self._queues.get(learner_id, ()))

    def clear(self, learner_id: str | None = None) -> None:
        if learner_id is None:
            self._queues.clear()
        else:
            self._queues.pop(learner_id, None)
