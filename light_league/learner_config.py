"""The ``learner`` section of an experiment config: the learner kind of every role and their settings."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import Field, field_validator, model_validator

from light_league.algorithms.mappo.config import MAPPOConfig
from light_league.algorithms.regret.config import RegretConfig
from light_league.config_base import Section, validate_section

S = TypeVar("S", bound=Section)


class LearnerSection(Section):
    """The learner every league role trains with (the kinds: ``light_league/learner_kinds.py``)."""

    kind: str = Field("mappo", min_length=1)
    """``mappo`` (the RL learner), ``regret`` (sampled regret minimisation with an average-strategy
    network; two-player zero-sum games, docs/regret.md), ``exact_br`` (exact best responses; Kuhn
    and Leduc poker), a plugin as ``package.module:ClassName``, or a name registered under the
    entry-point group ``light_league.learners``. A role may train with another kind:
    ``by_role.<role>.kind``."""
    mappo: MAPPOConfig = Field(default_factory=MAPPOConfig)
    """MAPPO hyper-parameters (see docs/mappo.md)."""
    regret: RegretConfig = Field(default_factory=RegretConfig)
    """Regret-learner settings (see docs/regret.md), read by the roles whose kind is ``regret``."""
    by_role: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Per league role (``main_agent``, ``main_exploiter``, ``league_exploiter``,
    ``best_response``, or a role the scheduler adds), the learner settings that differ for that
    role's learners: fields of ``mappo`` (or, for a plugin learner, of its ``options``), e.g.
    ``{main_exploiter: {entropy_coef: 0.003}}`` or, for a role of another kind, that kind and its
    fields (``{main_agent: {kind: regret, regret_steps: 32}}``; a nested section merges field by field:
    ``{recurrent: {chunk_length: 5}}`` keeps the cell): an exploiter's target is a best response
    (sharp), a main agent's a robust mixed policy. Checked against the scheduler's roles when the
    run starts. ``mappo_by_role``, its former name, is still read."""

    @model_validator(mode="before")
    @classmethod
    def _mappo_by_role_is_by_role(cls, data: Any) -> Any:
        if isinstance(data, dict) and "mappo_by_role" in data:
            data = dict(data)
            former = data.pop("mappo_by_role")
            if data.get("by_role") and former:
                raise ValueError(
                    "mappo_by_role is the former name of by_role and both are set; keep by_role alone"
                )
            data["by_role"] = data.get("by_role") or former
        return data

    def kind_for(self, role: str) -> str:
        """The learner kind of ``role``'s learners: ``by_role.<role>.kind``, else ``kind``."""
        return str((self.by_role.get(role) or {}).get("kind", self.kind))

    def _changes(self, role: str, kind: str) -> dict[str, Any]:
        """The role's fields for a learner of ``kind``: none when the role trains another kind."""
        if self.kind_for(role) != kind:
            return {}
        return {k: v for k, v in (self.by_role.get(role) or {}).items() if k != "kind"}

    def mappo_for(self, role: str) -> MAPPOConfig:
        """The MAPPO config of a learner of ``role``: ``mappo`` with the role's fields replaced."""
        return self._section_for(role, "mappo", self.mappo)

    def regret_for(self, role: str) -> RegretConfig:
        """The regret-learner config of ``role``: ``regret`` with the role's fields replaced."""
        return self._section_for(role, "regret", self.regret)

    def _section_for(self, role: str, kind: str, base: S) -> S:
        """``base`` (the ``kind`` section) with ``role``'s fields replaced, validated as its class."""
        changes = self._changes(role, kind)
        if not changes:
            return base
        merged = merge_settings(base.model_dump(), changes)
        return validate_section(type(base), merged, path=f"learner.by_role.{role}")

    def options_for(self, role: str) -> dict[str, Any]:
        """A plugin learner's options for ``role``: ``options`` with the role's fields replaced."""
        return merge_settings(self.options, self._changes(role, self.kind_for(role)))

    options: dict[str, Any] = Field(default_factory=dict)
    """Options of a plugin learner, validated by its ``Config`` section."""

    device: str = "auto"
    """Where learners update: ``auto`` (``cuda`` when there is a CUDA GPU: this machine, or on Ray
    any node; else ``cpu``), ``cpu``, ``cuda`` or ``cuda:N``. Rollout workers always act on the
    CPU; weights and checkpoints are always saved as CPU tensors (see docs/gpu.md)."""

    num_gpus: float | None = Field(None, gt=0.0, le=64.0)
    """On Ray, the GPUs each learner on a GPU asks for (fractional shares a GPU: 0.25 fits four
    learners on one); ``None``: one GPU shared by all learners (1 / number of learners)."""

    @field_validator("device")
    @classmethod
    def _device_name(cls, value: str) -> str:
        from light_league.utils.device import check_device_name

        return check_device_name(value)

    @model_validator(mode="after")
    def _learner_options_need_a_plugin(self) -> LearnerSection:
        if self.kind in ("mappo", "regret", "exact_br") and self.options:
            keys = ", ".join(sorted(self.options))
            raise ValueError(
                f"learner.options ({keys}) are read only by plugin learners, not by kind={self.kind}; "
                "set MAPPO hyper-parameters under learner.mappo (e.g. learner.mappo.lr=0.001)"
            )
        return self


def merge_settings(base: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``changes`` applied; a nested section (a dict in both) merges field by field."""
    merged = {**base, **changes}
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            merged[key] = {**base[key], **value}
    return merged
