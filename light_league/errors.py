"""Errors raised on bad user input.

Every message is one line that names the offending value and says how to fix it.
``main.py`` turns these into one line on stderr and exit status 2.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class LeagueError(Exception):
    """Base class for errors the user can fix (bad config, bad file, bad name)."""


class ConfigError(LeagueError, ValueError):
    """A config key, type or value is wrong."""


class CorruptFileError(LeagueError, ValueError):
    """A file in the run directory (or given by the user) cannot be read back."""


class RunDirLockedError(LeagueError, RuntimeError):
    """Another process holds the run directory."""


class NonFiniteError(LeagueError, ValueError):
    """An env returned, or a learner computed, a NaN or infinite number: the run stops before
    anything is trained on it or checkpointed."""


class EnvContractError(LeagueError, ValueError):
    """An env broke its contract mid-run (an agent that must act has no legal action): the run
    stops before anything plays on it, as for a non-finite number."""


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """Return ``"; did you mean X?"`` for the closest choice, or ``""`` when none is close."""
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {close[0]}?" if close else ""


def unknown_name(kind: str, name: str, choices: Iterable[str]) -> LeagueError:
    """The standard error for an unknown registry name (env, scheduler, learner, ...)."""
    valid = sorted(choices)
    return ConfigError(f"unknown {kind} {name!r}{did_you_mean(name, valid)} (valid: {', '.join(valid)})")
