"""kill -9 during archiving loses nothing (issue 58).

A league with a small active set archives members every generation: ``Archive.settle`` marks them
in the pool manifest (``pool.json.bak``, then ``pool.json``, each an atomic replace) before the
generation's checkpoint is written. A base run commits two generations; a resume of it SIGKILLs
itself inside that window (tests/integration/killpoint_main.py with ``KILLPOINT_IN=settle``):
before the backup's replace, before the manifest's, and just after the manifest's (the manifest
marks members the checkpoint does not archive yet). Then:

* the kill left every committed member in the manifest, and the checkpoint, its payoff tables and
  the committed match log byte for byte as they were;
* a resume puts the manifest's ``archived`` flags back to the checkpoint's archive;
* a resume that runs two more generations keeps every member ever snapshotted in the pool
  (archived or active), each one's weights byte for byte and loadable, its committed games in the
  match log and its committed payoff tables, and ends with the manifest's flags equal to the
  checkpoint's archive.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from light_league.cli import main
from light_league.data_buffer.policy_files import load_policy_files

ROOT = Path(__file__).resolve().parents[2]
RPS = str(ROOT / "expr_configs" / "rps_tiny.yaml")
KILLER = str(Path(__file__).with_name("killpoint_main.py"))
#: three snapshots a generation and an active set of 4: members are archived every generation;
#: every payoff table kept (``tables_every=1``) so that each committed one can be compared
ARGS = [
    "scheduler.steps_per_generation=256",
    *(
        f"scheduler.{role}.checkpoint_{end}_steps=256"
        for role in ("main_agent", "main_exploiter", "league_exploiter")
        for end in ("min", "max")
    ),
    "evaluation.episodes_per_pair=12",
    "league.meta_stability_draws=0",
    "execution.envs_per_worker=16",
    "league.active_set.size=4",
    "league.active_set.recent=1",
    "league.active_set.tables_every=1",
    "--quiet",
]


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _state(run: Path) -> dict:
    latest = json.loads((run / "checkpoint" / "latest.json").read_text())
    return json.loads((run / "checkpoint" / latest["dir"] / "state.json").read_text())


def _manifest(run: Path) -> dict[str, bool]:
    agents = json.loads((run / "pool.json").read_text())["agents"]
    return {a["agent_id"]: bool(a["metadata"].get("archived")) for a in agents}


def _committed(run: Path) -> dict[str, object]:
    """What a completed generation committed: the checkpoint, each member's policy files, the
    match log up to the checkpoint's offset, the payoff tables."""
    state = _state(run)
    files = {
        p.name: _sha(p) for m in state["members"] for p in (run / "policies").glob(f"{m}.*") if p.is_file()
    }
    return {
        "state": (run / "checkpoint" / "latest.json").read_bytes(),
        "members": list(state["members"]),
        "archived": list(state["agents"]["archived"]),
        "policies": files,
        "games": (run / "matches.jsonl").read_bytes()[: state["matches_bytes"]],
        "payoff": {p.name: _sha(p) for p in sorted((run / "payoff").iterdir())},
    }


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two generations committed; generation 1 archived members."""
    run = tmp_path_factory.mktemp("archive_kill") / "base"
    assert main(["--config", RPS, "--run-dir", str(run), "stop.max_generations=2", *ARGS]) == 0
    assert _state(run)["agents"]["archived"], "the base run archived no member"
    return run


@pytest.mark.parametrize(
    ("kill_at", "after"),
    [(1, False), (2, False), (2, True)],
    ids=["before-backup", "before-manifest", "after-manifest"],
)
def test_kill_during_archiving_loses_nothing(base: Path, tmp_path: Path, kill_at: int, after: bool) -> None:
    run = tmp_path / "run"
    shutil.copytree(base, run)
    (run / ".lock").unlink(missing_ok=True)
    before = _committed(run)
    env = {**os.environ, "KILLPOINT_IN": "settle", "KILLPOINT_AFTER": "1" if after else "0"}
    proc = subprocess.run(
        [sys.executable, KILLER, str(kill_at), "--resume", str(run), "stop.max_generations=4", "--quiet"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        timeout=240,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode(errors="replace")[-2000:]

    # the kill left the committed generation whole, and every member in the manifest
    assert _committed(run) == before
    flags = _manifest(run)
    assert set(before["members"]) <= set(flags)  # type: ignore[arg-type]
    marked = {m for m, f in flags.items() if f}
    if after:  # the window: the manifest marks what the checkpoint has not archived yet
        assert marked != set(before["archived"]), "the kill did not land between manifest and checkpoint"

    # resume (nothing left to run): the manifest's flags are the checkpoint's archive again
    assert main(["--resume", str(run), "stop.max_generations=2", "--quiet"]) == 0
    assert {m for m, f in _manifest(run).items() if f} == set(before["archived"])

    # resume and go on: generation 2 again (archiving again), then 3
    assert main(["--resume", str(run), "stop.max_generations=4", "--quiet"]) == 0
    state = _state(run)
    assert state["generation"] == 4
    flags = _manifest(run)
    assert set(before["members"]) <= set(state["members"]) == set(flags)  # type: ignore[arg-type]
    assert {m for m, f in flags.items() if f} == set(state["agents"]["archived"])
    assert set(state["agents"]["archived"]) - set(before["archived"]), "nothing archived after the resume"
    for name, digest in before["policies"].items():  # type: ignore[attr-defined]
        assert _sha(run / "policies" / name) == digest, name
    for member in state["members"]:
        if (run / "policies" / f"{member}.pt").exists():
            weights, _ = load_policy_files(run / "policies" / member)
            assert weights, member
    games = (run / "matches.jsonl").read_bytes()
    assert games.startswith(before["games"])  # type: ignore[arg-type]
    for name, digest in before["payoff"].items():  # type: ignore[attr-defined]
        assert _sha(run / "payoff" / name) == digest, name
    assert not list(run.rglob(".*.tmp"))
    assert main(["report", str(run)]) == 0
