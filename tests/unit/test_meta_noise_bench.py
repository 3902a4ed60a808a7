"""bench/meta_noise.py on one tiny real Kuhn league (the session's ``tiny_kuhn_league``): its reading of the run's meta-strategy is the
run's own ``meta_nash_conv``, its cell errors are in chips, and its games estimate follows them."""

from __future__ import annotations

import json
from pathlib import Path

import meta_noise as bench  # bench/ is on pytest's pythonpath
import pytest

pytestmark = pytest.mark.integration  # the session's tiny run


def test_the_reading_matches_the_run_and_is_in_chips(tiny_kuhn_league: Path) -> None:
    reading = bench.read_run(tiny_kuhn_league, (0.01, 0.1), draws=2, seed=0)
    records = [json.loads(line) for line in (tiny_kuhn_league / "generations.jsonl").read_text().splitlines()]
    # the run's own meta-strategy, read back from its payoff table, is the one the run measured
    assert reading.run_meta == pytest.approx(records[-1]["meta_nash_conv"], abs=1e-9)
    assert reading.members == len(records[-1]["population"])
    assert 0.0 <= reading.exact_nash <= 0.917 + 1e-9  # uniform play is at 0.917
    # a Kuhn game pays at most 2 chips a seat, so one game's variance is at most 4 (a cell of n
    # games errs by about its sd / sqrt(n)); a table in other units would read far off
    assert 0.05 < reading.game_variance <= 4.5, reading
    assert reading.rms_error > 0.0
    assert reading.games_for(0.01) == pytest.approx(reading.game_variance / 1e-4, rel=1e-6, abs=1)
    assert reading.games_for(0.01) > reading.games_for(0.1)
    for sd in (0.01, 0.1):
        mean, worst = reading.noisy[sd]
        assert 0.0 <= mean <= worst <= 0.917 + 1e-9


def test_the_output_file_carries_the_command(tiny_kuhn_league: Path, tmp_path: Path) -> None:
    out = tmp_path / "noise.txt"
    bench.main([str(tiny_kuhn_league), "--sd", "0.05", "--draws", "1", "--out", str(out)])
    text = out.read_text()
    assert text.startswith("# command: python ") and "--out" not in text.splitlines()[0]
    assert "exact-table Nash" in text and "games for 0.05" in text


def test_bad_arguments_say_what_to_give(tiny_kuhn_league: Path) -> None:
    with pytest.raises(SystemExit, match="positive noise levels and positive temperatures"):
        bench.main([str(tiny_kuhn_league), "--sd", "0"])


def test_the_played_table_through_each_solver(tiny_kuhn_league: Path) -> None:
    reading = bench.read_run(tiny_kuhn_league, (0.1,), draws=1, seed=0, qre=(0.003,))
    assert list(reading.solvers) == ["nash", "qre 0.003", "prd", "uniform"]
    assert reading.solvers["nash"] == pytest.approx(reading.run_meta, abs=1e-9)  # the run solves the LP Nash
    assert all(0.0 <= v <= 0.917 + 1e-9 for v in reading.solvers.values())


def test_the_shared_games_table_for_each_behaviour(tiny_kuhn_league: Path, tmp_path: Path) -> None:
    """``--shared-games N --pools K``: each behaviour's table read from K independent pools, every
    error in chips and every NashConv within Kuhn's range; the output names both behaviours."""
    reading = bench.read_run(tiny_kuhn_league, (0.1,), draws=1, seed=0, shared=(3000,), pools=2)
    assert list(reading.shared) == [(3000, "uniform"), (3000, "estimated")]
    for readings in reading.shared.values():
        assert len(readings) == 2 and readings[0] != readings[1]  # two pools, two sets of games
        assert all(0.0 < error < 2.0 and 0.0 <= value <= 0.917 + 1e-9 for error, value in readings)
    out = tmp_path / "shared.txt"
    bench.main(
        [str(tiny_kuhn_league), "--sd", "0.1", "--draws", "1", "--shared-games", "3000", "--out", str(out)]
    )
    text = out.read_text()
    assert "3,000 estimated rms error" in text and "3,000 uniform NashConv" in text
    with pytest.raises(SystemExit, match="at least one pool"):
        bench.main([str(tiny_kuhn_league), "--shared-games", "3000", "--pools", "0"])
