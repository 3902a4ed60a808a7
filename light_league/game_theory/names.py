"""The error for a name that is not among the choices (numpy and scipy only here, so no
``light_league.errors``: the caller that reads the name from a config checks it first)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def unknown_choice(kind: str, name: str, choices: Iterable[str]) -> ValueError:
    """``unknown Nash method 'lpp'; did you mean lp? (valid: lp, regret_matching)``."""
    valid = sorted(choices)
    close = difflib.get_close_matches(name, valid, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]}?" if close else ""
    return ValueError(f"unknown {kind} {name!r}{hint} (valid: {', '.join(valid)})")
