"""Env names -> builders. Built-in envs are imported lazily by module path, so a broken or
missing optional env never stops the others from loading.

A built-in env module provides ``make_batched(num_envs, **kwargs)``, ``make_parallel(**kwargs)``
and optionally ``FIXED_POLICIES`` (name -> ``Callable[[EnvSpec], policy]``),
``FIXED_POLICY_RATINGS`` and ``REFERENCE_OPPONENT`` (the fixed policy every "vs baseline" figure
of a run is against, where the run has it as a baseline), or names the module that declares them
(``EnvEntry.policies``: battalion's scripted opponents live beside the env, which they import).
Where they depend on the env's options, the module adds a function of the options named after
the fact (``fixed_policies_for(**options)``, ``fixed_policy_ratings_for``, ``action_names_for``;
battalion's ``unit_classes`` adds opponents and actions), which the registry calls when given
the options. Adapters are named
``pettingzoo:<module>:<factory>`` and ``openspiel:<game>``; their only fixed policy is
``random``. ``light_league/envs/`` imports nothing from ``light_league``, so the did-you-mean helper is local.
"""

from __future__ import annotations

import difflib
import functools
import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from pettingzoo import ParallelEnv

from light_league.envs import adapters
from light_league.envs.base import BatchedEnv, EnvSpec
from light_league.envs.parallel import UniformRandomPolicy


@dataclass(frozen=True)
class EnvEntry:
    """A built-in env: the module that implements it and kwargs fixed by the name."""

    module: str
    fixed_kwargs: dict[str, Any] = field(default_factory=dict)
    #: the module that declares ``FIXED_POLICIES`` and ``FIXED_POLICY_RATINGS`` (None: ``module``)
    policies: str | None = None


BUILTIN_ENVS: dict[str, EnvEntry] = {
    "battalion": EnvEntry("light_league.envs.battalion", policies="light_league.envs.battalion_scripted"),
    "kuhn_poker": EnvEntry("light_league.envs.kuhn_poker"),
    "leduc_poker": EnvEntry("light_league.envs.leduc_poker"),
    "rps": EnvEntry("light_league.envs.matrix_games", {"game": "rps"}),
    "biased_rps": EnvEntry("light_league.envs.matrix_games", {"game": "biased_rps"}),
    "disc": EnvEntry("light_league.envs.matrix_games", {"game": "disc"}),
    "recall": EnvEntry("light_league.envs.recall"),
}
ADAPTER_PREFIXES = ("pettingzoo:", "openspiel:")


def _did_you_mean(name: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {close[0]}?" if close else ""


def _unknown_env(name: str) -> ValueError:
    valid = sorted(BUILTIN_ENVS)
    return ValueError(
        f"unknown env {name!r}{_did_you_mean(name, valid)} (valid: {', '.join(valid)}, "
        "pettingzoo:<module>:<factory>, openspiel:<game>)"
    )


def env_names() -> list[str]:
    """Names of the built-in envs (adapters take the prefixed forms as well)."""
    return sorted(BUILTIN_ENVS)


def _module(name: str, *, policies: bool = False) -> ModuleType:
    """The module of built-in env ``name`` (``policies``: the one that declares its fixed policies)."""
    entry = BUILTIN_ENVS.get(name)
    if entry is None:
        raise _unknown_env(name)
    path = (entry.policies or entry.module) if policies else entry.module
    try:
        return importlib.import_module(path)
    except ImportError as exc:
        raise ValueError(f"env {name!r} is listed but its module {path!r} cannot be imported: {exc}") from exc


def _kwargs(name: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    fixed = BUILTIN_ENVS[name].fixed_kwargs
    clash = sorted(set(fixed) & set(kwargs))
    if clash:
        raise ValueError(f"env {name!r} fixes {clash} by its name; remove them from the env kwargs")
    return {**kwargs, **fixed}


def _call(name: str, builder: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    try:
        return builder(*args, **kwargs)
    except TypeError as exc:
        raise ValueError(f"bad kwargs {sorted(kwargs)} for env {name!r}: {exc}") from exc


def make_batched(name: str, num_envs: int, **kwargs: Any) -> BatchedEnv:
    """``num_envs`` games of env ``name`` behind the batched API."""
    if name.startswith("pettingzoo:"):
        return adapters.make_pettingzoo_batched(name, num_envs, **kwargs)
    if name.startswith("openspiel:"):
        return adapters.make_openspiel_batched(name, num_envs, **kwargs)
    module = _module(name)
    return _call(name, module.make_batched, num_envs, **_kwargs(name, kwargs))


def make_spec(name: str, **kwargs: Any) -> EnvSpec:
    """The spec of env ``name`` with ``kwargs`` (one game is built to read it, then closed)."""
    env = make_batched(name, 1, **kwargs)
    try:
        return env.spec
    finally:
        env.close()


def make_parallel(name: str, **kwargs: Any) -> ParallelEnv:
    """One game of env ``name`` behind PettingZoo's Parallel API."""
    if name.startswith("pettingzoo:"):
        return adapters.make_pettingzoo_parallel(name, **kwargs)
    if name.startswith("openspiel:"):
        return adapters.make_openspiel_parallel(name, **kwargs)
    module = _module(name)
    return _call(name, module.make_parallel, **_kwargs(name, kwargs))


def _declared(module: ModuleType, fact: str, options: Mapping[str, Any] | None, default: Any) -> Any:
    """The module's ``FACT``, or what its ``fact_for(**options)`` says for these env options."""
    for_options = getattr(module, f"{fact.lower()}_for", None)
    if options and callable(for_options):
        return for_options(**options)
    return getattr(module, fact, default)


def _fixed_policies(
    env_name: str, options: Mapping[str, Any] | None = None
) -> dict[str, Callable[[EnvSpec], Any]]:
    if env_name.startswith(ADAPTER_PREFIXES):
        return {"random": UniformRandomPolicy}
    module = _module(env_name, policies=True)
    return dict(_declared(module, "FIXED_POLICIES", options, {"random": UniformRandomPolicy}))


#: the rating of a fixed opponent whose env declares none (the uniformly random player's)
RANDOM_POLICY_RATING = 800.0
#: the rating of a declared fixed opponent without a rating (a new agent's initial rating)
UNRATED_POLICY_RATING = 1000.0


def fixed_policy_ratings(env_name: str, options: Mapping[str, Any] | None = None) -> dict[str, float]:
    """The fixed Elo rating of each fixed opponent of ``env_name`` with env ``options`` (they
    anchor the rating scale): the env module's ``FIXED_POLICY_RATINGS``, ``random`` at 800 where
    it declares none."""
    names = _fixed_policies(env_name, options)
    declared: dict[str, float] = {}
    if not env_name.startswith(ADAPTER_PREFIXES):
        declared = dict(_declared(_module(env_name, policies=True), "FIXED_POLICY_RATINGS", options, {}))
    return {
        name: float(declared.get(name, RANDOM_POLICY_RATING if name == "random" else UNRATED_POLICY_RATING))
        for name in sorted(names)
    }


@functools.cache
def exact_game(env_name: str) -> tuple[str, Callable[[Any, int], str] | None] | None:
    """``(OpenSpiel game name, infostate_string)`` of an env that OpenSpiel plays exactly, else
    None: a built-in env whose spec declares its game (``EnvSpec.openspiel_game``) with the
    function that names an observation's information state, or an ``openspiel:<game>`` adapter
    env of a two-player zero-sum turn-based game that gives information-state tensors (its
    observations are those tensors: ``infostate_string`` None) with at most
    :data:`EXACT_HISTORIES` histories."""
    if env_name.startswith("openspiel:"):
        return _openspiel_exact(env_name)
    if env_name not in BUILTIN_ENVS:
        return None
    module = _module(env_name)
    game = make_spec(env_name).openspiel_game
    to_string = getattr(module, "infostate_string", None)
    if game is None or to_string is None:
        return None
    return game, to_string


@functools.cache
def _openspiel_exact(env_name: str) -> tuple[str, None] | None:
    from light_league.envs.adapters import parse_openspiel_name

    try:
        import pyspiel
    except ImportError:
        return None
    game_string = parse_openspiel_name(env_name)
    try:
        game = pyspiel.load_game(game_string)
    except pyspiel.SpielError:
        return None
    gtype = game.get_type()
    exact = (
        game.num_players() == 2
        and gtype.utility == pyspiel.GameType.Utility.ZERO_SUM
        and gtype.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL
        and gtype.provides_information_state_tensor
        and gtype.provides_information_state_string
    )
    return (game_string, None) if exact and _histories(game, EXACT_HISTORIES) is not None else None


#: the most histories (nodes of the game tree) an ``openspiel:<game>`` env may have to count as
#: exact: Leduc poker has 9,457, liars_dice with one four-sided die each 8,181
EXACT_HISTORIES = 100_000


def _histories(game: Any, cap: int) -> int | None:
    """The number of histories of ``game`` when at most ``cap``, else None (the walk stops there)."""
    count, stack = 0, [game.new_initial_state()]
    while stack:
        state = stack.pop()
        count += 1
        if count > cap:
            return None
        if state.is_terminal():
            continue
        outcomes = (
            [a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()
        )
        stack.extend(state.child(a) for a in outcomes)
    return count


def exact_games() -> list[str]:
    """The built-in envs whose specs name an OpenSpiel game (exact evaluation, exact best responses);
    ``openspiel:<game>`` envs of small two-player zero-sum turn-based games are exact too."""
    return [name for name in env_names() if exact_game(name) is not None]


def action_names(env_name: str, options: Mapping[str, Any] | None = None) -> tuple[str, ...] | None:
    """The names of env ``env_name``'s actions with env ``options`` (its module's
    ``ACTION_NAMES``), None where it declares none (adapters, the poker and matrix games: their
    actions are numbered)."""
    if env_name.startswith(ADAPTER_PREFIXES):
        return None
    names = _declared(_module(env_name), "ACTION_NAMES", options, None)
    return None if names is None else tuple(str(n) for n in names)


def reference_opponent(env_name: str) -> str | None:
    """The fixed opponent env ``env_name`` declares as the reference of every "vs baseline" figure
    (its module's ``REFERENCE_OPPONENT``: battalion's strongest scripted level), None where it
    declares none (adapters, poker)."""
    if env_name.startswith(ADAPTER_PREFIXES):
        return None
    declared = getattr(_module(env_name, policies=True), "REFERENCE_OPPONENT", None)
    return declared if isinstance(declared, str) and declared in _fixed_policies(env_name) else None


def fixed_policy_names(env_name: str, options: Mapping[str, Any] | None = None) -> list[str]:
    """Names of the fixed opponents env ``env_name`` ships with env ``options`` (scripted levels,
    random ...)."""
    return sorted(_fixed_policies(env_name, options))


def fixed_policy_needs(env_name: str, policy_name: str) -> str:
    """``"; it needs <options>"`` for a fixed opponent env ``env_name`` has only with some options
    (its module's ``FIXED_POLICY_NEEDS``: battalion's committed scripts need ``unit_classes``),
    else ``""``: the fix an error about an unknown fixed opponent names."""
    if env_name.startswith(ADAPTER_PREFIXES) or env_name not in BUILTIN_ENVS:
        return ""
    needs = getattr(_module(env_name, policies=True), "FIXED_POLICY_NEEDS", {}).get(policy_name)
    return f"; it needs {needs}" if needs else ""


def make_fixed_policy(env_name: str, policy_name: str, **env_kwargs: Any) -> Any:
    """Build fixed opponent ``policy_name`` of env ``env_name`` (``env_kwargs`` shape its spec)."""
    table = _fixed_policies(env_name, env_kwargs)
    if policy_name not in table:
        valid = sorted(table)
        raise KeyError(
            f"unknown fixed policy {policy_name!r} for env {env_name!r}{fixed_policy_needs(env_name, policy_name)}"
            f"{_did_you_mean(policy_name, valid)} (valid: {', '.join(valid)})"
        )
    return table[policy_name](make_spec(env_name, **env_kwargs))
