"""Exact evaluation of poker policies over the game tree: NashConv of policy mixtures, best responses, payoffs.

The game tree comes from OpenSpiel (enumerated once per game and cached as flat numpy arrays);
every computation afterwards is a handful of vectorised passes over the tree's levels, so the
NashConv of a mixture on Leduc poker costs a few milliseconds plus one batched ``log_probs``
call per policy over all information states.

Conventions:

* a **policy** is anything with ``log_probs(obs, mask, agent_idx)`` (the ``Policy`` protocol).
  It plays both seats: player ``p``'s decisions are asked with player ``p``'s observations;
* a **recurrent** policy (``hidden_dim`` > 0, ``step_log_probs``) runs along each history, as
  in a rollout: at an information state its hidden state is the one it left at the same
  player's previous decision on the path (zeros at the player's first), so it is asked level by
  level of the player's own decisions, one batched call per level (perfect recall makes that
  previous state the same for every node of an information state);
* a **mixture** is a list of policies with weights, shape ``(K,)`` (the same mixture in both
  seats, as for a league population) or ``(2, K)`` (one mixture per seat, as for PSRO with one
  population per player). Its behaviour at an information state weights each policy by the
  probability that the policy itself plays to that state (reach-weighted aggregation, as
  OpenSpiel's ``PolicyAggregator``), not by the weights alone;
* best-response ties go to the lowest action id (OpenSpiel's ``best_response_action`` does the
  same up to float round-off).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from light_league import envs
from light_league.algorithms.base import Policy, RecurrentPolicy, hidden_dim
from light_league.algorithms.tabular import TabularPolicy
from light_league.errors import unknown_name

_TIE_TOL = 1e-12
_DECISION, _CHANCE, _TERMINAL = 0, 1, 2


def _pyspiel() -> Any:
    try:
        return importlib.import_module("pyspiel")
    except ImportError:
        raise ImportError(
            "open_spiel is required for exact evaluation: pip install 'light_league[openspiel]'"
        ) from None


@dataclass(frozen=True)
class InfostateTable:
    """Every information state of each player: OpenSpiel's string, our obs, the legal mask."""

    strings: tuple[tuple[str, ...], tuple[str, ...]]
    obs: tuple[np.ndarray, np.ndarray]  #: per player (n_p, obs_dim) float32
    mask: tuple[np.ndarray, np.ndarray]  #: per player (n_p, A) bool


@dataclass(frozen=True)
class _Tree:
    """The game tree in breadth-first order (node 0 is the root)."""

    table: InfostateTable
    levels: tuple[np.ndarray, ...]  #: node ids by depth
    parent: np.ndarray  #: (M,)
    action: np.ndarray  #: (M,) action leading from the parent, -1 at the root
    kind: np.ndarray  #: (M,) _DECISION / _CHANCE / _TERMINAL
    player: np.ndarray  #: (M,) acting player at decision nodes, else -1
    info: np.ndarray  #: (M,) row in the acting player's InfostateTable, else -1
    chance_reach: np.ndarray  #: (M,) product of chance probabilities on the path
    edge_chance: np.ndarray  #: (M,) chance probability of the edge from the parent (1 if none)
    returns: np.ndarray  #: (M, 2) at terminals, else 0
    children: np.ndarray  #: (M, A) child of a decision node per action, -1 where illegal
    info_node: tuple[np.ndarray, np.ndarray]  #: per player, one node of each information state
    #: per player (n_p,): the player's information state at its previous decision on the path
    #: to each of its information states (-1 at its first decision)
    prev_info: tuple[np.ndarray, np.ndarray]
    own_depth: tuple[np.ndarray, np.ndarray]  #: per player (n_p,): the player's decisions before it


def _check_env(env_name: str) -> tuple[str, Callable[[Any, int], str] | None]:
    """The OpenSpiel game ``env_name``'s spec declares and its ``infostate_string``."""
    exact = envs.exact_game(env_name)
    if exact is None:
        raise unknown_name("exact-evaluation env", env_name, envs.exact_games())
    return exact


@functools.cache
def _tree(env_name: str) -> _Tree:
    game_name, infostate_string = _check_env(env_name)
    game = _pyspiel().load_game(game_name)
    walk = _Walk(game.num_distinct_actions())
    walk.run(game.new_initial_state())
    return walk.finish(infostate_string)


class _Walk:
    """Breadth-first enumeration of an OpenSpiel game into flat lists."""

    def __init__(self, num_actions: int) -> None:
        self.num_actions = num_actions
        self.parent: list[int] = []
        self.action: list[int] = []
        self.kind: list[int] = []
        self.player: list[int] = []
        self.info: list[int] = []
        self.edge_chance: list[float] = []
        self.depth: list[int] = []
        self.returns: list[list[float]] = []
        self.index: tuple[dict[str, int], dict[str, int]] = ({}, {})
        self.obs: tuple[list[list[float]], list[list[float]]] = ([], [])
        self.legal: tuple[list[list[int]], list[list[int]]] = ([], [])

    def run(self, root: Any) -> None:
        frontier, states = [0], {0: root}
        self._add(-1, -1, 1.0, 0)
        while frontier:
            nxt = []
            for n in frontier:
                for child, a, prob in self._expand(n, states.pop(n)):
                    m = self._add(n, a, prob, self.depth[n] + 1)
                    states[m] = child
                    nxt.append(m)
            frontier = nxt

    def _add(self, parent: int, action: int, prob: float, depth: int) -> int:
        self.parent.append(parent)
        self.action.append(action)
        self.edge_chance.append(prob)
        self.depth.append(depth)
        return len(self.parent) - 1

    def _expand(self, n: int, state: Any) -> list[tuple[Any, int, float]]:
        if state.is_terminal():
            self._record(n, _TERMINAL, -1, -1, list(state.returns()))
            return []
        if state.is_chance_node():
            self._record(n, _CHANCE, -1, -1, [0.0, 0.0])
            return [(state.child(a), a, p) for a, p in state.chance_outcomes()]
        p = state.current_player()
        key = state.information_state_string(p)
        if key not in self.index[p]:
            self.index[p][key] = len(self.obs[p])
            self.obs[p].append(state.information_state_tensor(p))
            self.legal[p].append(state.legal_actions(p))
        self._record(n, _DECISION, p, self.index[p][key], [0.0, 0.0])
        return [(state.child(a), a, 1.0) for a in state.legal_actions(p)]

    def _record(self, n: int, kind: int, player: int, info: int, returns: list[float]) -> None:
        assert len(self.kind) == n, "nodes are recorded in breadth-first order"
        self.kind.append(kind)
        self.player.append(player)
        self.info.append(info)
        self.returns.append(returns)

    def finish(self, infostate_string: Any) -> _Tree:
        table = self._table(infostate_string)
        parent, action = np.array(self.parent), np.array(self.action)
        depth, edge = np.array(self.depth), np.array(self.edge_chance)
        levels = tuple(np.flatnonzero(depth == d) for d in range(depth.max() + 1))
        chance_reach = edge.copy()
        for level in levels[1:]:
            chance_reach[level] *= chance_reach[parent[level]]
        kind, player, info = np.array(self.kind), np.array(self.player), np.array(self.info)
        children = np.full((len(parent), self.num_actions), -1, dtype=np.int64)
        decided = np.flatnonzero(kind[parent[1:]] == _DECISION) + 1
        children[parent[decided], action[decided]] = decided
        info_node = tuple(_first_node(player, info, p, len(table.strings[p]), depth) for p in (0, 1))
        history = [_own_history(levels, parent, player, info, p, info_node[p]) for p in (0, 1)]
        return _Tree(
            table=table,
            levels=levels,
            parent=parent,
            action=action,
            kind=kind,
            player=player,
            info=info,
            chance_reach=chance_reach,
            edge_chance=edge,
            returns=np.array(self.returns, dtype=np.float64),
            children=children,
            info_node=(info_node[0], info_node[1]),
            prev_info=(history[0][0], history[1][0]),
            own_depth=(history[0][1], history[1][1]),
        )

    def _table(self, infostate_string: Any) -> InfostateTable:
        strings, obs, mask = [], [], []
        for p in (0, 1):
            names = tuple(sorted(self.index[p], key=self.index[p].__getitem__))
            o = np.array(self.obs[p], dtype=np.float32)
            m = np.zeros((len(names), self.num_actions), dtype=bool)
            for i, legal in enumerate(self.legal[p]):
                m[i, legal] = True
            bad = [s for s, row in zip(names, o) if infostate_string and infostate_string(row, p) != s]
            if bad:
                raise RuntimeError(f"the env's obs encoding disagrees with OpenSpiel at {bad[0]!r}")
            if len({row.tobytes() for row in o}) < len(names):  # openspiel:<game> envs' tensors
                raise RuntimeError(
                    f"player {p}'s information-state tensors do not tell its {len(names)} "
                    "information states apart: no policy of the observation is evaluated exactly"
                )
            strings.append(names)
            obs.append(o)
            mask.append(m)
        return InfostateTable(strings=(strings[0], strings[1]), obs=(obs[0], obs[1]), mask=(mask[0], mask[1]))


def _first_node(player: np.ndarray, info: np.ndarray, p: int, n_info: int, depth: np.ndarray) -> np.ndarray:
    nodes = np.flatnonzero(player == p)
    first = np.full(n_info, -1, dtype=np.int64)
    first[info[nodes[::-1]]] = nodes[::-1]
    if (depth[nodes] != depth[first[info[nodes]]]).any():
        raise RuntimeError("an information state spans several depths; the level-wise passes need one depth")
    return first


def _own_history(
    levels: tuple[np.ndarray, ...],
    parent: np.ndarray,
    player: np.ndarray,
    info: np.ndarray,
    p: int,
    info_node: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Per information state of player ``p``: its previous own information state and own depth."""
    last = np.full(len(parent), -1, dtype=np.int64)  # p's latest information state above each node
    for level in levels[1:]:
        up = parent[level]
        last[level] = np.where(player[up] == p, info[up], last[up])
    nodes = np.flatnonzero(player == p)
    prev = last[info_node]
    if (last[nodes] != prev[info[nodes]]).any():
        raise RuntimeError(
            "an information state is reached from several own histories; the game lacks perfect recall"
        )
    depth = np.zeros(len(info_node), dtype=np.int64)
    for i in np.argsort(_node_depth(levels, info_node), kind="stable"):  # earlier decisions first
        depth[i] = 0 if prev[i] < 0 else depth[prev[i]] + 1
    return prev, depth


def _node_depth(levels: tuple[np.ndarray, ...], nodes: np.ndarray) -> np.ndarray:
    depth = np.zeros(sum(len(level) for level in levels), dtype=np.int64)
    for d, level in enumerate(levels):
        depth[level] = d
    return depth[nodes]


# ----------------------------------------------------------------------------- policies on the tree


def infostate_table(env_name: str) -> InfostateTable:
    """All information states of each player of ``env_name`` (enumerated once, then cached)."""
    return _tree(env_name).table


def _recurrent_log_probs(tree: _Tree, policy: RecurrentPolicy, p: int) -> np.ndarray:
    """(n_p, A) log-probabilities of a recurrent policy at player ``p``'s information states,
    each from the hidden state the policy left at the player's previous one."""
    obs, mask = tree.table.obs[p], tree.table.mask[p]
    prev, depth = tree.prev_info[p], tree.own_depth[p]
    after = np.zeros((len(obs), hidden_dim(policy)), dtype=np.float32)  # state after each decision
    out = np.zeros(mask.shape, dtype=np.float64)
    for d in range(int(depth.max()) + 1 if len(depth) else 0):
        rows = np.flatnonzero(depth == d)
        before = np.where(prev[rows, None] >= 0, after[np.maximum(prev[rows], 0)], 0.0).astype(np.float32)
        lp, after[rows] = policy.step_log_probs(
            obs[rows], mask[rows], np.zeros(len(rows), dtype=np.int64), before
        )
        out[rows] = lp
    return out


def _probs(tree: _Tree, policy: Policy) -> tuple[np.ndarray, np.ndarray]:
    """Per player (n_p, A) float64 action probabilities of ``policy`` at every information state."""
    t = tree.table
    obs, mask = np.concatenate(t.obs), np.concatenate(t.mask)
    if hidden_dim(policy):
        assert isinstance(policy, RecurrentPolicy)
        lp = np.concatenate([_recurrent_log_probs(tree, policy, p) for p in (0, 1)])
    else:
        lp = np.asarray(policy.log_probs(obs, mask, np.zeros(len(obs), dtype=np.int64)), dtype=np.float64)
    if lp.shape != mask.shape:
        raise ValueError(f"log_probs returned shape {lp.shape}, expected {mask.shape}")
    p = np.where(mask, np.exp(lp), 0.0)
    total = p.sum(axis=1)
    if not np.allclose(total, 1.0, atol=1e-4):
        row = int(np.argmax(np.abs(total - 1.0)))
        raise ValueError(
            f"policy probabilities over legal actions sum to {total[row]:.6f} at an information state, not 1"
        )
    p /= total[:, None]
    n0 = len(t.strings[0])
    return p[:n0], p[n0:]


def _own_reach(tree: _Tree, probs: np.ndarray, p: int) -> np.ndarray:
    """(K, M) probability that player ``p`` plays to each node, for ``probs`` (K, n_p, A)."""
    k, m = probs.shape[0], len(tree.parent)
    edge = np.ones((k, m))
    par = tree.parent[1:]
    mine = np.flatnonzero(tree.player[par] == p) + 1
    edge[:, mine] = probs[:, tree.info[tree.parent[mine]], tree.action[mine]]
    reach = edge
    for level in tree.levels[1:]:
        reach[:, level] *= reach[:, tree.parent[level]]
    return reach


def _mixture(tree: _Tree, policies: Sequence[Policy], weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Reach-weighted behaviour of the mixture, per player (n_p, A)."""
    tables = [_probs(tree, pol) for pol in policies]
    probs = tuple(np.stack([tab[p] for tab in tables]) for p in (0, 1))  # (K, n_p, A) per player
    reach = tuple(_own_reach(tree, probs[p], p) for p in (0, 1))
    return _mix(tree, (probs[0], probs[1]), (reach[0], reach[1]), weights)


def _mix(
    tree: _Tree,
    probs: tuple[np.ndarray, np.ndarray],
    reach: tuple[np.ndarray, np.ndarray],
    weights: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_mixture` from the members' action probabilities ``(K, n_p, A)`` and own reach ``(K, M)``."""
    out = []
    for p in (0, 1):
        w = weights[p][:, None] * reach[p][:, tree.info_node[p]]
        num = np.einsum("ki,kia->ia", w, probs[p])
        den = w.sum(axis=0)
        fallback = np.einsum("k,kia->ia", weights[p], probs[p]) / weights[p].sum()
        out.append(np.where(den[:, None] > 0, num / np.maximum(den, 1e-300)[:, None], fallback))
    return out[0], out[1]


def _weights(weights: Any, k: int) -> np.ndarray:
    """(2, K) non-negative weights, normalised per seat."""
    w = np.full((2, k), 1.0 / k) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape == (k,):
        w = np.stack([w, w])
    if w.shape != (2, k):
        raise ValueError(f"weights must have shape ({k},) or (2, {k}) for {k} policies, got {w.shape}")
    if (w < 0).any() or not np.isfinite(w).all() or (w.sum(axis=1) <= 0).any():
        raise ValueError(f"weights must be finite, non-negative and not all zero per seat, got {w.tolist()}")
    return w / w.sum(axis=1, keepdims=True)


def _as_list(policies: Policy | Sequence[Policy]) -> list[Policy]:
    if isinstance(policies, Policy):
        return [policies]
    out = list(policies)
    if not out:
        raise ValueError("need at least one policy")
    return out


# ----------------------------------------------------------------------------- tree passes


def _values(tree: _Tree, profile: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """(2,) expected returns when each player follows its row of ``profile``."""
    r0 = _own_reach(tree, profile[0][None], 0)[0]
    r1 = _own_reach(tree, profile[1][None], 1)[0]
    reach = tree.chance_reach * r0 * r1
    return reach @ tree.returns


def _backward(
    tree: _Tree,
    profile: tuple[np.ndarray, np.ndarray],
    p: int,
    decide: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray],
) -> np.ndarray:
    """(M,) player ``p``'s value at every node, backed up from the leaves: chance and the other
    player (``profile``) average over their children; at ``p``'s own nodes ``mine`` (one level at
    a time) ``decide(mine, q, cf_reach)`` turns the children's values ``q`` (len(mine), A) and the
    nodes' counterfactual reach (chance times the other player's) into the nodes' values."""
    o = 1 - p
    cf_reach = tree.chance_reach * _own_reach(tree, profile[o][None], o)[0]
    value = tree.returns[:, p].copy()
    edge = tree.edge_chance.copy()
    theirs = np.flatnonzero(tree.player[tree.parent[1:]] == o) + 1
    edge[theirs] = profile[o][tree.info[tree.parent[theirs]], tree.action[theirs]]
    for depth in range(len(tree.levels) - 2, -1, -1):
        nodes, below = tree.levels[depth], tree.levels[depth + 1]
        mine = nodes[tree.player[nodes] == p]
        if len(mine):
            q = np.where(tree.children[mine] >= 0, value[np.maximum(tree.children[mine], 0)], 0.0)
            value[mine] = decide(mine, q, cf_reach[mine])
        others = below[tree.player[tree.parent[below]] != p]
        if len(others):
            sums = np.bincount(
                tree.parent[others], weights=edge[others] * value[others], minlength=len(value)
            )
            par = np.unique(tree.parent[others])
            value[par] = sums[par]
    return value


def _best_response(tree: _Tree, profile: tuple[np.ndarray, np.ndarray], p: int) -> tuple[np.ndarray, float]:
    """(n_p,) best action of player ``p`` at each information state, and the best-response value."""
    n_info, n_act = tree.table.mask[p].shape
    best = np.zeros(n_info, dtype=np.int64)

    def decide(mine: np.ndarray, q: np.ndarray, reach: np.ndarray) -> np.ndarray:
        rows = tree.info[mine]
        agg = np.zeros((n_info, n_act))
        np.add.at(agg, rows, reach[:, None] * q)
        seen = np.unique(rows)
        best[seen] = _argmax_legal(agg[seen], tree.table.mask[p][seen])
        return q[np.arange(len(mine)), best[rows]]

    value = _backward(tree, profile, p, decide)
    return best, float(value[0])


def _argmax_legal(q: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Lowest legal action within ``_TIE_TOL`` (relative) of the best legal value, per row."""
    q = np.where(mask, q, -np.inf)
    top = q.max(axis=1, keepdims=True)
    near = q >= top - _TIE_TOL * np.maximum(1.0, np.abs(top))
    return np.argmax(near, axis=1)


def _tabular(tree: _Tree, profile: tuple[np.ndarray, np.ndarray]) -> TabularPolicy:
    t = tree.table
    return TabularPolicy(np.concatenate(t.obs), np.concatenate(profile).astype(np.float32))


def _uniform(tree: _Tree, p: int) -> np.ndarray:
    m = tree.table.mask[p].astype(np.float64)
    return m / m.sum(axis=1, keepdims=True)


# ----------------------------------------------------------------------------- public API


def mixture_policy(env_name: str, policies: Policy | Sequence[Policy], weights: Any = None) -> TabularPolicy:
    """The behaviour policy of the weighted mixture of ``policies`` as a :class:`TabularPolicy`."""
    tree, pols = _tree(env_name), _as_list(policies)
    return _tabular(tree, _mixture(tree, pols, _weights(weights, len(pols))))


def nash_conv(env_name: str, policies: Policy | Sequence[Policy], weights: Any = None) -> float:
    """Exact NashConv of the weighted mixture of ``policies`` (uniform weights when ``None``).

    The sum over players of what a best response gains over the mixture's own value; 0 exactly
    at a Nash equilibrium. ``weights``: ``(K,)`` for the same mixture in both seats or ``(2, K)``.
    """
    tree, pols = _tree(env_name), _as_list(policies)
    profile = _mixture(tree, pols, _weights(weights, len(pols)))
    on_policy = _values(tree, profile)
    return float(sum(_best_response(tree, profile, p)[1] - on_policy[p] for p in (0, 1)))


def exploitability(env_name: str, policies: Policy | Sequence[Policy], weights: Any = None) -> float:
    """NashConv / 2 (the mean over both players of the best-response gain)."""
    return nash_conv(env_name, policies, weights) / 2.0


@dataclass(frozen=True)
class LeastExploitable:
    """The mixture of a population that a best response exploits least (:func:`least_exploitable`)."""

    weights: np.ndarray  #: (K,) over the policies, the same in both seats
    nash_conv: float  #: the mixture's exact NashConv
    lower_bound: float  #: no mixture of these policies has a NashConv below this
    iterations: int  #: best responses computed (per seat)


def least_exploitable(
    env_name: str,
    policies: Sequence[Policy],
    *,
    tol: float = 1e-6,
    max_iterations: int = 1000,
    query_step: float = 0.3,
) -> LeastExploitable:
    """The weights over ``policies`` whose mixture has the lowest exact NashConv.

    This is the restricted distribution of Anytime PSRO (McAleer et al., 2022): the least
    exploitable mixture of the population against the *whole* game, where a Nash of the payoff
    table is only unexploitable within the population. For a zero-sum game, NashConv of the
    weights ``w`` is ``sum_p max_b u_p(b, mix_w)``, and each ``u_p(b, mix_w) = sum_i w_i u_p(b,
    pi_i)`` is linear in ``w`` (the reach-weighted mixture plays like the mixed strategy). The
    solve is a double oracle with one side restricted to the population: a linear program picks
    ``w`` against the best responses found so far, exact best responses are added per seat, until
    the best mixture's NashConv is within ``tol`` of the program's value (a lower bound over all
    mixtures). Deterministic: the same policies in the same order give the same weights.

    The best responses are computed at a point ``query_step`` of the way from the best weights
    so far to the program's answer, not at the answer itself (``query_step=1``): the answer jumps
    between corners of the simplex while the program has few constraints, and responses to a
    point nearer the best mixture cut more of what matters (in-out stabilisation of a
    cutting-plane method, Ben-Ameur and Neto, 2007). When such a point yields no new response,
    the next one is the answer itself, which either adds one or proves the answer optimal. The
    result is the same within ``tol``; on Leduc populations it takes fewer iterations, more so
    the larger the population (``bench/least_exploitable_solve.py``).
    """
    if not 0.0 < query_step <= 1.0:
        raise ValueError(
            f"query_step must be in (0, 1], got {query_step}; 1 responds at the program's answer"
        )
    from scipy.optimize import linprog

    tree, pols = _tree(env_name), _as_list(policies)
    if not np.allclose(tree.returns.sum(axis=1), 0.0, atol=1e-9):
        raise ValueError(f"least_exploitable needs a zero-sum game; {env_name!r} is not")
    k = len(pols)
    tables = [_probs(tree, pol) for pol in pols]
    probs = (np.stack([t[0] for t in tables]), np.stack([t[1] for t in tables]))
    reach = (_own_reach(tree, probs[0], 0), _own_reach(tree, probs[1], 1))
    # payoff[p] (M, K): seat p's return at each node, weighted by chance and member i's reach in seat 1-p
    payoff = [(tree.chance_reach * tree.returns[:, p])[:, None] * reach[1 - p].T for p in (0, 1)]
    rows: tuple[list[np.ndarray], list[np.ndarray]] = ([], [])
    seen: tuple[set[bytes], set[bytes]] = (set(), set())
    weights, bound = np.full(k, 1.0 / k), -np.inf
    best: tuple[float, np.ndarray] = (np.inf, weights)
    iterations = 0
    while iterations < max_iterations:
        iterations += 1
        profile = _mix(tree, probs, reach, np.stack([weights, weights]))
        value, new = 0.0, False
        for p in (0, 1):
            action, br_value = _best_response(tree, profile, p)
            value += br_value
            if action.tobytes() not in seen[p]:  # its row: u_p(b, pi_i) for every member i
                seen[p].add(action.tobytes())
                one_hot = np.eye(tree.table.mask[p].shape[1])[action]
                rows[p].append(_own_reach(tree, one_hot[None], p)[0] @ payoff[p])
                new = True
        value -= float(_values(tree, profile).sum())
        if value < best[0]:
            best = (value, weights)
        if best[0] - bound <= tol:
            break
        # min t0 + t1  s.t.  rows[p] @ w <= t_p,  sum(w) = 1,  w >= 0
        n0, n1 = len(rows[0]), len(rows[1])
        a_ub = np.zeros((n0 + n1, k + 2))
        a_ub[:n0, :k], a_ub[:n0, k] = np.stack(rows[0]), -1.0
        a_ub[n0:, :k], a_ub[n0:, k + 1] = np.stack(rows[1]), -1.0
        cost = np.zeros(k + 2)
        cost[k:] = 1.0
        eq = np.zeros((1, k + 2))
        eq[0, :k] = 1.0
        res = linprog(
            cost,
            a_ub,
            np.zeros(n0 + n1),
            eq,
            [1.0],
            bounds=[(0, None)] * k + [(None, None)] * 2,
            method="highs",
        )
        if res.status != 0:
            raise RuntimeError(f"least_exploitable: the linear program failed ({res.message})")
        bound = float(res.fun)
        answer = np.clip(res.x[:k], 0.0, None)
        answer /= answer.sum()
        weights = query_step * answer + (1.0 - query_step) * best[1] if new else answer
    return LeastExploitable(best[1], max(best[0], 0.0) if best[0] > -1e-9 else best[0], bound, iterations)


def _soft_q(tree: _Tree, profile: tuple[np.ndarray, np.ndarray], p: int, temperature: float) -> np.ndarray:
    """(n_p, A) player ``p``'s action values at each information state, conditioned on reaching
    it, when both players follow ``profile`` and ``p`` also earns ``temperature`` times the
    entropy of each of its own later decisions (the soft values an entropy bonus optimises)."""
    n_info, n_act = tree.table.mask[p].shape
    probs = profile[p]
    with np.errstate(divide="ignore", invalid="ignore"):
        entropy = -np.where(probs > 0, probs * np.log(probs), 0.0).sum(axis=1)
    num, den = np.zeros((n_info, n_act)), np.zeros(n_info)

    def decide(mine: np.ndarray, q: np.ndarray, reach: np.ndarray) -> np.ndarray:
        rows = tree.info[mine]
        np.add.at(num, rows, reach[:, None] * q)
        np.add.at(den, rows, reach)
        return (probs[rows] * q).sum(axis=1) + temperature * entropy[rows]

    _backward(tree, profile, p, decide)
    return num / np.maximum(den, 1e-300)[:, None]


@dataclass(frozen=True)
class SoftEquilibrium:
    """The profile that an entropy bonus of a given temperature pulls two learners to
    (:func:`soft_equilibrium`)."""

    policy: TabularPolicy  #: both seats' behaviour
    nash_conv: float  #: its exact NashConv: how far the bonus alone keeps play from a Nash
    residual: float  #: largest gap between a probability and the softmax of its values
    iterations: int


def soft_equilibrium(
    env_name: str,
    temperature: float,
    *,
    step: float | None = None,
    tol: float = 1e-6,
    max_iterations: int = 20000,
) -> SoftEquilibrium:
    """The fixed point of two learners that each maximise return plus ``temperature`` times the
    entropy of their own decisions: at every information state a seat plays the softmax of its
    soft action values over ``temperature``, values that count the entropy of its later decisions
    too (McKelvey and Palfrey's agent logit QRE, 1998, with the entropy-regularised values of
    soft policy iteration).

    This is where a policy-gradient learner with an entropy bonus settles at best, whatever else
    it does: its NashConv is the floor that the bonus sets. With advantages normalised, a bonus
    ``entropy_coef`` weighs like a temperature of ``entropy_coef`` times the advantages' standard
    deviation, in the game's payoff units (the learner logs that deviation as
    ``advantage_std``). Found by magnetic mirror descent towards the uniform policy (Sokota et
    al., 2023) on the exact tree: the logits move part of the way to the soft values over the
    temperature, both seats at once, until no probability is more than ``tol`` from its softmax.
    Each update is an extragradient step (values at a trial step, then the step from the same
    point with them), which stays stable where a plain step cycles. ``step`` is the step size in
    inverse payoff units (an update moves the logits ``step * temperature`` of the way); the
    default, one over the largest payoff, converged within ``max_iterations`` at every
    temperature tried from 0.003 to 1 on Kuhn and from 0.03 to 1 on Leduc (0.01 reaches a residual
    of 1e-3), in about ``1 / (step * temperature)`` iterations per factor e; ``residual`` says
    whether it did.
    Measurement only: nothing in training reads it.
    """
    if not temperature > 0.0:
        raise ValueError(f"temperature must be > 0, got {temperature}; 0 is a Nash equilibrium itself")
    if step is not None and not step > 0.0:
        raise ValueError(f"step must be > 0, got {step}; leave it out for one over the largest payoff")
    tree = _tree(env_name)
    step = 1.0 / float(np.abs(tree.returns).max()) if step is None else step
    rate = min(1.0, step * temperature)
    masks = tree.table.mask
    logits = [np.zeros(m.shape) for m in masks]

    def softmax(x: np.ndarray, m: np.ndarray) -> np.ndarray:
        z = np.where(m, x, -np.inf)
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def behaviour(lg: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        return softmax(lg[0], masks[0]), softmax(lg[1], masks[1])

    profile = behaviour(logits)
    residual, it = np.inf, 0
    while it < max_iterations:
        it += 1
        q = [_soft_q(tree, profile, p, temperature) for p in (0, 1)]
        target = [softmax(q[p] / temperature, masks[p]) for p in (0, 1)]
        residual = max(float(np.abs(target[p] - profile[p]).max()) for p in (0, 1))
        if residual <= tol:
            break
        # extragradient: values at a trial step, then the step from the same point with them
        trial = [(1.0 - rate) * logits[p] + rate * q[p] / temperature for p in (0, 1)]
        q = [_soft_q(tree, behaviour(trial), p, temperature) for p in (0, 1)]
        for p in (0, 1):
            logits[p] = (1.0 - rate) * logits[p] + rate * q[p] / temperature
        profile = behaviour(logits)
    on_policy = _values(tree, profile)
    nc = float(sum(_best_response(tree, profile, p)[1] - on_policy[p] for p in (0, 1)))
    return SoftEquilibrium(_tabular(tree, profile), nc, residual, it)


def best_response(
    env_name: str, opponent_policies: Policy | Sequence[Policy], weights: Any, player: int
) -> tuple[TabularPolicy, float]:
    """Exact deterministic best response of seat ``player`` to the opponents' mixture in the other seat.

    Returns a full-game :class:`TabularPolicy` (its rows for the other seat are uniform over the
    legal actions) and the best-response value for ``player``.
    """
    if player not in (0, 1):
        raise ValueError(f"player must be 0 or 1, got {player}")
    tree, pols = _tree(env_name), _as_list(opponent_policies)
    profile = _mixture(tree, pols, _weights(weights, len(pols)))
    best, value = _best_response(tree, profile, player)
    one_hot = np.eye(tree.table.mask[player].shape[1])[best]
    rows = (one_hot, _uniform(tree, 1)) if player == 0 else (_uniform(tree, 0), one_hot)
    return _tabular(tree, rows), value


def best_response_value(env_name: str, opponent_policy: Policy, player: int) -> float:
    """Value for seat ``player`` of a best response to ``opponent_policy`` playing the other seat."""
    return best_response(env_name, opponent_policy, None, player)[1]


def expected_payoff(env_name: str, policy_a: Policy, policy_b: Policy) -> float:
    """Exact expected return of seat 0 when ``policy_a`` plays seat 0 and ``policy_b`` seat 1."""
    return float(expected_payoff_matrix(env_name, [policy_a], [policy_b])[0, 0])


def expected_payoff_matrix(
    env_name: str, row_policies: Sequence[Policy], col_policies: Sequence[Policy]
) -> np.ndarray:
    """(R, C) exact expected return of seat 0 for row policy ``i`` in seat 0 against column policy
    ``j`` in seat 1 (one tree pass per policy and one matrix product)."""
    tree = _tree(env_name)
    rows = np.stack([_probs(tree, pol)[0] for pol in row_policies])
    cols = np.stack([_probs(tree, pol)[1] for pol in col_policies])
    r0, r1 = _own_reach(tree, rows, 0), _own_reach(tree, cols, 1)
    return (r0 * (tree.chance_reach * tree.returns[:, 0])) @ r1.T
