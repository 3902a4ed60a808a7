"""The leaderboard and what a run hands over, as the console, ``report`` and TensorBoard show them.

The members go in the record's ``ranking`` (Nash clustering of the payoff table, then Nash
averaging: :mod:`light_league.game_theory.ranking`), which depends on who beats whom and not on
who else is in the population; the rating fitted to every game stays beside it as a secondary
column. A record written before the ranking is ranked from its payoff table where it is at hand
(:func:`with_ranking`), else by rating. The handover lines name the best main agent so far and the
opponents the newest main agent does worst against (:mod:`light_league.tracking.handover`).
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

from light_league.game_theory.ranking import CHECKED_PLACES
from light_league.tracking.formats import anchor_text, fraction, member_rating, win_rate_text
from light_league.tracking.logger import Cell, PayoffSnapshot, versus_baselines
from light_league.tracking.record import GenerationRecord
from light_league.tracking.record_entries import ranking_fields


class LeaderRow(NamedTuple):
    """A row of the leaderboard."""

    rank: int
    agent: str
    role: str
    rating: float | None
    meta: float  #: its meta-strategy mass
    nash_average: float | None  #: its win rate against the population's Nash mixture
    layer: int | None = None  #: its Nash-clustering layer (from 1), where the layers placed it


def with_ranking(record: GenerationRecord, snapshot: PayoffSnapshot | None) -> GenerationRecord:
    """``record`` with the ranking of ``snapshot`` (its payoff table, the same members) where the
    record has none (written before it); else ``record`` as it is."""
    if record.ranking or snapshot is None or [m.id for m in record.population] != snapshot.agent_ids:
        return record
    return dataclasses.replace(record, **ranking_fields(snapshot))


def leaderboard(record: GenerationRecord) -> list[LeaderRow]:
    """The population in the record's ``ranking`` (by rating, then most meta-strategy mass, where
    the record has no ranking or a member is not in it)."""
    elo, meta, place = record.rating, record.meta_strategy, {a: k for k, a in enumerate(record.ranking)}
    members = [(m.id, m.role) for m in record.population]
    members.sort(
        key=lambda m: (place.get(m[0], len(place)), -elo.get(m[0], float("-inf")), -meta.get(m[0], 0.0), m[0])
    )
    return [
        LeaderRow(
            rank,
            agent,
            role,
            elo.get(agent),
            meta.get(agent, 0.0),
            record.nash_average.get(agent),
            record.ranking_layer.get(agent),
        )
        for rank, (agent, role) in enumerate(members, 1)
    ]


def order_text(record: GenerationRecord) -> str:
    """How the leaderboard is ordered and what its columns are, in a sentence or two."""
    anchor = anchor_text(record)
    rating = (
        "rating: Elo fitted to every evaluation game"
        + (f", {anchor}" if anchor else "")
        + ", ± its 95% interval"
    )
    if not record.ranking:
        return f"Ordered by {rating} (no ranking: a cell of the payoff table is unplayed)."
    return (
        "Ordered by who beats whom: Nash clustering of the payoff table (layer: 1 is the Nash mixture's "
        "support, 2 the next one's without it, ...), then Nash averaging (vs Nash: the win rate against "
        f"the population's Nash mixture); {rating}, a secondary figure."
    )


def order_check(record: GenerationRecord) -> str:
    """The line on the top of the order: that each beats every one below it, or the record's note
    naming the cycle (empty without a ranking)."""
    if not record.ranking:
        return ""
    if record.ranking_note:
        return record.ranking_note
    top = min(CHECKED_PLACES, len(record.ranking))
    return f"Each of the top {top} beats every member below it among them at least 0.5."


def more_line(board: list[LeaderRow], top_k: int) -> str:
    """``... 63 more (meta-strategy mass 0.519)`` for the rows past ``top_k`` (empty when none)."""
    rest = board[top_k:]
    return (
        f"... {len(rest)} more (meta-strategy mass {fraction(sum(row.meta for row in rest))})" if rest else ""
    )


BOARD_HEADER = (
    f"{'#':>3}  {'agent':<24} {'role':<17} {'layer':>5} {'vs Nash':>7} {'rating ±95%':>11} {'meta':>6}"
)


def board_line(record: GenerationRecord, row: LeaderRow) -> str:
    """A row of the plain-text leaderboard, under :data:`BOARD_HEADER`."""
    return (
        f"{row.rank:>3}  {row.agent:<24} {row.role:<17} {_layer(row):>5} {fraction(row.nash_average):>7} "
        f"{member_rating(record, row.agent):>11} {fraction(row.meta):>6}"
    )


def _layer(row: LeaderRow) -> str:
    return "-" if row.layer is None else str(row.layer)


def markdown_rows(record: GenerationRecord, rows: list[LeaderRow]) -> list[str]:
    """The leaderboard's rows as a markdown table, with its header."""
    return [
        "| # | member | role | layer | vs Nash | rating | meta-strategy mass |",
        "|---:|---|---|---:|---:|---:|---:|",
        *(
            f"| {r.rank} | {r.agent} | {r.role} | {_layer(r)} | {fraction(r.nash_average)} "
            f"| {member_rating(record, r.agent)} | {fraction(r.meta)} |"
            for r in rows
        ),
    ]


def handover_lines(record: GenerationRecord) -> list[str]:
    """The best main agent so far (against the reference set, and against the reference opponent)
    and the opponents each newest main-agent snapshot does worst against; none in a run without a
    main agent."""
    lines = []
    best = record.best_main
    newest = [e for e in record.newest if e.role == "main_agent"]
    if best is not None:
        line = (
            f"best main agent so far: {best.id}, worst against the baselines and exploiters "
            f"{best.worst_opponent} {fraction(best.worst_win_rate)}, mean {fraction(best.mean_win_rate)} "
            f"over {best.references}"
        )
        if record.reference is not None and best.win_rate is not None:
            line += f"; vs {record.reference} {win_rate_text(best.win_rate, best.win_rate_ci95, best.games)}"
        if newest and all(e.id != best.id for e in newest):
            line += f" (not the newest, {', '.join(e.id for e in newest)})"
        lines.append(line)
    for entry in newest:
        if entry.worst_opponents:
            worst = ", ".join(f"{a} {fraction(r)}" for a, r in entry.worst_opponents.items())
            lines.append(f"newest {entry.id} does worst against: {worst}")
    return lines


def leaderboard_markdown(record: GenerationRecord, *, top_k: int = 10) -> str:
    """The top ``top_k`` members in the leaderboard's order (and each learner's newest snapshot
    below them, if not among them) as a markdown table, the rest counted with their meta-strategy
    mass, then the handover lines: TensorBoard's ``league/leaderboard``."""
    board = leaderboard(record)
    newest = {e.id for e in record.newest}
    shown = [row for row in board if row.rank <= top_k or row.agent in newest]
    lines = [f"Generation {record.generation}. {order_text(record)}", ""]
    if order_check(record):
        lines += [order_check(record), ""]
    lines += markdown_rows(record, shown)
    hidden = [row for row in board if row not in shown]
    if hidden:
        mass = fraction(sum(row.meta for row in hidden))
        lines += ["", f"{len(hidden)} more members hold meta-strategy mass {mass}."]
    handover = handover_lines(record)
    if handover:
        lines += ["", *(f"- {line}" for line in handover)]
    return "\n".join(lines) + "\n"


def final_lines(
    reason: str,
    record: GenerationRecord,
    snapshot: PayoffSnapshot | None,
    *,
    top_k: int = 5,
    run_dir: str = "RUN_DIR",
) -> list[str]:
    """The run's closing summary: why it stopped, the leaderboard's top, the best main agent so far
    and the newest one's worst opponents, and the newest main agent (each learner's newest snapshot
    in a run without one) against each baseline, the reference opponent marked; the last line
    names the command that shows the whole table, with the run's directory."""
    record = with_ranking(record, snapshot)
    generations = record.generation + 1
    lines = [
        f"run stopped: {reason} after {generations} generation{'s' if generations != 1 else ''}, "
        f"{_duration(float(record.wall_s or 0.0))}, {int(record.env_steps or 0):,} env steps",
        f"leaderboard, top {top_k}. {order_text(record)}",
        BOARD_HEADER,
    ]
    board = leaderboard(record)
    lines += [board_line(record, row) for row in board[:top_k]]
    lines += [line for line in (order_check(record), *handover_lines(record)) if line]
    if snapshot is not None:
        lines += _versus_lines(record, snapshot)
    lines.append(f"who beats whom, cycles included: read the payoff table (main.py report {run_dir})")
    if record.best_main is not None:
        lines.append(
            f"the best main agent by name ({record.best_main.id}): main.py export {run_dir} best, "
            f"main.py exploit {run_dir} --target best, main.py eval {run_dir} best OPPONENT"
        )
    return lines


def _versus_lines(record: GenerationRecord, snapshot: PayoffSnapshot) -> list[str]:
    lines = []
    newest = [e for e in record.newest if e.role == "main_agent"] or list(record.newest)
    for entry in newest:
        if entry.id not in snapshot.agent_ids:
            continue
        cells = versus_baselines(snapshot, entry.id)
        if not cells:
            continue
        lines.append(
            f"{entry.id} (rating {member_rating(record, entry.id)}) against each baseline, "
            "win rate [95%] (games):"
        )
        for b, c in cells.items():
            mark = "  the reference opponent" if b == record.reference else ""
            lines.append(f"     {b:<14} {_cell_text(c)}{mark}")
    return lines


def _cell_text(cell: Cell | None) -> str:
    return "not played" if cell is None else win_rate_text(cell.win_rate, cell.ci95, cell.games)


def _duration(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole // 60} min {whole % 60} s" if whole >= 60 else f"{seconds:.1f} s"
