"""Wiring: build every component of a run with explicit arguments, and checkpoint / resume it.

Everything that can be checked cheaply (env name and options, scheduler name and options,
learner kind, baselines) is validated before the run directory is locked or Ray is started, so
bad input fails in well under a second with one line.

Checkpoint layout (``RUN_DIR/checkpoint``)::

    latest.json              {"generation": next generation, "dir": "gen_XXXX"}  (the commit point)
    gen_XXXX/state.json      league, scheduler and counter state after generation XXXX
    gen_XXXX/learners/<id>.pt  learner weights + optimiser state (tensors only)
    initial/                 the same before generation 0 (until generation 0 completes)

``latest.json`` is replaced atomically after the generation's directory is complete, so a kill
at any moment leaves the previous generation as the resume point.
"""

from __future__ import annotations

import copy
import json
import logging
import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from envs.base import EnvSpec
from light_league.agents.agent_manager import AgentManager
from light_league.algorithms.mappo.serialization import load_policy_files
from light_league.config import ExperimentConfig
from light_league.data_buffer.episode_server import EpisodeServer
from light_league.data_buffer.policy_server import PolicyServer
from light_league.errors import ConfigError, CorruptFileError, did_you_mean
from light_league.evaluation.evaluation_manager import EvaluationManager, exact_supported
from light_league.execution import Handle, build_executor
from light_league.execution.base import ComponentLost, WorkerDied
from light_league.game_theory.meta_solvers import build_meta_solver
from light_league.league.agent_pool import AgentType
from light_league.league.match_database import record_generation
from light_league.rollout.rollout_manager import RolloutManager
from light_league.rollout.rollout_worker import RolloutWorker
from light_league.run_dir import RunDir, safe_name
from light_league.scheduling.task_scheduler import TaskScheduler
from light_league.training.training_manager import TrainingManager
from light_league.utils.atomic import (
    atomic_write_bytes,
    atomic_write_json,
    committed_size,
    read_json,
    remove_temp_files,
)

if TYPE_CHECKING:
    from light_league.runner import Runner

log = logging.getLogger(__name__)

#: learners whose initial weights join the population before the first generation
INITIAL_MEMBER_ROLES = (AgentType.MAIN_AGENT, AgentType.BEST_RESPONSE)


def validate(config: ExperimentConfig) -> tuple[EnvSpec, TaskScheduler]:
    """Check every name in the config; returns the env spec and the scheduler."""
    import envs
    from light_league.runner import derive_seed, make_env_spec
    from light_league.scheduling.registry import build_scheduler

    spec = make_env_spec(config)
    scheduler = build_scheduler(
        config.scheduler_name, config.scheduler_options, seed=derive_seed(config.experiment.seed, "scheduler")
    )
    valid = envs.fixed_policy_names(config.env.name)
    for name in config.evaluation.baselines:
        if name not in valid:
            listed = ", ".join(valid) if valid else "none for this env"
            raise ConfigError(
                f"evaluation.baselines: unknown baseline {name!r} for env {config.env.name!r}"
                f"{did_you_mean(name, valid)} (valid: {listed})"
            )
    roles = sorted({setup.role.value for setup in scheduler.learners()})
    need = len(config.evaluation.baselines) + len(roles)
    if config.league.pool_max_size < need:
        raise ConfigError(
            f"league.pool_max_size={config.league.pool_max_size} is too small: the pool always keeps its "
            f"{len(config.evaluation.baselines)} baselines and the latest member of each role ({', '.join(roles)}); "
            f"set league.pool_max_size={need} or more"
        )
    _learner_class(config)  # resolves the learner kind and validates its options
    for role in config.learner.mappo_by_role:
        config.learner.mappo_for(role)  # each role's merged MAPPO fields are valid
    build_meta_solver(config.league.meta_solver)
    if config.learner.kind == "exact_br" and not exact_supported(config.env.name):
        raise ConfigError(
            f"learner.kind: exact_br needs kuhn_poker or leduc_poker with open_spiel installed, "
            f"got env {config.env.name!r}; use learner.kind=mappo"
        )
    return spec, scheduler


def _learner_class(config: ExperimentConfig) -> tuple[type, Any]:
    """The learner component class and the config section it is built with."""
    kind = config.learner.kind
    if kind == "exact_br":
        from light_league.training.exact_br import ExactBRRunner

        return ExactBRRunner, None
    from light_league.algorithms.registry import learner_class
    from light_league.plugins import validate_options
    from light_league.training.learner_runner import LearnerRunner

    cls = learner_class(kind)
    if kind == "mappo":
        return LearnerRunner, config.learner.mappo
    return LearnerRunner, validate_options(cls.Config, config.learner.options, path="learner.options")


def build_runner(
    cls: type[Runner], config: ExperimentConfig, run_dir: RunDir, *, resume: bool, argv: list[str]
) -> Runner:
    spec, scheduler = validate(config)
    if not resume:
        run_dir.create()
    run_dir.lock()
    try:
        if resume and not run_dir.has_completed_generation():
            # killed before its first checkpoint: nothing to continue, so start it afresh here
            log.warning("%s has no completed generation; starting the run from the beginning", run_dir.root)
            run_dir.clear_artefacts()
            resume = False
        start_gen = _checkpoint_generation(run_dir) if resume else 0
        if not resume:
            run_dir.write_config(config.to_dict())
            run_dir.write_manifest(config.digest(), argv)
        runner = _assemble(cls, config, run_dir, spec, scheduler, start_gen, resume)
        if resume:  # the effective config of this session (its overrides included) is the run's now
            run_dir.write_config(config.to_dict())
            run_dir.add_session(config.digest(), argv)
    except BaseException:
        run_dir.unlock()
        raise
    return runner


def _assemble(
    cls: type[Runner],
    config: ExperimentConfig,
    run_dir: RunDir,
    spec: EnvSpec,
    scheduler: TaskScheduler,
    start_gen: int,
    resume: bool,
) -> Runner:
    from light_league.runner import derive_seed
    from light_league.tracking.console import Console
    from light_league.tracking.logger import NullLogger, build_logger
    from light_league.training.device import learner_placement

    ex = config.execution
    seed = config.experiment.seed
    executor = (
        build_executor(
            ex.backend, address=ex.address, num_cpus=ex.num_cpus, object_store_mb=ex.object_store_mb
        )
        if ex.backend == "ray"
        else build_executor("local")
    )
    policy_server = executor.create(
        PolicyServer,
        name="policy_server",
        storage_dir=str(run_dir.policies),
        max_in_memory=max(ex.policy_cache_size * 4, 32),
    )
    episode_server = executor.create(EpisodeServer, name="episode_server")
    ps, es = executor.client(policy_server), executor.client(episode_server)
    agents = AgentManager(
        run_dir,
        pool_max_size=config.league.pool_max_size,
        payoff_decay=config.league.payoff_decay,
        elo_k=config.evaluation.elo_k,
        baselines=list(config.evaluation.baselines),
        num_actions=spec.num_actions,
        meta_solver=build_meta_solver(config.league.meta_solver),
        stability_draws=config.league.meta_stability_draws,
        stability_max_s=config.league.meta_stability_max_s,
        seed=derive_seed(seed, "meta_stability"),
    )
    learner_cls, learner_cfg = _learner_class(config)
    learners: dict[str, Handle] = {}
    device, gpus = learner_placement(config, executor.gpus(), num_learners=len(scheduler.learners()))
    for setup in scheduler.learners():
        agents.register_learner(setup.learner_id, setup.role)
        role_cfg = (
            config.learner.mappo_for(setup.role.value) if config.learner.kind == "mappo" else learner_cfg
        )
        learners[setup.learner_id] = executor.create(
            learner_cls,
            setup.learner_id,
            config.env.name,
            dict(config.env.options),
            config.learner.kind,
            role_cfg,
            name=f"learner_{setup.learner_id}",
            cpus=0.25 if ex.backend == "ray" else 0.0,
            gpus=gpus,
            seed=derive_seed(seed, "learner", setup.learner_id),
            policy_server=ps,
            episode_server=es,
            device=device,
        )
    workers = [
        executor.create(
            RolloutWorker,
            config.env.name,
            dict(config.env.options),
            name=f"rollout_worker_{i}",
            restartable=True,
            cpus=ex.worker_cpus if ex.backend == "ray" else 0.0,
            num_envs=ex.envs_per_worker,
            seed=derive_seed(seed, "worker", i, start_gen),
            policy_server=ps,
            episode_server=es,
            cache_size=ex.policy_cache_size,
        )
        for i in range(ex.num_workers)
    ]
    rollout = RolloutManager(
        executor,
        workers,
        max_restarts=ex.max_worker_restarts,
        placement_log=run_dir.root / "placement.jsonl" if ex.backend == "ray" else None,
        pinned=[policy_server, episode_server, *learners.values()],
    )
    training = TrainingManager(executor, rollout, learners, steps_per_call=ex.steps_per_call)
    ev = config.evaluation
    evaluation = EvaluationManager(
        rollout,
        ps,
        spec,
        config.env.name,
        episodes_per_pair=ev.episodes_per_pair,
        exact=ev.exact,
        nash_conv=ev.nash_conv,
        adaptive_budget=ev.adaptive_budget,
        adaptive_batch=ev.adaptive_batch,
        adaptive_cap=ev.adaptive_cap,
    )
    runner = cls(
        config=config,
        run_dir=run_dir,
        spec=spec,
        executor=executor,
        scheduler=scheduler,
        agents=agents,
        policy_server=policy_server,
        training=training,
        evaluation=evaluation,
        logger=NullLogger(),
        console=Console(config.logging),
        learners=learners,
    )
    if resume:
        load_checkpoint(runner)  # checks every file before changing any; logging starts after
        runner.logger = build_logger(config.logging, run_dir.root, resume_step=start_gen)
    else:
        runner.logger = build_logger(config.logging, run_dir.root)
        _bootstrap(runner)
    return runner


def _bootstrap(runner: Runner) -> None:
    """Baselines and the learners' initial weights join the population; first checkpoint."""
    env_name = runner.config.env.name
    for name in runner.config.evaluation.baselines:
        runner.executor.call(
            runner.policy_server, "add_fixed", name, "fixed", {"name": name, "env": env_name}
        )
        runner.agents.add_baseline(name)
    for lid, role in runner.agents.learners().items():
        if role in INITIAL_MEMBER_ROLES:
            member = runner.agents.next_member_id(lid)
            runner.executor.call(runner.policy_server, "freeze", lid, member)
            runner.agents.add_snapshot(lid, str(runner.run_dir.policies / member))
    runner.logger.log_config(runner.config.to_dict())
    for log_file in (runner.run_dir.matches, runner.run_dir.generations):
        log_file.touch()  # the logs exist (empty) from the first checkpoint on
    save_checkpoint(runner, None)


# ---------------------------------------------------------------------------- checkpoint


def save_checkpoint(runner: Runner, record: dict[str, Any] | None) -> None:
    """Write the league state after a completed generation (``record``) or after bootstrap (None)."""
    rd = runner.run_dir
    gen = runner.agents.generation  # the next generation to run
    gen_dir = rd.checkpoint / (f"gen_{gen - 1:04d}" if gen > 0 else "initial")  # named by what it holds
    for lid, handle in runner.learners.items():
        state = runner.executor.call(handle, "state_dict")
        buf = _torch_bytes(state)
        atomic_write_bytes(gen_dir / "learners" / f"{lid}.pt", buf)
    runner.agents.save()
    atomic_write_json(
        gen_dir / "state.json",
        {
            "generation": gen,
            "agents": runner.agents.state_dict(),
            "scheduler": runner.scheduler.state_dict(),
            "members": runner.agents.member_ids(),
            "env_steps": runner.env_steps,
            "wall_s": runner.wall_s(),
            "last_nash_conv": runner.last_nash_conv,
            # the committed match log ends here: resume cuts back to it, and refuses a shorter file
            "matches_bytes": rd.matches.stat().st_size if rd.matches.exists() else 0,
        },
        indent=None,  # grows with the population squared: json's C encoder only runs unindented
    )
    if record is not None:
        runner.generations_log.append(record)
        runner.generations_log.sync()
    atomic_write_json(rd.checkpoint / "latest.json", {"generation": gen, "dir": gen_dir.name})
    for old in rd.checkpoint.iterdir():
        if old != gen_dir and old.is_dir():
            shutil.rmtree(old, ignore_errors=True)


def _torch_bytes(state: dict[str, Any]) -> bytes:
    import io

    buf = io.BytesIO()
    torch.save(state, buf)
    return buf.getvalue()


_GEN_DIR = re.compile(r"^(gen_\d{4,}|initial)$")  # initial: the bootstrap state, before generation 0


def _read_latest(run_dir: RunDir) -> tuple[int, Path]:
    """``latest.json``: the next generation and its checkpoint directory (inside the run dir)."""
    latest = run_dir.checkpoint / "latest.json"
    data = read_json(
        latest,
        what="checkpoint pointer",
        fix=f"the run has no completed checkpoint; start a new run instead of --resume {run_dir.root}",
    )
    gen = data.get("generation") if isinstance(data, dict) else None
    name = data.get("dir") if isinstance(data, dict) else None
    if not isinstance(gen, int) or isinstance(gen, bool) or gen < 0 or not isinstance(name, str):
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
    return gen, gen_dir


def _checkpoint_generation(run_dir: RunDir) -> int:
    return _read_latest(run_dir)[0]


def _malformed(path: Path, exc: BaseException) -> CorruptFileError:
    text = " ".join(str(exc).split())[:200]
    return CorruptFileError(
        f"checkpoint state {path} is malformed ({exc.__class__.__name__}: {text}); "
        "restore it from a backup or start a new run"
    )


def _check_state(runner: Runner, path: Path, state: Any) -> None:
    """Every field of ``state.json`` has the type resume needs (a one-line error otherwise)."""
    from light_league.agents.payoff_table import PayoffTable
    from light_league.game_theory.diversity import DiversityTracker
    from light_league.game_theory.payoff import DecayedPayoff

    def need(cond: bool, what: str) -> None:
        if not cond:
            raise TypeError(what)

    def is_int(v: Any) -> bool:
        return isinstance(v, int) and not isinstance(v, bool)

    def is_num(v: Any) -> bool:
        return isinstance(v, int | float) and not isinstance(v, bool)

    try:
        need(isinstance(state, dict), f"a JSON {type(state).__name__}, not an object")
        need(is_int(state["generation"]) and state["generation"] >= 0, "'generation' is not an integer >= 0")
        members = state["members"]
        need(
            isinstance(members, list) and all(safe_name(m) for m in members), "'members' is not a list of ids"
        )
        need(is_int(state["env_steps"]), "'env_steps' is not an integer")
        need(is_num(state["wall_s"]), "'wall_s' is not a number")
        need(state.get("last_nash_conv") is None or is_num(state["last_nash_conv"]), "'last_nash_conv'")
        mb = state.get("matches_bytes", 0)
        need(is_int(mb) and mb >= 0, "'matches_bytes' is not an integer >= 0")
        agents = state["agents"]
        need(isinstance(agents, dict), "'agents' is not an object")
        need(is_int(agents["generation"]) and is_int(agents.get("session", 0)), "agents.generation/session")
        for key in ("steps_since", "steps_total", "snapshots"):
            need(
                isinstance(agents[key], dict) and all(is_int(v) for v in agents[key].values()),
                f"agents.{key}",
            )
        need(
            isinstance(agents["nash"], dict) and all(is_num(v) for v in agents["nash"].values()),
            "agents.nash",
        )
        need(isinstance(agents["learners"], dict), "agents.learners")
        for role in agents["learners"].values():
            AgentType(role)
        elo = agents["elo"]
        need(isinstance(elo, dict), "agents.elo is not an object")
        need(
            isinstance(elo["ratings"], dict) and all(is_num(v) for v in elo["ratings"].values()),
            "elo ratings",
        )
        need(isinstance(elo["games"], dict) and all(is_int(v) for v in elo["games"].values()), "elo games")
        PayoffTable.from_state_dict(agents["payoff"])
        DecayedPayoff.from_state_dict(agents["training"])
        DiversityTracker.from_state_dict(agents["diversity"])
        need(isinstance(state["scheduler"], dict), "'scheduler' is not an object")
        try:
            probe = copy.deepcopy(runner.scheduler)
        except Exception:  # a plugin scheduler that cannot be copied: checked when it is loaded
            probe = None
        if probe is not None:
            probe.load_state_dict(state["scheduler"])
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise _malformed(path, exc) from None


def _check_generations(runner: Runner, gen: int) -> None:
    """``generations.jsonl`` holds one record per completed generation, 0 .. gen-1, in order; a
    torn last line is fine (cut on resume), a lost or damaged committed line is not."""
    path = runner.run_dir.generations
    count = 0
    for lineno, record in enumerate(runner.generations_log, start=1):
        value = record.get("generation") if isinstance(record, dict) else None
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


def _match_log_cut(runner: Runner, gen: int, state: dict[str, Any]) -> int:
    """Byte offset where the committed match log ends (the checkpoint's), checked."""
    path = runner.run_dir.matches
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


def _check_learner_state(runner: Runner, lid: str, path: Path, state: dict[str, Any]) -> None:
    """Load ``state`` into learner ``lid`` (memory only); a mismatch is a one-line error."""
    try:
        runner.executor.call(runner.learners[lid], "load_state_dict", state)
    except (WorkerDied, ComponentLost):
        raise  # the learner is gone, not the file that is wrong
    except Exception as exc:
        cause = getattr(exc, "cause", None) or exc  # Ray wraps the learner's exception
        text = " ".join(str(cause).split())[:200]
        raise CorruptFileError(
            f"learner checkpoint {path} does not fit learner {lid} ({cause.__class__.__name__}: {text}); "
            "start a new run"
        ) from None


def load_checkpoint(runner: Runner) -> None:
    """Restore the last completed generation and drop what an interrupted one left behind.

    Every file is read and checked first; only then is anything on disk changed, so a corrupt
    file stops the resume with one line and leaves the run directory as it was. Every path taken
    from a file (checkpoint dir, member ids) must lie inside the run directory. The match log is
    never read as a whole: it is cut back to the byte offset the checkpoint recorded.
    """
    rd = runner.run_dir
    gen, gen_dir = _read_latest(rd)
    state_path = gen_dir / "state.json"
    state = read_json(
        state_path,
        what="checkpoint state",
        fix=f"restore it from a backup or start a new run (checkpoint dir {gen_dir})",
    )
    _check_state(runner, state_path, state)
    if state["generation"] != gen:
        raise CorruptFileError(
            f"checkpoint state {state_path} is for generation {state['generation']} but {rd.checkpoint}/latest.json "
            f"says {gen}; restore them from a backup or start a new run"
        )
    learner_states = {
        lid: _read_learner_state(rd, gen_dir / "learners" / f"{lid}.pt") for lid in runner.learners
    }
    for record in runner.agents.pool.list():
        if not safe_name(record.agent_id) or not rd.inside(rd.policies / record.agent_id):
            raise CorruptFileError(
                f"pool manifest {rd.pool} is corrupt: member id {record.agent_id!r} is not a plain name "
                f"inside {rd.policies}; restore {rd.pool}.bak or start a new run"
            )
    keep = set(state["members"])
    kept = [r for r in runner.agents.pool.list() if r.agent_id in keep]
    missing = keep - {r.agent_id for r in kept}
    if missing:
        raise CorruptFileError(
            f"pool manifest {rd.pool} lacks members {sorted(missing)} of the checkpoint; "
            f"restore {rd.pool}.bak or start a new run"
        )
    for record in kept:
        if record.agent_type != AgentType.BASELINE:
            base = rd.policies / record.agent_id
            for file in (Path(f"{base}.pt"), Path(f"{base}.json")):
                if not rd.inside(file):
                    raise CorruptFileError(
                        f"policy file {file} points outside the run directory {rd.root}; "
                        "replace it with the real file or start a new run"
                    )
            load_policy_files(base)  # raises a one-line error if corrupt
    _check_generations(runner, gen)
    cut = _match_log_cut(runner, gen, state)
    for lid, learner_state in learner_states.items():  # memory only; a misfit is a one-line error
        _check_learner_state(runner, lid, gen_dir / "learners" / f"{lid}.pt", learner_state)
    # --- everything checked: drop the interrupted generation's leftovers and restore
    remove_temp_files(rd.root)
    agents = runner.agents
    if rd.matches.exists():
        agents.matches.cut(cut)
    runner.generations_log.truncate_to(gen)
    for record in agents.pool.list():
        if record.agent_id not in keep:
            agents.pool.remove(record.agent_id)
            for suffix in (".pt", ".json"):
                Path(f"{rd.policies / record.agent_id}{suffix}").unlink(missing_ok=True)
    agents.load_state_dict(state["agents"])
    runner.scheduler.load_state_dict(state["scheduler"])
    _restore_policies(runner)
    runner.env_steps = int(state["env_steps"])
    runner.wall_offset = float(state["wall_s"])
    runner.last_nash_conv = state.get("last_nash_conv")


def _read_learner_state(rd: RunDir, path: Path) -> dict[str, Any]:
    if path.exists() and not rd.inside(path):
        raise CorruptFileError(
            f"learner checkpoint {path} points outside the run directory {rd.root}; start a new run"
        )
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
    return state


def _restore_policies(runner: Runner) -> None:
    env_name = runner.config.env.name
    for record in runner.agents.pool.list():
        if record.agent_type == AgentType.BASELINE:
            runner.executor.call(
                runner.policy_server,
                "add_fixed",
                record.agent_id,
                "fixed",
                {"name": record.agent_id, "env": env_name},
            )
        else:
            runner.executor.call(
                runner.policy_server,
                "load_frozen",
                record.agent_id,
                runner.run_dir.policies / record.agent_id,
            )
    runner.training.refresh_versions()
