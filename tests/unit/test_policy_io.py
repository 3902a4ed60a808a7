"""Saving and loading policies: tensors-only .pt + JSON meta, refusal of pickled objects."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from light_league.algorithms.mappo import (
    MAPPOConfig,
    MAPPOLearner,
    load_policy,
    load_policy_files,
    save_policy,
)
from light_league.algorithms.tabular import TabularPolicy
from light_league.envs.base import EnvSpec
from light_league.errors import ConfigError, CorruptFileError

SPEC = EnvSpec(
    name="toy",
    agents=("a0", "a1", "b0", "b1"),
    seats=((0, 1), (2, 3)),
    obs_dim=5,
    state_dim=7,
    num_actions=3,
    symmetric=True,
    turn_based=False,
    score_range=(-1.0, 1.0),
    max_steps=10,
)


class Payload:
    """A custom class: unpickling it must never run under weights_only."""


def probe() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    mask = np.ones((8, 3), dtype=bool)
    mask[::3, 1] = False
    return rng.standard_normal((8, 5)).astype(np.float32), mask, np.tile([0, 1], 4)


@pytest.fixture
def saved(tmp_path: Path) -> tuple[Path, MAPPOLearner]:
    learner = MAPPOLearner(SPEC, MAPPOConfig(hidden_size=16), seed=4)
    learner.policy.value_norm.update(torch.tensor([1.0, 5.0]))  # type: ignore[union-attr]
    path = tmp_path / "pool" / "agent_3"
    save_policy(path, learner.get_weights(), learner.policy_meta())
    return path, learner


def test_round_trip_gives_identical_probabilities(saved: tuple[Path, MAPPOLearner]) -> None:
    path, learner = saved
    assert sorted(p.name for p in path.parent.iterdir()) == [
        "agent_3.json",
        "agent_3.pt",
    ]  # no temp files left
    assert json.loads(path.with_name("agent_3.json").read_text())["kind"] == "mappo"
    obs, mask, idx = probe()
    policy = load_policy(path)
    np.testing.assert_array_equal(policy.log_probs(obs, mask, idx), learner.policy.log_probs(obs, mask, idx))
    state = np.ones((8, 7), dtype=np.float32)
    np.testing.assert_array_equal(policy.values(state, idx), learner.policy.values(state, idx))  # type: ignore[attr-defined]
    weights, meta = load_policy_files(str(path) + ".pt")  # a suffix on the path is accepted
    assert meta == learner.policy_meta() and set(weights) == set(learner.get_weights())


def saved_before_checksums(path: Path) -> None:
    """Drop the checksum from the policy's JSON, as a file saved before checksums existed: its
    tensors are then held by the checks below alone."""
    meta_path = path.with_name(path.name + ".json")
    meta = json.loads(meta_path.read_text())
    meta.pop("weights_sha256", None)  # policy_files.CHECKSUM_KEY
    meta_path.write_text(json.dumps(meta))


def test_a_file_saved_before_checksums_still_loads(saved: tuple[Path, MAPPOLearner]) -> None:
    path, learner = saved
    saved_before_checksums(path)
    obs, mask, idx = probe()
    np.testing.assert_array_equal(
        load_policy(path).log_probs(obs, mask, idx), learner.policy.log_probs(obs, mask, idx)
    )


def test_flipped_bytes_in_the_weights_are_one_line_naming_the_file(saved: tuple[Path, MAPPOLearner]) -> None:
    """16 bytes of one weight changed (still a valid archive, every weight finite): the checksum
    the JSON keeps catches it."""
    path, _ = saved
    pt = path.with_name("agent_3.pt")
    data = bytearray(pt.read_bytes())
    at = bytes(data).find(np.float32(1.0).tobytes() * 4)  # a LayerNorm's weights, all 1.0
    data[at : at + 16] = np.float32(-4.0).tobytes() * 4
    pt.write_bytes(bytes(data))
    changed = torch.load(pt, weights_only=True)  # still a valid archive: it loads, silently changed
    assert any(bool((t == -4.0).any()) for t in changed.values())
    with pytest.raises(CorruptFileError, match="agent_3.pt are damaged") as info:
        load_policy(path)
    assert "\n" not in str(info.value)


def test_non_finite_weights_are_one_line_naming_member_and_file(saved: tuple[Path, MAPPOLearner]) -> None:
    path, learner = saved
    weights = learner.get_weights()
    weights["actor.1.weight"][0, 0] = np.nan
    save_policy(path, weights, {**learner.policy_meta(), "policy_id": "main_agent_0-v3"})
    with pytest.raises(CorruptFileError) as info:
        load_policy(path)
    message = str(info.value)
    assert (
        "agent_3.pt" in message
        and "main_agent_0-v3" in message
        and "NaN" in message
        and "actor.1.weight" in message
    )


def test_a_meta_that_declares_a_larger_network_than_its_weights_is_refused_before_building(
    saved: tuple[Path, MAPPOLearner], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, learner = saved
    meta = learner.policy_meta()
    meta["architecture"] = {**meta["architecture"], "hidden_size": 200_000}
    save_policy(path, learner.get_weights(), meta)
    built: list[object] = []
    monkeypatch.setattr(torch.nn.Linear, "__init__", lambda *a, **k: built.append(a) or None)
    with pytest.raises(CorruptFileError, match="hidden_size=200000") as info:
        load_policy(path)
    assert "\n" not in str(info.value) and "agent_3" in str(info.value)
    assert not built, "a network was built before the meta was compared with the weights"


@pytest.mark.integration
def test_reload_in_a_new_process_is_identical(saved: tuple[Path, MAPPOLearner]) -> None:
    path, learner = saved
    obs, mask, idx = probe()
    np.save(path.parent / "obs.npy", obs)
    np.save(path.parent / "mask.npy", mask)
    script = (
        "import sys, numpy as np\n"
        "from light_league.algorithms.mappo import load_policy\n"
        "d = sys.argv[1]\n"
        "p = load_policy(d + '/agent_3')\n"
        "out = p.log_probs(np.load(d + '/obs.npy'), np.load(d + '/mask.npy'), np.tile([0, 1], 4))\n"
        "np.save(d + '/out.npy', out)\n"
    )
    subprocess.run([sys.executable, "-c", script, str(path.parent)], check=True, timeout=120)
    np.testing.assert_array_equal(np.load(path.parent / "out.npy"), learner.policy.log_probs(obs, mask, idx))


@pytest.mark.parametrize(
    "payload",
    [
        {"actor.0.weight": Payload()},
        {"actor.0.weight": np.zeros(3)},
        np.zeros((2, 2)),
    ],
    ids=["custom-class", "numpy-in-dict", "numpy-array"],
)
def test_pickled_objects_are_refused_with_one_line(saved: tuple[Path, MAPPOLearner], payload: object) -> None:
    path, _ = saved
    saved_before_checksums(path)  # a checksum would refuse the changed file first
    torch.save(payload, path.with_name("agent_3.pt"))
    with pytest.raises(CorruptFileError) as info:
        load_policy(path)
    message = str(info.value)
    assert "\n" not in message and "agent_3.pt" in message and "pickled objects" in message


def test_wrong_content_missing_and_corrupt_files(saved: tuple[Path, MAPPOLearner]) -> None:
    path, _ = saved
    saved_before_checksums(path)
    pt = path.with_name("agent_3.pt")
    torch.save([torch.zeros(2)], pt)
    with pytest.raises(CorruptFileError, match="must hold a dict of name -> tensor"):
        load_policy(path)
    torch.save({"actor.0.weight": torch.zeros(2)}, pt)
    with pytest.raises(CorruptFileError, match="does not match its meta"):
        load_policy(path)
    pt.write_bytes(b"not a zip file")
    with pytest.raises(CorruptFileError, match="are corrupt"):
        load_policy(path)
    pt.unlink()
    with pytest.raises(CorruptFileError, match="do not exist"):
        load_policy(path)
    with pytest.raises(CorruptFileError, match="does not exist"):
        load_policy(path.with_name("nobody"))


def test_unknown_kind_lists_known_kinds(saved: tuple[Path, MAPPOLearner]) -> None:
    path, learner = saved
    save_policy(path, learner.get_weights(), {**learner.policy_meta(), "kind": "mapo"})
    with pytest.raises(CorruptFileError, match=r"unknown kind 'mapo' \(known: mappo"):
        load_policy(path)
    with pytest.raises(ValueError, match="'kind'"):
        save_policy(path, learner.get_weights(), {"version": 1})


def test_a_plugin_policy_kind_loads_through_its_entry_point(monkeypatch: pytest.MonkeyPatch) -> None:
    """A plugin learner's policy kind is rebuilt by the loader an installed package registers
    under ``light_league.policy_loaders`` (in every process that loads policies)."""
    import importlib.metadata

    from light_league.algorithms import registry

    def fake_entry_points(**selection: object) -> list[importlib.metadata.EntryPoint]:
        assert selection == {"group": registry.POLICY_LOADER_GROUP}
        value = "light_league.algorithms.tabular:TabularPolicy.from_weights"
        return [
            importlib.metadata.EntryPoint(name="my_tabular", value=value, group=registry.POLICY_LOADER_GROUP)
        ]

    monkeypatch.setattr(importlib.metadata, "entry_points", fake_entry_points)
    obs = np.eye(3, dtype=np.float32)
    probs = np.full((3, 2), 0.5, dtype=np.float32)
    weights = TabularPolicy(obs, probs).get_weights()
    policy = registry.build_policy(weights, {"kind": "my_tabular"})
    assert isinstance(policy, TabularPolicy)
    with pytest.raises(ConfigError, match=r"unknown policy kind 'my_tabulr'; did you mean my_tabular\?"):
        registry.build_policy(weights, {"kind": "my_tabulr"})
