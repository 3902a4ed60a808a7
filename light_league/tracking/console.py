"""What a person watching the terminal sees: progress bars and a one-screen summary per generation.

Everything goes to **stderr** (stdout stays free for ``report`` and for piping). Modes:

- ``rich``: live progress bars (training steps, evaluation games; only on a terminal) and a
  summary panel;
- ``plain``: no bars, the same summary as plain text (for log files);
- ``quiet``: one line per generation (for CI logs).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from types import TracebackType
from typing import Any, TextIO

from rich.console import Console as RichConsole
from rich.console import Group, JustifyMethod
from rich.panel import Panel
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from light_league.tracking.config import LoggingConfig

LeaderRow = tuple[int, str, str, float | None, float]
_COLUMNS: tuple[tuple[str, JustifyMethod], ...] = (
    ("#", "right"),
    ("agent", "left"),
    ("role", "left"),
    ("rating", "right"),
    ("meta", "right"),
)

_NEWEST_COLUMNS: tuple[tuple[str, JustifyMethod], ...] = (
    ("newest snapshot", "left"),
    ("rating", "right"),
    ("meta", "right"),
    ("win rate", "right"),
    ("vs", "left"),
)


def leaderboard(stats: Mapping[str, Any]) -> list[LeaderRow]:
    """``(rank, agent, role, rating, meta)`` for the population, best rating first, then most
    meta-strategy mass.

    ``rating`` is the fitted (Bradley-Terry) Elo; records written before it existed have ``elo``.
    """
    elo: Mapping[str, float] = stats.get("rating", stats.get("elo", {}))
    meta: Mapping[str, float] = stats.get("meta_strategy", {})
    members = [(m["id"], m["role"]) for m in stats.get("population", [])]
    members.sort(key=lambda m: (-elo.get(m[0], float("-inf")), -meta.get(m[0], 0.0), m[0]))
    return [
        (rank, agent, role, elo.get(agent), meta.get(agent, 0.0))
        for rank, (agent, role) in enumerate(members, 1)
    ]


def _fmt(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


# One format per kind of number, everywhere on the console and in ``report``: ratings as whole
# points, probabilities, win rates, entropies, NashConv and diversity with 3 decimals, seconds
# with 1, counts with thousands separators.
def rating(value: float | None) -> str:
    """A rating (Elo points), whole points; ``-`` when unknown."""
    return _fmt(value, 0)


def fraction(value: float | None) -> str:
    """A probability, win rate, entropy, NashConv or diversity: 3 decimals; ``-`` when unknown."""
    return _fmt(value, 3)


def headline(generation: int, stats: Mapping[str, Any]) -> str:
    """``generation 3 · 5 agents · 1,200,000 env steps · 12,345 steps/s · 42.1 s``."""
    parts = [f"generation {generation}", f"{len(stats.get('population', []))} agents"]
    formats = (
        ("env_steps", "{:,} env steps"),
        ("env_steps_per_s", "{:,.0f} steps/s"),
        ("wall_s", "{:.1f} s"),
    )
    parts += [fmt.format(stats[key]) for key, fmt in formats if stats.get(key) is not None]
    return " · ".join(parts)


#: the exploitability fields of a generation record, as the console names them (``nash_conv``:
#: records written before ``main_nash_conv`` / ``meta_nash_conv`` existed)
_EXPLOITABILITY = (
    ("main_nash_conv", "main nash_conv"),
    ("meta_nash_conv", "meta nash_conv"),
    ("nash_conv", "nash_conv"),
    ("least_exploitable_nash_conv", "least exploitable nash_conv"),
)


def metrics_line(stats: Mapping[str, Any]) -> str:
    """``meta entropy 1.234 · main nash_conv 0.612 · meta nash_conv 0.730 · probe vs main win rate
    0.553 [0.510, 0.596] at gen 7 · diversity 0.456`` (absent or null values left out)."""
    names = (("meta_entropy", "meta entropy"), *_EXPLOITABILITY)
    parts = [f"{name} {fraction(stats[key])}" for key, name in names if stats.get(key) is not None]
    latest = stats.get("latest_probe") or stats.get("probe") or {}
    parts += [probe_text(target, reading) for target, reading in latest.items() if isinstance(reading, dict)]
    if stats.get("diversity") is not None:
        parts.append(f"diversity {fraction(stats['diversity'])}")
    return " · ".join(parts)


def probe_text(target: str, reading: Mapping[str, Any]) -> str:
    """``probe vs main win rate 0.553 [0.510, 0.596] at gen 7`` (the reading's 95% interval), or its
    payoff where the game has no win rate (with the exact best response's payoff beside it where
    known)."""
    key = "win_rate" if reading.get("win_rate") is not None else "payoff"
    low, high = reading.get(f"{key}_ci95") or (None, None)
    text = f"probe vs {target} {key.replace('_', ' ')} {fraction(reading.get(key))} [{fraction(low)}, {fraction(high)}]"
    if reading.get("generation") is not None:
        text += f" at gen {reading['generation']}"
    if reading.get("best_response_payoff") is not None:
        text += f" best response {fraction(reading['best_response_payoff'])}"
    return text


def timings_line(stats: Mapping[str, Any]) -> str:
    timings: Mapping[str, float] = stats.get("timings", {})
    return "timings: " + " · ".join(f"{phase} {s:.1f} s" for phase, s in timings.items()) if timings else ""


def newest_rows(stats: Mapping[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """``(snapshot, elo, meta, win rate, against)`` for each learner's newest snapshot."""
    return [
        (
            e["id"],
            rating(e.get("rating", e.get("elo"))),
            fraction(e.get("meta_strategy")),
            fraction(e.get("win_rate")),
            e.get("baseline") or "-",
        )
        for e in stats.get("newest", [])
    ]


def newest_line(stats: Mapping[str, Any]) -> str:
    """``main_agent_0-v4 rating 1456 meta 0.000 vs scripted_l5 0.625 · ...`` (one part per learner)."""
    parts = []
    for agent, elo, meta, win_rate, against in newest_rows(stats):
        versus = f" vs {against} {win_rate}" if against != "-" else ""
        parts.append(f"{agent} rating {elo} meta {meta}{versus}")
    return " · ".join(parts)


def quiet_line(generation: int, stats: Mapping[str, Any]) -> str:
    """The one line per generation of quiet mode: headline, each learner's newest snapshot, metrics."""
    parts = [headline(generation, stats)]
    newest = newest_line(stats)
    if newest:
        parts.append(newest)
    else:
        board = leaderboard(stats)
        if board:
            _, agent, _, elo, meta = board[0]
            parts.append(f"top {agent} rating {rating(elo)} meta {fraction(meta)}")
    metrics = metrics_line(stats)
    if metrics:
        parts.append(metrics)
    return " | ".join(parts)


_NEWEST_HEADER = f"{'newest snapshot':<27} {'rating':>6} {'meta':>6} {'win rate':>8}  vs"


def summary_lines(generation: int, stats: Mapping[str, Any], *, top_k: int = 10) -> list[str]:
    """The plain-text summary: headline, each learner's newest snapshot, leaderboard (top
    ``top_k``), metrics, timings."""
    lines = [headline(generation, stats)]
    rows = newest_rows(stats)
    if rows:
        lines.append(_NEWEST_HEADER)
        lines += [f"{a:<27} {e:>6} {n:>6} {w:>8}  {b}" for a, e, n, w, b in rows]
    lines.append(f"{'#':>3}  {'agent':<24} {'role':<17} {'rating':>7} {'meta':>6}")
    board = leaderboard(stats)
    for rank, agent, role, elo, meta in board[:top_k]:
        lines.append(f"{rank:>3}  {agent:<24} {role:<17} {rating(elo):>6} {fraction(meta):>6}")
    if len(board) > top_k:
        lines.append(f"     ... {len(board) - top_k} more")
    lines += [line for line in (metrics_line(stats), timings_line(stats)) if line]
    return lines


class GenerationProgress:
    """Counts a generation's training steps and evaluation games; draws bars in rich mode."""

    def __init__(
        self, progress: Progress | None, generation: int, total_steps: int, total_eval_games: int
    ) -> None:
        self.generation = generation
        self.total_steps = total_steps
        self.total_eval_games = total_eval_games
        self.train_done = 0
        self.eval_done = 0
        self._progress = progress
        self._train_task = (
            progress.add_task(f"gen {generation} train", total=total_steps) if progress else None
        )
        self._eval_task = (
            progress.add_task(f"gen {generation} eval", total=total_eval_games) if progress else None
        )

    def __enter__(self) -> GenerationProgress:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._progress is not None:
            self._progress.stop()

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


class ProbeProgress:
    """Reports a probe's training steps; draws a bar in rich mode (``Console.probe_progress``)."""

    def __init__(self, progress: Progress | None, target: str, total_steps: int) -> None:
        self._progress = progress
        self._task = progress.add_task(f"probe vs {target}", total=total_steps) if progress else None

    def __enter__(self) -> ProbeProgress:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._progress is not None:
            self._progress.stop()

    def __call__(self, done: int, total: int) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, completed=done, total=total)


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

    def generation_progress(
        self, generation: int, total_steps: int, total_eval_games: int
    ) -> GenerationProgress:
        """Use as ``with console.generation_progress(g, steps, games) as p: p.advance_train(n)``."""
        progress = None
        if self.mode == "rich" and self._rich.is_terminal:
            progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=self._rich,
                transient=True,
            )
        return GenerationProgress(progress, generation, total_steps, total_eval_games)

    def probe_progress(self, target: str, total_steps: int) -> ProbeProgress:
        """Use as ``with console.probe_progress("main", steps) as p: p(done, total)``: a bar in rich
        mode on a terminal, a start line otherwise."""
        progress = None
        if self.mode == "rich" and self._rich.is_terminal:
            progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=self._rich,
                transient=True,
            )
        elif self.mode != "quiet":
            self._plain(f"probe vs {target}: training a fresh learner for {total_steps:,} env steps")
        return ProbeProgress(progress, target, total_steps)

    def summary(self, generation: int, stats: Mapping[str, Any]) -> None:
        """Print the generation's summary (a ``GenerationRecord``; missing fields are left out)."""
        if self.mode == "quiet":
            self._plain(quiet_line(generation, stats))
        elif self.mode == "plain" or not self._rich.is_terminal:  # a log file gets plain lines
            self._plain("\n".join(summary_lines(generation, stats, top_k=self._top_k)))
        else:
            self._rich.print(self._panel(generation, stats))

    def note(self, text: str) -> None:
        """One line of information (resumed from ..., run directory ...), in every mode."""
        self._plain(text)

    def _plain(self, text: str) -> None:
        print(text, file=self._file, flush=True)

    def _panel(self, generation: int, stats: Mapping[str, Any]) -> Panel:
        newest = Table(box=None, pad_edge=False)
        for name, justify in _NEWEST_COLUMNS:
            newest.add_column(name, justify=justify)
        for row in newest_rows(stats):
            newest.add_row(*row)
        table = Table(box=None, pad_edge=False)
        for name, justify in _COLUMNS:
            table.add_column(name, justify=justify)
        board = leaderboard(stats)
        for rank, agent, role, elo, meta in board[: self._top_k]:
            table.add_row(str(rank), agent, role, rating(elo), fraction(meta))
        if len(board) > self._top_k:
            table.add_row("", f"... {len(board) - self._top_k} more", "", "", "")
        footer = [line for line in (metrics_line(stats), timings_line(stats)) if line]
        parts: list[Table | str] = [newest, ""] if newest.row_count else []
        return Panel(Group(*parts, table, *footer), title=headline(generation, stats), title_align="left")
