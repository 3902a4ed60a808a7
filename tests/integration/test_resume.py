"""Kill a league mid-generation with SIGKILL, resume it, and lose nothing that was completed."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from light_league.cli import main

ROOT = Path(__file__).resolve().parents[2]
RPS = str(ROOT / "expr_configs" / "rps_tiny.yaml")
#: long enough evaluation that a kill lands after the generation's first records are written
ARGS = [
    "stop.max_generations=4",
    "scheduler.steps_per_generation=1024",
    "evaluation.episodes_per_pair=3000",
    "logging.console=quiet",
]
RECALL = str(ROOT / "expr_configs" / "league_recall.yaml")
#: the recurrent league, small: 2 updates per learner and a main-agent snapshot per generation
RECALL_ARGS = [
    "stop.max_generations=3",
    "execution.envs_per_worker=64",
    "execution.steps_per_call=8",
    "scheduler.steps_per_generation=1024",
    "scheduler.main_agent.checkpoint_min_steps=1024",
    "scheduler.main_agent.checkpoint_max_steps=1024",
    "logging.console=quiet",
]
#: (config, overrides, the generation the kill lands in): its evaluation holds it open for a
#: second or more after its training records are written
KILLS = {
    # generation 3 is the first with several members (30,000 games per pair: seconds of play)
    "rps": (RPS, [*ARGS, "evaluation.episodes_per_pair=30000"], 3),
    "recall_recurrent": (RECALL, [*RECALL_ARGS, "evaluation.episodes_per_pair=3000"], 2),
}


def read_jsonl(path: Path) -> list[dict]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            break  # a torn last line while the writer runs
    return out


def start(run_dir: Path, *extra: str, config: str = RPS, args: list[str] = ARGS) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "main.py", "--config", config, "--run-dir", str(run_dir), *args, *extra],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def wait_for(predicate, proc: subprocess.Popen[bytes], timeout: float = 240.0) -> None:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return
        if proc.poll() is not None:
            raise AssertionError(f"run ended early: {proc.stderr.read().decode() if proc.stderr else ''}")
        time.sleep(0.02)
    raise AssertionError("timed out waiting for the run")


@pytest.mark.parametrize("case", list(KILLS))
@pytest.mark.parametrize(
    "overlap", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["sequential", "overlap"]
)
def test_sigkill_mid_generation_then_resume_loses_nothing(tmp_path: Path, overlap: bool, case: str) -> None:
    """``recall_recurrent``: a league of recurrent policies (hidden states restart with the
    resumed run's fresh games; policies and learners load from the checkpoint)."""
    run_dir = tmp_path / "run"
    config, args, killed_in = KILLS[case]
    proc = start(run_dir, f"execution.overlap={str(overlap).lower()}", config=config, args=args)
    # kill once the generation has written records but before it completes
    wait_for(
        lambda: (
            any(r.get("generation") == killed_in for r in read_jsonl(run_dir / "matches.jsonl")[-50:])
            and len(read_jsonl(run_dir / "generations.jsonl")) == killed_in
        ),
        proc,
    )
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before_gens = (run_dir / "generations.jsonl").read_text().splitlines()
    assert len(before_gens) == killed_in, f"the kill must land inside generation {killed_in}"
    before_matches = [r for r in read_jsonl(run_dir / "matches.jsonl") if r["generation"] < killed_in]
    partial = [r for r in read_jsonl(run_dir / "matches.jsonl") if r["generation"] >= killed_in]
    assert partial, "the killed generation had written records (the test must exercise the cleanup)"
    payoffs = {p.name: p.read_bytes() for p in (run_dir / "payoff").glob("gen_*.json")}
    pool_before = json.loads((run_dir / "pool.json").read_text())

    assert main(["--resume", str(run_dir), "--quiet"]) == 0

    after_gens = (run_dir / "generations.jsonl").read_text().splitlines()
    assert after_gens[:killed_in] == before_gens, "completed generations must be unchanged"
    budget = int(next(a for a in args if a.startswith("stop.max_generations=")).split("=")[1])
    assert [json.loads(g)["generation"] for g in after_gens] == list(range(budget)), (
        "the run finishes its budget"
    )
    for name, data in payoffs.items():
        assert (run_dir / "payoff" / name).read_bytes() == data
    matches = read_jsonl(run_dir / "matches.jsonl")
    assert [r for r in matches if r["generation"] < killed_in] == before_matches
    assert all(r["session"] == 1 for r in matches if r["generation"] >= killed_in), "no partial record leaks"
    per_gen = Counter()
    for r in matches:
        per_gen[r["generation"]] += r.get("games", 1)
    for g in after_gens:
        rec = json.loads(g)
        assert per_gen[rec["generation"]] == sum(rec["games"].values()), "no duplicate or missing records"
    pool_after = {a["agent_id"]: a for a in json.loads((run_dir / "pool.json").read_text())["agents"]}
    kept = [a for a in pool_before["agents"] if a["metadata"]["generation"] < killed_in]
    assert kept and all(pool_after[a["agent_id"]] == a for a in kept), "completed members are unchanged"
    if case == "recall_recurrent":
        metas = [json.loads(f.read_text()) for f in (run_dir / "policies").glob("*.json")]
        assert metas and all(m["architecture"]["recurrent_cell"] == "gru" for m in metas)


def test_sigkill_inside_generation_zero_then_resume_runs_from_the_initial_checkpoint(tmp_path: Path) -> None:
    """Killed after the bootstrap checkpoint (``checkpoint/initial``) but before generation 0 ends:
    the resume continues from that checkpoint and finishes the budget."""
    run_dir = tmp_path / "run"
    # enough training steps that generation 0 lasts a second or two after the bootstrap checkpoint
    proc = start(run_dir, "stop.max_generations=1", "scheduler.steps_per_generation=20000")
    latest = run_dir / "checkpoint" / "latest.json"
    wait_for(lambda: latest.exists() and '"initial"' in latest.read_text(), proc)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not read_jsonl(run_dir / "generations.jsonl"), "the kill must land inside generation 0"
    assert main(["--resume", str(run_dir), "--quiet"]) == 0
    assert [r["generation"] for r in read_jsonl(run_dir / "generations.jsonl")] == [0]
    pointer = json.loads(latest.read_text())
    assert (pointer["generation"], pointer["dir"]) == (1, "gen_0000")  # and state.json's checksum


def test_a_second_process_on_the_same_run_directory_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "run"
    proc = start(run_dir, "stop.max_generations=50")
    try:
        wait_for(lambda: (run_dir / "checkpoint" / "latest.json").exists(), proc)
        before = (run_dir / "matches.jsonl").stat().st_size
        capsys.readouterr()
        assert main(["--resume", str(run_dir)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "in use by another process" in err[0]
        assert (run_dir / "matches.jsonl").stat().st_size >= before  # the first writer is untouched
    finally:
        proc.kill()
        proc.wait()
