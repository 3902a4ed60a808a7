"""Recurrent MAPPO learns recall, the game only memory wins; feed-forward MAPPO cannot.

``bench/recurrent_memory.py``'s training and scoring (128 games x 16 steps per update against
``random``, default settings), one seed and fewer updates: the recurrent learner must score
within 10% of the best achievable (0.75, every cue recalled) and the feed-forward one must stay
at the memoryless value (0) within the evaluation's noise. About 15 s on one core.
"""

from __future__ import annotations

import pytest
import recurrent_memory as bench  # bench/ is on pytest's pythonpath

UPDATES, GAMES = 50, 4000


@pytest.mark.slow
def test_recurrent_mappo_recalls_the_cue_where_feed_forward_answers_at_chance() -> None:
    best = bench.best_score(4)
    recurrent, _ = bench.score(bench.train("recurrent", seed=0, updates=UPDATES).policy, GAMES)
    assert recurrent >= 0.9 * best, f"recurrent scores {recurrent:.3f}, best achievable {best:.3f}"
    feed_forward, half_width = bench.score(bench.train("feed-forward", seed=0, updates=UPDATES).policy, GAMES)
    assert abs(feed_forward) < max(2 * half_width, 0.05), f"feed-forward scores {feed_forward:.3f}"
