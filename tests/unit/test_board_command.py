"""``main.py board``: the TensorBoard command it runs and the address it prints last."""

from __future__ import annotations

import re
from pathlib import Path

from light_league.tracking.board import board_command, board_url, relay, served_logdir


def test_a_run_is_served_under_its_own_name_not_as_dot(tmp_path: Path) -> None:
    run = tmp_path / "demo"
    (run / "tensorboard").mkdir(parents=True)
    with served_logdir(run) as logdir:
        assert [p.name for p in logdir.iterdir()] == ["demo"]  # TensorBoard's name for the run
        assert (logdir / "demo").resolve() == (run / "tensorboard").resolve()
        command = board_command(logdir, port=6007, host="127.0.0.1")
        assert command[command.index("--logdir") + 1] == str(logdir)
        assert command[command.index("--port") + 1] == "6007"
    assert not logdir.exists() and (run / "tensorboard").is_dir()  # the link went, the run stays
    with served_logdir(tmp_path) as folder:  # a folder of runs: served as it is
        assert folder == tmp_path


def test_the_last_address_board_prints_opens_the_headline() -> None:
    written: list[str] = []
    headline = (
        f"TensorBoard on runs/demo at {board_url('localhost', 6006)} (the headline curves; Ctrl-C stops it)"
    )
    tensorboard = [
        "TensorFlow installation not found - running with reduced feature set.\n",
        "TensorBoard 2.21.0 at http://localhost:6006/ (Press CTRL+C to quit)\n",
    ]
    relay(tensorboard, written.append, headline)
    assert written == [*tensorboard, headline + "\n"]
    assert re.findall(r"http://\S+", "".join(written))[-1] == "http://localhost:6006/#custom_scalars"
