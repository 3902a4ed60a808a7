"""A run directory read as data: its config, completed generations, members and their policies.

What ``report``, ``exploit`` and the benchmarks read of a run, in one place. Only completed
generations are read (a line of ``generations.jsonl`` is written when its generation's checkpoint
is), so a running run can be read while it trains. Nothing here writes to the run directory.

    run = RunReader("runs/league_leduc-20261126-101500")
    target = run.target("main")                       # the newest main agent of the last generation
    best = run.member_name("best")                    # the best main agent so far, e.g. main_agent_0-v9
    policies = run.policies(list(target.weights))     # member id -> Policy
    table = run.payoff(target.generation)             # that generation's PayoffSnapshot
    env = run.make_env(128)                           # 128 games of the run's env, its options applied
"""

from __future__ import annotations

import functools
from pathlib import Path

from light_league.agents.agent_pool import AgentPool
from light_league.algorithms.base import Policy
from light_league.config import ExperimentConfig
from light_league.envs.base import BatchedEnv
from light_league.errors import LeagueError, did_you_mean
from light_league.evaluation.probe import ProbeTarget
from light_league.tracking.logger import PayoffSnapshot
from light_league.tracking.record import GenerationRecord, read_generations
from light_league.tracking.report import load_payoff_snapshot
from light_league.trust import open_run_dir, stored_config
from light_league.types import newest_main

#: names that stand for a member (``RunReader.member_name``)
NAMED = ("best", "newest")
#: what ``RunReader.target`` takes besides a member id
TARGETS = ("main", "meta", *NAMED)


class RunReader:
    """Read-only view of one run directory (see the module docstring)."""

    def __init__(
        self, root: str | Path, overrides: list[str] | None = None, *, command: str = "reading a run"
    ) -> None:
        """``overrides``: ``key.path=value`` changes applied to the stored config (as ``--resume``
        takes them); the directory must be one ``main.py`` made. ``command``: what reads it, as
        the gate's messages name it (:mod:`light_league.trust`)."""
        self.root = Path(root)
        self.run_dir = open_run_dir(self.root, command=command)
        self.overrides = list(overrides or [])
        self.command = command

    @functools.cached_property
    def config(self) -> ExperimentConfig:
        """The run's resolved config (``config.yaml``), with this reader's overrides, through the
        gate: a module it names is imported only when an override repeats it."""
        return stored_config(self.run_dir, self.overrides, command=self.command)

    def records(self) -> list[GenerationRecord]:
        """The completed generations' records, oldest first."""
        return read_generations(self.root)

    def record(self, generation: int | None = None) -> GenerationRecord:
        """One completed generation's record (None: the last one)."""
        records = self.records()
        if not records:
            raise LeagueError(f"{self.root} has no completed generation yet; wait for the first one")
        if generation is None:
            return records[-1]
        for record in records:
            if record.generation == generation:
                return record
        first, last = records[0].generation, records[-1].generation
        raise LeagueError(
            f"{self.root} has no completed generation {generation} (completed: {first}-{last}); "
            f"pass --generation from {first} to {last}"
        )

    def members(self, generation: int | None = None) -> dict[str, str]:
        """``{member id: role}`` of the population at the end of ``generation``: the record's, and
        where the league archives (``league.active_set``; the record holds the active set) the
        pool's other members that had joined by then, after them."""
        record = self.record(generation)
        out = record.member_roles
        if record.archived:
            pool = AgentPool(self.run_dir.pool)
            joined = (r for r in pool.list() if r.metadata.get("generation", 0) <= record.generation)
            out.update({r.agent_id: r.agent_type.value for r in joined if r.agent_id not in out})
        return out

    def joined(self) -> dict[str, tuple[str, int]]:
        """``{member id: (role, the generation it joined in)}`` of every member the completed
        generations list, in the order they joined."""
        out: dict[str, tuple[str, int]] = {}
        for record in self.records():
            for member in record.population:
                out.setdefault(member.id, (member.role, record.generation))
        return out

    def payoff(self, generation: int | None = None) -> PayoffSnapshot:
        """The payoff table, Nash mixture and meta-strategy of ``generation`` (None: the last saved)."""
        return load_payoff_snapshot(self.root, generation)

    def make_env(self, num_envs: int) -> BatchedEnv:
        """``num_envs`` games of the run's env, with its ``env.options``."""
        from light_league import envs

        config = self.config
        return envs.make_batched(config.env.name, num_envs, **config.env.options)

    def member_name(self, name: str, generation: int | None = None) -> str:
        """The member id that ``name`` stands for at ``generation`` (None: the last completed):
        ``best`` is the best main agent so far (the record's ``best_main``, judged against the
        reference set), ``newest`` the newest main-agent snapshot; any other name is returned as it
        is."""
        if name not in NAMED:
            return name
        record = self.record(generation)
        gen = record.generation
        if name == "best":
            if record.best_main is None:
                raise LeagueError(
                    f"{self.root}: generation {gen} names no best main agent (it needs a main agent and a "
                    "reference set of baselines or exploiters); pass a member id or newest"
                )
            return record.best_main.id
        newest = list(newest_main(list(record.member_roles), list(record.member_roles.values())))
        if len(newest) != 1:
            raise LeagueError(
                f"{self.root}: generation {gen} has {len(newest)} main agents"
                f"{' (' + ', '.join(newest) + ')' if newest else ''}; pass one of their ids"
            )
        return newest[0]

    def target(self, name: str, generation: int | None = None) -> ProbeTarget:
        """``main`` (the newest snapshot of each main agent, equally weighted), ``meta`` (the
        generation's meta-strategy), ``best`` / ``newest`` (see ``member_name``) or one member id, at
        ``generation`` (None: the last completed)."""
        record = self.record(generation)
        gen = record.generation
        members = self.members(gen)
        if name in NAMED:
            weights = {self.member_name(name, gen): 1.0}
        elif name == "main":
            weights = newest_main(list(members), list(members.values()))
            if not weights:
                raise LeagueError(
                    f"{self.root} has no main agent in generation {gen} (roles: "
                    f"{', '.join(sorted(set(members.values())))}); use --target meta or a member id"
                )
        elif name == "meta":
            if not record.meta_strategy:
                raise LeagueError(f"{self.run_dir.generations}: generation {gen} has no meta_strategy")
            weights = {k: float(w) for k, w in record.meta_strategy.items() if w > 0}
        elif name in members:
            weights = {name: 1.0}
        else:
            valid = [*TARGETS, *members]
            raise LeagueError(
                f"unknown target {name!r}{did_you_mean(name, valid)}: use main, meta, best, newest or a member id of "
                f"generation {gen} (e.g. {next(iter(members), 'main_agent_0-v1')})"
            )
        return ProbeTarget(name, gen, weights)

    def policy(self, member_id: str) -> Policy:
        """A member's policy: a baseline's fixed policy (the run's env options applied), or the
        frozen snapshot in ``policies/``; both rebuilt by ``registry.build_policy``."""
        from light_league.algorithms.registry import FIXED, build_policy  # torch: imported on first use

        if self.members().get(member_id) == "baseline":
            env = self.config.env
            return build_policy(
                {}, {"kind": FIXED, "name": member_id}, env_name=env.name, env_options=env.options
            )
        from light_league.algorithms.mappo.serialization import load_policy

        return load_policy(self.policy_path(member_id))

    def policy_path(self, member_id: str) -> Path:
        """Where a learned member's policy files are (``policies/<id>``, without ``.pt`` / ``.json``)."""
        path = self.run_dir.policies / member_id
        if not self.run_dir.inside(path):
            raise LeagueError(f"member id {member_id!r} leaves the run directory; pass a member of the run")
        return path

    def policies(self, member_ids: list[str]) -> dict[str, Policy]:
        return {member_id: self.policy(member_id) for member_id in member_ids}
