"""Checkpointing: the league state after each completed generation, and resume from it.

Checkpoint layout (``RUN_DIR/checkpoint``)::

    latest.json              {"generation": next generation, "dir": "gen_XXXX",
                              "state_sha256": ...}  (the commit point)
    gen_XXXX/state.json      league, scheduler and counter state after generation XXXX, with the
                             SHA-256 of each learner file ("learners_sha256")
    gen_XXXX/learners/<id>.pt  learner weights + optimiser state (tensors only)
    initial/                 the same before generation 0 (until generation 0 completes)

``latest.json`` is replaced atomically after the generation's directory is complete, so a kill
at any moment leaves the previous generation as the resume point. Resume checks the checksums
(a checkpoint written before they existed has none; its files are checked by type, shape and
finiteness alone) and that every loaded number is finite. The :class:`Checkpointer`
holds the components whose state it saves and restores; the Runner holds the Checkpointer and
hands it the run's counters (:class:`RunCounters`).
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from light_league.agents.agent_manager import AgentManager
from light_league.agents.match_database import record_generation
from light_league.algorithms.mappo.serialization import load_policy
from light_league.data_buffer.policy_files import load_policy_meta
from light_league.data_buffer.policy_server import PolicyServer
from light_league.errors import CorruptFileError
from light_league.execution.base import ComponentLost, Executor, Handle, WorkerDied
from light_league.run_dir import RunDir, safe_name
from light_league.scheduling.task_scheduler import TaskScheduler
from light_league.tracking.record import generation_of
from light_league.training.component import LearnerComponent
from light_league.training.training_manager import TrainingManager
from light_league.types import AgentType
from light_league.utils.atomic import (
    JsonlLog,
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_text,
    committed_size,
    interrupts_held,
    read_json,
    remove_temp_files,
)
from light_league.utils.checks import is_int, is_num, require


@dataclass
class RunCounters:
    """The Runner's own state that a checkpoint keeps beside the components'."""

    env_steps: int = 0
    wall_s: float = 0.0
    last_nash_conv: float | None = None


class Checkpointer:
    """Saves the run's state after a generation (or the bootstrap) and restores the last one."""

    def __init__(
        self,
        run_dir: RunDir,
        *,
        env_name: str,
        executor: Executor,
        policy_server: Handle,
        learners: dict[str, Handle],
        agents: AgentManager,
        scheduler: TaskScheduler,
        training: TrainingManager,
    ) -> None:
        self.run_dir = run_dir
        self.env_name = env_name
        self.executor = executor
        self.policy_server = policy_server
        self.learners = learners
        self.agents = agents
        self.scheduler = scheduler
        self.training = training
        #: ``generations.jsonl``: a generation's record is committed with its checkpoint
        self.generations_log = JsonlLog(run_dir.generations)

    def save(self, counters: RunCounters, record: dict[str, Any] | None) -> None:
        """Write the league state after a completed generation (``record``) or after bootstrap (None).

        A stop signal that arrives meanwhile is acted on once the checkpoint is whole."""
        with interrupts_held():
            self._commit(counters, record)

    def _commit(self, counters: RunCounters, record: dict[str, Any] | None) -> None:
        rd = self.run_dir
        gen = self.agents.generation  # the next generation to run
        gen_dir = rd.checkpoint / (f"gen_{gen - 1:04d}" if gen > 0 else "initial")  # named by what it holds
        sums: dict[str, str] = {}
        for lid, handle in self.learners.items():
            state = self.executor.invoke(handle, LearnerComponent.state_dict)
            buf = _torch_bytes(state)
            atomic_write_bytes(gen_dir / "learners" / f"{lid}.pt", buf)
            sums[lid] = hashlib.sha256(buf).hexdigest()
        self.agents.save()
        state = {
            "generation": gen,
            "agents": self.agents.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "members": self.agents.pool.ids(),  # the archived members too
            "env_steps": counters.env_steps,
            "wall_s": counters.wall_s,
            "last_nash_conv": counters.last_nash_conv,
            # the committed match log ends here: resume cuts back to it, and refuses a shorter file
            "matches_bytes": rd.matches.stat().st_size if rd.matches.exists() else 0,
            "learners_sha256": sums,
        }
        # grows with the population squared: json's C encoder only runs unindented
        state_text = json.dumps(state) + "\n"
        atomic_write_text(gen_dir / "state.json", state_text)
        if record is not None:
            self.generations_log.append(record)
            self.generations_log.sync()
        atomic_write_json(
            rd.checkpoint / "latest.json",
            {
                "generation": gen,
                "dir": gen_dir.name,
                "state_sha256": hashlib.sha256(state_text.encode("utf-8")).hexdigest(),
            },
        )
        for old in rd.checkpoint.iterdir():
            if old != gen_dir and old.is_dir():
                shutil.rmtree(old, ignore_errors=True)

    def load(self) -> RunCounters:
        """Restore the last completed generation and drop what an interrupted one left behind.

        Every file is read and checked first; only then is anything on disk changed, so a corrupt
        file stops the resume with one line and leaves the run directory as it was. Every path taken
        from a file (checkpoint dir, member ids) must lie inside the run directory. The match log is
        never read as a whole: it is cut back to the byte offset the checkpoint recorded.
        """
        rd = self.run_dir
        gen, gen_dir, state_sum = _read_latest(rd)
        state_path = gen_dir / "state.json"
        _check_sum("checkpoint state", state_path, state_sum, rd.checkpoint / "latest.json")
        state = read_json(
            state_path,
            what="checkpoint state",
            fix=f"restore it from a backup or start a new run (checkpoint dir {gen_dir})",
        )
        _check_state(self, state_path, state)
        if state["generation"] != gen:
            raise CorruptFileError(
                f"checkpoint state {state_path} is for generation {state['generation']} but {rd.checkpoint}/latest.json "
                f"says {gen}; restore them from a backup or start a new run"
            )
        sums = state.get("learners_sha256") or {}
        learner_states = {
            lid: _read_learner_state(rd, gen_dir / "learners" / f"{lid}.pt", sums.get(lid), state_path)
            for lid in self.learners
        }
        keep = _check_members(self, state)
        _check_generations(self, gen)
        cut = _match_log_cut(self, gen, state)
        for lid, learner_state in learner_states.items():  # memory only; a misfit is a one-line error
            _check_learner_state(self, lid, gen_dir / "learners" / f"{lid}.pt", learner_state)
        # --- everything checked: drop the interrupted generation's leftovers and restore
        remove_temp_files(rd.root)
        agents = self.agents
        if rd.matches.exists():
            agents.results.matches.cut(cut)
        self.generations_log.truncate_to(gen)
        for record in agents.pool.list():
            if record.agent_id not in keep:
                agents.pool.remove(record.agent_id)
                for suffix in (".pt", ".json"):
                    Path(f"{rd.policies / record.agent_id}{suffix}").unlink(missing_ok=True)
        agents.load_state_dict(state["agents"])
        self.scheduler.load_state_dict(state["scheduler"])
        _restore_policies(self)
        last = state.get("last_nash_conv")
        return RunCounters(
            int(state["env_steps"]), float(state["wall_s"]), None if last is None else float(last)
        )


def _check_members(ckpt: Checkpointer, state: dict[str, Any]) -> set[str]:
    """The checkpoint's members, each a plain name in the pool manifest whose policy files lie
    inside the run directory and load (checksum, finite weights, shapes): a one-line error if not."""
    rd = ckpt.run_dir
    for record in ckpt.agents.pool.list():
        if not safe_name(record.agent_id) or not rd.inside(rd.policies / record.agent_id):
            raise CorruptFileError(
                f"pool manifest {rd.pool} is corrupt: member id {record.agent_id!r} is not a plain name "
                f"inside {rd.policies}; restore {rd.pool}.bak or start a new run"
            )
    keep = set(state["members"])
    kept = [r for r in ckpt.agents.pool.list() if r.agent_id in keep]
    missing = keep - {r.agent_id for r in kept}
    if missing:
        raise CorruptFileError(
            f"pool manifest {rd.pool} lacks members {sorted(missing)} of the checkpoint; "
            f"restore {rd.pool}.bak or start a new run"
        )
    archived = set(state["agents"].get("archived", []))
    for record in kept:
        if record.agent_type != AgentType.BASELINE:
            base = rd.policies / record.agent_id
            for file in (Path(f"{base}.pt"), Path(f"{base}.json")):
                if not rd.inside(file):
                    raise CorruptFileError(
                        f"policy file {file} points outside the run directory {rd.root}; "
                        "replace it with the real file or start a new run"
                    )
            if record.agent_id in archived:  # read when pulled (checked then): a resume stays short
                load_policy_meta(base)
            else:
                load_policy(base)  # checksum, finite weights, shapes: a one-line error if any is wrong
    return keep


def _torch_bytes(state: dict[str, Any]) -> bytes:
    import io

    buf = io.BytesIO()
    torch.save(state, buf)
    return buf.getvalue()


_GEN_DIR = re.compile(r"^(gen_\d{4,}|initial)$")  # initial: the bootstrap state, before generation 0


def _read_latest(run_dir: RunDir) -> tuple[int, Path, str | None]:
    """``latest.json``: the next generation, its checkpoint directory (inside the run dir) and the
    SHA-256 of its ``state.json`` (None in a pointer written before it was kept)."""
    latest = run_dir.checkpoint / "latest.json"
    data = read_json(
        latest,
        what="checkpoint pointer",
        fix=f"the run has no completed checkpoint; start a new run instead of --resume {run_dir.root}",
    )
    gen = data.get("generation") if isinstance(data, dict) else None
    name = data.get("dir") if isinstance(data, dict) else None
    state_sum = data.get("state_sha256") if isinstance(data, dict) else None
    if (
        not isinstance(gen, int)
        or isinstance(gen, bool)
        or gen < 0
        or not isinstance(name, str)
        or not isinstance(state_sum, str | None)
    ):
        raise CorruptFileError(
            f"checkpoint pointer {latest} is malformed (needs an integer 'generation' and a 'dir' name); "
            "restore it from a backup or start a new run"
        )
    gen_dir = run_dir.checkpoint / name
    if not _GEN_DIR.match(name) or not run_dir.inside(gen_dir):
        raise CorruptFileError(
            f"checkpoint pointer {latest} is corrupt: dir {name!r} is not a gen_NNNN (or initial) directory inside "
            f"{run_dir.checkpoint}; restore it from a backup or start a new run"
        )
    return gen, gen_dir, state_sum


def checkpoint_generation(run_dir: RunDir) -> int:
    """The next generation to run, as ``run_dir``'s committed checkpoint says."""
    return _read_latest(run_dir)[0]


def _check_sum(what: str, path: Path, expected: str | None, where: Path) -> None:
    """``path``'s bytes have the SHA-256 ``expected`` that ``where`` recorded (None: a file written
    before checksums were kept, nothing to compare); a mismatch is one line naming the file."""
    if expected is None or not path.is_file():
        return  # a missing file is said by its reader
    if hashlib.sha256(path.read_bytes()).hexdigest() != expected:
        raise CorruptFileError(
            f"{what} {path} is damaged: its SHA-256 is not the one {where} recorded when it was written; "
            "restore it from a backup or start a new run"
        )


def _non_finite(value: Any, where: str = "") -> str | None:
    """The path of the first tensor (at any depth of dicts and lists) holding NaN or infinity."""
    if isinstance(value, torch.Tensor):
        return where if value.is_floating_point() and not bool(torch.isfinite(value).all()) else None
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list | tuple)
        else ()
    )
    for key, item in items:
        found = _non_finite(item, f"{where}.{key}" if where else str(key))
        if found is not None:
            return found
    return None


def _malformed(path: Path, exc: BaseException) -> CorruptFileError:
    text = " ".join(str(exc).split())[:200]
    return CorruptFileError(
        f"checkpoint state {path} is malformed ({exc.__class__.__name__}: {text}); "
        "restore it from a backup or start a new run"
    )


def _check_state(ck: Checkpointer, path: Path, state: Any) -> None:
    """Every field of ``state.json`` has the type resume needs (a one-line error otherwise): the
    Checkpointer's own fields here, each component's part by that component."""
    try:
        require(isinstance(state, dict), f"a JSON {type(state).__name__}, not an object")
        require(
            is_int(state["generation"]) and state["generation"] >= 0, "'generation' is not an integer >= 0"
        )
        members = state["members"]
        require(
            isinstance(members, list) and all(safe_name(m) for m in members), "'members' is not a list of ids"
        )
        require(is_int(state["env_steps"]), "'env_steps' is not an integer")
        require(is_num(state["wall_s"]), "'wall_s' is not a number")
        require(state.get("last_nash_conv") is None or is_num(state["last_nash_conv"]), "'last_nash_conv'")
        mb = state.get("matches_bytes", 0)
        require(is_int(mb) and mb >= 0, "'matches_bytes' is not an integer >= 0")
        sums = state.get("learners_sha256", {})  # absent in a checkpoint written before checksums
        require(isinstance(sums, dict), "'learners_sha256' is not an object")
        AgentManager.check_state(state["agents"], {setup.role for setup in ck.scheduler.learners()})
        require(isinstance(state["scheduler"], dict), "'scheduler' is not an object")
        try:
            probe = copy.deepcopy(ck.scheduler)
        except Exception:  # a plugin scheduler that cannot be copied: checked when it is loaded
            probe = None
        if probe is not None:
            probe.load_state_dict(state["scheduler"])
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise _malformed(path, exc) from None


def _check_generations(ck: Checkpointer, gen: int) -> None:
    """``generations.jsonl`` holds one record per completed generation, 0 .. gen-1, in order; a
    torn last line is fine (cut on resume), a lost or damaged committed line is not."""
    path = ck.run_dir.generations
    count = 0
    for lineno, line in enumerate(ck.generations_log, start=1):
        value = generation_of(line)
        if count < gen and value != count:
            raise CorruptFileError(
                f"{path} line {lineno} is not the record of generation {count} (found {value!r}); "
                "the file is damaged: restore it from a backup or start a new run"
            )
        count += 1
    if count < gen:
        raise CorruptFileError(
            f"{path} holds {count} generation records but the checkpoint has {gen} completed generations: "
            "lines were lost; restore it from a backup or start a new run"
        )


def _match_log_cut(ck: Checkpointer, gen: int, state: dict[str, Any]) -> int:
    """Byte offset where the committed match log ends (the checkpoint's), checked."""
    path = ck.run_dir.matches
    size = path.stat().st_size if path.exists() else 0
    if "matches_bytes" not in state:  # a checkpoint written before matches_bytes existed
        return _scan_match_log_cut(path, gen)
    cut = int(state["matches_bytes"])
    if size < cut:
        raise CorruptFileError(
            f"match log {path} has {size} bytes but the checkpoint committed {cut}: games were lost; "
            "restore it from a backup or start a new run"
        )
    if cut:
        line, lineno_hint = _line_ending_at(path, cut)
        if line is None:
            raise CorruptFileError(
                f"match log {path} does not end a record at byte {cut} where the checkpoint says it does: "
                "the file was changed; restore it from a backup or start a new run"
            )
        try:
            record = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise CorruptFileError(
                f"match log {path}: the last committed line (ending at byte {cut}) is not valid JSON; "
                "restore it from a backup or start a new run"
            ) from None
        value = record_generation(record, path, 0)
        if value is not None and value >= gen:
            raise CorruptFileError(
                f"match log {path}: the last committed record has generation {value}, not below {gen}; "
                "restore it from a backup or start a new run"
            )
    return cut


def _line_ending_at(path: Path, end: int) -> tuple[bytes | None, int]:
    """The line that ends (with its newline) at byte ``end``, or None if no newline is there."""
    with open(path, "rb") as handle:
        handle.seek(end - 1)
        if handle.read(1) != b"\n":
            return None, 0
        start, chunk = end - 1, 4096
        while start > 0:
            lo = max(0, start - chunk)
            handle.seek(lo)
            idx = handle.read(start - lo).rfind(b"\n")
            if idx >= 0:
                start = lo + idx + 1
                break
            start = lo
        handle.seek(start)
        return handle.read(end - start), 0


def _scan_match_log_cut(path: Path, gen: int) -> int:
    """Old checkpoints: scan back from the end to the last record of a generation below ``gen``."""
    if not path.exists():
        return 0
    end = committed_size(path)
    while end > 0:
        line, _ = _line_ending_at(path, end)
        assert line is not None
        try:
            record = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise CorruptFileError(
                f"match log {path}: the line ending at byte {end} is not valid JSON; remove or fix that line"
            ) from None
        value = record_generation(record, path, 0)
        if value is None or value < gen:
            return end
        end -= len(line)
    return 0


def _check_learner_state(ck: Checkpointer, lid: str, path: Path, state: dict[str, Any]) -> None:
    """Load ``state`` into learner ``lid`` (memory only); a mismatch is a one-line error."""
    try:
        ck.executor.invoke(ck.learners[lid], LearnerComponent.load_state_dict, state)
    except (WorkerDied, ComponentLost):
        raise  # the learner is gone, not the file that is wrong
    except Exception as exc:
        cause = getattr(exc, "cause", None) or exc  # Ray wraps the learner's exception
        text = " ".join(str(cause).split())[:200]
        raise CorruptFileError(
            f"learner checkpoint {path} does not fit learner {lid} ({cause.__class__.__name__}: {text}); "
            "start a new run"
        ) from None


def _read_learner_state(rd: RunDir, path: Path, checksum: Any, state_path: Path) -> dict[str, Any]:
    """A learner's checkpoint file, checked: inside the run, the SHA-256 ``state.json`` recorded
    (``checksum``; None in a checkpoint written before), a state dict, every tensor finite."""
    if path.exists() and not rd.inside(path):
        raise CorruptFileError(
            f"learner checkpoint {path} points outside the run directory {rd.root}; start a new run"
        )
    if checksum is not None and not isinstance(checksum, str):
        raise CorruptFileError(
            f"checkpoint state {state_path}: learners_sha256 is malformed; start a new run"
        )
    _check_sum("learner checkpoint", path, checksum, state_path)
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise CorruptFileError(f"learner checkpoint {path} is missing; start a new run") from None
    except Exception as exc:
        raise CorruptFileError(
            f"learner checkpoint {path} is corrupt ({exc.__class__.__name__}); start a new run"
        ) from None
    if not isinstance(state, dict):
        raise CorruptFileError(f"learner checkpoint {path} is not a state dict; start a new run")
    bad = _non_finite(state)
    if bad is not None:
        raise CorruptFileError(
            f"learner checkpoint {path} holds NaN or infinite numbers (in {bad}); nothing is trained from it: "
            "restore it from a backup or start a new run"
        )
    return state


def _restore_policies(ck: Checkpointer) -> None:
    """The members into the PolicyServer: an archived one by its meta (its weights read when pulled)."""
    server, invoke = ck.policy_server, ck.executor.invoke
    for record in ck.agents.pool.list():
        pid = record.agent_id
        if record.agent_type == AgentType.BASELINE:
            invoke(server, PolicyServer.add_fixed, pid, "fixed", {"name": pid, "env": ck.env_name})
        else:
            lazy = pid in ck.agents.archive
            load = PolicyServer.register_frozen if lazy else PolicyServer.load_frozen
            invoke(server, load, pid, ck.run_dir.policies / pid)
    ck.training.refresh_versions()
