"""One format per kind of number, everywhere on the console, in ``report`` and in TensorBoard's
texts: ratings as whole points, probabilities, win rates, entropies, NashConv and diversity with 3
decimals (``0.000`` for a value that rounds to zero, never ``-0.000``), intervals of win rates with
2, seconds with 1, counts with thousands separators.
"""

from __future__ import annotations

from collections.abc import Sequence

from light_league.tracking.record import GenerationRecord
from light_league.utils.text import fixed


def _fmt(value: float | None, digits: int) -> str:
    """``value`` with ``digits`` decimals (``-`` when unknown); a value that rounds to zero reads
    ``0.000``, not ``-0.000``."""
    return "-" if value is None else fixed(value, digits)


def rating(value: float | None) -> str:
    """A rating (Elo points), whole points; ``-`` when unknown."""
    return _fmt(value, 0)


def fraction(value: float | None) -> str:
    """A probability, win rate, entropy, NashConv or diversity: 3 decimals; ``-`` when unknown."""
    return _fmt(value, 3)


def rating_text(value: float | None, ci95: Sequence[float] | None = None) -> str:
    """``1270 ± 35`` (the 95% interval's half width), ``800`` for the anchor or without an interval."""
    if value is None or ci95 is None or len(ci95) != 2:
        return rating(value)
    half = (float(ci95[1]) - float(ci95[0])) / 2
    return rating(value) if round(half) == 0 else f"{rating(value)} ± {half:.0f}"


def member_rating(record: GenerationRecord, agent: str) -> str:
    """``agent``'s rating in a generation record, with its interval where the record has one."""
    return rating_text(record.rating.get(agent), record.rating_ci95.get(agent))


def win_rate_text(rate: float | None, ci95: Sequence[float] | None = None, games: int | None = None) -> str:
    """``0.406 [0.33, 0.49] (128)``: a win rate with its 95% interval and games; ``-`` when unplayed."""
    if rate is None:
        return "-"
    text = fraction(rate)
    if ci95 is not None and len(ci95) == 2:
        text += f" [{ci95[0]:.2f}, {ci95[1]:.2f}]"
    return text + (f" ({games:,})" if games else "")


def anchor_text(record: GenerationRecord) -> str:
    """``random = 800 held fixed`` (the rating's anchor, as the record names it), else empty."""
    anchor = record.rating_anchor
    value = record.rating.get(anchor) if anchor else None
    return "" if value is None else f"{anchor} = {rating(value)} held fixed"
