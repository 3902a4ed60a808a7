"""The one interface every metric goes through, the data that crosses it, and the logger factory.

Every call takes ``step``; light_league uses the **generation** as the step for every key, so a
resumed run can hide stale events from one step on (see ``docs/metrics.md``).
"""

from __future__ import annotations

import json
import math
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NotRequired, TypedDict

import numpy as np
import yaml

from light_league.errors import CorruptFileError
from light_league.tracking.config import LoggingConfig


class PopulationEntry(TypedDict):
    id: str
    role: str


class GenerationRecord(TypedDict):
    """One line of ``RUN_DIR/generations.jsonl``; also what ``Console.summary`` shows."""

    generation: int
    wall_s: float  #: seconds since the run started, at the end of this generation
    env_steps: int  #: environment steps since the run started, at the end of this generation
    population: list[PopulationEntry]
    nash: dict[str, float]
    nash_entropy: float
    elo: dict[str, float]
    diversity: float | None  #: None until two members have behaviour data
    nash_conv: NotRequired[float]  #: only for games where it is exact
    env_steps_per_s: NotRequired[float]  #: this generation's throughput
    timings: NotRequired[dict[str, float]]  #: seconds per phase of this generation


@dataclass
class PayoffSnapshot:
    """One generation's meta-game: who beats whom, how often, and the Nash mixture over them."""

    generation: int
    agent_ids: list[str]
    roles: list[str]
    win_rates: np.ndarray
    """(n, n): row's mean outcome against column in [0, 1]; NaN where the pair never played."""
    games: np.ndarray
    """(n, n): games played per cell."""
    nash: np.ndarray
    """(n,): Nash mixture; zero for members outside the solved set."""

    def __post_init__(self) -> None:
        self.win_rates = np.asarray(self.win_rates, dtype=np.float64)
        self.games = np.asarray(self.games, dtype=np.int64)
        self.nash = np.asarray(self.nash, dtype=np.float64)
        n = len(self.agent_ids)
        if len(self.roles) != n:
            raise ValueError(
                f"PayoffSnapshot: {len(self.roles)} roles for {n} agent ids; give one role per agent"
            )
        if len(set(self.agent_ids)) != n:
            raise ValueError(f"PayoffSnapshot: agent ids must be unique, got {self.agent_ids}")
        for name, arr, shape in (("win_rates", self.win_rates, (n, n)), ("games", self.games, (n, n))):
            if arr.shape != shape:
                raise ValueError(
                    f"PayoffSnapshot: {name} must have shape {shape} for {n} agents, got {arr.shape}"
                )
        if self.nash.shape != (n,):
            raise ValueError(f"PayoffSnapshot: nash must have shape ({n},), got {self.nash.shape}")
        finite = self.win_rates[~np.isnan(self.win_rates)]
        if finite.size and (finite.min() < 0.0 or finite.max() > 1.0):
            raise ValueError(
                f"PayoffSnapshot: win rates must lie in [0, 1] (NaN for unplayed), "
                f"got values in [{finite.min()}, {finite.max()}]"
            )

    @property
    def size(self) -> int:
        return len(self.agent_ids)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict; NaN win rates become ``null``."""
        return {
            "generation": int(self.generation),
            "agent_ids": list(self.agent_ids),
            "roles": list(self.roles),
            "win_rates": [[None if math.isnan(v) else float(v) for v in row] for row in self.win_rates],
            "games": self.games.tolist(),
            "nash": [float(p) for p in self.nash],
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> PayoffSnapshot:
        """Inverse of :meth:`to_json`; a missing key or bad shape raises ``CorruptFileError``."""
        try:
            return cls(
                generation=int(d["generation"]),
                agent_ids=[str(a) for a in d["agent_ids"]],
                roles=[str(r) for r in d["roles"]],
                win_rates=np.array(
                    [[np.nan if v is None else float(v) for v in row] for row in d["win_rates"]],
                    dtype=np.float64,
                ).reshape(len(d["agent_ids"]), len(d["agent_ids"])),
                games=np.asarray(d["games"], dtype=np.int64),
                nash=np.asarray(d["nash"], dtype=np.float64),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise CorruptFileError(f"not a payoff snapshot ({exc.__class__.__name__}: {exc})") from None


#: tags written by ``log_payoff`` and ``log_config`` by every logger (documented in docs/metrics.md)
PAYOFF_HEATMAP_TAG = "league/payoff_heatmap"
PAYOFF_TABLE_TAG = "league/payoff_table"
NASH_MIXTURE_TAG = "league/nash_mixture"
CONFIG_TAG = "config/resolved"


def resolved_config_markdown(resolved: dict[str, Any]) -> str:
    """The resolved config as a fenced YAML block (values that are not JSON types become strings)."""
    plain = json.loads(json.dumps(resolved, default=str))
    return "```yaml\n" + yaml.safe_dump(plain, sort_keys=False) + "```\n"


class MetricLogger(ABC):
    """Every metric of a run is written through this interface (TensorBoard, W&B, nothing)."""

    @abstractmethod
    def log_scalars(self, metrics: dict[str, float], step: int) -> None:
        """Namespaced scalar keys (``league/nash_entropy``, ``rating/<agent>`` ...) at ``step``."""

    @abstractmethod
    def log_payoff(self, snapshot: PayoffSnapshot) -> None:
        """Heatmap image, markdown table and Nash bar chart, at step = ``snapshot.generation``."""

    @abstractmethod
    def log_text(self, tag: str, text: str, step: int) -> None:
        """Markdown text under ``tag``."""

    @abstractmethod
    def log_config(self, resolved: dict[str, Any]) -> None:
        """The resolved config of the run (``config/resolved``)."""

    @abstractmethod
    def flush(self) -> None:
        """Push pending events to disk (or to the service)."""

    @abstractmethod
    def close(self) -> None:
        """Flush and release files; the logger must not be used afterwards."""


class NullLogger(MetricLogger):
    """Discards everything (logging turned off, or a worker that must not log)."""

    def log_scalars(self, metrics: dict[str, float], step: int) -> None:
        return None

    def log_payoff(self, snapshot: PayoffSnapshot) -> None:
        return None

    def log_text(self, tag: str, text: str, step: int) -> None:
        return None

    def log_config(self, resolved: dict[str, Any]) -> None:
        return None

    def flush(self) -> None:
        return None

    def close(self) -> None:
        return None


class MultiLogger(MetricLogger):
    """Forwards every call to each of its loggers, in order."""

    def __init__(self, loggers: Iterable[MetricLogger]) -> None:
        self.loggers = list(loggers)

    def log_scalars(self, metrics: dict[str, float], step: int) -> None:
        for logger in self.loggers:
            logger.log_scalars(metrics, step)

    def log_payoff(self, snapshot: PayoffSnapshot) -> None:
        for logger in self.loggers:
            logger.log_payoff(snapshot)

    def log_text(self, tag: str, text: str, step: int) -> None:
        for logger in self.loggers:
            logger.log_text(tag, text, step)

    def log_config(self, resolved: dict[str, Any]) -> None:
        for logger in self.loggers:
            logger.log_config(resolved)

    def flush(self) -> None:
        for logger in self.loggers:
            logger.flush()

    def close(self) -> None:
        for logger in self.loggers:
            logger.close()


def nash_scalars(snapshot: PayoffSnapshot) -> dict[str, float]:
    """``nash/<agent>``: each member's Nash mass, logged with every payoff snapshot."""
    return {f"nash/{agent}": float(p) for agent, p in zip(snapshot.agent_ids, snapshot.nash, strict=True)}


def build_logger(config: LoggingConfig, run_dir: Path, *, resume_step: int | None = None) -> MetricLogger:
    """The run's logger: TensorBoard and/or W&B as configured, or a ``NullLogger``.

    ``resume_step`` is the first generation a resumed run will (re)write; TensorBoard hides the
    stale events at or after it.
    """
    # Backends are imported only when used (torch for TensorBoard, wandb for W&B); both
    # subclass MetricLogger from this module, so they cannot be imported at its top.
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


_PLACEHOLDER = re.compile(r"<[a-z_]+>")
_KEY_CELL = re.compile(r"`([^`]+)`")


def documented_key_patterns(doc_path: Path) -> list[str]:
    """The metric keys listed in the first column of the tables of ``docs/metrics.md``."""
    patterns: list[str] = []
    for line in Path(doc_path).read_text(encoding="utf-8").splitlines():
        if not line.startswith("|"):
            continue
        first_cell = line.strip().strip("|").split("|")[0]
        patterns.extend(_KEY_CELL.findall(first_cell))
    return patterns


def undocumented_keys(keys: Iterable[str], doc_path: Path) -> list[str]:
    """Keys that match no documented pattern (``<agent>``, ``<phase>`` ... match one path segment)."""
    regexes = [
        re.compile("^" + _PLACEHOLDER.sub("[^/]+", re.escape(p)) + "$")
        for p in documented_key_patterns(doc_path)
    ]
    return sorted({k for k in keys if not any(r.match(k) for r in regexes)})
