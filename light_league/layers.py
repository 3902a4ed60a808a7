"""The map of the package: its layers, lowest first, and what each module or package is for.

A module may import from its own layer and the layers below it, never from one above; the
component packages (:data:`COMPONENTS`) do not import each other even within their layer (they
meet in the Runner, through protocols such as the evaluation's ``EvaluationTable``). A module
belongs to the layer of the longest prefix that names it (``tracking.config`` is in ``data``, the
rest of ``tracking`` in ``components``).

``tests/unit/test_import_layers.py`` holds the code to this table, and docs/architecture.md's
layer table and module map are generated from it (``python tools/regenerate_docs.py``; a test
fails when they are stale), so the map, the test and the code say the same thing. Plain data:
this module imports nothing.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Layer:
    """One layer: its name, what it holds, and its modules by prefix (relative to ``light_league``;
    ``""`` is the package itself), each with one line on what it is for."""

    name: str
    summary: str
    modules: dict[str, str]


LAYERS: tuple[Layer, ...] = (
    Layer(
        "games",
        "the environments: they import nothing else of the package (a test holds it)",
        {
            "envs": "batched and PettingZoo environments, their adapters and fixed opponents, built by name",
        },
    ),
    Layer(
        "foundation",
        "plain values, seeds, errors, config sections, files and the plugin resolver",
        {
            "": "the package: its version",
            "types": "the value types components pass: AgentType (role label), AgentRecord, MatchResult, "
            "Behaviour, LearnerSetup, TrainingTask, GenerationDecisions",
            "seeding": "derive_seed: every seed from experiment.seed",
            "errors": "the LeagueError family: one-line messages with a did-you-mean",
            "config_base": "Section, the base class of every config section; parse_override",
            "plugins": "names -> classes: built-ins, module:Class, entry points; the trust boundary",
            "utils": "atomic writes, the JSONL log, checks of saved state, devices",
            "run_dir": "the run directory: its files, the lock against a second writer, the manifest",
            "layers": "this map: the layers and what each module is for",
        },
    ),
    Layer(
        "data",
        "the meta-game math, the population and its records, buffers and servers, executors",
        {
            "game_theory": "Nash, meta-solvers, uncertainty, PFSP, Elo, the leaderboard's order (Nash "
            "clustering, Nash averaging), diversity, payoff decay: numpy and scipy only (a test holds it)",
            "league": "the league tutorial's API under its names (AgentPool, MatchDatabase, EloRegistry, "
            "build_payoff_matrix, ... re-exported) and its LeagueMatchmaker",
            "agents.agent_pool": "AgentPool: the population, a JSON manifest written atomically",
            "agents.match_database": "MatchDatabase: every game played, a JSONL log",
            "agents.elo_registry": "EloRegistry: Elo ratings saved as JSON, baselines fixed",
            "agents.payoff_table": "PayoffTable: the evaluation payoff table (NaN and 0 games where unplayed)",
            "data_buffer": "SampleBatch, the episode and policy servers, policies on disk, the stores' protocols",
            "execution": "LocalExecutor and RayExecutor: the only place that imports ray",
            "tracking.config": "LoggingConfig: the logging section",
            "tracking.board": "main.py board: TensorBoard on a run",
        },
    ),
    Layer(
        "algorithms",
        "policies, learners and the exact game-tree evaluator",
        {
            "algorithms": "the Policy and Learner contracts and the bank hook, MAPPO, the regret learner, "
            "tabular policies, build_policy (the one way a policy is rebuilt), the exact game-tree evaluator",
        },
    ),
    Layer(
        "rollout",
        "playing games: the episode loop, rollout workers and their manager",
        {
            "rollout": "the pure episode loop and its stream recorder, rollout workers and their manager, "
            "banks of frozen policies, head-to-head matches with a 95% interval",
        },
    ),
    Layer(
        "components",
        "the components the Runner holds (none imports another)",
        {
            "agents": "AgentManager (the facade the scheduler reads as its LeagueView) over the learner "
            "book, the game records, the meta-game and the archive (the members outside the active set); "
            "the meta-solvers by name",
            "scheduling": "TaskScheduler (the base), its roles, the built-in schedulers (league: AlphaStar, "
            "psro, self_play) and their registry",
            "training": "TrainingManager, the learner components (LearnerRunner, ExactBRRunner), the "
            "average policy",
            "evaluation": "EvaluationManager (every new pairing played, or computed exactly), the probe, "
            "shared games, exact exploitability",
            "tracking": "the metric logger and its backends (TensorBoard, W&B), the console, the generation "
            "record, the leaderboard and what a run hands over (the best main agent so far), report",
        },
    ),
    Layer(
        "config",
        "the experiment config, assembled from every component's section; the docs rendered from code",
        {
            "config": "ExperimentConfig, the typed config tree (pydantic); load_config()",
            "learner_config": "LearnerSection: each role's learner kind and settings",
            "config_docs": "docs/configuration.md rendered from the config classes",
            "doc_sections": "the sections of docs/ rendered from the code: the generation record's "
            "fields, the layer table, this module map, the payoff table's intervals",
        },
    ),
    Layer(
        "run",
        "wiring, checkpointing, the generation loop, and a run read back",
        {
            "build": "validates every name of a config, builds every component (Components)",
            "resume_rules": "what a --resume may change: the config compared with the stored one",
            "learner_kinds": "the learner table: learner.kind -> component, learner class, settings, device",
            "checkpoint": "Checkpointer: the resume point after each generation, checked before restored",
            "runner": "Runner: the generation loop, five timed phases",
            "run_reader": "RunReader: a run directory read as data",
            "trust": "the gate every command that reads a run directory goes through",
            "exploit": "main.py exploit: the probe against a run's outputs",
            "pit": "main.py eval and watch: two players of a run",
            "export": "main.py export: a member as one file torch loads alone",
        },
    ),
    Layer(
        "cli",
        "the command line",
        {
            "cli": "main.py's commands: run, resume, report, board, eval, watch, export, exploit",
            "failures": "a run's failure said once in one line, its traceback kept in error.log",
        },
    ),
    Layer(
        "examples",
        "the plugins and the script the docs walk through (docs/plugins.md, docs/quickstart.md)",
        {
            "examples": "a scheduler, a league role and a learner as plugins; an exported policy played "
            "with torch alone",
        },
    ),
)

#: the component packages: they do not import each other (see :data:`SIDEWAYS_ALLOWED`)
COMPONENTS: tuple[str, ...] = ("agents", "scheduling", "training", "evaluation", "tracking")

#: the exceptions to that rule, as ``(importer, imported)`` packages
SIDEWAYS_ALLOWED: frozenset[tuple[str, str]] = frozenset()

#: what the module map shows beside the package
OUTSIDE: dict[str, str] = {
    "main.py": "the command line's entry point (light_league.cli)",
}
