"""What a person watching the terminal sees: progress bars and a one-screen summary per generation.

Everything goes to **stderr** (stdout stays free for ``report`` and for piping). Modes:

- ``rich``: live progress bars (training steps, evaluation games; only on a terminal) and a
  summary panel;
- ``plain``: no bars, the same summary as plain text (for log files);
- ``quiet``: one line per generation (for CI logs).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from types import TracebackType
from typing import Any, TextIO

from rich.console import Console as RichConsole
from rich.console import Group, JustifyMethod
from rich.panel import Panel
from rich.progress import BarColumn, Progress, ProgressColumn, Task, TextColumn, TimeElapsedColumn
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from light_league.tracking.config import LoggingConfig
from light_league.tracking.formats import fraction, member_rating, rating_text, win_rate_text
from light_league.tracking.leaderboard import BOARD_HEADER, board_line, leaderboard, more_line
from light_league.tracking.record import GenerationRecord, ProbeReading

#: the latest probe reading of each target, shown beside a record (``{target: reading}``)
Probes = Mapping[str, ProbeReading]

_COLUMNS: tuple[tuple[str, JustifyMethod], ...] = (
    ("#", "right"),
    ("agent", "left"),
    ("role", "left"),
    ("layer", "right"),
    ("vs Nash", "right"),
    ("rating ±95%", "right"),
    ("meta", "right"),
)

_NEWEST_COLUMNS: tuple[tuple[str, JustifyMethod], ...] = (
    ("newest snapshot", "left"),
    ("rating ±95%", "right"),
    ("meta", "right"),
    ("vs reference: win rate [95%] (games)", "left"),
)


def error_line(line: str, file: TextIO | None = None) -> None:
    """A failure's one line on stderr (or ``file``), flushed at once (the process may end next),
    its control characters shown, not sent to the terminal."""
    from light_league.utils.text import printable

    print(printable(line), file=file if file is not None else sys.stderr, flush=True)


def headline(generation: int, record: GenerationRecord) -> str:
    """``generation 3 · 5 agents · 1,200,000 env steps · 12,345 steps/s · 42.1 s`` (``230 agents
    (+1,800 archived)`` once a league archives)."""
    archived = f" (+{record.archived:,} archived)" if record.archived else ""
    parts = [f"generation {generation}", f"{len(record.population)} agents{archived}"]
    formats = (
        (record.env_steps, "{:,} env steps"),
        (record.env_steps_per_s, "{:,.0f} steps/s"),
        (record.wall_s, "{:.1f} s"),
    )
    parts += [fmt.format(value) for value, fmt in formats if value is not None]
    return " · ".join(parts)


def metrics_line(record: GenerationRecord, *, latest_probe: Probes | None = None) -> str:
    """``meta entropy 1.234 · main nash_conv 0.612 · meta nash_conv 0.730 · probe vs main win rate
    0.553 [0.510, 0.596] at gen 7 · diversity 0.456`` (absent or null values left out); the
    probes are ``latest_probe`` (the latest reading of each target), else the record's own."""
    values = (
        (record.meta_entropy, "meta entropy"),
        (record.main_nash_conv, "main nash_conv"),
        (record.meta_nash_conv, "meta nash_conv"),
        (record.average_nash_conv, "average nash_conv"),
        (record.least_exploitable_nash_conv, "least exploitable nash_conv"),
    )
    parts = [f"{name} {fraction(value)}" for value, name in values if value is not None]
    latest = latest_probe or record.probe or {}
    parts += [probe_text(target, reading) for target, reading in latest.items()]
    if record.diversity is not None:
        parts.append(f"diversity {fraction(record.diversity)}")
    return " · ".join(parts)


def probe_text(target: str, reading: ProbeReading) -> str:
    """``probe vs main win rate 0.553 [0.510, 0.596] at gen 7`` (the reading's 95% interval), or its
    payoff where the game has no win rate (with the exact best response's payoff beside it where
    known)."""
    value: float | None = reading.win_rate
    name, interval = "win rate", reading.win_rate_ci95
    if value is None:
        name, value, interval = "payoff", reading.payoff, reading.payoff_ci95
    low, high = interval or (None, None)
    text = f"probe vs {target} {name} {fraction(value)} [{fraction(low)}, {fraction(high)}]"
    if reading.generation is not None:
        text += f" at gen {reading.generation}"
    if reading.best_response_payoff is not None:
        text += f" best response {fraction(reading.best_response_payoff)}"
    return text


def timings_line(record: GenerationRecord) -> str:
    timings = record.timings
    return "timings: " + " · ".join(f"{phase} {s:.1f} s" for phase, s in timings.items()) if timings else ""


def newest_rows(record: GenerationRecord) -> list[tuple[str, str, str, str, str]]:
    """``(snapshot, rating ± interval, meta, win rate [interval] (games), against)`` for each
    learner's newest snapshot (``meta``: its meta-strategy mass)."""
    return [
        (
            e.id,
            rating_text(e.rating, e.rating_ci95),
            fraction(e.meta_strategy),
            win_rate_text(e.win_rate, e.win_rate_ci95, e.games),
            e.baseline or "-",
        )
        for e in record.newest
    ]


def newest_line(record: GenerationRecord) -> str:
    """``main_agent_0-v4 rating 1456 ± 35 meta 0.000 vs scripted_l5 0.625 [0.54, 0.70] (128) · ...``
    (one part per learner)."""
    parts = []
    for agent, elo, meta, win_rate, against in newest_rows(record):
        versus = f" vs {against} {win_rate}" if against != "-" else ""
        parts.append(f"{agent} rating {elo} meta {meta}{versus}")
    return " · ".join(parts)


def quiet_line(generation: int, record: GenerationRecord, *, latest_probe: Probes | None = None) -> str:
    """The one line per generation of quiet mode: headline, each learner's newest snapshot, metrics."""
    parts = [headline(generation, record)]
    newest = newest_line(record)
    if newest:
        parts.append(newest)
    else:
        board = leaderboard(record)
        if board:
            top = board[0]
            parts.append(
                f"top {top.agent} rating {member_rating(record, top.agent)} meta {fraction(top.meta)}"
            )
    metrics = metrics_line(record, latest_probe=latest_probe)
    if metrics:
        parts.append(metrics)
    return " | ".join(parts)


_NEWEST_HEADER = (
    f"{'newest snapshot':<24} {'rating ±95%':>11} {'meta':>6}  vs reference: win rate [95%] (games)"
)


def summary_lines(
    generation: int, record: GenerationRecord, *, top_k: int = 10, latest_probe: Probes | None = None
) -> list[str]:
    """The plain-text summary: headline, each learner's newest snapshot, leaderboard (top
    ``top_k``, the rest counted with their meta-strategy mass), metrics, timings."""
    lines = [headline(generation, record)]
    rows = newest_rows(record)
    if rows:
        lines.append(_NEWEST_HEADER)
        lines += [
            f"{a:<24} {e:>11} {n:>6}  {b} {w}" if b != "-" else f"{a:<24} {e:>11} {n:>6}"
            for a, e, n, w, b in rows
        ]
    lines.append(BOARD_HEADER)
    board = leaderboard(record)
    lines += [board_line(record, row) for row in board[:top_k]]
    if len(board) > top_k:
        lines.append(f"     {more_line(board, top_k)}")
    if record.ranking_note:  # the top of the order is a cycle: named
        lines.append(record.ranking_note)
    metrics = metrics_line(record, latest_probe=latest_probe)
    lines += [line for line in (metrics, timings_line(record)) if line]
    return lines


def start_line(run_dir: str, backend: str, stop_rules: list[str], *, resumed_at: int | None = None) -> str:
    """The run's first line: ``run directory runs/x · backend ray (2 workers) · stops at
    stop.max_wall_s=360 or stop.max_generations=40``."""
    parts = [f"run directory {run_dir}", f"backend {backend}", "stops at " + " or ".join(stop_rules)]
    if resumed_at is not None:
        parts.append(f"resuming at generation {resumed_at}")
    return " · ".join(parts)


class _Bar(BarColumn):
    """A bar; the run's bar under a wall-time budget fills with the time spent."""

    def render(self, task: Task) -> ProgressBar:
        budget = task.fields.get("budget_s")
        if budget is None:
            return super().render(task)
        left = max(0.0, task.fields["deadline"] - time.monotonic())
        return ProgressBar(
            total=budget,
            completed=min(budget - left, budget),
            width=None if self.bar_width is None else max(1, self.bar_width),
            style=self.style,
            complete_style=self.complete_style,
            finished_style=self.finished_style,
            pulse_style=self.pulse_style,
            animation_time=task.get_time(),
        )


class _Count(ProgressColumn):
    """``1,024/4,096``; for the run's bar under a wall-time budget ``2:48 of 6:00, 3:12 left``."""

    def render(self, task: Task) -> Text:
        budget = task.fields.get("budget_s")
        if budget is None:
            return Text(f"{int(task.completed):,}/{int(task.total or 0):,}")
        left = max(0.0, task.fields["deadline"] - time.monotonic())
        return Text(f"{_clock(budget - left)} of {_clock(budget)}, {_clock(left)} left")


def _clock(seconds: float) -> str:
    whole = max(0, round(seconds))
    return (
        f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"
        if whole >= 3600
        else f"{whole // 60}:{whole % 60:02d}"
    )


class _Bars:
    """The bars of one live display: added on enter, removed on exit; the display itself is
    started and stopped here unless a longer-lived one (the run's) holds it."""

    def __init__(self, progress: Progress | None, owned: bool) -> None:
        self._progress = progress
        self._owned = owned
        self._tasks: list[Any] = []

    def _add(self, description: str, total: float, **fields: Any) -> Any:
        if self._progress is None:
            return None
        task = self._progress.add_task(description, total=total, **fields)
        self._tasks.append(task)
        return task

    def __enter__(self) -> Any:
        if self._progress is not None and self._owned:
            self._progress.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._progress is None:
            return
        if self._owned:
            self._progress.stop()
        else:
            for task in self._tasks:
                self._progress.remove_task(task)


class GenerationProgress(_Bars):
    """Counts a generation's training steps and evaluation games; draws bars in rich mode."""

    def __init__(
        self,
        progress: Progress | None,
        generation: int,
        total_steps: int,
        total_eval_games: int,
        *,
        owned: bool = True,
    ) -> None:
        super().__init__(progress, owned)
        self.generation = generation
        self.total_steps = total_steps
        self.total_eval_games = total_eval_games
        self.train_done = 0
        self.eval_done = 0
        self._train_task = self._add(f"gen {generation} train", total_steps)
        self._eval_task = self._add(f"gen {generation} eval", total_eval_games)

    def __enter__(self) -> GenerationProgress:
        return super().__enter__()

    def advance_train(self, n: int) -> None:
        """``n`` more environment steps of training done."""
        self.train_done += n
        if self._progress is not None and self._train_task is not None:
            self._progress.advance(self._train_task, n)

    def set_eval_total(self, total: int) -> None:
        """The number of evaluation games, once the generation's new members are known."""
        self.total_eval_games = total
        if self._progress is not None and self._eval_task is not None:
            self._progress.update(self._eval_task, total=total)

    def advance_eval(self, n: int) -> None:
        """``n`` more evaluation games done."""
        self.eval_done += n
        if self._progress is not None and self._eval_task is not None:
            self._progress.advance(self._eval_task, n)


class ProbeProgress(_Bars):
    """Reports a probe's training steps; draws a bar in rich mode (``Console.probe_progress``)."""

    def __init__(
        self, progress: Progress | None, target: str, total_steps: int, *, owned: bool = True
    ) -> None:
        super().__init__(progress, owned)
        self._task = self._add(f"probe vs {target}", total_steps)

    def __enter__(self) -> ProbeProgress:
        return super().__enter__()

    def __call__(self, done: int, total: int) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, completed=done, total=total)


class RunProgress:
    """The run's own bar (``Console.run_progress``): under ``stop.max_wall_s`` it fills with the
    time spent and says how long is left, else it counts generations."""

    def __init__(self, progress: Progress | None, *, max_wall_s: float | None, max_generations: int) -> None:
        self._progress = progress
        self._max_wall_s = max_wall_s
        self._max_generations = max_generations
        self._task = None
        if progress is not None:
            fields: dict[str, Any] = {}
            if max_wall_s is not None:
                fields = {"budget_s": max_wall_s, "deadline": time.monotonic() + max_wall_s}
            self._task = progress.add_task("run", total=max_generations, **fields)

    def update(self, *, wall_s: float, generation: int) -> None:
        """``generation`` generations completed, ``wall_s`` seconds since the run started."""
        if self._progress is None or self._task is None:
            return
        description = f"run, generation {generation} of at most {self._max_generations}"
        if self._max_wall_s is None:
            self._progress.update(self._task, completed=generation, description=description)
        else:
            deadline = time.monotonic() + self._max_wall_s - wall_s
            self._progress.update(
                self._task, completed=generation, description=description, deadline=deadline
            )


class Console:
    """The run's terminal output (always stderr unless ``file`` is given)."""

    def __init__(
        self, config: LoggingConfig, *, file: TextIO | None = None, terminal: bool | None = None
    ) -> None:
        """``terminal`` forces (True) or forbids (False) live bars; ``None`` detects a TTY."""
        self.mode = config.console
        self._top_k = config.summary_top_k
        self._file = file if file is not None else sys.stderr
        self._rich = RichConsole(file=self._file, highlight=False, force_terminal=terminal)
        self._live: Progress | None = None  #: the run's live display, while ``run_progress`` holds it

    def _bars(self) -> tuple[Progress | None, bool]:
        """The live display new bars go to, and whether they start and stop it themselves."""
        if self._live is not None:
            return self._live, False
        if self.mode == "rich" and self._rich.is_terminal:
            return (
                Progress(
                    TextColumn("{task.description}"),
                    _Bar(),
                    _Count(),
                    TimeElapsedColumn(),
                    console=self._rich,
                    transient=True,
                ),
                True,
            )
        return None, True

    @contextmanager
    def run_progress(
        self, *, max_wall_s: float | None, wall_s: float, max_generations: int, generation: int
    ) -> Iterator[RunProgress]:
        """The run's bar for the duration of the ``with`` block; the generation and probe bars
        join its display."""
        progress, _ = self._bars()
        bar = RunProgress(progress, max_wall_s=max_wall_s, max_generations=max_generations)
        bar.update(wall_s=wall_s, generation=generation)
        if progress is None:
            yield bar
            return
        self._live = progress
        progress.start()
        try:
            yield bar
        finally:
            progress.stop()
            self._live = None

    def generation_progress(
        self, generation: int, total_steps: int, total_eval_games: int
    ) -> GenerationProgress:
        """Use as ``with console.generation_progress(g, steps, games) as p: p.advance_train(n)``."""
        progress, owned = self._bars()
        return GenerationProgress(progress, generation, total_steps, total_eval_games, owned=owned)

    def probe_progress(self, target: str, total_steps: int) -> ProbeProgress:
        """Use as ``with console.probe_progress("main", steps) as p: p(done, total)``: a bar in rich
        mode on a terminal, a start line otherwise."""
        progress, owned = self._bars()
        if progress is None and self.mode != "quiet":
            self._plain(f"probe vs {target}: training a fresh learner for {total_steps:,} env steps")
        return ProbeProgress(progress, target, total_steps, owned=owned)

    def summary(
        self, generation: int, record: GenerationRecord, *, latest_probe: Probes | None = None
    ) -> None:
        """Print the generation's summary (missing fields are left out); ``latest_probe``: the
        latest reading of each probe target, shown instead of the record's own."""
        if self.mode == "quiet":
            self._plain(quiet_line(generation, record, latest_probe=latest_probe))
        elif self.mode == "plain" or not self._rich.is_terminal:  # a log file gets plain lines
            lines = summary_lines(generation, record, top_k=self._top_k, latest_probe=latest_probe)
            self._plain("\n".join(lines))
        else:
            self._rich.print(self._panel(generation, record, latest_probe))

    def note(self, text: str) -> None:
        """One line of information (resumed from ..., run directory ...), in every mode."""
        self._plain(text)

    def final(self, lines: list[str]) -> None:
        """The run's closing summary (:func:`~light_league.tracking.leaderboard.final_lines`), in every mode."""
        self._plain("\n".join(lines))

    def _plain(self, text: str) -> None:
        if self._live is not None:  # above the live bars, which stay below
            self._rich.print(Text(text))
        else:
            print(text, file=self._file, flush=True)

    def _panel(self, generation: int, record: GenerationRecord, latest_probe: Probes | None) -> Panel:
        newest = Table(box=None, pad_edge=False)
        for name, justify in _NEWEST_COLUMNS:
            newest.add_column(name, justify=justify)
        for agent, elo, mass, win_rate, against in newest_rows(record):
            newest.add_row(agent, elo, mass, f"{against} {win_rate}" if against != "-" else "-")
        table = Table(box=None, pad_edge=False)
        for name, justify in _COLUMNS:
            table.add_column(name, justify=justify)
        board = leaderboard(record)
        for row in board[: self._top_k]:
            table.add_row(
                str(row.rank),
                row.agent,
                row.role,
                "-" if row.layer is None else str(row.layer),
                fraction(row.nash_average),
                member_rating(record, row.agent),
                fraction(row.meta),
            )
        if len(board) > self._top_k:
            table.add_row("", more_line(board, self._top_k), "", "", "", "", "")
        metrics = metrics_line(record, latest_probe=latest_probe)
        footer = [line for line in (record.ranking_note, metrics, timings_line(record)) if line]
        parts: list[Table | str] = [newest, ""] if newest.row_count else []
        return Panel(Group(*parts, table, *footer), title=headline(generation, record), title_align="left")
