"""The generation record: one line of ``RUN_DIR/generations.jsonl`` per completed generation.

Everything about it is here: the type (:class:`GenerationRecord` and the entries it holds, each
field with its docstring, from which docs/metrics.md's record section is generated), how the
runner builds it from a generation's statistics (:meth:`GenerationRecord.build`), how it is
written (:meth:`GenerationRecord.to_json`: the keys in the order runs have always written them)
and how it is read back (:func:`read_generations`: every line checked, field by field, and
records written in an older format migrated to this one, :func:`migrate_record`).

Readers use the fields (``record.meta_strategy``, ``record.newest``), never the JSON keys: a test
(tests/unit/test_record_lookups.py) holds that outside this module.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json
import textwrap
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from light_league.errors import CorruptFileError
from light_league.game_theory.elo import Z95
from light_league.game_theory.uncertainty import Stability
from light_league.tracking.logger import PayoffSnapshot
from light_league.tracking.record_entries import (
    NOT_EMPTY,
    BestEntry,
    Check,
    Interval,
    Member,
    MetaStability,
    NewestEntry,
    ProbeReading,
    TaskRecord,
    _best,
    _ids,
    _intervals,
    _ints,
    _member,
    _meta_stability,
    _newest,
    _numbers,
    _objects,
    _optional_int,
    _optional_number,
    _optional_numbers,
    _optional_text,
    _plain,
    _probe_readings,
    _task,
    _text,
    left_out,
    newest_entries,
    ranking_fields,
)
from light_league.types import TrainingTask
from light_league.utils.checks import is_int

__all__ = [
    "GENERATIONS_FILE",
    "BestEntry",
    "GenerationRecord",
    "Member",
    "MetaStability",
    "NewestEntry",
    "ProbeReading",
    "TaskRecord",
    "newest_entries",
]

GENERATIONS_FILE = "generations.jsonl"

# ---------------------------------------------------------------------------- the record


def _spec(
    check: Check, expected: str, *, written: str = "always", default: Any = None, factory: Any = None
) -> Any:
    """A record field: the check its JSON value must pass (``expected`` says what it must be),
    and when it is written: ``always``, ``when set`` (left out while None) or ``when not empty``
    (left out while empty)."""
    metadata = {"check": check, "expected": expected, "written": written}
    if factory is not None:
        return field(default_factory=factory, metadata=metadata)
    return field(default=default, metadata=metadata)


_BY_ID = "an object of numbers by member id"


@dataclass(frozen=True)
class GenerationRecord:
    """One completed generation: who was in the population, what the meta-game and the ratings
    said, what was trained and how long it took, how exploitable the league's outputs were.

    Every field but ``generation`` has a default, so that records of older runs (and a report of a
    payoff table without a record) read; the runner always writes the fields marked *always*."""

    generation: int = _spec(is_int, "an integer")
    """The generation, from 0."""
    wall_s: float | None = _spec(_optional_number, "a number")
    """Seconds since the run started, at the end of this generation (a resumed run goes on
    counting from its checkpoint)."""
    env_steps: int | None = _spec(_optional_int, "an integer")
    """Environment steps since the run started (training and evaluation games)."""
    population: tuple[Member, ...] = _spec(
        lambda v: _objects(v, _member), "a list of {id, role} objects", factory=tuple
    )
    """``[{id, role}]``: the members after this generation, in the payoff table's order."""
    meta_solver: str = _spec(_text, "a meta-solver name", default="nash")
    """The meta-solver that made ``meta_strategy`` (``league.meta_solver``)."""
    meta_strategy: Mapping[str, float] = _spec(_numbers, _BY_ID, factory=dict)
    """``{id: p}``: the meta-solver's mixture over the members (the Nash mixture by default), the
    one shape the meta-strategy has in a record."""
    meta_entropy: float | None = _spec(_optional_number, "a number")
    """The meta-strategy's entropy (nats), as ``league/meta_entropy``."""
    meta_stability: MetaStability | None = _spec(
        _meta_stability, "a {tv_mean, draws, support} object", written="when set"
    )
    """``{tv_mean, draws, support: {id: p}}``: the meta-strategy's stability under posterior draws
    of the table; only while the draws are on (``league.meta_stability_draws``)."""
    rating: Mapping[str, float] = _spec(_numbers, _BY_ID, factory=dict)
    """``{id: rating}``: Elo fitted (Bradley-Terry) to every evaluation game, as ``rating/<agent>``."""
    rating_anchor: str | None = _spec(_optional_text, "a member id")
    """The member the rating holds fixed (null when none)."""
    rating_ci95: Mapping[str, Interval] = _spec(
        _intervals, "an object of [low, high] intervals by member id", factory=dict
    )
    """``{id: [low, high]}``: each rating's 95% interval (the anchor's has zero width)."""
    elo_sequential: Mapping[str, float] = _spec(_numbers, _BY_ID, factory=dict)
    """``{id: Elo}``: the sequential Elo, game by game (order-dependent; a secondary figure)."""
    diversity: float | None = _spec(_optional_number, "a number")
    """Behaviour diversity of the population (null until two members have behaviour data)."""
    games: Mapping[str, int] = _spec(_ints, "an object of game counts by kind", factory=dict)
    """``{"train": n, "eval": n}``: the games played in this generation by kind (a kind with no
    games is left out; exact evaluation enters no games)."""
    tasks: tuple[TaskRecord, ...] = _spec(
        lambda v: _objects(v, _task), "a list of task objects", factory=tuple
    )
    """One object per training task of the generation (see *tasks* below)."""
    env_steps_per_s: float | None = _spec(_optional_number, "a number")
    """This generation's training throughput: environment steps of training games per second of
    rollout time."""
    timings: Mapping[str, float] = _spec(_numbers, "an object of seconds by phase", factory=dict)
    """``{phase: seconds}``: the generation's phases (``plan``, ``train``, ``snapshot``,
    ``evaluate``, ``solve``, ``exploitability`` ...; the checkpoint phase is still running)."""
    train_split_s: Mapping[str, float] = _spec(_numbers, "an object of seconds by part", factory=dict)
    """``{"rollout": seconds, "update": seconds}``: the ``train`` phase split."""
    shared_effective_games: float | None = _spec(_optional_number, "a number", written="when set")
    """With ``evaluation.shared_games`` only: the fewest effective games, ``(sum w)^2 / sum w^2``,
    any member keeps in either seat of the shared games (docs/league.md, "Shared games")."""
    meta_nash_conv: float | None = _spec(_optional_number, "a number", written="when set")
    """The meta-strategy's exact NashConv (only where exact, as ``exploitability/meta_nash_conv``)."""
    main_nash_conv: float | None = _spec(_optional_number, "a number", written="when set")
    """The newest main agent's exact NashConv (only where exact)."""
    average: Mapping[str, float] | None = _spec(
        _optional_numbers, "an object of numbers by name", written="when set"
    )
    """With ``league.average_policy``: the distillation's fit (loss, decisions, games)."""
    average_nash_conv: float | None = _spec(_optional_number, "a number", written="when set")
    """With ``league.average_policy``: the average policy's exact NashConv (only where exact)."""
    least_exploitable: Mapping[str, float] | None = _spec(_optional_numbers, _BY_ID, written="when set")
    """With ``evaluation.nash_conv: least_exploitable``: ``{id: p}``, the members' least
    exploitable mixture (an analysis)."""
    least_exploitable_nash_conv: float | None = _spec(_optional_number, "a number", written="when set")
    """That mixture's exact NashConv."""
    probe: Mapping[str, ProbeReading] | None = _spec(
        lambda v: v is None or _probe_readings(v), "an object of probe readings by target", written="when set"
    )
    """In the generations that ran a probe (``evaluation.probe``): ``{target: reading}`` (see
    *probe* below)."""
    newest: tuple[NewestEntry, ...] = _spec(
        lambda v: _objects(v, _newest),
        "a list of {id, rating, meta_strategy, win_rate, baseline} objects (and their intervals)",
        factory=tuple,
    )
    """Each learner's newest snapshot (see *newest* below)."""
    reference: str | None = _spec(_optional_text, "a member id", written="when set")
    """The run's reference opponent (``evaluation.reference``, else the one its env declares where
    it is a baseline of the run, else the baseline the env rates highest): every "vs baseline" figure (``newest[].win_rate``,
    ``best_main.win_rate``, the headline curve) is against it, in every generation; null without
    one (and in records written before it: their ``newest[].baseline`` is the strongest baseline of
    each generation)."""
    best_main: BestEntry | None = _spec(
        _best, "a {id, worst_opponent, worst_win_rate, ...} object", written="when set"
    )
    """The best main agent so far, judged against the reference set (see *best_main* below); in
    runs with a main agent and a baseline or an exploiter."""
    ranking: tuple[str, ...] = _spec(_ids, "a list of member ids", written=NOT_EMPTY, factory=tuple)
    """The members best first: the leaderboard's order (Nash clustering, then Nash averaging;
    docs/league.md, "The leaderboard: who is best"); absent while a cell of the payoff table is
    unplayed and in records written before it (``report`` ranks those from the payoff table)."""
    ranking_layer: Mapping[str, int] = _spec(
        _ints, "an object of integers by member id", written=NOT_EMPTY, factory=dict
    )
    """``{id: layer}``: the Nash-clustering layer (from 1) of the members the layers placed."""
    nash_average: Mapping[str, float] = _spec(_numbers, _BY_ID, written=NOT_EMPTY, factory=dict)
    """``{id: win rate}``: each member's expected win rate against the population's Nash mixture
    (Nash averaging), which orders the members below the layers."""
    ranking_note: str | None = _spec(_optional_text, "a line of text", written="when set")
    """Why the top ten of ``ranking`` do not each beat every member below them at least 0.5 (the
    cycle, named); absent when they do."""
    archived: int | None = _spec(_optional_int, "an integer", written="when set")
    """With an active set (``league.active_set``), once the league archives: the members in the
    archive after this generation (in the pool and loadable by id, outside the meta-game; the
    population above is the active set)."""
    archived_now: tuple[str, ...] = _spec(_ids, "a list of member ids", written=NOT_EMPTY, factory=tuple)
    """The members archived in this generation."""
    restored_now: tuple[str, ...] = _spec(_ids, "a list of member ids", written=NOT_EMPTY, factory=tuple)
    """The members brought back from the archive in this generation (they beat the newest main
    agent: the 95% interval of the win rate above 0.5)."""
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
    """Keys this version does not know (a newer version's): kept, and written back last."""

    # ------------------------------------------------------------------------ derived

    @property
    def member_roles(self) -> dict[str, str]:
        """``{member id: role}`` of the population."""
        return {m.id: m.role for m in self.population}

    def summary_json(self) -> dict[str, Any]:
        """:meth:`to_json` without the fields that grow with the population (``report --json``'s
        history)."""
        return {k: v for k, v in self.to_json().items() if k not in PER_MEMBER_FIELDS}

    # ------------------------------------------------------------------------ JSON

    def to_json(self) -> dict[str, Any]:
        """The line of ``generations.jsonl``: the keys in the order runs write them, the fields
        written *when set* left out while None, those *when not empty* while empty."""
        out: dict[str, Any] = {}
        for spec in _record_fields():
            value = getattr(self, spec.name)
            if left_out(spec, value):
                continue
            out[spec.name] = _plain(value)
        out.update(self.extra)
        return out

    @classmethod
    def from_json(cls, data: Any, *, where: str = "generation record") -> GenerationRecord:
        """A record from its JSON object, in any format runs have written: checked field by field
        (a wrong type is a one-line :class:`CorruptFileError` naming ``where`` and the field),
        then migrated (:func:`migrate_record`)."""
        generation = data.get("generation") if isinstance(data, dict) else None
        if not is_int(generation):
            raise CorruptFileError(
                f"{where} has no integer 'generation' (got {generation!r}); remove or fix that line"
            )
        check_record(data, where)
        data = migrate_record(data)
        known = {spec.name: spec for spec in _record_fields()}
        values = {name: _READ.get(name, _same)(data[name]) for name in known if name in data}
        return cls(**values, extra={k: v for k, v in data.items() if k not in known})

    # ------------------------------------------------------------------------ building

    @classmethod
    def build(
        cls,
        generation: int,
        *,
        stats: GenerationStats,
        snapshot: PayoffSnapshot,
        work: GenerationWork,
        measured: Measurements,
        reference: str | None = None,
    ) -> GenerationRecord:
        """The record of a generation the runner has just completed, from the league's statistics
        (the AgentManager's ``LeagueStats``), its payoff snapshot, what was trained and timed
        (``work``) and what was measured of its outputs; ``reference``: the run's reference opponent."""
        rating = {k: round(v, 2) for k, v in stats.rating.items()}
        rating_ci95 = {
            k: (
                round(v - Z95 * stats.rating_se.get(k, 0.0), 1),
                round(v + Z95 * stats.rating_se.get(k, 0.0), 1),
            )
            for k, v in stats.rating.items()
        }
        return cls(
            generation=generation,
            wall_s=round(work.wall_s, 3),
            env_steps=work.env_steps,
            population=tuple(Member(id=i, role=r) for i, r in zip(stats.ids, stats.roles)),
            meta_solver=stats.meta_solver,
            meta_strategy=dict(zip(stats.ids, [round(p, 6) for p in stats.meta_strategy.tolist()])),
            meta_entropy=stats.meta_entropy,
            meta_stability=None if stats.stability is None else MetaStability.of(stats.stability, stats.ids),
            rating=rating,
            rating_anchor=None if stats.rating_anchor is None else stats.rating_anchor[0],
            rating_ci95=rating_ci95,
            elo_sequential={k: round(v, 2) for k, v in stats.elo.items()},
            diversity=stats.diversity,
            games=dict(work.games),
            tasks=work.task_records(),
            env_steps_per_s=work.env_steps_per_s(),
            timings={k: round(v, 3) for k, v in work.timings.items()},
            train_split_s={"rollout": round(work.rollout_s, 3), "update": round(work.update_s, 3)},
            shared_effective_games=None
            if work.shared_effective_games is None
            else round(work.shared_effective_games, 1),
            **measured.fields(),
            newest=newest_entries(snapshot, rating, rating_ci95, reference=reference),
            reference=reference,
            best_main=BestEntry.of(snapshot, reference),
            **ranking_fields(snapshot),
        )


#: the fields that hold one value per member (left out of ``report --json``'s history)
PER_MEMBER_FIELDS = (
    "population",
    "meta_strategy",
    "rating",
    "rating_ci95",
    "elo_sequential",
    "newest",
    "ranking",
    "ranking_layer",
    "nash_average",
)


def _record_fields() -> tuple[dataclasses.Field[Any], ...]:
    """The record's JSON fields, in the order they are written (``extra`` aside)."""
    return tuple(f for f in dataclasses.fields(GenerationRecord) if f.name != "extra")


def _same(value: Any) -> Any:
    return dict(value) if isinstance(value, dict) else value


#: how a field's (checked, migrated) JSON value becomes its value in the record
_READ: dict[str, Callable[[Any], Any]] = {
    "population": lambda v: tuple(Member.from_json(m) for m in v),
    "meta_stability": lambda v: None if v is None else MetaStability.from_json(v),
    "rating_ci95": lambda v: {k: (i[0], i[1]) for k, i in v.items()},
    "tasks": lambda v: tuple(TaskRecord.from_json(t) for t in v),
    "probe": lambda v: None if v is None else {k: ProbeReading.from_json(r) for k, r in v.items()},
    "newest": lambda v: tuple(NewestEntry.from_json(e) for e in v),
    "best_main": lambda v: None if v is None else BestEntry.from_json(v),
    "ranking": tuple,
    "archived_now": tuple,
    "restored_now": tuple,
}


class GenerationStats(Protocol):
    """What a record is built from: the AgentManager's ``LeagueStats`` of the generation."""

    ids: list[str]
    roles: list[str]
    meta_solver: str
    meta_strategy: np.ndarray
    meta_entropy: float
    stability: Stability | None
    rating: dict[str, float]
    rating_se: dict[str, float]
    rating_anchor: tuple[str, float] | None
    elo: dict[str, float]
    diversity: float | None


@dataclass(frozen=True)
class GenerationWork:
    """What the generation did and how long it took: the runner's counters and timer."""

    wall_s: float
    env_steps: int
    tasks: Sequence[TrainingTask]
    trained_steps: Mapping[str, int]
    """Environment steps each learner trained."""
    rollout_s: float
    update_s: float
    timings: Mapping[str, float]
    games: Mapping[str, int]
    shared_effective_games: float | None = None

    def task_records(self) -> tuple[TaskRecord, ...]:
        return tuple(
            TaskRecord(
                learner=t.learner_id,
                role=t.role.value,
                weighting=t.weighting,
                env_steps=self.trained_steps.get(t.learner_id, 0),
                opponents={k: round(v, 4) for k, v in t.opponents.items()},
                info=t.info,  # e.g. the league's branch masses and fallbacks taken
            )
            for t in self.tasks
        )

    def env_steps_per_s(self) -> float:
        trained = sum(self.trained_steps.values())
        return trained / max(self.rollout_s, 1e-9) if trained else 0.0


@dataclass(frozen=True)
class Measurements:
    """How exploitable the generation's outputs are (measurements only: nothing here feeds back
    into training); the record's fields of the same names."""

    meta_nash_conv: float | None = None
    main_nash_conv: float | None = None
    average: Mapping[str, float] | None = None
    average_nash_conv: float | None = None
    least_exploitable: Mapping[str, float] | None = None
    least_exploitable_nash_conv: float | None = None
    probe: Mapping[str, ProbeReading] | None = None

    def fields(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def nash_convs(self) -> dict[str, float]:
        """``{field: value}`` of the exact NashConvs measured (``exploitability/<field>``)."""
        names = ("main_nash_conv", "meta_nash_conv", "average_nash_conv", "least_exploitable_nash_conv")
        return {name: float(getattr(self, name)) for name in names if getattr(self, name) is not None}


# ---------------------------------------------------------------------------- checks, migration


#: what the fields of records written in an older format must be (checked before migration, so
#: that an error names the key the file has)
_FORMER_CHECKS: dict[str, tuple[Check, str]] = {
    "nash": (_numbers, _BY_ID),
    "nash_entropy": (_optional_number, "a number"),
    "elo": (_numbers, _BY_ID),
    "nash_conv": (_optional_number, "a number"),
}


def check_record(data: Mapping[str, Any], where: str) -> None:
    """Every field of a record's JSON object has its type: else one line naming ``where`` (the
    file and line) and the field."""
    checks = {spec.name: (spec.metadata["check"], spec.metadata["expected"]) for spec in _record_fields()}
    for key, (valid, expected) in {**checks, **_FORMER_CHECKS}.items():
        if key in data and not valid(data[key]):
            shown = json.dumps(data[key])
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            raise CorruptFileError(
                f"{where}: field {key!r} is {shown}, not {expected}; remove or fix that line"
            )


#: the meta-strategy's former names in a record: ``nash`` (the Nash mixture, the meta-strategy
#: under the default meta-solver) and ``nash_entropy``, and ``nash`` in each ``newest`` entry
FORMER_NAMES = {"nash": "meta_strategy", "nash_entropy": "meta_entropy"}


def migrate_record(record: dict[str, Any]) -> dict[str, Any]:
    """A record's JSON object in the current format, whichever format it was written in:

    - before the meta-strategy had one name, it was ``nash`` / ``nash_entropy`` (and ``nash`` in
      each ``newest`` entry; beside a meta-solver other than ``nash``, ``nash`` was the Nash
      mixture and ``meta_strategy`` the solver's: that one is kept, and the meta-solver is
      ``nash`` where the record names none);
    - before the fitted rating, the sequential Elo was ``elo`` (in ``newest`` entries too): it
      becomes ``elo_sequential`` and, as ``report`` has always shown it, ``rating``;
    - before ``meta_nash_conv``, the meta-strategy's NashConv was ``nash_conv``, or, beside a
      ``least_exploitable`` mixture, that mixture's NashConv: it becomes ``meta_nash_conv`` or
      ``least_exploitable_nash_conv``.

    The former names are dropped (a current name already there wins); every other field is left
    as it is. A record in the current format is returned as it is."""
    if not any(key in record for key in (*FORMER_NAMES, "elo", "nash_conv")) and not _former_newest(record):
        return record
    renames = {
        **FORMER_NAMES,
        "elo": "rating",
        "nash_conv": "least_exploitable_nash_conv" if "least_exploitable" in record else "meta_nash_conv",
    }
    out: dict[str, Any] = {}
    for key, value in record.items():
        name = renames.get(key, key)
        if key in renames and name in record:
            continue  # the record has the current name too: that one wins
        out[name] = value
    if "elo" in record:
        out.setdefault("elo_sequential", record["elo"])
    if _former_newest(record):
        out["newest"] = [_migrate_newest(entry) for entry in record["newest"]]
    out.setdefault("meta_solver", "nash")
    return out


def _migrate_newest(entry: dict[str, Any]) -> dict[str, Any]:
    renames = {"nash": "meta_strategy", "elo": "rating"}
    return {renames.get(k, k): v for k, v in entry.items() if not (k in renames and renames[k] in entry)}


def _former_newest(record: dict[str, Any]) -> bool:
    newest = record.get("newest")
    return isinstance(newest, list) and any(
        isinstance(e, dict) and ("nash" in e or "elo" in e) for e in newest
    )


# ---------------------------------------------------------------------------- reading


def read_generations(run_dir: Path) -> list[GenerationRecord]:
    """The records of a run directory's ``generations.jsonl``; a torn last line (run killed
    mid-write) is ignored."""
    return read_generations_file(Path(run_dir) / GENERATIONS_FILE)


def read_generations_file(path: Path) -> list[GenerationRecord]:
    """The records of a ``generations.jsonl`` file wherever it lies (a run's, or a copy of it);
    none when it does not exist; a torn last line is ignored."""
    path = Path(path)
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").split("\n")[:-1]  # after the last newline: not committed
    records = []
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            raise CorruptFileError(
                f"{path} line {lineno} is not valid JSON; remove or fix that line"
            ) from None
        records.append(GenerationRecord.from_json(data, where=f"{path} line {lineno}"))
    return records


def check_run_records(folder: Path) -> None:
    """Check the ``generations.jsonl`` of a run directory, or of every run in a folder of runs."""
    folder = Path(folder)
    runs = (
        [folder]
        if (folder / GENERATIONS_FILE).exists()
        else sorted(p for p in folder.iterdir() if p.is_dir())
    )
    for run in runs:
        read_generations(run)


def generation_of(line: Any) -> Any:
    """The ``generation`` a line of ``generations.jsonl`` names, unchecked (None when the line is
    not an object): what a resume checks the committed lines' order with."""
    return line.get("generation") if isinstance(line, dict) else None


def latest_probes(lines: Iterable[Any]) -> dict[str, ProbeReading]:
    """The latest probe reading of each target in the lines of ``generations.jsonl`` (a resumed
    run goes on showing it); lines and readings that are not objects are passed over."""
    latest: dict[str, ProbeReading] = {}
    for line in lines:
        probe = line.get("probe") if isinstance(line, dict) else None
        if isinstance(probe, dict):
            latest.update({k: ProbeReading.from_json(v) for k, v in probe.items() if isinstance(v, dict)})
    return latest


def latest_reference(lines: Iterable[Any]) -> str | None:
    """The reference opponent the latest line of ``generations.jsonl`` that names one names
    (None when none does): what a resumed run keeps."""
    named = [line.get("reference") for line in lines if isinstance(line, dict)]
    return next((str(r) for r in reversed(named) if isinstance(r, str) and r), None)


def probe_history(records: Iterable[GenerationRecord]) -> list[tuple[str, ProbeReading]]:
    """Every probe reading in ``records``, oldest first, as ``(target, reading)``."""
    return [(target, reading) for r in records for target, reading in (r.probe or {}).items()]


# ---------------------------------------------------------------------------- documentation


def field_docs(cls: type) -> dict[str, str]:
    """The docstring under each field of dataclass ``cls`` (the string literal after it), as one
    paragraph."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    body = tree.body[0].body  # type: ignore[attr-defined]
    docs: dict[str, str] = {}
    for node, after in zip(body, body[1:]):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[node.target.id] = " ".join(after.value.value.split())
    return docs
