"""Shared test settings: the test tiers and the unit tier's guard, no network, no W&B, one Ray
instance per session (only for `ray` tests), and finished tiny runs made once per session for the
tests that read one (a Kuhn league for the benches, a rock-paper-scissors league for the commands
that read a run; a test that changes a run works on a copy).

Tiers (docs/architecture.md, "Tests"): a test marked ``slow`` is in the slow tier; else a test
under ``tests/integration/`` or marked ``integration`` is in the integration tier; every other test
is in the unit tier and gets the ``unit`` marker here. A unit test that starts a run
(``Runner.run``), a subprocess or Ray fails with a line that names the marker to add.
"""

from __future__ import annotations

import multiprocessing.process
import os
import platform
import subprocess
import sys
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest_plugins = ["pytester"]  # tests/unit/test_tiers.py runs the tiers on a suite of its own

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
os.environ.setdefault("RAY_worker_niceness", "0")
os.environ.setdefault("WANDB_MODE", "disabled")
os.environ.setdefault("WANDB_SILENT", "true")

INTEGRATION_DIR = Path(__file__).resolve().parent / "integration"
#: what a unit test does not start, and what it raises when it does
_STARTS = "starts no run, subprocess or Ray"


def pytest_sessionstart(session: pytest.Session) -> None:
    # platform.processor() runs `uname -p` once per process and keeps the answer: ask it here, so
    # that a unit test that records the machine (bench_output) meets no subprocess in any order
    platform.processor()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Give every test its tier: ``slow`` if so marked, ``integration`` under tests/integration/
    (or if so marked), ``unit`` otherwise."""
    for item in items:
        if item.get_closest_marker("slow") is not None:
            continue
        if item.path.is_relative_to(INTEGRATION_DIR):
            item.add_marker(pytest.mark.integration)
        elif item.get_closest_marker("integration") is None:
            item.add_marker(pytest.mark.unit)


class UnitTierGuard:
    """While a unit test runs (its fixtures included), starting a run, a subprocess or Ray fails it.

    The failure is raised where the start happens and also recorded, so a test whose code swallows
    the exception (or starts the process from a thread) still fails.
    """

    def __init__(self, item: pytest.Item) -> None:
        self.item = item
        self.started: list[str] = []
        #: how many of ``started`` a report of this test's phases has said
        self.reported = 0
        self.patch = pytest.MonkeyPatch()

    def message(self, what: str) -> str:
        return (
            f"{self.item.nodeid} is a unit test and {what}: the unit tier {_STARTS}. "
            "Mark the test @pytest.mark.integration (or @pytest.mark.slow for a learning test), "
            "or move it to tests/integration/"
        )

    def refuse(self, what: str) -> Callable[..., Any]:
        def refused(*args: Any, **kwargs: Any) -> Any:
            shown = what
            if what == "started a subprocess" and len(args) > 1:  # Popen._execute_child(self, args, ...)
                command = args[1] if isinstance(args[1], str) else " ".join(map(str, args[1]))
                shown = f"started a subprocess ({command[:120]})"
            self.started.append(shown)
            pytest.fail(self.message(shown), pytrace=False)

        return refused

    def __enter__(self) -> UnitTierGuard:
        from light_league.runner import Runner

        refuse = self.refuse
        self.patch.setattr(Runner, "run", refuse("started a run (Runner.run)"))
        self.patch.setattr(Runner, "run_generation", refuse("started a run (Runner.run_generation)"))
        self.patch.setattr(subprocess.Popen, "_execute_child", refuse("started a subprocess"))
        self.patch.setattr(os, "system", refuse("started a subprocess (os.system)"))
        self.patch.setattr(os, "fork", refuse("forked the process (os.fork)"))
        self.patch.setattr(os, "posix_spawn", refuse("started a subprocess (os.posix_spawn)"))
        self.patch.setattr(multiprocessing.process.BaseProcess, "start", refuse("started a process"))
        ray = sys.modules.get("ray")  # not yet imported: Ray's own processes meet the subprocess guard
        if ray is not None:
            self.patch.setattr(ray, "init", refuse("started Ray (ray.init)"))
        return self

    def __exit__(self, *exc: object) -> None:
        self.patch.undo()


_guards: dict[str, UnitTierGuard] = {}
#: session fixtures that start a run or Ray: a unit test that asks for one fails before its setup,
#: whether or not an integration test of the session has already built it
RUN_FIXTURES = {"ray_session", "tiny_kuhn_league", "tiny_rps_run"}


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    guard = _guards.get(item.nodeid)
    used = sorted(RUN_FIXTURES.intersection(getattr(item, "fixturenames", ())))
    if guard is not None and used:
        pytest.fail(guard.message(f"uses the fixture {used[0]}, which starts a run or Ray"), pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, object, object]:
    if item.get_closest_marker("unit") is None:
        return (yield)
    with UnitTierGuard(item) as guard:
        _guards[item.nodeid] = guard
        try:
            return (yield)
        finally:
            del _guards[item.nodeid]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    guard = _guards.get(item.nodeid)
    if guard is not None and len(guard.started) > guard.reported:
        if report.passed:  # the refusal was swallowed (or raised in another thread)
            report.outcome = "failed"
            report.longrepr = guard.message(guard.started[guard.reported])
        guard.reported = len(guard.started)
    return report


@pytest.fixture(autouse=True)
def _no_wandb_network(monkeypatch: pytest.MonkeyPatch) -> None:
    if os.environ.get("WANDB_MODE") not in ("disabled", "offline"):
        monkeypatch.setenv("WANDB_MODE", "disabled")


@pytest.fixture(scope="session")
def ray_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A local Ray instance shared by every `ray` test of the session (started once: 5–12 s)."""
    import ray

    if not ray.is_initialized():
        ray.init(
            num_cpus=2,
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
            object_store_memory=200 * 1024 * 1024,
        )
    yield
    ray.shutdown()


@pytest.fixture(scope="session")
def tiny_kuhn_overrides() -> list[str]:
    """Overrides that shrink ``league_kuhn.yaml`` to three generations of 2,048 env steps, one
    snapshot a generation for each of its three learners (seconds)."""
    roles = ("main_agent", "main_exploiter", "league_exploiter")
    return [
        "stop.max_generations=3",
        "stop.max_wall_s=null",
        "stop.target_nash_conv=null",
        "scheduler.steps_per_generation=2048",
        *(f"scheduler.{role}.steps_per_generation=2048" for role in roles),
        *(f"scheduler.{role}.checkpoint_{b}_steps=2048" for role in roles for b in ("min", "max")),
        "league.average_policy.enabled=false",
        "evaluation.adaptive_budget=2000",
        "evaluation.shared_games=0",  # the meta-strategy from the played table (no pool to play)
    ]


@pytest.fixture(scope="session")
def tiny_kuhn_league(tmp_path_factory: pytest.TempPathFactory, tiny_kuhn_overrides: list[str]) -> Path:
    """A finished ``league_kuhn.yaml`` run with ``tiny_kuhn_overrides``; read it, do not write to it."""
    from light_league.cli import main

    root = Path(__file__).resolve().parents[1]
    run = tmp_path_factory.mktemp("tiny_kuhn_league") / "run"
    argv = ["--config", str(root / "expr_configs" / "league_kuhn.yaml"), "--run-dir", str(run)]
    assert main([*argv, *tiny_kuhn_overrides, "logging.console=quiet"]) == 0
    return run


@pytest.fixture(scope="session")
def tiny_rps_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished ``rps_tiny.yaml`` run of two generations, 64 games per pairing (seconds); read it,
    or copy it (``shutil.copytree``, its ``.lock`` left behind) to change it."""
    from light_league.cli import main

    root = Path(__file__).resolve().parents[1]
    run = tmp_path_factory.mktemp("tiny_rps_run") / "run"
    argv = ["--config", str(root / "expr_configs" / "rps_tiny.yaml"), "--run-dir", str(run)]
    assert main([*argv, "stop.max_generations=2", "evaluation.episodes_per_pair=64"]) == 0
    return run
