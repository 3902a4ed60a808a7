"""PolicyServer: versions, frozen copies, spilling to disk and reloading."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from light_league.data_buffer.policy_server import PolicyServer
from light_league.errors import ConfigError

META = {"kind": "mappo", "note": "test"}


def weights(value: float) -> dict[str, np.ndarray]:
    return {"w": np.full((3, 2), value, dtype=np.float32), "b": np.full(2, value, dtype=np.float32)}


def test_versions_increase_and_pull_returns_only_newer() -> None:
    server = PolicyServer()
    assert server.publish("learner", "mappo", META, weights(1.0)) == 1
    assert server.publish("learner", "mappo", META, weights(2.0)) == 2
    assert server.pull({"learner": 2}) == {}
    got = server.pull({"learner": 1})["learner"]
    assert got.version == 2 and float(got.weights["w"][0, 0]) == 2.0


def test_freeze_is_a_copy_not_a_reference_to_live_weights(tmp_path: Path) -> None:
    server = PolicyServer(storage_dir=str(tmp_path))
    live = weights(1.0)
    server.publish("learner", "mappo", META, live)
    server.freeze("learner", "learner-v0")
    live["w"][:] = 9.0
    server.publish("learner", "mappo", META, weights(5.0))
    frozen = server.pull({"learner-v0": 0})["learner-v0"]
    assert float(frozen.weights["w"][0, 0]) == 1.0
    assert (tmp_path / "learner-v0.pt").exists() and (tmp_path / "learner-v0.json").exists()
    with pytest.raises(ValueError, match="frozen"):
        server.publish("learner-v0", "mappo", META, weights(3.0))


def test_freeze_with_weights_freezes_those_and_says_so(tmp_path: Path) -> None:
    """A learner's snapshot average is frozen in place of its published weights, with its kind
    and meta and ``averaged`` in the meta; weights with other entries are refused."""
    server = PolicyServer(storage_dir=str(tmp_path))
    server.publish("learner", "mappo", META, weights(1.0))
    frozen = server.freeze("learner", "learner-v0", weights(0.5))
    assert float(frozen.weights["w"][0, 0]) == 0.5 and frozen.kind == "mappo"
    assert frozen.meta["averaged"] is True and frozen.meta["frozen_from"] == "learner"
    assert float(server.get("learner").weights["w"][0, 0]) == 1.0  # the learner's own are untouched
    with pytest.raises(ValueError, match="do not match its published ones"):
        server.freeze("learner", "learner-v1", {"w": weights(0.5)["w"]})


def test_freeze_as_another_policy_takes_its_kind_and_the_newest_snapshot_is_found(tmp_path: Path) -> None:
    """A learner whose snapshots are another policy than the one it plays (the regret learner's
    average strategy) freezes with that policy's meta and kind; ``newest_frozen`` names the last
    snapshot of a learner, spilled to disk or not."""
    server = PolicyServer(storage_dir=str(tmp_path), max_in_memory=1)
    server.publish("learner", "regret", {"kind": "regret"}, weights(1.0))
    assert server.newest_frozen("learner") is None
    for i in range(3):
        server.publish("learner", "regret", {"kind": "regret"}, weights(1.0 + i))
        frozen = server.freeze(
            "learner", f"learner-v{i}", {"x": np.full(2, float(i))}, {"kind": "mappo", "a": 1}
        )
        assert frozen.kind == "mappo" and frozen.meta["a"] == 1 and "kind" not in frozen.meta
    newest = server.newest_frozen("learner")
    assert newest is not None and newest.policy_id == "learner-v2"
    np.testing.assert_array_equal(newest.weights["x"], [2.0, 2.0])
    assert server.get("learner").kind == "regret"  # the learner plays on


def test_pulling_more_frozen_policies_than_fit_in_memory_returns_all_weights(tmp_path: Path) -> None:
    server = PolicyServer(storage_dir=str(tmp_path), max_in_memory=2)
    for i in range(6):
        server.publish("learner", "mappo", META, weights(float(i)))
        server.freeze("learner", f"m{i}")
    got = server.pull({f"m{i}": 0 for i in range(6)})
    assert [float(got[f"m{i}"].weights["w"][0, 0]) for i in range(6)] == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    resident = sum(bool(server._entries[f"m{i}"].weights) for i in range(6))
    assert resident <= 2  # the others were spilled and are reloaded from disk on demand
    again = server.pull({"m0": 0})["m0"]
    assert float(again.weights["b"][1]) == 0.0


def test_unknown_policy_names_the_id_with_a_suggestion() -> None:
    server = PolicyServer()
    server.publish("main_agent_0", "mappo", META, weights(0.0))
    with pytest.raises(ConfigError, match="did you mean main_agent_0"):
        server.pull({"main_agent_O": 0})
