"""The Runner: the generation loop over the components :mod:`light_league.build` wires.

One generation (see docs/architecture.md):

1. the scheduler plans the training tasks from the league's statistics;
2. the training manager runs them (rollouts on the shared workers, one update per round);
3. the scheduler's snapshot / reset decisions are applied;
4. every missing pairing of the active set is evaluated, the meta-game is solved and what no
   longer fits the active set is archived (``league.active_set``);
5. results are logged and the league state is checkpointed (the resume point).
"""

from __future__ import annotations

import collections
import dataclasses
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from light_league.agents.agent_manager import AgentManager, LeagueStats
from light_league.build import build_runner
from light_league.build import make_env_spec as make_env_spec  # its former home
from light_league.checkpoint import Checkpointer, RunCounters
from light_league.config import ExperimentConfig, reference_opponent
from light_league.data_buffer.policy_server import PolicyServer
from light_league.envs.base import EnvSpec
from light_league.errors import LeagueError
from light_league.evaluation.evaluation_manager import EvaluationManager
from light_league.evaluation.probe import Probe, ProbeTarget, probe_summary, save_probe
from light_league.execution import Executor, Handle
from light_league.run_dir import RunDir
from light_league.scheduling.task_scheduler import TaskScheduler
from light_league.seeding import derive_seed as derive_seed  # its former home
from light_league.tracking.console import Console, start_line
from light_league.tracking.headline import headline_scalars
from light_league.tracking.leaderboard import final_lines, leaderboard_markdown
from light_league.tracking.logger import LEADERBOARD_TAG, MetricLogger, PayoffSnapshot
from light_league.tracking.record import (
    GenerationRecord,
    GenerationWork,
    Measurements,
    ProbeReading,
    latest_probes,
    latest_reference,
)
from light_league.tracking.report import drop_payoff_snapshot, load_payoff_snapshot, save_payoff_snapshot
from light_league.training.average import AveragePolicy
from light_league.training.training_manager import TrainingManager, TrainingOutcome
from light_league.types import AgentRecord, GenerationDecisions, TrainingTask, newest_main
from light_league.utils.atomic import interrupts_held

#: ``stop.target_nash_conv`` fires at ``nash_conv <= target + NASH_CONV_TOLERANCE``
NASH_CONV_TOLERANCE = 1e-9


class Timer:
    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextmanager
    def __call__(self, phase: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[phase] = self.seconds.get(phase, 0.0) + time.perf_counter() - start


class Runner:
    """Owns the components of one run; ``run()`` is the generation loop."""

    def __init__(
        self,
        *,
        config: ExperimentConfig,
        run_dir: RunDir,
        spec: EnvSpec,
        executor: Executor,
        scheduler: TaskScheduler,
        agents: AgentManager,
        policy_server: Handle,
        training: TrainingManager,
        evaluation: EvaluationManager,
        logger: MetricLogger,
        console: Console,
        learners: dict[str, Handle],
        checkpointer: Checkpointer,
        counters: RunCounters | None = None,
        probe: Probe | None = None,
        average: AveragePolicy | None = None,
    ) -> None:
        self.config = config
        self.run_dir = run_dir
        self.spec = spec
        self.executor = executor
        self.scheduler = scheduler
        self.agents = agents
        self.policy_server = policy_server
        self.training = training
        self.evaluation = evaluation
        self.logger = logger
        self.console = console
        self.learners = learners
        self.checkpointer = checkpointer
        self.generations_log = checkpointer.generations_log
        restored = counters or RunCounters()
        self.env_steps = restored.env_steps
        self.wall_offset = restored.wall_s
        self.started = time.perf_counter()
        #: the meta-strategy's exact NashConv of the last generation (``stop.target_nash_conv``)
        self.last_nash_conv: float | None = restored.last_nash_conv
        self.probe = probe
        #: the meta-strategy distilled into one network each generation (``league.average_policy``)
        self.average = average
        #: the generation's measurements of what the league hands over (exact NashConv, probes)
        self.measured = Measurements()
        #: the latest probe reading per target, ``{"main": ..., "meta": ...}`` (a record's ``probe``)
        self.latest_probe: dict[str, ProbeReading] = latest_probes(self.generations_log)
        #: what the generation's solve changed in the archive (``league.active_set``)
        self.archive_change = agents.archive.last
        #: the best main agent so far, which the archive keeps active (so it stays the best so far)
        self.handed_over = _best_main(self.generations_log)
        #: the opponent of every "vs baseline" figure, the same in every generation
        self.reference = _run_reference(config, self.generations_log)

    # ------------------------------------------------------------------ construction
    @classmethod
    def build(cls, config: ExperimentConfig, run_dir: RunDir, *, resume: bool, argv: list[str]) -> Runner:
        return build_runner(cls, config, run_dir, resume=resume, argv=argv)

    # ------------------------------------------------------------------ the loop
    def run(self) -> None:
        self.console.note(self.start_line())
        reason = self.stop_reason()
        if reason is not None:
            self.console.note(
                f"nothing to do: the run has already stopped ({reason}) after {self.agents.generation} "
                f"generations; to continue, raise that limit: --resume {self.run_dir.root} key=value"
            )
        stop = self.config.stop
        with self.console.run_progress(
            max_wall_s=stop.max_wall_s,
            wall_s=self.wall_s(),
            max_generations=stop.max_generations,
            generation=self.agents.generation,
        ) as bar:
            while (reason := self.stop_reason()) is None:
                self.run_generation()
                bar.update(wall_s=self.wall_s(), generation=self.agents.generation)
        self._final_summary(reason)

    def start_line(self) -> str:
        """Run directory, backend and the stop rules in force (the console's first line)."""
        execution, stop = self.config.execution, self.config.stop
        workers = f"{execution.num_workers} rollout worker{'s' if execution.num_workers > 1 else ''}"
        backend = f"{execution.backend} ({workers}" + (
            f", cluster {execution.address})" if execution.address else ")"
        )
        rules = [f"stop.max_generations={stop.max_generations}"]
        rules += [
            f"stop.{key}={value:g}" if isinstance(value, float) else f"stop.{key}={value}"
            for key, value in (
                ("max_wall_s", stop.max_wall_s),
                ("max_env_steps", stop.max_env_steps),
                ("target_nash_conv", stop.target_nash_conv),
            )
            if value is not None
        ]
        resumed = self.agents.generation or None  # a fresh run starts at generation 0
        return start_line(str(self.run_dir.root), backend, rules[::-1], resumed_at=resumed)

    def _final_summary(self, reason: str) -> None:
        """Why the run stopped, its strongest members and the newest main agent against each baseline."""
        last = collections.deque(self.generations_log, maxlen=1)
        if not last:
            return
        record = GenerationRecord.from_json(last[0], where=f"{self.run_dir.generations} (last line)")
        try:
            snapshot: PayoffSnapshot | None = load_payoff_snapshot(self.run_dir.root, record.generation)
        except LeagueError:
            snapshot = None
        self.console.final(
            final_lines(_explain(reason, self.config), record, snapshot, run_dir=str(self.run_dir.root))
        )

    def run_generation(self) -> dict[str, float]:
        """One generation, its five phases each timed; returns their seconds (``timing/<phase>_s``)."""
        gen = self.agents.generation
        timer = Timer()
        with timer("plan"):
            tasks = self.scheduler.next_tasks(self.agents)
        with self.console.generation_progress(gen, sum(t.env_steps for t in tasks), 0) as progress:
            with timer("train"):
                outcome = self.training.run(tasks, progress.advance_train, generation=gen)
                self.agents.record_training(outcome.results, outcome.env_steps)
            with timer("snapshot"):
                self.apply(self.scheduler.after_training(self.agents))
            with timer("evaluate"):
                progress.set_eval_total(self.evaluation.planned_games(self.agents))
                summary = self.evaluation.run(self.agents, progress.advance_eval)
        with timer("solve"):
            stats = self.agents.solve(game=self.evaluation.game, shared=self.evaluation.shared_table)
            self.archive_change = self.agents.update_archive(stats, keep=self.handed_over)
        if self.average is not None:
            with timer("average"):  # an output the run makes: on its clock
                self._update_average(gen, stats)
        self.measured = self._measure(gen, stats, timer)
        self.last_nash_conv = self.measured.meta_nash_conv
        self.evaluation.keep_members(stats.ids)
        self.env_steps += sum(outcome.env_steps.values()) + summary.env_steps
        with timer("checkpoint"):
            record = self._finish(gen, tasks, outcome, stats, timer)
        self.console.summary(gen, record, latest_probe=self.latest_probe)
        return dict(timer.seconds)

    def _measure(self, gen: int, stats: LeagueStats, timer: Timer) -> Measurements:
        """How exploitable the newest main agent and the meta-strategy are: exactly where the game
        allows, and by the probe in the generations ``evaluation.probe.every`` names. Measurements
        only: nothing here feeds back into training or the meta-strategy."""
        main = newest_main(stats.ids, stats.roles)
        average: dict[str, float] | None = None
        average_nash_conv = least_nash_conv = None
        least: dict[str, float] | None = None
        probe: dict[str, ProbeReading] | None = None
        with timer("exploitability"):
            exact = self.evaluation.exploitability(stats, main)
            if self.average is not None and self.average.policy is not None:
                average = {k: round(v, 6) for k, v in self.average.last.items()}
                average_nash_conv = self.evaluation.policy_nash_conv(self.average.policy)
        if self.evaluation.least_exploitable:
            with timer("least_exploitable"):  # an analysis the config asked for, on the run's clock
                mixture, least_nash_conv = self.evaluation.least_exploitable_mixture(stats.ids)
            least = {k: round(v, 6) for k, v in mixture.items()}
        every = self.config.evaluation.probe.every
        if self.probe is not None and every and (gen + 1) % every == 0:
            with timer("probe"):
                probe = self._probes(gen, stats, main)
            self.latest_probe.update(probe)
        return Measurements(
            meta_nash_conv=exact.meta,
            main_nash_conv=exact.main,
            average=average,
            average_nash_conv=average_nash_conv,
            least_exploitable=least,
            least_exploitable_nash_conv=least_nash_conv,
            probe=probe,
        )

    def _update_average(self, gen: int, stats: LeagueStats) -> None:
        """Distil this generation's meta-strategy into the average policy (starting, the first
        time, from the newest main agent's snapshot)."""
        assert self.average is not None
        weights = {k: w for k, w in zip(stats.ids, stats.meta_strategy.tolist()) if w > 1e-9}
        main = newest_main(stats.ids, stats.roles)
        if not main:
            return  # no main agent yet: nothing to start the network from
        start = self.evaluation.member_entry(next(iter(main)))
        self.average.update(gen, self.evaluation.member_policies(list(weights)), weights, start)

    def _probes(self, gen: int, stats: LeagueStats, main: dict[str, float]) -> dict[str, ProbeReading]:
        """One probe per ``evaluation.probe.targets`` entry; its JSON also goes to ``exploit/``."""
        assert self.probe is not None
        targets = {"main": main, "meta": dict(zip(stats.ids, stats.meta_strategy.tolist()))}
        out: dict[str, ProbeReading] = {}
        for name in self.config.evaluation.probe.targets:
            weights = {k: w for k, w in targets[name].items() if w > 0}
            if not weights:
                continue
            target = ProbeTarget(name, gen, weights)
            seed = derive_seed(self.config.experiment.seed, "probe", name, gen)
            with self.console.probe_progress(name, self.probe.settings.env_steps) as progress:
                result = self.probe.run(
                    target, self.evaluation.member_policies(list(weights)), seed=seed, progress=progress
                )
            save_probe(self.run_dir.root, result)
            out[name] = ProbeReading.from_json(probe_summary(result))
        return out

    def apply(self, decisions: GenerationDecisions) -> list[AgentRecord]:
        """Freeze the learners ``decisions.snapshot`` names into the population (their new members
        are returned) and reset those ``decisions.reset`` names."""
        new = []
        for lid in decisions.snapshot:
            member_id = self.agents.next_member_id(lid)
            snapshot = self.training.snapshot(lid)
            meta, weights = (None, None) if snapshot is None else snapshot
            self.executor.invoke(self.policy_server, PolicyServer.freeze, lid, member_id, weights, meta)
            new.append(self.agents.add_snapshot(lid, str(self.run_dir.policies / member_id)))
        for lid in decisions.reset:
            self.training.reset(lid, decisions.reset_from.get(lid))
            self.agents.reset_learner(lid)
        return new

    def stop_reason(self) -> str | None:
        """Which ``stop`` rule has fired (``stop.max_generations=24``), or None to go on."""
        stop = self.config.stop
        if self.agents.generation >= stop.max_generations:
            return f"stop.max_generations={stop.max_generations}"
        if stop.max_env_steps is not None and self.env_steps >= stop.max_env_steps:
            return f"stop.max_env_steps={stop.max_env_steps}"
        if stop.max_wall_s is not None and self.wall_s() >= stop.max_wall_s:
            return f"stop.max_wall_s={stop.max_wall_s}"
        target = stop.target_nash_conv
        if target is not None and self.last_nash_conv is not None:
            # NashConv of an exact equilibrium comes out as rounding noise (3.9e-16), not 0
            if self.last_nash_conv <= target + NASH_CONV_TOLERANCE:
                return f"stop.target_nash_conv={target}"
        return None

    def wall_s(self) -> float:
        return self.wall_offset + time.perf_counter() - self.started

    # ------------------------------------------------------------------ logging and checkpoint
    def _finish(
        self, gen: int, tasks: list[TrainingTask], outcome: TrainingOutcome, stats: LeagueStats, timer: Timer
    ) -> GenerationRecord:
        """Record, log and checkpoint the generation (the resume point), and advance the league."""
        snapshot = payoff_snapshot(gen, stats)
        save_payoff_snapshot(self.run_dir.root, snapshot)
        work = GenerationWork(
            wall_s=self.wall_s(),
            env_steps=self.env_steps,
            tasks=tasks,
            trained_steps=outcome.env_steps,
            rollout_s=outcome.rollout_s,
            update_s=outcome.update_s,
            timings=timer.seconds,
            games=self.agents.games_this_generation,
            # evaluation.shared_games: the fewest effective games any member keeps in either seat
            shared_effective_games=self.evaluation.shared_effective_games,
        )
        record = GenerationRecord.build(
            gen, stats=stats, snapshot=snapshot, work=work, measured=self.measured, reference=self.reference
        )
        change = self.archive_change
        if change.size or change.restored:
            record = dataclasses.replace(
                record, archived=change.size, archived_now=change.archived, restored_now=change.restored
            )
        self.handed_over = () if record.best_main is None else (record.best_main.id,)
        self._log(snapshot, record, outcome, stats)
        self.agents.advance()
        with interrupts_held():  # the commit and its clean-up run whole; a signal waits for them
            self.checkpointer.save(self.counters(), record.to_json())
            every = self.config.league.active_set.tables_every
            if change.size and gen > 0 and (gen - 1) % every:  # the previous one is not the latest now
                drop_payoff_snapshot(self.run_dir.root, gen - 1)
        return record

    def counters(self) -> RunCounters:
        """The run's own state a checkpoint keeps."""
        return RunCounters(self.env_steps, self.wall_s(), self.last_nash_conv)

    def _log(
        self, snapshot: PayoffSnapshot, record: GenerationRecord, outcome: TrainingOutcome, stats: LeagueStats
    ) -> None:
        self.logger.log_payoff(snapshot)
        self.logger.log_text(
            LEADERBOARD_TAG,
            leaderboard_markdown(record, top_k=self.config.logging.summary_top_k),
            snapshot.generation,
        )
        self.logger.log_scalars(self._scalars(snapshot, record, outcome, stats), snapshot.generation)
        self.logger.flush()

    def _scalars(
        self, snapshot: PayoffSnapshot, record: GenerationRecord, outcome: TrainingOutcome, stats: LeagueStats
    ) -> dict[str, float]:
        out: dict[str, float] = {
            "league/population_size": float(len(stats.ids)),
            "rollout/env_steps_per_s": float(record.env_steps_per_s or 0.0),
            "rollout/env_steps": float(self.env_steps),
        }
        best = None if record.best_main is None else record.best_main.id
        out.update(
            headline_scalars(
                snapshot, record.rating, record.rating_ci95, reference=record.reference, best=best
            )
        )
        out.update(_meta_scalars(stats))
        if stats.diversity is not None:
            out["league/diversity_score"] = float(stats.diversity)
        out.update(_exploitability_scalars(self.measured, self.latest_probe))
        if self.config.logging.member_scalars:
            out.update(_member_scalars(stats))
        for lid, metrics in outcome.metrics.items():
            for k, v in metrics.items():
                out[f"train/{lid}/{k}"] = v
        out.update(self.scheduler.metrics(self.agents, outcome.results))
        for phase, secs in record.timings.items():
            out[f"timing/{phase}_s"] = secs
        for part, secs in record.train_split_s.items():
            out[f"timing/train_{part}_s"] = secs
        return out

    def close(self, interrupted: bool = False) -> None:
        """Close the logs, the executor and the lock; ``interrupted`` (Ctrl-C, SIGTERM): the charts
        still being drawn get a few seconds (:meth:`MetricLogger.interrupt`), not minutes."""
        try:
            if interrupted:
                self.logger.interrupt()
            self.logger.close()
        finally:
            try:
                self.executor.shutdown()
            finally:
                self.run_dir.unlock()


def _explain(reason: str, config: ExperimentConfig) -> str:
    """A stop rule with what it means: ``stop.max_wall_s=360 (the first generation to end past 360 s)``."""
    if reason.startswith("stop.max_wall_s") and config.stop.max_wall_s is not None:
        budget = f"{config.stop.max_wall_s:g}"
        return f"stop.max_wall_s={budget} (the first generation to end past {budget} s)"
    if reason.startswith("stop.target_nash_conv"):
        return f"{reason} (the meta-strategy's exact NashConv reached it)"
    return reason


def _best_main(lines: Iterable[Any]) -> tuple[str, ...]:
    """The last record's best main agent so far (none without one)."""
    last = collections.deque(lines, maxlen=1)
    record = GenerationRecord.from_json(last[0]) if last else None
    return () if record is None or record.best_main is None else (record.best_main.id,)


def _run_reference(config: ExperimentConfig, lines: Iterable[Any]) -> str | None:
    """The run's reference opponent: the one its latest record names (a resume keeps it, even
    where ``evaluation.baselines`` gained a baseline the env rates higher), else the config's."""
    return latest_reference(lines) or reference_opponent(config)


def _meta_scalars(stats: LeagueStats) -> dict[str, float]:
    """``league/meta_entropy`` and ``league/meta_stability`` (+ draws)."""
    out = {"league/meta_entropy": stats.meta_entropy}
    if stats.stability is not None:
        out["league/meta_stability"] = stats.stability.tv_mean
        out["league/meta_stability_draws"] = float(stats.stability.draws)
    return out


def _member_scalars(stats: LeagueStats) -> dict[str, float]:
    """One scalar per member (``logging.member_scalars``): ``rating/``, ``elo_sequential/``,
    ``meta_strategy/`` and ``support/<agent>``."""
    out = {f"rating/{agent}": rating for agent, rating in stats.rating.items()}
    out.update({f"elo_sequential/{agent}": rating for agent, rating in stats.elo.items()})
    out.update(
        {f"meta_strategy/{agent}": float(p) for agent, p in zip(stats.ids, stats.meta_strategy.tolist())}
    )
    if stats.stability is not None:
        out.update(
            {f"support/{agent}": float(p) for agent, p in zip(stats.ids, stats.stability.support.tolist())}
        )
    return out


def _exploitability_scalars(
    measured: Measurements, latest_probe: Mapping[str, ProbeReading]
) -> dict[str, float]:
    """``exploitability/main_nash_conv`` and ``exploitability/meta_nash_conv`` where exact, the
    least exploitable mixture's NashConv where asked for, and the latest probe of each target
    (``probe/<target>/win_rate`` and the rest; logged every generation, so the curve is flat
    between probes)."""
    out = {f"exploitability/{key}": value for key, value in measured.nash_convs().items()}
    for target, reading in latest_probe.items():
        values = (
            ("win_rate", reading.win_rate),
            ("payoff", reading.payoff),
            ("best_response_payoff", reading.best_response_payoff),
        )
        out.update({f"probe/{target}/{key}": float(value) for key, value in values if value is not None})
        if reading.win_rate is not None and reading.win_rate_ci95:
            low, high = reading.win_rate_ci95
            out[f"probe/{target}/win_rate_low"], out[f"probe/{target}/win_rate_high"] = (
                float(low),
                float(high),
            )
    return out


def payoff_snapshot(gen: int, stats: LeagueStats) -> PayoffSnapshot:
    """The generation's payoff table and meta-strategy (saved, logged and reported)."""
    return PayoffSnapshot(
        gen,
        stats.ids,
        stats.roles,
        stats.win_rates,
        stats.games,
        stats.meta_strategy,
        stats.ci_low,
        stats.ci_high,
        stats.meta_solver,
    )
