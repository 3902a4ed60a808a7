"""Scheduler names: the built-ins, ``package.module:ClassName`` plugins and entry-point plugins.

A scheduler is named in the config by one of

* a built-in name (``league``, ``psro``, ``self_play``; the keys of :data:`SCHEDULERS`);
* ``package.module:ClassName``, imported with :mod:`importlib` (never ``eval``);
* a name registered by an installed package under the entry-point group
  ``light_league.schedulers``.

Built-in names win over entry points of the same name. Every failure is a one-line
:class:`~light_league.errors.ConfigError` that names the value and the valid choices.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from light_league.config_base import Section
from light_league.errors import ConfigError, did_you_mean
from light_league.scheduling.league import LeagueScheduler
from light_league.scheduling.psro import PSROScheduler
from light_league.scheduling.self_play import SelfPlayScheduler
from light_league.scheduling.task_scheduler import TaskScheduler

SCHEDULERS: dict[str, type[TaskScheduler]] = {
    "league": LeagueScheduler,
    "psro": PSROScheduler,
    "self_play": SelfPlayScheduler,
}

#: entry-point group under which installed packages register schedulers
ENTRY_POINT_GROUP = "light_league.schedulers"


def resolve_scheduler(name: str) -> type[TaskScheduler]:
    """The scheduler class named ``name`` (built-in, ``module:Class`` or entry point)."""
    if name in SCHEDULERS:
        return SCHEDULERS[name]
    if ":" in name:
        return _check_class(_import_class(name), name)
    plugins = _entry_points()
    if name in plugins:
        try:
            loaded = plugins[name].load()
        except (ImportError, AttributeError) as exc:
            raise ConfigError(
                f"scheduler {name!r} (entry point {plugins[name].value!r}) cannot be loaded: {exc}; "
                f"reinstall the package that provides it"
            ) from exc
        return _check_class(loaded, name)
    valid = sorted({*SCHEDULERS, *plugins})
    raise ConfigError(
        f"unknown scheduler {name!r}{did_you_mean(name, valid)} (valid: {', '.join(valid)}, "
        f"or a plugin as 'package.module:ClassName')"
    )


def build_scheduler(
    name: str, raw_options: Mapping[str, Any], seed: int, *, path: str = "scheduler"
) -> TaskScheduler:
    """Resolve ``name``, validate ``raw_options`` with its ``Config`` and build the scheduler.

    ``path`` is the dotted config path of the options, used in error messages.
    """
    cls = resolve_scheduler(name)
    config = validate_options(cls.Config, raw_options, path=path)
    return cls(config, seed=seed)


def validate_options(config_cls: type[Section], raw_options: Mapping[str, Any], *, path: str) -> Section:
    """``config_cls`` built from ``raw_options``; a bad option is a one-line ConfigError with its dotted path."""
    if not isinstance(raw_options, Mapping):
        raise ConfigError(
            f"{path} options must be a mapping of option: value, got {type(raw_options).__name__}"
        )
    try:
        return config_cls.model_validate(dict(raw_options))
    except ValidationError as exc:
        raise _config_error(config_cls, exc, path) from None


def _config_error(config_cls: type[Section], exc: ValidationError, path: str) -> ConfigError:
    """The first validation error of ``exc`` as one line, in the style of ``light_league.config``."""
    error = exc.errors()[0]
    loc = [str(part) for part in error["loc"]]
    dotted = ".".join([path, *loc])
    if error["type"] == "extra_forbidden":
        valid = _field_names_at(config_cls, loc[:-1])
        hint = did_you_mean(loc[-1], valid) or (f"; valid keys: {', '.join(valid)}" if valid else "")
        return ConfigError(f"{dotted}: unknown key{hint}")
    value = error.get("input")
    shown = "{...}" if isinstance(value, dict) else repr(value)
    message = error["msg"].removeprefix("Value error, ").rstrip(".")
    return ConfigError(f"{dotted}: {shown} is invalid: {message}")


def _field_names_at(model: type[BaseModel], loc: list[str]) -> list[str]:
    """Field names of the (nested) section at ``loc`` inside ``model``."""
    for key in loc:
        field = model.model_fields.get(key)
        annotation = field.annotation if field is not None else None
        if not (inspect.isclass(annotation) and issubclass(annotation, BaseModel)):
            return []
        model = annotation
    return sorted(model.model_fields)


def _entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}


def _import_class(name: str) -> object:
    """Import ``package.module:ClassName``."""
    module_name, _, attribute = name.partition(":")
    if not module_name or not attribute or ":" in attribute:
        raise ConfigError(f"scheduler plugin {name!r} must look like 'package.module:ClassName'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(
            f"cannot import module {module_name!r} of scheduler {name!r}: {exc}; "
            f"install the plugin's package or add its folder to PYTHONPATH"
        ) from exc
    obj: object = module
    for part in attribute.split("."):
        if not hasattr(obj, part):
            found = [
                n for n, v in vars(module).items() if inspect.isclass(v) and issubclass(v, TaskScheduler)
            ]
            hint = did_you_mean(attribute, found)
            raise ConfigError(
                f"module {module_name!r} has no {attribute!r}{hint} "
                f"(scheduler classes there: {', '.join(sorted(found)) or 'none'})"
            )
        obj = getattr(obj, part)
    return obj


def _check_class(obj: object, name: str) -> type[TaskScheduler]:
    """``obj`` if it is a concrete TaskScheduler subclass with a Section Config, else ConfigError."""
    if not (inspect.isclass(obj) and issubclass(obj, TaskScheduler)):
        raise ConfigError(
            f"scheduler {name!r} is {obj!r}, not a subclass of "
            f"light_league.scheduling.TaskScheduler; subclass it and implement learners, next_tasks, after_training"
        )
    if inspect.isabstract(obj):
        missing = ", ".join(sorted(getattr(obj, "__abstractmethods__", ())))
        raise ConfigError(f"scheduler {name!r} is abstract: implement {missing}")
    if not (inspect.isclass(obj.Config) and issubclass(obj.Config, Section)):
        raise ConfigError(
            f"scheduler {name!r} has Config {obj.Config!r}; it must be a light_league.config_base.Section subclass"
        )
    return obj
