"""What a ``--resume`` may change: a run's config compared with the stored one, key by key.

Budgets, where and how fast the run executes, what it logs and the probe may change
(:data:`RESUMABLE_KEYS`); any other key defines what the run computes, and its change is one line.
"""

from __future__ import annotations

import json
from typing import Any

from light_league.config import ExperimentConfig
from light_league.errors import ConfigError

#: config keys (and sections) a ``--resume`` may change: budgets, where and how fast the run
#: executes, what it logs and measures besides training (the probe), its name; every other key
#: defines what the run computes
RESUMABLE_KEYS = (
    "experiment.name",
    "experiment.runs_root",
    "execution",
    "learner.device",
    "learner.num_gpus",
    "stop",
    "logging",
    "evaluation.probe",
)
_UNSET = object()


def check_resume_changes(stored: ExperimentConfig, now: ExperimentConfig) -> None:
    """Compare a resume's config (stored plus this command's overrides) with the stored one.

    A change to a key outside :data:`RESUMABLE_KEYS` is a one-line ConfigError, "KEY cannot
    change on resume (run: X, now: Y)"; ``evaluation.baselines`` may gain baselines (they join the
    population when the run resumes), not lose any."""
    if stored.scheduler_name != now.scheduler_name:  # before either is resolved (imported)
        raise _cannot_change("scheduler.name", stored.scheduler_name, now.scheduler_name)
    change = forbidden_change(_comparable(stored), _comparable(now))
    if change is None:
        return
    key, old, new = change
    if key == "evaluation.baselines" and isinstance(old, list) and isinstance(new, list):
        raise ConfigError(
            f"evaluation.baselines cannot change on resume (run: {shown(old)}, now: {shown(new)}): "
            f"a baseline can be added, not removed ({', '.join(b for b in old if b not in new)} "
            "stays in the population); keep it in the list"
        )
    raise _cannot_change(key, old, new)


def forbidden_change(before: dict[str, Any], after: dict[str, Any]) -> tuple[str, Any, Any] | None:
    """The first key (sorted) of two flattened configs (:func:`flatten`) that differs and may not
    change on resume, with its two values (:data:`RESUMABLE_KEYS` may; ``evaluation.baselines`` may
    grow); None when there is none."""
    for key in sorted(before.keys() | after.keys()):
        old, new = before.get(key, _UNSET), after.get(key, _UNSET)
        if old == new or any(key == k or key.startswith(k + ".") for k in RESUMABLE_KEYS):
            continue
        if key == "evaluation.baselines" and isinstance(old, list) and isinstance(new, list):
            if set(old) <= set(new):
                continue
        return key, old, new
    return None


def _cannot_change(key: str, old: Any, new: Any) -> ConfigError:
    return ConfigError(
        f"{key} cannot change on resume (run: {shown(old)}, now: {shown(new)}); it changes what the "
        "run computes: drop the override, or start a new run with --config to change it"
    )


def _comparable(config: ExperimentConfig) -> dict[str, Any]:
    """The config as dotted keys, the scheduler's options with their defaults filled in."""
    from light_league.plugins import validate_options
    from light_league.scheduling.registry import resolve_scheduler

    raw = config.to_dict()
    scheduler_cls = resolve_scheduler(config.scheduler_name)
    options = validate_options(scheduler_cls.Config, config.scheduler_options, path="scheduler")
    raw["scheduler"] = {"name": config.scheduler_name, **options.model_dump(mode="json")}
    return flatten(raw)


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """A nested mapping as ``{"a.b.c": leaf}`` (an empty mapping is a leaf)."""
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    return {prefix: value}


def shown(value: Any) -> str:
    """A config value as a message shows it (``unset`` for a key one side lacks)."""
    if value is _UNSET:
        return "unset"
    return value if isinstance(value, str) else json.dumps(value, separators=(", ", ": "))
