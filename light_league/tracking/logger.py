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
from typing import Any

import numpy as np
import yaml

from light_league.errors import CorruptFileError
from light_league.types import newest_snapshots as newest_snapshots  # its former home


def _nullable(values: np.ndarray) -> list[list[float | None]]:
    return [[None if math.isnan(v) else float(v) for v in row] for row in values]


def _from_nullable(rows: list[list[float | None]]) -> np.ndarray:
    return np.array([[np.nan if v is None else float(v) for v in row] for row in rows], dtype=np.float64)


@dataclass
class PayoffSnapshot:
    """One generation's meta-game: who beats whom, how often, and the meta-strategy over them."""

    generation: int
    agent_ids: list[str]
    roles: list[str]
    win_rates: np.ndarray
    """(n, n): row's mean outcome against column in [0, 1]; NaN where the pair never played."""
    games: np.ndarray
    """(n, n): games played per cell."""
    meta_strategy: np.ndarray
    """(n,): the meta-strategy (the configured meta-solver's mixture; the Nash mixture by default)."""
    ci_low: np.ndarray | None = None
    """(n, n): lower end of each cell's 95% interval (Jeffreys; NaN where unplayed), or None."""
    ci_high: np.ndarray | None = None
    """(n, n): upper end of each cell's 95% interval, or None."""
    meta_solver: str = "nash"
    """The meta-solver that made ``meta_strategy`` (``league.meta_solver``)."""

    def __post_init__(self) -> None:
        self.win_rates = np.asarray(self.win_rates, dtype=np.float64)
        self.games = np.asarray(self.games, dtype=np.int64)
        self.meta_strategy = np.asarray(self.meta_strategy, dtype=np.float64)
        for name in ("ci_low", "ci_high"):
            if getattr(self, name) is not None:
                setattr(self, name, np.asarray(getattr(self, name), dtype=np.float64))
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
        if self.meta_strategy.shape != (n,):
            raise ValueError(
                f"PayoffSnapshot: meta_strategy must have shape ({n},), got {self.meta_strategy.shape}"
            )
        for name, want in (("ci_low", (n, n)), ("ci_high", (n, n))):
            arr = getattr(self, name)
            if arr is not None and arr.shape != want:
                raise ValueError(
                    f"PayoffSnapshot: {name} must have shape {want} for {n} agents, got {arr.shape}"
                )
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
        """A JSON-ready dict; NaN win rates (and interval ends) become ``null``."""
        out: dict[str, Any] = {
            "generation": int(self.generation),
            "agent_ids": list(self.agent_ids),
            "roles": list(self.roles),
            "win_rates": _nullable(self.win_rates),
            "games": self.games.tolist(),
            "meta_solver": self.meta_solver,
            "meta_strategy": [float(p) for p in self.meta_strategy],
        }
        if self.ci_low is not None and self.ci_high is not None:
            out["interval"] = (
                "95% Jeffreys (Beta(wins + 1/2, losses + 1/2) quantiles); exact cells zero width"
            )
            out["ci_low"] = _nullable(self.ci_low)
            out["ci_high"] = _nullable(self.ci_high)
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> PayoffSnapshot:
        """Inverse of :meth:`to_json`; a missing key or bad shape raises ``CorruptFileError``. A
        table written before the meta-strategy had one name keeps it as ``meta_strategy`` when its
        meta-solver was not ``nash``, else as ``nash``."""
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
                meta_strategy=np.asarray(
                    d["meta_strategy"] if "meta_strategy" in d else d["nash"], dtype=np.float64
                ),
                ci_low=_from_nullable(d["ci_low"]) if "ci_low" in d else None,
                ci_high=_from_nullable(d["ci_high"]) if "ci_high" in d else None,
                meta_solver=str(d.get("meta_solver", "nash")),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise CorruptFileError(f"not a payoff snapshot ({exc.__class__.__name__}: {exc})") from None


@dataclass(frozen=True)
class Cell:
    """One played cell of a payoff table: the row's mean outcome against the column."""

    win_rate: float
    games: int
    ci95: list[float] | None  #: the 95% interval, None where the snapshot has none


def cell(snapshot: PayoffSnapshot, i: int, j: int) -> Cell | None:
    """Row ``i`` against column ``j`` of ``snapshot`` (rounded to 6 decimals), None if unplayed."""
    rate = float(snapshot.win_rates[i, j])
    if math.isnan(rate):
        return None
    ci = None
    if snapshot.ci_low is not None and snapshot.ci_high is not None:
        ci = [round(float(snapshot.ci_low[i, j]), 6), round(float(snapshot.ci_high[i, j]), 6)]
    return Cell(round(rate, 6), int(snapshot.games[i, j]), ci)


def versus_baselines(snapshot: PayoffSnapshot, member: str) -> dict[str, Cell | None]:
    """``member``'s cell against each baseline of ``snapshot`` (None where unplayed), population order."""
    i = snapshot.agent_ids.index(member)
    return {
        agent: cell(snapshot, i, j)
        for j, (agent, role) in enumerate(zip(snapshot.agent_ids, snapshot.roles, strict=True))
        if role == "baseline"
    }


#: tags written by ``log_payoff`` and ``log_config`` by every logger (documented in docs/metrics.md)
PAYOFF_HEATMAP_TAG = "league/payoff_heatmap"
PAYOFF_TABLE_TAG = "league/payoff_table"
META_STRATEGY_TAG = "league/meta_strategy"
#: written by the runner each generation: the top of the population by rating, with intervals
LEADERBOARD_TAG = "league/leaderboard"
CONFIG_TAG = "config/resolved"


def resolved_config_markdown(resolved: dict[str, Any]) -> str:
    """The resolved config as a fenced YAML block (values that are not JSON types become strings)."""
    plain = json.loads(json.dumps(resolved, default=str))
    return "```yaml\n" + yaml.safe_dump(plain, sort_keys=False) + "```\n"


#: how long an interrupted run waits for the charts still being drawn (:meth:`MetricLogger.interrupt`)
INTERRUPTED_CLOSE_S = 10.0


class MetricLogger(ABC):
    """Every metric of a run is written through this interface (TensorBoard, W&B, nothing)."""

    @abstractmethod
    def log_scalars(self, metrics: dict[str, float], step: int) -> None:
        """Namespaced scalar keys (``league/meta_entropy``, ``rating/<agent>`` ...) at ``step``."""

    @abstractmethod
    def log_payoff(self, snapshot: PayoffSnapshot) -> None:
        """Heatmap image, markdown table and meta-strategy bar chart, at step = ``snapshot.generation``."""

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

    def interrupt(self) -> None:
        """The run was interrupted (Ctrl-C, SIGTERM) and :meth:`close` comes next: cut short the
        background work it would wait for (charts still being drawn), a few seconds at most."""
        return None


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

    def interrupt(self) -> None:
        for logger in self.loggers:
            logger.interrupt()

    def close(self) -> None:
        for logger in self.loggers:
            logger.close()


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
