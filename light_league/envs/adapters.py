"""Adapters: any PettingZoo env (``pettingzoo:<module>:<factory>``) and any two-player OpenSpiel
game (``openspiel:<game>``) as a light_league env.

Both get their batched face from :class:`light_league.envs.parallel.ParallelBatchedEnv` (a loop over single
games). Keyword arguments reserved for the adapter (not passed to the wrapped env): ``max_steps``
(truncation of the batched face), ``seats`` (agent indices per seat; default: first half, second
half), ``score_range`` and ``win_loss`` (how returns become ``outcome``: by default seat 0's
return mapped affinely from ``score_range`` to ``[0, 1]``, so the meta-game is the expected return;
``win_loss: true`` scores 1 / 0.5 / 0 by comparing the seats' returns). docs/plugins.md,
"Foreign environments", lists the options.

PettingZoo: the factory's result is used as is when it is a ``ParallelEnv``; an ``AECEnv`` goes
through ``pettingzoo.utils.conversions.aec_to_parallel`` when its metadata says
``is_parallelizable`` and through ``turn_based_aec_to_parallel`` otherwise (turn-based games).

OpenSpiel: :class:`OpenSpielParallelEnv` plays a ``pyspiel`` game. The observation is a dict
``{"observation": information_state_tensor (observation_tensor when the game has none),
"action_mask": legal actions}``; in sequential games the player not to move sees an all-zero
mask and its action is ignored; chance nodes are sampled from counter-based random streams, so a
seed fixes the deal. Rewards are the change in ``state.returns()``; ``outcome`` maps seat 0's
return from ``[min_utility, max_utility]`` to ``[0, 1]``.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import importlib
import inspect
import os
import pkgutil
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import gymnasium
import numpy as np
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils.conversions import (
    aec_to_parallel,
    turn_based_aec_to_parallel,
    turn_based_aec_to_parallel_wrapper,
)

from light_league.envs import _rng
from light_league.envs.parallel import ParallelBatchedEnv, spec_from_parallel

DEFAULT_MAX_STEPS = 1000
_ADAPTER_KEYS = ("max_steps", "seats", "score_range", "win_loss")


def _split_kwargs(kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    ours = {k: kwargs[k] for k in _ADAPTER_KEYS if k in kwargs}
    theirs = {k: v for k, v in kwargs.items() if k not in _ADAPTER_KEYS}
    return ours, theirs


def _seats(value: Any) -> tuple[tuple[int, ...], ...] | None:
    if value is None:
        return None
    seats = tuple(tuple(int(i) for i in seat) for seat in value)
    if len(seats) != 2:
        raise ValueError(f"seats must list the agent indices of exactly two seats, got {value!r}")
    return seats


def _score_range(value: Any) -> tuple[float, float]:
    try:
        lo, hi = (float(v) for v in value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"score_range must be two numbers (min, max), got {value!r}") from exc
    if not lo < hi:
        raise ValueError(f"score_range must have min < max, got {value!r}")
    return lo, hi


# ----------------------------------------------------------------------------------------------
# PettingZoo
# ----------------------------------------------------------------------------------------------


def parse_pettingzoo_name(name: str) -> tuple[str, str]:
    """``pettingzoo:<module>:<factory>`` -> (module, factory)."""
    parts = name.split(":")
    if len(parts) != 3 or parts[0] != "pettingzoo" or not parts[1] or not parts[2]:
        raise ValueError(
            f"bad PettingZoo env name {name!r}; write pettingzoo:<module>:<factory>, "
            "e.g. pettingzoo:pettingzoo.classic.rps_v2:parallel_env"
        )
    return parts[1], parts[2]


#: where these modules were before they moved into light_league (0.1.0, issue 55): a run directory
#: written then may name ``pettingzoo:envs.<module>:<factory>``
LEGACY_PACKAGE = "envs"


def current_module(module_name: str) -> str:
    """``module_name`` with the envs' old top-level path read as their place in the package:
    ``envs.matrix_games`` is ``light_league.envs.matrix_games`` (a module of this package, so a
    stored name keeps loading and never imports another installed ``envs``); any other name as
    given."""
    head, _, rest = module_name.partition(".")
    own = {info.name for info in pkgutil.iter_modules([os.path.dirname(__file__)])}
    if head == LEGACY_PACKAGE and rest and rest.split(".")[0] in own:
        return f"{__package__}.{rest}"
    return module_name


def _is_env_class(obj: object) -> bool:
    return (
        inspect.isclass(obj) and issubclass(obj, (ParallelEnv, AECEnv)) and obj not in (ParallelEnv, AECEnv)
    )


def check_env_factory(name: str, module: ModuleType, factory: object) -> None:
    """Refuse a factory that is not a PettingZoo env constructor, without calling it.

    Accepted: a ``ParallelEnv`` / ``AECEnv`` subclass, or a plain Python function defined in the
    named module's package (or in PettingZoo itself, whose ``parallel_env`` wrappers live in
    ``pettingzoo.utils``) when the named module holds such a subclass. So
    ``pettingzoo:os:system`` or ``pettingzoo:shutil:rmtree`` are refused before anything runs.
    """
    if _is_env_class(factory):
        return
    module_name = module.__name__
    why = ""
    if not inspect.isfunction(factory):
        why = f"a {type(factory).__name__}, not a Python function or env class"
    elif not any(_is_env_class(v) for v in vars(module).values()):
        why = f"module {module_name!r} defines no PettingZoo ParallelEnv/AECEnv subclass"
    else:
        home = str(getattr(factory, "__module__", "") or "")
        top = module_name.split(".")[0]
        if not (home == module_name or home.split(".")[0] in (top, "pettingzoo")):
            why = f"it is defined in {home!r}, outside the env's package {top!r}"
    if why:
        raise ValueError(
            f"env {name!r} does not name a PettingZoo env constructor ({why}); name the env class or "
            "its factory function, e.g. pettingzoo:pettingzoo.classic.rps_v2:parallel_env"
        )


def _import_failure(name: str, module_name: str, exc: ImportError) -> str:
    """Why env ``name`` cannot be imported, naming PettingZoo's extra where a family of its envs
    needs a package this install lacks (``pettingzoo.classic`` imports pygame)."""
    parts = module_name.split(".")
    missing = exc.name or ""
    if len(parts) >= 2 and parts[0] == "pettingzoo" and missing and not missing.startswith("pettingzoo"):
        family = parts[1]
        return (
            f"env {name!r} needs {missing!r}, which pettingzoo.{family} imports and this install lacks; "
            f"install PettingZoo's {family} extra: pip install 'pettingzoo[{family}]'"
        )
    return f"cannot import module {module_name!r} of env {name!r}: {exc}"


def make_pettingzoo_parallel(name: str, **kwargs: Any) -> ParallelEnv:
    """Build the PettingZoo env named ``pettingzoo:<module>:<factory>`` as a ``ParallelEnv``."""
    module_name, factory_name = parse_pettingzoo_name(name)
    module_name = current_module(module_name)
    _, env_kwargs = _split_kwargs(kwargs)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(_import_failure(name, module_name, exc)) from exc
    factory = getattr(module, factory_name, None)
    if not callable(factory):
        raise ValueError(f"module {module_name!r} has no callable {factory_name!r} (env {name!r})")
    check_env_factory(name, module, factory)  # before the call: a config value never calls any callable
    env = factory(**env_kwargs)
    if isinstance(env, ParallelEnv):
        return env
    if isinstance(env, AECEnv):
        if env.metadata.get("is_parallelizable", False):
            return aec_to_parallel(env)
        return turn_based_aec_to_parallel(env)
    raise ValueError(f"{name!r} built a {type(env).__name__}, not a PettingZoo ParallelEnv or AECEnv")


def make_pettingzoo_batched(name: str, num_envs: int, **kwargs: Any) -> ParallelBatchedEnv:
    """``num_envs`` copies of the PettingZoo env ``name`` behind the batched API."""
    ours, _ = _split_kwargs(kwargs)
    probe = make_pettingzoo_parallel(name, **kwargs)
    spec = spec_from_parallel(
        probe,
        name=name,
        seats=_seats(ours.get("seats")),
        turn_based=isinstance(probe, turn_based_aec_to_parallel_wrapper),  # the waiting player: no mask
        score_range=_score_range(ours.get("score_range", (-1.0, 1.0))),
        max_steps=int(ours.get("max_steps", DEFAULT_MAX_STEPS)),
        win_loss=bool(ours.get("win_loss", False)),
    )
    return ParallelBatchedEnv(functools.partial(make_pettingzoo_parallel, name, **kwargs), num_envs, spec)


# ----------------------------------------------------------------------------------------------
# OpenSpiel
# ----------------------------------------------------------------------------------------------


def parse_openspiel_name(name: str) -> str:
    """``openspiel:<game>`` -> the pyspiel game string (which may carry parameters)."""
    prefix, _, game = name.partition(":")
    if prefix != "openspiel" or not game:
        raise ValueError(
            f"bad OpenSpiel env name {name!r}; write openspiel:<game>, e.g. openspiel:kuhn_poker"
        )
    return game


@contextlib.contextmanager
def _stderr_silenced() -> Iterator[None]:
    """Send file descriptor 2 to /dev/null for the duration (C++ libraries write there directly)."""
    try:
        saved = os.dup(2)
    except OSError:
        yield
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def _load_game(game_string: str) -> Any:
    try:
        import pyspiel
    except ImportError as exc:
        raise ValueError("OpenSpiel envs need open_spiel; install it with `pip install open-spiel`") from exc
    short = game_string.split("(")[0].strip()
    known = list(pyspiel.registered_names())
    if short not in known:  # checked first: OpenSpiel prints every game name to stderr on a miss
        close = difflib.get_close_matches(short, known, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]}?" if close else ""
        raise ValueError(
            f"unknown OpenSpiel game {short!r}{hint} (python -c 'import pyspiel; print(pyspiel.registered_names())' lists them)"
        )
    try:
        with _stderr_silenced():  # OpenSpiel's C++ side also prints the error to fd 2
            game = pyspiel.load_game(game_string)
    except pyspiel.SpielError as exc:
        text = " ".join(str(exc).split())[:300]
        raise ValueError(f"OpenSpiel cannot load game {game_string!r}: {text}") from exc
    gtype = game.get_type()
    if game.num_players() != 2:
        raise ValueError(
            f"OpenSpiel game {game_string!r} has {game.num_players()} players; light_league needs 2"
        )
    if not (gtype.provides_information_state_tensor or gtype.provides_observation_tensor):
        raise ValueError(f"OpenSpiel game {game_string!r} provides no observation tensor to learn from")
    return game


class OpenSpielParallelEnv(ParallelEnv):
    """A two-player OpenSpiel game behind PettingZoo's Parallel API (see the module docstring)."""

    metadata = {"name": "openspiel_v0", "render_modes": []}

    def __init__(self, game: str, *, max_steps: int | None = None) -> None:
        self.game_string = game
        self._game = _load_game(game)
        gtype = self._game.get_type()
        self.turn_based = str(gtype.dynamics).endswith("SEQUENTIAL")
        self._info_state = bool(gtype.provides_information_state_tensor)
        shape = (
            self._game.information_state_tensor_shape()
            if self._info_state
            else self._game.observation_tensor_shape()
        )
        self._obs_size = int(np.prod(shape))
        self._num_actions = int(self._game.num_distinct_actions())
        self.max_steps = int(max_steps) if max_steps is not None else int(self._game.max_game_length())
        self.score_range = (float(self._game.min_utility()), float(self._game.max_utility()))
        self.possible_agents = ["player_0", "player_1"]
        self.agents: list[str] = []
        self._seed = _rng.fresh_seed()
        self._episode = -1
        self._state: Any = None
        self._returns = np.zeros(2)
        self._t = 0
        self._chance = 0

    @functools.cache  # noqa: B019 - one space object per agent, as PettingZoo asks
    def observation_space(self, agent: str) -> gymnasium.spaces.Dict:
        return gymnasium.spaces.Dict(
            {
                "observation": gymnasium.spaces.Box(
                    -np.inf, np.inf, shape=(self._obs_size,), dtype=np.float32
                ),
                "action_mask": gymnasium.spaces.Box(0, 1, shape=(self._num_actions,), dtype=np.int8),
            }
        )

    @functools.cache  # noqa: B019
    def action_space(self, agent: str) -> gymnasium.spaces.Discrete:
        return gymnasium.spaces.Discrete(self._num_actions)

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        if seed is not None:
            self._seed, self._episode = _rng.check_seed(seed), 0
        else:
            self._episode += 1
        self._state = self._game.new_initial_state()
        self._returns = np.zeros(2)
        self._t, self._chance = 0, 0
        self._resolve_chance()
        self.agents = list(self.possible_agents)
        return self._observe(), {a: {} for a in self.agents}

    def _resolve_chance(self) -> None:
        while self._state.is_chance_node():
            actions, probs = zip(*self._state.chance_outcomes(), strict=True)
            u = _rng.uniform(self._seed, self._episode, self._chance, 0)
            self._chance += 1
            k = min(int(np.searchsorted(np.cumsum(probs), u, side="right")), len(actions) - 1)
            self._state.apply_action(actions[k])

    def _mask(self, player: int) -> np.ndarray:
        mask = np.zeros(self._num_actions, dtype=np.int8)
        if self._state.is_terminal():
            return mask
        if self._state.is_simultaneous_node() or self._state.current_player() == player:
            mask[self._state.legal_actions(player)] = 1
        return mask

    def _observe(self) -> dict[str, Any]:
        out = {}
        for p, agent in enumerate(self.possible_agents):
            if self._info_state:
                vec = self._state.information_state_tensor(p)
            else:
                vec = self._state.observation_tensor(p)
            out[agent] = {"observation": np.asarray(vec, dtype=np.float32), "action_mask": self._mask(p)}
        return out

    def _apply(self, actions: dict[str, int]) -> None:
        movers = [0, 1] if self._state.is_simultaneous_node() else [self._state.current_player()]
        chosen = []
        for p in movers:
            agent = self.possible_agents[p]
            if agent not in actions:
                raise ValueError(f"{self.game_string}: {agent} must act now; pass an action for it")
            a = int(actions[agent])
            if a not in self._state.legal_actions(p):
                raise ValueError(
                    f"{self.game_string}: action {a} is illegal for {agent}; legal: {self._state.legal_actions(p)}"
                )
            chosen.append(a)
        if self._state.is_simultaneous_node():
            self._state.apply_actions(chosen)
        else:
            self._state.apply_action(chosen[0])

    def step(self, actions: dict[str, int]) -> tuple[dict[str, Any], ...]:
        if not self.agents:
            raise RuntimeError(f"{self.game_string}: step() called on a finished game; call reset() first")
        self._apply(actions)
        self._resolve_chance()
        self._t += 1
        returns = np.asarray(self._state.returns(), dtype=np.float64)
        delta, self._returns = returns - self._returns, returns
        terminal = bool(self._state.is_terminal())
        truncated = not terminal and self._t >= self.max_steps
        obs = self._observe()
        rew = {a: float(delta[p]) for p, a in enumerate(self.possible_agents)}
        term = dict.fromkeys(self.possible_agents, terminal)
        trunc = dict.fromkeys(self.possible_agents, truncated)
        infos: dict[str, dict[str, Any]] = {a: {} for a in self.possible_agents}
        if terminal or truncated:
            self.agents = []
        return obs, rew, term, trunc, infos


def make_openspiel_parallel(name: str, **kwargs: Any) -> OpenSpielParallelEnv:
    """The OpenSpiel game of ``openspiel:<game>`` as a Parallel env (``max_steps`` optional)."""
    ours, theirs = _split_kwargs(kwargs)
    if theirs:
        raise ValueError(
            f"unknown kwargs {sorted(theirs)} for {name!r}; put game parameters in the name, "
            "e.g. openspiel:goofspiel(num_cards=4)"
        )
    return OpenSpielParallelEnv(parse_openspiel_name(name), max_steps=ours.get("max_steps"))


def make_openspiel_batched(name: str, num_envs: int, **kwargs: Any) -> ParallelBatchedEnv:
    """``num_envs`` copies of the OpenSpiel game ``name`` behind the batched API."""
    probe = make_openspiel_parallel(name, **kwargs)
    ours, _ = _split_kwargs(kwargs)
    spec = spec_from_parallel(
        probe,
        name=name,
        seats=_seats(ours.get("seats")),
        turn_based=probe.turn_based,
        score_range=_score_range(ours.get("score_range", probe.score_range)),
        max_steps=probe.max_steps,
        win_loss=bool(ours.get("win_loss", False)),
    )
    return ParallelBatchedEnv(functools.partial(make_openspiel_parallel, name, **kwargs), num_envs, spec)
