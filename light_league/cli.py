"""Command line: ``main.py --config FILE [--run-dir DIR] [key.path=value ...]``, ``--resume RUN_DIR``,
``main.py report RUN_DIR``, ``main.py board RUN_DIR`` and ``main.py exploit RUN_DIR``.

Bad input (config, names, files) prints one line to stderr and exits with status 2. A failure
during a run prints one line saying how to resume and exits with status 1; the full traceback
goes to ``RUN_DIR/error.log``.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import tempfile
import traceback
from pathlib import Path

from light_league.errors import LeagueError, NonFiniteError

EXIT_BAD_INPUT = 2
EXIT_RUN_FAILED = 1
EXIT_INTERRUPTED = 130


def _stop_on_signals() -> None:
    """Ctrl-C and SIGTERM stop the run cleanly (logs flushed, lock released), even when the
    process was started with SIGINT ignored (as background jobs of a non-interactive shell are)."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, interrupt)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise LeagueError(f"{message}; see --help")


def _program() -> str:
    """The name the user typed: ``main.py`` or the installed ``light-league``."""
    return Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "main.py"


def _run_parser() -> argparse.ArgumentParser:
    prog = _program()
    p = _Parser(
        prog=prog,
        description="Run a league experiment, or continue one with --resume.",
        epilog=f"Other commands: `{prog} report RUN_DIR [--generation G] [--full] [--csv FILE]` prints a "
        f"run's leaderboard, payoff table and history (`{prog} report --help`); `{prog} board RUN_DIR` "
        f"opens it in TensorBoard with every generation's images; `{prog} exploit RUN_DIR --target main` "
        f"measures how exploitable its newest main agent is (`{prog} exploit --help`).",
    )
    p.add_argument("--config", help="experiment YAML (see expr_configs/)")
    p.add_argument("--run-dir", help="run directory (default: a fresh one under experiment.runs_root)")
    p.add_argument("--resume", metavar="RUN_DIR", help="continue a run from its last completed generation")
    p.add_argument("--quiet", action="store_true", help="one line per generation (logging.console=quiet)")
    p.add_argument("overrides", nargs="*", help="key.path=value overrides, typed like the YAML file")
    return p


def _report_parser() -> argparse.ArgumentParser:
    p = _Parser(prog=f"{_program()} report", description="Leaderboard and payoff table of a run directory.")
    p.add_argument("run_dir")
    p.add_argument("--generation", type=int, default=None, help="generation to show (default: latest)")
    p.add_argument("--csv", default=None, help="also write that generation's payoff table as CSV here")
    p.add_argument(
        "--full", action="store_true", help="the whole payoff table (default: above 12 members, the focus)"
    )
    return p


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(
        level=os.environ.get("LIGHT_LEAGUE_LOG", "WARNING"), format="%(levelname)s %(name)s: %(message)s"
    )
    _stop_on_signals()
    try:
        if args and args[0] == "report":
            return _report(args[1:])
        if args and args[0] == "board":
            return _board(args[1:])
        if args and args[0] == "exploit":
            return _exploit(args[1:])
        return _run(args)
    except LeagueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _report(args: list[str]) -> int:
    from light_league.tracking.report import report

    ns = _report_parser().parse_args(args)
    run_dir = Path(ns.run_dir)
    if not run_dir.is_dir():
        raise LeagueError(f"run directory {run_dir} does not exist; pass a directory written by main.py")
    print(report(run_dir, generation=ns.generation, csv_path=ns.csv, full=ns.full))
    return 0


def _exploit_parser() -> argparse.ArgumentParser:
    prog = _program()
    p = _Parser(
        prog=f"{prog} exploit",
        description="How exploitable is what a run hands over? Train a fresh learner (the run's kind, with "
        "evaluation.probe's settings) against a frozen target of a finished or running run, then play fresh "
        "games against it, seats alternated. Writes RUN_DIR/exploit/<target>_gen<G>.json.",
        epilog="key=value: a bare key is a setting of the probe's learner (lr=0.002 entropy_coef=0); a dotted "
        "key overrides the run's config (evaluation.probe.num_envs=128). See docs/evaluation.md.",
    )
    p.add_argument("run_dir")
    p.add_argument(
        "--target",
        default="main",
        help="main (the newest snapshot of each main agent), meta (the meta-strategy) or a member id",
    )
    p.add_argument("--generation", type=int, default=None, help="completed generation (default: the last)")
    p.add_argument("--env-steps", type=int, default=None, help="training budget (default: evaluation.probe)")
    p.add_argument("--games", type=int, default=None, help="evaluation games (default: evaluation.probe)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("settings", nargs="*", help="key=value settings (see below)")
    return p


def _exploit(args: list[str]) -> int:
    from light_league.exploit import exploit

    ns = _exploit_parser().parse_intermixed_args(args)  # settings may stand between options
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


def _board_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog=f"{_program()} board",
        description="TensorBoard on a run directory (or a folder of runs), every generation's images kept.",
    )
    p.add_argument("run_dir")
    p.add_argument("--port", type=int, default=6006)
    p.add_argument("--host", default="localhost", help="interface to serve on (default: this machine only)")
    return p


def _board(args: list[str]) -> int:
    from light_league.tracking.board import board
    from light_league.tracking.report import check_run_records

    ns = _board_parser().parse_args(args)
    if Path(ns.run_dir).is_dir():
        check_run_records(Path(ns.run_dir))  # a damaged record is one line here, not in TensorBoard
    print(f"TensorBoard on {ns.run_dir} at http://{ns.host}:{ns.port}/ (Ctrl-C stops it)", file=sys.stderr)
    return board(Path(ns.run_dir), port=ns.port, host=ns.host)


def _run(args: list[str]) -> int:
    from light_league.config import load_config
    from light_league.run_dir import RunDir

    ns = _run_parser().parse_intermixed_args(args)  # overrides may stand between options
    if ns.resume:
        if ns.config or ns.run_dir:
            raise LeagueError("--resume takes the config from the run directory; drop --config/--run-dir")
        run_dir = RunDir(ns.resume)
        if not run_dir.is_run():
            raise LeagueError(
                f"{ns.resume} is not a run directory (no manifest.json written by main.py); --resume "
                "continues only a run that main.py started: pass its RUN_DIR, or start a run with --config"
            )
        if not run_dir.config.is_file():
            raise LeagueError(
                f"{ns.resume} was stopped before its config.yaml was written: there is nothing to resume; "
                f"start the run again with --config FILE --run-dir {ns.resume}"
            )
        run_dir.check_confined()
        overrides = list(ns.overrides) + (["logging.console=quiet"] if ns.quiet else [])
        config = load_config(run_dir.config, overrides)
        from light_league.build import check_resume_changes
        from light_league.plugins import check_stored_imports

        check_stored_imports(config, overrides, source=str(run_dir.config))
        check_resume_changes(load_config(run_dir.config, []), config)
    else:
        if not ns.config:
            raise LeagueError("--config FILE is required (e.g. --config expr_configs/league.yaml)")
        overrides = list(ns.overrides) + (["logging.console=quiet"] if ns.quiet else [])
        config = load_config(ns.config, overrides)
        run_dir = (
            RunDir(ns.run_dir)
            if ns.run_dir
            else RunDir.fresh(config.experiment.runs_root, config.experiment.name)
        )

    from light_league.runner import Runner

    try:
        runner = Runner.build(config, run_dir, resume=bool(ns.resume), argv=["main.py", *args])
    except LeagueError:
        raise
    except Exception as exc:  # a bug or an environment problem while building: one line + saved traceback
        return _fail(run_dir.root, exc, resumable=False)
    interrupted = False
    try:
        runner.run()
    except NonFiniteError as exc:
        raise NonFiniteError(
            f"{exc}; completed generations are kept: once it is fixed, continue with "
            f"python main.py --resume {run_dir.root}"
        ) from None
    except KeyboardInterrupt:
        interrupted = True
        print(
            f"interrupted; completed generations are kept, continue with: python main.py --resume {run_dir.root}",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    except LeagueError:
        raise
    except Exception as exc:  # a crash mid-run: say how to resume, keep the traceback in the run dir
        return _fail(run_dir.root, exc, resumable=True)
    finally:
        try:
            runner.close()
        except KeyboardInterrupt:
            # a second Ctrl-C while closing: close's own clean-up (executor, lock) has run, and the
            # interruption has been said once
            if not interrupted:
                raise
    print(f"run directory: {run_dir.root}")
    return 0


def _fail(root: Path, exc: Exception, *, resumable: bool) -> int:
    from light_league.utils.atomic import atomic_write_text

    log_path: Path | None = root / "error.log" if root.is_dir() else None
    text = traceback.format_exc()
    try:
        if log_path is None:  # no run directory: keep the traceback out of the current directory
            fd, name = tempfile.mkstemp(prefix="light_league-error-", suffix=".log")
            os.close(fd)
            log_path = Path(name)
        atomic_write_text(log_path, text)  # replaces a link there, never writes through it
        where = f"traceback in {log_path}"
    except OSError as err:  # e.g. a read-only run directory: the handler must not crash
        where = f"traceback not saved ({err.strerror}); rerun with LIGHT_LEAGUE_LOG=DEBUG"
    hint = (
        f"; completed generations are kept, continue with: python main.py --resume {root}"
        if resumable
        else ""
    )
    print(f"error: run failed ({exc.__class__.__name__}: {_one_line(exc)}); {where}{hint}", file=sys.stderr)
    return EXIT_RUN_FAILED


def _one_line(exc: BaseException) -> str:
    """The exception's message on one line (Ray and torch messages span many)."""
    text = " ".join(str(exc).split())
    return text if len(text) <= 300 else text[:297] + "..."
