"""What ``main.py eval`` and ``watch`` say about a game's result."""

from __future__ import annotations

import pytest

from light_league.pit import pit_line, result_words
from light_league.rollout.head_to_head import HeadToHead


@pytest.mark.parametrize(
    ("outcome", "words"),
    [
        (1.0, "blue wins"),
        (0.0, "red wins"),
        (0.5, "a draw"),
        (0.7, "blue scores 0.70"),
        (0.25, "blue scores 0.25"),
    ],
)
def test_watch_says_a_graded_result_as_its_score_and_only_an_even_one_a_draw(
    outcome: float, words: str
) -> None:
    assert result_words("blue", "red", outcome) == words


def test_the_eval_line_never_prints_a_negative_zero() -> None:
    result = HeadToHead(
        games=400,
        score=0.5,
        score_ci95=(0.45, 0.55),
        payoff=-0.0001,
        payoff_ci95=(-0.0004, 0.0002),
        wins=180,
        draws=40,
        losses=180,
        opponents={"b": 400},
    )
    line = pit_line("a", "b", result, seed=0)
    assert "-0.000" not in line
    assert line.endswith("payoff 0.000 [0.000, 0.000] per game")
