"""TensorBoard event files under ``RUN_DIR/tensorboard/`` (torch's ``SummaryWriter``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from torch.utils.tensorboard import SummaryWriter

from light_league.tracking.logger import (
    CONFIG_TAG,
    NASH_MIXTURE_TAG,
    PAYOFF_HEATMAP_TAG,
    PAYOFF_TABLE_TAG,
    MetricLogger,
    PayoffSnapshot,
    nash_scalars,
    resolved_config_markdown,
)
from light_league.tracking.payoff_render import nash_bar_png, payoff_heatmap_png, payoff_markdown


class TensorBoardLogger(MetricLogger):
    """Scalars, payoff heatmaps, payoff markdown tables and Nash bar charts for TensorBoard.

    ``purge_step`` (set on resume) hides every event at or after that step left by the run that
    was interrupted, so the resumed generations replace them instead of doubling them.
    """

    def __init__(
        self, log_dir: Path, *, flush_secs: int = 30, max_queue: int = 100, purge_step: int | None = None
    ) -> None:
        self.log_dir = Path(log_dir)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        # A fresh run also starts with a session-start event (purge_step=0): TensorBoard's loader
        # treats only a *second* start as a restart, so without it a resume would purge nothing.
        self._writer = SummaryWriter(
            log_dir=str(self.log_dir),
            purge_step=0 if purge_step is None else purge_step,
            flush_secs=flush_secs,
            max_queue=max_queue,
        )

    def log_scalars(self, metrics: dict[str, float], step: int) -> None:
        for key, value in metrics.items():
            self._writer.add_scalar(key, float(value), global_step=step)

    def log_payoff(self, snapshot: PayoffSnapshot) -> None:
        step = snapshot.generation
        self._writer.add_image(PAYOFF_HEATMAP_TAG, payoff_heatmap_png(snapshot), step, dataformats="HWC")
        self._writer.add_text(PAYOFF_TABLE_TAG, payoff_markdown(snapshot), step)
        self._writer.add_image(NASH_MIXTURE_TAG, nash_bar_png(snapshot), step, dataformats="HWC")
        self.log_scalars(nash_scalars(snapshot), step)

    def log_text(self, tag: str, text: str, step: int) -> None:
        self._writer.add_text(tag, text, step)

    def log_config(self, resolved: dict[str, Any]) -> None:
        self._writer.add_text(CONFIG_TAG, resolved_config_markdown(resolved), 0)

    def flush(self) -> None:
        self._writer.flush()

    def close(self) -> None:
        self._writer.close()
