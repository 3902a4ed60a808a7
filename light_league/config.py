"""The typed experiment config.

A YAML file (plus ``key.path=value`` overrides) is validated into :class:`ExperimentConfig`.
Each component receives only its own section. Problems are reported as one line with the
dotted path, the offending value and the fix, e.g.
``execution.num_wrokers: unknown key; did you mean num_workers?``.

The ``scheduler`` section is open-ended: ``name`` picks the scheduler (built-in, ``module:Class``
or entry point) and the remaining keys are validated against that scheduler's own ``Config``.
The same holds for ``env.options``, which go to the environment's factory unchanged.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import Field, field_validator

from light_league.algorithms.mappo.config import MAPPOConfig
from light_league.config_base import Section, validate_section
from light_league.errors import ConfigError
from light_league.tracking.config import LoggingConfig


class ExperimentSection(Section):
    """Run identity: name, seed, where run directories go."""

    name: str = Field("experiment", min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.\-]+$")
    """Run name; used in the run directory name."""
    seed: int = Field(0, ge=0, le=2**31 - 1)
    """Run seed; every worker's, learner's and scheduler's seed derives from it."""
    runs_root: str = "runs"
    """Where fresh run directories are created when ``--run-dir`` is not given."""


class EnvSection(Section):
    """The environment every game of the run is played in."""

    name: str = Field("battalion", min_length=1)
    """Environment name (``envs.env_names()``), ``pettingzoo:module:factory`` or ``openspiel:game``."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Keyword arguments for the environment factory (e.g. ``team_size: 2``)."""


class ExecutionSection(Section):
    """Where components run (local process or Ray actors) and how much work one round trip carries."""

    backend: Literal["local", "ray"] = "local"
    """``local``: everything in this process (deterministic under the seed); ``ray``: actors."""
    num_workers: int = Field(2, ge=1, le=1024)
    """Rollout workers; each owns batched environments."""
    envs_per_worker: int = Field(64, ge=1, le=65536)
    """Games each worker steps together in one numpy call."""
    steps_per_call: int = Field(64, ge=1, le=100_000)
    """Batched env steps a worker runs per round trip (games × steps per message)."""
    address: str | None = None
    """Ray cluster address: ``None`` starts a local instance, ``auto`` joins a running cluster."""
    num_cpus: int | None = Field(None, ge=1, le=4096)
    """CPUs for a locally started Ray instance (None: Ray's default)."""
    worker_cpus: float = Field(0.5, gt=0.0, le=64.0)
    """CPUs reserved per rollout-worker actor (fractional lets more actors than cores share)."""
    max_worker_restarts: int = Field(3, ge=0, le=1000)
    """Times a dead rollout worker is replaced before the run fails."""
    policy_cache_size: int = Field(16, ge=1, le=10_000)
    """Policies a worker keeps loaded at least (least recently used dropped first); every policy a round needs stays loaded, so the whole frozen population does when the tasks span it."""
    object_store_mb: int = Field(256, ge=64, le=1_000_000)
    """Object store size for a locally started Ray instance."""


class LearnerSection(Section):
    """The learner every league role trains with."""

    kind: str = Field("mappo", min_length=1)
    """``mappo`` (the RL learner), ``exact_br`` (exact best responses; Kuhn and Leduc poker), a plugin
    as ``package.module:ClassName``, or a name registered under the entry-point group
    ``light_league.learners``."""
    mappo: MAPPOConfig = Field(default_factory=MAPPOConfig)
    """MAPPO hyper-parameters (see docs/mappo.md)."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Options of a plugin learner, validated by its ``Config`` section."""


class EvaluationSection(Section):
    """The PSRO evaluation step: new members against every member, Elo, exact NashConv."""

    episodes_per_pair: int = Field(50, ge=1, le=1_000_000)
    """Games per ordered pairing when a new member meets every other member (per seat order)."""
    exact: Literal["auto", "never", "always"] = "auto"
    """Use exact expected payoffs instead of sampled games where the game allows (poker)."""
    nash_conv: Literal["auto", "never"] = "auto"
    """Compute the exact NashConv of the Nash-mixture policy where the game allows."""
    baselines: list[str] = Field(default_factory=list)
    """Fixed opponents added to the population at the start (Elo anchors), e.g. ``scripted_l1``."""
    elo_k: float = Field(32.0, gt=0.0, le=1000.0)
    """Elo K-factor."""


class LeagueSection(Section):
    """Population bookkeeping (AgentManager)."""

    pool_max_size: int = Field(500, ge=2, le=1_000_000)
    """Most frozen members kept (oldest non-baseline evicted first)."""
    payoff_decay: float = Field(0.99, gt=0.0, le=1.0)
    """AlphaStar's per-game decay of the win-rate counters that gate snapshots and PFSP."""


class StopSection(Section):
    """When the generation loop stops (the first budget reached wins)."""

    max_generations: int = Field(10, ge=1, le=1_000_000)
    """Stop after this many generations."""
    max_env_steps: int | None = Field(None, ge=1)
    """Stop once this many environment steps (training + evaluation) have run."""
    max_wall_s: float | None = Field(None, gt=0.0)
    """Stop at the end of the first generation past this wall time."""
    target_nash_conv: float | None = Field(None, ge=0.0)
    """Stop when the exact NashConv of the Nash mixture reaches this value."""


class ExperimentConfig(Section):
    """The whole experiment: one section per component."""

    experiment: ExperimentSection = Field(default_factory=ExperimentSection)
    env: EnvSection = Field(default_factory=EnvSection)
    execution: ExecutionSection = Field(default_factory=ExecutionSection)
    learner: LearnerSection = Field(default_factory=LearnerSection)
    scheduler: dict[str, Any] = Field(default_factory=lambda: {"name": "league"})
    """``name`` plus the chosen scheduler's own options."""
    evaluation: EvaluationSection = Field(default_factory=EvaluationSection)
    league: LeagueSection = Field(default_factory=LeagueSection)
    stop: StopSection = Field(default_factory=StopSection)
    logging: LoggingConfig = Field(default_factory=LoggingConfig)

    @field_validator("scheduler")
    @classmethod
    def _scheduler_has_name(cls, value: dict[str, Any]) -> dict[str, Any]:
        if not isinstance(value.get("name"), str) or not value["name"]:
            raise ValueError("needs a 'name' (league, psro, self_play, or package.module:ClassName)")
        return value

    @property
    def scheduler_name(self) -> str:
        return str(self.scheduler["name"])

    @property
    def scheduler_options(self) -> dict[str, Any]:
        return {k: v for k, v in self.scheduler.items() if k != "name"}

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def digest(self) -> str:
        """Short hash of the resolved config (written to the run manifest)."""
        blob = json.dumps(self.to_dict(), sort_keys=True).encode()
        return hashlib.sha256(blob).hexdigest()[:16]


# ---------------------------------------------------------------------------- loading


def parse_override(text: str) -> tuple[list[str], Any]:
    """``a.b.c=value`` → (["a", "b", "c"], value typed by YAML rules)."""
    if "=" not in text:
        raise ConfigError(f"override {text!r} must look like key.path=value")
    key, _, raw = text.partition("=")
    parts = key.strip().split(".")
    if not all(parts):
        raise ConfigError(f"override {text!r} has an empty key part")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError:
        value = raw
    return parts, value


def apply_overrides(raw: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    for text in overrides:
        parts, value = parse_override(text)
        node = raw
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ConfigError(f"override {text!r}: {part} is not a section")
            node = child
        node[parts[-1]] = value
    return raw


def read_yaml(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"config file {p} does not exist; pass an existing YAML file (see expr_configs/)")
    try:
        raw = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"config file {p} is not valid YAML{where}; fix the syntax there") from None
    except UnicodeDecodeError:
        raise ConfigError(f"config file {p} is not UTF-8 text; pass a YAML file") from None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(f"config file {p} must hold a mapping of sections, got {type(raw).__name__}")
    return raw


def load_config(path: str | Path | None = None, overrides: list[str] | None = None) -> ExperimentConfig:
    """Read, override and validate an experiment config."""
    raw = read_yaml(path) if path is not None else {}
    raw = apply_overrides(raw, list(overrides or []))
    source = str(path) if path is not None else ""
    cfg: ExperimentConfig = validate_section(ExperimentConfig, raw, source=source)
    return cfg
