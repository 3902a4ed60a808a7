"""A full disk (here a file-size limit, ``RLIMIT_FSIZE``) is one line, and the run stays resumable
(issue 56). Before, the right line came with about 250 others: TensorBoard's writer thread's
traceback, a warning per generation whose charts were pending and an unhandled traceback from
closing the writer."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from light_league.cli import main

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
RPS = str(ROOT / "expr_configs" / "rps_tiny.yaml")
#: bytes any one file may grow to: TensorBoard's event file passes it after a few generations
LIMIT = 110 * 1024


def limit_file_size() -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))


def test_a_file_size_limit_is_one_line_and_the_run_resumes(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    argv = ["--config", RPS, "--run-dir", str(run_dir), "stop.max_generations=200", "--quiet"]
    small = ["scheduler.steps_per_generation=512", "evaluation.episodes_per_pair=8"]
    proc = subprocess.run(
        [sys.executable, "main.py", *argv, *small],
        cwd=ROOT,
        env={**os.environ, "WANDB_MODE": "disabled"},
        preexec_fn=limit_file_size,  # the child only: Python ignores SIGXFSZ, so writes fail with EFBIG
        capture_output=True,
        text=True,
        timeout=600,
    )
    lines = [
        line
        for line in proc.stderr.splitlines()
        if line.strip() and not line.startswith(("generation ", "run directory "))
    ]
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert len(lines) == 1, lines[:30]
    assert lines[0].startswith("error: run failed (OSError: [Errno 27] File too large)"), lines[0]
    assert lines[0].endswith(f"continue with: python main.py --resume {run_dir}")
    assert "File too large" in (run_dir / "error.log").read_text()
    done = len((run_dir / "generations.jsonl").read_text().splitlines())
    assert done >= 1
    (run_dir / "error.log").unlink()
    assert main(["--resume", str(run_dir), f"stop.max_generations={done + 1}", "--quiet"]) == 0
    gens = [
        json.loads(line)["generation"] for line in (run_dir / "generations.jsonl").read_text().splitlines()
    ]
    assert gens == list(range(done + 1))
