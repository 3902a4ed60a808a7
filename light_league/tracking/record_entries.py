"""The entries a generation record holds (its population, tasks, probe readings, each learner's
newest snapshot, the best main agent) and the checks their JSON values pass: each field with its
docstring, from which docs/metrics.md's record section is generated. The record itself, how it is
built, written, read and migrated: :mod:`light_league.tracking.record`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Self

import numpy as np

from light_league.game_theory.ranking import order_note, rank_population
from light_league.game_theory.uncertainty import Stability
from light_league.tracking.handover import best_main, worst_opponents
from light_league.tracking.logger import Cell, PayoffSnapshot, cell
from light_league.types import newest_snapshots
from light_league.utils.checks import is_int, is_num

Check = Callable[[Any], bool]
Interval = tuple[float, float]
#: a field written only while it holds something (its ``written`` metadata), so that records
#: written before it read and write back as they were
NOT_EMPTY = "when not empty"


# ---------------------------------------------------------------------------- value checks


def _optional_number(value: Any) -> bool:
    return value is None or is_num(value)


def _optional_int(value: Any) -> bool:
    return value is None or is_int(value)


def _optional_text(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _text(value: Any) -> bool:
    return isinstance(value, str)


def _numbers(value: Any) -> bool:
    return isinstance(value, dict) and all(is_num(v) for v in value.values())


def _ints(value: Any) -> bool:
    return isinstance(value, dict) and all(is_int(v) for v in value.values())


def _ids(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _optional_numbers(value: Any) -> bool:
    return value is None or _numbers(value)


def _interval(value: Any) -> bool:
    return value is None or (
        isinstance(value, list) and len(value) == 2 and all(_optional_number(v) for v in value)
    )


def _intervals(value: Any) -> bool:
    return isinstance(value, dict) and all(v is not None and _interval(v) for v in value.values())


def _objects(value: Any, valid: Check) -> bool:
    return isinstance(value, list) and all(isinstance(v, dict) and valid(v) for v in value)


def _fields_valid(value: Mapping[str, Any], checks: Mapping[str, Check]) -> bool:
    """Every key of ``checks`` that ``value`` has passes its check (absent keys are not checked)."""
    return all(check(value[key]) for key, check in checks.items() if key in value)


def _interval_or_none(value: Any) -> Interval | None:
    return None if value is None else (value[0], value[1])


# ---------------------------------------------------------------------------- the entries


class _Entry:
    """An entry of a record, written as a JSON object of its fields in order; read from one (its
    fields checked by the record): an absent key takes the field's default, a ``[low, high]``
    interval becomes a tuple."""

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Self:
        fields = dataclasses.fields(cls)  # type: ignore[arg-type]
        return cls(**{f.name: _entry_value(str(f.type), data[f.name]) for f in fields if f.name in data})

    def to_json(self) -> dict[str, Any]:
        out = _plain(self)
        assert isinstance(out, dict)
        return out


def _entry_value(annotation: str, value: Any) -> Any:
    if annotation.startswith("Interval") and isinstance(value, list):
        return _interval_or_none(value)
    return dict(value) if isinstance(value, dict) else value


@dataclass(frozen=True, kw_only=True)
class Member(_Entry):
    """A member of the population (an entry of ``population``)."""

    id: str
    """Its id: a snapshot ``<learner>-v<k>`` or a baseline's name."""
    role: str
    """Its role label (``main_agent``, ``main_exploiter``, ``league_exploiter``, ``best_response``,
    a plugin role's label, or ``baseline``)."""


def _member(value: Mapping[str, Any]) -> bool:
    return isinstance(value.get("id"), str) and isinstance(value.get("role"), str)


@dataclass(frozen=True, kw_only=True)
class MetaStability(_Entry):
    """How far the meta-strategy moves when the payoff table is redrawn from its posterior."""

    tv_mean: float
    """Mean total-variation distance between the draws' mixtures and the meta-strategy."""
    draws: int
    """Tables drawn and solved (fewer than ``league.meta_stability_draws`` when
    ``league.meta_stability_max_s`` ran out)."""
    support: Mapping[str, float]
    """``{id: share}``: the share of draws in which each member has mass of at least 0.001."""

    @classmethod
    def of(cls, stability: Stability, ids: Sequence[str]) -> MetaStability:
        support = dict(zip(ids, [round(p, 4) for p in stability.support.tolist()]))
        return cls(tv_mean=round(stability.tv_mean, 6), draws=stability.draws, support=support)


def _meta_stability(value: Any) -> bool:
    return (
        value is None
        or isinstance(value, dict)
        and (is_num(value.get("tv_mean")) and is_int(value.get("draws")) and _numbers(value.get("support")))
    )


@dataclass(frozen=True, kw_only=True)
class TaskRecord(_Entry):
    """One training task of the generation (an entry of ``tasks``)."""

    learner: str
    """The learner that trained."""
    role: str
    """Its role label."""
    weighting: str
    """How its opponents were chosen, e.g. ``pfsp_meta``, ``meta_strategy`` (PSRO) or
    ``pfsp(fallback:no_meta_strategy)``."""
    env_steps: int
    """Environment steps it trained in this generation."""
    opponents: Mapping[str, float]
    """``{id: probability}``: the task's opponent distribution."""
    info: Mapping[str, Any] = field(default_factory=dict)
    """The scheduler's notes on the task: for the ``league`` scheduler ``{"branches": {branch:
    mass}, "fallbacks": [...]}``, with ``"meta_mass": {branch: share}`` (the share of the
    meta-strategy's mass on the members a meta-weighted branch chose among) and ``"excluded": {id:
    reason}`` where they apply (docs/league.md); for ``psro`` with two populations ``{"seat": s}``."""


def _task(value: Mapping[str, Any]) -> bool:
    checks = {"learner": _text, "role": _text, "weighting": _text, "env_steps": is_int}
    return (
        all(check(value.get(key)) for key, check in checks.items())
        and _numbers(value.get("opponents"))
        and isinstance(value.get("info", {}), dict)
    )


@dataclass(frozen=True, kw_only=True)
class ProbeReading(_Entry):
    """What the record keeps of one probe (a value of ``probe``; the whole reading is in
    ``RUN_DIR/exploit/<target>_gen<G>.json``)."""

    generation: int | None = None
    """The generation whose target the probe played."""
    env_steps: int | None = None
    """Environment steps the probe trained."""
    games: int | None = None
    """Games the reading was measured over."""
    payoff: float | None = None
    """The probe's mean payoff per game against the target."""
    payoff_ci95: Interval | None = None
    """Its 95% interval."""
    win_rate: float | None = None
    """The probe's win rate (wins + draws / 2) against the target; null where the env has no win
    or loss."""
    win_rate_ci95: Interval | None = None
    """Its 95% interval."""
    best_response_payoff: float | None = None
    """The exact best response's mean payoff against the target (poker only)."""


def _probe_readings(value: Any) -> bool:
    """``{target: reading}`` with each reading's numbers, intervals and counts of their types."""
    checks: dict[str, Check] = {
        **dict.fromkeys(("win_rate", "payoff", "best_response_payoff"), _optional_number),
        **dict.fromkeys(("win_rate_ci95", "payoff_ci95"), _interval),
        **dict.fromkeys(("generation", "env_steps", "games"), _optional_int),
    }
    return isinstance(value, dict) and all(
        isinstance(reading, dict) and _fields_valid(reading, checks) for reading in value.values()
    )


@dataclass(frozen=True, kw_only=True)
class NewestEntry(_Entry):
    """A learner's newest snapshot (an entry of ``newest``); the console and ``report`` show it."""

    learner: str | None = None
    """The learner, e.g. ``main_agent_0``."""
    id: str
    """Its newest snapshot, e.g. ``main_agent_0-v23``."""
    role: str | None = None
    """Its role label."""
    rating: float | None = None
    """The snapshot's rating."""
    rating_ci95: Interval | None = None
    """That rating's 95% interval."""
    meta_strategy: float | None = None
    """Its mass in the meta-strategy."""
    baseline: str | None = None
    """The run's reference opponent (the record's ``reference``), the same in every generation;
    null without one. Records written before it name the strongest baseline (highest rating) of
    their generation."""
    win_rate: float | None = None
    """The snapshot's mean outcome against that baseline; null if never played."""
    win_rate_ci95: Interval | None = None
    """That cell's 95% interval."""
    games: int | None = None
    """The games behind ``win_rate``."""
    worst_opponents: Mapping[str, float] = field(default_factory=dict, metadata={"written": NOT_EMPTY})
    """``{id: win rate}``: the members it does worst against, lowest win rate first (3 of them;
    absent in records written before it)."""


def _newest(value: Mapping[str, Any]) -> bool:
    checks: dict[str, Check] = {
        **dict.fromkeys(("rating", "elo", "meta_strategy", "nash", "win_rate"), _optional_number),
        **dict.fromkeys(("rating_ci95", "win_rate_ci95"), _interval),
        **dict.fromkeys(("learner", "role", "baseline"), _optional_text),
        "games": _optional_int,
        "worst_opponents": _numbers,
    }
    return isinstance(value.get("id"), str) and _fields_valid(value, checks)


@dataclass(frozen=True, kw_only=True)
class BestEntry(_Entry):
    """The best main agent so far (the record's ``best_main``): of the main-agent snapshots in the
    population, the one whose worst win rate against the reference set (the baselines and the
    exploiters' snapshots, which do not shift with the population) is highest; ties by its mean
    win rate against the set, then the newer snapshot."""

    id: str
    """The snapshot, e.g. ``main_agent_0-v9``."""
    worst_opponent: str
    """The member of the reference set it does worst against."""
    worst_win_rate: float
    """Its win rate against that member."""
    mean_win_rate: float
    """Its mean win rate against the reference set."""
    references: int
    """Members in the reference set."""
    win_rate: float | None = None
    """Its mean outcome against the run's reference opponent (``reference``); null without one."""
    win_rate_ci95: Interval | None = None
    """That cell's 95% interval."""
    games: int | None = None
    """The games behind ``win_rate``."""

    @classmethod
    def of(cls, snapshot: PayoffSnapshot, reference: str | None) -> BestEntry | None:
        """The best main agent of ``snapshot`` (None without a main agent or a reference set)."""
        best = best_main(snapshot)
        if best is None:
            return None
        versus = _versus(snapshot, best.member, reference)
        return cls(
            id=snapshot.agent_ids[best.member],
            worst_opponent=snapshot.agent_ids[best.worst],
            worst_win_rate=round(best.worst_win_rate, 6),
            mean_win_rate=round(best.mean_win_rate, 6),
            references=best.references,
            win_rate=None if versus is None else versus.win_rate,
            win_rate_ci95=None if versus is None or versus.ci95 is None else _interval_or_none(versus.ci95),
            games=None if versus is None else versus.games,
        )


def _best(value: Any) -> bool:
    checks: dict[str, Check] = {
        **dict.fromkeys(("worst_win_rate", "mean_win_rate"), is_num),
        **dict.fromkeys(("id", "worst_opponent"), _text),
        "references": is_int,
        "win_rate": _optional_number,
        "win_rate_ci95": _interval,
        "games": _optional_int,
    }
    return value is None or (
        isinstance(value, dict)
        and all(key in value for key in ("id", "worst_win_rate"))
        and _fields_valid(value, checks)
    )


def _versus(snapshot: PayoffSnapshot, member: int, reference: str | None) -> Cell | None:
    """``member``'s cell against the reference opponent (None without one, or unplayed)."""
    if reference is None or reference not in snapshot.agent_ids:
        return None
    return cell(snapshot, member, snapshot.agent_ids.index(reference))


def newest_entries(
    snapshot: PayoffSnapshot,
    ratings: Mapping[str, float],
    intervals: Mapping[str, Sequence[float]] | None = None,
    *,
    reference: str | None = None,
) -> tuple[NewestEntry, ...]:
    """Each learner's newest snapshot with its rating (and its 95% interval from ``intervals``),
    meta-strategy mass, mean outcome against the run's ``reference`` opponent (with the games
    behind it and its interval; none without a reference) and the members it does worst against."""
    order = ("main_agent", "main_exploiter", "league_exploiter", "best_response")
    indices = newest_snapshots(snapshot.agent_ids, snapshot.roles)
    indices.sort(key=lambda i: order.index(snapshot.roles[i]) if snapshot.roles[i] in order else len(order))
    against = reference if reference in snapshot.agent_ids else None
    entries = []
    for i in indices:
        agent = snapshot.agent_ids[i]
        versus = _versus(snapshot, i, against)
        interval = (intervals or {}).get(agent)
        worst = worst_opponents(snapshot, i)
        entries.append(
            NewestEntry(
                learner=agent.rsplit("-v", 1)[0],
                id=agent,
                role=snapshot.roles[i],
                rating=ratings.get(agent),
                rating_ci95=None if interval is None else (float(interval[0]), float(interval[1])),
                meta_strategy=round(float(snapshot.meta_strategy[i]), 6),
                baseline=against,
                win_rate=None if versus is None else versus.win_rate,
                win_rate_ci95=None
                if versus is None or versus.ci95 is None
                else _interval_or_none(versus.ci95),
                games=0 if versus is None else versus.games,
                worst_opponents={
                    snapshot.agent_ids[j]: round(float(snapshot.win_rates[i, j]), 6) for j in worst
                },
            )
        )
    return tuple(entries)


def ranking_fields(snapshot: PayoffSnapshot) -> dict[str, Any]:
    """The record's ``ranking``, ``ranking_layer``, ``nash_average`` and ``ranking_note`` of a
    complete payoff table (:mod:`light_league.game_theory.ranking`); empty while a cell is unplayed."""
    if np.isnan(snapshot.win_rates).any():
        return {}
    ids = snapshot.agent_ids
    ranked = rank_population(snapshot.win_rates)
    return {
        "ranking": tuple(ids[i] for i in ranked.order),
        "ranking_layer": {ids[i]: k for i, k in sorted(ranked.layer.items())},
        "nash_average": {a: round(float(v), 6) for a, v in zip(ids, ranked.nash_average)},
        "ranking_note": order_note(ids, snapshot.win_rates, ranked.order),
    }


def left_out(spec: dataclasses.Field[Any], value: Any) -> bool:
    """Whether a field holding ``value`` is left out of the JSON: *when set* while None, *when not
    empty* while empty."""
    written = spec.metadata.get("written", "always")
    return (written == "when set" and value is None) or (written == NOT_EMPTY and not value)


def _plain(value: Any) -> Any:
    """``value`` as JSON holds it: entries as objects (their fields in order, those left out while
    empty aside), tuples as lists."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = dataclasses.fields(value)
        return {
            f.name: _plain(getattr(value, f.name)) for f in fields if not left_out(f, getattr(value, f.name))
        }
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    return value
