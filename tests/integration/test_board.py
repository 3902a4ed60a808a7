"""``main.py board``: TensorBoard started on a run keeps every generation's heatmap (default: 10)."""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from light_league.cli import main
from light_league.tracking.backends import build_logger
from light_league.tracking.board import board_command, served_logdir
from light_league.tracking.config import LoggingConfig
from light_league.tracking.logger import PAYOFF_HEATMAP_TAG, PayoffSnapshot
from light_league.tracking.tensorboard_logger import TensorBoardLogger

GENERATIONS = 14


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _get(url: str, timeout_s: float = 60.0) -> object:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return json.loads(response.read())
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def _filled(url: str, timeout_s: float = 60.0) -> object:
    """``url``'s answer once it is not empty (TensorBoard serves before its first load finished)."""
    deadline = time.monotonic() + timeout_s
    answer = _get(url)
    while not answer and time.monotonic() < deadline:
        time.sleep(0.5)
        answer = _get(url)
    return answer


def _at(generation: int) -> PayoffSnapshot:
    rates = np.array([[0.5, 0.75], [0.25, 0.5]])
    return PayoffSnapshot(
        generation, ["a-v0", "b"], ["main_agent", "baseline"], rates, [[0, 8], [8, 0]], [1.0, 0.0]
    )


def test_board_serves_every_generations_heatmap(tmp_path: Path) -> None:
    logger = build_logger(LoggingConfig(), tmp_path)
    assert isinstance(logger, TensorBoardLogger)
    for g in range(GENERATIONS):
        logger.log_payoff(_at(g))
        logger.wait_for_charts()  # every generation's image (a run draws them on a CPU budget)
    logger.close()
    port = _free_port()
    with served_logdir(tmp_path) as logdir:
        command = board_command(logdir, port=port, host="127.0.0.1")
        assert command[command.index("--samples_per_plugin") + 1] == "images=100000,text=100000"
        _serves_every_heatmap(command, port, run=tmp_path.name)


def _serves_every_heatmap(command: list[str], port: int, *, run: str) -> None:
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert _filled(f"http://127.0.0.1:{port}/data/runs") == [run]  # the run's name, not "."
        tag = PAYOFF_HEATMAP_TAG.replace("/", "%2F")
        images = _filled(f"http://127.0.0.1:{port}/data/plugin/images/images?run={run}&tag={tag}&sample=0")
        assert isinstance(images, list)
        assert [entry["step"] for entry in images] == list(range(GENERATIONS))
    finally:
        process.terminate()
        process.wait(timeout=20)


def test_board_of_a_missing_directory_is_a_command_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["board", str(tmp_path / "nope")]) == 2
    assert "does not exist" in capsys.readouterr().err
