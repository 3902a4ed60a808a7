"""Former home of the Elo registry (EloRegistry), now :mod:`light_league.agents.elo_registry`: the
framework runs on it.

Its names stay importable from here, and from :mod:`light_league.league` as the league tutorial
imports them.
"""

from light_league.agents.elo_registry import EloRegistry

__all__ = ["EloRegistry"]
