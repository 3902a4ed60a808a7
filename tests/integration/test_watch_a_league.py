"""A real tiny league, watched: TensorBoard events read back, the report command, documented keys."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from tensorboard.backend.event_processing.event_accumulator import IMAGES, SCALARS, TENSORS, EventAccumulator

from light_league.cli import main
from light_league.game_theory.elo import bradley_terry_ratings
from light_league.league import MatchDatabase
from light_league.tracking.logger import undocumented_keys
from light_league.tracking.payoff_render import parse_payoff_markdown
from light_league.tracking.tensorboard_logger import PAYOFF_HEATMAP_TAG, PAYOFF_TABLE_TAG

ROOT = Path(__file__).resolve().parents[2]
RPS = str(ROOT / "expr_configs" / "rps_tiny.yaml")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("watch") / "run"
    assert (
        main(
            [
                "--config",
                RPS,
                "--run-dir",
                str(path),
                "stop.max_generations=3",
                "scheduler.steps_per_generation=1024",
                "evaluation.episodes_per_pair=64",
            ]
        )
        == 0
    )
    return path


def accumulator(run_dir: Path) -> EventAccumulator:
    acc = EventAccumulator(str(run_dir / "tensorboard"), size_guidance={SCALARS: 0, IMAGES: 0, TENSORS: 0})
    acc.Reload()
    return acc


def test_payoff_text_and_images_per_generation_matching_the_match_log(run_dir: Path) -> None:
    acc = accumulator(run_dir)
    images = acc.Images(PAYOFF_HEATMAP_TAG)
    texts = acc.Tensors(f"{PAYOFF_TABLE_TAG}/text_summary")
    # images are drawn in the background on a CPU budget; by the run's end, every generation's
    assert sorted(e.step for e in images) == [0, 1, 2]
    assert [e.step for e in texts] == [0, 1, 2]
    matches = MatchDatabase(db_path=str(run_dir / "matches.jsonl"))
    for event in texts:
        ids, rates, games = parse_payoff_markdown(event.tensor_proto.string_val[0].decode())
        assert len(ids) >= 1
        for i, a in enumerate(ids):
            for j, b in enumerate(ids):
                if i != j:
                    assert games[i, j] == matches.games(a, b)
                    assert rates[i, j] == pytest.approx(matches.win_rate(a, b), abs=5e-4)


def test_scalars_cover_the_league_and_are_documented(run_dir: Path) -> None:
    acc = accumulator(run_dir)
    keys = acc.Tags()["scalars"]
    for key in ("league/meta_entropy", "league/population_size", "rollout/env_steps_per_s", "timing/train_s"):
        assert key in keys
        assert [e.step for e in acc.Scalars(key)] == [0, 1, 2]
    assert any(k.startswith("rating/") for k in keys)
    assert any(k.startswith("elo_sequential/") for k in keys)
    assert any(k.startswith("train/main_agent_0/") for k in keys)
    assert undocumented_keys(keys, ROOT / "docs" / "metrics.md") == []


def test_payoff_tables_are_saved_as_json_and_npy(run_dir: Path) -> None:
    for g in range(3):
        data = json.loads((run_dir / "payoff" / f"gen_{g:04d}.json").read_text())
        rates = np.load(run_dir / "payoff" / f"gen_{g:04d}.npy")
        assert rates.shape == (len(data["agent_ids"]),) * 2


def test_report_prints_the_latest_table_and_exports_csv(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    csv_path = tmp_path / "gen1.csv"
    assert main(["report", str(run_dir), "--generation", "1", "--csv", str(csv_path)]) == 0
    out = capsys.readouterr().out
    last = json.loads((run_dir / "payoff" / "gen_0001.json").read_text())
    for agent in last["agent_ids"]:
        assert agent in out
    assert csv_path.read_text().count("\n") >= len(last["agent_ids"])


def test_the_fitted_rating_is_what_tensorboard_report_and_the_log_show(
    run_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A fresh Bradley-Terry fit of the match log's evaluation games equals the logged rating."""
    last = json.loads((run_dir / "generations.jsonl").read_text().splitlines()[-1])
    ids = [m["id"] for m in last["population"]]
    index = {a: i for i, a in enumerate(ids)}
    scores = np.zeros((len(ids), len(ids)))
    games = np.zeros((len(ids), len(ids)))
    for line in (run_dir / "matches.jsonl").read_text().splitlines():
        m = json.loads(line)
        if m["kind"] == "eval":
            i, j = index[m["a"]], index[m["b"]]
            scores[i, j] += m["outcome"]
            scores[j, i] += 1.0 - m["outcome"]
            games[i, j] += 1
            games[j, i] += 1
    fitted = bradley_terry_ratings(scores, games, np.full(len(ids), np.nan))  # rps_tiny: no baselines
    assert last["rating"] == pytest.approx(dict(zip(ids, fitted.tolist())), abs=0.01)
    acc = accumulator(run_dir)
    for agent in ids:
        (*_, event) = acc.Scalars(f"rating/{agent}")
        assert event.step == last["generation"] and event.value == pytest.approx(
            last["rating"][agent], abs=0.01
        )
    capsys.readouterr()
    assert main(["report", str(run_dir)]) == 0
    out = capsys.readouterr().out
    best = max(ids, key=last["rating"].__getitem__)
    roles = {m["id"]: m["role"] for m in last["population"]}
    assert f"| 1 | {best} | {roles[best]} | {last['rating'][best]:.0f} |" in out  # whole points
