"""Former home of the population (AgentPool), now :mod:`light_league.agents.agent_pool`: the
framework runs on it.

Its names stay importable from here, and from :mod:`light_league.league` as the league tutorial
imports them.
"""

from light_league.agents.agent_pool import (
    BUILT_IN_ROLES,
    AgentPool,
    AgentRecord,
    AgentType,
    UnknownAgentError,
    learner_role,
)

__all__ = ["BUILT_IN_ROLES", "AgentPool", "AgentRecord", "AgentType", "UnknownAgentError", "learner_role"]
