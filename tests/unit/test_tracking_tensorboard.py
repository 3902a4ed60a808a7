"""TensorBoard logging read back from the event files; every written key is documented in docs/metrics.md."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tensorboard.backend.event_processing.event_accumulator import (
    IMAGES,
    SCALARS,
    TENSORS,
    EventAccumulator,
)
from tensorboard.backend.event_processing.plugin_event_accumulator import (
    EventAccumulator as ServerEventAccumulator,
)
from test_payoff_render import synthetic_snapshot

from light_league.tracking.backends import build_logger
from light_league.tracking.config import LoggingConfig
from light_league.tracking.logger import (
    MetricLogger,
    MultiLogger,
    NullLogger,
    PayoffSnapshot,
    undocumented_keys,
)
from light_league.tracking.payoff_render import parse_payoff_markdown
from light_league.tracking.tensorboard_logger import TensorBoardLogger

METRICS_DOC = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"
STORE_EVERYTHING = {SCALARS: 0, IMAGES: 0, TENSORS: 0}
TEXT_SUFFIX = "/text_summary"


def runner_scalars(snapshot: PayoffSnapshot) -> dict[str, float]:
    """The scalar keys the runner logs each generation, with values derived from the generation."""
    g = snapshot.generation
    out = {
        "league/meta_entropy": 0.1 * g,
        "exploitability/meta_nash_conv": 1.0 / (g + 1),
        "league/diversity_score": 0.3 + 0.01 * g,
        "league/population_size": float(snapshot.size),
        "exploiter/rolling_win_rate_vs_main": 0.25,
        "rollout/env_steps_per_s": 1000.0 + g,
        "rollout/env_steps": 5000.0 * (g + 1),
        "timing/train_s": 2.0,
        "timing/evaluate_s": 1.0,
        "train/agent_0/policy_loss": -0.01 * g,
        "train/agent_0/value_loss": 0.5,
        "train/agent_0/entropy": 1.2,
    }
    out.update({f"rating/{a}": 1000.0 + 10 * i + g for i, a in enumerate(snapshot.agent_ids)})
    return out


def log_generations(
    logger: MetricLogger, snapshots: list[PayoffSnapshot], *, every_image: bool = True
) -> None:
    """Log like the runner; ``every_image`` waits for each generation's images (the runner does
    not: when generations come faster than the chart budget their images follow later)."""
    for snap in snapshots:
        logger.log_payoff(snap)
        logger.log_scalars(runner_scalars(snap), snap.generation)
        for each in logger.loggers if isinstance(logger, MultiLogger) else [logger]:
            if every_image and isinstance(each, TensorBoardLogger):
                assert each.wait_for_charts()


def read_events(log_dir: Path) -> EventAccumulator:
    acc = EventAccumulator(str(log_dir), size_guidance=STORE_EVERYTHING)
    acc.Reload()
    return acc


def written_keys(acc: EventAccumulator) -> set[str]:
    tags = acc.Tags()
    texts = {t.removesuffix(TEXT_SUFFIX) for t in tags["tensors"]}
    return set(tags["scalars"]) | set(tags["images"]) | texts


def table_at(
    acc: EventAccumulator | ServerEventAccumulator, step: int
) -> tuple[list[str], np.ndarray, np.ndarray]:
    (event,) = [e for e in acc.Tensors("league/payoff_table" + TEXT_SUFFIX) if e.step == step]
    return parse_payoff_markdown(event.tensor_proto.string_val[0].decode("utf-8"))


def write_three_generations(run_dir: Path) -> tuple[Path, list[PayoffSnapshot]]:
    snapshots = [synthetic_snapshot(g) for g in range(3)]
    logger = build_logger(LoggingConfig(), run_dir)
    assert isinstance(logger, TensorBoardLogger)
    logger.log_config({"seed": 3, "env": {"name": "kuhn_poker"}, "run_dir": run_dir})
    log_generations(logger, snapshots)
    logger.close()
    return run_dir / "tensorboard", snapshots


@pytest.fixture(scope="module")
def three_generations(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[PayoffSnapshot]]:
    """Read-only: tests that write more events use their own run directory."""
    return write_three_generations(tmp_path_factory.mktemp("run"))


def test_one_payoff_image_and_table_per_generation(
    three_generations: tuple[Path, list[PayoffSnapshot]],
) -> None:
    log_dir, snapshots = three_generations
    acc = read_events(log_dir)
    for tag in ("league/payoff_heatmap", "league/meta_strategy"):
        images = acc.Images(tag)
        assert [e.step for e in images] == [0, 1, 2]
        assert all(e.encoded_image_string.startswith(b"\x89PNG") for e in images)
    assert [e.step for e in acc.Tensors("league/payoff_table" + TEXT_SUFFIX)] == [0, 1, 2]
    for snap in snapshots:
        ids, rates, games = table_at(acc, snap.generation)
        assert ids == snap.agent_ids
        np.testing.assert_array_equal(np.isnan(rates), np.isnan(snap.win_rates))
        np.testing.assert_allclose(rates, snap.win_rates, atol=5e-4)
        np.testing.assert_array_equal(games, snap.games)


def test_scalars_are_read_back_per_generation(three_generations: tuple[Path, list[PayoffSnapshot]]) -> None:
    log_dir, snapshots = three_generations
    acc = read_events(log_dir)
    entropy = acc.Scalars("league/meta_entropy")
    assert [e.step for e in entropy] == [0, 1, 2]
    np.testing.assert_allclose([e.value for e in entropy], [0.0, 0.1, 0.2], rtol=1e-6)
    assert [e.value for e in acc.Scalars("rating/agent_1")] == [1010.0, 1011.0, 1012.0]
    last = snapshots[-1]
    meta = [acc.Scalars(f"meta_strategy/{a}")[-1].value for a in last.agent_ids]
    np.testing.assert_allclose(meta, last.meta_strategy, rtol=1e-6)


def test_resolved_config_is_logged_as_text(three_generations: tuple[Path, list[PayoffSnapshot]]) -> None:
    log_dir, _ = three_generations
    (event,) = read_events(log_dir).Tensors("config/resolved" + TEXT_SUFFIX)
    text = event.tensor_proto.string_val[0].decode("utf-8")
    assert "name: kuhn_poker" in text and "seed: 3" in text


def test_every_written_key_is_documented(three_generations: tuple[Path, list[PayoffSnapshot]]) -> None:
    log_dir, _ = three_generations
    keys = written_keys(read_events(log_dir))
    assert {"league/payoff_heatmap", "league/payoff_table", "train/agent_0/policy_loss"} <= keys
    assert undocumented_keys(keys, METRICS_DOC) == []


def test_undocumented_keys_are_reported() -> None:
    keys = ["train/agent_0/made_up_loss", "elo/a/b", "league/meta_entropy", "timing/train_s"]
    assert undocumented_keys(keys, METRICS_DOC) == ["elo/a/b", "train/agent_0/made_up_loss"]


def test_resume_hides_stale_generations(tmp_path: Path) -> None:
    log_dir, snapshots = write_three_generations(tmp_path)
    redone = synthetic_snapshot(2, seed=99)
    logger = build_logger(LoggingConfig(), log_dir.parent, resume_step=2)
    log_generations(logger, [redone, synthetic_snapshot(3)])
    logger.close()
    acc = read_events(log_dir)
    assert [e.step for e in acc.Images("league/payoff_heatmap")] == [0, 1, 2, 3]
    assert [e.step for e in acc.Scalars("league/meta_entropy")] == [0, 1, 2, 3]
    # The legacy accumulator does not purge text tensors; the one the TensorBoard server uses does.
    server = ServerEventAccumulator(str(log_dir), size_guidance={TENSORS: 0})
    server.Reload()
    assert [e.step for e in server.Tensors("league/payoff_table" + TEXT_SUFFIX)] == [0, 1, 2, 3]
    _, rates, _ = table_at(server, 2)
    np.testing.assert_allclose(rates, redone.win_rates, atol=5e-4)
    _, rates_1, _ = table_at(server, 1)
    np.testing.assert_allclose(rates_1, snapshots[1].win_rates, atol=5e-4)


def test_logging_turned_off_builds_a_null_logger(tmp_path: Path) -> None:
    logger = build_logger(LoggingConfig(tensorboard=False), tmp_path)
    assert isinstance(logger, NullLogger)
    log_generations(logger, [synthetic_snapshot(0)])
    logger.close()
    assert list(tmp_path.iterdir()) == []


def test_multi_logger_forwards_every_call_to_each_logger(tmp_path: Path) -> None:
    first, second = (TensorBoardLogger(tmp_path / name) for name in ("a", "b"))
    multi = MultiLogger([first, second])
    log_generations(multi, [synthetic_snapshot(0)])
    multi.log_text("notes/run", "hello", 0)
    multi.flush()
    multi.close()
    for name in ("a", "b"):
        acc = read_events(tmp_path / name)
        assert len(acc.Images("league/payoff_heatmap")) == 1
        assert acc.Scalars("league/population_size")[0].value == 3.0
        assert "notes/run" + TEXT_SUFFIX in acc.Tags()["tensors"]
