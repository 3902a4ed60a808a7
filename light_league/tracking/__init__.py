"""Metric logging (TensorBoard, W&B), console output, payoff rendering and the ``report`` command.

``build_logger`` imports the TensorBoard and W&B backends only when the config asks for them.
"""

from light_league.tracking.backends import build_logger
from light_league.tracking.config import LoggingConfig, WandbConfig
from light_league.tracking.console import Console, GenerationProgress
from light_league.tracking.logger import MetricLogger, MultiLogger, NullLogger, PayoffSnapshot
from light_league.tracking.record import GenerationRecord, read_generations
from light_league.tracking.report import load_payoff_snapshot, report, save_payoff_snapshot

__all__ = [
    "Console",
    "GenerationProgress",
    "GenerationRecord",
    "LoggingConfig",
    "MetricLogger",
    "MultiLogger",
    "NullLogger",
    "PayoffSnapshot",
    "WandbConfig",
    "build_logger",
    "load_payoff_snapshot",
    "read_generations",
    "report",
    "save_payoff_snapshot",
]
