"""A league with a small active set (``league.active_set``): members are archived, recorded in
generations.jsonl and shown by report; an archived member stays loadable by id (eval, exploit's
targets, export's policy files); a resume keeps the archive; ``size: 0`` keeps today's full table."""

from __future__ import annotations

import json
from pathlib import Path

from light_league.cli import main
from light_league.pit import pit
from light_league.run_reader import RunReader
from light_league.tracking.report import report, saved_generations

ROOT = Path(__file__).resolve().parents[2]
RPS = str(ROOT / "expr_configs" / "rps_tiny.yaml")
#: three snapshots a generation (every learner every generation), a few games per pair
ARGS = [
    "scheduler.steps_per_generation=256",
    *(
        f"scheduler.{role}.checkpoint_{end}_steps=256"
        for role in ("main_agent", "main_exploiter", "league_exploiter")
        for end in ("min", "max")
    ),
    "evaluation.episodes_per_pair=20",
    "execution.envs_per_worker=16",
    "--quiet",
]
SMALL = ["league.active_set.size=4", "league.active_set.recent=1", "league.active_set.tables_every=2"]


def records(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "generations.jsonl").read_text().splitlines()]


def archived_during(run_dir: Path) -> dict[int, set[str]]:
    """``{generation: the members archived while it ran}`` (archived by an earlier generation and
    not brought back since), from generations.jsonl."""
    out, gone = {}, set()
    for record in records(run_dir):
        out[record["generation"]] = set(gone)
        gone = (gone | set(record.get("archived_now", []))) - set(record.get("restored_now", []))
    return out


def trained_against_archived(run_dir: Path) -> list[dict]:
    """The training games (match log lines) against a member archived when they were drawn (a
    generation's last episodes may finish in the next one: ``drawn_generation``)."""
    during = archived_during(run_dir)
    lines = [json.loads(line) for line in (run_dir / "matches.jsonl").read_text().splitlines()]
    return [
        g
        for g in lines
        if g["kind"] == "train" and {g["a"], g["b"]} & during.get(g["drawn_generation"], set())
    ]


def archived(run_dir: Path) -> list[str]:
    pool = json.loads((run_dir / "pool.json").read_text())
    return [a["agent_id"] for a in pool["agents"] if a["metadata"].get("archived")]


def test_a_small_active_set_archives_and_every_member_stays_loadable(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    args = ["--config", RPS, "--run-dir", str(run_dir), "stop.max_generations=5", *SMALL, *ARGS]
    assert main(args) == 0
    last = records(run_dir)[-1]
    gone = archived(run_dir)
    assert gone and last["archived"] == len(gone)
    assert len(last["population"]) < len(json.loads((run_dir / "pool.json").read_text())["agents"])
    # the record's population is the table solved, before this generation's archiving
    assert not (set(gone) - set(last.get("archived_now", []))) & {m["id"] for m in last["population"]}
    assert "archive: " in report(run_dir)
    assert not trained_against_archived(run_dir)  # opponents: active (the default) never draws one
    run = RunReader(run_dir)
    assert set(gone) <= set(run.members())
    member = next(m for m in gone if m.startswith("main_agent"))
    assert run.target(member).weights == {member: 1.0}
    assert pit(run_dir, member, "random", games=8, seed=0).games == 8
    saved = saved_generations(run_dir)
    assert saved[-1] == 4 and len(saved) < 5  # thinned, the latest kept
    # a resume keeps the archive and goes on archiving
    assert main(["--resume", str(run_dir), "stop.max_generations=7", "--quiet"]) == 0
    state = json.loads((run_dir / "checkpoint" / "gen_0006" / "state.json").read_text())
    assert set(gone) - set(records(run_dir)[-1].get("restored_now", [])) <= set(state["agents"]["archived"])
    assert sorted(state["agents"]["archived"]) == sorted(archived(run_dir))


def test_size_0_keeps_the_full_table(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    args = ["--config", RPS, "--run-dir", str(run_dir), "stop.max_generations=3", "league.active_set.size=0"]
    assert main([*args, *ARGS]) == 0
    last = records(run_dir)[-1]
    pool = json.loads((run_dir / "pool.json").read_text())["agents"]
    assert "archived" not in last and not archived(run_dir)
    assert [m["id"] for m in last["population"]] == [a["agent_id"] for a in pool]
    assert saved_generations(run_dir) == [0, 1, 2]


def test_pfsp_over_the_history_plays_archived_members(tmp_path: Path) -> None:
    """``opponents: history`` (with ``weighting: pfsp``): the league exploiter draws archived members
    too, in a fresh session and after a resume (archived members registered unread), and the
    league keeps its win rates against them."""
    run_dir = tmp_path / "run"
    history = ["scheduler.league_exploiter.opponents=history", "scheduler.league_exploiter.weighting=pfsp"]
    args = ["--config", RPS, "--run-dir", str(run_dir), "stop.max_generations=4", *SMALL, *history, *ARGS]
    assert main(args) == 0
    assert main(["--resume", str(run_dir), "stop.max_generations=6", "--quiet"]) == 0
    played = trained_against_archived(run_dir)
    assert {g["session"] for g in played} == {0, 1}, played
    assert all(
        g["a"].startswith("league_exploiter_0") or g["b"].startswith("league_exploiter_0") for g in played
    )
    latest = json.loads((run_dir / "checkpoint" / "latest.json").read_text())
    state = json.loads((run_dir / "checkpoint" / latest["dir"] / "state.json").read_text())
    kept = json.dumps(state["agents"]["training"])
    assert any(f'"{m}"' in kept for m in state["agents"]["archived"])  # its win rates kept for PFSP
