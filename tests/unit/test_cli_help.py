"""The command line as a new user meets it: help text, program name, where a bad value came from."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from light_league.cli import main

ROOT = Path(__file__).resolve().parents[2]
RPS = str(ROOT / "expr_configs" / "rps_tiny.yaml")


def test_help_mentions_report_and_board(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "argv", ["main.py"])
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert out.startswith("usage: main.py")
    assert "main.py report RUN_DIR" in out and "main.py board RUN_DIR" in out


def test_the_installed_command_says_its_own_name(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "argv", ["/usr/local/bin/light-league", "--help"])
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert out.startswith("usage: light-league") and "light-league report RUN_DIR" in out
    with pytest.raises(SystemExit):
        main(["report", "--help"])
    assert capsys.readouterr().out.startswith("usage: light-league report")


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("stop.max_generations=-1", "command-line override 'stop.max_generations=-1': stop.max_generations: -1 is invalid"),
        ("execution.num_wrokers=3", "command-line override 'execution.num_wrokers=3': execution.num_wrokers: unknown key; did you mean num_workers?"),
    ],
)  # fmt: skip
def test_an_invalid_override_is_reported_as_a_command_line_error(
    override: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--config", RPS, override]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {message}") and "rps_tiny.yaml" not in err


def test_a_bad_value_in_the_file_still_names_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("stop: {max_generations: -1}\n")
    assert main(["--config", str(bad), "stop.max_wall_s=10"]) == 2
    assert capsys.readouterr().err.startswith(f"error: {bad}: stop.max_generations: -1 is invalid")


def test_main_py_help_runs_as_a_script() -> None:
    out = subprocess.run(
        [sys.executable, "main.py", "--help"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.startswith("usage: main.py") and "report" in out.stdout
