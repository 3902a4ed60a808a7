"""Checks of saved state read back from files (a checkpoint's ``state.json``): each component
checks its own part with these before anything is restored, and the Checkpointer turns a failed
check into one line naming the file."""

from __future__ import annotations

from typing import Any


def require(condition: bool, what: str) -> None:
    """Raise ``TypeError(what)`` unless ``condition`` holds."""
    if not condition:
        raise TypeError(what)


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_num(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def numbers(value: Any, check: Any = is_num) -> bool:
    """A JSON object whose values all pass ``check`` (numbers by default)."""
    return isinstance(value, dict) and all(check(v) for v in value.values())
