"""The commands that read a finished run: eval (two players, N games, an interval), watch (one
game), export (a file that loads with torch alone, and the example that plays it)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from light_league.cli import main
from light_league.export import META_FILE
from light_league.run_reader import RunReader

ROOT = Path(__file__).resolve().parents[2]
RPS = str(ROOT / "expr_configs" / "rps_tiny.yaml")
MEMBER = "main_agent_0-v1"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("commands") / "run"
    argv = [
        "--config",
        RPS,
        "--run-dir",
        str(path),
        "stop.max_generations=2",
        "evaluation.episodes_per_pair=8",
    ]
    assert main(argv) == 0
    return path


def test_eval_pits_a_member_against_a_fixed_policy_with_an_interval(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["eval", str(run_dir), MEMBER, "random", "--games", "300", "--seed", "1", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["games"] == 300 and result["wins"] + result["draws"] + result["losses"] == 300
    low, high = result["score_ci95"]
    assert low < result["score"] < high and high - low < 0.15
    assert result["score"] == pytest.approx((result["wins"] + result["draws"] / 2) / 300)
    assert main(["eval", str(run_dir), MEMBER, "main_exploiter_0-v0", "--games", "40"]) == 0
    line = capsys.readouterr().out
    assert line.startswith(
        f"{MEMBER} against main_exploiter_0-v0 over 40 games (seats alternated, seed 0): win rate "
    )
    assert "(95%)" in line


def test_eval_of_an_unknown_player_is_one_line(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["eval", str(run_dir), "main_agent_0-v9", "randon"]) == 2
    err = capsys.readouterr().err
    assert (
        err.count("\n") == 1
        and "unknown player 'main_agent_0-v9'" in err
        and "fixed policy of env rps" in err
    )
    assert main(["eval", str(run_dir), MEMBER, "random", "--games", "0"]) == 2
    assert "--games must be at least 1, got 0" in capsys.readouterr().err


def test_watch_shows_one_game(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["watch", str(run_dir), MEMBER, "random", "--seed", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"{MEMBER} (seat 0) against random (seat 1), env rps, seed 3"
    assert lines[1].startswith("step 1: player_0 ") and lines[-1].startswith("game over after 1 steps: ")


def test_export_writes_a_file_that_loads_with_torch_alone(run_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "main.pt2"
    assert main(["export", str(run_dir), MEMBER, "--out", str(out)]) == 0
    extra = {META_FILE: ""}
    actor = torch.export.load(str(out), extra_files=extra).module()
    meta = json.loads(extra[META_FILE])
    assert (
        meta["member"] == MEMBER and meta["env"] == "rps" and meta["inputs"] == ["obs", "mask", "agent_idx"]
    )
    policy = RunReader(run_dir).policy(MEMBER)
    rng = np.random.default_rng(0)
    obs = rng.normal(size=(5, meta["obs_dim"])).astype(np.float32)
    mask = np.ones((5, meta["num_actions"]), dtype=bool)
    mask[0, 1] = False
    idx = np.zeros(5, dtype=np.int64)
    got = actor(torch.from_numpy(obs), torch.from_numpy(mask), torch.from_numpy(idx)).detach().numpy()
    np.testing.assert_allclose(got, policy.log_probs(obs, mask, idx), rtol=1e-5, atol=1e-6)
    # the example plays it with torch, numpy and the envs package: no light_league module imported
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "examples/exported_policy.py", str(out), "--games", "30"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert (
        done.stdout.startswith(f"{MEMBER} (rps) against random: ") and "30" not in done.stdout.split(":")[0]
    )
    counts = [int(w) for w in done.stdout.split(":")[1].replace(",", "").split() if w.isdigit()]
    assert sum(counts) == 30
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    assert "torch" in imported and "envs" in imported  # -X importtime lists every module imported
    assert not [m for m in imported if m == "light_league" or m.startswith("light_league.")]


def test_export_of_a_baseline_or_an_unknown_member_is_one_line(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["export", str(run_dir), "main_agent_0-v7", "--out", str(tmp_path / "x.pt2")]) == 2
    err = capsys.readouterr().err
    assert (
        err.count("\n") == 1
        and "has no member 'main_agent_0-v7'" in err
        and not (tmp_path / "x.pt2").exists()
    )
