"""The command line as a new user meets it: help text, program name, where a bad value came from."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from light_league.cli import main

ROOT = Path(__file__).resolve().parents[2]
RPS = str(ROOT / "expr_configs" / "rps_tiny.yaml")


def test_help_lists_every_command(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "argv", ["main.py"])
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert out.startswith("usage: main.py [-h] [--version] COMMAND ...")
    listed = out.split("commands:")[1]
    for command in ("run", "report", "board", "eval", "watch", "export", "exploit"):
        assert f"\n    {command} " in listed
    assert "short for `main.py run --config FILE" in " ".join(out.split())
    for command in ("run", "report", "eval", "watch", "export"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert capsys.readouterr().out.startswith(f"usage: main.py {command}")


def test_version_and_an_unknown_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.startswith("light_league 0.1.0 (Python ")
    assert main(["reprot", "runs/x"]) == 2
    assert capsys.readouterr().err.startswith("error: unknown command 'reprot'; did you mean report?")


def test_print_config_prints_the_resolved_config_wherever_the_overrides_stand(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = [
        "--config",
        RPS,
        "stop.max_generations=2",
        "--quiet",
        "evaluation.episodes_per_pair=8",
        "--print-config",
    ]
    assert main(argv) == 0
    printed = yaml.safe_load(capsys.readouterr().out)
    assert printed["stop"]["max_generations"] == 2 and printed["evaluation"]["episodes_per_pair"] == 8
    assert printed["logging"]["console"] == "quiet"
    assert not (ROOT / "runs").exists() or not any((ROOT / "runs").glob("rps_tiny-*-print"))
    assert main(["run", "--print-config", "--config", RPS]) == 0  # the explicit command takes the same
    assert yaml.safe_load(capsys.readouterr().out)["stop"]["max_generations"] == 4


def test_the_installed_command_says_its_own_name(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "argv", ["/usr/local/bin/light-league", "--help"])
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert out.startswith("usage: light-league") and "`light-league report RUN_DIR`" in " ".join(out.split())
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


@pytest.mark.integration
def test_main_py_help_runs_as_a_script() -> None:
    out = subprocess.run(
        [sys.executable, "main.py", "--help"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.startswith("usage: main.py") and "report" in out.stdout and "export" in out.stdout
