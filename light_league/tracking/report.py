"""Per-generation payoff files in the run directory, and the ``report`` command that reads them.

Layout written by the runner::

    RUN_DIR/payoff/gen_0003.json   PayoffSnapshot.to_json() (NaN as null)
    RUN_DIR/payoff/gen_0003.npy    the win-rate matrix alone (float64, NaN where unplayed)
    RUN_DIR/generations.jsonl      one GenerationRecord per completed generation
"""

from __future__ import annotations

import dataclasses
import io
import re
import textwrap
from pathlib import Path
from typing import Any

import numpy as np

from light_league.errors import ConfigError, CorruptFileError, LeagueError
from light_league.tracking.console import headline, metrics_line, newest_rows
from light_league.tracking.formats import fraction
from light_league.tracking.leaderboard import (
    handover_lines,
    leaderboard,
    markdown_rows,
    order_check,
    order_text,
    with_ranking,
)
from light_league.tracking.logger import PayoffSnapshot
from light_league.tracking.payoff_render import payoff_cells_csv, payoff_csv, payoff_markdown, payoff_text
from light_league.tracking.record import GENERATIONS_FILE as GENERATIONS_FILE  # its former home
from light_league.tracking.record import (
    GenerationRecord,
    Member,
    ProbeReading,
    probe_history,
    read_generations,
)
from light_league.tracking.record import check_run_records as check_run_records  # its former home
from light_league.tracking.record import migrate_record as migrate_record  # its former home
from light_league.tracking.record import read_generations_file as read_generations_file  # its former home
from light_league.utils.atomic import atomic_write_bytes, atomic_write_json, atomic_write_text, read_json

PAYOFF_DIR = "payoff"
HISTORY_ROWS = 20
_GEN_FILE = re.compile(r"^gen_(\d{4,})\.json$")


def payoff_path(run_dir: Path, generation: int) -> Path:
    return Path(run_dir) / PAYOFF_DIR / f"gen_{generation:04d}.json"


def save_payoff_snapshot(run_dir: Path, snapshot: PayoffSnapshot) -> Path:
    """Write ``payoff/gen_XXXX.json`` and ``payoff/gen_XXXX.npy`` atomically; return the JSON path."""
    path = payoff_path(run_dir, snapshot.generation)
    buffer = io.BytesIO()
    np.save(buffer, snapshot.win_rates, allow_pickle=False)
    atomic_write_bytes(path.with_suffix(".npy"), buffer.getvalue())
    atomic_write_json(path, snapshot.to_json(), indent=None)  # n² cells: json's C encoder is unindented only
    return path


def drop_payoff_snapshot(run_dir: Path, generation: int) -> None:
    """Remove ``payoff/gen_XXXX.json`` and ``.npy`` (``league.active_set.tables_every`` thins them)."""
    path = payoff_path(run_dir, generation)
    path.with_suffix(".npy").unlink(missing_ok=True)
    path.unlink(missing_ok=True)


def saved_generations(run_dir: Path) -> list[int]:
    """Generations with a payoff JSON file, ascending."""
    directory = Path(run_dir) / PAYOFF_DIR
    if not directory.is_dir():
        return []
    found = (_GEN_FILE.match(p.name) for p in directory.iterdir())
    return sorted(int(m[1]) for m in found if m)


def load_payoff_snapshot(run_dir: Path, generation: int | None = None) -> PayoffSnapshot:
    """The payoff snapshot of ``generation`` (the latest saved one when ``None``)."""
    if generation is None:
        generations = saved_generations(run_dir)
        if not generations:
            raise CorruptFileError(
                f"no payoff tables in {Path(run_dir) / PAYOFF_DIR}; is {run_dir} a run directory "
                "with at least one completed generation?"
            )
        generation = generations[-1]
    path = payoff_path(run_dir, generation)
    fix = f"saved generations: {saved_generations(run_dir)}"
    data = read_json(path, what="payoff table", fix=fix)
    if not isinstance(data, dict):
        raise CorruptFileError(
            f"payoff table {path} is corrupt (a JSON {type(data).__name__}, not an object)"
        )
    try:
        return PayoffSnapshot.from_json(data)
    except CorruptFileError as exc:
        raise CorruptFileError(f"payoff table {path} is corrupt: {exc}") from None


#: ``report``'s text fits this many columns unless ``--full`` asks for everything
REPORT_WIDTH = 100
#: rows of ``report``'s leaderboard (and at most the members of its payoff table) by default
REPORT_TOP = 10


def _over_snapshot(snapshot: PayoffSnapshot, record: GenerationRecord | None) -> GenerationRecord:
    """The record's numbers over the snapshot's members (the record may be missing), ranked from
    the payoff table where the record has no ranking."""
    over = dataclasses.replace(
        record or GenerationRecord(generation=snapshot.generation),
        generation=snapshot.generation,
        population=tuple(
            Member(id=a, role=r) for a, r in zip(snapshot.agent_ids, snapshot.roles, strict=True)
        ),
        meta_strategy=dict(zip(snapshot.agent_ids, map(float, snapshot.meta_strategy), strict=True)),
    )
    return with_ranking(over, snapshot)


def _leaderboard_text(stats: GenerationRecord, top: int | None) -> list[str]:
    board = leaderboard(stats)
    shown = board if top is None else board[:top]
    lines = [order_text(stats), ""]
    if order_check(stats):
        lines += [order_check(stats), ""]
    lines += markdown_rows(stats, shown)
    if len(shown) < len(board):
        rest = board[len(shown) :]
        lines += [
            "",
            f"{len(rest)} more members hold meta-strategy mass {fraction(sum(row.meta for row in rest))} "
            f"(`--top {len(board)}` or `--full` lists them).",
        ]
    handover = handover_lines(stats)
    if handover:
        lines += ["", *(f"- {line}" for line in handover)]
    return lines


def _newest_text(stats: GenerationRecord) -> list[str]:
    rows = newest_rows(stats)
    if not rows:
        return []
    return [
        "## Each learner's newest snapshot",
        "",
        "| snapshot | rating | meta-strategy mass | against | win rate [95%] (games) |",
        "|---|---:|---:|---|---:|",
        *(f"| {agent} | {elo} | {mass} | {against} | {rate} |" for agent, elo, mass, rate, against in rows),
        "",
    ]


def _wrap(lines: list[str], width: int) -> list[str]:
    """Prose lines folded at ``width`` columns; table rows and headings as they are."""
    out: list[str] = []
    for line in lines:
        if len(line) <= width or line.startswith(("|", "#")):
            out.append(line)
        else:
            out += textwrap.wrap(line, width, break_long_words=False, break_on_hyphens=False)
    return out


def _cell(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def _history_text(records: list[GenerationRecord], last: int) -> list[str]:
    lines = [
        "| gen | agents | meta entropy | main nash_conv | meta nash_conv | diversity | env steps | wall s |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in records[-last:]:
        cells = [
            str(r.generation),
            str(len(r.population)),
            fraction(r.meta_entropy),
            fraction(r.main_nash_conv),
            fraction(r.meta_nash_conv),
            fraction(r.diversity),
            _cell(r.env_steps, ",d"),
            _cell(r.wall_s, ".1f"),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    average = [r.average_nash_conv for r in records[-last:]]
    if any(v is not None for v in average):  # league.average_policy: a line, the table fits 100 columns
        lines += [
            "",
            "average policy nash_conv, the same generations: " + " ".join(fraction(v) for v in average),
        ]
    return lines


def _probe_text(readings: list[tuple[str, ProbeReading]], last: int) -> list[str]:
    lines = [
        "| generation | target | env steps | games | win rate | 95% | payoff | 95% | best response |",
        "|---:|---|---:|---:|---:|---|---:|---|---:|",
    ]
    for target, r in readings[-last:]:
        win = r.win_rate_ci95 or (None, None)
        pay = r.payoff_ci95 or (None, None)
        cells = [
            "-" if r.generation is None else str(r.generation),
            target,
            _cell(r.env_steps, ",d"),
            _cell(r.games, ",d"),
            fraction(r.win_rate),
            f"{fraction(win[0])}-{fraction(win[1])}" if r.win_rate is not None else "-",
            fraction(r.payoff),
            f"{fraction(pay[0])}-{fraction(pay[1])}",
            fraction(r.best_response_payoff),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def report(
    run_dir: Path,
    *,
    generation: int | None = None,
    csv_path: Path | None = None,
    full: bool = False,
    top: int | None = None,
) -> str:
    """The text of ``main.py report RUN_DIR``: run summary, each learner's newest snapshot,
    leaderboard, payoff table, probes, history; within ``REPORT_WIDTH`` columns unless ``full``.

    ``generation`` picks a generation (the latest when ``None``; the history then ends there);
    ``csv_path`` also writes that generation's win-rate table as CSV; ``top`` is the leaderboard's
    rows and the most members the payoff table shows (``REPORT_TOP`` by default); ``full`` lists
    every member and the whole payoff table, each cell with its interval and games.
    """
    if top is not None and top < 1:
        raise LeagueError(f"--top must be 1 or more, got {top}")
    snapshot, record, upto = _read(run_dir, generation)
    stats = _over_snapshot(snapshot, record)
    probes = probe_history(upto)
    lines = [f"# Run {run_dir}", ""]
    if record is not None:
        latest = {target: reading for target, reading in probes}
        lines += [headline(snapshot.generation, record), metrics_line(record, latest_probe=latest)]
        lines += [*archive_line(record), ""]
    else:
        lines += [f"generation {snapshot.generation} (no record in {GENERATIONS_FILE})", ""]
    lines += _newest_text(stats)
    rows = None if full else (top or REPORT_TOP)
    lines += [f"## Leaderboard, generation {snapshot.generation}", "", *_leaderboard_text(stats, rows), ""]
    lines += [f"## Payoff table, generation {snapshot.generation}", ""]
    if full:
        lines.append(payoff_markdown(snapshot, full=True))
    else:
        lines.append(payoff_text(snapshot, max_members=top, width=REPORT_WIDTH))
    if probes:
        lines += [
            f"## Probes (last {min(len(probes), HISTORY_ROWS)})",
            "",
            *_probe_text(probes, HISTORY_ROWS),
            "",
        ]
    if upto:
        lines += [f"## History (last {min(len(upto), HISTORY_ROWS)} generations)", ""]
        lines += [*_history_text(upto, HISTORY_ROWS), ""]
    if csv_path is not None:
        cells_path = _write_csv(snapshot, Path(csv_path))
        lines.append(f"CSV written to {csv_path} (games and 95% intervals per cell: {cells_path})")
    text = "\n".join(lines).rstrip("\n").split("\n")
    return "\n".join(text if full else _wrap(text, REPORT_WIDTH)) + "\n"


def archive_line(record: GenerationRecord) -> list[str]:
    """The archive's one line (``league.active_set``), or none while nothing is archived."""
    if not record.archived:
        return []
    now = f"{len(record.archived_now)} archived, {len(record.restored_now)} brought back this generation"
    return [
        f"archive: {record.archived} members outside the active set of {len(record.population)} ({now}); "
        'each stays loadable by id (`pool.json` marks them `"archived": true`)'
    ]


def report_json(run_dir: Path, *, generation: int | None = None) -> dict[str, Any]:
    """``main.py report RUN_DIR --json``: the same generation as :func:`report`, every member:
    ``run``, ``generation``, ``record`` (the line of ``generations.jsonl``, or null),
    ``leaderboard`` (``rank``, ``member``, ``role``, ``nash_average``, ``layer``, ``rating``,
    ``rating_ci95``, ``meta_strategy``, in the leaderboard's order), ``ranking_note`` (the cycle at
    its top, or null), ``payoff`` (the payoff snapshot as ``payoff/gen_XXXX.json`` holds it), ``probes`` and
    ``history`` (the records up to that generation, without their per-member fields)."""
    snapshot, record, upto = _read(run_dir, generation)
    stats = _over_snapshot(snapshot, record)
    board = [
        {
            "rank": row.rank,
            "member": row.agent,
            "role": row.role,
            "nash_average": row.nash_average,
            "layer": stats.ranking_layer.get(row.agent),
            "rating": row.rating,
            "rating_ci95": None if (interval := stats.rating_ci95.get(row.agent)) is None else list(interval),
            "meta_strategy": row.meta,
        }
        for row in leaderboard(stats)
    ]
    return {
        "run": str(run_dir),
        "generation": snapshot.generation,
        "record": None if record is None else record.to_json(),
        "leaderboard": board,
        "ranking_note": stats.ranking_note,
        "payoff": snapshot.to_json(),
        "probes": [{"target": target, **reading.to_json()} for target, reading in probe_history(upto)],
        "history": [r.summary_json() for r in upto],
    }


def _read(
    run_dir: Path, generation: int | None
) -> tuple[PayoffSnapshot, GenerationRecord | None, list[GenerationRecord]]:
    """The snapshot of ``generation`` (the latest when None), its record, and the records up to it."""
    if generation is not None and generation < 0:
        raise LeagueError(
            f"--generation must be 0 or more, got {generation}; saved generations: {saved_generations(run_dir)}"
        )
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise CorruptFileError(f"run directory {run_dir} does not exist; pass the directory a run wrote")
    snapshot = load_payoff_snapshot(run_dir, generation)
    records = {r.generation: r for r in read_generations(run_dir)}
    upto = [records[g] for g in sorted(records) if g <= snapshot.generation]
    return snapshot, records.get(snapshot.generation), upto


def _write_csv(snapshot: PayoffSnapshot, csv_path: Path) -> Path:
    """The win rates to ``csv_path`` and one row per cell beside it; the cells' path."""
    cells_path = csv_path.with_name(csv_path.stem + "_cells.csv")
    try:
        atomic_write_text(csv_path, payoff_csv(snapshot))
        atomic_write_text(cells_path, payoff_cells_csv(snapshot))
    except OSError as exc:
        raise ConfigError(
            f"--csv {csv_path}: cannot write it ({exc.strerror}); pass a path in a writable directory"
        ) from None
    return cells_path
