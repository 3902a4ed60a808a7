"""Adaptive evaluation: which cells get the refinement games, and how a round's batches are shared."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from light_league.agents.agent_manager import AgentManager
from light_league.envs.base import EnvSpec
from light_league.evaluation.evaluation_manager import EvaluationManager, share_batches
from light_league.rollout.episode import EvaluationResult, MatchResult
from light_league.run_dir import RunDir

#: hidden win probabilities (row against column): ``a`` beats everyone, ``b`` is nearly tied with
#: it and beats the rest; ``c`` and ``d`` are weak and even with each other (a cell no decision
#: about the mixture depends on, however uncertain)
P = {("a", "b"): 0.53, ("a", "c"): 0.9, ("a", "d"): 0.9, ("b", "c"): 0.85, ("b", "d"): 0.85, ("c", "d"): 0.5}


class HiddenGames:
    """Games drawn from :data:`P` (a stand-in for the rollout workers: only ``evaluate`` is used)."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def evaluate(
        self, pairings: list[tuple[str, str, int]], progress: object = None, *, paired: bool = False
    ) -> EvaluationResult:
        results = []
        for a, b, n in pairings:
            p = P[(a, b)] if (a, b) in P else 1.0 - P[(b, a)]
            wins = self.rng.random(n) < p
            results.extend(MatchResult(a, b, 0, float(w), 0.0) for w in wins.tolist())
        return EvaluationResult(results, 0, {})


def spec() -> EnvSpec:
    return EnvSpec(
        name="hidden",
        agents=("p0", "p1"),
        seats=((0,), (1,)),
        obs_dim=1,
        state_dim=1,
        num_actions=2,
        symmetric=True,
        turn_based=False,
        score_range=(-1.0, 1.0),
        max_steps=1,
    )


def league(tmp_path: Path, seed: int = 0) -> AgentManager:
    agents = AgentManager(
        RunDir(tmp_path),
        pool_max_size=100,
        payoff_decay=0.99,
        elo_k=32.0,
        baselines=[],
        num_actions=2,
        seed=seed,
    )
    for name in "abcd":
        agents.add_baseline(name)
    return agents


def test_priorities_go_to_the_support_and_its_near_ties_not_to_cells_between_outsiders(
    tmp_path: Path,
) -> None:
    agents = league(tmp_path)
    # 32 games per cell at the hidden rates (rounded): a beats b 18-14, the rest as in P
    for (a, b), p in P.items():
        agents.results.payoff_table.add(a, b, round(32 * p), 32.0)
    ranked = agents.refinement_priorities(cap=1000)
    pairs = [(a, b) for a, b, _ in ranked]
    assert pairs[0] == ("a", "b")  # b may still beat a: the mixture's decision
    assert ("c", "d") not in pairs  # both clearly outside the support: no decision depends on it
    top = ranked[0][2]
    assert all(p < 0.1 * top for a, b, p in ranked[1:])  # a against the clearly weaker c and d
    assert agents.refinement_pairs(cap=1000) == pairs
    agents.results.payoff_table.add("a", "b", 500.0, 1000.0)  # the decisive cell at the cap: left out
    assert ("a", "b") not in agents.refinement_pairs(cap=1000)


def test_adaptive_generation_spends_the_budget_on_the_decisive_cell(tmp_path: Path) -> None:
    agents = league(tmp_path)
    evaluation = EvaluationManager(
        HiddenGames(1),  # type: ignore[arg-type]
        None,
        spec(),
        "hidden",
        episodes_per_pair="adaptive",
        exact="never",
        nash_conv="never",
        adaptive_budget=600,
        adaptive_batch=8,
        adaptive_cap=400,
    )
    summary = evaluation.run(agents)
    _, _, games = agents.payoff()
    assert summary.games == 600  # 6 new pairings x 8, then refinement up to the budget
    assert games[0, 1] >= 300  # a-b: most of the refinement
    assert games[2, 3] == 8  # c-d: its first batch only
    assert games.max() <= 400 + 8


@pytest.mark.parametrize(
    ("priorities", "room", "total", "expected"),
    [
        ([3.0, 1.0], [100, 100], 8, [6, 2]),  # in proportion
        ([3.0, 1.0], [2, 100], 8, [2, 6]),  # a full pair's share goes to the others
        ([1.0, 1.0, 1.0], [5, 5, 5], 2, [1, 1, 0]),  # fewer batches than pairs: first ones first
        ([0.5, 0.3, 0.2], [9, 9, 9], 1, [1, 0, 0]),
        ([1.0, 0.0], [0, 5], 4, [0, 0]),  # nothing open: nothing shared
    ],
)
def test_share_batches(priorities: list[float], room: list[int], total: int, expected: list[int]) -> None:
    assert share_batches(priorities, room, total) == expected
