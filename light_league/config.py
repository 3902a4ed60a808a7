"""The typed experiment config.

A YAML file (plus ``key.path=value`` overrides) is validated into :class:`ExperimentConfig`.
Each component receives only its own section. Problems are reported as one line with the
dotted path, the offending value and the fix, e.g.
``execution.num_wrokers: unknown key; did you mean num_workers?``.

The ``scheduler`` section is open-ended: ``name`` picks the scheduler (built-in, ``module:Class``
or entry point) and the remaining keys are validated against that scheduler's own ``Config``.
The same holds for ``env.options``, which go to the environment's factory unchanged.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from light_league.config_base import Section, load_yaml_text, parse_override, validate_section
from light_league.errors import ConfigError, did_you_mean
from light_league.learner_config import LearnerSection as LearnerSection  # its former home
from light_league.learner_config import merge_settings as merge_settings
from light_league.tracking.config import LoggingConfig


class ExperimentSection(Section):
    """Run identity: name, seed, where run directories go."""

    name: str = Field("experiment", min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.\-]+$")
    """Run name; used in the run directory name."""
    seed: int = Field(0, ge=0, le=2**31 - 1)
    """Run seed; every worker's, learner's and scheduler's seed derives from it."""

    @field_validator("seed", mode="before")
    @classmethod
    def _seed_not_bool(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError(f"must be an integer, got {value!r}; write a number such as 0")
        return value

    runs_root: str = "runs"
    """Where fresh run directories are created when ``--run-dir`` is not given."""


class EnvSection(Section):
    """The environment every game of the run is played in."""

    name: str = Field("battalion", min_length=1)
    """Environment name (``envs.env_names()``), ``pettingzoo:module:factory`` or ``openspiel:game``."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Keyword arguments for the environment factory (e.g. ``team_size: 2``; battalion's:
    docs/battalion.md)."""


class ExecutionSection(Section):
    """Where components run (local process or Ray actors) and how much work one round trip carries."""

    backend: Literal["local", "ray"] = "local"
    """``local``: everything in this process (deterministic under the seed); ``ray``: actors."""
    num_workers: int = Field(2, ge=1, le=1024)
    """Rollout workers; each owns batched environments."""
    envs_per_worker: int = Field(64, ge=1, le=65536)
    """Games each worker steps together in one numpy call."""
    steps_per_call: int = Field(64, ge=1, le=100_000)
    """Batched env steps a worker runs per round trip (games × steps per message)."""
    overlap: bool = False
    """Acting and learning overlapped: the workers play the next round while the learners update
    on the last one (each update then trains on trajectories of the version before it, one
    version of policy lag, corrected in the PPO ratio; see docs/architecture.md). Off by default:
    on 2 cores both phases already keep the cores busy (notes/benchmarks.md, "League
    throughput"); it pays where cores or a GPU would otherwise idle."""
    address: str | None = None
    """Ray cluster address: ``None`` starts a local instance, ``auto`` joins a running cluster."""
    num_cpus: int | None = Field(None, ge=1, le=4096)
    """CPUs for a locally started Ray instance (None: Ray's default)."""
    worker_cpus: float = Field(0.5, gt=0.0, le=64.0)
    """CPUs reserved per rollout-worker actor (fractional lets more actors than cores share)."""
    max_worker_restarts: int = Field(3, ge=0, le=1000)
    """Times a dead rollout worker is replaced before the run fails."""
    policy_cache_size: int = Field(16, ge=1, le=10_000)
    """Policies a worker keeps loaded at least (least recently used dropped first); every policy a round needs stays loaded, so the whole frozen population does when the tasks span it."""
    object_store_mb: int = Field(256, ge=64, le=1_000_000)
    """Object store size for a locally started Ray instance."""
    call_timeout_s: float | None = Field(None, gt=0.0, le=1e7)
    """Seconds the driver waits for one call of a component (a worker's rollout round or
    evaluation games, a learner's update) before the run stops with one line naming the call (the
    completed generations are kept; ``--resume`` continues). ``None``: no limit. Only the time
    the process runs counts: a run stopped with Ctrl-Z goes on when continued. On the local
    backend a call is interrupted where Python code runs (an env step in a ``sleep`` or a Python
    loop), not inside a C call that never returns."""
    stall_notice_s: float | None = Field(60.0, gt=0.0, le=1e7)
    """Seconds of one call after which a line names the call still running ("no progress for 60 s:
    rollout_worker_0.run is still running"), again each time the wait doubles. ``None``: no notices."""


class ProbeSection(Section):
    """The exploitability probe, inside a run (``every``) and for ``main.py exploit`` (docs/evaluation.md)."""

    every: int = Field(0, ge=0, le=1_000_000)
    """Probe every this many generations while the run trains (the generations ``every - 1``,
    ``2 * every - 1``, ...); 0 never (``main.py exploit`` still can, on a finished or running run)."""
    targets: list[Literal["main", "meta"]] = Field(default_factory=lambda: ["main"], min_length=1)  # type: ignore[arg-type]
    """What a probe inside the run plays against: ``main`` (the newest snapshot of each main agent,
    equally weighted) and / or ``meta`` (the generation's meta-strategy)."""
    env_steps: int = Field(1_000_000, ge=1, le=10**12)
    """Env steps the probe trains for."""
    games: int = Field(512, ge=2, le=10_000_000)
    """Fresh evaluation games the trained probe then plays against the target (seats alternated)."""
    restarts: int = Field(1, ge=1, le=64)
    """Learners trained from different seeds (each ``env_steps``); each plays ``games`` games
    against the target and the best is scored again on fresh games: a tighter lower bound for
    ``restarts`` times the training."""
    play: Literal["sample", "greedy"] = "sample"
    """How the trained probe plays its evaluation games: ``sample`` (from its action probabilities,
    as it trained) or ``greedy`` (its most probable legal action, a deterministic policy: a best
    response need not mix, and against a deterministic bot the mode can score higher)."""
    role: str = Field("main_exploiter", min_length=1)
    """The league role whose learner settings the probe takes (``learner.by_role``; a role
    without its own settings takes ``learner.mappo``, or a plugin learner's ``learner.options``)."""
    learner: dict[str, Any] = Field(default_factory=dict)
    """Learner settings that differ for the probe, over the role's (e.g. ``{lr: 0.002}``; for a
    plugin learner, fields of its ``Config``). A linear learning-rate schedule decays over the
    probe's own updates unless ``lr_decay_updates`` is given here."""
    num_envs: int | None = Field(None, ge=1, le=1_000_000)
    """Games stepped together while the probe trains (None: the run's ``num_workers x envs_per_worker``)."""
    steps_per_update: int | None = Field(None, ge=1, le=1_000_000)
    """Batched steps per update (None: the run's ``execution.steps_per_call``)."""


class EvaluationSection(Section):
    """The PSRO evaluation step: new members against every member, Elo, exact NashConv, the probe."""

    episodes_per_pair: int | Literal["adaptive"] = 50
    """Games per ordered pairing when a new member meets every other member (per seat order; 1 to
    1,000,000), or ``adaptive``: new pairings get ``adaptive_batch`` games, then the rest of
    ``adaptive_budget`` goes, in rounds, to the cells most likely to change which members the
    meta-strategy uses (see docs/league.md; measured in notes/benchmarks.md, "Adaptive
    evaluation")."""
    adaptive_budget: int = Field(2000, ge=1, le=100_000_000)
    """``adaptive``: most evaluation games per generation (new pairings are always played once;
    a generation stops early when no cell can change the meta-strategy)."""
    adaptive_batch: int = Field(16, ge=1, le=1_000_000)
    """``adaptive``: games per seat order each time a pairing is played."""
    adaptive_cap: int = Field(1000, ge=1, le=100_000_000)
    """``adaptive``: most games per cell (both seat orders together); exact payoffs count as this many."""
    paired_games: bool = False
    """Both seat orders of a pairing play the same games: the ``k``-th game of ``a`` against ``b``
    and of ``b`` against ``a`` start from the same seed, so where the env draws its chance from
    the seed (every built-in env does) each member plays both seats of the same deal and the luck
    of the deal cancels from the cell's mean (duplicate scoring; common random numbers). The
    estimate stays unbiased; its spread falls (measured in docs/league.md, "Paired games").
    Only for games whose seats differ (a symmetric env plays one seat order)."""
    shared_games: int = Field(0, ge=0, le=100_000_000)
    """0: off. Otherwise the meta-solver reads a win-rate table estimated from this many games
    shared by every cell: played once, each player choosing uniformly among its legal actions, and
    reweighted for each pair of members by how much likelier the two make those games' decisions
    (importance sampling; docs/league.md, "Shared games"). Every cell's error then falls with
    all the games, not with its own. Sampled play and the members' own action probabilities only,
    on any game, but the weights spread with every decision a seat makes in a game: for short
    games such as poker. The payoff table, ratings and intervals reported stay the played ones;
    ``shared_effective_games`` in generations.jsonl says how far the weights have spread.
    Feed-forward policies only."""
    shared_games_behaviour: Literal["uniform", "estimated"] = "uniform"
    """What the shared games' weights divide by. ``uniform``: the uniform choice that played them
    (ordinary importance sampling, unbiased). ``estimated``: how often the pool's own games took
    each action from the same history (every earlier decision and action, and this decision's
    observation), the behaviour policy estimated from the games (Hanna et al. 2019): the action
    draws' luck cancels, so where histories recur (short games) the table errs several times less
    (Kuhn: 0.0002 chips against 0.0007), consistent but no longer exactly unbiased. On Kuhn the
    meta-strategy then reads its population's floor, which did not lower its worst seed
    (docs/league.md, "Shared games"). Used only with ``shared_games``."""
    exact: Literal["auto", "never", "always"] = "auto"
    """Use exact expected payoffs instead of sampled games where the game allows (poker)."""
    nash_conv: Literal["auto", "least_exploitable", "never"] = "auto"
    """Where the game allows (poker), measure exactly every generation how exploitable the two
    things a league hands over are: ``auto`` the NashConv of the newest main agent
    (``main_nash_conv``) and of the meta-strategy (``meta_nash_conv``); ``least_exploitable`` also
    solves, as an analysis on the run's clock, the members' least exploitable mixture (the weights
    an exact best response exploits least; ``least_exploitable_nash_conv``), which nothing in the
    run reads; ``never`` skips both. Measurements only: no exact value steers training."""
    probe: ProbeSection = Field(default_factory=ProbeSection)
    """The exploitability probe (off by default inside a run)."""
    baselines: list[str] = Field(default_factory=list)
    """Fixed opponents added to the population at the start (Elo anchors), e.g. ``scripted_l1``."""
    reference: str | None = None
    """The reference opponent of every "vs baseline" figure (the newest and the best main agent's
    win rate in the console, ``report``, ``generations.jsonl`` and the TensorBoard headline): one
    of ``baselines``, the same in every generation (it cannot change on resume). None: the one
    the env declares (battalion: ``scripted_l5``, its strongest scripted level) where it is one
    of ``baselines``, else the baseline the env rates highest; none without baselines."""
    elo_k: float = Field(32.0, gt=0.0, le=1000.0)
    """Elo K-factor."""

    @field_validator("episodes_per_pair")
    @classmethod
    def _episodes_in_range(cls, value: int | str) -> int | str:
        if isinstance(value, int) and not 1 <= value <= 1_000_000:
            raise ValueError("must be from 1 to 1000000 games, or adaptive")
        return value


class AveragePolicySection(Section):
    """The league's average policy: the meta-strategy distilled into one network each generation
    (light_league/training/average.py; docs/league.md, "The average policy")."""

    enabled: bool = False
    """Distil the meta-strategy into one network after every generation's solve (on the run's
    clock), kept as ``policies/average-g<G>.pt``; its exact NashConv is ``average_nash_conv``
    where the game allows. An output only: nothing in training or the meta-strategy reads it.
    Needs a feed-forward MAPPO main agent."""
    games: int = Field(20_000, ge=1, le=100_000_000)
    """Games of the meta-strategy against itself played for the distillation each generation."""
    epochs: int = Field(4, ge=1, le=1000)
    """Passes over those games' decisions (the network starts from the previous generation's)."""
    lr: float = Field(1e-3, gt=0.0, le=1.0)
    """Adam learning rate of the distillation."""
    batch_size: int = Field(4096, ge=1, le=10_000_000)
    """Decisions per gradient step."""
    num_envs: int = Field(256, ge=1, le=100_000)
    """Games stepped together while playing the meta-strategy."""


class ActiveSetSection(Section):
    """The active set: the members the meta-game solves, the scheduler draws from and new members
    are evaluated against; the rest are archived (docs/league.md, "A league of thousands")."""

    size: int = Field(200, ge=0, le=1_000_000)
    """Most members kept active (more when more are protected: the baselines, up to ``size / 2``
    the meta-strategy weights most, the newest ``recent``, up to ``size / 4`` that beat the newest
    main agent most, the best main agent so far); the
    lowest rated of the rest are archived: still in the pool, on disk and loadable by id. 0: every
    member stays active (the full table, every pair evaluated and solved)."""
    recent: int = Field(30, ge=0, le=100_000)
    """The newest members, always active."""
    archive_sample: int = Field(16, ge=0, le=100_000)
    """Archived members each new member also plays, drawn at random each generation: the evidence
    that brings one back."""
    restore_max: int = Field(4, ge=0, le=100_000)
    """Most archived members brought back in one generation (those of the sample that beat the
    newest main agent, the 95% interval of the win rate above 0.5; best first)."""
    tables_every: int = Field(10, ge=1, le=1_000_000)
    """Once the league archives: the payoff files (``payoff/gen_XXXX.json``, ``.npy``) of every
    this-many-th generation and of the latest are kept, the others removed when the next is written."""


class LeagueSection(Section):
    """The population and its meta-game, whatever the scheduler (AgentManager)."""

    pool_max_size: int = Field(1_000_000, ge=2, le=1_000_000)
    """Most frozen members kept (oldest non-baseline evicted first); the active set
    (``active_set``) bounds the cost instead, so no member is lost to this cap by default."""
    active_set: ActiveSetSection = Field(default_factory=ActiveSetSection)
    """The members the meta-game solves; the rest archived (bounds a generation's cost)."""
    average_policy: AveragePolicySection = Field(default_factory=AveragePolicySection)
    """The meta-strategy distilled into one network (off by default)."""
    payoff_decay: float = Field(0.99, gt=0.0, le=1.0)
    """AlphaStar's per-game decay of the win-rate counters that gate snapshots and PFSP."""
    meta_solver: dict[str, Any] = Field(default_factory=lambda: {"name": "nash"})
    """``name`` (nash, maxent_nash, uniform, prd, alpharank, qre, ``package.module:function``, or a
    name registered under the entry-point group ``light_league.meta_solvers``) plus that solver's
    options (see below); ``meta_solver: prd`` is short for ``{name: prd}``. It turns the payoff table into the meta-strategy: PSRO's opponent mixture
    and the mixture whose NashConv is measured."""
    meta_stability_draws: int = Field(100, ge=0, le=100_000)
    """Payoff tables drawn from the cells' posteriors and solved each generation to measure how
    stable the meta-strategy is (0: off)."""
    meta_stability_max_s: float = Field(2.0, gt=0.0, le=3600.0)
    """Time budget of those draws per generation (fewer draws are solved when it runs out)."""

    @field_validator("meta_solver", mode="before")
    @classmethod
    def _meta_solver_has_name(cls, value: Any) -> Any:
        if isinstance(value, str):  # the shorthand ``meta_solver: prd``
            value = {"name": value}
        if not isinstance(value, dict):
            return value
        if not isinstance(value.get("name"), str) or not value["name"]:
            raise ValueError(
                "needs a 'name' (nash, maxent_nash, uniform, prd, alpharank, qre, or package.module:function)"
            )
        return value


class StopSection(Section):
    """When the generation loop stops (the first budget reached wins)."""

    max_generations: int = Field(10, ge=1, le=1_000_000)
    """Stop after this many generations."""
    max_env_steps: int | None = Field(None, ge=1)
    """Stop once this many environment steps (training + evaluation) have run."""
    max_wall_s: float | None = Field(None, gt=0.0)
    """Stop at the end of the first generation past this wall time."""
    target_nash_conv: float | None = Field(None, ge=0.0)
    """Stop when the meta-strategy's exact NashConv (``meta_nash_conv``, where the game allows)
    reaches this value (within 1e-9, so 0 works)."""


class ExperimentConfig(Section):
    """The whole experiment: one section per component."""

    experiment: ExperimentSection = Field(default_factory=ExperimentSection)
    env: EnvSection = Field(default_factory=EnvSection)
    execution: ExecutionSection = Field(default_factory=ExecutionSection)
    learner: LearnerSection = Field(default_factory=LearnerSection)
    scheduler: dict[str, Any] = Field(default_factory=lambda: {"name": "league"})
    """``name`` plus the chosen scheduler's own options."""
    evaluation: EvaluationSection = Field(default_factory=EvaluationSection)
    league: LeagueSection = Field(default_factory=LeagueSection)
    stop: StopSection = Field(default_factory=StopSection)
    logging: LoggingConfig = Field(default_factory=LoggingConfig)

    @field_validator("scheduler")
    @classmethod
    def _scheduler_has_name(cls, value: dict[str, Any]) -> dict[str, Any]:
        if not isinstance(value.get("name"), str) or not value["name"]:
            raise ValueError("needs a 'name' (league, psro, self_play, or package.module:ClassName)")
        return value

    @property
    def scheduler_name(self) -> str:
        return str(self.scheduler["name"])

    @property
    def scheduler_options(self) -> dict[str, Any]:
        return {k: v for k, v in self.scheduler.items() if k != "name"}

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def digest(self) -> str:
        """Short hash of the resolved config (written to the run manifest)."""
        return config_digest(self.to_dict())


def reference_opponent(config: ExperimentConfig) -> str | None:
    """The run's reference opponent: ``evaluation.reference``, else the one its env declares where
    it is a baseline of the run, else the baseline the env rates highest (its fixed rating; the
    first listed on a tie); None without baselines. A ``reference`` that is not a baseline is a
    one-line ConfigError."""
    baselines = config.evaluation.baselines
    chosen = config.evaluation.reference
    if chosen is None:
        if not baselines:
            return None
        from light_league import envs  # the env's modules: imported once the config is known to be valid

        declared = envs.reference_opponent(config.env.name)
        if declared in baselines:
            return declared
        ratings = envs.fixed_policy_ratings(config.env.name, config.env.options)
        return max(baselines, key=lambda name: ratings.get(name, float("-inf")))
    if chosen not in baselines:
        listed = ", ".join(baselines) if baselines else "none"
        raise ConfigError(
            f"evaluation.reference: {chosen!r} is not a baseline of the run{did_you_mean(chosen, baselines)} "
            f"(evaluation.baselines: {listed}); name one of them, or add it to evaluation.baselines"
        )
    return chosen


def config_digest(raw: dict[str, Any]) -> str:
    """Short hash of a config as a mapping: :meth:`ExperimentConfig.digest` of the config, and
    the same of the values its ``config.yaml`` holds (what resume compares with the manifest)."""
    return hashlib.sha256(json.dumps(raw, sort_keys=True).encode()).hexdigest()[:16]


# ---------------------------------------------------------------------------- loading


def apply_overrides(raw: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    for text in overrides:
        parts, value = parse_override(text)
        node = raw
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ConfigError(f"override {text!r}: {part} is not a section")
            node = child
        node[parts[-1]] = value
    return raw


#: most values a config may expand to (nested YAML aliases can make a tiny file expand without limit)
MAX_CONFIG_VALUES = 100_000


def _count_values(value: Any, budget: int) -> int:
    """Values in ``value`` with shared (aliased) parts counted every time; stops past ``budget``."""
    count, stack = 0, [value]
    while stack:
        item = stack.pop()
        count += 1
        if count > budget:
            return count
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return count


def check_size(raw: Any, source: str) -> None:
    if _count_values(raw, MAX_CONFIG_VALUES) > MAX_CONFIG_VALUES:
        raise ConfigError(
            f"config {source} expands to more than {MAX_CONFIG_VALUES:,} values (nested YAML aliases?); "
            "write the values out or use fewer aliases"
        )


def read_yaml(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    if p.exists() and not p.is_file():
        raise ConfigError(f"config file {p} is not a regular file; pass a YAML file (see expr_configs/)")
    if not p.is_file():
        raise ConfigError(f"config file {p} does not exist; pass an existing YAML file (see expr_configs/)")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"config file {p} is not UTF-8 text; pass a YAML file") from None
    raw = load_yaml_text(text, f"config file {p}")
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError(f"config file {p} must hold a mapping of sections, got {type(raw).__name__}")
    return raw


def load_config(path: str | Path | None = None, overrides: list[str] | None = None) -> ExperimentConfig:
    """Read, override and validate an experiment config."""
    raw = read_yaml(path) if path is not None else {}
    source = str(path) if path is not None else ""
    check_size(raw, source or "overrides")
    raw = _switch_scheduler(raw, list(overrides or []))
    raw = apply_overrides(raw, list(overrides or []))
    check_size(raw, source or "overrides")
    try:
        cfg: ExperimentConfig = validate_section(ExperimentConfig, raw)
        _resolve_scheduler(cfg)
    except ConfigError as exc:
        raise ConfigError(_blame(str(exc), path, list(overrides or []))) from None
    return cfg


def _resolve_scheduler(cfg: ExperimentConfig) -> None:
    """The ``scheduler`` section validated by the scheduler's own ``Config`` and written out with
    every option's default, so that a misspelt option fails here, before a run starts anything,
    and ``--print-config`` and ``config.yaml`` show what the scheduler runs with. A scheduler
    named ``module:Class`` is left as written: its module is imported only when the run is built
    (after ``--resume`` and the commands that read a run have checked it, docs/trust.md)."""
    if ":" in cfg.scheduler_name:
        return
    from light_league.plugins import validate_options
    from light_league.scheduling.registry import resolve_scheduler

    options = validate_options(
        resolve_scheduler(cfg.scheduler_name).Config, cfg.scheduler_options, path="scheduler"
    )
    cfg.scheduler = {"name": cfg.scheduler_name, **options.model_dump(mode="json")}


def _switch_scheduler(raw: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """An override naming another scheduler starts the section afresh: the file's other
    ``scheduler`` keys configure the file's scheduler, which no longer runs."""
    names = [parse_override(t)[1] for t in overrides if parse_override(t)[0] == ["scheduler", "name"]]
    section = raw.get("scheduler")
    if names and isinstance(section, dict) and section.get("name") != names[-1]:
        raw = {**raw, "scheduler": {}}
    return raw


def _blame(message: str, path: str | Path | None, overrides: list[str]) -> str:
    """Prefix a validation message with where the bad value came from: an override or the file."""
    for text in reversed(overrides):  # the last override of a key is the one that counts
        key = ".".join(parse_override(text)[0])
        if message.startswith((f"{key}:", f"{key}.")):
            return f"command-line override {text!r}: {message}"
    return f"{path}: {message}" if path is not None else message
