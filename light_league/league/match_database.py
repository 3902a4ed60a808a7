"""Former home of the match log (MatchDatabase), now :mod:`light_league.agents.match_database`:
the framework runs on it.

Its names stay importable from here, and from :mod:`light_league.league` as the league tutorial
imports them.
"""

from light_league.agents.match_database import MatchDatabase, record_generation

__all__ = ["MatchDatabase", "record_generation"]
