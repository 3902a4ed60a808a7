"""The learners of a run as the AgentManager counts them: each one's role, its env steps (since
its last snapshot and in all) and how many snapshots it has made (its next member's ``-vN``)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from light_league.types import AgentType, learner_role
from light_league.utils.checks import is_int, numbers, require


class LearnerBook:
    def __init__(self) -> None:
        self.roles: dict[str, AgentType] = {}
        self.steps_since: dict[str, int] = defaultdict(int)
        self.steps_total: dict[str, int] = defaultdict(int)
        self.snapshots: dict[str, int] = defaultdict(int)

    def register(self, learner_id: str, role: AgentType) -> None:
        self.roles[learner_id] = learner_role(role)

    def next_member_id(self, learner_id: str) -> str:
        return f"{learner_id}-v{self.snapshots[learner_id]}"

    def snapshot(self, learner_id: str) -> tuple[str, int]:
        """Count a snapshot of ``learner_id``: its member id and the env steps it trained in all."""
        member_id = self.next_member_id(learner_id)
        self.snapshots[learner_id] += 1
        self.steps_since[learner_id] = 0
        return member_id, self.steps_total[learner_id]

    def add_steps(self, env_steps: Mapping[str, int]) -> None:
        for lid, steps in env_steps.items():
            self.steps_since[lid] += steps
            self.steps_total[lid] += steps

    def state_dict(self) -> dict[str, Any]:
        return {
            "learners": {k: v.value for k, v in self.roles.items()},
            "steps_since": dict(self.steps_since),
            "steps_total": dict(self.steps_total),
            "snapshots": dict(self.snapshots),
        }

    @staticmethod
    def check_state(state: dict[str, Any], roles: set[AgentType]) -> None:
        """Raise unless ``state`` holds a :meth:`state_dict` with learners of ``roles``."""
        for key in ("steps_since", "steps_total", "snapshots"):
            require(numbers(state[key], is_int), f"agents.{key}")
        require(isinstance(state["learners"], dict), "agents.learners")
        for role in state["learners"].values():
            require(
                learner_role(role) in roles, f"agents.learners: role {role!r} is not a role of the scheduler"
            )

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.roles = {k: learner_role(v) for k, v in state["learners"].items()}
        for key in ("steps_since", "steps_total", "snapshots"):
            setattr(self, key, defaultdict(int, {k: int(v) for k, v in state[key].items()}))
