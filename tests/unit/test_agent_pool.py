"""AgentPool: ids and versions, queries, eviction, crash-safe manifest with a backup."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from light_league.errors import CorruptFileError
from light_league.league import AgentPool, AgentRecord, AgentType, UnknownAgentError


@pytest.fixture
def manifest(tmp_path: Path) -> Path:
    return tmp_path / "league" / "pool.json"


def test_auto_ids_and_versions_count_per_type(manifest: Path) -> None:
    pool = AgentPool(pool_manifest=manifest)
    m0 = pool.add("m0.pt", AgentType.MAIN_AGENT, {"note": "seed"})
    e0 = pool.add("e0.pt", AgentType.MAIN_EXPLOITER)
    m1 = pool.add("m1.pt", AgentType.MAIN_AGENT, parent="learner_main")
    assert (m0.agent_id, m0.version) == ("main_agent_0000", 0)
    assert (e0.agent_id, e0.version) == ("main_exploiter_0000", 0)
    assert (m1.agent_id, m1.version, m1.parent) == ("main_agent_0001", 1, "learner_main")
    assert m0.metadata == {"note": "seed"} and m0.snapshot_path == "m0.pt"
    assert isinstance(m0.created_at, float)


def test_explicit_id_still_advances_the_version(manifest: Path) -> None:
    pool = AgentPool(pool_manifest=manifest)
    custom = pool.add("x.pt", AgentType.BASELINE, agent_id="scripted_l3")
    auto = pool.add("y.pt", AgentType.BASELINE)
    assert (custom.agent_id, custom.version) == ("scripted_l3", 0)
    assert auto.agent_id == "baseline_0001"


def test_duplicate_id_is_a_clear_error(manifest: Path) -> None:
    pool = AgentPool(pool_manifest=manifest)
    pool.add("x.pt", AgentType.MAIN_AGENT, agent_id="alpha")
    with pytest.raises(ValueError, match="'alpha' is already in the pool.*pass a new agent_id"):
        pool.add("y.pt", AgentType.MAIN_AGENT, agent_id="alpha")
    assert len(pool) == 1


def test_queries(manifest: Path) -> None:
    pool = AgentPool(pool_manifest=manifest)
    assert pool.latest(AgentType.MAIN_AGENT) is None
    a = pool.add("a.pt", AgentType.MAIN_AGENT)
    b = pool.add("b.pt", AgentType.LEAGUE_EXPLOITER)
    c = pool.add("c.pt", AgentType.MAIN_AGENT)
    assert pool.list() == [a, b, c]
    assert pool.list(AgentType.MAIN_AGENT) == [a, c]
    assert pool.list(AgentType.BEST_RESPONSE) == []
    assert pool.latest(AgentType.MAIN_AGENT) == c
    assert pool.get(b.agent_id) == b
    assert len(pool) == 3 and a.agent_id in pool and "nobody" not in pool


def test_unknown_id_suggests_the_closest(manifest: Path) -> None:
    pool = AgentPool(pool_manifest=manifest)
    pool.add("a.pt", AgentType.MAIN_AGENT)
    with pytest.raises(UnknownAgentError, match="did you mean main_agent_0000") as info:
        pool.get("main_agent_000")
    assert isinstance(info.value, KeyError)
    assert str(info.value).startswith("agent 'main_agent_000' is not in the pool")


def test_remove_and_ids_are_never_reused(manifest: Path) -> None:
    pool = AgentPool(pool_manifest=manifest)
    a = pool.add("a.pt", AgentType.MAIN_AGENT)
    assert pool.remove(a.agent_id) == a
    assert len(pool) == 0
    with pytest.raises(UnknownAgentError):
        pool.remove(a.agent_id)
    assert pool.add("b.pt", AgentType.MAIN_AGENT).agent_id == "main_agent_0001"
    assert AgentPool(pool_manifest=manifest).add("c.pt", AgentType.MAIN_AGENT).agent_id == "main_agent_0002"


def test_eviction_drops_oldest_unprotected_member(manifest: Path) -> None:
    pool = AgentPool(pool_manifest=manifest, max_size=4)
    base = pool.add("bot.pt", AgentType.BASELINE, agent_id="scripted_l1")
    m0 = pool.add("m0.pt", AgentType.MAIN_AGENT)
    e0 = pool.add("e0.pt", AgentType.MAIN_EXPLOITER)
    m1 = pool.add("m1.pt", AgentType.MAIN_AGENT)
    # full: baseline protected, m0 is the oldest that is not the latest of its type
    m2 = pool.add("m2.pt", AgentType.MAIN_AGENT)
    assert pool.ids() == [base.agent_id, e0.agent_id, m1.agent_id, m2.agent_id]
    # e0 is the latest exploiter, so the next main snapshot evicts m1 (no longer the latest main)
    m3 = pool.add("m3.pt", AgentType.MAIN_AGENT)
    assert pool.ids() == [base.agent_id, e0.agent_id, m2.agent_id, m3.agent_id]
    # a new exploiter makes e0 evictable, and it is now the oldest unprotected member
    e1 = pool.add("e1.pt", AgentType.MAIN_EXPLOITER)
    assert pool.ids() == [base.agent_id, m2.agent_id, m3.agent_id, e1.agent_id]
    assert m0.agent_id not in AgentPool(pool_manifest=manifest)


def test_full_pool_of_protected_members_refuses_to_grow(manifest: Path) -> None:
    pool = AgentPool(pool_manifest=manifest, max_size=2)
    pool.add("bot1.pt", AgentType.BASELINE)
    pool.add("bot2.pt", AgentType.BASELINE)
    with pytest.raises(ValueError, match="max_size=2.*raise max_size"):
        pool.add("bot3.pt", AgentType.BASELINE)
    assert len(AgentPool(pool_manifest=manifest)) == 2


def test_bad_metadata_is_refused(manifest: Path) -> None:
    with pytest.raises(ValueError, match="JSON-serialisable"):
        AgentPool(pool_manifest=manifest).add("a.pt", AgentType.MAIN_AGENT, {"obj": object()})
    assert not manifest.exists()


DUMP_POOL = textwrap.dedent(
    """
    import json, sys
    from light_league.league import AgentPool
    pool = AgentPool(pool_manifest=sys.argv[1])
    print(json.dumps([r.to_dict() for r in pool.list()]))
    """
)


@pytest.mark.integration
def test_reloads_identically_in_a_new_process(manifest: Path) -> None:
    pool = AgentPool(pool_manifest=manifest)
    pool.add("a.pt", AgentType.MAIN_AGENT, {"lr": 3e-4, "tags": ["x", "y"]})
    pool.add("b.pt", AgentType.MAIN_EXPLOITER, parent="main_agent_0000")
    pool.add("c.pt", AgentType.BASELINE, agent_id="random")
    out = subprocess.run(
        [sys.executable, "-c", DUMP_POOL, str(manifest)], capture_output=True, text=True, check=True
    ).stdout
    reloaded = [AgentRecord.from_dict(d) for d in json.loads(out)]
    assert reloaded == pool.list()
    assert AgentPool(pool_manifest=manifest).to_dict() == pool.to_dict()


def test_previous_manifest_is_kept_as_backup(manifest: Path) -> None:
    pool = AgentPool(pool_manifest=manifest)
    pool.add("a.pt", AgentType.MAIN_AGENT)
    assert not pool.backup_path.exists()  # nothing good to keep before the first save
    first = manifest.read_text()
    pool.add("b.pt", AgentType.MAIN_AGENT)
    assert pool.backup_path == manifest.with_name("pool.json.bak")
    assert pool.backup_path.read_text() == first
    # a new process backs up what it loaded before replacing it
    second = manifest.read_text()
    AgentPool(pool_manifest=manifest).add("c.pt", AgentType.MAIN_AGENT)
    assert pool.backup_path.read_text() == second


def test_corrupt_manifest_is_a_one_line_error_pointing_at_backup(manifest: Path) -> None:
    pool = AgentPool(pool_manifest=manifest)
    pool.add("a.pt", AgentType.MAIN_AGENT)
    pool.add("b.pt", AgentType.MAIN_AGENT)
    manifest.write_text('{"format": 1, "agents": [{"agent_id": "main_a')
    with pytest.raises(CorruptFileError) as info:
        AgentPool(pool_manifest=manifest)
    message = str(info.value)
    assert "\n" not in message
    assert str(manifest) in message and f"cp {pool.backup_path} {manifest}" in message
    manifest.write_bytes(pool.backup_path.read_bytes())
    assert [r.agent_id for r in AgentPool(pool_manifest=manifest).list()] == ["main_agent_0000"]


def test_manifest_with_wrong_schema_is_corrupt(manifest: Path) -> None:
    manifest.parent.mkdir(parents=True)
    manifest.write_text(
        json.dumps({"agents": [{"agent_id": "x", "agent_type": "wizard"}], "next_version": {}})
    )
    with pytest.raises(CorruptFileError, match="no backup"):
        AgentPool(pool_manifest=manifest)


KILLED_WRITER = textwrap.dedent(
    """
    import os, sys
    from light_league.league import AgentPool, AgentType
    path, target, nth = sys.argv[1], sys.argv[2], int(sys.argv[3])
    pool = AgentPool(pool_manifest=path)
    real = getattr(os, target)
    calls = [0]
    def dying(*args, **kwargs):
        calls[0] += 1
        if calls[0] == nth:
            os._exit(1)
        return real(*args, **kwargs)
    setattr(os, target, dying)
    pool.add("new.pt", AgentType.MAIN_AGENT)
    """
)


# each save writes the backup, then the manifest: die at either write's fsync or rename
@pytest.mark.integration
@pytest.mark.parametrize(("target", "nth"), [("replace", 1), ("replace", 2), ("fsync", 1), ("fsync", 3)])
def test_process_killed_mid_write_leaves_previous_manifest(manifest: Path, target: str, nth: int) -> None:
    pool = AgentPool(pool_manifest=manifest)
    pool.add("a.pt", AgentType.MAIN_AGENT)
    pool.add("b.pt", AgentType.MAIN_EXPLOITER)
    before = pool.to_dict()
    proc = subprocess.run(
        [sys.executable, "-c", KILLED_WRITER, str(manifest), target, str(nth)], capture_output=True, text=True
    )
    assert proc.returncode == 1, proc.stderr
    survivor = AgentPool(pool_manifest=manifest)
    assert survivor.to_dict() == before
    assert json.loads(survivor.backup_path.read_text())["agents"][0]["agent_id"] == "main_agent_0000"
