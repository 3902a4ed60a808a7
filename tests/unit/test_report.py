"""The run directory's payoff files and the ``report`` command, on a synthetic run directory."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_payoff_render import league_snapshot, synthetic_snapshot

from light_league.errors import CorruptFileError, LeagueError
from light_league.tracking.logger import PayoffSnapshot
from light_league.tracking.payoff_render import focus, parse_payoff_markdown, parse_payoff_text, payoff_csv
from light_league.tracking.record import newest_entries
from light_league.tracking.report import (
    REPORT_WIDTH,
    load_payoff_snapshot,
    read_generations,
    report,
    report_json,
    save_payoff_snapshot,
)


def generation_record(snap: PayoffSnapshot) -> dict[str, Any]:
    """The rating rises with the agent index, so the leaderboard is the agents in reverse order."""
    return {
        "generation": snap.generation,
        "wall_s": 10.0 * (snap.generation + 1),
        "env_steps": 1000 * (snap.generation + 1),
        "population": [{"id": a, "role": r} for a, r in zip(snap.agent_ids, snap.roles, strict=True)],
        "meta_solver": snap.meta_solver,
        "meta_strategy": dict(zip(snap.agent_ids, snap.meta_strategy.tolist(), strict=True)),
        "meta_entropy": 0.5,
        "rating": {a: 1000.0 + 25.0 * i for i, a in enumerate(snap.agent_ids)},
        "diversity": 0.25 if snap.generation else None,
        "nash_conv": 0.125 / (snap.generation + 1),
    }


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    lines = []
    for g in range(3):
        snap = synthetic_snapshot(g)
        save_payoff_snapshot(tmp_path, snap)
        lines.append(json.dumps(generation_record(snap)) + "\n")
    torn = '{"generation": 3, "wall'
    (tmp_path / "generations.jsonl").write_text("".join(lines) + torn)
    return tmp_path


def leaderboard_agents(text: str) -> list[str]:
    section = text.split("## Leaderboard")[1].split("## ")[0]
    rows = [line for line in section.splitlines() if line.startswith("| ") and line[2].isdigit()]
    return [row.split("|")[2].strip() for row in rows]


def test_saved_snapshot_loads_back_with_npy_beside_it(run_dir: Path) -> None:
    expected = synthetic_snapshot(1)
    loaded = load_payoff_snapshot(run_dir, 1)
    np.testing.assert_array_equal(loaded.win_rates, expected.win_rates)
    np.testing.assert_array_equal(loaded.games, expected.games)
    np.testing.assert_array_equal(np.load(run_dir / "payoff" / "gen_0001.npy"), expected.win_rates)
    assert load_payoff_snapshot(run_dir).generation == 2
    assert not [p for p in (run_dir / "payoff").iterdir() if p.name.startswith(".")]


def test_torn_last_line_of_generations_is_ignored(run_dir: Path) -> None:
    assert [r.generation for r in read_generations(run_dir)] == [0, 1, 2]


def test_report_shows_the_leaderboard_by_rating_and_the_latest_table(run_dir: Path) -> None:
    text = report(run_dir)
    latest = synthetic_snapshot(2)
    assert leaderboard_agents(text) == list(reversed(latest.agent_ids))
    assert "| 1 | agent_4 | baseline | - | - | 1100 |" in text  # a table with an unplayed cell: no ranking
    assert "Ordered by rating: Elo fitted to every evaluation game" in text
    assert "3,000 env steps" in text and "nash_conv 0.042" in text
    ids, rates = parse_payoff_text(text.split("## Payoff table")[1])
    assert sorted(ids) == sorted(latest.agent_ids)
    order = [latest.agent_ids.index(a) for a in ids]
    np.testing.assert_allclose(rates, latest.win_rates[np.ix_(order, order)], atol=5e-3)
    ids, rates, games = parse_payoff_markdown(report(run_dir, full=True).split("## Payoff table")[1])
    assert ids == latest.agent_ids  # --full: every cell with its games
    np.testing.assert_allclose(rates, latest.win_rates, atol=5e-4)
    np.testing.assert_array_equal(games, latest.games)
    history = text.split("## History")[1]
    cells = [line.split("|")[1].strip() for line in history.splitlines() if line.startswith("| ")]
    assert cells == ["gen", "0", "1", "2"]
    assert (
        "| 0 | 3 | 0.500 | - | 0.125 | - | 1,000 | 10.0 |" in history
    )  # an old record: nash_conv is the meta-strategy's
    assert "| 2 | 5 | 0.500 | - | 0.042 | 0.250 | 3,000 | 30.0 |" in history


def test_report_of_an_earlier_generation_exports_its_csv(run_dir: Path, tmp_path: Path) -> None:
    csv_path = tmp_path / "gen1.csv"
    text = report(run_dir, generation=1, csv_path=csv_path)
    assert "## Payoff table, generation 1" in text
    assert csv_path.read_text() == payoff_csv(synthetic_snapshot(1))
    rows = list(csv.reader(io.StringIO(csv_path.read_text())))
    assert len(rows) == 1 + synthetic_snapshot(1).size


def test_report_without_generation_records_still_shows_the_table(tmp_path: Path) -> None:
    save_payoff_snapshot(tmp_path, synthetic_snapshot(0))
    text = report(tmp_path)
    assert "no record in generations.jsonl" in text
    assert sorted(leaderboard_agents(text)) == synthetic_snapshot(0).agent_ids
    board = text.split("## Leaderboard")[1].split("## ")[0]
    assert all(
        row.split("|")[6].strip() == "-" for row in board.splitlines() if row[:3] in ("| 1", "| 2", "| 3")
    )


def test_corrupt_payoff_file_is_a_one_line_error_naming_it(run_dir: Path) -> None:
    path = run_dir / "payoff" / "gen_0002.json"
    path.write_text('{"generation": 2, "agent_ids": [')
    with pytest.raises(CorruptFileError) as info:
        load_payoff_snapshot(run_dir)
    message = str(info.value)
    assert str(path) in message and "\n" not in message


def test_wrong_shape_in_payoff_file_is_a_corrupt_file_error(run_dir: Path) -> None:
    path = run_dir / "payoff" / "gen_0001.json"
    data = json.loads(path.read_text())
    data["games"] = [[1, 2]]
    path.write_text(json.dumps(data))
    with pytest.raises(CorruptFileError, match="gen_0001.json is corrupt.*games must have shape"):
        load_payoff_snapshot(run_dir, 1)


def test_missing_generation_lists_the_saved_ones(run_dir: Path) -> None:
    with pytest.raises(
        CorruptFileError, match=r"gen_0007.json does not exist; saved generations: \[0, 1, 2\]"
    ):
        report(run_dir, generation=7)


def test_empty_or_missing_run_dir_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CorruptFileError, match="no payoff tables"):
        report(tmp_path)
    with pytest.raises(CorruptFileError, match="does not exist"):
        report(tmp_path / "nope")


def test_a_corrupt_line_inside_generations_names_the_line(run_dir: Path) -> None:
    path = run_dir / "generations.jsonl"
    lines = path.read_text().split("\n")
    lines[1] = "{not json"
    path.write_text("\n".join(lines))
    with pytest.raises(CorruptFileError, match="generations.jsonl line 2"):
        read_generations(run_dir)


def test_report_of_an_earlier_generation_ends_its_history_there(run_dir: Path) -> None:
    history = report(run_dir, generation=1).split("## History")[1]
    cells = [line.split("|")[1].strip() for line in history.splitlines() if line.startswith("| ")]
    assert cells == ["gen", "0", "1"]


def test_a_negative_generation_is_a_clear_error_without_a_file_name(run_dir: Path) -> None:
    with pytest.raises(
        LeagueError, match=r"--generation must be 0 or more, got -1; saved generations: \[0, 1, 2\]"
    ):
        report(run_dir, generation=-1)


def test_report_of_a_large_league_shows_its_focus_and_the_whole_table_with_full(tmp_path: Path) -> None:
    snap = league_snapshot()
    save_payoff_snapshot(tmp_path, snap)
    text = report(tmp_path)
    short = parse_payoff_text(text.split("## Payoff table")[1])[0]
    assert short == [snap.agent_ids[i] for i in focus(snap).tabled]  # the focus fits 100 columns
    assert len(parse_payoff_text(report(tmp_path, top=4).split("## Payoff table")[1])[0]) == 4
    assert max(len(line) for line in text.splitlines()) <= REPORT_WIDTH
    assert parse_payoff_markdown(report(tmp_path, full=True).split("## Payoff table")[1])[0] == snap.agent_ids


def test_report_shows_each_learners_newest_snapshot_of_the_record(tmp_path: Path) -> None:
    snap = league_snapshot()
    save_payoff_snapshot(tmp_path, snap)
    elo = {a: 1000.0 for a in snap.agent_ids} | {"scripted_l5": 1400.0, "main_agent_0-v23": 1456.4}
    record = generation_record(snap) | {
        "elo": elo,
        "newest": [e.to_json() for e in newest_entries(snap, elo, reference="scripted_l5")],
    }
    (tmp_path / "generations.jsonl").write_text(json.dumps(record) + "\n")
    section = report(tmp_path).split("## Each learner's newest snapshot")[1].split("## ")[0]
    v23, l5 = snap.agent_ids.index("main_agent_0-v23"), snap.agent_ids.index("scripted_l5")
    games = int(snap.games[v23, l5])
    assert (
        f"| main_agent_0-v23 | 1456 | 0.000 | scripted_l5 | {snap.win_rates[v23, l5]:.3f} ({games}) |"
        in section
    )
    assert "| league_exploiter_0-v11 |" in section and "| main_exploiter_0-v12 |" in section


def test_runs_written_with_the_former_names_read_with_one_name() -> None:
    """Records, payoff files and checkpoints written before the meta-strategy had one name
    (``nash``, ``nash_entropy``, ``meta``) read with it as ``meta_strategy``; where a meta-solver
    other than ``nash`` wrote its mixture beside the Nash mixture, the solver's mixture is it."""
    from light_league.agents.meta_game import MetaGame
    from light_league.tracking.report import migrate_record

    old = {
        "generation": 3,
        "population": [{"id": "a", "role": "x"}],
        "nash": {"a": 1.0},
        "nash_entropy": 0.0,
        "rating": {"a": 1000.0},
        "newest": [{"id": "a", "nash": 1.0, "rating": 1000.0}],
    }
    new = migrate_record(old)
    assert list(new) == [
        "generation",
        "population",
        "meta_strategy",
        "meta_entropy",
        "rating",
        "newest",
        "meta_solver",
    ]
    assert new["meta_strategy"] == {"a": 1.0} and new["newest"] == [
        {"id": "a", "meta_strategy": 1.0, "rating": 1000.0}
    ]
    qre = migrate_record(
        {
            "generation": 0,
            "nash": {"a": 1.0, "b": 0.0},
            "meta_solver": "qre",
            "meta_strategy": {"a": 0.6, "b": 0.4},
        }
    )
    assert qre == {"generation": 0, "meta_solver": "qre", "meta_strategy": {"a": 0.6, "b": 0.4}}
    assert migrate_record(new) is new  # the current format passes as it is
    table = {
        "generation": 0,
        "agent_ids": ["a", "b"],
        "roles": ["x", "y"],
        "win_rates": [[0.5, 0.7], [0.3, 0.5]],
    }
    table["games"] = [[0, 4], [4, 0]]
    assert list(PayoffSnapshot.from_json({**table, "nash": [1.0, 0.0]}).meta_strategy) == [1.0, 0.0]
    both = PayoffSnapshot.from_json(
        {**table, "nash": [1.0, 0.0], "meta_solver": "qre", "meta_strategy": [0.6, 0.4]}
    )
    assert list(both.meta_strategy) == [0.6, 0.4] and both.meta_solver == "qre"
    game = MetaGame()
    game.load_state_dict({"nash": {"a": 1.0}, "meta": {}})  # a checkpoint of the default solver
    assert game.meta_strategy == {"a": 1.0} and game.state_dict() == {"meta_strategy": {"a": 1.0}}
    game.load_state_dict({"nash": {"a": 1.0}, "meta": {"a": 0.7, "b": 0.3}})
    assert game.meta_strategy == {"a": 0.7, "b": 0.3}


def test_report_of_a_large_league_fits_100_columns_and_counts_the_rest(tmp_path: Path) -> None:
    snap = league_snapshot()
    save_payoff_snapshot(tmp_path, snap)
    ratings = {a: 1000.0 + i for i, a in enumerate(snap.agent_ids)}
    intervals = {a: [r - 30.0, r + 30.0] for a, r in ratings.items()}
    record = generation_record(snap) | {
        "rating": ratings,
        "rating_ci95": intervals,
        "newest": [e.to_json() for e in newest_entries(snap, ratings, intervals)],
    }
    (tmp_path / "generations.jsonl").write_text(json.dumps(record) + "\n")
    text = report(tmp_path)
    assert max(len(line) for line in text.splitlines()) <= REPORT_WIDTH
    assert len(leaderboard_agents(text)) == 10
    assert f"{snap.size - 10} more members hold meta-strategy mass" in text
    assert "± 30" in text.split("## Leaderboard")[1]
    assert len(leaderboard_agents(report(tmp_path, top=3))) == 3
    assert len(leaderboard_agents(report(tmp_path, full=True))) == snap.size
    with pytest.raises(LeagueError, match="--top must be 1 or more"):
        report(tmp_path, top=0)


def test_report_json_holds_every_member_with_its_interval(run_dir: Path) -> None:
    data = report_json(run_dir)
    latest = synthetic_snapshot(2)
    assert data["generation"] == 2 and [r["member"] for r in data["leaderboard"]] == list(
        reversed(latest.agent_ids)
    )
    assert data["payoff"]["agent_ids"] == latest.agent_ids
    assert [r["generation"] for r in data["history"]] == [0, 1, 2]
    assert "population" not in data["history"][0]
    json.dumps(data)  # JSON-ready
