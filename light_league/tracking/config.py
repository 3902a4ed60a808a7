"""Configuration of the metric loggers and the console (the ``logging`` section)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from light_league.config_base import Section

WandbMode = Literal["disabled", "offline", "online"]
ConsoleMode = Literal["rich", "plain", "quiet"]


class WandbConfig(Section):
    """Weights & Biases; wandb is imported only when ``mode`` is not ``disabled``."""

    mode: WandbMode = "disabled"
    """``disabled`` (no wandb at all), ``offline`` (files under RUN_DIR/wandb, sync later), ``online``."""

    project: str = Field("light_league", min_length=1, max_length=128)
    """W&B project the run is filed under."""

    entity: str | None = Field(None, min_length=1, max_length=128)
    """W&B team or user; ``None`` uses the logged-in user's default entity."""

    tags: list[str] = Field(default_factory=list, max_length=64)
    """Free-form tags attached to the W&B run."""


class LoggingConfig(Section):
    """Where metrics go: TensorBoard, W&B and the console."""

    tensorboard: bool = True
    """Write TensorBoard event files under RUN_DIR/tensorboard/."""

    wandb: WandbConfig = Field(default_factory=WandbConfig)
    """Weights & Biases settings (off by default)."""

    console: ConsoleMode = "rich"
    """``rich`` (progress bars and a summary table), ``plain`` (text summary, no bars), ``quiet`` (one line per generation)."""

    flush_secs: int = Field(30, ge=1, le=3600)
    """TensorBoard writes pending events to disk at least this often (seconds)."""

    max_queue: int = Field(100, ge=1, le=100_000)
    """TensorBoard writes to disk once this many events are pending."""

    summary_top_k: int = Field(10, ge=1, le=100)
    """Rows of the population table in the console summary and TensorBoard's leaderboard (in the
    leaderboard's order: Nash clustering, then Nash averaging)."""

    member_scalars: bool = False
    """Also log one scalar per member and generation (``rating/<agent>``, ``elo_sequential/<agent>``,
    ``nash/<agent>``, ``support/<agent>``): hundreds of tags in a long league, so off by default;
    every member's numbers are in ``generations.jsonl``, TensorBoard's leaderboard and ``report``."""
