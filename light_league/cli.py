"""Command line: ``main.py COMMAND ...`` with the commands of :func:`parser` (``main.py --help``).

``main.py --config FILE [key.path=value ...]`` is short for ``main.py run --config FILE ...``.
Overrides and settings may stand anywhere among the options. Bad input (config, names, files)
prints one line to stderr and exits with status 2. A failure during a run prints one line saying
how to resume and exits with status 1; the full traceback goes to ``RUN_DIR/error.log``.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

from light_league import failures
from light_league.errors import EnvContractError, LeagueError, NonFiniteError, did_you_mean
from light_league.utils.text import printable

if TYPE_CHECKING:
    from light_league.runner import Runner

EXIT_BAD_INPUT = 2
EXIT_RUN_FAILED = failures.EXIT_RUN_FAILED
EXIT_INTERRUPTED = 130


def _stop_on_signals() -> None:
    """Ctrl-C, SIGTERM (what ``kill``, ``timeout``, batch schedulers and container runtimes send)
    and SIGHUP (the terminal closed) stop the run cleanly: one line, logs flushed, executor shut
    down, lock released; resumable. Also when the process was started with SIGINT ignored (as
    background jobs of a non-interactive shell are). Called again once the executor is up: Ray's
    core worker installs its own SIGTERM handler in the driver, which aborts with a stack dump."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, interrupt)
    signal.signal(signal.SIGHUP, interrupt)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise LeagueError(f"{message}; see --help")


def _program() -> str:
    """The name the user typed: ``main.py`` or the installed ``light-league``."""
    return Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "main.py"


def version_text() -> str:
    """``light_league 0.1.0 (Python 3.11.7, torch 2.13.0, ray 2.60.0)``, read from the installed
    packages' metadata (nothing is imported)."""
    from light_league import __version__

    parts = [f"Python {sys.version.split()[0]}"]
    for package in ("torch", "ray"):
        try:
            parts.append(f"{package} {metadata.version(package)}")
        except metadata.PackageNotFoundError:
            parts.append(f"{package} not installed")
    return f"light_league {__version__} ({', '.join(parts)})"


def parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The top-level parser and one subparser per command."""
    prog = _program()
    top = _Parser(
        prog=prog,
        description="Population-based multi-agent RL: run a league, then read, pit, watch and export its members.",
        epilog=f"`{prog} --config FILE [key.path=value ...]` is short for `{prog} run --config FILE ...`. "
        f"Each command has its own --help, e.g. `{prog} report --help`. Examples: "
        f"`{prog} --config expr_configs/rps_tiny.yaml`, `{prog} report RUN_DIR`, `{prog} board RUN_DIR`, "
        f"`{prog} eval RUN_DIR main_agent_0-v3 random --games 200`.",
    )
    top.add_argument("--version", action="version", version=version_text())
    commands = top.add_subparsers(title="commands", metavar="COMMAND")
    for name, (help_text, build) in _COMMANDS.items():
        build(commands.add_parser(name, help=help_text.replace("%", "%%"), description=help_text))
    return top, dict(commands.choices)


def _run_arguments(p: argparse.ArgumentParser) -> None:
    p.epilog = "Overrides may stand anywhere among the options: --config X a=1 --quiet b=2."
    p.add_argument("--config", help="experiment YAML (see expr_configs/)")
    p.add_argument("--run-dir", help="run directory (default: a fresh one under experiment.runs_root)")
    p.add_argument("--resume", metavar="RUN_DIR", help="continue a run from its last completed generation")
    p.add_argument("--quiet", action="store_true", help="one line per generation (logging.console=quiet)")
    p.add_argument(
        "--print-config",
        action="store_true",
        help="print the resolved config (the file, or the run's stored one, with the overrides) and exit",
    )
    p.add_argument("overrides", nargs="*", help="key.path=value overrides, typed like the YAML file")


def _report_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dir")
    p.add_argument("--generation", type=int, default=None, help="generation to show (default: latest)")
    p.add_argument(
        "--top", type=int, default=None, help="leaderboard rows and most payoff-table members (default: 10)"
    )
    p.add_argument(
        "--full", action="store_true", help="every member and the whole payoff table, cells with intervals"
    )
    p.add_argument("--csv", default=None, help="also write that generation's payoff table as CSV here")
    p.add_argument("--json", action="store_true", help="print the report as JSON (every member) instead")


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(
        level=os.environ.get("LIGHT_LEAGUE_LOG", "WARNING"), format="%(levelname)s %(name)s: %(message)s"
    )
    _stop_on_signals()
    try:
        top, commands = parser()
        if args and args[0] in ("-h", "--help", "--version"):
            top.parse_args(args[:1])  # prints and exits
        if args and args[0] not in commands and not args[0].startswith("-") and "=" not in args[0]:
            raise LeagueError(
                f"unknown command {args[0]!r}{did_you_mean(args[0], list(commands))}; "
                f"commands: {', '.join(commands)} (or --config FILE to run an experiment)"
            )
        name = args[0] if args and args[0] in commands else "run"
        rest = args[1:] if args and args[0] in commands else args
        ns = commands[name].parse_intermixed_args(rest)  # overrides may stand between options
        return _HANDLERS[name](ns, args)
    except LeagueError as exc:
        print(f"error: {printable(str(exc))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


#: the help of the ``key=value`` settings of a command that reads a run directory
_SETTINGS_HELP = (
    "key.path=value changes to the run's stored config; repeat a module the run names "
    "(env.name=pettingzoo:my_pkg.env:parallel_env) to confirm you trust it (docs/trust.md)"
)


def _report(ns: argparse.Namespace, argv: list[str]) -> int:
    from light_league.tracking.report import report, report_json
    from light_league.trust import open_run_dir

    run_dir = open_run_dir(ns.run_dir, command="report").root  # reads records and tables, no config
    if ns.json:
        if ns.csv or ns.full or ns.top:
            raise LeagueError("--json prints every member of the generation; drop --csv, --full and --top")
        print(printable(json.dumps(report_json(run_dir, generation=ns.generation), indent=2)))
        return 0
    if ns.full and ns.top:
        raise LeagueError("--full shows every member; drop --top (or --full)")
    text = report(run_dir, generation=ns.generation, csv_path=ns.csv, full=ns.full, top=ns.top)
    print(printable(text), end="")  # member ids are the run's data: shown, never sent to the terminal
    return 0


def _members(ns: argparse.Namespace, command: str) -> tuple[str, str]:
    """``ns.a`` and ``ns.b`` with ``best`` / ``newest`` replaced by the member ids they stand for."""
    from light_league.run_reader import NAMED, RunReader

    if ns.a not in NAMED and ns.b not in NAMED:
        return ns.a, ns.b
    run = RunReader(Path(ns.run_dir), list(ns.settings), command=command)
    return run.member_name(ns.a), run.member_name(ns.b)


def _shown(name: str, member: str) -> str:
    """``best (main_agent_0-v9)`` where a name stood for a member, else the member id."""
    return member if name == member else f"{name} ({member})"


_PLAYER_HELP = (
    "a member of the run, best (the best main agent so far), newest (the newest main-agent snapshot) "
    "or a fixed policy of its env (random, scripted_l3 ...)"
)


def _eval_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dir")
    p.add_argument("a", metavar="A", help=_PLAYER_HELP)
    p.add_argument("b", metavar="B", help="its opponent, the same kinds")
    p.add_argument("--games", type=int, default=200, help="fresh games, seats alternated (default: 200)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("settings", nargs="*", help=_SETTINGS_HELP)


def _eval(ns: argparse.Namespace, argv: list[str]) -> int:
    from light_league.pit import pit, pit_line

    if ns.seed < 0:
        raise LeagueError(f"--seed must be 0 or more, got {ns.seed}")
    a, b = _members(ns, "eval")
    result = pit(Path(ns.run_dir), a, b, games=ns.games, seed=ns.seed, overrides=list(ns.settings))
    if ns.json:
        print(json.dumps({"a": a, "b": b, "seed": ns.seed, **result.to_json()}, indent=2))
    else:
        print(printable(pit_line(_shown(ns.a, a), _shown(ns.b, b), result, ns.seed)))
    return 0


def _watch_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dir")
    p.add_argument("a", metavar="A", help=f"seat 0: {_PLAYER_HELP}")
    p.add_argument("b", metavar="B", help="seat 1, the same kinds")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--every", type=int, default=10, help="draw the field every K steps, where the env can (default: 10)"
    )
    p.add_argument("settings", nargs="*", help=_SETTINGS_HELP)


def _watch(ns: argparse.Namespace, argv: list[str]) -> int:
    from light_league.pit import watch
    from light_league.tracking.config import LoggingConfig
    from light_league.tracking.console import Console

    if ns.seed < 0:
        raise LeagueError(f"--seed must be 0 or more, got {ns.seed}")
    out = Console(LoggingConfig(console="plain"), file=sys.stdout)
    a, b = _members(ns, "watch")
    watch(Path(ns.run_dir), a, b, seed=ns.seed, every=ns.every, console=out, overrides=list(ns.settings))
    return 0


def _export_arguments(p: argparse.ArgumentParser) -> None:
    p.epilog = "Load it with torch alone: light_league/examples/exported_policy.py, docs/quickstart.md."
    p.add_argument("run_dir")
    p.add_argument(
        "member",
        help="a learner's snapshot, e.g. main_agent_0-v12, or best (the best main agent so far) or newest",
    )
    p.add_argument(
        "--out",
        default=None,
        help="file to write, or a directory to write MEMBER.pt2 in (default: MEMBER.pt2 here)",
    )
    p.add_argument("settings", nargs="*", help=_SETTINGS_HELP)


def _export(ns: argparse.Namespace, argv: list[str]) -> int:
    from light_league.export import export_member

    out = Path(ns.out) if ns.out else None
    path = export_member(Path(ns.run_dir), ns.member, out, overrides=list(ns.settings))
    print(
        printable(
            f"wrote {path} (torch.export; load it with light_league/examples/exported_policy.py's load, which checks it "
            "first: docs/trust.md)"
        )
    )
    return 0


def _exploit_arguments(p: argparse.ArgumentParser) -> None:
    p.description = (
        "How exploitable is what a run hands over? Train a fresh learner (the run's kind, with "
        "evaluation.probe's settings) against a frozen target of a finished or running run, then play fresh "
        "games against it, seats alternated. Writes RUN_DIR/exploit/<target>_gen<G>.json."
    )
    p.epilog = (
        "key=value: a bare key is a setting of the probe's learner (lr=0.002 entropy_coef=0); a dotted "
        "key overrides the run's config (evaluation.probe.num_envs=128). See docs/evaluation.md."
    )
    p.add_argument("run_dir")
    p.add_argument(
        "--target",
        default="main",
        help="main (the newest snapshot of each main agent), meta (the meta-strategy), best (the best main "
        "agent so far, judged against the reference set), newest (the newest main-agent snapshot) or a member id",
    )
    p.add_argument("--generation", type=int, default=None, help="completed generation (default: the last)")
    p.add_argument("--env-steps", type=int, default=None, help="training budget (default: evaluation.probe)")
    p.add_argument("--games", type=int, default=None, help="evaluation games (default: evaluation.probe)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("settings", nargs="*", help="key=value settings (see below)")


def _exploit(ns: argparse.Namespace, argv: list[str]) -> int:
    from light_league.exploit import exploit

    for flag, value in (("--env-steps", ns.env_steps), ("--games", ns.games)):
        if value is not None and value < (1 if flag == "--env-steps" else 2):
            raise LeagueError(f"{flag} must be at least {1 if flag == '--env-steps' else 2}, got {value}")
    if ns.seed < 0:
        raise LeagueError(f"--seed must be 0 or more, got {ns.seed}")
    return exploit(
        Path(ns.run_dir),
        target=ns.target,
        generation=ns.generation,
        env_steps=ns.env_steps,
        games=ns.games,
        seed=ns.seed,
        settings=list(ns.settings),
    )


def _board_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dir")
    p.add_argument("--port", type=int, default=6006)
    p.add_argument("--host", default="localhost", help="interface to serve on (default: this machine only)")


def _board(ns: argparse.Namespace, argv: list[str]) -> int:
    from light_league.run_dir import RunDir
    from light_league.tracking.board import board, board_url
    from light_league.tracking.report import check_run_records
    from light_league.trust import open_run_dir

    folder = RunDir(ns.run_dir)
    if folder.root.is_dir():
        folder.check_plain()  # a run or a folder of runs: nothing in it may block a read
        if folder.is_run():
            open_run_dir(ns.run_dir, command="board")  # reads records and event files, no config
        check_run_records(folder.root)  # a damaged record is one line here, not in TensorBoard
    headline = (
        f"TensorBoard on {ns.run_dir} at {board_url(ns.host, ns.port)} (the headline curves; Ctrl-C stops it)"
    )
    return board(Path(ns.run_dir), port=ns.port, host=ns.host, headline=headline)


def _run(ns: argparse.Namespace, args: list[str]) -> int:
    from light_league.config import load_config
    from light_league.run_dir import RunDir

    if ns.resume:
        if ns.config or ns.run_dir:
            raise LeagueError("--resume takes the config from the run directory; drop --config/--run-dir")
        from light_league.trust import RESUME, check_unedited, open_run_dir, stored_config

        run_dir = open_run_dir(ns.resume, command=RESUME)
        overrides = list(ns.overrides) + (["logging.console=quiet"] if ns.quiet else [])
        config = stored_config(run_dir, overrides, command=RESUME, uploads=True)
        run_dir.check_confined()
        check_unedited(run_dir)  # config.yaml is what the run wrote (its hash is the manifest's)
        from light_league.resume_rules import check_resume_changes

        check_resume_changes(load_config(run_dir.config, []), config)
        if ns.print_config:
            return _print_config(config)
    else:
        if not ns.config:
            raise LeagueError(
                "--config FILE is required (e.g. --config expr_configs/league.yaml); --help lists the commands"
            )
        overrides = list(ns.overrides) + (["logging.console=quiet"] if ns.quiet else [])
        config = load_config(ns.config, overrides)
        if ns.print_config:
            return _print_config(config)
        run_dir = (
            RunDir(ns.run_dir)
            if ns.run_dir
            else RunDir.fresh(config.experiment.runs_root, config.experiment.name)
        )

    from light_league.runner import Runner

    previous_hook = failures.start_run()  # this run's failure is yet to be said
    try:
        try:
            runner = Runner.build(config, run_dir, resume=bool(ns.resume), argv=["main.py", *args])
        except LeagueError:
            raise
        except Exception as exc:  # a bug or an environment problem while building: one line + saved traceback
            return failures.fail(run_dir.root, exc, resumable=False)
        _stop_on_signals()  # again: starting Ray replaced the SIGTERM handler with its own
        return _run_to_end(runner, run_dir.root)
    finally:
        threading.excepthook = previous_hook


def _run_to_end(runner: Runner, root: Path) -> int:
    """Run the generations, then close the run: one line for whatever ends it early (a failure,
    an interruption), and one for a close that fails after the run ended well (a full disk while
    the last events are flushed); a close that fails after a failure said is not said again."""
    from light_league.execution.base import set_fatal_report

    interrupted = False
    set_fatal_report(lambda exc: failures.say_failure(root, exc))
    try:
        runner.run()
    except (NonFiniteError, EnvContractError) as exc:
        raise type(exc)(
            f"{exc}; completed generations are kept: once it is fixed, continue with "
            f"python main.py --resume {root}"
        ) from None
    except KeyboardInterrupt:
        interrupted = True
        print(
            f"interrupted; completed generations are kept, continue with: python main.py --resume {root}",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    except LeagueError:
        raise
    except Exception as exc:  # a crash mid-run: say how to resume, keep the traceback in the run dir
        return failures.fail(root, exc, resumable=True)
    finally:
        set_fatal_report(None)
        closing = _close(runner, interrupted=interrupted)
    if closing is not None:
        return failures.fail(root, closing, resumable=True)
    if failures.thread_failures:
        print(
            f"warning: a background thread failed ({failures.thread_failures[0][0]}); the run ended, its traceback "
            "is in the debug log: LIGHT_LEAGUE_LOG=DEBUG",
            file=sys.stderr,
        )
    print(f"run directory: {root}")
    return 0


def _close(runner: Runner, *, interrupted: bool) -> Exception | None:
    """Close the run (logs flushed, executor shut down, lock released): the exception a close
    raised, for the caller to say, or None."""
    try:
        runner.close(interrupted=interrupted)
    except KeyboardInterrupt:
        # a second Ctrl-C while closing: close's own clean-up (executor, lock) has run, and the
        # interruption has been said once
        if not interrupted:
            raise
    except Exception as exc:
        logging.getLogger(__name__).debug("closing the run failed", exc_info=True)
        return exc
    return None


def _print_config(config: object) -> int:
    """The resolved config as YAML on stdout (what the run would write as ``config.yaml``)."""
    import yaml

    print(yaml.safe_dump(json.loads(json.dumps(config.to_dict(), default=str)), sort_keys=False), end="")  # type: ignore[attr-defined]
    return 0


Handler = Callable[[argparse.Namespace, list[str]], int]
#: each command: its one-line help and the function that adds its arguments
_COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]] = {
    "run": ("run a league experiment, or continue one with --resume", _run_arguments),
    "report": (
        "a run's leaderboard, payoff table and history, within 100 columns (or JSON)",
        _report_arguments,
    ),
    "board": ("TensorBoard on a run, opening on its headline curves", _board_arguments),
    "eval": (
        "pit two members (or a member and a scripted bot) for N games, with a 95% interval",
        _eval_arguments,
    ),
    "watch": ("watch one game between two members (battalion: text frames)", _watch_arguments),
    "export": ("a member's policy as one file that loads with torch alone", _export_arguments),
    "exploit": ("how exploitable a run's output is: train a fresh learner against it", _exploit_arguments),
}
_HANDLERS: dict[str, Handler] = {
    "run": _run,
    "report": _report,
    "board": _board,
    "eval": _eval,
    "watch": _watch,
    "export": _export,
    "exploit": _exploit,
}
