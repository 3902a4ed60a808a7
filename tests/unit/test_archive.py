"""The active set and its archive (light_league/agents/archive.py): who stays active, who is
archived, who comes back, and that the AgentManager's views, pool manifest and saved state follow."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from light_league.agents.agent_manager import AgentManager
from light_league.agents.archive import Archive, beats_main, protected, to_archive
from light_league.agents.payoff_table import PayoffTable
from light_league.run_dir import RunDir
from light_league.types import AgentType, MatchResult


def test_protected_keeps_baselines_weighted_recent_and_those_that_beat_the_main_agent() -> None:
    ids = ["random", "m-v1", "m-v2", "x-v1", "x-v2", "x-v3"]
    roles = ["baseline", "main_agent", "main_agent", "main_exploiter", "main_exploiter", "main_exploiter"]
    weights = [0.0, 0.0, 0.0, 0.7, 0.0, 0.3]
    beats = {"m-v1": 0.6, "x-v2": 0.9, "gone": 1.0}
    keep = protected(ids, roles, weights, recent=1, beats_main=beats, beats_max=2, weighted_max=2)
    assert keep == {"random", "x-v1", "x-v3", "m-v1", "x-v2"}  # x-v3 both weighted and the newest
    keep = protected(ids, roles, weights, recent=0, beats_main=beats, beats_max=1, weighted_max=1)
    assert keep == {"random", "x-v1", "x-v2"}  # the most weighted, the one that beats the main agent most


def test_to_archive_takes_the_lowest_rated_and_never_a_protected_member() -> None:
    ids = ["a", "b", "c", "d", "e"]
    rating = {"a": 900.0, "b": 1200.0, "c": 800.0, "d": 1100.0, "e": 700.0}
    assert to_archive(ids, keep={"e"}, rating=rating, size=3) == ["a", "c"]
    assert to_archive(ids, keep={"a", "b", "c", "d"}, rating=rating, size=3) == [
        "e"
    ]  # more protected than room
    assert to_archive(ids, keep=set(), rating=rating, size=5) == []


def test_an_archived_member_that_beats_the_main_agent_comes_back_best_first() -> None:
    archive = Archive(size=2, recent=0, restore_max=1)
    ids, roles = ["a", "b", "c"], ["main_agent"] * 3
    change = archive.update(ids, roles, [0.0, 0.0, 1.0], rating={"a": 1.0, "b": 2.0, "c": 3.0}, beats_main={})
    assert change.archived == ("a",) and change.size == 1 and "a" in archive
    change = archive.update(["b", "c"], roles[:2], [0.0, 1.0], rating={}, beats_main={"a": 0.6})
    assert change.restored == ("a",) and change.archived == () and "a" not in archive


def test_beats_main_reads_the_evaluation_table() -> None:
    table = PayoffTable()
    table.add("a", "m", 80.0, 100.0)
    table.add("b", "m", 20.0, 100.0)
    assert beats_main(table, ["a", "b", "c", "m"], {"m": 1.0}) == {"a": 0.8}


def test_beating_the_main_agent_by_luck_is_not_beating_it() -> None:
    """A new pairing's 32 games: 17 won (0.53) is a coin flip; 24 (0.75) is a beat (the 95%
    Jeffreys interval's lower end 0.58); 22 (0.69) lies just above it (0.516), 21 (0.66) does not."""
    table = PayoffTable()
    for member, won in (("luck", 17.0), ("beat", 24.0), ("edge", 22.0), ("short", 21.0)):
        table.add(member, "m", won, 32.0)
    table.add("other", "m2", 30.0, 32.0)  # the best against either newest main agent
    table.add("other", "m", 12.0, 32.0)
    ids = ["luck", "beat", "edge", "short", "other", "m", "m2"]
    assert beats_main(table, ids, {"m": 1.0, "m2": 1.0}) == {"beat": 0.75, "edge": 22 / 32, "other": 30 / 32}


def test_the_archive_sample_is_the_same_all_generation_and_bounded() -> None:
    archive = Archive(size=1, sample=3, seed=5)
    archive.members = dict.fromkeys(f"x{i}" for i in range(10))
    first = archive.sample(4)
    assert first == archive.sample(4) and len(first) == 3 and set(first) <= set(archive.members)
    table = PayoffTable()
    table.add("new", first[0], 1.0, 2.0)
    assert archive.pairs(table, ["new"], 4) == [("new", x) for x in first[1:]]


def test_forget_drops_the_cells_among_the_archived_only() -> None:
    table = PayoffTable()
    for a, b in (("x", "y"), ("x", "k"), ("y", "k")):
        table.add(a, b, 1.0, 2.0)
    table.add_exact("x", "y", 0.5, 2.0)
    table.forget(["x"], ["x", "y"])
    assert table.games("x", "y") == 0 and table.games("x", "k") == 2 and table.games("y", "k") == 2
    assert ("x", "y") not in table.exact


def _manager(tmp_path: Path, size: int) -> AgentManager:
    agents = AgentManager(
        RunDir(tmp_path),
        pool_max_size=1000,
        payoff_decay=0.99,
        elo_k=16.0,
        baselines=["random"],
        num_actions=3,
        stability_draws=0,
        archive=Archive(size=size, recent=2, sample=2, restore_max=2),
    )
    agents.add_baseline("random")
    agents.register_learner("m", AgentType.MAIN_AGENT)
    return agents


def _evaluate(agents: AgentManager, strength: dict[str, float]) -> None:
    """Every missing pair played 20 games, the stronger winning as often as the logistic says."""
    results = []
    for a, b in agents.missing_pairs():
        p = 1.0 / (1.0 + np.exp(strength.get(b, 0.0) - strength.get(a, 0.0)))
        wins = round(20 * p)
        results += [MatchResult(a, b, 0, 1.0 if k < wins else 0.0, 0.0) for k in range(20)]
    agents.record_evaluation(results, {})


def test_agent_manager_archives_flags_the_manifest_and_keeps_the_archive_on_resume(tmp_path: Path) -> None:
    agents = _manager(tmp_path, size=4)
    strength = {"random": -3.0}
    for k in range(6):
        member = agents.add_snapshot("m", str(tmp_path / f"m-v{k}"))
        strength[member.agent_id] = float(k)  # each snapshot stronger: the old ones are dominated
        _evaluate(agents, strength)
        change = agents.update_archive(agents.solve())
        agents.advance()
        if k == 0:
            early = json.loads(json.dumps(agents.state_dict()))
    archived = list(agents.archive.members)
    assert archived and change.size == len(archived)
    assert "random" not in archived and not set(archived) & set(agents.member_ids())
    assert len(agents.member_ids()) <= 4 and len(agents.pool) == 7  # nobody lost: all in the pool
    manifest = json.loads((tmp_path / "pool.json").read_text())
    flagged = [a["agent_id"] for a in manifest["agents"] if a["metadata"].get("archived")]
    assert sorted(flagged) == sorted(archived)
    # a new member plays the active set and the archive's sample
    agents.add_snapshot("m", str(tmp_path / "m-v6"))
    missing = agents.missing_pairs()
    assert {b for a, b in missing if a == "m-v6"} & set(archived)
    state = json.loads(json.dumps(agents.state_dict()))
    AgentManager.check_state(state, {AgentType.MAIN_AGENT})
    resumed = _manager(tmp_path / "again", size=4)
    resumed.load_state_dict(state)
    assert list(resumed.archive.members) == archived
    # a kill after the manifest was marked, before the checkpoint: resume puts the flags back
    agents.load_state_dict(early)
    manifest = json.loads((tmp_path / "pool.json").read_text())
    assert not agents.archive.members and not [a for a in manifest["agents"] if a["metadata"].get("archived")]


def test_without_an_active_set_every_member_stays(tmp_path: Path) -> None:
    agents = _manager(tmp_path, size=0)
    strength = {"random": -3.0}
    for k in range(6):
        strength[agents.add_snapshot("m", str(tmp_path / f"m-v{k}")).agent_id] = float(k)
        _evaluate(agents, strength)
        stats = agents.solve()
        assert agents.update_archive(stats).size == 0
    assert stats.ids == agents.pool.ids() and not agents.archive.members


def test_an_archived_member_registered_on_resume_is_read_when_first_pulled(tmp_path: Path) -> None:
    from light_league.data_buffer.policy_server import PolicyServer

    first = PolicyServer(storage_dir=str(tmp_path))
    first.publish("m", "mappo", {"obs_dim": 3}, {"w": np.arange(3.0)})
    first.freeze("m", "m-v1")
    resumed = PolicyServer(storage_dir=str(tmp_path))
    resumed.register_frozen("m-v1", tmp_path / "m-v1")
    assert resumed.get("m-v1").kind == "mappo"
    np.testing.assert_array_equal(resumed.pull({"m-v1": 0})["m-v1"].weights["w"], np.arange(3.0))


def test_retired_resumed_and_brought_back_with_its_games_and_weights(tmp_path: Path) -> None:
    """A member is archived, the league resumes (a new AgentManager from the saved state and the
    run directory), a new main agent collapses against it, and it comes back: active again, its
    manifest flag gone, its weights file byte for byte and loadable, its games in the match log,
    its sequential Elo kept, and its cells against the active set evaluated again."""
    from light_league.data_buffer.policy_files import load_policy_files, save_policy

    def manager() -> AgentManager:
        agents = AgentManager(
            RunDir(tmp_path),
            pool_max_size=1000,
            payoff_decay=0.99,
            elo_k=16.0,
            baselines=["random"],
            num_actions=3,
            stability_draws=0,
            archive=Archive(size=8, recent=1, sample=100, restore_max=1),
        )
        agents.register_learner("m", AgentType.MAIN_AGENT)
        return agents

    strength = {"random": -3.0}
    rigged = {("m-v1", "m-v12"): 0.95}  # m-v12 collapses against m-v1 (and only against it)

    def evaluate(agents: AgentManager) -> None:
        results = []
        for a, b in agents.missing_pairs():
            logistic = 1.0 / (1.0 + np.exp(strength[b] - strength[a]))
            p = rigged.get((a, b), 1.0 - rigged.get((b, a), 1.0 - logistic))
            wins = round(20 * p)
            results += [MatchResult(a, b, 0, 1.0 if k < wins else 0.0, 0.0) for k in range(20)]
        agents.record_evaluation(results, {})

    def generation(agents: AgentManager, k: int, member_strength: float) -> None:
        member = agents.add_snapshot("m", str(tmp_path / "policies" / f"m-v{k}"))
        save_policy(tmp_path / "policies" / member.agent_id, {"w": np.full(3, float(k))}, {"kind": "mappo"})
        strength[member.agent_id] = member_strength
        evaluate(agents)
        agents.update_archive(agents.solve())
        agents.advance()
        agents.save()

    agents = manager()
    agents.add_baseline("random")
    for k in range(12):  # each snapshot stronger: the old ones are dominated and archived
        generation(agents, k, float(k))
    assert "m-v1" in agents.archive and "m-v1" not in agents.member_ids()
    weights_sha = hashlib.sha256((tmp_path / "policies" / "m-v1.pt").read_bytes()).hexdigest()
    games = [line for line in (tmp_path / "matches.jsonl").read_text().splitlines() if '"m-v1"' in line]
    assert games
    elo = agents.results.elo.get_rating("m-v1")
    state = json.loads(json.dumps(agents.state_dict()))

    resumed = manager()  # the pool from pool.json, the rest from the saved state
    resumed.load_state_dict(state)
    assert "m-v1" in resumed.archive and "m-v1" in resumed.pool
    assert resumed.results.elo.get_rating("m-v1") == elo
    generation(resumed, 12, 10.6)  # the active m-v11 beats m-v12 by 0.6, the archived m-v1 by 0.95
    assert resumed.archive.last.restored == ("m-v1",)
    assert "m-v1" in resumed.member_ids() and "m-v1" not in resumed.archive
    manifest = json.loads((tmp_path / "pool.json").read_text())["agents"]
    assert not next(a for a in manifest if a["agent_id"] == "m-v1")["metadata"].get("archived")
    assert hashlib.sha256((tmp_path / "policies" / "m-v1.pt").read_bytes()).hexdigest() == weights_sha
    weights, _ = load_policy_files(tmp_path / "policies" / "m-v1")
    np.testing.assert_array_equal(weights["w"], np.full(3, 1.0))
    log = [line for line in (tmp_path / "matches.jsonl").read_text().splitlines() if '"m-v1"' in line]
    assert log[: len(games)] == games and len(log) > len(games)  # kept, and its games against m-v12
    # back in the active set: its cells against the active set (all but m-v12's) are played again
    again = {b if a == "m-v1" else a for a, b in resumed.missing_pairs() if "m-v1" in (a, b)}
    assert again == set(resumed.member_ids()) - {"m-v1", "m-v12"}
    # and a resume keeps it active
    again_resumed = manager()
    again_resumed.load_state_dict(json.loads(json.dumps(resumed.state_dict())))
    assert "m-v1" in again_resumed.member_ids()
