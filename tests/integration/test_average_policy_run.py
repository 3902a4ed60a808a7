"""``league.average_policy`` in a real Kuhn league: one file per generation, its exact NashConv in
the record, the console, ``report`` and TensorBoard, and ``--resume`` continuing from the saved
network."""

from __future__ import annotations

import json
from pathlib import Path

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from light_league.cli import main
from light_league.training.average import average_path

ROOT = Path(__file__).resolve().parents[2]
KUHN = str(ROOT / "expr_configs" / "league_kuhn.yaml")
ARGS = [
    "league.average_policy.enabled=true",
    "league.average_policy.games=2000",
    "scheduler.steps_per_generation=2048",
    "scheduler.main_agent.checkpoint_min_steps=2048",
    "scheduler.main_agent.checkpoint_max_steps=2048",
    "scheduler.main_exploiter.checkpoint_min_steps=2048",
    "scheduler.main_exploiter.checkpoint_max_steps=2048",
    "scheduler.league_exploiter.checkpoint_min_steps=2048",
    "scheduler.league_exploiter.checkpoint_max_steps=2048",
    "evaluation.adaptive_budget=500",
]


def test_the_average_policy_is_kept_measured_and_resumed(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    run = tmp_path / "run"
    assert main(["--config", KUHN, "--run-dir", str(run), "--quiet", "stop.max_generations=2", *ARGS]) == 0
    assert "average nash_conv" in capsys.readouterr().err  # the console writes to stderr
    assert main(["--resume", str(run), "--quiet", "stop.max_generations=3"]) == 0
    records = [json.loads(line) for line in (run / "generations.jsonl").read_text().splitlines()]
    assert [r["generation"] for r in records] == [0, 1, 2]
    for r in records:
        assert 0.0 <= r["average_nash_conv"] <= 3.0
        assert r["average"]["games"] == 2000 and r["average"]["decisions"] > 2000
        assert "average" in r["timings"]
        assert average_path(run / "policies", r["generation"]).with_suffix(".pt").exists()
    capsys.readouterr()
    assert main(["report", str(run)]) == 0
    shown = " ".join(f"{r['average_nash_conv']:.3f}" for r in records)
    assert f"average policy nash_conv, the same generations: {shown}" in capsys.readouterr().out
    acc = EventAccumulator(str(run / "tensorboard"), size_guidance={"scalars": 0})
    acc.Reload()
    logged = [(e.step, round(e.value, 5)) for e in acc.Scalars("exploitability/average_nash_conv")]
    assert logged == [(r["generation"], round(r["average_nash_conv"], 5)) for r in records]
