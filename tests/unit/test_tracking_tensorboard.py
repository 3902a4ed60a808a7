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
from tensorboard.plugins.custom_scalar import layout_pb2
from test_payoff_render import synthetic_snapshot

from light_league.tracking.backends import build_logger
from light_league.tracking.config import LoggingConfig
from light_league.tracking.headline import headline_scalars
from light_league.tracking.logger import (
    MetricLogger,
    MultiLogger,
    NullLogger,
    PayoffSnapshot,
    undocumented_keys,
)
from light_league.tracking.payoff_render import parse_payoff_text
from light_league.tracking.tensorboard_logger import LAYOUT_TAG, TensorBoardLogger

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
    rating = {a: 1000.0 + 10 * i + g for i, a in enumerate(snapshot.agent_ids)}
    out.update(headline_scalars(snapshot, rating, {a: [r - 40.0, r + 40.0] for a, r in rating.items()}))
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


def table_text(acc: EventAccumulator | ServerEventAccumulator, step: int) -> str:
    (event,) = [e for e in acc.Tensors("league/payoff_table" + TEXT_SUFFIX) if e.step == step]
    return str(event.tensor_proto.string_val[0].decode("utf-8"))


def table_at(acc: EventAccumulator | ServerEventAccumulator, step: int) -> tuple[list[str], np.ndarray]:
    return parse_payoff_text(table_text(acc, step))


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


@pytest.mark.integration
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
        ids, rates = table_at(acc, snap.generation)
        assert ids == snap.agent_ids
        np.testing.assert_array_equal(np.isnan(rates), np.isnan(snap.win_rates))
        np.testing.assert_allclose(rates, snap.win_rates, atol=5e-3)  # 2 decimals
        games = snap.games[~np.eye(snap.size, dtype=bool) & ~np.isnan(snap.win_rates)]
        assert f"Games per cell: {games.min():,} to {games.max():,}" in table_text(acc, snap.generation)


@pytest.mark.integration
def test_scalars_are_read_back_per_generation(three_generations: tuple[Path, list[PayoffSnapshot]]) -> None:
    log_dir, snapshots = three_generations
    acc = read_events(log_dir)
    entropy = acc.Scalars("league/meta_entropy")
    assert [e.step for e in entropy] == [0, 1, 2]
    np.testing.assert_allclose([e.value for e in entropy], [0.0, 0.1, 0.2], rtol=1e-6)
    assert [e.value for e in acc.Scalars("rating/agent_1")] == [1010.0, 1011.0, 1012.0]
    assert not any(
        tag.startswith("meta_strategy/") for tag in acc.Tags()["scalars"]
    )  # the runner's, when asked


def test_the_custom_scalars_layout_opens_on_the_headline(tmp_path: Path) -> None:
    """Each generation's layout holds a chart for every tag family with data: the headline
    categories (open) first, the others closed; the newest layout is the one TensorBoard shows."""
    logger = TensorBoardLogger(tmp_path, background_charts=False)
    logger.log_scalars({"league/meta_entropy": 0.5, "timing/train_s": 1.0}, 0)
    headline = {
        "headline/main_agent_0/rating": 1210.0,
        "headline/main_agent_0/rating_low": 1170.0,
        "headline/main_agent_0/rating_high": 1250.0,
        "headline/main_agent_0/win_rate/scripted_l5": 0.6,
        "headline/main_agent_0/win_rate_low/scripted_l5": 0.5,
        "headline/main_agent_0/win_rate_high/scripted_l5": 0.7,
        "exploitability/main_nash_conv": 0.4,
    }
    logger.log_scalars(headline, 1)
    logger.close()
    (*_, last) = read_events(tmp_path).Tensors(LAYOUT_TAG)
    layout = layout_pb2.Layout.FromString(last.tensor_proto.string_val[0])
    assert [(c.title, c.closed) for c in layout.category] == [
        ("rating of the newest main agent", False),
        ("its win rate against each baseline", False),
        ("exploitability (probe; exact NashConv where the game allows)", False),
        ("meta-strategy entropy", False),
        ("training", True),
    ]
    (rating,) = layout.category[0].chart
    series = rating.margin.series[0]
    assert (series.value, series.lower, series.upper) == (
        "headline/main_agent_0/rating",
        "headline/main_agent_0/rating_low",
        "headline/main_agent_0/rating_high",
    )
    (versus,) = layout.category[1].chart
    assert versus.title == "main_agent_0 against scripted_l5: win rate, 95% interval"
    assert versus.margin.series[0].upper == "headline/main_agent_0/win_rate_high/scripted_l5"
    assert [c.title for c in layout.category[2].chart] == ["exact NashConv of the newest main agent"]


@pytest.mark.integration
def test_resolved_config_is_logged_as_text(three_generations: tuple[Path, list[PayoffSnapshot]]) -> None:
    log_dir, _ = three_generations
    (event,) = read_events(log_dir).Tensors("config/resolved" + TEXT_SUFFIX)
    text = event.tensor_proto.string_val[0].decode("utf-8")
    assert "name: kuhn_poker" in text and "seed: 3" in text


@pytest.mark.integration
def test_every_written_key_is_documented(three_generations: tuple[Path, list[PayoffSnapshot]]) -> None:
    log_dir, _ = three_generations
    keys = written_keys(read_events(log_dir))
    assert {"league/payoff_heatmap", "league/payoff_table", "train/agent_0/policy_loss"} <= keys
    assert undocumented_keys(keys, METRICS_DOC) == []


def test_undocumented_keys_are_reported() -> None:
    keys = ["train/agent_0/made_up_loss", "elo/a/b", "league/meta_entropy", "timing/train_s"]
    assert undocumented_keys(keys, METRICS_DOC) == ["elo/a/b", "train/agent_0/made_up_loss"]


@pytest.mark.integration
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
    _, rates = table_at(server, 2)
    np.testing.assert_allclose(rates, redone.win_rates, atol=5e-3)
    _, rates_1 = table_at(server, 1)
    np.testing.assert_allclose(rates_1, snapshots[1].win_rates, atol=5e-3)


def test_logging_turned_off_builds_a_null_logger(tmp_path: Path) -> None:
    logger = build_logger(LoggingConfig(tensorboard=False), tmp_path)
    assert isinstance(logger, NullLogger)
    log_generations(logger, [synthetic_snapshot(0)])
    logger.close()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.integration
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
