"""bench/entropy_floor.py: the floor table on Kuhn, and a real tiny Kuhn league's learners read back
from its TensorBoard log (the session's ``tiny_kuhn_league``)."""

from __future__ import annotations

from pathlib import Path

import entropy_floor as bench  # bench/ is on pytest's pythonpath
import pytest

from light_league.algorithms import game_tree

pytest.importorskip("pyspiel")
pytestmark = pytest.mark.openspiel


def test_the_floor_table_is_the_soft_equilibrium_of_each_temperature() -> None:
    rows = bench.floor_rows("kuhn_poker", [0.1, 1.0])
    assert [r[0] for r in rows] == ["0.1", "1"]
    for row, t in zip(rows, (0.1, 1.0), strict=True):
        assert float(row[1]) == pytest.approx(game_tree.soft_equilibrium("kuhn_poker", t).nash_conv, abs=1e-4)
    assert float(rows[0][1]) < float(rows[1][1])


@pytest.mark.integration
def test_a_run_reads_each_learners_temperature_from_its_log(tiny_kuhn_league: Path, tmp_path: Path) -> None:
    temps = bench.learner_temperatures(tiny_kuhn_league, last=5)
    assert set(temps) == {"main_agent_0", "main_exploiter_0", "league_exploiter_0"}, temps
    for coef, std, temperature in temps.values():
        assert std > 0.0 and coef > 0.0
        assert temperature == pytest.approx(
            coef * std, rel=0.2
        )  # a mean of products, near the product of means
    # league_kuhn.yaml: the main agent's bonus (0.003) is the smallest of the three
    assert temps["main_agent_0"][0] == pytest.approx(0.003)
    out = tmp_path / "floor.txt"
    bench.main([str(tiny_kuhn_league), "--last", "5", "--out", str(out)])
    text = out.read_text()
    assert text.startswith("# command: python ") and "floor NashConv" in text and "main_agent_0" in text


def test_bad_arguments_say_what_to_give(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="give RUN_DIR"):
        bench.main([])
    with pytest.raises(SystemExit, match="every temperature must be > 0"):
        bench.main(["--game", "kuhn_poker", "--temperatures", "0"])
    with pytest.raises(SystemExit, match="no train/<agent>/advantage_std"):
        bench.learner_temperatures(tmp_path, last=5)
