"""The logged training games follow each task's opponent distribution (no game is dropped).

A real league (local backend, every real component) on a small battalion whose games last 27 to
60 steps, depending on the opponent (scripted levels 3 to 5 rout a beginner in about 27 steps;
random, levels 1 and 2 and the learned networks run to the 60-step limit). Each generation a slot
advances only 30 steps, less than one long game, and the PFSP weights move every generation. A
game in progress keeps the opponent it was drawn with, so every drawn game is logged when it
ends and the logged opponents of the games drawn in generation ``g`` are a sample of that
generation's task distribution. Dropping games in progress at a distribution change would keep
only the short games: the chi-square test below then fails (it did on the previous rollout code).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import chisquare

from light_league.config import load_config
from light_league.run_dir import RunDir
from light_league.runner import Runner

ROOT = Path(__file__).resolve().parents[2]
GENERATIONS = 12
STEPS_PER_CALL = 10
CALLS_PER_GENERATION = 3
ENVS = 32
MAX_STEPS = 60
#: a game drawn in generation g has ended by the end of g + 2 (60 steps, 30 per generation)
SETTLE = -(-MAX_STEPS // (STEPS_PER_CALL * CALLS_PER_GENERATION))


def league_run(root: Path) -> Path:
    steps = STEPS_PER_CALL * CALLS_PER_GENERATION * ENVS
    config = load_config(
        ROOT / "expr_configs" / "league.yaml",
        [
            "experiment.seed=3",
            f"env.options={{team_size: 1, max_steps: {MAX_STEPS}}}",
            "execution.backend=local",
            "execution.num_workers=1",
            f"execution.envs_per_worker={ENVS}",
            f"execution.steps_per_call={STEPS_PER_CALL}",
            "learner.mappo.hidden_size=16",
            "learner.mappo.ppo_epoch=2",
            f"scheduler.steps_per_generation={steps}",
            # PFSP over every frozen player: a new snapshot joins each generation's distribution
            "scheduler.main_agent.weighting=pfsp",
            "scheduler.league_exploiter.weighting=pfsp",
            f"scheduler.main_agent.checkpoint_min_steps={steps}",
            f"scheduler.main_agent.checkpoint_max_steps={steps}",
            f"scheduler.main_exploiter.checkpoint_min_steps={steps}",
            f"scheduler.main_exploiter.checkpoint_max_steps={2 * steps}",
            # below a 0.9 win rate against the main agent, the curriculum over its snapshots
            # (PFSP weights that move every generation) instead of the main agent alone
            "scheduler.main_exploiter.main_win_rate=0.9",
            f"scheduler.league_exploiter.checkpoint_min_steps={steps}",
            f"scheduler.league_exploiter.checkpoint_max_steps={2 * steps}",
            "evaluation.episodes_per_pair=2",
            f"stop.max_generations={GENERATIONS}",
            "stop.max_wall_s=null",
            "logging.console=quiet",
            "logging.tensorboard=false",
        ],
    )
    run_dir = RunDir(root / "run")
    runner = Runner.build(config, run_dir, resume=False, argv=["test"])
    try:
        runner.run()
    finally:
        runner.close()
    return run_dir.root


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def observed_and_expected(run: Path, learner: str) -> tuple[dict[str, int], dict[str, float], int]:
    """Pooled over the generations whose games have all ended: logged counts per opponent and
    the counts the tasks' distributions predict for the same number of games per generation."""
    tasks = {
        rec["generation"]: t["opponents"]
        for rec in read_jsonl(run / "generations.jsonl")
        for t in rec["tasks"]
        if t["learner"] == learner
    }
    games: dict[int, list[str]] = defaultdict(list)
    for m in read_jsonl(run / "matches.jsonl"):
        if m["kind"] == "train" and m["a"] == learner:
            games[m.get("drawn_generation", m["generation"])] += [m["b"]] * m.get("games", 1)
    observed: dict[str, int] = defaultdict(int)
    expected: dict[str, float] = defaultdict(float)
    total = 0
    for gen in range(GENERATIONS - SETTLE):
        probs = tasks[gen]
        norm = sum(probs.values())
        for opp in games[gen]:
            observed[opp] += 1
        for opp, p in probs.items():
            expected[opp] += len(games[gen]) * p / norm
        total += len(games[gen])
    return observed, expected, total


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return league_run(tmp_path_factory.mktemp("unbiased"))


@pytest.mark.slow
@pytest.mark.parametrize("learner", ["main_agent_0", "main_exploiter_0", "league_exploiter_0"])
def test_logged_training_opponents_follow_the_task_distribution(run: Path, learner: str) -> None:
    observed, expected, total = observed_and_expected(run, learner)
    assert total >= 60, f"{learner}: only {total} games logged"
    assert set(observed) <= set(expected), f"{learner} played opponents outside its tasks"
    # bins with a small expectation are merged into one, so the chi-square approximation holds
    order = sorted(expected, key=lambda o: -expected[o])
    obs, exp = [], []
    for opp in order:
        if expected[opp] >= 5.0:
            obs.append(float(observed.get(opp, 0)))
            exp.append(expected[opp])
    rest_exp = sum(expected[o] for o in order) - sum(exp)
    if rest_exp > 0:
        obs.append(float(total - sum(obs)))
        exp.append(rest_exp)
    if len(exp) < 2:
        pytest.fail(f"{learner}: its tasks never spread over two opponents ({dict(expected)})")
    p = chisquare(np.array(obs), np.array(exp)).pvalue
    assert p > 1e-3, f"{learner}: logged opponents {dict(observed)} vs expected {dict(expected)} (p={p:.2g})"
