"""Renderings of a payoff snapshot: markdown table (and its parser), CSV, heatmap and Nash bar chart.

Images are drawn with matplotlib's Agg canvas (no display, no pyplot state) and returned as
``(H, W, 3) uint8`` arrays, the layout TensorBoard's ``add_image(..., dataformats="HWC")`` and
``wandb.Image`` take.
"""

from __future__ import annotations

import csv
import io
import math
import re

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle

from light_league.tracking.logger import PayoffSnapshot

#: colour of each league role in the charts (unknown roles are grey)
ROLE_COLORS = {
    "main_agent": "#1f77b4",
    "main_exploiter": "#d62728",
    "league_exploiter": "#ff7f0e",
    "best_response": "#2ca02c",
    "baseline": "#7f7f7f",
}
_OTHER_ROLE_COLOR = "#9467bd"
#: above this many agents the heatmap cells carry no text (it would not be readable)
MAX_ANNOTATED_AGENTS = 16
#: at most this many agents are named along an axis; a larger population names every k-th one
#: (tick labels dominate the drawing time: 200 of them took seconds)
MAX_TICK_LABELS = 30
_NAN_CELL = "–"
_CELL = re.compile(
    r"^\s*(?P<rate>–|\d+(?:\.\d+)?)\s*(?:\[(?P<low>\d+(?:\.\d+)?), (?P<high>\d+(?:\.\d+)?)\]\s*)?"
    r"\((?P<games>\d+)\)\s*$"
)
_PIPE = re.compile(r"(?<!\\)\|")


def _escape(text: str) -> str:
    return text.replace("|", r"\|")


def _unescape(text: str) -> str:
    return text.strip().replace(r"\|", "|")


def payoff_markdown(snapshot: PayoffSnapshot) -> str:
    """The payoff table as markdown: each cell ``win rate [95% interval] (games)`` (the interval when
    the snapshot has one), ``– (0)`` where never played."""
    ids = [_escape(a) for a in snapshot.agent_ids]
    has_ci = snapshot.ci_low is not None and snapshot.ci_high is not None
    lines = [
        f"Generation {snapshot.generation}: mean outcome of the row agent against the column agent "
        + ("[95% interval] " if has_ci else "")
        + "(games played in parentheses).",
        "",
        "| row vs column | " + " | ".join(ids) + " |",
        "|---|" + "---:|" * snapshot.size,
    ]
    for i, (agent, role) in enumerate(zip(ids, snapshot.roles, strict=True)):
        cells = [_format_cell(snapshot, i, j) for j in range(snapshot.size)]
        lines.append(f"| {agent} ({role}) | " + " | ".join(cells) + " |")
    mixture = ", ".join(f"{a} {p:.3f}" for a, p in zip(ids, snapshot.nash, strict=True))
    lines += ["", f"Nash mixture: {mixture}"]
    if snapshot.meta is not None and snapshot.meta_solver != "nash":
        meta = ", ".join(f"{a} {p:.3f}" for a, p in zip(ids, snapshot.meta, strict=True))
        lines.append(f"Meta-strategy ({_escape(snapshot.meta_solver)}): {meta}")
    return "\n".join(lines) + "\n"


def _format_cell(snapshot: PayoffSnapshot, i: int, j: int) -> str:
    rate, games = snapshot.win_rates[i, j], int(snapshot.games[i, j])
    if math.isnan(rate):
        return f"{_NAN_CELL} ({games})"
    interval = ""
    if snapshot.ci_low is not None and snapshot.ci_high is not None and i != j:
        interval = f" [{snapshot.ci_low[i, j]:.2f}, {snapshot.ci_high[i, j]:.2f}]"
    return f"{rate:.3f}{interval} ({games})"


def _first_table(text: str) -> list[str]:
    """The lines of the first markdown table in ``text``."""
    rows: list[str] = []
    for line in text.splitlines():
        if line.startswith("|"):
            rows.append(line)
        elif rows:
            break
    return rows


def parse_payoff_markdown(text: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Read the first table written by :func:`payoff_markdown` in ``text`` back: ``(ids, win rates, games)``."""
    rows = _first_table(text)
    if len(rows) < 2:
        raise ValueError(f"no markdown table found in {text[:80]!r}; expected the output of payoff_markdown")
    ids = [_unescape(c) for c in _PIPE.split(rows[0].strip())[2:-1]]
    body = rows[2:]
    if len(body) != len(ids):
        raise ValueError(f"payoff table has {len(ids)} columns but {len(body)} rows; it must be square")
    rates = np.full((len(ids), len(ids)), np.nan)
    games = np.zeros((len(ids), len(ids)), dtype=np.int64)
    for i, row in enumerate(body):
        cells = _PIPE.split(row.strip())[2:-1]
        if len(cells) != len(ids):
            raise ValueError(f"payoff table row {i} has {len(cells)} cells, expected {len(ids)}: {row!r}")
        for j, cell in enumerate(cells):
            match = _CELL.match(cell)
            if match is None:
                raise ValueError(f"payoff table cell ({i}, {j}) is {cell!r}; expected 'rate (games)'")
            if match["rate"] != _NAN_CELL:
                rates[i, j] = float(match["rate"])
            games[i, j] = int(match["games"])
    return ids, rates, games


def payoff_cells_csv(snapshot: PayoffSnapshot) -> str:
    """One row per ordered pair: ``row, column, win_rate, games, ci_low, ci_high`` (empty when unknown)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["row", "column", "win_rate", "games", "ci_low", "ci_high"])

    def num(arr: np.ndarray | None, i: int, j: int) -> str:
        return "" if arr is None or math.isnan(arr[i, j]) else f"{arr[i, j]:.6g}"

    for i, a in enumerate(snapshot.agent_ids):
        for j, b in enumerate(snapshot.agent_ids):
            row = [num(snapshot.win_rates, i, j), str(int(snapshot.games[i, j]))]
            writer.writerow([a, b, *row, num(snapshot.ci_low, i, j), num(snapshot.ci_high, i, j)])
    return out.getvalue()


def payoff_csv(snapshot: PayoffSnapshot, *, field: str = "win_rates") -> str:
    """The table as CSV: ``agent, role`` then one column per opponent; an unplayed cell is empty.

    ``field`` is ``"win_rates"`` or ``"games"``.
    """
    if field not in ("win_rates", "games"):
        raise ValueError(f"payoff_csv field must be 'win_rates' or 'games', got {field!r}")
    values = snapshot.win_rates if field == "win_rates" else snapshot.games
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["agent", "role", *snapshot.agent_ids])
    for i, (agent, role) in enumerate(zip(snapshot.agent_ids, snapshot.roles, strict=True)):
        cells = [
            "" if math.isnan(v) else (f"{v:.6g}" if field == "win_rates" else str(int(v))) for v in values[i]
        ]
        writer.writerow([agent, role, *cells])
    return out.getvalue()


def _to_rgb(fig: Figure) -> np.ndarray:
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., :3].copy()


def _role_color(role: str) -> str:
    return ROLE_COLORS.get(role, _OTHER_ROLE_COLOR)


def payoff_heatmap_png(snapshot: PayoffSnapshot) -> np.ndarray:
    """Heatmap of win rates, ``(H, W, 3) uint8``: rows/columns labelled ``id (role)``.

    Cells show the win rate and the games played (up to ``MAX_ANNOTATED_AGENTS`` agents);
    never-played cells are hatched grey.
    """
    n = snapshot.size
    side = min(4.0 + 0.55 * n, 24.0)
    fig = Figure(figsize=(side + 1.5, side), dpi=100, layout="constrained")
    ax = fig.add_subplot()
    masked = np.ma.masked_invalid(snapshot.win_rates)
    ax.set_facecolor("#dddddd")
    image = ax.imshow(masked, cmap="RdBu", vmin=0.0, vmax=1.0, interpolation="nearest")
    for i, j in zip(*np.nonzero(np.isnan(snapshot.win_rates)), strict=True):
        ax.add_patch(_nan_patch(i, j))
    if n <= MAX_ANNOTATED_AGENTS:
        _annotate_cells(ax, snapshot)
    shown = _labelled(n)
    labels = [f"{snapshot.agent_ids[i]}\n({snapshot.roles[i]})" for i in shown]
    fontsize = 9 if n <= 8 else 7
    ax.set_xticks(shown, labels, rotation=45, ha="right", fontsize=fontsize)
    ax.set_yticks(shown, labels, fontsize=fontsize)
    for axis_labels in (ax.get_xticklabels(), ax.get_yticklabels()):
        for tick, i in zip(axis_labels, shown, strict=True):
            tick.set_color(_role_color(snapshot.roles[i]))
    ax.set_xlabel("column: opponent")
    ax.set_ylabel("row: agent")
    ax.set_title(f"Generation {snapshot.generation}: win rate of row vs column")
    fig.colorbar(image, ax=ax, shrink=0.8, label="row's mean outcome")
    return _to_rgb(fig)


def _labelled(n: int) -> list[int]:
    """Indices of the agents named on an axis: all, or every k-th when there are too many."""
    return list(range(0, n, math.ceil(n / MAX_TICK_LABELS) if n > MAX_TICK_LABELS else 1))


def _nan_patch(i: int, j: int) -> Rectangle:
    return Rectangle((j - 0.5, i - 0.5), 1.0, 1.0, fill=False, hatch="//", edgecolor="#999999", linewidth=0)


def _annotate_cells(ax: Axes, snapshot: PayoffSnapshot) -> None:
    n = snapshot.size
    fontsize = 9 if n <= 6 else 7
    for i in range(n):
        for j in range(n):
            rate = snapshot.win_rates[i, j]
            games = int(snapshot.games[i, j])
            if math.isnan(rate):
                text, color = f"n/a\n{games} g", "#555555"
            else:
                text = f"{rate:.2f}\n{games} g"
                color = "white" if abs(rate - 0.5) > 0.3 else "black"
            ax.text(j, i, text, ha="center", va="center", fontsize=fontsize, color=color)


def nash_bar_png(snapshot: PayoffSnapshot) -> np.ndarray:
    """Bar chart of the Nash mixture, one bar per agent coloured by role, ``(H, W, 3) uint8``."""
    n = snapshot.size
    fig = Figure(figsize=(min(4.0 + 0.45 * n, 24.0), 4.0), dpi=100, layout="constrained")
    ax = fig.add_subplot()
    colors = [_role_color(r) for r in snapshot.roles]
    bars = ax.bar(range(n), snapshot.nash, color=colors)
    if n <= MAX_ANNOTATED_AGENTS:
        ax.bar_label(bars, labels=[f"{p:.2f}" for p in snapshot.nash], fontsize=8)
    shown = _labelled(n)
    ax.set_xticks(
        shown, [snapshot.agent_ids[i] for i in shown], rotation=45, ha="right", fontsize=8 if n <= 12 else 6
    )
    ax.set_ylim(0.0, max(1.0, float(np.max(snapshot.nash, initial=0.0))))
    ax.set_ylabel("Nash probability")
    ax.set_title(f"Generation {snapshot.generation}: Nash mixture over the population")
    seen = dict.fromkeys(snapshot.roles)
    ax.legend(handles=[Patch(color=_role_color(r), label=r) for r in seen], fontsize=8, loc="upper right")
    return _to_rgb(fig)
