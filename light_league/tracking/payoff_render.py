"""Renderings of a payoff snapshot: markdown table (and its parser), CSV, heatmap and meta-strategy bar chart.

Images are drawn with matplotlib's Agg canvas (no display, no pyplot state) and returned as
``(H, W, 3) uint8`` arrays, the layout TensorBoard's ``add_image(..., dataformats="HWC")`` and
``wandb.Image`` take.
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from light_league.tracking.handover import handover_focus
from light_league.tracking.logger import PayoffSnapshot, newest_snapshots
from light_league.utils.text import fixed

if TYPE_CHECKING:  # matplotlib is imported where a chart is drawn: the tables and CSV need none of it
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.patches import Rectangle

#: role blocks of the charts and focused tables, in this order (other roles after them)
ROLE_ORDER = ("baseline", "main_agent", "main_exploiter", "league_exploiter", "best_response")
#: colour of each league role in the charts (unknown roles: ``_OTHER_ROLE_COLOR``)
ROLE_COLORS = dict(zip(ROLE_ORDER, ("#7f7f7f", "#1f77b4", "#d62728", "#ff7f0e", "#2ca02c"), strict=True))
_OTHER_ROLE_COLOR = "#9467bd"
#: a population up to this size is drawn and tabled whole; a larger one as its focus (see ``focus``)
FULL_TABLE_MAX_AGENTS = 12
#: at most this many support members are named (most mass first); the rest are counted
MAX_SUPPORT_SHOWN = 8
#: members with at least this meta-strategy mass are "in the support" (smaller masses print as 0.000)
SUPPORT_MIN_MASS = 5e-4
#: the images are drawn this wide (pixels): TensorBoard's image card shows them about 350-500
#: CSS pixels wide, so every label is readable without zooming
IMAGE_WIDTH_PX = 560
_DPI = 100
_NAN_CELL = "–"
_CELL = re.compile(
    r"^\s*(?P<rate>–|\d+(?:\.\d+)?)\s*(?:\[(?P<low>\d+(?:\.\d+)?), (?P<high>\d+(?:\.\d+)?)\]\s*)?"
    r"\((?P<games>\d+)\)\s*$"
)
_PIPE = re.compile(r"(?<!\\)\|")


@dataclass(frozen=True)
class Focus:
    """The members a reader looks for first, as indices into a snapshot."""

    roles: tuple[str, ...]
    baselines: list[int]
    support: list[int]  #: meta-strategy mass >= SUPPORT_MIN_MASS, most mass first (at most MAX_SUPPORT_SHOWN)
    newest: list[int]  #: each learner's newest snapshot (``<learner>-v<k>`` with the largest k)
    support_size: int  #: all members in the support, including those not shown
    handover: tuple[int, ...] = ()  #: the best main agent so far, the newest main's worst opponents

    @property
    def members(self) -> list[int]:
        """The union, grouped in role blocks (``ROLE_ORDER``), population order within a block."""
        return role_ordered(self.roles, sorted({*self.baselines, *self.support, *self.newest}))

    @property
    def tabled(self) -> list[int]:
        """The members and the handover: the tables' rows (the charts, kept legible, show ``members``)."""
        return role_ordered(self.roles, sorted({*self.members, *self.handover}))


def focus(snapshot: PayoffSnapshot) -> Focus:
    """Baselines, the meta-strategy's support, each learner's newest snapshot; the handover for tables."""
    order = np.argsort(-snapshot.meta_strategy, kind="stable")
    in_support = [i for i in order if snapshot.meta_strategy[i] >= SUPPORT_MIN_MASS]
    return Focus(
        roles=tuple(snapshot.roles),
        baselines=[i for i, r in enumerate(snapshot.roles) if r == "baseline"],
        support=[int(i) for i in in_support[:MAX_SUPPORT_SHOWN]],
        newest=newest_snapshots(snapshot.agent_ids, snapshot.roles),
        support_size=len(in_support),
        handover=tuple(handover_focus(snapshot)),
    )


def role_ordered(roles: tuple[str, ...] | list[str], indices: list[int]) -> list[int]:
    """``indices`` grouped by role (``ROLE_ORDER`` first, other roles after), stable within a role."""

    def block(i: int) -> int:
        return ROLE_ORDER.index(roles[i]) if roles[i] in ROLE_ORDER else len(ROLE_ORDER)

    return sorted(indices, key=lambda i: (block(i), i))


def _escape(text: str) -> str:
    return text.replace("|", r"\|")


def _unescape(text: str) -> str:
    return text.strip().replace(r"\|", "|")


def payoff_markdown(snapshot: PayoffSnapshot, *, full: bool | None = None) -> str:
    """The payoff table as markdown: each cell ``win rate [95% interval] (games)`` (the interval
    when the snapshot has one), ``– (0)`` where never played.

    A population of more than ``FULL_TABLE_MAX_AGENTS`` is shown as its focus (:func:`focus`:
    baselines, the meta-strategy's support, each learner's newest snapshot, the handover) unless ``full`` is true; the table
    says so and where the whole one is. The diagonal is ``0.500 (0)``: a member against itself is
    an even game by definition, never played.
    """
    shown = list(range(snapshot.size)) if _show_full(snapshot, full) else focus(snapshot).tabled
    ids = [_escape(snapshot.agent_ids[i]) for i in shown]
    has_ci = snapshot.ci_low is not None and snapshot.ci_high is not None
    lines = [
        f"Generation {snapshot.generation}: mean outcome of the row agent against the column agent "
        + ("[95% interval] " if has_ci else "")
        + "(games played in parentheses).",
        "",
    ]
    if len(shown) < snapshot.size:
        lines += [
            f"Showing {len(shown)} of {snapshot.size} members: the baselines, the meta-strategy's support, each "
            "learner's newest snapshot and what the run hands over. The whole table: `python main.py report RUN_DIR --full` "
            f"(or `--csv FILE`), and `payoff/gen_{snapshot.generation:04d}.json` in the run directory.",
            "",
        ]
    lines += ["| row vs column | " + " | ".join(ids) + " |", "|---|" + "---:|" * len(shown)]
    for i in shown:
        cells = [_format_cell(snapshot, i, j) for j in shown]
        lines.append(
            f"| {_escape(snapshot.agent_ids[i])} ({snapshot.roles[i]}) | " + " | ".join(cells) + " |"
        )
    lines += ["", meta_strategy_line(snapshot, full=_show_full(snapshot, full))]
    return "\n".join(lines) + "\n"


def payoff_text(snapshot: PayoffSnapshot, *, max_members: int | None = None, width: int | None = None) -> str:
    """The payoff table compact enough to read at 15 columns (TensorBoard's text tab, ``report``):
    a preformatted block (it never wraps) of rows named and numbered, columns by number, each cell
    the row's mean outcome against the column in percent (``·`` on the diagonal, ``–`` never
    played); one line gives the games per cell and the widest 95% interval, and where each cell's
    games and interval are.

    Members: everyone up to ``FULL_TABLE_MAX_AGENTS``, else the focus (:func:`focus`); at most
    ``max_members`` of them, and no more than fit rows of ``width`` characters (each learner's
    newest snapshot first, then the baselines, then the meta-strategy support by mass), grouped in
    role blocks. The meta-strategy line accounts for the whole mixture."""
    chosen = list(range(snapshot.size)) if snapshot.size <= FULL_TABLE_MAX_AGENTS else focus(snapshot).tabled
    name = max([6, *(len(snapshot.agent_ids[i]) for i in chosen)])
    if width is not None:  # a row is 4 characters, the name, and 4 per column
        fits = max(1, (width - 5 - name) // _CELL_WIDTH)
        max_members = fits if max_members is None else min(max_members, fits)
    truncated = max_members is not None and len(chosen) > max_members
    if truncated:
        chosen = role_ordered(snapshot.roles, _most_wanted(snapshot, chosen)[:max_members])
    name = max([6, *(len(snapshot.agent_ids[i]) for i in chosen)])
    lines = [
        f"Generation {snapshot.generation}: the row member's mean outcome against the column member, in "
        "percent (win 100, draw 50, loss 0; `·` a member against itself, `–` never played).",
        "",
    ]
    if len(chosen) < snapshot.size:
        lines += [
            f"Showing {len(chosen)} of {snapshot.size} members: "
            + (
                "each learner's newest snapshot, the baselines, the largest meta-strategy masses"
                if truncated
                else "the baselines, the meta-strategy support and each learner's newest snapshot"
            )
            + f". The whole table: `report RUN_DIR --full`, `--csv FILE` or `payoff/gen_{snapshot.generation:04d}.json`.",
            "",
        ]
    lines += [_cells_line(snapshot, chosen), "", "```"]
    lines.append(
        f"{'#':>2}  {'member':<{name}}" + "".join(f"{k:>{_CELL_WIDTH}}" for k in range(1, len(chosen) + 1))
    )
    for k, i in enumerate(chosen, 1):
        cells = "".join(_short_cell(snapshot, i, j) for j in chosen)
        lines.append(f"{k:>2}  {snapshot.agent_ids[i]:<{name}}{cells}")
    lines += ["```", "", meta_strategy_line(snapshot)]
    return "\n".join(lines) + "\n"


#: characters per column of :func:`payoff_text` (`` 100``)
_CELL_WIDTH = 4


def _most_wanted(snapshot: PayoffSnapshot, indices: list[int]) -> list[int]:
    """``indices`` by how much a reader wants them: each learner's newest snapshot (main agents
    first), the handover (:class:`Focus`), the baselines, the rest by meta-strategy mass."""
    newest = newest_snapshots(snapshot.agent_ids, snapshot.roles)
    main_first = sorted(newest, key=lambda i: (snapshot.roles[i] != "main_agent", i))
    wanted = [*main_first, *handover_focus(snapshot)]
    by_mass = sorted(indices, key=lambda i: (snapshot.roles[i] != "baseline", -snapshot.meta_strategy[i], i))
    return list(dict.fromkeys([*(i for i in wanted if i in indices), *by_mass]))


def _short_cell(snapshot: PayoffSnapshot, i: int, j: int) -> str:
    if i == j:
        return f"{'·':>{_CELL_WIDTH}}"
    rate = snapshot.win_rates[i, j]
    return f"{_NAN_CELL:>{_CELL_WIDTH}}" if math.isnan(rate) else f"{round(100 * rate):>{_CELL_WIDTH}}"


def _cells_line(snapshot: PayoffSnapshot, shown: list[int]) -> str:
    """``Games per cell: 64 to 128; the widest 95% interval ±0.121 (a against b); ...``."""
    off = [(i, j) for i in shown for j in shown if i != j and not math.isnan(snapshot.win_rates[i, j])]
    if not off:
        return "No pair shown has played yet."
    games = [int(snapshot.games[i, j]) for i, j in off]
    span = f"{min(games):,}" if min(games) == max(games) else f"{min(games):,} to {max(games):,}"
    text = f"Games per cell: {span}"
    if snapshot.ci_low is not None and snapshot.ci_high is not None:
        low, high = snapshot.ci_low, snapshot.ci_high
        i, j = max(off, key=lambda c: high[c] - low[c])
        half = (high[i, j] - low[i, j]) / 2
        text += (
            f"; the widest 95% interval ±{half:.3f} ({_escape(snapshot.agent_ids[i])} against "
            f"{_escape(snapshot.agent_ids[j])}); every cell with its interval: `report RUN_DIR --full`"
        )
    return text + "."


def _show_full(snapshot: PayoffSnapshot, full: bool | None) -> bool:
    return snapshot.size <= FULL_TABLE_MAX_AGENTS if full is None else full


def meta_strategy_line(snapshot: PayoffSnapshot, *, full: bool = False) -> str:
    """``Meta-strategy (nash): a 0.700, b 0.250; 3 more in the support 0.040; ...``."""
    return f"Meta-strategy ({_escape(snapshot.meta_solver)}): " + meta_strategy_text(snapshot, full=full)


def meta_strategy_text(snapshot: PayoffSnapshot, *, full: bool = False) -> str:
    """The meta-strategy of ``snapshot`` as :func:`mixture_text` writes it."""
    return mixture_text(snapshot.agent_ids, snapshot.meta_strategy, full=full)


def mixture_text(
    agent_ids: list[str], mass: np.ndarray, *, full: bool = False, shown: int = MAX_SUPPORT_SHOWN
) -> str:
    """A mixture that accounts for all its mass: ``a 0.700, b 0.250; 3 more in the support 0.040;
    the other 12 members 0.010``.

    Every member when ``full``; else the ``shown`` largest members of the support (mass at least
    ``SUPPORT_MIN_MASS``), then the rest of the support and the members below it, each counted
    with their total mass."""
    mass = np.asarray(mass, dtype=np.float64)
    if full:
        return ", ".join(f"{_escape(a)} {fixed(p, 3)}" for a, p in zip(agent_ids, mass, strict=True))
    support = [int(i) for i in np.argsort(-mass, kind="stable") if mass[i] >= SUPPORT_MIN_MASS]
    text = ", ".join(f"{_escape(agent_ids[i])} {fixed(mass[i], 3)}" for i in support[:shown])
    parts = [text] if text else []
    more = support[shown:]
    if more:
        parts.append(f"{len(more)} more in the support {fixed(mass[more].sum(), 3)}")
    rest = len(agent_ids) - len(support)
    if rest:
        outside = float(mass.sum() - mass[support].sum())
        parts.append(f"the other {rest} member{'s' if rest > 1 else ''} {fixed(outside, 3)}")
    return "; ".join(parts)


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


def parse_payoff_text(text: str) -> tuple[list[str], np.ndarray]:
    """Read the first table written by :func:`payoff_text` in ``text`` back: ``(ids, win rates)``,
    the rates as printed (percent, as fractions; NaN where never played, 0.5 on the diagonal)."""
    block = text.split("```", 2)
    if len(block) < 3:
        raise ValueError(f"no table block found in {text[:80]!r}; expected the output of payoff_text")
    rows = [line.split() for line in block[1].strip("\n").splitlines()[1:]]
    ids = [row[1] for row in rows]
    rates = np.full((len(ids), len(ids)), np.nan)
    for i, row in enumerate(rows):
        if len(row) != len(ids) + 2:
            raise ValueError(f"payoff table row {i} has {len(row) - 2} cells, expected {len(ids)}")
        for j, cell in enumerate(row[2:]):
            rates[i, j] = 0.5 if cell == "·" else np.nan if cell == _NAN_CELL else int(cell) / 100
    return ids, rates


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
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba())[..., :3].copy()


def _role_color(role: str) -> str:
    return ROLE_COLORS.get(role, _OTHER_ROLE_COLOR)


def _shown(snapshot: PayoffSnapshot) -> list[int]:
    """Members drawn in the charts: everyone in a small population, else the focus; role blocks."""
    if snapshot.size <= FULL_TABLE_MAX_AGENTS:
        return role_ordered(snapshot.roles, list(range(snapshot.size)))
    return focus(snapshot).members


def payoff_heatmap_figure(snapshot: PayoffSnapshot) -> Figure:
    """The heatmap as a matplotlib ``Figure`` (see :func:`payoff_heatmap_png`)."""
    from matplotlib.patches import Rectangle

    shown = _shown(snapshot)
    k = len(shown)
    rates = snapshot.win_rates[np.ix_(shown, shown)]
    games = snapshot.games[np.ix_(shown, shown)]
    labels = [snapshot.agent_ids[i] for i in shown]
    fontsize = 8 if k <= 14 else 6.5
    ax = _square_axes(labels, fontsize)
    ax.set_facecolor("#dddddd")
    shown_rates = rates.copy()
    np.fill_diagonal(shown_rates, np.nan)
    ax.imshow(np.ma.masked_invalid(shown_rates), cmap="RdBu", vmin=0.0, vmax=1.0, interpolation="nearest")
    for i in range(k):
        ax.add_patch(Rectangle((i - 0.5, i - 0.5), 1.0, 1.0, color=DIAGONAL_COLOR, linewidth=0))
    for i, j in zip(*np.nonzero(np.isnan(rates)), strict=True):
        ax.add_patch(_nan_patch(int(i), int(j)))
    if k <= MAX_ANNOTATED_AGENTS:
        _annotate_cells(ax, rates, games)
    _draw_role_blocks(ax, [snapshot.roles[i] for i in shown])
    ax.set_xticks(range(k), labels, rotation=90, fontsize=fontsize)
    ax.set_yticks(range(k), labels, fontsize=fontsize)
    for axis_labels in (ax.get_xticklabels(), ax.get_yticklabels()):
        for tick, i in zip(axis_labels, shown, strict=True):
            tick.set_color(_role_color(snapshot.roles[i]))
    ax.tick_params(length=0)
    _meta_column(ax, snapshot, shown, fontsize)
    part = (
        f"all {k} members"
        if k == snapshot.size
        else f"{k} of {snapshot.size} members: baselines, meta-strategy support, newest"
        + _left_out(snapshot, shown, "\n")
    )
    fig: Figure = ax.figure  # type: ignore[assignment]
    _title(fig, f"Generation {snapshot.generation}: win rate of row vs column\n{part}")
    return fig


def _left_out(snapshot: PayoffSnapshot, shown: list[int], before: str = "; ") -> str:
    """``7 more support members hold 0.154`` after ``before`` for the meta-strategy support left
    out of ``shown`` (empty when none is)."""
    kept = set(shown)
    out = [i for i in range(snapshot.size) if i not in kept and snapshot.meta_strategy[i] >= SUPPORT_MIN_MASS]
    if not out:
        return ""
    mass = float(snapshot.meta_strategy[out].sum())
    return f"{before}{len(out)} more support member{'s' if len(out) > 1 else ''} hold{'' if len(out) > 1 else 's'} {mass:.3f}"


def _title(fig: Figure, text: str) -> None:
    """A title from the figure's left edge (an axes title would be clipped at the image edge)."""
    fig.text(6 / IMAGE_WIDTH_PX, 1 - 4 / (fig.get_figheight() * _DPI), text, fontsize=9, va="top", ha="left")


def _text_px(labels: list[str], fontsize: float) -> float:
    """Width in pixels of the longest label (DejaVu Sans averages about 0.62 em per character)."""
    return max((len(label) for label in labels), default=0) * 0.62 * fontsize * _DPI / 72


def _square_axes(labels: list[str], fontsize: float) -> Axes:
    """Axes for a k x k grid of square cells, margins sized for the labels: a fixed layout, as
    matplotlib's layout engines cost more than the drawing itself."""
    from matplotlib.figure import Figure

    k = max(len(labels), 1)
    margin = _text_px(labels, fontsize) + 10
    top, right = 56.0, 62.0  # three lines of title
    cell = min((IMAGE_WIDTH_PX - margin - right) / k, 44.0)
    height = top + margin + cell * k
    fig = Figure(figsize=(IMAGE_WIDTH_PX / _DPI, height / _DPI), dpi=_DPI)
    return fig.add_axes(
        (margin / IMAGE_WIDTH_PX, margin / height, cell * k / IMAGE_WIDTH_PX, cell * k / height)
    )


def payoff_heatmap_png(snapshot: PayoffSnapshot) -> np.ndarray:
    """Heatmap of win rates, ``(H, W, 3) uint8``, readable at TensorBoard's default card size.

    A population of up to ``FULL_TABLE_MAX_AGENTS`` is drawn whole; a larger one as its focus
    (baselines, the meta-strategy's support, each learner's newest snapshot). Rows and columns are grouped in
    role blocks, names coloured by role; the right margin gives each row's meta-strategy mass (``new``
    marks a learner's newest snapshot). Cells show the win rate; never-played pairs are hatched
    grey; the diagonal (a member against itself) is plain light grey.
    """
    return _to_rgb(payoff_heatmap_figure(snapshot))


#: colour of the diagonal cells (a member against itself: 0.5 by definition, never played)
DIAGONAL_COLOR = "#eeeeee"
#: above this many shown members the heatmap cells carry no text (it would not be readable)
MAX_ANNOTATED_AGENTS = 16


def _draw_role_blocks(ax: Axes, roles: list[str]) -> None:
    for b in range(1, len(roles)):
        if roles[b] != roles[b - 1]:
            ax.axhline(b - 0.5, color="black", linewidth=1.2)
            ax.axvline(b - 0.5, color="black", linewidth=1.2)


def _meta_column(ax: Axes, snapshot: PayoffSnapshot, shown: list[int], fontsize: float) -> None:
    """Each row's meta-strategy mass (and ``new`` for newest snapshots) in the right margin."""
    newest = set(newest_snapshots(snapshot.agent_ids, snapshot.roles))
    x = len(shown) - 0.5 + 0.15
    ax.text(x, -0.6, "meta", fontsize=fontsize, va="bottom", ha="left")
    for row, i in enumerate(shown):
        p = snapshot.meta_strategy[i]
        mass = f"{p:.2f}" if p >= SUPPORT_MIN_MASS else "·"
        ax.text(x, row, f"{mass} new" if i in newest else mass, fontsize=fontsize, va="center", ha="left")


def _nan_patch(i: int, j: int) -> Rectangle:
    from matplotlib.patches import Rectangle

    return Rectangle((j - 0.5, i - 0.5), 1.0, 1.0, fill=False, hatch="//", edgecolor="#999999", linewidth=0)


def _annotate_cells(ax: Axes, rates: np.ndarray, games: np.ndarray) -> None:
    k = rates.shape[0]
    fontsize = 8 if k <= 8 else 6.5
    for i in range(k):
        for j in range(k):
            rate = rates[i, j]
            if i == j:
                continue
            if math.isnan(rate):
                text, color = "–", "#555555"
            else:
                text = f"{rate:.2f}"
                color = "white" if abs(rate - 0.5) > 0.3 else "black"
            ax.text(j, i, text, ha="center", va="center", fontsize=fontsize, color=color)


def meta_strategy_bar_figure(snapshot: PayoffSnapshot) -> Figure:
    """The meta-strategy chart as a matplotlib ``Figure`` (see :func:`meta_strategy_bar_png`)."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    bars = _meta_bars(snapshot)
    newest = set(newest_snapshots(snapshot.agent_ids, snapshot.roles))
    labels = [snapshot.agent_ids[i] + (" (newest)" if i in newest else "") for i in bars]
    left, top, bottom = _text_px(labels, 8) + 10, 56.0, 40.0  # three lines of title
    height = top + bottom + 22.0 * len(bars)
    fig = Figure(figsize=(IMAGE_WIDTH_PX / _DPI, height / _DPI), dpi=_DPI)
    ax = fig.add_axes(
        (
            left / IMAGE_WIDTH_PX,
            bottom / height,
            1 - (left + 16) / IMAGE_WIDTH_PX,
            1 - (top + bottom) / height,
        )
    )
    masses = [float(snapshot.meta_strategy[i]) for i in bars]
    rects = ax.barh(range(len(bars)), masses, color=[_role_color(snapshot.roles[i]) for i in bars])
    ax.bar_label(rects, labels=[fixed(m, 3) for m in masses], fontsize=8, padding=2)
    ax.set_yticks(range(len(bars)), labels, fontsize=8)
    for tick, i in zip(ax.get_yticklabels(), bars, strict=True):
        tick.set_color(_role_color(snapshot.roles[i]))
    ax.invert_yaxis()
    ax.set_xlim(0.0, 1.15)
    ax.set_xlabel("meta-strategy probability", fontsize=8)
    ax.tick_params(axis="x", labelsize=8)
    support = focus(snapshot).support_size
    rest = snapshot.size - len(bars)
    shown_support = sum(1 for i in bars if snapshot.meta_strategy[i] >= SUPPORT_MIN_MASS)
    if support > shown_support:
        note = f"; the {shown_support} largest shown" + _left_out(snapshot, bars, "\n")
    else:
        note = f"; {rest} others (mass 0) not shown" if rest else ""
    _title(
        fig,
        f"Generation {snapshot.generation}: meta-strategy ({snapshot.meta_solver})\n{support} of "
        f"{snapshot.size} members in the support{note}",
    )
    seen = dict.fromkeys(snapshot.roles[i] for i in bars)
    ax.legend(handles=[Patch(color=_role_color(r), label=r) for r in seen], fontsize=7, loc="lower right")
    return fig


def _meta_bars(snapshot: PayoffSnapshot) -> list[int]:
    """Members with a bar: everyone in a small population, else the support and the newest snapshots."""
    if snapshot.size <= FULL_TABLE_MAX_AGENTS:
        return role_ordered(snapshot.roles, list(range(snapshot.size)))
    chosen = focus(snapshot)
    return role_ordered(snapshot.roles, sorted({*chosen.support, *chosen.newest}))


def meta_strategy_bar_png(snapshot: PayoffSnapshot) -> np.ndarray:
    """Horizontal bar chart of the meta-strategy, ``(H, W, 3) uint8``: one bar per shown member,
    named beside its own bar and coloured by role (all members up to ``FULL_TABLE_MAX_AGENTS``,
    else the support and each learner's newest snapshot; the title counts the rest)."""
    return _to_rgb(meta_strategy_bar_figure(snapshot))
