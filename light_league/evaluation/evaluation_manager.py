"""EvaluationManager: the PSRO evaluation step and exact exploitability.

Every pairing of population members that has not been played yet (each new member against every
other member) is played for ``evaluation.episodes_per_pair`` games per seat order (one order when
the env's seats are symmetric), in parallel on the rollout workers. For OpenSpiel-checked games
(Kuhn, Leduc) the payoffs can instead be computed exactly, and the exact NashConv of the
Nash-mixture policy is reported.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

import numpy as np

import envs
from envs.base import EnvSpec
from light_league.algorithms.base import Policy
from light_league.data_buffer.stores import PolicyStore
from light_league.rollout.policies import policy_from_entry
from light_league.rollout.rollout_manager import RolloutManager
from light_league.types import Behaviour, MatchResult


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


class EvaluationTable(Protocol):
    """What the evaluation reads and writes of the population's payoff table (the AgentManager):
    which pairs are unplayed, which played ones need more games, and where results go."""

    def missing_pairs(self) -> list[tuple[str, str]]: ...

    def refinement_pairs(self, cap: float) -> list[tuple[str, str]]: ...

    def record_evaluation(self, results: list[MatchResult], behaviour: Mapping[str, Behaviour]) -> None: ...

    def record_exact(self, pairs: Mapping[tuple[str, str], float], games: int) -> None: ...


class MetaGame(Protocol):
    """A solved meta-game (the AgentManager's ``LeagueStats``): members and the meta-strategy."""

    ids: list[str]

    @property
    def meta_strategy(self) -> np.ndarray: ...


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
    ) -> None:
        self.rollout = rollout
        self.policy_server = policy_server
        self.spec = spec
        self.env_name = env_name
        #: adaptive evaluation: new pairings get ``adaptive_batch`` games, the budget's rest goes
        #: to the pairs :meth:`~light_league.agents.agent_manager.AgentManager.refinement_pairs` ranks first
        self.adaptive = episodes_per_pair == "adaptive"
        self.adaptive_budget, self.adaptive_cap = adaptive_budget, adaptive_cap
        self.episodes_per_pair = adaptive_batch if self.adaptive else int(episodes_per_pair)
        supported = exact_supported(env_name)
        if exact == "always" and not supported:
            from light_league.errors import ConfigError

            raise ConfigError(
                f"evaluation.exact=always needs one of {', '.join(envs.exact_games())} with open_spiel "
                f"installed, got env {env_name!r}; use exact=auto"
            )
        self.exact = supported and exact != "never"
        self.compute_nash_conv = supported and nash_conv == "auto"

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
        result = self.rollout.evaluate(pairings, progress)
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

        Every round re-ranks the played pairs (:meth:`~light_league.agents.agent_manager.AgentManager.refinement_pairs`) on the
        table as it stands and plays ``adaptive_batch`` more games (per seat order) of the top
        ones. Returns ``(games, env_steps)`` played.
        """
        per_pair = self.episodes_per_pair * (1 if self.spec.symmetric else 2)
        round_pairs = max(1, self.adaptive_budget // (4 * per_pair))
        games = steps = 0
        while (left := self.adaptive_budget - spent - games) >= per_pair:
            chosen = agents.refinement_pairs(self.adaptive_cap)[: min(round_pairs, left // per_pair)]
            if not chosen:
                break
            result = self.rollout.evaluate(self.pairings(chosen), progress)
            if not result.results:
                break
            agents.record_evaluation(result.results, result.behaviour)
            games, steps = games + len(result.results), steps + result.env_steps
        return games, steps

    def policies(self, ids: list[str]) -> dict[str, Policy]:
        entries = self.policy_server.pull({pid: 0 for pid in ids})
        return {pid: policy_from_entry(entries[pid], self.env_name) for pid in ids}

    def _exact_outcomes(self, pairings: list[tuple[str, str, int]]) -> dict[tuple[str, str], float]:
        """Seat 0's exact expected outcome for every pairing (one payoff-matrix pass)."""
        from light_league.algorithms.game_tree import expected_payoff_matrix

        rows = sorted({a for a, _, _ in pairings})
        cols = sorted({b for _, b, _ in pairings})
        pols = self.policies(sorted(set(rows) | set(cols)))
        values = expected_payoff_matrix(self.env_name, [pols[a] for a in rows], [pols[b] for b in cols])
        lo, hi = self.spec.score_range
        out = {}
        for a, b, _ in pairings:
            value = float(values[rows.index(a), cols.index(b)])
            out[(a, b)] = min(1.0, max(0.0, (value - lo) / (hi - lo)))
        return out

    def nash_conv(self, stats: MetaGame) -> float | None:
        """Exact NashConv of the meta-strategy's mixture policy (the Nash mixture unless
        ``league.meta_solver`` says otherwise); None where the game does not allow it."""
        if not self.compute_nash_conv:
            return None
        from light_league.algorithms.game_tree import nash_conv

        support = [(pid, p) for pid, p in zip(stats.ids, stats.meta_strategy.tolist()) if p > 1e-9]
        pols = self.policies([pid for pid, _ in support])
        value = float(nash_conv(self.env_name, [pols[pid] for pid, _ in support], [p for _, p in support]))
        return max(value, 0.0) if value > -1e-9 else value  # float noise below an exact 0
