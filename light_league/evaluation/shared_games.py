"""One set of played games for every cell of the payoff table: importance-weighted shared games.

A played payoff table spends its games cell by cell, so each cell's error falls with the games
*that* cell got. Here every cell reads the same games instead. ``N`` games are played once with a
behaviour policy that picks uniformly among the legal actions, and the games are kept. Member
``i`` in seat 0 against member ``j`` in seat 1 is then estimated from all ``N`` of them, each
weighted by how much likelier the two members make its decisions than the behaviour policy did
(off-policy evaluation by importance sampling)::

    V0[i, j] = 1/N * sum over games g of  w0_i(g) * w1_j(g) * return0(g)
    ws_k(g)  = product over seat s's decisions in g of  pi_k(a | o) / mu(a | o)

With ``mu`` the uniform choice that played the games (``behaviour="uniform"``, the default) the
estimate is unbiased for any members (the behaviour policy gives every legal action a chance), and
its error falls with ``N`` for every cell at once. With ``behaviour="estimated"``, ``mu(a | o)`` is
instead the share of the pool's games that, having reached the same history (every earlier
decision and action, and this decision's observation), took ``a``: the behaviour policy estimated
from the games themselves (regression importance sampling; Hanna, Niekum and Stone, "Importance
Sampling Policy Evaluation with an Estimated Behavior Policy", ICML 2019). The luck of the
behaviour's action draws then cancels and only the luck of the env's chance is left, so where
histories recur, as in short games, the error falls several times (Kuhn: three to five); the
estimate is consistent (the shares converge to ``mu``) but no longer exactly unbiased, and a
history played once counts its own actions as certain. It reads only what a played table
reads, sampled play, plus each member's own action probabilities, which every feed-forward policy
has; no game tree and no exact value. Its spread grows with the number of decisions a seat makes
in one game (each one multiplies the weight), so it suits short games (poker: a few decisions a
hand) and not long ones (battalion: hundreds). :attr:`SharedGames.effective_games` says how far
the weights have spread: the fewest effective games any member keeps in either seat.

Games are stored compressed: decision rows (observation, legal actions, position in the team)
once each, and each distinct game (its decisions and actions) once, with how often it was played
and the sum of its seat-0 returns. A member's weights are computed once per member.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from light_league.algorithms.base import Policy
    from light_league.envs.base import BatchedEnv

#: games stepped together while the pool is played
BATCH = 4096
#: how the weights divide out the behaviour policy (``evaluation.shared_games_behaviour``)
BEHAVIOURS = ("uniform", "estimated")


class SharedGames:
    """``games`` uniformly random games of one env, and every member pair's value read from them.

    ``make_env(num_envs)`` builds the batched env (the run's options applied); ``seed`` fixes
    the games (the same seed plays the same games, so a resumed run reads the same pool).
    """

    def __init__(
        self,
        make_env: Callable[[int], BatchedEnv],
        games: int,
        seed: int,
        *,
        behaviour: str = "uniform",
    ) -> None:
        if games < 1:
            raise ValueError(f"shared games: need at least 1 game, got {games}")
        if behaviour not in BEHAVIOURS:
            raise ValueError(f"shared games: behaviour {behaviour!r} is not one of {', '.join(BEHAVIOURS)}")
        self.games = int(games)
        rows, hist, counts, ret_sum, outcome_sum, spec = _play(make_env, self.games, seed)
        self.rows_obs, self.rows_mask, self.rows_agent = rows
        #: (H, L) int64 decision codes per distinct game (-1 past its last decision)
        self.histories = hist
        self.counts = counts  #: (H,) how often each distinct game was played
        self.return_sum = ret_sum  #: (H,) the sum of its seat-0 returns
        self.outcome_sum = outcome_sum  #: (H,) the sum of its seat-0 outcomes (in [0, 1])
        self.score_range = spec.score_range
        self.num_actions = spec.num_actions
        self.behaviour = behaviour
        #: (H, L) the log-probability the weights divide by, per decision of each distinct game
        self._log_mu: np.ndarray
        if behaviour == "estimated":
            self._log_mu = _estimated_log_mu(hist, counts, self.num_actions)
        else:  # the uniform choice's log-probability at each decision's row
            known = -np.log(self.rows_mask.sum(axis=1))
            valid = hist >= 0
            self._log_mu = np.where(valid, known[np.where(valid, hist, 0) // (2 * self.num_actions)], 0.0)
        self._log_weights: dict[str, np.ndarray] = {}

    @property
    def distinct_games(self) -> int:
        return int(self.histories.shape[0])

    def log_weights(self, member: str, policy: Policy) -> np.ndarray:
        """(2, H) the member's log importance weight per distinct game, seat 0 and seat 1 (kept)."""
        if member not in self._log_weights:
            logp = np.asarray(
                policy.log_probs(self.rows_obs, self.rows_mask, self.rows_agent), dtype=np.float64
            )
            h = self.histories
            valid = h >= 0
            code = np.where(valid, h, 0)
            seat = code % 2
            action = (code // 2) % self.num_actions
            row = code // (2 * self.num_actions)
            ratio = np.where(valid, logp[row, action] - self._log_mu, 0.0)
            self._log_weights[member] = np.stack(
                [np.where(seat == s, ratio, 0.0).sum(axis=1) for s in (0, 1)]
            )
        return self._log_weights[member]

    def forget(self, keep: Sequence[str]) -> None:
        """Drop the kept weights of members not in ``keep``."""
        for member in set(self._log_weights) - set(keep):
            del self._log_weights[member]

    def values(self, policies: Mapping[str, Policy], per_game: np.ndarray | None = None) -> np.ndarray:
        """(n, n) seat 0's expected return, row member in seat 0 and column member in seat 1
        (``per_game``: another (H,) sum per distinct game to average instead of the returns)."""
        w = np.stack([self.log_weights(m, p) for m, p in policies.items()], axis=-1)  # (2, H, n)
        w0, w1 = np.exp(w[0]), np.exp(w[1])
        total = self.return_sum if per_game is None else per_game
        return np.asarray((w0 * total[:, None]).T @ w1 / self.games)

    def rates(self, policies: Mapping[str, Policy]) -> np.ndarray:
        """(n, n) win rates as a played table holds them: the row member's expected outcome
        (the env's ``outcome``, in ``[0, 1]``) against the column member, both seats weighted
        alike, 0.5 on the diagonal."""
        # centred on a draw: the weights' mean is 1 only on average, and an uncentred outcome
        # would carry that noise (for poker this is exactly the chips mapped from score_range)
        outcome = 0.5 + self.values(policies, self.outcome_sum - 0.5 * self.counts)
        rates = 0.5 * (outcome + 1.0 - outcome.T)
        np.fill_diagonal(rates, 0.5)
        return np.asarray(np.clip(rates, 0.0, 1.0))

    def effective_games(self, members: Sequence[str] | None = None) -> float:
        """The fewest effective games (``(sum w)^2 / sum w^2`` over the played games) any of
        ``members`` (default: every kept one) has in either seat; ``games`` when none is kept."""
        keys = list(self._log_weights) if members is None else list(members)
        if not keys:
            return float(self.games)
        w = np.exp(np.stack([self._log_weights[m] for m in keys], axis=-1))  # (2, H, n)
        c = self.counts[None, :, None]
        ess = (c * w).sum(axis=1) ** 2 / np.maximum((c * w * w).sum(axis=1), 1e-300)
        return float(ess.min())


def _estimated_log_mu(hist: np.ndarray, counts: np.ndarray, num_actions: int) -> np.ndarray:
    """(H, L) each decision's behaviour log-probability estimated from the pool itself: the share
    of the games that reached the same history (every earlier decision and action, and this
    decision's row and seat) that took this action; 0 past a game's last decision."""
    out = np.zeros(hist.shape)
    # a decision's row and seat without its action (codes are (row * A + action) * 2 + seat),
    # as -2 and below, apart from the codes and the -1 padding
    row_key = -((hist // (2 * num_actions)) * 2 + hist % 2) - 2
    for t in range(hist.shape[1]):
        on = hist[:, t] >= 0
        if not on.any():
            break
        taken = hist[on, : t + 1]  # the history up to and including this decision's action
        reached = np.concatenate([hist[on, :t], row_key[on, t : t + 1]], axis=1)  # up to its row
        c = counts[on]
        _, by_taken = _distinct_rows(taken)
        _, by_reached = _distinct_rows(reached)
        n_taken = np.bincount(by_taken, weights=c)[by_taken]
        n_reached = np.bincount(by_reached, weights=c)[by_reached]
        out[on, t] = np.log(n_taken / n_reached)
    return out


def _play(
    make_env: Callable[[int], BatchedEnv], games: int, seed: int
) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], np.ndarray, np.ndarray, np.ndarray, np.ndarray, Any]:
    """Play ``games`` uniformly random games; return the distinct decision rows, the distinct
    games as decision codes, their counts, return sums and outcome sums, and the env's spec."""
    env = make_env(min(BATCH, games))
    spec = env.spec
    try:
        seat_of, in_team = spec.seat_of(), spec.index_in_team()
        rng = np.random.default_rng(seed)
        b = env.num_envs
        step = env.reset(seed=seed)
        game_id = np.arange(b)
        next_id = b
        obs, mask, agent, action, seat, owner = [], [], [], [], [], []
        ended_ids, ended_returns, ended_outcomes = [], [], []
        ended = 0
        while ended < games:
            actions = np.zeros((b, spec.n_agents), dtype=np.int64)
            for n in range(spec.n_agents):
                legal = step.action_mask[:, n]
                pick = (rng.random(legal.shape) * legal).argmax(axis=1)
                actions[:, n] = pick
                on = np.nonzero(step.active[:, n])[0]
                obs.append(step.obs[on, n])
                mask.append(legal[on])
                agent.append(np.full(len(on), in_team[n]))
                action.append(pick[on])
                seat.append(np.full(len(on), seat_of[n]))
                owner.append(game_id[on])
            step = env.step(actions)
            done = np.nonzero(step.done)[0]
            ended_ids.append(game_id[done])
            ended_returns.append(step.seat_return[done, 0].astype(np.float64))
            ended_outcomes.append(step.outcome[done].astype(np.float64))
            ended += len(done)
            game_id[done] = next_id + np.arange(len(done))
            next_id += len(done)
    finally:
        env.close()
    ids = np.concatenate(ended_ids)[:games]
    by_game = np.argsort(ids)  # game g is the g-th smallest id that ended in time
    sorted_ids = ids[by_game]
    owners = np.concatenate(owner)
    index = np.minimum(np.searchsorted(sorted_ids, owners), len(ids) - 1)
    keep = sorted_ids[index] == owners  # the decisions of those games only
    o = np.concatenate(obs)[keep].astype(np.float32)
    m = np.concatenate(mask)[keep].astype(bool)
    k = np.concatenate(agent)[keep].astype(np.int64)
    a = np.concatenate(action)[keep].astype(np.int64)
    s = np.concatenate(seat)[keep].astype(np.int64)
    # distinct decision rows: observation, legal actions and team position, byte for byte
    keys = np.concatenate(
        [o.view(np.uint8).reshape(len(o), -1), m.view(np.uint8), k[:, None].astype(np.uint8)], axis=1
    )
    first, row = _distinct_rows(keys)
    code = (row * spec.num_actions + a) * 2 + s
    # each game's decisions in the order they were taken (a stable sort by game)
    order = np.argsort(index[keep], kind="stable")
    game, code = index[keep][order], code[order]
    starts = np.searchsorted(game, np.arange(len(ids)))
    position = np.arange(len(game)) - starts[game]
    longest = int(position.max()) + 1 if len(game) else 1
    per_game = np.full((len(ids), longest), -1, dtype=np.int64)
    per_game[game, position] = code
    firsts, which = _distinct_rows(per_game)
    hist = per_game[firsts]
    counts = np.bincount(which, minlength=len(hist)).astype(np.float64)
    ret_sum = np.bincount(which, weights=np.concatenate(ended_returns)[:games][by_game], minlength=len(hist))
    outcome_sum = np.bincount(
        which, weights=np.concatenate(ended_outcomes)[:games][by_game], minlength=len(hist)
    )
    rows = (o[first], m[first], k[first])
    return rows, hist, counts, ret_sum, outcome_sum, spec


def _distinct_rows(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(first, inverse)`` of the distinct rows of the 2-D integer array ``x``: the index of each
    distinct row's first occurrence, and each row's distinct-row number. Rows are hashed to one
    integer (fast), and the hash is checked: equal hashes must be equal rows, else the slow exact
    ``np.unique(axis=0)`` decides."""
    x = np.ascontiguousarray(x)
    if len(x) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if x.dtype == np.uint8:  # bytes: eight to a word, so the hash has an eighth of the columns
        pad = -x.shape[1] % 8
        if pad:
            x = np.concatenate([x, np.zeros((len(x), pad), dtype=np.uint8)], axis=1)
        x = x.view(np.int64)
    mult = np.random.default_rng(0).integers(1, 2**62, size=x.shape[1], dtype=np.int64) | 1
    with np.errstate(over="ignore"):
        h = (x.astype(np.int64) * mult).sum(axis=1)
    _, first, inverse = np.unique(h, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    if not np.array_equal(x[first][inverse], x):
        _, first, inverse = np.unique(x, axis=0, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
    return first.astype(np.int64), inverse.astype(np.int64)
