"""Text shown on a terminal: names read from a run directory are data, not terminal commands."""

from __future__ import annotations

import re

#: control characters (C0 but newline and tab, DEL, C1) and the Unicode marks that reorder text:
#: a terminal would act on them (clear the screen, set its title, move the cursor, hide text)
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` with every control character written as its escape (``\\x1b``), so that a member
    id or a file name read from a run directory is shown, never acted on, by the terminal."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def fixed(value: float, digits: int) -> str:
    """``value`` with ``digits`` decimals; a value that rounds to zero reads ``0.000``, never
    ``-0.000`` (a payoff of -0.0001, a solver's -1e-12 of mass)."""
    return f"{value if round(value, digits) != 0 else 0.0:.{digits}f}"
