"""bench/long_run.py: the windows of a long run and its two checks (generation time of the last
10 minutes against the 10th minute's, each output's NashConv at the end against the mark)."""

from __future__ import annotations

import long_run as bench  # bench/ is on pytest's pythonpath


def _run(seconds_at: list[tuple[float, float]], nash: float = 0.01) -> list[bench.Generation]:
    """Generations every ``step`` s; ``seconds_at``: (wall time from, generation seconds)."""
    gens, wall, g = [], 0.0, 0
    for until, step in seconds_at:
        while wall + step <= until:
            wall += step
            gens.append(
                bench.Generation(
                    generation=g,
                    wall_s=wall,
                    seconds=step,
                    active=min(2 * g, 200),
                    archived=max(2 * g - 200, 0),
                    timings={"train": step / 2, "evaluate": step / 4},
                    nash_conv={"main_nash_conv": nash, "meta_nash_conv": nash / 2},
                )
            )
            g += 1
    return gens


def test_the_ratio_reads_the_10th_minute_and_the_last_10_minutes() -> None:
    gens = _run([(600.0, 4.0), (3000.0, 5.0), (3600.0, 6.0)])
    lines = bench.checks(gens, mark=120.0)
    assert lines[0].startswith("generation time, last 10 minutes / 10th minute: 6.00 s / 4.00 s = 1.50x")
    assert (
        "main_nash_conv: median 0.0100 in the minute to 120 s, 0.0100 in the last 10 minutes: no worse"
        in lines[1]
    )
    assert len(lines) == 3  # no average policy recorded: no line for it


def test_a_worse_end_is_said() -> None:
    gens = _run([(600.0, 4.0)], nash=0.01) + _run([(1200.0, 4.0)], nash=0.05)[150:]
    for late in gens[150:]:
        late.wall_s += 600.0
    assert "WORSE" in bench.checks(gens, mark=120.0)[1]


def test_one_row_per_window_with_the_members_at_its_end() -> None:
    gens = _run([(1200.0, 5.0)])
    rows = bench.window_rows(gens, 600.0)
    assert [r[0] for r in rows] == ["0-10", "10-20"]
    assert rows[0][1] == "0-119" and rows[0][2] == str(2 * 119) and rows[0][3] == str(2 * 119 - 200)
    assert rows[1][4] == "5.00"  # the median generation time


def test_churn_counts_members_archived_again_soon_after_they_came_back() -> None:
    gens = _run([(300.0, 5.0)])  # generations 0-59
    gens[10].restored_now = ("a", "b")
    gens[12].archived_now = ("a",)  # back for two generations: churn
    gens[40].archived_now = ("b",)  # back for thirty: stayed
    gens[55].restored_now = ("c",)  # too late to judge within 10
    line = bench.churn(gens, within=10)
    assert (
        line
        == "archive: 3 members brought back (0.05 a generation), 50% of them archived again within 10 generations"
    )
    assert bench.churn(_run([(60.0, 5.0)]), within=10) == "archive: no member brought back"
