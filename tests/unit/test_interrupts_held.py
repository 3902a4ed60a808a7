"""A stop signal during a checkpoint's commit waits for the commit (``interrupts_held``).

The run's handlers raise ``KeyboardInterrupt``; one raised inside ``shutil.rmtree`` (the previous
checkpoint's removal) turned into ``OSError: [Errno 9] Bad file descriptor`` and exit 1."""

from __future__ import annotations

import os
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from light_league.utils.atomic import interrupts_held


class Stopped(Exception):
    pass


@pytest.fixture
def handlers() -> Iterator[list[int]]:
    """SIGTERM raises (as the run's handler does); SIGHUP is ignored; what raised is listed."""
    seen: list[int] = []

    def stop(signum: int, frame: object) -> None:
        seen.append(signum)
        raise Stopped

    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)}
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        yield seen
    finally:
        for s, h in before.items():
            signal.signal(s, h)


def test_a_signal_inside_waits_for_the_end_then_runs_the_handler_once(
    handlers: list[int], tmp_path: Path
) -> None:
    handler = signal.getsignal(signal.SIGTERM)
    old = tmp_path / "gen_0001"
    for i in range(50):
        (old / str(i % 5)).mkdir(parents=True, exist_ok=True)
        (old / str(i % 5) / f"{i}.pt").write_bytes(b"x")
    done = []
    with pytest.raises(Stopped):
        with interrupts_held():
            os.kill(os.getpid(), signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGTERM)
            shutil.rmtree(old)
            done.append("removed")
    assert done == ["removed"] and not old.exists()
    assert handlers == [signal.SIGTERM]  # once, after the block
    assert signal.getsignal(signal.SIGTERM) is handler
    assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN


def test_without_a_signal_nothing_is_raised_and_handlers_are_back(handlers: list[int]) -> None:
    handler = signal.getsignal(signal.SIGTERM)
    with interrupts_held():
        pass
    assert handlers == [] and signal.getsignal(signal.SIGTERM) is handler


def test_an_ignored_signal_stays_ignored(handlers: list[int]) -> None:
    with interrupts_held():
        assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
        os.kill(os.getpid(), signal.SIGHUP)
    assert handlers == []


def test_an_error_inside_puts_the_handlers_back(handlers: list[int]) -> None:
    handler = signal.getsignal(signal.SIGTERM)
    with pytest.raises(ValueError), interrupts_held():
        raise ValueError("disk")
    assert signal.getsignal(signal.SIGTERM) is handler


def test_nested_blocks_act_once_at_the_outer_end(handlers: list[int]) -> None:
    order = []
    with pytest.raises(Stopped):
        with interrupts_held():
            with interrupts_held():
                os.kill(os.getpid(), signal.SIGTERM)
            order.append("inner done")
        order.append("not reached")
    assert order == ["inner done"] and handlers == [signal.SIGTERM]
