"""The meta-solvers by name: the built-ins' table, their options, plugins, and the config's choice.

The solvers themselves are pure functions of a payoff matrix
(:mod:`light_league.game_theory.meta_solvers`, numpy and scipy only); this module names them as
the config does (``league.meta_solver``), validates their options with a
:class:`~light_league.config_base.Section` each, and resolves plugins: a function
``f(payoff, **options) -> mixture`` (its ``Config`` attribute, a Section, declares the options;
without one it takes none) or a :class:`MetaSolver`, named ``package.module:function`` or by an
entry point of ``light_league.meta_solvers`` (docs/plugins.md).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import Field

from light_league.config_base import Section
from light_league.errors import ConfigError
from light_league.game_theory.meta_solvers import (
    alpharank,
    least_exploitable,
    maxent_nash,
    nash,
    prd,
    qre,
    uniform,
)
from light_league.plugins import PluginKind, resolve, validate_options

MetaSolverFn = Callable[..., np.ndarray]


class NoOptions(Section):
    """This meta-solver takes no options."""


class MaxEntNashOptions(Section):
    """``maxent_nash``: which payoffs still count as optimal."""

    tol: float = Field(1e-9, gt=0.0, le=1e-3)
    """Slack (times the payoff scale) under the game value that still counts as an equilibrium payoff."""


class PRDOptions(Section):
    """``prd``: projected replicator dynamics (OpenSpiel's defaults)."""

    iterations: int = Field(100_000, ge=0, le=10_000_000)
    """Replicator steps (the average over all of them is returned)."""
    dt: float = Field(1e-3, gt=0.0, le=10.0)
    """Step size."""
    gamma: float = Field(1e-6, ge=0.0, lt=0.5)
    """Exploration floor: every probability stays at least this."""


class AlphaRankOptions(Section):
    """``alpharank``: single-population alpha-rank (OpenSpiel's defaults)."""

    m: int = Field(50, ge=2, le=100_000)
    """Size of the evolving population."""
    alpha: float = Field(100.0, ge=0.0, le=1e6)
    """Selection intensity (inverse temperature of the Fermi rule), per unit of win rate."""
    use_inf_alpha: bool = False
    """Take alpha to infinity (moves to a better strategy almost surely)."""
    inf_alpha_eps: float = Field(0.01, ge=0.0, le=1.0)
    """With ``use_inf_alpha``: mass kept on moves to a worse strategy (keeps the chain irreducible)."""


class QREOptions(Section):
    """``qre``: logit quantal response equilibrium."""

    temperature: float = Field(0.02, gt=0.0, le=100.0)
    """Temperature in units of win rate: a member whose expected win rate is ``temperature`` lower
    gets ``1/e`` of the weight; ``-> 0`` gives a Nash."""
    max_iterations: int = Field(100_000, ge=1, le=10_000_000)
    """Most solver steps (it converges at rate ``1 - temperature / (temperature + 2 max abs(A))`` per step)."""
    tol: float = Field(1e-10, gt=0.0, le=1e-2)
    """Stop once no probability moves by more than this in one step."""


class LeastExploitableOptions(Section):
    """``least_exploitable``: when the solve stops."""

    tol: float = Field(1e-6, gt=0.0, le=1e-1)
    """Stop once the mixture's NashConv is within this of the lowest any mixture of the population can have."""


@dataclass(frozen=True)
class MetaSolver:
    """A named meta-solver: ``fn(payoff, **options) -> mixture``, its options section, batching."""

    name: str
    fn: MetaSolverFn
    Config: type[Section] = NoOptions
    #: ``fn`` accepts a stack ``(..., n, n)`` and returns ``(..., n)``
    batched: bool = False
    #: ``fn`` also reads the game: ``fn(payoff, game=ExactGame, **options)``
    game: bool = False

    def __call__(self, payoff: np.ndarray, options: Section | None = None, **game: Any) -> np.ndarray:
        """The mixture for ``payoff`` with ``options`` (an instance of ``Config``; defaults when None);
        ``game`` (``game=ExactGame``) goes to a game solver only."""
        kwargs = dict(options or self.Config()) if self.Config is not NoOptions else {}
        if self.game:
            if not game:
                raise ValueError(f"meta-solver {self.name!r} needs the members' game (game=ExactGame)")
            kwargs.update(game)
        out = np.asarray(self.fn(payoff, **kwargs), dtype=np.float64)
        return out

    def solve_many(self, payoffs: np.ndarray, options: Section | None = None) -> np.ndarray:
        """Mixtures ``(k, n)`` for ``k`` matrices ``(k, n, n)`` (one call when batched, else a loop)."""
        if self.batched:
            return self(payoffs, options)
        return (
            np.stack([self(p, options) for p in payoffs])
            if len(payoffs)
            else np.zeros((0, payoffs.shape[-1]))
        )


META_SOLVERS: dict[str, MetaSolver] = {
    "nash": MetaSolver("nash", nash),
    "maxent_nash": MetaSolver("maxent_nash", maxent_nash, MaxEntNashOptions),
    "uniform": MetaSolver("uniform", uniform, batched=True),
    "prd": MetaSolver("prd", prd, PRDOptions, batched=True),
    "alpharank": MetaSolver("alpharank", alpharank, AlphaRankOptions),
    "qre": MetaSolver("qre", qre, QREOptions, batched=True),
    "least_exploitable": MetaSolver(
        "least_exploitable", least_exploitable, LeastExploitableOptions, game=True
    ),
}


def as_meta_solver(obj: object, name: str) -> MetaSolver | str:
    """``obj`` as a :class:`MetaSolver`, or the reason it is not one (for the plugin resolver)."""
    if isinstance(obj, MetaSolver):
        return obj
    if not callable(obj) or inspect.isclass(obj):
        return f"is {obj!r}, not a function f(payoff, **options) -> mixture or a MetaSolver"
    config = getattr(obj, "Config", NoOptions)
    if not (inspect.isclass(config) and issubclass(config, Section)):
        return f"has Config {config!r}; it must be a light_league.config_base.Section subclass"
    return MetaSolver(name, obj, config, batched=bool(getattr(obj, "batched", False)))


# ---------------------------------------------------------------------------- names in the config

#: entry-point group under which installed packages register meta-solvers
ENTRY_POINT_GROUP = "light_league.meta_solvers"


def _plugin_kind() -> PluginKind:
    return PluginKind(
        label="meta-solver",
        builtins=META_SOLVERS,
        group=ENTRY_POINT_GROUP,
        base=MetaSolver,
        base_path="light_league.agents.meta_solvers.MetaSolver",
        implement="f(payoff, **options) -> mixture",
        form="package.module:function",
        convert=as_meta_solver,
    )


def resolve_meta_solver(name: str) -> MetaSolver:
    """The meta-solver ``name`` refers to: built-in, ``package.module:function`` or entry point."""
    solver: MetaSolver = resolve(_plugin_kind(), name)  # built-ins and as_meta_solver give MetaSolvers
    return solver


def build_meta_solver(raw: dict[str, Any], *, path: str = "league.meta_solver") -> tuple[MetaSolver, Section]:
    """``(solver, options)`` from the config mapping ``{"name": ..., **options}``; one-line errors."""
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{path}.name: missing; give a meta-solver name ({', '.join(META_SOLVERS)})")
    solver = resolve_meta_solver(name)
    options = validate_options(solver.Config, {k: v for k, v in raw.items() if k != "name"}, path=path)
    return solver, options


def checked_mixture(solver: MetaSolver, mixture: np.ndarray, n: int) -> np.ndarray:
    """``mixture`` as a probability vector over ``n`` members, or a one-line error naming the solver."""
    p = np.asarray(mixture, dtype=np.float64).reshape(-1)
    if p.shape != (n,) or not np.all(np.isfinite(p)) or p.min() < -1e-9 or p.sum() <= 0.0:
        raise RuntimeError(
            f"meta-solver {solver.name!r} returned {np.round(p, 4).tolist()} for {n} members; "
            "it must return n non-negative numbers summing to 1"
        )
    p = np.clip(p, 0.0, None)
    return np.asarray(p / p.sum())
