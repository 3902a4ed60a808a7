"""EvaluationManager: the PSRO evaluation step and exact exploitability.

Every pairing the population's table lacks (``EvaluationTable.missing_pairs``: each new member
against every other member of the active set, and the archive's sample) is played for ``evaluation.episodes_per_pair`` games per seat order (one order when
the env's seats are symmetric), in parallel on the rollout workers. For OpenSpiel-checked games
(Kuhn, Leduc) the payoffs can instead be computed exactly, and the exact NashConv of the
newest main agent and of the meta-strategy is reported (measurements only: nothing that trains
or selects reads them). With ``evaluation.shared_games`` the meta-solver reads a table estimated
from one set of uniformly random games shared by every cell (:mod:`.shared_games`), on any game.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import numpy as np

from light_league import envs
from light_league.algorithms.base import Policy
from light_league.algorithms.registry import build_policy
from light_league.data_buffer.stores import PolicyStore
from light_league.envs.base import BatchedEnv, EnvSpec
from light_league.evaluation.shared_games import SharedGames
from light_league.rollout.rollout_manager import RolloutManager
from light_league.types import Behaviour, MatchResult

if TYPE_CHECKING:
    from light_league.algorithms.game_tree import LeastExploitable


def exact_supported(env_name: str) -> bool:
    """Exact payoffs and NashConv for ``env_name``: its spec names an OpenSpiel game
    (``EnvSpec.openspiel_game``) and open_spiel is installed."""
    if envs.exact_game(env_name) is None:
        return False
    try:
        import pyspiel  # noqa: F401
    except ImportError:
        return False
    return True


def share_batches(priorities: list[float], room: list[float], total: int) -> list[int]:
    """``total`` batches shared in proportion to ``priorities`` (largest remainders first), at
    most ``room[i]`` to pair ``i``; what a full pair cannot take goes to the others."""
    p = np.asarray(priorities, dtype=np.float64)
    cap = np.maximum(np.asarray(room, dtype=np.float64), 0.0).astype(np.int64)
    out = np.zeros(p.size, dtype=np.int64)
    left = int(total)
    while left > 0:
        open_ = (out < cap) & (p > 0)
        if not open_.any():
            break
        want = np.where(open_, p, 0.0) * left / p[open_].sum()
        take = np.minimum(np.floor(want).astype(np.int64), cap - out)
        if take.sum() == 0:  # every share below one batch: one each, largest remainders first
            order = np.argsort(-want, kind="stable")[:left]
            take = np.zeros_like(out)
            take[order[open_[order]]] = 1
        out += take
        left -= int(take.sum())
    return out.tolist()


class EvaluationTable(Protocol):
    """What the evaluation reads and writes of the population's payoff table (the AgentManager):
    which pairs are unplayed, which played ones need more games, and where results go."""

    def missing_pairs(self) -> list[tuple[str, str]]: ...

    def refinement_priorities(self, cap: float) -> list[tuple[str, str, float]]: ...

    def evaluation_games(self, a: str, b: str) -> float: ...

    def record_evaluation(self, results: list[MatchResult], behaviour: Mapping[str, Behaviour]) -> None: ...

    def record_exact(self, pairs: Mapping[tuple[str, str], float], games: int) -> None: ...


class SolvedMetaGame(Protocol):
    """A solved meta-game (the AgentManager's ``LeagueStats``): members and the meta-strategy."""

    ids: list[str]

    @property
    def meta_strategy(self) -> np.ndarray: ...


class ExactNashConv(NamedTuple):
    """The exact NashConv of what a league hands over (None where not measured)."""

    meta: float | None
    """Of the meta-strategy's mixture policy."""
    main: float | None
    """Of the newest main agent (each main agent's newest snapshot, weighted)."""


@dataclass(frozen=True)
class MemberGame:
    """The members' policies in an exactly evaluated game (a game meta-solver's ``ExactGame``).

    A solve is kept by its ``tol``: the meta-solver and the reported output of one generation read
    the same least exploitable mixture without solving twice.
    """

    env_name: str
    policies: list[Policy]
    _solved: dict[float, LeastExploitable] = field(default_factory=dict, compare=False, repr=False)

    def solve(self, tol: float = 1e-6) -> LeastExploitable:
        """The members' least exploitable mixture (:func:`~light_league.algorithms.game_tree.least_exploitable`)."""
        if tol not in self._solved:
            from light_league.algorithms.game_tree import least_exploitable

            self._solved[tol] = least_exploitable(self.env_name, self.policies, tol=tol)
        return self._solved[tol]

    def least_exploitable(self, tol: float) -> np.ndarray:
        return self.solve(tol).weights


@dataclass
class EvaluationSummary:
    pairs: int
    games: int
    env_steps: int
    exact: bool


class EvaluationManager:
    def __init__(
        self,
        rollout: RolloutManager,
        policy_server: PolicyStore,
        spec: EnvSpec,
        env_name: str,
        *,
        episodes_per_pair: int | str,
        exact: str,
        nash_conv: str,
        adaptive_budget: int = 2000,
        adaptive_batch: int = 16,
        adaptive_cap: int = 1000,
        paired_games: bool = False,
        shared_games: int = 0,
        make_env: Callable[[int], BatchedEnv] | None = None,
        shared_seed: int = 0,
        shared_behaviour: str = "uniform",
    ) -> None:
        self.rollout = rollout
        self.policy_server = policy_server
        self.spec = spec
        self.env_name = env_name
        #: adaptive evaluation: new pairings get ``adaptive_batch`` games, the budget's rest goes
        #: to the pairs :meth:`EvaluationTable.refinement_priorities` ranks first
        self.adaptive = episodes_per_pair == "adaptive"
        self.adaptive_budget, self.adaptive_cap = adaptive_budget, adaptive_cap
        self.episodes_per_pair = adaptive_batch if self.adaptive else int(episodes_per_pair)
        #: both seat orders of a pairing play the same seeds (EpisodeLoop.evaluate's ``paired``)
        self.paired_games = paired_games
        supported = exact_supported(env_name)
        if exact == "always" and not supported:
            from light_league.errors import ConfigError

            raise ConfigError(
                f"evaluation.exact=always needs one of {', '.join(envs.exact_games())} with open_spiel "
                f"installed, got env {env_name!r}; use exact=auto"
            )
        self.exact = supported and exact != "never"
        self.compute_nash_conv = supported and nash_conv != "never"
        #: report the population's least exploitable mixture (and its NashConv) as the output
        self.least_exploitable = supported and nash_conv == "least_exploitable"
        self._members: dict[str, Policy] = {}
        self._game: tuple[tuple[str, ...], MemberGame] | None = None
        #: ``evaluation.shared_games``: the meta-solver's table from one set of shared games
        #: (played on first use: on the run's clock, once per process)
        self.shared_games = shared_games
        self._make_env = make_env
        self._shared_seed = shared_seed
        self._shared_behaviour = shared_behaviour
        self._shared: SharedGames | None = None
        if shared_games and make_env is None:
            raise ValueError("shared_games needs make_env")

    def pairings(self, missing: list[tuple[str, str]]) -> list[tuple[str, str, int]]:
        n = self.episodes_per_pair
        out = []
        for a, b in missing:
            out.append((a, b, n))
            if not self.spec.symmetric:
                out.append((b, a, n))
        return out

    def planned_games(self, agents: EvaluationTable) -> int:
        """Games the next :meth:`run` will play (or compute exactly)."""
        first = sum(n for _, _, n in self.pairings(agents.missing_pairs()))
        return max(first, self.adaptive_budget) if self.adaptive and not self.exact else first

    def run(
        self, agents: EvaluationTable, progress: Callable[[int], None] | None = None
    ) -> EvaluationSummary:
        """Play (or compute) every missing pairing of the population and record it."""
        missing = agents.missing_pairs()
        if not missing:
            return EvaluationSummary(0, 0, 0, self.exact)
        pairings = self.pairings(missing)
        if self.exact:
            values = self._exact_outcomes(pairings)
            agents.record_exact(values, self.adaptive_cap if self.adaptive else self.episodes_per_pair)
            if progress is not None:
                progress(sum(n for _, _, n in pairings))
            return EvaluationSummary(len(missing), 0, 0, True)
        result = self.rollout.evaluate(pairings, progress, paired=self.paired_games)
        agents.record_evaluation(result.results, result.behaviour)
        games, steps = len(result.results), result.env_steps
        if self.adaptive:
            more_games, more_steps = self._refine(agents, games, progress)
            games, steps = games + more_games, steps + more_steps
        return EvaluationSummary(len(missing), games, steps, False)

    def _refine(
        self, agents: EvaluationTable, spent: int, progress: Callable[[int], None] | None
    ) -> tuple[int, int]:
        """Spend the rest of the generation's budget in rounds of about a quarter of it each.

        Every round re-ranks the played pairs on the table as it stands
        (:meth:`EvaluationTable.refinement_priorities`) and shares the round's batches of
        ``adaptive_batch`` games (per seat order) among them in proportion to their priority
        (largest remainders first; none past a cell's cap by more than one batch). Stops early
        when no cell has a priority left. Returns ``(games, env_steps)`` played.
        """
        per_pair = self.episodes_per_pair * (1 if self.spec.symmetric else 2)
        round_batches = max(1, self.adaptive_budget // (4 * per_pair))
        games = steps = 0
        while (left := self.adaptive_budget - spent - games) >= per_pair:
            ranked = agents.refinement_priorities(self.adaptive_cap)
            room = [-(-(self.adaptive_cap - agents.evaluation_games(a, b)) // per_pair) for a, b, _ in ranked]
            batches = share_batches([p for _, _, p in ranked], room, min(round_batches, left // per_pair))
            chosen = [(a, b, k) for (a, b, _), k in zip(ranked, batches) if k > 0]
            if not chosen:
                break
            pairings = [
                (x, y, k * self.episodes_per_pair)
                for a, b, k in chosen
                for x, y in ((a, b),) + (() if self.spec.symmetric else ((b, a),))
            ]
            result = self.rollout.evaluate(pairings, progress, paired=self.paired_games)
            if not result.results:
                break
            agents.record_evaluation(result.results, result.behaviour)
            games, steps = games + len(result.results), steps + result.env_steps
        return games, steps

    def policies(self, ids: list[str]) -> dict[str, Policy]:
        entries = self.policy_server.pull({pid: 0 for pid in ids})
        return {
            pid: build_policy(entries[pid].weights, entries[pid].policy_meta, env_name=self.env_name)
            for pid in ids
        }

    def member_policies(self, ids: list[str]) -> dict[str, Policy]:
        """:meth:`policies` of frozen members, built once and kept until :meth:`keep_members` drops them."""
        cache = self._members
        missing = [pid for pid in ids if pid not in cache]
        if missing:
            cache.update(self.policies(missing))
        return {pid: cache[pid] for pid in ids}

    def keep_members(self, ids: list[str]) -> None:
        """Forget the kept policies (and shared-games weights) of members not in ``ids`` (dropped
        from the pool)."""
        for pid in set(self._members) - set(ids):
            del self._members[pid]
        if self._shared is not None:
            self._shared.forget(ids)

    def member_game(self, ids: list[str]) -> MemberGame:
        """The members ``ids`` as a :class:`MemberGame`, the same object until the ids change."""
        if self._game is None or self._game[0] != tuple(ids):
            pols = self.member_policies(ids)
            self._game = (tuple(ids), MemberGame(self.env_name, [pols[pid] for pid in ids]))
        return self._game[1]

    def game(self, ids: list[str]) -> dict[str, Any]:
        """What a game meta-solver reads besides the payoff table: ``{"game": MemberGame}``."""
        return {"game": self.member_game(ids)}

    @property
    def shared_table(self) -> Callable[[list[str]], np.ndarray] | None:
        """What :meth:`AgentManager.solve` reads as the meta-solver's table, or None (played table)."""
        return self._shared_rates if self.shared_games else None

    def _shared_rates(self, ids: list[str]) -> np.ndarray:
        """The members' win rates estimated from the shared games (:mod:`.shared_games`)."""
        if self._shared is None:
            assert self._make_env is not None
            self._shared = SharedGames(
                self._make_env, self.shared_games, self._shared_seed, behaviour=self._shared_behaviour
            )
        return self._shared.rates(self.member_policies(ids))

    @property
    def shared_effective_games(self) -> float | None:
        """The fewest effective games any member keeps in the shared games (None when off)."""
        return None if self._shared is None else self._shared.effective_games()

    def _exact_outcomes(self, pairings: list[tuple[str, str, int]]) -> dict[tuple[str, str], float]:
        """Seat 0's exact expected outcome for every pairing (one payoff-matrix pass)."""
        from light_league.algorithms.game_tree import expected_payoff_matrix

        rows = sorted({a for a, _, _ in pairings})
        cols = sorted({b for _, b, _ in pairings})
        pols = self.member_policies(sorted(set(rows) | set(cols)))
        values = expected_payoff_matrix(self.env_name, [pols[a] for a in rows], [pols[b] for b in cols])
        lo, hi = self.spec.score_range
        out = {}
        for a, b, _ in pairings:
            value = float(values[rows.index(a), cols.index(b)])
            out[(a, b)] = min(1.0, max(0.0, (value - lo) / (hi - lo)))
        return out

    def least_exploitable_mixture(self, ids: list[str]) -> tuple[dict[str, float], float]:
        """The members' least exploitable mixture (weights by id) and its exact NashConv; solved
        once per generation even when ``league.meta_solver`` is ``least_exploitable`` too."""
        result = self.member_game(ids).solve()
        return dict(zip(ids, result.weights.tolist(), strict=True)), result.nash_conv

    def exploitability(self, stats: SolvedMetaGame, main: Mapping[str, float]) -> ExactNashConv:
        """Exact NashConv of the two things a league hands over, where the game allows it: of
        the meta-strategy's mixture policy and of ``main`` (the newest snapshot of each main
        agent, weighted; None when empty). Both None where the game has no exact evaluator or
        ``evaluation.nash_conv`` is ``never``."""
        if not self.compute_nash_conv:
            return ExactNashConv(None, None)
        meta = self._nash_conv(dict(zip(stats.ids, stats.meta_strategy.tolist())))
        return ExactNashConv(meta, self._nash_conv(main) if main else None)

    def member_entry(self, member_id: str) -> tuple[Mapping[str, np.ndarray], Mapping[str, Any]]:
        """A member's ``(weights, policy_meta)`` as the PolicyServer keeps them."""
        entry = self.policy_server.pull({member_id: 0})[member_id]
        return entry.weights, entry.policy_meta

    def policy_nash_conv(self, policy: Policy) -> float | None:
        """Exact NashConv of one policy (None where the game has no exact evaluator or
        ``evaluation.nash_conv`` is ``never``)."""
        if not self.compute_nash_conv:
            return None
        from light_league.algorithms.game_tree import nash_conv

        return float(nash_conv(self.env_name, policy))

    def _nash_conv(self, weights: Mapping[str, float]) -> float:
        from light_league.algorithms.game_tree import nash_conv

        support = [(pid, p) for pid, p in weights.items() if p > 1e-9]
        pols = self.member_policies([pid for pid, _ in support])
        value = float(nash_conv(self.env_name, [pols[pid] for pid, _ in support], [p for _, p in support]))
        return max(value, 0.0) if value > -1e-9 else value  # float noise below an exact 0
