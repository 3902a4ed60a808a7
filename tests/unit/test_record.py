"""The generation record: built from a generation's statistics, written byte for byte as runs
always wrote it, read back from every format runs have written, checked field by field."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from light_league.agents.meta_game import LeagueStats
from light_league.errors import CorruptFileError
from light_league.game_theory.uncertainty import Stability
from light_league.tracking.logger import PayoffSnapshot
from light_league.tracking.record import (
    GenerationRecord,
    GenerationWork,
    Measurements,
    ProbeReading,
    read_generations_file,
)
from light_league.types import AgentType, TrainingTask

ROOT = Path(__file__).resolve().parents[2]
#: files written by the current code (the golden runs, the docs' league.yaml run)
CURRENT = [
    ROOT / "tests" / "integration" / "golden" / "rps_tiny.generations.jsonl",
    ROOT / "tests" / "integration" / "golden" / "psro_kuhn.generations.jsonl",
    ROOT / "docs" / "data" / "league_run" / "generations.jsonl",
]
#: a run written before the meta-strategy, the rating and meta_nash_conv had their names
OLD = (
    Path(__file__).parent / "data" / "generations_2026-11-23.jsonl"
)  # a psro_kuhn run's first lines, as written then


def compact(data: object) -> str:
    return json.dumps(data, separators=(",", ":"))  # as JsonlLog writes a line


@pytest.mark.parametrize("path", CURRENT, ids=lambda p: p.parent.name + "/" + p.name)
def test_a_current_line_reads_and_writes_back_byte_for_byte(path: Path) -> None:
    lines = path.read_text().splitlines()
    records = read_generations_file(path)
    assert [compact(r.to_json()) for r in records] == lines


def test_a_stored_old_format_line_reads_under_the_current_names() -> None:
    line = OLD.read_text().splitlines()[0]
    old = json.loads(line)
    assert {"nash", "nash_entropy", "elo", "nash_conv"} <= set(old) and "meta_strategy" not in old
    record = read_generations_file(OLD)[0]
    assert record.meta_strategy == old["nash"] and record.meta_entropy == old["nash_entropy"]
    assert record.meta_solver == "nash"
    assert record.rating == old["elo"] == record.elo_sequential  # the sequential Elo, shown as the rating
    assert record.meta_nash_conv == old["nash_conv"] and record.least_exploitable_nash_conv is None
    entry, raw = record.newest[0], old["newest"][0]
    assert (entry.id, entry.rating, entry.meta_strategy) == (raw["id"], raw["elo"], raw["nash"])
    assert entry.rating_ci95 is None and entry.games is None  # written before they existed
    written = record.to_json()
    assert not {"nash", "nash_entropy", "elo", "nash_conv"} & set(written)
    assert GenerationRecord.from_json(written) == record  # the migrated record reads as it is


def test_an_old_least_exploitable_record_keeps_both_nash_convs_apart() -> None:
    """Before ``least_exploitable_nash_conv``, ``nash_conv`` was the least exploitable mixture's
    beside a ``least_exploitable`` mixture (and ``meta_nash_conv`` the meta-strategy's)."""
    old = {"generation": 2, "least_exploitable": {"a": 1.0}, "nash_conv": 0.125, "meta_nash_conv": 0.5}
    record = GenerationRecord.from_json(old)
    assert (record.least_exploitable_nash_conv, record.meta_nash_conv) == (0.125, 0.5)
    assert GenerationRecord.from_json({"generation": 2, "nash_conv": 0.25}).meta_nash_conv == 0.25


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("wall_s", "late"),
        ("population", [{"id": 3, "role": "x"}]),
        ("tasks", [{"learner": "a"}]),
        ("meta_stability", {"tv_mean": "low"}),
        ("games", {"train": 1.5}),
        ("nash", [0.5, 0.5]),
        ("newest", [{"id": "a-v1", "games": "many"}]),
    ],
)
def test_a_wrong_type_is_one_line_naming_where_and_the_field(field: str, value: object) -> None:
    with pytest.raises(
        CorruptFileError, match=rf"^runs/x line 3: field '{field}' is .*; remove or fix that line$"
    ):
        GenerationRecord.from_json({"generation": 0, field: value}, where="runs/x line 3")
    with pytest.raises(CorruptFileError, match="no integer 'generation'"):
        GenerationRecord.from_json({"generation": True}, where="runs/x line 3")


def test_keys_a_newer_version_wrote_are_kept_and_written_last() -> None:
    record = GenerationRecord.from_json({"generation": 1, "wall_s": 2.0, "future": {"x": 1}})
    assert list(record.to_json())[-1] == "future" and record.to_json()["future"] == {"x": 1}


def stats() -> LeagueStats:
    ids = ["random", "main_agent_0-v0", "main_agent_0-v1"]
    return LeagueStats(
        ids=ids,
        roles=["baseline", "main_agent", "main_agent"],
        win_rates=np.array([[0.5, 0.25, np.nan], [0.75, 0.5, 0.4], [np.nan, 0.6, 0.5]]),
        games=np.array([[0, 8, 0], [8, 0, 8], [0, 8, 0]]),
        meta_strategy=np.array([0.0, 1 / 3, 2 / 3]),
        meta_entropy=0.6365141682948128,
        elo={"random": 800.0, "main_agent_0-v0": 1000.123, "main_agent_0-v1": 1010.0},
        diversity=None,
        rating={"random": 800.0, "main_agent_0-v0": 990.456, "main_agent_0-v1": 1012.0},
        rating_se={"main_agent_0-v0": 10.0, "main_agent_0-v1": 12.5},
        rating_anchor=("random", 800.0),
        stability=Stability(0.0125, np.array([0.0, 0.91, 1.0]), 40, 0.01),
    )


def test_a_built_record_is_written_as_the_runner_always_wrote_it() -> None:
    league = stats()
    snapshot = PayoffSnapshot(
        3, league.ids, league.roles, league.win_rates, league.games, league.meta_strategy
    )
    task = TrainingTask("main_agent_0", AgentType.MAIN_AGENT, {"main_agent_0-v1": 0.333333}, 2048, "pfsp")
    work = GenerationWork(
        wall_s=12.34567,
        env_steps=4096,
        tasks=[task],
        trained_steps={"main_agent_0": 2048},
        rollout_s=0.5,
        update_s=0.25,
        timings={"plan": 0.0001, "train": 0.8},
        games={"train": 64, "eval": 16},
    )
    probe = ProbeReading(generation=3, env_steps=100, games=10, payoff=0.5, payoff_ci95=(0.25, 0.75))
    measured = Measurements(meta_nash_conv=0.25, main_nash_conv=0.5, probe={"main": probe})
    record = GenerationRecord.build(
        3, stats=league, snapshot=snapshot, work=work, measured=measured, reference="random"
    )
    written = record.to_json()
    # no ranking while a cell of the table is unplayed
    assert list(written) == [
        "generation", "wall_s", "env_steps", "population", "meta_solver", "meta_strategy",
        "meta_entropy", "meta_stability", "rating", "rating_anchor", "rating_ci95", "elo_sequential",
        "diversity", "games", "tasks", "env_steps_per_s", "timings", "train_split_s",
        "meta_nash_conv", "main_nash_conv", "probe", "newest", "reference", "best_main",
    ]  # fmt: skip
    assert written["wall_s"] == 12.346 and written["meta_strategy"]["main_agent_0-v0"] == 0.333333
    assert written["meta_stability"] == {
        "tv_mean": 0.0125,
        "draws": 40,
        "support": dict(zip(league.ids, [0.0, 0.91, 1.0])),
    }
    assert written["rating_ci95"]["main_agent_0-v0"] == [round(990.456 - 19.6, 1), round(990.456 + 19.6, 1)]
    assert written["rating_ci95"]["random"] == [800.0, 800.0] and written["rating_anchor"] == "random"
    assert written["tasks"] == [
        {
            "learner": "main_agent_0",
            "role": "main_agent",
            "weighting": "pfsp",
            "env_steps": 2048,
            "opponents": {"main_agent_0-v1": 0.3333},
            "info": {},
        }
    ]
    assert written["env_steps_per_s"] == 4096.0 and written["train_split_s"] == {
        "rollout": 0.5,
        "update": 0.25,
    }
    assert list(written["probe"]["main"]) == [
        "generation", "env_steps", "games", "payoff", "payoff_ci95", "win_rate", "win_rate_ci95",
        "best_response_payoff",
    ]  # fmt: skip
    assert written["newest"] == [
        {
            "learner": "main_agent_0",
            "id": "main_agent_0-v1",
            "role": "main_agent",
            "rating": 1012.0,
            "rating_ci95": [987.5, 1036.5],
            "meta_strategy": 0.666667,
            "baseline": "random",
            "win_rate": None,
            "win_rate_ci95": None,
            "games": 0,
            "worst_opponents": {"main_agent_0-v0": 0.6},  # the unplayed cell left out
        }
    ]
    # v1 has not played random (the reference set): v0, which beats it 0.75, is the best so far
    assert written["best_main"] == {
        "id": "main_agent_0-v0",
        "worst_opponent": "random",
        "worst_win_rate": 0.75,
        "mean_win_rate": 0.75,
        "references": 1,
        "win_rate": 0.75,
        "win_rate_ci95": None,
        "games": 8,
    }
    assert GenerationRecord.from_json(json.loads(compact(written))) == record
