"""Weights & Biases logging with the same keys as TensorBoard; wandb is imported only here, lazily.

Files go under ``RUN_DIR/wandb/``. Every logged row carries the step under the key
``generation``, declared as the x axis of every other key, so rows may arrive in any order
(a resumed run re-logs earlier generations, and the payoff heatmap and meta-strategy bar chart of a
generation come in a later row: they are drawn in the background, as for TensorBoard, see
:mod:`light_league.tracking.chart_process`, and logged from the caller's thread at its next
logging call; ``close`` waits for the last ones).
"""

from __future__ import annotations

import html
import importlib
import io
import math
import queue
from pathlib import Path
from types import ModuleType
from typing import Any

from light_league.errors import ConfigError
from light_league.tracking.chart_process import ChartRenderer, RenderedCharts, draw_charts
from light_league.tracking.config import WandbConfig
from light_league.tracking.logger import (
    CONFIG_TAG,
    INTERRUPTED_CLOSE_S,
    META_STRATEGY_TAG,
    PAYOFF_HEATMAP_TAG,
    PAYOFF_TABLE_TAG,
    MetricLogger,
    PayoffSnapshot,
    resolved_config_markdown,
)
from light_league.utils.atomic import atomic_write_text

STEP_KEY = "generation"
RUN_ID_FILE = "run_id"


def _import_wandb() -> ModuleType:
    try:
        return importlib.import_module("wandb")
    except ImportError:
        raise ConfigError(
            "logging.wandb.mode needs the wandb package; install it (pip install wandb) "
            "or set logging.wandb.mode=disabled"
        ) from None


class WandbLogger(MetricLogger):
    """One W&B run per run directory; a resumed run continues the same W&B run id."""

    def __init__(
        self, config: WandbConfig, run_dir: Path, *, resume: bool = False, background_charts: bool = True
    ) -> None:
        if config.mode == "disabled":
            raise ConfigError("WandbLogger built with logging.wandb.mode=disabled; use NullLogger instead")
        self._wandb = _import_wandb()
        wandb_dir = Path(run_dir) / "wandb"
        wandb_dir.mkdir(parents=True, exist_ok=True)
        id_file = wandb_dir / RUN_ID_FILE
        run_id = id_file.read_text(encoding="utf-8").strip() if resume and id_file.exists() else None
        self._run = self._wandb.init(
            mode=config.mode,
            project=config.project,
            entity=config.entity,
            tags=list(config.tags),
            dir=str(run_dir),
            id=run_id,
            resume="allow" if run_id else None,
            settings=self._wandb.Settings(console="off", silent=config.mode != "online"),
        )
        atomic_write_text(id_file, str(self._run.id) + "\n")
        self._run.define_metric(STEP_KEY)
        self._run.define_metric("*", step_metric=STEP_KEY)
        #: charts drawn by the renderer's reader thread, logged by the caller's thread
        self._drawn: queue.SimpleQueue[RenderedCharts] = queue.SimpleQueue()
        self._charts = ChartRenderer(self._drawn.put) if background_charts else None
        if self._charts is not None:
            self._charts.start()

    @property
    def charts(self) -> ChartRenderer | None:
        """The background chart renderer (None when charts are drawn in ``log_payoff``)."""
        return self._charts

    def _log_drawn(self) -> None:
        """Log the charts drawn since the last call, each at its own generation."""
        from PIL import Image

        while True:
            try:
                rendered = self._drawn.get_nowait()
            except queue.Empty:
                return
            caption = f"generation {rendered.generation}"
            images = {
                _CHART_TAGS[name]: self._wandb.Image(Image.open(io.BytesIO(chart.png)), caption=caption)
                for name, chart in rendered.charts.items()
            }
            self._run.log({**images, STEP_KEY: rendered.generation})

    def wait_for_charts(self, timeout_s: float = 300.0) -> bool:
        """Draw the charts of every generation logged so far now, wait for them and log them
        (tests, tools: the run itself never waits)."""
        done = True if self._charts is None else self._charts.wait(timeout_s)
        self._log_drawn()
        return done

    @property
    def run_path(self) -> Path:
        """The directory wandb writes this run's files into (``RUN_DIR/wandb/<offline-run-...>``)."""
        return Path(self._run.dir).parent

    def log_scalars(self, metrics: dict[str, float], step: int) -> None:
        self._log_drawn()
        self._run.log({**{k: float(v) for k, v in metrics.items()}, STEP_KEY: step})

    def log_payoff(self, snapshot: PayoffSnapshot) -> None:
        wandb = self._wandb
        columns = ["agent", "role", *snapshot.agent_ids]
        rows = [
            [agent, role, *[None if math.isnan(v) else float(v) for v in snapshot.win_rates[i]]]
            for i, (agent, role) in enumerate(zip(snapshot.agent_ids, snapshot.roles, strict=True))
        ]
        row: dict[str, Any] = {
            PAYOFF_TABLE_TAG: wandb.Table(columns=columns, data=rows),
            STEP_KEY: snapshot.generation,
        }
        self._log_drawn()
        self._run.log(row)
        if self._charts is not None:
            self._charts.submit(snapshot)
        else:
            self._drawn.put(draw_charts(snapshot))
            self._log_drawn()

    def log_text(self, tag: str, text: str, step: int) -> None:
        self._log_drawn()
        self._run.log({tag: self._wandb.Html(f"<pre>{html.escape(text)}</pre>"), STEP_KEY: step})

    def log_config(self, resolved: dict[str, Any]) -> None:
        self._run.config.update(resolved, allow_val_change=True)
        self.log_text(CONFIG_TAG, resolved_config_markdown(resolved), 0)

    def flush(self) -> None:
        """Log the charts drawn so far; wandb streams every ``log`` call to its service process."""
        self._log_drawn()

    def interrupt(self) -> None:
        """The charts still being drawn get :data:`INTERRUPTED_CLOSE_S`; the rest are skipped."""
        if self._charts is not None:
            self._charts.close(INTERRUPTED_CLOSE_S, quiet=True)

    def close(self) -> None:
        """Wait for the charts still being drawn, log them, then finish the W&B run."""
        try:
            if self._charts is not None:
                self._charts.close()
            self._log_drawn()
        finally:
            self._run.finish()


_CHART_TAGS = {"payoff_heatmap": PAYOFF_HEATMAP_TAG, "meta_strategy": META_STRATEGY_TAG}
