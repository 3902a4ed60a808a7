"""The regret learner in real runs: self-play and as a league's main agent, resumed exactly, its
snapshots MAPPO members that the exploiters restart from and every command can name."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch

from light_league.cli import main
from light_league.run_reader import RunReader

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from compare_generations import differences, load  # noqa: E402

pytestmark = pytest.mark.openspiel

#: a small regret self-play run on Kuhn poker: 4 iterations a generation
SELF_PLAY = [
    "env.name=kuhn_poker",
    "scheduler.name=self_play",
    "scheduler.steps_per_generation=2048",
    "execution.num_workers=1",
    "execution.envs_per_worker=64",
    "execution.steps_per_call=8",
    "learner.kind=regret",
    "learner.regret={hidden_size: 32, regret_steps: 4, batch_size: 256, memory_size: 5000, snapshot_steps: 20}",
    "evaluation.exact=never",
    "evaluation.episodes_per_pair=64",
    "logging.console=quiet",
]
#: the league of league_leduc.yaml's shape on Kuhn: a regret main agent, MAPPO exploiters that
#: restart from its newest snapshot
LEAGUE = [
    "env.name=kuhn_poker",
    "scheduler.name=league",
    "scheduler.steps_per_generation=1024",
    "scheduler.main_agent={pfsp_probability: 0.0, verification_probability: 0.0, checkpoint_min_steps: 1024, checkpoint_max_steps: 1024}",
    "scheduler.main_exploiter={checkpoint_min_steps: 1024, checkpoint_max_steps: 1024, reset_to: main_agent}",
    "scheduler.league_exploiter={checkpoint_min_steps: 1024, checkpoint_max_steps: 1024, reset_to: main_agent}",
    "execution.num_workers=1",
    "execution.envs_per_worker=64",
    "execution.steps_per_call=8",
    "learner.mappo.hidden_size=32",
    "learner.regret={hidden_size: 32, regret_steps: 4, batch_size: 256, memory_size: 5000, snapshot_steps: 20}",
    "learner.by_role={main_agent: {kind: regret}}",
    "evaluation.exact=never",
    "evaluation.episodes_per_pair=64",
    "logging.console=quiet",
]


def run(run_dir: Path, overrides: list[str], generations: int) -> int:
    config = run_dir.parent / "regret.yaml"
    config.write_text("experiment: {name: regret, seed: 0}\n")
    args = ["--config", str(config), "--run-dir", str(run_dir), *overrides]
    return main([*args, f"stop.max_generations={generations}"])


def learner_state(run_dir: Path) -> dict:
    latest = json.loads((run_dir / "checkpoint" / "latest.json").read_text())
    path = run_dir / "checkpoint" / latest["dir"] / "learners" / "main_agent_0.pt"
    return torch.load(path, weights_only=True)["learner"]


def test_a_regret_self_play_run_resumes_and_hands_over_mappo_members(tmp_path: Path) -> None:
    """A resumed run goes on from the learner's saved state (its iterations, memories and
    networks), as a MAPPO run does: the generations it had completed stay as they were, and it
    plays on from fresh games (games in progress at the stop restart, so the rest may differ)."""
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    assert run(straight, SELF_PLAY, 4) == 0
    assert run(resumed, SELF_PLAY, 2) == 0
    saved = learner_state(resumed)
    assert saved["iteration"] == 8 and saved["regrets"]["seen"] > 0
    assert main(["--resume", str(resumed), "--quiet", "stop.max_generations=4"]) == 0
    first = load(resumed / "generations.jsonl")[:2]
    assert differences(load(straight / "generations.jsonl")[:2], first, 1e-9) == []
    final, reference = learner_state(resumed), learner_state(straight)
    assert final["iteration"] == reference["iteration"] == 16
    assert final["regrets"]["seen"] > saved["regrets"]["seen"]
    reader = RunReader(straight)
    record = reader.records()[-1]
    assert record.main_nash_conv is not None and record.main_nash_conv < 0.917  # below uniform play
    members = [m.id for m in record.population]
    meta = json.loads((straight / "policies" / f"{members[-1]}.json").read_text())
    assert meta["kind"] == "mappo" and meta["average_of"] == "regret"
    assert main(["eval", str(straight), members[-1], members[0], "--games", "20"]) == 0
    assert main(["export", str(straight), members[-1], "--out", str(tmp_path / "avg.pt2")]) == 0


def test_a_league_with_a_regret_main_agent_restarts_its_exploiters_from_its_snapshots(tmp_path: Path) -> None:
    assert run(tmp_path / "league", LEAGUE, 3) == 0
    records = RunReader(tmp_path / "league").records()
    roles = {m.id: m.role for m in records[-1].population}
    assert {"main_agent", "main_exploiter", "league_exploiter"} <= set(roles.values())
    # every generation's main agent trained against itself alone, the exploiters against it
    for record in records:
        tasks = {t.learner: t for t in record.tasks}
        assert tasks["main_agent_0"].opponents == {"main_agent_0": 1.0}
