"""Console output: progress counting, the summary in each mode, known formatted lines."""

from __future__ import annotations

import io
from typing import Any

import pytest

from light_league.tracking.config import LoggingConfig
from light_league.tracking.console import (
    Console,
    headline,
    leaderboard,
    metrics_line,
    quiet_line,
    summary_lines,
)

STATS: dict[str, Any] = {
    "generation": 4,
    "wall_s": 42.125,
    "env_steps": 1_200_000,
    "population": [
        {"id": "main_0", "role": "main_agent"},
        {"id": "exp_0", "role": "main_exploiter"},
        {"id": "random", "role": "baseline"},
        {"id": "league_0", "role": "league_exploiter"},
    ],
    "meta_strategy": {"main_0": 0.5, "exp_0": 0.3, "league_0": 0.2},
    "meta_entropy": 1.0296,
    "rating": {"main_0": 1210.4, "exp_0": 1150.0, "random": 800.0, "league_0": 1150.0},
    "diversity": 0.4567,
    "nash_conv": 0.01234,
    "env_steps_per_s": 12345.6,
    "timings": {"train": 30.04, "evaluate": 10.2},
}
NEWEST = [
    {"learner": "main_0", "id": "main_0-v9", "role": "main_agent", "rating": 1099.6, "meta_strategy": 0.0,
     "baseline": "scripted_l5", "win_rate": 0.625},
    {"learner": "exp_0", "id": "exp_0-v4", "role": "main_exploiter", "rating": None, "meta_strategy": 0.25,
     "baseline": "scripted_l5", "win_rate": None},
]  # fmt: skip


def console(mode: str, **overrides: Any) -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(LoggingConfig(console=mode, **overrides), file=out), out


def test_leaderboard_orders_by_rating_then_meta_strategy_mass() -> None:
    board = leaderboard(STATS)
    assert [row[1] for row in board] == ["main_0", "exp_0", "league_0", "random"]
    assert board[0] == (1, "main_0", "main_agent", 1210.4, 0.5)
    assert board[-1] == (4, "random", "baseline", 800.0, 0.0)
    # a record written before the fitted rating has only the sequential "elo"
    old = {k: v for k, v in STATS.items() if k != "rating"} | {"elo": STATS["rating"]}
    assert leaderboard(old) == board


def test_headline_and_quiet_line_known_answers() -> None:
    assert headline(4, STATS) == "generation 4 · 4 agents · 1,200,000 env steps · 12,346 steps/s · 42.1 s"
    assert quiet_line(4, STATS) == (
        "generation 4 · 4 agents · 1,200,000 env steps · 12,346 steps/s · 42.1 s"
        " | top main_0 rating 1210 meta 0.500"
        " | meta entropy 1.030 · nash_conv 0.012 · diversity 0.457"
    )


def test_quiet_mode_prints_one_line_per_generation() -> None:
    con, out = console("quiet")
    for g in range(3):
        with con.generation_progress(g, total_steps=100, total_eval_games=10) as progress:
            progress.advance_train(100)
            progress.advance_eval(10)
        con.summary(g, STATS)
    lines = out.getvalue().splitlines()
    assert len(lines) == 3
    assert lines[2].startswith("generation 2 · 4 agents")


def test_plain_summary_fits_one_screen_and_truncates_the_population() -> None:
    con, out = console("plain", summary_top_k=2)
    con.summary(4, STATS)
    lines = out.getvalue().splitlines()
    assert lines == summary_lines(4, STATS, top_k=2)
    assert "main_0" in lines[2] and "1210" in lines[2] and "0.500" in lines[2]
    assert lines[4].strip() == "... 2 more"
    assert lines[-1] == "timings: train 30.0 s · evaluate 10.2 s"
    assert len(lines) <= 24


def test_missing_or_null_fields_are_left_out() -> None:
    stats = {k: v for k, v in STATS.items() if k not in ("nash_conv", "timings", "env_steps_per_s")}
    text = "\n".join(summary_lines(1, stats))
    assert "nash_conv" not in text and "timings" not in text and "steps/s" not in text
    assert "meta entropy 1.030 · diversity 0.457" in text
    assert metrics_line(stats | {"diversity": None}) == "meta entropy 1.030"
    assert quiet_line(0, {"population": [], "diversity": None}) == "generation 0 · 0 agents"


def test_rich_summary_names_every_shown_agent() -> None:
    out = io.StringIO()
    con = Console(LoggingConfig(console="rich"), file=out, terminal=True)
    con.summary(4, STATS)
    text = out.getvalue()
    for agent in ("main_0", "exp_0", "league_0", "random"):
        assert agent in text
    assert "generation 4" in text and "nash_conv 0.012" in text


@pytest.mark.parametrize("mode", ["rich", "plain", "quiet"])
def test_progress_counts_in_every_mode(mode: str) -> None:
    con, out = console(mode)
    with con.generation_progress(0, total_steps=1000, total_eval_games=40) as progress:
        for _ in range(4):
            progress.advance_train(250)
        progress.advance_eval(40)
    assert (progress.train_done, progress.eval_done) == (1000, 40)
    assert out.getvalue() == ""  # bars are drawn only on a terminal


def test_rich_bars_on_a_terminal_are_transient() -> None:
    out = io.StringIO()
    con = Console(LoggingConfig(console="rich"), file=out, terminal=True)
    with con.generation_progress(0, total_steps=10, total_eval_games=2) as progress:
        progress.advance_train(10)
        progress.advance_eval(2)
    con.summary(0, STATS)
    assert "gen 0 train" in out.getvalue() and "main_0" in out.getvalue()


def test_note_prints_in_quiet_mode_too() -> None:
    con, out = console("quiet")
    con.note("resumed from generation 3")
    assert out.getvalue() == "resumed from generation 3\n"


def test_every_learners_newest_snapshot_is_shown_in_every_mode_even_outside_the_top_k() -> None:
    stats = STATS | {"newest": NEWEST}
    quiet = quiet_line(4, stats)
    assert (
        " | main_0-v9 rating 1100 meta 0.000 vs scripted_l5 0.625 · exp_0-v4 rating - meta 0.250 vs scripted_l5 - | "
        in quiet
    )
    plain = summary_lines(4, stats, top_k=1)
    assert plain[1].split() == ["newest", "snapshot", "rating", "meta", "win", "rate", "vs"]
    assert plain[2].split() == ["main_0-v9", "1100", "0.000", "0.625", "scripted_l5"]
    assert plain[3].split() == ["exp_0-v4", "-", "0.250", "-", "scripted_l5"]
    out = io.StringIO()
    Console(LoggingConfig(console="rich"), file=out, terminal=True).summary(4, stats)
    assert "main_0-v9" in out.getvalue() and "exp_0-v4" in out.getvalue()


def test_rich_mode_writes_plain_lines_when_the_output_is_not_a_terminal() -> None:
    con, out = console("rich", summary_top_k=3)
    con.summary(4, STATS | {"newest": NEWEST})
    assert out.getvalue().splitlines() == summary_lines(4, STATS | {"newest": NEWEST}, top_k=3)
    assert "╭" not in out.getvalue() and "│" not in out.getvalue()


def test_numbers_have_one_format_per_kind() -> None:
    tiny = quiet_line(0, {"population": [], "nash_conv": 3.886e-16, "meta_entropy": 1.09})
    assert tiny == "generation 0 · 0 agents | meta entropy 1.090 · nash_conv 0.000"
    assert "e-" not in "\n".join(summary_lines(4, STATS | {"nash_conv": 3.886e-16}))
