"""Named plugins: built-in names, ``package.module:ClassName`` strings and entry points.

Schedulers and learners are both chosen by name in the config. A name is

* a built-in (a key of the component's table, e.g. ``SCHEDULERS``);
* ``package.module:ClassName``, imported with :mod:`importlib` (never ``eval``);
* a name an installed package registers under the component's entry-point group
  (``light_league.schedulers``, ``light_league.learners``).

Built-ins win over entry points of the same name. Every failure is a one-line
:class:`~light_league.errors.ConfigError` that names the value and the valid choices.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from light_league.config_base import Section, parse_override, validate_section
from light_league.errors import ConfigError, did_you_mean


@dataclass(frozen=True)
class PluginKind:
    """What a kind of plugin is: its name in messages, built-ins, entry-point group and base class."""

    label: str  #: e.g. "scheduler"
    builtins: Mapping[str, Any]
    group: str  #: entry-point group
    base: type
    base_path: str  #: how users import the base class, for messages
    implement: str  #: what a subclass must implement, for messages
    #: further valid names handled outside the table (listed in messages only)
    also: tuple[str, ...] = ()
    #: how a plugin is written, for messages
    form: str = "package.module:ClassName"
    #: ``convert(obj, name)`` -> the plugin, or a string saying why ``obj`` is not one; None: a
    #: class checked against ``base`` (with a ``Config`` section)
    convert: Callable[[object, str], Any] | None = None


def entry_points(group: str) -> dict[str, importlib.metadata.EntryPoint]:
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=group)}


def resolve(kind: PluginKind, name: str) -> Any:
    """The class (or, with ``kind.convert``, the object) ``name`` refers to, checked against ``kind``."""
    if name in kind.builtins:
        return kind.builtins[name]
    if ":" in name:
        return _check(kind, _import(kind, name), name)
    plugins = entry_points(kind.group)
    if name in plugins:
        try:
            loaded = plugins[name].load()
        except (ImportError, AttributeError) as exc:
            raise ConfigError(
                f"{kind.label} {name!r} (entry point {plugins[name].value!r}) cannot be loaded: {exc}; "
                "reinstall the package that provides it"
            ) from exc
        return _check(kind, loaded, name)
    valid = sorted({*kind.builtins, *kind.also, *plugins})
    raise ConfigError(
        f"unknown {kind.label} {name!r}{did_you_mean(name, valid)} (valid: {', '.join(valid)}, "
        f"or a plugin as '{kind.form}')"
    )


def validate_options(config_cls: type[Section], raw: Any, *, path: str) -> Section:
    """``config_cls`` built from ``raw``; a bad option is a one-line ConfigError with its dotted path."""
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{path} options must be a mapping of option: value, got {type(raw).__name__}")
    section: Section = validate_section(config_cls, dict(raw), path=path)
    return section


def _import(kind: PluginKind, name: str) -> object:
    module_name, _, attribute = name.partition(":")
    if not module_name or not attribute or ":" in attribute:
        raise ConfigError(f"{kind.label} plugin {name!r} must look like '{kind.form}'")
    try:
        module = _import_module(module_name)
    except ImportError as exc:
        raise ConfigError(
            f"cannot import module {module_name!r} of {kind.label} {name!r}: {exc}; "
            "install the plugin's package or add its folder to PYTHONPATH"
        ) from exc
    obj: object = module
    for part in attribute.split("."):
        if not hasattr(obj, part):
            found = sorted(n for n, v in vars(module).items() if _candidate(kind, n, v))
            raise ConfigError(
                f"module {module_name!r} has no {attribute!r}{did_you_mean(attribute, found)} "
                f"({kind.label} classes there: {', '.join(found) or 'none'})"
            )
        obj = getattr(obj, part)
    return obj


def _import_module(module_name: str) -> ModuleType:
    """``module_name`` imported; ``examples.<module>``, where light_league's examples were before
    they moved into the package (issue 55; a run directory written then names them so), is
    ``light_league.examples.<module>`` when no top-level ``examples`` package provides it."""
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        head, _, rest = module_name.partition(".")
        missing = exc.name or ""  # the module itself or a package above it, not one it imports
        if head != "examples" or not rest or not (module_name + ".").startswith(missing + "."):
            raise
        try:
            return importlib.import_module(f"light_league.examples.{rest}")
        except ModuleNotFoundError:
            raise exc from None


def _candidate(kind: PluginKind, name: str, obj: object) -> bool:
    """Could ``obj`` be a plugin of ``kind`` (for the names listed in a message)?"""
    if kind.convert is not None:
        return not name.startswith("_") and not isinstance(kind.convert(obj, name), str)
    return inspect.isclass(obj) and issubclass(obj, kind.base)


def _check(kind: PluginKind, obj: object, name: str) -> Any:
    if kind.convert is not None:
        converted = kind.convert(obj, name)
        if isinstance(converted, str):
            raise ConfigError(f"{kind.label} {name!r} {converted}")
        return converted
    if not (inspect.isclass(obj) and issubclass(obj, kind.base)):
        raise ConfigError(
            f"{kind.label} {name!r} is {obj!r}, not a subclass of {kind.base_path}; "
            f"subclass it and implement {kind.implement}"
        )
    if inspect.isabstract(obj):
        missing = ", ".join(sorted(getattr(obj, "__abstractmethods__", ())))
        raise ConfigError(f"{kind.label} {name!r} is abstract: implement {missing}")
    config_cls = getattr(obj, "Config", None)
    if not (inspect.isclass(config_cls) and issubclass(config_cls, Section)):
        raise ConfigError(
            f"{kind.label} {name!r} has Config {config_cls!r}; it must be a light_league.config_base.Section subclass"
        )
    return obj


# ---------------------------------------------------------------------------- trust boundary

#: packages whose modules a stored config may name without confirmation (installed dependencies
#: and this project, its envs included); see docs/trust.md
TRUSTED_PACKAGES = ("pettingzoo", "light_league")


def imported_by(config: Any) -> list[tuple[str, str, str]]:
    """``(key, value, module)`` for each name in ``config`` that imports a module by path.

    Built-in names and entry points (registered by installed packages) import nothing by path;
    ``package.module:ClassName`` plugins (schedulers, learners, league roles, meta-solvers) and
    ``pettingzoo:<module>:<factory>`` envs outside
    :data:`TRUSTED_PACKAGES` do.
    """
    out = []
    named = [
        ("scheduler.name", config.scheduler_name),
        ("learner.kind", config.learner.kind),
        ("league.meta_solver.name", str(config.league.meta_solver.get("name", ""))),
    ]
    roles = config.scheduler_options.get("roles")
    if isinstance(roles, dict):  # the league scheduler's added roles: ``scheduler.roles.<label>.kind``
        named += [
            (f"scheduler.roles.{label}.kind", entry["kind"])
            for label, entry in roles.items()
            if isinstance(entry, dict) and isinstance(entry.get("kind"), str)
        ]
    for key, value in named:
        if ":" in value:
            out.append((key, value, value.partition(":")[0]))
    env = config.env.name
    if env.startswith("pettingzoo:"):
        from light_league.envs.adapters import current_module  # envs.<module>: the envs' old path

        module = current_module(env.split(":")[1]) if env.count(":") >= 2 else ""
        if module.split(".")[0] not in TRUSTED_PACKAGES:
            out.append(("env.name", env, module))
    return out


def check_stored_imports(
    config: Any, overrides: list[str], *, source: str, command: str = "--resume", uploads: bool = True
) -> None:
    """A run directory is data: refuse a stored config that would import a module by path unless
    the same ``key=value`` is given again on the command line (the user's confirmation).
    ``command`` names the command in the message; ``uploads``: also refuse a W&B upload that only
    the stored config asks for (a command that logs)."""
    confirmed = set()
    for text in overrides:
        parts, value = parse_override(text)
        key = ".".join(parts)
        if key == "league.meta_solver" and isinstance(value, dict):  # the mapping form
            key, value = "league.meta_solver.name", value.get("name")
        elif key == "league.meta_solver":  # the shorthand ``league.meta_solver=NAME``
            key = "league.meta_solver.name"
        confirmed.add((key, str(value)))
    for key, value, module in imported_by(config):
        if (key, value) not in confirmed:
            raise ConfigError(
                f"{source} sets {key}={value}, which imports module {module!r}; a run directory is data "
                f"and {command} imports no module it names: if you trust that module, confirm it by adding "
                f"{key}={value} to the command (see docs/trust.md)"
            )
    wandb = config.logging.wandb
    if uploads and wandb.mode == "online" and ("logging.wandb.mode", "online") not in confirmed:
        raise ConfigError(
            f"{source} sets logging.wandb.mode=online (entity {wandb.entity!r}, project {wandb.project!r}), which "
            f"uploads the run's metrics; a run directory is data and {command} sends nothing it names: confirm it "
            "by adding logging.wandb.mode=online to the command, or add logging.wandb.mode=disabled (see docs/trust.md)"
        )
