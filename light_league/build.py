"""Wiring: build every component of a run with explicit arguments, and checkpoint / resume it.

Everything that can be checked cheaply (env name and options, scheduler name and options,
learner kind, baselines) is validated before the run directory is locked or Ray is started, so
bad input fails in well under a second with one line.

Checkpoint layout (``RUN_DIR/checkpoint``)::

    latest.json              {"generation": next generation, "dir": "gen_XXXX"}  (the commit point)
    gen_XXXX/state.json      league, scheduler and counter state
    gen_XXXX/learners/<id>.pt  learner weights + optimiser state (tensors only)

``latest.json`` is replaced atomically after the generation's directory is complete, so a kill
at any moment leaves the previous generation as the resume point.
"""

from __future__ import annotations

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
from light_league.game_theory.meta_solvers import build_meta_solver
from light_league.league.agent_pool import AgentType
from light_league.rollout.rollout_manager import RolloutManager
from light_league.rollout.rollout_worker import RolloutWorker
from light_league.run_dir import RunDir
from light_league.scheduling.task_scheduler import TaskScheduler
from light_league.training.training_manager import TrainingManager
from light_league.utils.atomic import atomic_write_bytes, atomic_write_json, read_json

if TYPE_CHECKING:
    from light_league.runner import Runner

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
    _learner_class(config)  # resolves the learner kind and validates its options
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
        start_gen = _checkpoint_generation(run_dir) if resume else 0
        if not resume:
            run_dir.write_config(config.to_dict())
            run_dir.write_manifest(config.digest(), argv)
        runner = _assemble(cls, config, run_dir, spec, scheduler, start_gen, resume)
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
    for setup in scheduler.learners():
        agents.register_learner(setup.learner_id, setup.role)
        learners[setup.learner_id] = executor.create(
            learner_cls,
            setup.learner_id,
            config.env.name,
            dict(config.env.options),
            config.learner.kind,
            learner_cfg,
            name=f"learner_{setup.learner_id}",
            cpus=0.25 if ex.backend == "ray" else 0.0,
            seed=derive_seed(seed, "learner", setup.learner_id),
            policy_server=ps,
            episode_server=es,
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
    save_checkpoint(runner, None)


# ---------------------------------------------------------------------------- checkpoint


def save_checkpoint(runner: Runner, record: dict[str, Any] | None) -> None:
    """Write the league state after a completed generation (``record``) or after bootstrap (None)."""
    rd = runner.run_dir
    gen = runner.agents.generation  # the next generation to run
    gen_dir = rd.checkpoint / f"gen_{gen:04d}"
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
        },
        indent=None,  # grows with the population squared: json's C encoder only runs unindented
    )
    if record is not None:
        runner.generations_log.append(record)
        runner.generations_log.sync()
    atomic_write_json(rd.checkpoint / "latest.json", {"generation": gen, "dir": gen_dir.name})
    for old in rd.checkpoint.glob("gen_*"):
        if old != gen_dir and old.is_dir():
            shutil.rmtree(old, ignore_errors=True)


def _torch_bytes(state: dict[str, Any]) -> bytes:
    import io

    buf = io.BytesIO()
    torch.save(state, buf)
    return buf.getvalue()


def _checkpoint_generation(run_dir: RunDir) -> int:
    latest = run_dir.checkpoint / "latest.json"
    data = read_json(
        latest,
        what="checkpoint pointer",
        fix=f"the run has no completed checkpoint; start a new run instead of --resume {run_dir.root}",
    )
    if not isinstance(data, dict) or not isinstance(data.get("generation"), int):
        raise CorruptFileError(f"checkpoint pointer {latest} is malformed; start a new run")
    return int(data["generation"])


def load_checkpoint(runner: Runner) -> None:
    """Restore the last completed generation and drop what an interrupted one left behind.

    Every file is read and checked first; only then is anything on disk changed, so a corrupt
    file stops the resume with one line and leaves the run directory as it was.
    """
    rd = runner.run_dir
    latest = read_json(rd.checkpoint / "latest.json", what="checkpoint pointer", fix="start a new run")
    gen_dir = rd.checkpoint / str(latest["dir"])
    state = read_json(
        gen_dir / "state.json",
        what="checkpoint state",
        fix=f"restore it from a backup or start a new run (checkpoint dir {gen_dir})",
    )
    learner_states = {lid: _read_learner_state(gen_dir / "learners" / f"{lid}.pt") for lid in runner.learners}
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
            load_policy_files(rd.policies / record.agent_id)  # raises a one-line error if corrupt
    # --- everything checked: drop the interrupted generation's leftovers and restore
    gen = int(state["generation"])
    agents = runner.agents
    agents.matches.truncate_generation(gen)
    runner.generations_log.truncate_to(gen)
    for record in agents.pool.list():
        if record.agent_id not in keep:
            agents.pool.remove(record.agent_id)
            for suffix in (".pt", ".json"):
                Path(f"{rd.policies / record.agent_id}{suffix}").unlink(missing_ok=True)
    agents.load_state_dict(state["agents"])
    runner.scheduler.load_state_dict(state["scheduler"])
    _restore_policies(runner, learner_states)
    runner.env_steps = int(state["env_steps"])
    runner.wall_offset = float(state["wall_s"])
    runner.last_nash_conv = state.get("last_nash_conv")


def _read_learner_state(path: Path) -> dict[str, Any]:
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


def _restore_policies(runner: Runner, learner_states: dict[str, dict[str, Any]]) -> None:
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
    for lid, handle in runner.learners.items():
        runner.executor.call(handle, "load_state_dict", learner_states[lid])
    runner.training.refresh_versions()
