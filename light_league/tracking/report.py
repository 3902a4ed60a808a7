"""Per-generation payoff files in the run directory, and the ``report`` command that reads them.

Layout written by the runner::

    RUN_DIR/payoff/gen_0003.json   PayoffSnapshot.to_json() (NaN as null)
    RUN_DIR/payoff/gen_0003.npy    the win-rate matrix alone (float64, NaN where unplayed)
    RUN_DIR/generations.jsonl      one GenerationRecord per completed generation
"""

from __future__ import annotations

import io
import json
import re
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from light_league.errors import ConfigError, CorruptFileError, LeagueError
from light_league.tracking.console import (
    anchor_text,
    fraction,
    headline,
    leaderboard,
    member_rating,
    metrics_line,
    newest_rows,
)
from light_league.tracking.logger import PayoffSnapshot
from light_league.tracking.payoff_render import payoff_cells_csv, payoff_csv, payoff_markdown, payoff_text
from light_league.utils.atomic import atomic_write_bytes, atomic_write_json, atomic_write_text, read_json

PAYOFF_DIR = "payoff"
GENERATIONS_FILE = "generations.jsonl"
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


def read_generations(run_dir: Path) -> list[dict[str, Any]]:
    """The records of ``generations.jsonl``; a torn last line (run killed mid-write) is ignored."""
    return read_generations_file(Path(run_dir) / GENERATIONS_FILE)


def read_generations_file(path: Path) -> list[dict[str, Any]]:
    """The records of a ``generations.jsonl`` file wherever it lies (a run's, or a copy of it);
    none when it does not exist; a torn last line is ignored."""
    path = Path(path)
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")[:-1]  # the part after the last newline is not committed
    records = []
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            raise CorruptFileError(
                f"{path} line {lineno} is not valid JSON; remove or fix that line"
            ) from None
        generation = record.get("generation") if isinstance(record, dict) else None
        if not isinstance(generation, int) or isinstance(generation, bool):
            raise CorruptFileError(
                f"{path} line {lineno} has no integer 'generation' (got {generation!r}); remove or fix that line"
            )
        check_generation_record(record, path, lineno)
        records.append(migrate_record(record))
    return records


def check_run_records(folder: Path) -> None:
    """Check the ``generations.jsonl`` of a run directory, or of every run in a folder of runs."""
    folder = Path(folder)
    runs = (
        [folder]
        if (folder / GENERATIONS_FILE).exists()
        else sorted(p for p in folder.iterdir() if p.is_dir())
    )
    for run in runs:
        read_generations(run)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _optional_number(value: Any) -> bool:
    return value is None or _number(value)


def _numbers_by_id(value: Any) -> bool:
    return isinstance(value, dict) and all(_number(v) for v in value.values())


def _optional_text(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _member(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("id"), str) and isinstance(value.get("role"), str)


def _newest(value: Any) -> bool:
    if not (isinstance(value, dict) and isinstance(value.get("id"), str)):
        return False
    numbers = ("rating", "elo", "meta_strategy", "nash", "win_rate")
    intervals = ("rating_ci95", "win_rate_ci95")
    return (
        all(_optional_number(value.get(k)) for k in numbers)
        and all(_interval(value.get(k)) for k in intervals)
        and _optional_int(value.get("games"))
        and _optional_text(value.get("baseline"))
    )


def _optional_int(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool))


def _interval(value: Any) -> bool:
    return value is None or (
        isinstance(value, list) and len(value) == 2 and all(_optional_number(v) for v in value)
    )


def _probe_readings(value: Any) -> bool:
    """``{target: reading}`` with each reading's numbers, intervals and counts of their types."""
    if not isinstance(value, dict):
        return False
    for reading in value.values():
        if not isinstance(reading, dict):
            return False
        numbers = ("win_rate", "payoff", "best_response_payoff")
        if not all(_optional_number(reading.get(k)) for k in numbers):
            return False
        if not all(_interval(reading.get(k)) for k in ("win_rate_ci95", "payoff_ci95")):
            return False
        if not all(_optional_int(reading.get(k)) for k in ("generation", "env_steps", "games")):
            return False
    return True


#: what each field of a generation record that ``report``, ``board`` and the console read must be
_RECORD_FIELDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "population": (
        lambda v: isinstance(v, list) and all(_member(m) for m in v),
        "a list of {id, role} objects",
    ),
    "nash": (_numbers_by_id, "an object of numbers by member id"),
    "meta_strategy": (_numbers_by_id, "an object of numbers by member id"),
    "rating": (_numbers_by_id, "an object of numbers by member id"),
    "rating_ci95": (
        lambda v: isinstance(v, dict) and all(v_ is not None and _interval(v_) for v_ in v.values()),
        "an object of [low, high] intervals by member id",
    ),
    "rating_anchor": (_optional_text, "a member id"),
    "elo": (_numbers_by_id, "an object of numbers by member id"),
    "elo_sequential": (_numbers_by_id, "an object of numbers by member id"),
    "timings": (_numbers_by_id, "an object of seconds by phase"),
    "env_steps": (_optional_int, "an integer"),
    "probe": (_probe_readings, "an object of probe readings by target"),
    "latest_probe": (_probe_readings, "an object of probe readings by target"),
    "newest": (
        lambda v: isinstance(v, list) and all(_newest(e) for e in v),
        "a list of {id, rating, meta_strategy, win_rate, baseline} objects (and their intervals)",
    ),
    **{
        key: (_optional_number, "a number")
        for key in (
            "wall_s",
            "env_steps_per_s",
            "nash_entropy",
            "meta_entropy",
            "nash_conv",
            "main_nash_conv",
            "meta_nash_conv",
            "average_nash_conv",
            "least_exploitable_nash_conv",
            "diversity",
        )
    },
}


def check_generation_record(record: dict[str, Any], path: Path, lineno: int) -> None:
    """Every field the readers use has its type: else one line naming the file, line and field."""
    for key, (valid, expected) in _RECORD_FIELDS.items():
        if key in record and not valid(record[key]):
            shown = json.dumps(record[key])
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            raise CorruptFileError(
                f"{path} line {lineno}: field {key!r} is {shown}, not {expected}; remove or fix that line"
            )


#: the meta-strategy's former names in a record: ``nash`` (the Nash mixture, the meta-strategy
#: under the default meta-solver) and ``nash_entropy``, and ``nash`` in each ``newest`` entry
FORMER_NAMES = {"nash": "meta_strategy", "nash_entropy": "meta_entropy"}


def migrate_record(record: dict[str, Any]) -> dict[str, Any]:
    """A ``generations.jsonl`` record with the meta-strategy under its one name, whichever names
    it was written with: a record written before it had one keeps ``nash`` / ``nash_entropy``
    (and, when its meta-solver was not ``nash``, the solver's mixture as ``meta_strategy`` beside
    them: that one is kept). The former names are dropped; every other field is left as it is."""
    if not any(key in record for key in FORMER_NAMES) and not _former_newest(record):
        return record
    out: dict[str, Any] = {}
    for key, value in record.items():
        name = FORMER_NAMES.get(key, key)
        if key in FORMER_NAMES and name in record:
            continue  # the record has the new name too: that one wins
        out[name] = value
    if _former_newest(record):
        out["newest"] = [
            {("meta_strategy" if k == "nash" else k): v for k, v in entry.items()}
            for entry in record["newest"]
        ]
    out.setdefault("meta_solver", "nash")
    return out


def _former_newest(record: dict[str, Any]) -> bool:
    newest = record.get("newest")
    return isinstance(newest, list) and any(isinstance(e, dict) and "nash" in e for e in newest)


#: ``report``'s text fits this many columns unless ``--full`` asks for everything
REPORT_WIDTH = 100
#: rows of ``report``'s leaderboard (and at most the members of its payoff table) by default
REPORT_TOP = 10


def _stats(snapshot: PayoffSnapshot, record: dict[str, Any] | None) -> dict[str, Any]:
    """The record's numbers over the snapshot's members (the record may be missing)."""
    record = record or {}
    return {
        **record,
        "generation": snapshot.generation,
        "population": [{"id": a, "role": r} for a, r in zip(snapshot.agent_ids, snapshot.roles, strict=True)],
        "meta_strategy": dict(zip(snapshot.agent_ids, map(float, snapshot.meta_strategy), strict=True)),
        "rating": record.get("rating", record.get("elo", {})),
    }


def _leaderboard_text(stats: dict[str, Any], top: int | None) -> list[str]:
    board = leaderboard(stats)
    shown = board if top is None else board[:top]
    anchor = anchor_text(stats)
    lines = [
        "Rating: Elo fitted to every evaluation game"
        + (f", {anchor}" if anchor else "")
        + ", ± its 95% interval. One number cannot show cycles (a member can beat a strong "
        "baseline and lose to a weaker one): the payoff table below shows them.",
        "",
        "| # | member | role | rating | meta-strategy mass |",
        "|---:|---|---|---:|---:|",
    ]
    lines += [
        f"| {r} | {a} | {role} | {member_rating(stats, a)} | {fraction(n)} |" for r, a, role, _, n in shown
    ]
    if len(shown) < len(board):
        rest = board[len(shown) :]
        lines += [
            "",
            f"{len(rest)} more members hold meta-strategy mass {fraction(sum(row[4] for row in rest))} "
            f"(`--top {len(board)}` or `--full` lists them).",
        ]
    return lines


def _newest_text(stats: dict[str, Any]) -> list[str]:
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


def _history_text(records: list[dict[str, Any]], last: int) -> list[str]:
    lines = [
        "| gen | agents | meta entropy | main nash_conv | meta nash_conv | diversity | env steps | wall s |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in records[-last:]:
        cells = [
            str(r["generation"]),
            str(len(r.get("population", []))),
            fraction(r.get("meta_entropy")),
            fraction(r.get("main_nash_conv")),
            fraction(meta_nash_conv(r)),
            fraction(r.get("diversity")),
            _cell(r.get("env_steps"), ",d"),
            _cell(r.get("wall_s"), ".1f"),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    average = [r.get("average_nash_conv") for r in records[-last:]]
    if any(v is not None for v in average):  # league.average_policy: a line, the table fits 100 columns
        lines += [
            "",
            "average policy nash_conv, the same generations: " + " ".join(fraction(v) for v in average),
        ]
    return lines


def meta_nash_conv(record: dict[str, Any]) -> float | None:
    """The meta-strategy's exact NashConv of a record; records written before ``meta_nash_conv``
    existed kept it as ``nash_conv`` (unless they also had ``meta_nash_conv`` beside it)."""
    value = record.get("meta_nash_conv", record.get("nash_conv"))
    return None if value is None else float(value)


def least_exploitable_nash_conv(record: dict[str, Any]) -> float | None:
    """The least exploitable mixture's exact NashConv of a record (``evaluation.nash_conv:
    least_exploitable``); records written before ``least_exploitable_nash_conv`` existed kept it as
    ``nash_conv`` beside their ``least_exploitable`` mixture."""
    if "least_exploitable" not in record:
        return None
    value = record.get("least_exploitable_nash_conv", record.get("nash_conv"))
    return None if value is None else float(value)


def probe_history(records: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """Every probe reading in ``records``, oldest first, as ``(target, reading)``."""
    out = []
    for r in records:
        probe = r.get("probe")
        if isinstance(probe, dict):
            out += [(target, reading) for target, reading in probe.items() if isinstance(reading, dict)]
    return out


def _probe_text(readings: list[tuple[str, dict[str, Any]]], last: int) -> list[str]:
    lines = [
        "| generation | target | env steps | games | win rate | 95% | payoff | 95% | best response |",
        "|---:|---|---:|---:|---:|---|---:|---|---:|",
    ]
    for target, r in readings[-last:]:
        win = r.get("win_rate_ci95") or (None, None)
        pay = r.get("payoff_ci95") or (None, None)
        cells = [
            str(r.get("generation", "-")),
            target,
            _cell(r.get("env_steps"), ",d"),
            _cell(r.get("games"), ",d"),
            fraction(r.get("win_rate")),
            f"{fraction(win[0])}-{fraction(win[1])}" if r.get("win_rate") is not None else "-",
            fraction(r.get("payoff")),
            f"{fraction(pay[0])}-{fraction(pay[1])}",
            fraction(r.get("best_response_payoff")),
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
    stats = _stats(snapshot, record)
    probes = probe_history(upto)
    lines = [f"# Run {run_dir}", ""]
    if record is not None:
        latest = {target: reading for target, reading in probes}
        lines += [headline(snapshot.generation, record), metrics_line({**record, "latest_probe": latest}), ""]
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


def report_json(run_dir: Path, *, generation: int | None = None) -> dict[str, Any]:
    """``main.py report RUN_DIR --json``: the same generation as :func:`report`, every member:
    ``run``, ``generation``, ``record`` (the line of ``generations.jsonl``, or null),
    ``leaderboard`` (``rank``, ``member``, ``role``, ``rating``, ``rating_ci95``, ``meta_strategy``, best
    first), ``payoff`` (the payoff snapshot as ``payoff/gen_XXXX.json`` holds it), ``probes`` and
    ``history`` (the records up to that generation, without their per-member fields)."""
    snapshot, record, upto = _read(run_dir, generation)
    stats = _stats(snapshot, record)
    intervals = stats.get("rating_ci95") or {}
    board = [
        {
            "rank": r,
            "member": a,
            "role": role,
            "rating": elo,
            "rating_ci95": intervals.get(a),
            "meta_strategy": n,
        }
        for r, a, role, elo, n in leaderboard(stats)
    ]
    per_member = (
        "population",
        "meta_strategy",
        "rating",
        "rating_ci95",
        "elo_sequential",
        "elo",
        "newest",
    )
    return {
        "run": str(run_dir),
        "generation": snapshot.generation,
        "record": record,
        "leaderboard": board,
        "payoff": snapshot.to_json(),
        "probes": [{"target": target, **reading} for target, reading in probe_history(upto)],
        "history": [{k: v for k, v in r.items() if k not in per_member} for r in upto],
    }


def _read(
    run_dir: Path, generation: int | None
) -> tuple[PayoffSnapshot, dict[str, Any] | None, list[dict[str, Any]]]:
    """The snapshot of ``generation`` (the latest when None), its record, and the records up to it."""
    if generation is not None and generation < 0:
        raise LeagueError(
            f"--generation must be 0 or more, got {generation}; saved generations: {saved_generations(run_dir)}"
        )
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise CorruptFileError(f"run directory {run_dir} does not exist; pass the directory a run wrote")
    snapshot = load_payoff_snapshot(run_dir, generation)
    records = {int(r["generation"]): r for r in read_generations(run_dir) if "generation" in r}
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
