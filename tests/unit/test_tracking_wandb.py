"""W&B logging in offline mode (no network): the run's own record file holds the same keys as TensorBoard.

An offline run writes ``RUN_DIR/wandb/offline-run-*/run-<id>.wandb``: a LevelDB-style log of
``wandb.proto.wandb_internal_pb2.Record`` messages (a 7-byte file header, then 32 KiB blocks of
chunks with a 7-byte header: crc32 uint32, length uint16, type uint8 where 1 = full record,
2/3/4 = first/middle/last piece). ``history_rows`` reads the logged rows back from it.
"""

from __future__ import annotations

import html
import json
import struct
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_payoff_render import synthetic_snapshot
from test_tracking_tensorboard import METRICS_DOC, log_generations, runner_scalars

from light_league.errors import ConfigError
from light_league.tracking.backends import build_logger
from light_league.tracking.config import LoggingConfig, WandbConfig
from light_league.tracking.leaderboard import leaderboard_markdown
from light_league.tracking.logger import NullLogger, undocumented_keys
from light_league.tracking.record import GenerationRecord
from light_league.tracking.tensorboard_logger import TensorBoardLogger
from light_league.tracking.wandb_logger import RUN_ID_FILE, STEP_KEY, WandbLogger

BLOCK = 32768
CHUNK_HEADER = 7
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4


def _records(path: Path) -> Iterator[bytes]:
    data = path.read_bytes()
    assert data[:4] == b":W&B", f"{path} is not a W&B record file"
    pos, pieces = 7, b""
    while pos + CHUNK_HEADER <= len(data):
        left_in_block = BLOCK - pos % BLOCK
        if left_in_block < CHUNK_HEADER:
            pos += left_in_block
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos : pos + CHUNK_HEADER])
        chunk = data[pos + CHUNK_HEADER : pos + CHUNK_HEADER + length]
        pos += CHUNK_HEADER + length
        if kind == FULL:
            yield chunk
        elif kind == FIRST:
            pieces = chunk
        elif kind == MIDDLE:
            pieces += chunk
        elif kind == LAST:
            yield pieces + chunk
        else:
            return


def _parsed_records(run_dir: Path) -> list[Any]:
    from wandb.proto import wandb_internal_pb2

    records = []
    for path in sorted(run_dir.glob("wandb/offline-run-*/run-*.wandb")):
        for raw in _records(path):
            record = wandb_internal_pb2.Record()  # type: ignore[attr-defined]
            record.ParseFromString(raw)
            records.append(record)
    return records


def _finished(run_dir: Path) -> bool:
    runs = list(run_dir.glob("wandb/offline-run-*/run-*.wandb"))
    exits = [r for r in _parsed_records(run_dir) if r.WhichOneof("record_type") == "exit"]
    return bool(runs) and len(exits) == len(runs)


def history_rows(run_dir: Path, *, timeout_s: float = 30.0) -> list[dict[str, object]]:
    """Every row the offline runs under ``run_dir/wandb`` logged, as ``{key: value}``.

    ``run.finish()`` returns once the service has the run's last record; the service writes the
    file a moment later, so this waits (up to ``timeout_s``) for each run's exit record.
    """
    deadline = time.monotonic() + timeout_s
    while not _finished(run_dir) and time.monotonic() < deadline:
        time.sleep(0.05)
    rows = []
    for record in _parsed_records(run_dir):
        if record.WhichOneof("record_type") == "history":
            items = record.history.item
            rows.append({i.key or "/".join(i.nested_key): json.loads(i.value_json) for i in items})
    return rows


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> LoggingConfig:
    monkeypatch.setenv("WANDB_MODE", "offline")
    return LoggingConfig(tensorboard=False, wandb=WandbConfig(mode="offline", project="tests", tags=["unit"]))


@pytest.mark.integration
def test_offline_run_records_the_same_scalar_keys(
    tmp_path: Path, offline: LoggingConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    snapshots = [synthetic_snapshot(g) for g in range(3)]
    logger = build_logger(offline, tmp_path)
    assert isinstance(logger, WandbLogger)

    def drawn_in_the_generation(snapshot: object) -> None:
        raise AssertionError("a generation drew its charts: they belong to the background renderer")

    monkeypatch.setattr("light_league.tracking.wandb_logger.draw_charts", drawn_in_the_generation)
    logger.log_config({"seed": 3})
    log_generations(logger, snapshots)
    record = {"generation": 2, "population": [{"id": "a", "role": "main_agent"}], "rating": {"a": 1210.4}}
    logger.log_text(
        "league/leaderboard",
        leaderboard_markdown(GenerationRecord.from_json(record | {"rating_ci95": {"a": [1170.4, 1250.4]}})),
        2,
    )
    logger.close()  # waits for the charts still being drawn and logs them

    rows = history_rows(tmp_path)
    for snap in snapshots:
        expected = runner_scalars(snap)
        (row,) = [r for r in rows if r.get(STEP_KEY) == snap.generation and "league/meta_entropy" in r]
        assert {k: row[k] for k in expected} == pytest.approx(expected)
    images = sorted(p.name for p in tmp_path.glob("wandb/offline-run-*/files/media/images/league/*.png"))
    assert sum(name.startswith("payoff_heatmap") for name in images) == 3
    assert sum(name.startswith("meta_strategy") for name in images) == 3
    for tag in ("league/payoff_heatmap", "league/meta_strategy"):  # each at its own generation
        steps = sorted(int(str(r[STEP_KEY])) for r in rows if any(k.startswith(tag) for k in r))
        assert steps == [0, 1, 2], tag
    assert len(list(tmp_path.glob("wandb/offline-run-*/files/media/table/league/payoff_table*.json"))) == 3
    (board,) = tmp_path.glob("wandb/offline-run-*/files/media/html/league/leaderboard*.html")
    assert "| 1 | a | main_agent | - | - | 1210 ± 40 | 0.000 |" in html.unescape(board.read_text())


@pytest.mark.integration
def test_offline_keys_are_documented(tmp_path: Path, offline: LoggingConfig) -> None:
    logger = build_logger(offline, tmp_path)
    log_generations(logger, [synthetic_snapshot(0)])
    logger.close()
    logged = {k.split("/_")[0] for row in history_rows(tmp_path) for k in row if not k.startswith("_")}
    media = ("league/payoff_heatmap", "league/payoff_table", "league/meta_strategy")
    top_level = {next((m for m in media if k.startswith(m + "/")), k) for k in logged}
    assert set(media) <= top_level
    assert undocumented_keys(top_level, METRICS_DOC) == []


@pytest.mark.integration
def test_resume_continues_the_same_wandb_run(tmp_path: Path, offline: LoggingConfig) -> None:
    first = build_logger(offline, tmp_path)
    first.close()
    run_id = (tmp_path / "wandb" / RUN_ID_FILE).read_text().strip()
    second = build_logger(offline, tmp_path, resume_step=1)
    assert isinstance(second, WandbLogger)
    second.close()
    assert (tmp_path / "wandb" / RUN_ID_FILE).read_text().strip() == run_id
    runs = list(tmp_path.glob("wandb/offline-run-*"))
    assert len(runs) == 2 and all(run_id in p.name for p in runs)


@pytest.mark.integration
def test_disabled_mode_never_imports_wandb(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "wandb", None)  # any `import wandb` now fails
    assert isinstance(build_logger(LoggingConfig(tensorboard=False), tmp_path), NullLogger)
    logger = build_logger(LoggingConfig(), tmp_path)
    assert isinstance(logger, TensorBoardLogger)
    logger.close()
    with pytest.raises(ConfigError, match="logging.wandb.mode=disabled"):
        build_logger(LoggingConfig(wandb=WandbConfig(mode="offline")), tmp_path)


def test_unknown_mode_is_a_config_error() -> None:
    with pytest.raises(ValueError, match="'disabled', 'offline' or 'online'"):
        WandbConfig(mode="ofline")
