"""Wiring: validate the config and build every component of a run with explicit arguments.

Everything that can be checked cheaply (env name and options, scheduler name and options,
learner kind, baselines) is validated before the run directory is locked or Ray is started, so
bad input fails in well under a second with one line.

Checkpointing and resume are :mod:`light_league.checkpoint`'s; what a resume may change,
:mod:`light_league.resume_rules`'.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from light_league import envs
from light_league.agents.agent_manager import AgentManager
from light_league.agents.archive import Archive
from light_league.agents.meta_solvers import build_meta_solver
from light_league.algorithms.mappo.config import MAPPOConfig
from light_league.checkpoint import Checkpointer, RunCounters, checkpoint_generation
from light_league.config import ExperimentConfig, reference_opponent
from light_league.data_buffer.episode_server import EpisodeServer
from light_league.data_buffer.policy_server import PolicyServer
from light_league.data_buffer.stores import EpisodeStore, PolicyStore
from light_league.envs.base import EnvSpec
from light_league.errors import ConfigError, did_you_mean
from light_league.evaluation.evaluation_manager import EvaluationManager, exact_supported
from light_league.evaluation.probe import Probe, ProbeSettings
from light_league.execution import CallWatch, Executor, Handle, build_executor
from light_league.learner_kinds import LearnerKind, learner_kind
from light_league.plugins import validate_options
from light_league.rollout.rollout_manager import RolloutManager
from light_league.rollout.rollout_worker import RolloutWorker
from light_league.run_dir import RunDir
from light_league.scheduling.registry import build_scheduler
from light_league.scheduling.task_scheduler import TaskScheduler
from light_league.seeding import derive_seed
from light_league.tracking.backends import build_logger
from light_league.tracking.console import Console
from light_league.tracking.logger import MetricLogger
from light_league.training.average import AveragePolicy
from light_league.training.training_manager import TrainingManager
from light_league.types import BUILT_IN_ROLES, AgentType, LearnerSetup
from light_league.utils.device import resolve_device

log = logging.getLogger(__name__)

R = TypeVar("R")


def make_env_spec(config: ExperimentConfig) -> EnvSpec:
    """Build one game of the configured env to read its spec (a bad name or option is a ConfigError)."""
    try:
        return envs.make_spec(config.env.name, **config.env.options)
    except (KeyError, ValueError, TypeError) as exc:
        msg = str(exc.args[0]) if exc.args else str(exc)
        raise ConfigError(f"env: {msg}") from None


@dataclass(frozen=True)
class Validated:
    """What checking a config built: the env spec, the scheduler, the learner kind (``learner.kind``)
    and each of the scheduler's roles' kinds (``learner.by_role.<role>.kind`` where it is set)."""

    spec: EnvSpec
    scheduler: TaskScheduler
    learner: LearnerKind
    kinds: dict[str, LearnerKind]


def validate(config: ExperimentConfig) -> Validated:
    """Check every name in the config; returns the env spec, the scheduler and the learner kind
    (resolved here, once)."""
    spec = make_env_spec(config)
    scheduler = build_scheduler(
        config.scheduler_name, config.scheduler_options, seed=derive_seed(config.experiment.seed, "scheduler")
    )
    valid = envs.fixed_policy_names(config.env.name, config.env.options)
    for name in config.evaluation.baselines:
        if name not in valid:
            listed = ", ".join(valid) if valid else "none for this env"
            raise ConfigError(
                f"evaluation.baselines: unknown baseline {name!r} for env {config.env.name!r}"
                f"{did_you_mean(name, valid)} (valid: {listed}){envs.fixed_policy_needs(config.env.name, name)}"
            )
    reference_opponent(config)  # a reference that is not a baseline: one line, here
    roles = sorted({setup.role.value for setup in scheduler.learners()})
    need = len(config.evaluation.baselines) + len(roles)
    if config.league.pool_max_size < need:
        raise ConfigError(
            f"league.pool_max_size={config.league.pool_max_size} is too small: the pool always keeps its "
            f"{len(config.evaluation.baselines)} baselines and the latest member of each role ({', '.join(roles)}); "
            f"set league.pool_max_size={need} or more"
        )
    learner = learner_kind(config.learner)
    known = sorted({*BUILT_IN_ROLES, *roles})
    for role in config.learner.by_role:
        if role not in known:
            raise ConfigError(
                f"learner.by_role: unknown role {role!r}{did_you_mean(role, known)} (valid: {', '.join(known)})"
            )
    kinds = _role_kinds(config, {*roles, *config.learner.by_role})
    _check_average_policy(config, kinds, roles)
    _check_shared_games(config, kinds, roles)
    if (role := config.evaluation.probe.role) not in known:
        raise ConfigError(
            f"evaluation.probe.role: unknown role {role!r}{did_you_mean(role, known)} (valid: {', '.join(known)})"
        )
    probe_settings(config, learner)  # the probe's learner settings are valid
    _check_reset_sources(config, kinds, scheduler)
    solver, _ = build_meta_solver(config.league.meta_solver)
    if config.evaluation.nash_conv == "least_exploitable" and not exact_supported(config.env.name):
        raise ConfigError(
            f"evaluation.nash_conv: least_exploitable needs an env with an OpenSpiel game "
            f"({', '.join(envs.exact_games())}) and open_spiel installed, got env {config.env.name!r}; "
            "use evaluation.nash_conv=auto"
        )
    if solver.game and not (exact_supported(config.env.name) and config.evaluation.exact != "never"):
        raise ConfigError(
            f"league.meta_solver: {solver.name} reads the exact game, which needs an env with an OpenSpiel "
            f"game ({', '.join(envs.exact_games())}), open_spiel installed and evaluation.exact auto or always; "
            f"got env {config.env.name!r}, evaluation.exact={config.evaluation.exact}; use league.meta_solver=nash"
        )
    for kind in {k.name: k for k in kinds.values()}.values():
        if kind.exact_game and not exact_supported(config.env.name):
            raise ConfigError(
                f"learner.kind: {kind.name} needs an env with an OpenSpiel game ({', '.join(envs.exact_games())}) "
                f"and open_spiel installed, got env {config.env.name!r}; use learner.kind=mappo"
            )
    return Validated(spec, scheduler, learner, {role: kinds[role] for role in roles})


def _role_kinds(config: ExperimentConfig, roles: set[str]) -> dict[str, LearnerKind]:
    """Each role's learner kind, its settings (and its probe kind's) checked."""
    kinds = {role: learner_kind(config.learner, role) for role in roles}
    for role, kind in kinds.items():
        kind.settings(config.learner, role)  # each role's merged fields are valid for its kind
        kind.probe_kind().settings(config.learner, role)
    return kinds


def _check_reset_sources(
    config: ExperimentConfig, kinds: dict[str, LearnerKind], scheduler: TaskScheduler
) -> None:
    """A role that resets to a main agent's weights needs the main agent's network shape (where
    the learners' settings describe one: ``architecture()``; a regret main agent's is its
    average strategy's, which its snapshots hold)."""
    main = AgentType.MAIN_AGENT.value
    roles: dict[str, Any] = getattr(scheduler, "roles", {})
    for label, (role, _) in roles.items():
        if getattr(getattr(role, "config", None), "reset_to", None) != "main_agent":
            continue
        own = getattr(kinds[label].settings(config.learner, label), "architecture", None)
        target = getattr(kinds[main].settings(config.learner, main), "architecture", None)
        if own is None or target is None:
            continue
        mine, theirs = own(), target()
        differ = sorted(k for k in {*mine, *theirs} if mine.get(k) != theirs.get(k))
        if differ:
            raise ConfigError(
                f"learner.by_role: {label} resets to a main agent's weights (scheduler.{label}.reset_to: "
                f"main_agent) but their networks differ in {', '.join(differ)}; give both roles the same "
                f"network fields or set scheduler.{label}.reset_to=initial"
            )


def probe_settings(
    config: ExperimentConfig,
    learner: LearnerKind | None = None,
    *,
    env_steps: int | None = None,
    games: int | None = None,
) -> ProbeSettings:
    """The probe's learner and budgets from ``evaluation.probe``: the learner kind's probe kind
    (the run's own; an ``exact_br`` run's probe trains MAPPO) with the settings of ``probe.role``
    (``learner.by_role``) and ``probe.learner`` over them; a linear learning-rate schedule decays
    over the probe's own updates unless ``probe.learner`` names ``lr_decay_updates``. ``learner``:
    the run's resolved kind (None: resolved here)."""
    probe = config.evaluation.probe
    ex = config.execution
    num_envs = probe.num_envs or ex.num_workers * ex.envs_per_worker
    steps = probe.steps_per_update or ex.steps_per_call
    budget = probe.env_steps if env_steps is None else env_steps
    kind = (learner or learner_kind(config.learner)).probe_kind()
    assert kind.learner is not None  # a probe kind trains a learner (learner_kind checks it)
    base = kind.settings(config.learner, probe.role)
    assert base is not None
    changes = dict(probe.learner)
    fields = base.model_dump()
    if "lr_decay_updates" in fields and "linear" in (fields.get("lr_schedule"), changes.get("lr_schedule")):
        changes.setdefault("lr_decay_updates", max(1, -(-budget // (num_envs * steps))))
    section = validate_options(type(base), {**fields, **changes}, path="evaluation.probe.learner")
    return ProbeSettings(
        learner_kind=kind.name,
        learner=kind.learner,
        learner_config=section,
        num_envs=num_envs,
        steps_per_update=steps,
        env_steps=budget,
        games=probe.games if games is None else games,
        restarts=probe.restarts,
        play=probe.play,
    )


@dataclass
class Components:
    """Everything a run is made of, built and wired by :func:`build_runner` (the Runner's arguments)."""

    config: ExperimentConfig
    run_dir: RunDir
    spec: EnvSpec
    executor: Executor
    scheduler: TaskScheduler
    agents: AgentManager
    policy_server: Handle
    training: TrainingManager
    evaluation: EvaluationManager
    logger: MetricLogger
    console: Console
    learners: dict[str, Handle]
    checkpointer: Checkpointer
    counters: RunCounters
    #: the exploitability probe inside the run (``evaluation.probe.every``), None when off
    probe: Probe | None = None
    #: the meta-strategy distilled into one network (``league.average_policy``), None when off
    average: AveragePolicy | None = None


def build_runner(
    factory: Callable[..., R], config: ExperimentConfig, run_dir: RunDir, *, resume: bool, argv: list[str]
) -> R:
    """Validate ``config``, lock ``run_dir``, build every component, restore or bootstrap the
    league, and hand the components to ``factory`` (the Runner class) as keyword arguments."""
    checked = validate(config)
    if not resume:
        run_dir.create()
    run_dir.check_confined()  # before anything is written: no write may land outside the directory
    run_dir.lock()
    try:
        if resume and not run_dir.has_completed_generation():
            # killed before its first checkpoint: nothing to continue, so start it afresh here
            log.warning("%s has no completed generation; starting the run from the beginning", run_dir.root)
            run_dir.clear_artefacts()
            resume = False
        start_gen = checkpoint_generation(run_dir) if resume else 0
        if not resume:  # the manifest first: it is what makes the directory a run (RunDir.is_run)
            run_dir.write_manifest(config.digest(), argv, config.to_dict())
            run_dir.write_config(config.to_dict())
        parts = _assemble(config, run_dir, checked, start_gen, resume)
        runner = factory(**vars(parts))
        if resume:  # the effective config of this session (its overrides included) is the run's now
            run_dir.write_config(config.to_dict())
            run_dir.add_session(config.digest(), argv, config.to_dict())
    except BaseException:
        run_dir.unlock()
        raise
    return runner


def _executor(config: ExperimentConfig, console: Console) -> Executor:
    ex = config.execution
    watch = CallWatch(timeout_s=ex.call_timeout_s, notice_s=ex.stall_notice_s, notice=console.note)
    if ex.backend == "ray":
        return build_executor(
            ex.backend,
            watch=watch,
            address=ex.address,
            num_cpus=ex.num_cpus,
            object_store_mb=ex.object_store_mb,
        )
    return build_executor("local", watch=watch)


def _agent_manager(
    config: ExperimentConfig, run_dir: RunDir, spec: EnvSpec, keep_training: bool
) -> AgentManager:
    """The population; ``keep_training``: keep the learners' win rates against archived members
    (a role's PFSP over the whole history reads them)."""
    agents = AgentManager(
        run_dir,
        pool_max_size=config.league.pool_max_size,
        payoff_decay=config.league.payoff_decay,
        elo_k=config.evaluation.elo_k,
        baselines=list(config.evaluation.baselines),
        baseline_ratings=envs.fixed_policy_ratings(config.env.name, config.env.options),
        num_actions=spec.num_actions,
        meta_solver=build_meta_solver(config.league.meta_solver),
        stability_draws=config.league.meta_stability_draws,
        stability_max_s=config.league.meta_stability_max_s,
        seed=derive_seed(config.experiment.seed, "meta_stability"),
        archive=Archive(
            size=config.league.active_set.size,
            recent=config.league.active_set.recent,
            sample=config.league.active_set.archive_sample,
            restore_max=config.league.active_set.restore_max,
            seed=derive_seed(config.experiment.seed, "archive_sample"),
        ),
    )
    agents.archive.keep_training = keep_training
    return agents


def _learners(
    config: ExperimentConfig,
    executor: Executor,
    checked: Validated,
    setups: list[LearnerSetup],
    ps: PolicyStore,
    es: EpisodeStore,
) -> dict[str, Handle]:
    """One learner component per learner the scheduler wants (``learner.by_role`` applied)."""
    ray = config.execution.backend == "ray"
    learners: dict[str, Handle] = {}
    device, gpus = learner_placement(config, executor.gpus(), num_learners=len(setups), kind=checked.learner)
    for setup in setups:
        kind = checked.kinds[setup.role.value]
        learners[setup.learner_id] = executor.create(
            kind.component,
            setup.learner_id,
            config.env.name,
            checked.spec,
            kind.learner,
            kind.settings(config.learner, setup.role.value),
            name=f"learner_{setup.learner_id}",
            cpus=0.25 if ray else 0.0,
            gpus=gpus,
            seed=derive_seed(config.experiment.seed, "learner", setup.learner_id),
            policy_server=ps,
            episode_server=es,
            device=device,
        )
    return learners


def _workers(
    config: ExperimentConfig, executor: Executor, start_gen: int, ps: PolicyStore, es: EpisodeStore
) -> list[Handle]:
    ex = config.execution
    return [
        executor.create(
            RolloutWorker,
            config.env.name,
            dict(config.env.options),
            name=f"rollout_worker_{i}",
            restartable=True,
            cpus=ex.worker_cpus if ex.backend == "ray" else 0.0,
            num_envs=ex.envs_per_worker,
            seed=derive_seed(config.experiment.seed, "worker", i, start_gen),
            policy_server=ps,
            episode_server=es,
            cache_size=ex.policy_cache_size,
        )
        for i in range(ex.num_workers)
    ]


def _evaluation(
    config: ExperimentConfig, rollout: RolloutManager, ps: Any, spec: EnvSpec
) -> EvaluationManager:
    ev = config.evaluation
    return EvaluationManager(
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
        paired_games=ev.paired_games,
        shared_games=ev.shared_games,
        make_env=lambda n: envs.make_batched(config.env.name, n, **config.env.options),
        shared_seed=derive_seed(config.experiment.seed, "shared_games"),
        shared_behaviour=ev.shared_games_behaviour,
    )


def _assemble(
    config: ExperimentConfig, run_dir: RunDir, checked: Validated, start_gen: int, resume: bool
) -> Components:
    """Build the components; restore the checkpoint (``resume``) or bootstrap the league."""
    ex = config.execution
    spec, scheduler = checked.spec, checked.scheduler
    console = Console(config.logging)
    executor = _executor(config, console)
    policy_server = executor.create(
        PolicyServer,
        name="policy_server",
        storage_dir=str(run_dir.policies),
        max_in_memory=max(ex.policy_cache_size * 4, 32),
    )
    episode_server = executor.create(EpisodeServer, name="episode_server")
    ps, es = executor.client(policy_server), executor.client(episode_server)
    agents = _agent_manager(config, run_dir, spec, keep_training=scheduler.reads_history)
    setups = scheduler.learners()
    for setup in setups:
        agents.register_learner(setup.learner_id, setup.role)
    learners = _learners(config, executor, checked, setups, ps, es)
    rollout = RolloutManager(
        executor,
        _workers(config, executor, start_gen, ps, es),
        max_restarts=ex.max_worker_restarts,
        placement_log=run_dir.root / "placement.jsonl" if ex.backend == "ray" else None,
        pinned=[policy_server, episode_server, *learners.values()],
    )
    training = TrainingManager(
        executor, rollout, learners, steps_per_call=ex.steps_per_call, overlap=ex.overlap
    )
    checkpointer = Checkpointer(
        run_dir,
        env_name=config.env.name,
        executor=executor,
        policy_server=policy_server,
        learners=learners,
        agents=agents,
        scheduler=scheduler,
        training=training,
    )
    if resume:
        counters = checkpointer.load()  # checks every file before changing any; logging starts after
        # baselines added on resume (check_resume_changes) join the population now
        _add_baselines(executor, policy_server, agents, config.env.name, config.evaluation.baselines)
        logger = build_logger(config.logging, run_dir.root, resume_step=start_gen)
    else:
        counters = RunCounters()
        logger = build_logger(config.logging, run_dir.root)
    parts = Components(
        config=config,
        run_dir=run_dir,
        spec=spec,
        executor=executor,
        scheduler=scheduler,
        agents=agents,
        policy_server=policy_server,
        training=training,
        evaluation=_evaluation(config, rollout, ps, spec),
        logger=logger,
        console=console,
        learners=learners,
        checkpointer=checkpointer,
        counters=counters,
        probe=Probe(config.env.name, config.env.options, probe_settings(config, checked.learner))
        if config.evaluation.probe.every
        else None,
        average=_average_policy(config, run_dir, start_gen if resume else 0),
    )
    if not resume:
        _bootstrap(parts, [s.learner_id for s in setups if s.initial_member])
    return parts


def _check_average_policy(config: ExperimentConfig, kinds: dict[str, LearnerKind], roles: list[str]) -> None:
    """``league.average_policy`` starts from a main agent's network and trains a feed-forward
    MAPPO actor: a run without main agents, or with another learner, is refused in one line."""
    if not config.league.average_policy.enabled:
        return
    fix = "set league.average_policy.enabled=false"
    if AgentType.MAIN_AGENT.value not in roles:
        raise ConfigError(
            f"league.average_policy starts from a main agent's network, and scheduler {config.scheduler_name!r} "
            f"has none (roles: {', '.join(roles)}); {fix}"
        )
    role = AgentType.MAIN_AGENT.value
    main = kinds[role].settings(config.learner, role)
    if not isinstance(main, MAPPOConfig):
        raise ConfigError(
            f"league.average_policy needs a MAPPO main agent, got learner kind {kinds[role].name} for it; {fix}"
        )
    if main.recurrent.enabled:
        raise ConfigError(
            f"league.average_policy needs a feed-forward main agent, got learner.mappo.recurrent.cell="
            f"{main.recurrent.cell}; {fix}"
        )


def _check_shared_games(config: ExperimentConfig, kinds: dict[str, LearnerKind], roles: list[str]) -> None:
    """``evaluation.shared_games`` reweights games by each member's action probabilities, which a
    feed-forward policy gives for one decision alone: a recurrent learner is refused in one line."""
    if not config.evaluation.shared_games:
        return
    for role in roles:
        settings = kinds[role].settings(config.learner, role)
        if isinstance(settings, MAPPOConfig) and settings.recurrent.enabled:
            raise ConfigError(
                f"evaluation.shared_games needs feed-forward policies, got learner.mappo.recurrent.cell="
                f"{settings.recurrent.cell} for {role}; set evaluation.shared_games=0"
            )


def _average_policy(config: ExperimentConfig, run_dir: RunDir, start_gen: int) -> AveragePolicy | None:
    """The average policy of ``league.average_policy`` (None when off), continuing from the one
    saved after the last completed generation when a run resumes at ``start_gen``."""
    avg = config.league.average_policy
    if not avg.enabled:
        return None
    from light_league.algorithms.registry import build_policy

    env_name, options = config.env.name, dict(config.env.options)
    average = AveragePolicy(
        games=avg.games,
        epochs=avg.epochs,
        lr=avg.lr,
        batch_size=avg.batch_size,
        num_envs=avg.num_envs,
        seed=derive_seed(config.experiment.seed, "average_policy"),
        policies_dir=run_dir.policies,
        make_env=lambda n: envs.make_batched(env_name, n, **options),
        build=lambda weights, meta: build_policy(weights, meta, env_name=env_name),
    )
    if start_gen > 0:
        average.restore(start_gen - 1)
    return average


def _bootstrap(parts: Components, initial_members: list[str]) -> None:
    """Baselines and the learners' initial weights join the population; first checkpoint."""
    _add_baselines(
        parts.executor,
        parts.policy_server,
        parts.agents,
        parts.config.env.name,
        parts.config.evaluation.baselines,
    )
    for lid in initial_members:
        if lid in parts.agents.learners():
            member = parts.agents.next_member_id(lid)
            parts.executor.invoke(parts.policy_server, PolicyServer.freeze, lid, member)
            parts.agents.add_snapshot(lid, str(parts.run_dir.policies / member))
    parts.logger.log_config(parts.config.to_dict())
    for log_file in (parts.run_dir.matches, parts.run_dir.generations):
        log_file.touch()  # the logs exist (empty) from the first checkpoint on
    parts.checkpointer.save(parts.counters, None)


def _add_baselines(
    executor: Executor, policy_server: Handle, agents: AgentManager, env_name: str, names: list[str]
) -> None:
    """The baselines of ``names`` not in the population yet join it (fixed policies, no files)."""
    have = set(agents.pool.ids())
    for name in names:
        if name in have:
            continue
        executor.invoke(policy_server, PolicyServer.add_fixed, name, "fixed", {"name": name, "env": env_name})
        agents.add_baseline(name)


# ---------------------------------------------------------------- learner placement


def learner_gpus(num_gpus: float | None, num_learners: int) -> float:
    """GPUs each learner on a GPU asks Ray for: ``learner.num_gpus``, or one GPU shared by all."""
    if num_gpus is not None:
        return float(num_gpus)
    return 1.0 / max(num_learners, 1)


def learner_placement(
    config: ExperimentConfig, gpus: float, *, num_learners: int, kind: LearnerKind | None = None
) -> tuple[str, float]:
    """``(device, gpus)`` of every learner of a run: the resolved ``learner.device`` and, on Ray,
    the GPUs each asks for (0 on the CPU or with the local backend). ``gpus``: the GPUs the
    run's executor has (``Executor.gpus()``: this machine's CUDA devices, or the Ray cluster's);
    ``kind``: the run's resolved learner kind (None: resolved here)."""
    supports = (kind or learner_kind(config.learner)).uses_device
    requested = config.learner.device
    on_ray = config.execution.backend == "ray"
    if on_ray and supports and requested.startswith("cuda:"):
        raise ConfigError(
            f"learner.device={requested}: on Ray a learner sees only the GPU Ray gives it; "
            "set learner.device=cuda (or auto) and learner.num_gpus for its share"
        )
    where = "the Ray cluster" if on_ray else "this machine"
    device = resolve_device(requested, supports_device=supports, gpus=gpus, where=where)
    on_gpu = device.startswith("cuda")
    return device, learner_gpus(config.learner.num_gpus, num_learners) if on_ray and on_gpu else 0.0
