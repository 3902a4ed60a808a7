"""The run's logger built from ``logging``: the backends (TensorBoard, W&B) above the
:class:`~light_league.tracking.logger.MetricLogger` interface they implement.

The backends are imported only when the config asks for them (torch for TensorBoard, wandb
for W&B), so a run that logs nothing imports neither.
"""

from __future__ import annotations

from pathlib import Path

from light_league.tracking.config import LoggingConfig
from light_league.tracking.logger import MetricLogger, MultiLogger, NullLogger


def build_logger(config: LoggingConfig, run_dir: Path, *, resume_step: int | None = None) -> MetricLogger:
    """The run's logger: TensorBoard and/or W&B as configured, or a ``NullLogger``.

    ``resume_step`` is the first generation a resumed run will (re)write; TensorBoard hides the
    stale events at or after it.
    """
    # Backends are imported only when used (torch for TensorBoard, wandb for W&B)
    loggers: list[MetricLogger] = []
    if config.tensorboard:
        from light_league.tracking.tensorboard_logger import TensorBoardLogger

        loggers.append(
            TensorBoardLogger(
                Path(run_dir) / "tensorboard",
                flush_secs=config.flush_secs,
                max_queue=config.max_queue,
                purge_step=resume_step,
            )
        )
    if config.wandb.mode != "disabled":
        from light_league.tracking.wandb_logger import WandbLogger

        loggers.append(WandbLogger(config.wandb, Path(run_dir), resume=resume_step is not None))
    if not loggers:
        return NullLogger()
    return loggers[0] if len(loggers) == 1 else MultiLogger(loggers)
