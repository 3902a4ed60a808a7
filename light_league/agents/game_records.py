"""What the league's games leave behind: the match log, AlphaStar's decayed win rates of training
games, the evaluation payoff table (exact cells marked), the sequential Elo and behaviour
diversity. The AgentManager records every game here; each part keeps and checks its own state."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from light_league.agents.elo_registry import EloRegistry
from light_league.agents.match_database import MatchDatabase
from light_league.agents.payoff_table import PayoffTable
from light_league.game_theory.diversity import DiversityTracker, TrajectoryBatch
from light_league.game_theory.elo import RATING_ANCHOR
from light_league.game_theory.payoff import DecayedPayoff
from light_league.run_dir import RunDir
from light_league.types import Behaviour, MatchResult
from light_league.utils.atomic import atomic_write_json


class GameRecords:
    def __init__(
        self,
        run_dir: RunDir,
        *,
        payoff_decay: float,
        elo_k: float,
        baselines: dict[str, float],
        num_actions: int,
    ) -> None:
        self.matches = MatchDatabase(db_path=str(run_dir.matches))
        self.training = DecayedPayoff(decay=payoff_decay)
        self.payoff_table = PayoffTable()
        self._elo_path = run_dir.elo
        self.elo = EloRegistry(run_dir.elo, k_factor=elo_k, baselines=baselines)
        self.diversity = DiversityTracker(n_actions=num_actions)
        #: games recorded in the current generation, by kind
        self.this_generation: dict[str, int] = defaultdict(int)

    def record(self, results: list[MatchResult], *, kind: str, generation: int, session: int) -> None:
        """Games into the match log (tagged) and the decayed win rates. The log takes one line per
        group of games alike in everything it records (players, seat and, for training games, the
        generation that drew the opponent): ``games`` of them, ``outcome`` their mean score."""
        if not results:
            return
        train = kind == "train"
        tag = {"generation": generation, "kind": kind, "session": session}
        self.matches.record_many(
            [
                {
                    "a": a,
                    "b": b,
                    "outcome": total / games,
                    "games": games,
                    "seat": seat,
                    **tag,
                    **({"drawn_generation": drawn} if train else {}),
                }
                for (a, b, seat, drawn), (total, games) in _groups(results, train).items()
            ]
        )
        self.this_generation[kind] += len(results)
        for (a, b), outcomes in _by_pair(results).items():
            self.training.update_many(a, b, outcomes)

    def record_evaluation(
        self, results: list[MatchResult], behaviour: Mapping[str, Behaviour], learned: set[str]
    ) -> None:
        """Evaluation games into the payoff table and the Elo too; the behaviour of ``learned``
        members into diversity."""
        for (a, b), outcomes in _by_pair(results).items():
            self.payoff_table.add(a, b, float(sum(outcomes)), float(len(outcomes)))
        self.elo.update_games([(r.player_id, r.opponent_id, r.outcome) for r in results])
        for pid in (pid for pid in behaviour if pid in learned):
            actions, positions = behaviour[pid].arrays()
            if actions.size:
                self.diversity.update(
                    pid, TrajectoryBatch(actions=actions, positions=positions, agent_id=pid)
                )

    def record_exact(self, pairs: Mapping[tuple[str, str], float], games: int) -> None:
        """Exact expected outcomes (seat 0's, in [0, 1]) entered as ``games`` nominal games each."""
        for (a, b), value in pairs.items():
            self.payoff_table.add_exact(a, b, value, float(games))
        # Elo sees the nominal games round-robin over the pairs (no pair's games all at once)
        self.elo.update_games([(a, b, value) for _ in range(games) for (a, b), value in pairs.items()])

    def ratings(
        self, ids: list[str], *, everyone: bool = True
    ) -> tuple[dict[str, float], dict[str, float], tuple[str, float] | None]:
        """Fitted Elo of ``ids``, each rating's standard error and the anchor: Bradley-Terry over
        every evaluation (and exact) game so far, one member held fixed (:meth:`rating_anchor`),
        every other member, scripted baselines included, fitted. ``everyone=False``: over the games
        among ``ids`` alone (an active set, whose archive would make the fit grow)."""
        anchor = self.rating_anchor([*self.payoff_table.agents(), *ids] if everyone else ids)
        fixed = {} if anchor is None else dict([anchor])
        ratings, se = self.payoff_table.ratings(ids, fixed, self.elo.initial_rating, everyone=everyone)
        return ratings, se, anchor

    def rating_anchor(self, everyone: list[str]) -> tuple[str, float] | None:
        """The one member the rating holds fixed: ``random`` at its env's rating (800) when it is a
        baseline of the run, else the first member rated (a baseline at its env's rating, a
        learner's snapshot at the initial rating, 1000); None before anyone is rated."""
        if RATING_ANCHOR in self.elo.baselines:
            return RATING_ANCHOR, self.elo.baselines[RATING_ANCHOR]
        if not everyone:
            return None
        return everyone[0], self.elo.baselines.get(everyone[0], self.elo.initial_rating)

    def save(self) -> None:
        self.elo.save()
        self.matches.sync()

    def state_dict(self) -> dict[str, Any]:
        return {
            "exact_pairs": sorted([a, b] for a, b in self.payoff_table.exact),
            "payoff": self.payoff_table.state_dict(),
            "training": self.training.state_dict(),
            "elo": self.elo.state_dict(),
            "diversity": self.diversity.state_dict(),
        }

    @staticmethod
    def check_state(state: dict[str, Any]) -> None:
        EloRegistry.check_state(state["elo"])
        PayoffTable.from_state_dict(state["payoff"])
        DecayedPayoff.from_state_dict(state["training"])
        DiversityTracker.from_state_dict(state["diversity"])

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.payoff_table = PayoffTable.from_state_dict(state["payoff"])
        self.payoff_table.exact = {(str(a), str(b)) for a, b in state.get("exact_pairs", [])}
        self.training = DecayedPayoff.from_state_dict(state["training"])
        self.diversity = DiversityTracker.from_state_dict(state["diversity"])
        # the Elo file may hold updates of the interrupted generation: restore the checkpointed ratings
        atomic_write_json(self._elo_path, state["elo"])
        self.elo = EloRegistry(self._elo_path, k_factor=self.elo.k_factor, baselines=self.elo.baselines)

    def next_generation(self) -> None:
        self.this_generation = defaultdict(int)


def _groups(results: list[MatchResult], train: bool) -> dict[tuple[str, str, int, int], tuple[float, int]]:
    """(player, opponent, seat, drawn generation or 0) -> (sum of outcomes, games), in the order
    each group first appears."""
    sums: dict[tuple[str, str, int, int], list[float]] = {}
    for r in results:
        cell = sums.setdefault(
            (r.player_id, r.opponent_id, r.player_seat, r.drawn_generation if train else 0), [0.0, 0]
        )
        cell[0] += r.outcome
        cell[1] += 1
    return {key: (total, int(games)) for key, (total, games) in sums.items()}


def _by_pair(results: list[MatchResult]) -> dict[tuple[str, str], list[float]]:
    grouped: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in results:
        grouped[(r.player_id, r.opponent_id)].append(r.outcome)
    return grouped
