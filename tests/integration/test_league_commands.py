"""The commands that read a finished run, as the docs print them: every cheap command of README.md
and docs/*.md runs from a clean checkout (on a small ``runs/demo``), and eval (two players, N
games, an interval), watch (one game), export (a file that loads with torch alone, and the
example that plays it) do what they say.

Cheap means seconds: the commands on ``runs/demo`` but ``board`` (a server), ``exploit`` (it
trains) and ``--resume`` (it trains), ``--print-config``, ``--version``, ``--help`` and the
example. The runs themselves are long; their configs and overrides are checked by
tests/unit/test_docs.py.
"""

from __future__ import annotations

import json
import re
import runpy
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from light_league.cli import main
from light_league.errors import LeagueError
from light_league.export import META_FILE
from light_league.run_reader import RunReader

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
DEMO = "python main.py --config expr_configs/league.yaml --run-dir runs/demo execution.backend=local stop.max_generations=4"
#: the demo league in seconds instead of minutes: a small budget per generation, snapshots every one
TINY = [
    "scheduler.steps_per_generation=256",
    *(
        f"scheduler.{role}.checkpoint_{end}_steps=256"
        for role in ("main_agent", "main_exploiter", "league_exploiter")
        for end in ("min", "max")
    ),
    "evaluation.episodes_per_pair=2",
    "evaluation.baselines=[random]",  # the scripted levels the commands name are the env's fixed policies
    "execution.num_workers=1",
    "execution.envs_per_worker=8",
    "execution.steps_per_call=32",
    "--quiet",
]
MEMBER = "main_agent_0-v4"


def shown_commands() -> list[str]:
    """Every command line of the docs' bash blocks, comments after `` # `` cut."""
    lines = []
    for doc in DOCS:
        for block in re.findall(r"```bash\n(.*?)```", doc.read_text(encoding="utf-8"), flags=re.S):
            lines += [
                line.split(" # ")[0].strip() for line in block.splitlines() if line.startswith("python ")
            ]
    return lines


def cheap(command: str) -> bool:
    words = shlex.split(command)
    if words[1:3] == ["-m", "light_league.examples.exported_policy"]:
        return True
    if words[1] != "main.py":
        return False
    if any(flag in words for flag in ("--print-config", "--version", "--help")):
        return True
    return "runs/demo" in words and words[2] in ("report", "eval", "watch", "export")


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder that looks like a clean checkout (the configs; the examples are installed with the
    package), with the docs' ``runs/demo`` made by the docs' own command and a smaller budget."""
    root = tmp_path_factory.mktemp("checkout")
    for name in ("expr_configs",):
        (root / name).symlink_to(ROOT / name)
    assert DEMO in shown_commands(), "the demo run the docs' commands read is no longer shown"
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        assert main([*shlex.split(DEMO)[2:], *TINY]) == 0
    return root


def run_shown(command: str, root: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    """One docs command, run in this process from ``root``; its exit status."""
    monkeypatch.chdir(root)
    words = shlex.split(command)
    if words[1] == "main.py":
        try:
            return main(words[2:])
        except SystemExit as done:  # --help and --version exit through argparse
            return int(done.code or 0)
    module = words[1] == "-m"  # python -m light_league.examples.<name> ...
    monkeypatch.setattr(sys, "argv", words[2:] if module else words[1:])
    try:
        if module:
            monkeypatch.delitem(sys.modules, words[2], raising=False)  # as python -m: run afresh
            runpy.run_module(words[2], run_name="__main__")
        else:
            runpy.run_path(str(root / words[1]), run_name="__main__")
    except SystemExit as done:
        return int(done.code or 0)
    return 0


def test_every_cheap_command_in_the_docs_runs_from_a_clean_checkout(
    checkout: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    commands = [c for c in shown_commands() if cheap(c)]
    # export first: the example reads the file it writes
    commands.sort(key=lambda c: (" export " not in c, "light_league.examples" in c))
    kinds = {shlex.split(c)[2] if shlex.split(c)[1] == "main.py" else "example" for c in commands}
    assert {"report", "eval", "watch", "export", "example"} <= kinds
    assert any("--print-config" in c for c in commands)
    failed = [c for c in commands if run_shown(c, checkout, monkeypatch) != 0]
    assert failed == [], capsys.readouterr().err[-2000:]


def test_eval_pits_a_member_against_a_fixed_policy_with_an_interval(
    checkout: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = str(checkout / "runs" / "demo")
    capsys.readouterr()
    assert main(["eval", run, MEMBER, "random", "--games", "100", "--seed", "1", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["games"] == 100 and result["wins"] + result["draws"] + result["losses"] == 100
    low, high = result["score_ci95"]
    assert low <= result["score"] <= high and high - low < 0.25
    assert result["score"] == pytest.approx((result["wins"] + result["draws"] / 2) / 100)
    assert main(["eval", run, MEMBER, "main_exploiter_0-v2", "--games", "20"]) == 0
    line = capsys.readouterr().out
    assert line.startswith(
        f"{MEMBER} against main_exploiter_0-v2 over 20 games (seats alternated, seed 0): win rate "
    )
    assert "(95%)" in line


def test_eval_of_an_unknown_player_is_one_line(checkout: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = str(checkout / "runs" / "demo")
    capsys.readouterr()
    assert main(["eval", run, "main_agent_0-v9", "randon"]) == 2
    err = capsys.readouterr().err
    assert (
        err.count("\n") == 1
        and "unknown player 'main_agent_0-v9'" in err
        and "fixed policy of env battalion" in err
    )
    assert main(["eval", run, MEMBER, "random", "--games", "0"]) == 2
    assert "--games must be at least 1, got 0" in capsys.readouterr().err


def test_watch_shows_one_battalion_game_as_text_frames(
    checkout: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert (
        main(["watch", str(checkout / "runs" / "demo"), MEMBER, "scripted_l3", "--seed", "3", "--every", "5"])
        == 0
    )
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"{MEMBER} (seat 0) against scripted_l3 (seat 1), env battalion, seed 3"
    assert lines[1] == "step 0 of 200" and lines[2] == "+" + "-" * 41 + "+"
    moves = [line for line in lines if re.match(r"step \d+: ", line)]
    assert moves[0].startswith("step 1: blue_0 ") and lines[-1].startswith(
        f"game over after {len(moves)} steps: "
    )
    assert sum(line == "+" + "-" * 41 + "+" for line in lines) == 2 * (1 + (len(moves) - 1) // 5)


def test_export_writes_a_file_that_loads_with_torch_alone(checkout: Path, tmp_path: Path) -> None:
    out = tmp_path / "main.pt2"
    run = checkout / "runs" / "demo"
    assert main(["export", str(run), MEMBER, "--out", str(out)]) == 0
    extra = {META_FILE: ""}
    actor = torch.export.load(str(out), extra_files=extra).module()
    meta = json.loads(extra[META_FILE])
    assert (
        meta["member"] == MEMBER
        and meta["env"] == "battalion"
        and meta["inputs"] == ["obs", "mask", "agent_idx"]
    )
    policy = RunReader(run).policy(MEMBER)
    rng = np.random.default_rng(0)
    obs = rng.normal(size=(6, meta["obs_dim"])).astype(np.float32)
    mask = rng.random((6, meta["num_actions"])) < 0.7
    mask[:, 0] = True
    idx = np.array([0, 1, 0, 1, 0, 1])
    got = actor(torch.from_numpy(obs), torch.from_numpy(mask), torch.from_numpy(idx)).detach().numpy()
    np.testing.assert_allclose(got, policy.log_probs(obs, mask, idx), rtol=1e-5, atol=1e-5)
    # the example plays it with torch, numpy and light_league's envs: no other light_league module imported
    done = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            "-m",
            "light_league.examples.exported_policy",
            str(out),
            "--games",
            "3",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert done.stdout.startswith(f"{MEMBER} (battalion) against random: ")
    counts = [int(w) for w in done.stdout.split(":")[1].replace(",", "").split() if w.isdigit()]
    assert sum(counts) == 3
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    assert (
        "torch" in imported and "light_league.envs" in imported
    )  # -X importtime lists every module imported
    framework = [
        m
        for m in imported
        if m.startswith("light_league.") and not m.startswith(("light_league.envs", "light_league.examples"))
    ]
    assert framework == []  # light_league itself is imported too: its __init__ holds the version only


def test_export_of_a_baseline_or_an_unknown_member_is_one_line(
    checkout: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = str(checkout / "runs" / "demo")
    capsys.readouterr()
    assert main(["export", run, "main_agent_0-v17", "--out", str(tmp_path / "x.pt2")]) == 2
    err = capsys.readouterr().err
    assert (
        err.count("\n") == 1
        and "has no member 'main_agent_0-v17'" in err
        and not (tmp_path / "x.pt2").exists()
    )
    assert main(["export", run, "random", "--out", str(tmp_path / "x.pt2")]) == 2
    assert "is a fixed policy of env battalion (a baseline)" in capsys.readouterr().err


def test_best_and_newest_name_the_members_the_record_names(
    checkout: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = checkout / "runs" / "demo"
    run = str(run_dir)
    reader = RunReader(run_dir)
    record = reader.record()
    assert record.best_main is not None
    best, newest = record.best_main.id, reader.member_name("newest")
    assert newest == max(
        (m for m, r in record.member_roles.items() if r == "main_agent"), key=lambda m: int(m.split("-v")[1])
    )
    assert reader.member_name("best") == best and reader.member_name(MEMBER) == MEMBER
    assert reader.target("best").weights == {best: 1.0}
    capsys.readouterr()
    assert main(["eval", run, "best", "newest", "--games", "4"]) == 0
    line = capsys.readouterr().out
    assert line.startswith(f"best ({best}) against newest ({newest}) over 4 games")
    assert main(["eval", run, "best", "random", "--games", "4", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["a"] == best
    out = tmp_path / "best.pt2"
    assert main(["export", run, "best", "--out", str(out)]) == 0
    extra = {META_FILE: ""}
    torch.export.load(str(out), extra_files=extra)
    assert json.loads(extra[META_FILE])["member"] == best
    with pytest.raises(LeagueError, match="unknown target 'bset'; did you mean best"):
        reader.target("bset")
