"""Console output: progress counting, the summary in each mode, known formatted lines."""

from __future__ import annotations

import io
from typing import Any

import pytest

from light_league.tracking.config import LoggingConfig
from light_league.tracking.console import (
    Console,
    headline,
    metrics_line,
    quiet_line,
    start_line,
    summary_lines,
)
from light_league.tracking.leaderboard import final_lines, leaderboard, leaderboard_markdown
from light_league.tracking.logger import PayoffSnapshot
from light_league.tracking.record import GenerationRecord


def R(data: dict[str, Any]) -> GenerationRecord:
    """A record from its JSON object (``generation`` 4 unless given)."""
    return GenerationRecord.from_json({"generation": 4, **data})


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
    "rating_ci95": {"main_0": [1170.4, 1250.4], "exp_0": [1100.0, 1200.0], "random": [800.0, 800.0]},
    "rating_anchor": "random",
    "diversity": 0.4567,
    "meta_nash_conv": 0.01234,
    "env_steps_per_s": 12345.6,
    "timings": {"train": 30.04, "evaluate": 10.2},
}
NEWEST = [
    {"learner": "main_0", "id": "main_0-v9", "role": "main_agent", "rating": 1099.6, "meta_strategy": 0.0,
     "baseline": "scripted_l5", "win_rate": 0.625, "rating_ci95": [1064.6, 1134.6],
     "win_rate_ci95": [0.51, 0.73], "games": 64},
    {"learner": "exp_0", "id": "exp_0-v4", "role": "main_exploiter", "rating": None, "meta_strategy": 0.25,
     "baseline": "scripted_l5", "win_rate": None},
]  # fmt: skip


def console(mode: str, **overrides: Any) -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(LoggingConfig(console=mode, **overrides), file=out), out


def test_leaderboard_without_a_ranking_orders_by_rating_then_meta_strategy_mass() -> None:
    board = leaderboard(R(STATS))
    assert [row[1] for row in board] == ["main_0", "exp_0", "league_0", "random"]
    assert board[0] == (1, "main_0", "main_agent", 1210.4, 0.5, None, None)
    assert board[-1] == (4, "random", "baseline", 800.0, 0.0, None, None)
    # a record written before the fitted rating has only the sequential "elo"
    old = {k: v for k, v in STATS.items() if k != "rating"} | {"elo": STATS["rating"]}
    assert leaderboard(R(old)) == board


def test_headline_and_quiet_line_known_answers() -> None:
    assert headline(4, R(STATS)) == "generation 4 · 4 agents · 1,200,000 env steps · 12,346 steps/s · 42.1 s"
    assert quiet_line(4, R(STATS)) == (
        "generation 4 · 4 agents · 1,200,000 env steps · 12,346 steps/s · 42.1 s"
        " | top main_0 rating 1210 ± 40 meta 0.500"
        " | meta entropy 1.030 · meta nash_conv 0.012 · diversity 0.457"
    )
    # a record written before meta_nash_conv kept it as nash_conv: read under the one name
    old = {k: v for k, v in STATS.items() if k != "meta_nash_conv"} | {"nash_conv": 0.01234}
    assert quiet_line(4, R(old)) == quiet_line(4, R(STATS))


def test_quiet_mode_prints_one_line_per_generation() -> None:
    con, out = console("quiet")
    for g in range(3):
        with con.generation_progress(g, total_steps=100, total_eval_games=10) as progress:
            progress.advance_train(100)
            progress.advance_eval(10)
        con.summary(g, R(STATS))
    lines = out.getvalue().splitlines()
    assert len(lines) == 3
    assert lines[2].startswith("generation 2 · 4 agents")


def test_plain_summary_fits_one_screen_and_truncates_the_population() -> None:
    con, out = console("plain", summary_top_k=2)
    con.summary(4, R(STATS))
    lines = out.getvalue().splitlines()
    assert lines == summary_lines(4, R(STATS), top_k=2)
    assert "main_0" in lines[2] and "1210" in lines[2] and "0.500" in lines[2]
    assert lines[4].strip() == "... 2 more (meta-strategy mass 0.200)"  # the rows left out, with their mass
    assert lines[-1] == "timings: train 30.0 s · evaluate 10.2 s"
    assert len(lines) <= 24


def test_missing_or_null_fields_are_left_out() -> None:
    stats = {k: v for k, v in STATS.items() if k not in ("meta_nash_conv", "timings", "env_steps_per_s")}
    text = "\n".join(summary_lines(1, R(stats)))
    assert "nash_conv" not in text and "timings" not in text and "steps/s" not in text
    assert "meta entropy 1.030 · diversity 0.457" in text
    assert metrics_line(R(stats | {"diversity": None})) == "meta entropy 1.030"
    assert quiet_line(0, R({"population": [], "diversity": None})) == "generation 0 · 0 agents"


def test_rich_summary_names_every_shown_agent() -> None:
    out = io.StringIO()
    con = Console(LoggingConfig(console="rich"), file=out, terminal=True)
    con.summary(4, R(STATS))
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
    con.summary(0, R(STATS))
    assert "gen 0 train" in out.getvalue() and "main_0" in out.getvalue()


def test_note_prints_in_quiet_mode_too() -> None:
    con, out = console("quiet")
    con.note("resumed from generation 3")
    assert out.getvalue() == "resumed from generation 3\n"


def test_every_learners_newest_snapshot_is_shown_in_every_mode_even_outside_the_top_k() -> None:
    stats = R(STATS | {"newest": NEWEST})
    quiet = quiet_line(4, stats)
    assert (
        " | main_0-v9 rating 1100 ± 35 meta 0.000 vs scripted_l5 0.625 [0.51, 0.73] (64)"
        " · exp_0-v4 rating - meta 0.250 vs scripted_l5 - | " in quiet
    )
    plain = summary_lines(4, stats, top_k=1)
    assert plain[1].split()[:5] == ["newest", "snapshot", "rating", "±95%", "meta"]
    assert plain[2].split() == [
        "main_0-v9",
        "1100",
        "±",
        "35",
        "0.000",
        "scripted_l5",
        "0.625",
        "[0.51,",
        "0.73]",
        "(64)",
    ]
    assert plain[3].split() == ["exp_0-v4", "-", "0.250", "scripted_l5", "-"]
    out = io.StringIO()
    Console(LoggingConfig(console="rich"), file=out, terminal=True).summary(4, stats)
    assert "main_0-v9" in out.getvalue() and "exp_0-v4" in out.getvalue()


def test_rich_mode_writes_plain_lines_when_the_output_is_not_a_terminal() -> None:
    con, out = console("rich", summary_top_k=3)
    con.summary(4, R(STATS | {"newest": NEWEST}))
    assert out.getvalue().splitlines() == summary_lines(4, R(STATS | {"newest": NEWEST}), top_k=3)
    assert "╭" not in out.getvalue() and "│" not in out.getvalue()


def test_numbers_have_one_format_per_kind() -> None:
    tiny = quiet_line(0, R({"population": [], "meta_nash_conv": 3.886e-16, "meta_entropy": 1.09}))
    assert tiny == "generation 0 · 0 agents | meta entropy 1.090 · meta nash_conv 0.000"
    assert "e-" not in "\n".join(summary_lines(4, R(STATS | {"meta_nash_conv": 3.886e-16})))


def test_ratings_show_their_interval_and_the_anchor_is_named() -> None:
    lines = summary_lines(4, R(STATS))
    assert "main_0" in lines[2] and "1210 ± 40" in lines[2]
    random_row = next(line for line in lines if "random" in line)
    assert random_row.split()[5] == "800" and "±" not in random_row  # the anchor: no interval
    table = leaderboard_markdown(R(STATS | {"newest": NEWEST}), top_k=2)
    assert "random = 800 held fixed" in table and "Ordered by rating" in table  # no ranking in STATS
    assert "| 1 | main_0 | main_agent | - | - | 1210 ± 40 | 0.500 |" in table
    assert "2 more members hold meta-strategy mass 0.200." in table  # league_0 0.2, random 0


def test_the_first_line_names_the_run_directory_backend_and_stop_rules() -> None:
    line = start_line("runs/x", "ray (2 rollout workers)", ["stop.max_wall_s=360", "stop.max_generations=40"])
    assert (
        line
        == "run directory runs/x · backend ray (2 rollout workers) · stops at stop.max_wall_s=360 or stop.max_generations=40"
    )
    assert start_line("runs/x", "local", ["stop.max_generations=4"], resumed_at=2).endswith(
        "resuming at generation 2"
    )


def test_the_final_summary_names_the_stop_reason_the_strongest_and_the_main_agent_against_each_baseline() -> (
    None
):
    snap = PayoffSnapshot(
        4,
        ["random", "scripted_l5", "main_0-v9"],
        ["baseline", "baseline", "main_agent"],
        [[0.5, 0.1, 0.2], [0.9, 0.5, 0.375], [0.8, 0.625, 0.5]],
        [[0, 64, 64], [64, 0, 64], [64, 64, 0]],
        [0.0, 0.5, 0.5],
        ci_low=[[0.5, 0.05, 0.1], [0.8, 0.5, 0.27], [0.7, 0.51, 0.5]],
        ci_high=[[0.5, 0.2, 0.3], [0.95, 0.5, 0.49], [0.9, 0.73, 0.5]],
    )
    record = STATS | {
        "newest": NEWEST,
        "population": [{"id": a, "role": r} for a, r in zip(snap.agent_ids, snap.roles)],
    }
    lines = final_lines(
        "stop.max_wall_s=360 (the first generation to end past 360 s)", R(record), snap, top_k=2
    )
    assert lines[0] == (
        "run stopped: stop.max_wall_s=360 (the first generation to end past 360 s) after 5 generations, "
        "42.1 s, 1,200,000 env steps"
    )
    assert "random = 800 held fixed" in lines[1]
    assert any(line.split()[:2] == ["1", "main_0-v9"] or "main_0-v9" in line for line in lines[2:4])
    versus = lines[lines.index(next(x for x in lines if x.startswith("main_0-v9 ("))) + 1 :]
    assert versus[0].split() == ["random", "0.800", "[0.70,", "0.90]", "(64)"]
    assert versus[1].split() == ["scripted_l5", "0.625", "[0.51,", "0.73]", "(64)"]
    assert "cycles" in lines[-1] and "report" in lines[-1]


def test_the_run_bar_counts_down_a_wall_budget_on_a_terminal() -> None:
    out = io.StringIO()
    con = Console(LoggingConfig(console="rich"), file=out, terminal=True)
    with con.run_progress(max_wall_s=360.0, wall_s=120.0, max_generations=40, generation=3) as bar:
        with con.generation_progress(3, total_steps=10, total_eval_games=2) as progress:
            progress.advance_train(10)
        con.summary(3, R(STATS))
        bar.update(wall_s=130.0, generation=4)
    text = out.getvalue()
    assert "run, generation 4 of at most 40" in text and "of 6:00" in text and "left" in text
    assert "gen 3 train" in text and "main_0" in text
    plain, plain_out = console("plain")
    with plain.run_progress(max_wall_s=360.0, wall_s=0.0, max_generations=40, generation=0) as bar:
        bar.update(wall_s=1.0, generation=1)
    assert plain_out.getvalue() == ""  # no bars off a terminal
