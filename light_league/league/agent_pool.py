"""AgentPool, AgentRecord, AgentType (skeleton: the league-core owner completes this module)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class AgentType(str, enum.Enum):
    MAIN_AGENT = "main_agent"
    MAIN_EXPLOITER = "main_exploiter"
    LEAGUE_EXPLOITER = "league_exploiter"
    #: a PSRO best response (one per player per generation)
    BEST_RESPONSE = "best_response"
    #: a fixed opponent never trained (scripted bots, random): Elo anchor
    BASELINE = "baseline"


@dataclass
class AgentRecord:
    agent_id: str
    version: int
    agent_type: AgentType
    snapshot_path: str
    created_at: float
    metadata: dict[str, Any] = field(default_factory=dict)
    parent: str | None = None
