"""The value types the components pass to each other, in one module below all of them.

League members and role labels (:class:`AgentType`, :class:`AgentRecord`), finished games
(:class:`MatchResult`) and behaviour samples (:class:`Behaviour`), and what a scheduler asks for
(:class:`LearnerSetup`, :class:`TrainingTask`, :class:`GenerationDecisions`). Plain data: this
module imports nothing from the framework. The modules that first defined them
(``agents.agent_pool``, ``rollout.episode``, ``scheduling.task_scheduler``) re-export them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

# ---------------------------------------------------------------------------- roles and members


class AgentType(str):
    """A role label: what kind of learner a member descends from (``main_agent``, a plugin role's
    name, ...) or ``baseline`` for a fixed opponent.

    A plain string, checked on creation: lower-case letters, digits and ``_``, starting with a
    letter (labels name files and config keys). The built-in labels are class attributes
    (``AgentType.MAIN_AGENT``); any other valid label is a role a scheduler or a plugin defines.
    ``BASELINE`` is reserved for fixed opponents: no learner may have it.
    """

    MAIN_AGENT: ClassVar[AgentType]
    MAIN_EXPLOITER: ClassVar[AgentType]
    LEAGUE_EXPLOITER: ClassVar[AgentType]
    #: a PSRO best response (one per player per generation)
    BEST_RESPONSE: ClassVar[AgentType]
    #: a fixed opponent never trained (scripted bots, random): Elo anchor
    BASELINE: ClassVar[AgentType]

    def __new__(cls, value: object) -> AgentType:
        if isinstance(value, AgentType):
            return value
        if not isinstance(value, str) or not _LABEL.fullmatch(value):
            raise ValueError(
                f"role label {value!r} is not valid: use lower-case letters, digits and '_', "
                "starting with a letter (e.g. 'historical_exploiter')"
            )
        return super().__new__(cls, value)

    @property
    def value(self) -> str:
        """The label as a plain ``str`` (as the former enum's ``.value``)."""
        return str.__str__(self)


_LABEL = re.compile(r"[a-z][a-z0-9_]{0,63}")
AgentType.MAIN_AGENT = AgentType("main_agent")
AgentType.MAIN_EXPLOITER = AgentType("main_exploiter")
AgentType.LEAGUE_EXPLOITER = AgentType("league_exploiter")
AgentType.BEST_RESPONSE = AgentType("best_response")
AgentType.BASELINE = AgentType("baseline")

#: the learner role labels of the built-in schedulers
BUILT_IN_ROLES = ("main_agent", "main_exploiter", "league_exploiter", "best_response")


def learner_role(value: object) -> AgentType:
    """``value`` as the role label of a learner: a valid label that is not ``baseline``."""
    role = AgentType(value)
    if role == AgentType.BASELINE:
        raise ValueError(
            "role label 'baseline' is reserved for fixed opponents; give the learner's role another name"
        )
    return role


@dataclass
class AgentRecord:
    agent_id: str
    version: int
    agent_type: AgentType
    snapshot_path: str
    created_at: float
    metadata: dict[str, Any] = field(default_factory=dict)
    parent: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form (the agent type as its string value)."""
        return {
            "agent_id": self.agent_id,
            "version": self.version,
            "agent_type": self.agent_type.value,
            "snapshot_path": self.snapshot_path,
            "created_at": self.created_at,
            "metadata": dict(self.metadata),
            "parent": self.parent,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AgentRecord:
        return cls(
            agent_id=str(data["agent_id"]),
            version=int(data["version"]),
            agent_type=AgentType(data["agent_type"]),
            snapshot_path=str(data["snapshot_path"]),
            created_at=float(data["created_at"]),
            metadata=dict(data.get("metadata") or {}),
            parent=data.get("parent"),
        )


# ---------------------------------------------------------------------------- games


#: per-policy cap on the behaviour samples kept for diversity embeddings
BEHAVIOUR_SAMPLES = 4096


@dataclass
class MatchResult:
    """One finished game, from the focal player's side."""

    player_id: str
    opponent_id: str
    player_seat: int
    outcome: float  #: focal player's result in [0, 1]
    player_return: float
    #: training games: the generation whose opponent distribution drew this game's opponent (a
    #: game in progress keeps its opponent across generations, so it may end in a later one)
    drawn_generation: int = 0


def pack_results(results: list[MatchResult]) -> dict[str, Any]:
    """``results`` as a few columns (ids as codes into one tuple of names): what a list of games
    becomes on its way between processes. Pickling a thousand dataclass instances one by one
    costs milliseconds per Ray message (its pickler visits every object); the columns cost tens
    of microseconds. :func:`unpack_results` inverts it exactly."""
    names: dict[str, int] = {}
    player = np.fromiter((names.setdefault(r.player_id, len(names)) for r in results), np.int32, len(results))
    opponent = np.fromiter(
        (names.setdefault(r.opponent_id, len(names)) for r in results), np.int32, len(results)
    )
    return {
        "names": tuple(names),
        "player": player,
        "opponent": opponent,
        "seat": np.fromiter((r.player_seat for r in results), np.int64, len(results)),
        "outcome": np.fromiter((r.outcome for r in results), np.float64, len(results)),
        "return": np.fromiter((r.player_return for r in results), np.float64, len(results)),
        "drawn": np.fromiter((r.drawn_generation for r in results), np.int64, len(results)),
    }


def unpack_results(packed: dict[str, Any]) -> list[MatchResult]:
    """The games :func:`pack_results` packed, equal field by field (Python ints and floats)."""
    names = packed["names"]
    return [
        MatchResult(names[p], names[o], s, out, ret, d)
        for p, o, s, out, ret, d in zip(
            packed["player"].tolist(),
            packed["opponent"].tolist(),
            packed["seat"].tolist(),
            packed["outcome"].tolist(),
            packed["return"].tolist(),
            packed["drawn"].tolist(),
        )
    ]


@dataclass
class Behaviour:
    """Actions and positions a policy produced (for behaviour-diversity embeddings)."""

    actions: list[np.ndarray] = field(default_factory=list)
    positions: list[np.ndarray] = field(default_factory=list)
    count: int = 0

    def add(self, actions: np.ndarray, positions: np.ndarray | None) -> None:
        room = BEHAVIOUR_SAMPLES - self.count
        if room <= 0 or actions.size == 0:
            return
        self.actions.append(actions[:room])
        if positions is not None:
            self.positions.append(positions[:room])
        self.count += min(room, actions.shape[0])

    def arrays(self) -> tuple[np.ndarray, np.ndarray | None]:
        acts = np.concatenate(self.actions) if self.actions else np.zeros(0, dtype=np.int64)
        pos = np.concatenate(self.positions) if self.positions else None
        return acts, pos


# ---------------------------------------------------------------------------- scheduling


@dataclass
class TrainingTask:
    """One learner's work for one generation."""

    learner_id: str
    role: AgentType
    #: opponent id -> probability; ids are frozen members, baselines, or learner ids (self-play
    #: against the learner's current weights).
    opponents: dict[str, float]
    env_steps: int
    #: how the opponent distribution was weighted ("pfsp", "meta", "pfsp_meta", "meta_strategy", "uniform", "self_play", ...)
    weighting: str = "pfsp"
    #: free-form, JSON-able notes logged with the task (e.g. the league's branch masses)
    info: dict[str, Any] = field(default_factory=dict)
    #: the seat the learner plays in every game (an asymmetric game's PSRO), None for either seat
    seat: int | None = None


@dataclass
class LearnerSetup:
    """A learner the scheduler wants to exist."""

    learner_id: str
    #: the learner's role label (any valid label but ``baseline``)
    role: AgentType
    #: its initial weights join the population before the first generation (so that there is
    #: someone to play: a main agent, a PSRO best response)
    initial_member: bool = False

    def __post_init__(self) -> None:
        self.role = learner_role(self.role)


@dataclass
class GenerationDecisions:
    """What happens to learners after a generation's training."""

    snapshot: list[str] = field(default_factory=list)
    reset: list[str] = field(default_factory=list)
    #: learners of ``reset`` that restart from another learner's current weights (learner ->
    #: source learner) instead of their initial ones
    reset_from: dict[str, str] = field(default_factory=dict)


_VERSIONED_ID = re.compile(r"^(?P<lineage>.+)-v(?P<version>\d+)$")


def newest_snapshots(agent_ids: list[str], roles: list[str]) -> list[int]:
    """Index of each learner's newest snapshot: ids ``<learner>-v<k>``, the largest ``k`` per learner."""
    newest: dict[str, tuple[int, int]] = {}
    for i, (agent, role) in enumerate(zip(agent_ids, roles, strict=True)):
        match = _VERSIONED_ID.match(agent)
        if role == "baseline" or match is None:
            continue
        version = int(match["version"])
        if match["lineage"] not in newest or version > newest[match["lineage"]][0]:
            newest[match["lineage"]] = (version, i)
    return sorted(i for _, i in newest.values())


def newest_main(agent_ids: list[str], roles: list[str]) -> dict[str, float]:
    """The newest snapshot of each main agent, equally weighted (the ``main`` output of a league);
    empty when no member is a main agent."""
    main = [agent_ids[i] for i in newest_snapshots(agent_ids, roles) if roles[i] == AgentType.MAIN_AGENT]
    return {agent: 1.0 / len(main) for agent in main}
