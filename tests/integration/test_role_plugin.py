"""A fourth league role from a plugin (light_league/examples/historical_exploiter.py), run through main.py:
it joins the league's role table, trains against old main-agent snapshots, is frozen into the
population, logs its metric, resumes, and is refused on --resume unless confirmed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from light_league.cli import main

ROOT = Path(__file__).resolve().parents[2]
RPS = str(ROOT / "expr_configs" / "rps_tiny.yaml")
KIND = "light_league.examples.historical_exploiter:HistoricalExploiterRole"
ROLE = (
    "scheduler.roles={historical_exploiter: {kind: '" + KIND + "', count: 1, "
    "options: {min_age: 1, checkpoint_min_steps: 2048, checkpoint_max_steps: 2048}}}"
)
QUICK = ["scheduler.steps_per_generation=1024", "evaluation.episodes_per_pair=32"]


def generations(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "generations.jsonl").read_text().splitlines()]


@pytest.fixture
def from_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from the repository root (``light_league.examples`` imports wherever light_league does)."""
    monkeypatch.chdir(ROOT)
    monkeypatch.syspath_prepend(str(ROOT))


def test_a_plugin_role_trains_against_old_main_snapshots(tmp_path: Path, from_root: None) -> None:
    run_dir = tmp_path / "run"
    assert main(["--config", RPS, "--run-dir", str(run_dir), ROLE, "stop.max_generations=4", *QUICK]) == 0
    gens = generations(run_dir)
    tasks = [{t["learner"]: t for t in g["tasks"]} for g in gens]
    assert all("historical_exploiter_0" in t for t in tasks)
    first = tasks[0]["historical_exploiter_0"]
    assert first["role"] == "historical_exploiter"
    assert first["opponents"] == {"main_agent_0": 1.0}  # nothing old enough yet: the current main agent
    assert first["info"]["fallbacks"] == ["historical->current_main:no_old_snapshot"]
    created = {
        m["agent_id"]: m["metadata"]["generation"]
        for m in json.loads((run_dir / "pool.json").read_text())["agents"]
    }
    for g, by_learner in enumerate(tasks):
        old = {m for m, made in created.items() if m.startswith("main_agent_0-v") and g - made > 1}
        opponents = set(by_learner["historical_exploiter_0"]["opponents"])
        if old:  # only main-agent snapshots more than min_age=1 generations old (those still in the pool)
            assert opponents and opponents <= old, (g, opponents, old)
    assert any(set(t["historical_exploiter_0"]["opponents"]) != {"main_agent_0"} for t in tasks)
    roles = {p["role"] for p in gens[-1]["population"]}
    assert "historical_exploiter" in roles  # snapshots of the plugin role joined the population
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run_dir / "tensorboard"))
    acc.Reload()
    assert len(acc.Scalars("historical/win_rate")) == 4  # the role's own metric, every generation

    # --resume imports the plugin only when the command names it again
    assert main(["--resume", str(run_dir), "stop.max_generations=5"]) == 2
    confirm = f"scheduler.roles.historical_exploiter.kind={KIND}"
    assert main(["--resume", str(run_dir), confirm, "stop.max_generations=5"]) == 0
    assert len(generations(run_dir)) == 5


def test_bad_role_entries_are_one_line_errors(
    tmp_path: Path, from_root: None, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = {
        "scheduler.roles={baseline: {kind: main_agent}}": "'baseline' is reserved",
        "scheduler.roles={main_agent: {kind: main_agent}}": "is a built-in role",
        "scheduler.roles={Bad-Name: {kind: main_agent}}": "is not valid",
        "scheduler.roles={old: {kind: 'light_league.examples.historical_exploiter:Nope'}}": "has no 'Nope'",
        "scheduler.roles={old: {kind: historical}}": "unknown league role 'historical'",
        "scheduler.roles={old: {kind: '" + KIND + "', options: {min_agee: 1}}}": (
            "scheduler.roles.old.options.min_agee: unknown key; did you mean min_age?"
        ),
    }
    for i, (override, expected) in enumerate(cases.items()):
        assert main(["--config", RPS, "--run-dir", str(tmp_path / f"r{i}"), override]) == 2, override
        err = capsys.readouterr().err.strip()
        assert expected in err and len(err.splitlines()) == 1, (override, err)
        assert not (tmp_path / f"r{i}").exists()  # refused before the run directory is made
