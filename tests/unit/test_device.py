"""learner.device: validated, resolved, passed to every learner; nothing saved or sent holds a
device tensor; a checkpoint written on a GPU loads on the CPU.

This machine has no GPU: the CUDA paths are tested up to what runs without one (the choice of
device, the errors, a checkpoint whose tensors say ``cuda:0``); the update on a GPU itself is not.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from light_league import envs
from light_league.algorithms.mappo import MAPPOConfig, MAPPOLearner
from light_league.algorithms.registry import make_learner
from light_league.build import learner_gpus, learner_placement
from light_league.config import load_config
from light_league.errors import ConfigError
from light_league.execution.local_executor import LocalExecutor
from light_league.learner_kinds import learner_kind
from light_league.rollout.episode import EpisodeLoop
from light_league.training.learner_runner import LearnerRunner
from light_league.utils.device import check_device_here, resolve_device, tensor_devices, to_cpu

ROOT = Path(__file__).resolve().parents[2]
NO_CUDA = not torch.cuda.is_available()
HERE = LocalExecutor().gpus()  # this machine's CUDA devices


def kuhn_batch(learner: MAPPOLearner) -> object:
    env = envs.make_batched("kuhn_poker", num_envs=16)
    loop = EpisodeLoop(env, seed=0)
    opponent = {"random": envs.make_fixed_policy("kuhn_poker", "random")}
    return loop.collect(learner.policy, opponent, {"random": 1.0}, 64).batch


@pytest.mark.parametrize("value", ["gpu", "cuda:x", "CUDA", "cuda:-1", "tpu:0", "cuda:0:1"])
def test_a_bad_device_is_one_line_naming_the_value_and_the_fix(value: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(str(ROOT / "expr_configs" / "rps_tiny.yaml"), [f"learner.device={value}"])
    message = str(err.value)
    assert "\n" not in message and "learner.device" in message and repr(value) in message
    assert "auto, cpu, cuda or cuda:N" in message


@pytest.mark.parametrize("value", ["auto", "cpu", "cuda", "cuda:0", "cuda:7"])
def test_valid_devices_are_accepted(value: str) -> None:
    config = load_config(str(ROOT / "expr_configs" / "rps_tiny.yaml"), [f"learner.device={value}"])
    assert config.learner.device == value and config.learner.num_gpus is None


def test_num_gpus_must_be_positive() -> None:
    with pytest.raises(ConfigError, match="learner.num_gpus"):
        load_config(str(ROOT / "expr_configs" / "rps_tiny.yaml"), ["learner.num_gpus=0"])
    config = load_config(str(ROOT / "expr_configs" / "rps_tiny.yaml"), ["learner.num_gpus=0.25"])
    assert learner_gpus(config.learner.num_gpus, 3) == 0.25
    assert learner_gpus(None, 4) == 0.25  # one GPU shared by the learners


def test_auto_is_cuda_only_where_there_is_a_gpu_and_a_torch_learner() -> None:
    assert resolve_device("auto", supports_device=True, gpus=0, where="x") == "cpu"
    assert resolve_device("auto", supports_device=True, gpus=1, where="x") == "cuda"
    assert resolve_device("auto", supports_device=False, gpus=1, where="x") == "cpu"
    assert resolve_device("cuda:1", supports_device=True, gpus=2, where="x") == "cuda:1"
    with pytest.raises(ConfigError, match=r"^learner.device=cuda but this machine has no CUDA GPU"):
        resolve_device("cuda", supports_device=True, gpus=0, where="this machine")
    with pytest.raises(ConfigError, match="trains on the CPU only; set learner.device=cpu"):
        resolve_device("cuda", supports_device=False, gpus=1, where="x")


def test_learner_placement_of_real_configs_on_this_machine() -> None:
    kuhn = load_config(str(ROOT / "expr_configs" / "psro_kuhn.yaml"), ["learner.device=auto"])
    assert learner_placement(kuhn, HERE, num_learners=1) == ("cpu", 0.0)  # exact_br: always the CPU
    rps = load_config(str(ROOT / "expr_configs" / "rps_tiny.yaml"), ["learner.device=cpu"])
    assert learner_placement(rps, HERE, num_learners=2) == ("cpu", 0.0)
    if NO_CUDA:
        auto = load_config(str(ROOT / "expr_configs" / "rps_tiny.yaml"), [])
        assert learner_placement(auto, HERE, num_learners=2) == ("cpu", 0.0)
        cuda = load_config(str(ROOT / "expr_configs" / "rps_tiny.yaml"), ["learner.device=cuda"])
        with pytest.raises(ConfigError, match="no CUDA GPU"):
            learner_placement(cuda, HERE, num_learners=2)
        exact = load_config(str(ROOT / "expr_configs" / "psro_kuhn.yaml"), ["learner.device=cuda"])
        with pytest.raises(ConfigError, match="CPU only"):
            learner_placement(exact, HERE, num_learners=1)


@pytest.mark.skipif(not NO_CUDA, reason="checks the error on a machine without CUDA")
def test_a_cuda_learner_on_a_machine_without_cuda_is_one_line() -> None:
    check_device_here("cpu")
    with pytest.raises(ConfigError) as err:
        check_device_here("cuda:0")
    assert "\n" not in str(err.value) and "learner.device=cuda:0" in str(err.value)
    with pytest.raises(ConfigError):
        make_learner(
            MAPPOLearner, envs.make_batched("kuhn_poker", 1).spec, MAPPOConfig(), seed=0, device="cuda"
        )


def test_mappo_learner_updates_on_the_explicit_cpu_device_and_returns_cpu_state() -> None:
    spec = envs.make_batched("kuhn_poker", 1).spec
    learner = make_learner(MAPPOLearner, spec, MAPPOConfig(ppo_epoch=2), seed=0, device="cpu")
    assert isinstance(learner, MAPPOLearner) and learner.device == torch.device("cpu")
    assert {p.device.type for p in learner.policy.parameters()} == {"cpu"}
    assert learner.policy.device == torch.device("cpu")
    metrics = learner.update(kuhn_batch(learner))  # type: ignore[arg-type]
    assert np.isfinite(metrics["policy_loss"])
    state = learner.state_dict()
    assert tensor_devices(state) == {"cpu"}
    assert all(isinstance(w, np.ndarray) for w in learner.get_weights().values())


def test_same_seed_same_update_with_device_given_or_not() -> None:
    spec = envs.make_batched("kuhn_poker", 1).spec
    a = MAPPOLearner(spec, MAPPOConfig(ppo_epoch=2, num_mini_batch=2), seed=3)
    b = MAPPOLearner(spec, MAPPOConfig(ppo_epoch=2, num_mini_batch=2), seed=3, device="cpu")
    batch = kuhn_batch(a)
    a.update(batch)  # type: ignore[arg-type]
    b.update(batch)  # type: ignore[arg-type]
    for k, w in a.get_weights().items():
        np.testing.assert_array_equal(w, b.get_weights()[k])


class _Servers:
    """The two servers a LearnerRunner talks to, in memory (what the local executor gives it)."""

    def __init__(self) -> None:
        self.published: list[dict[str, np.ndarray]] = []

    def publish(self, learner_id: str, kind: str, meta: dict, weights: dict[str, np.ndarray]) -> int:
        self.published.append(weights)
        return len(self.published)


def test_learner_runner_takes_the_device_and_its_state_and_weights_are_cpu_only() -> None:
    servers = _Servers()
    runner = LearnerRunner(
        "main_agent_0",
        "kuhn_poker",
        envs.make_batched("kuhn_poker", 1).spec,
        MAPPOLearner,
        MAPPOConfig(),
        seed=0,
        policy_server=servers,
        episode_server=servers,
        device="cpu",
    )
    assert runner.device == "cpu" and runner.learner.device == torch.device("cpu")  # type: ignore[attr-defined]
    assert all(isinstance(w, np.ndarray) for w in servers.published[-1].values())
    state = runner.state_dict()
    assert tensor_devices(state) == {"cpu"}


@pytest.mark.skipif(not NO_CUDA, reason="checks the error on a machine without CUDA")
def test_a_learner_runner_on_a_missing_gpu_is_a_one_line_config_error() -> None:
    servers = _Servers()
    with pytest.raises(ConfigError, match="learner.device=cuda but this learner's machine has no CUDA"):
        LearnerRunner(
            "x",
            "kuhn_poker",
            envs.make_batched("kuhn_poker", 1).spec,
            MAPPOLearner,
            MAPPOConfig(),
            seed=0,
            policy_server=servers,
            episode_server=servers,
            device="cuda",
        )


def test_to_cpu_keeps_structure_and_values() -> None:
    state = {
        "w": torch.ones(2),
        "opt": {"state": {0: {"m": torch.zeros(3)}}, "groups": [{"lr": 0.1}]},
        "n": 3,
    }
    out = to_cpu(state)
    assert out["n"] == 3 and out["opt"]["groups"] == [{"lr": 0.1}]
    assert torch.equal(out["opt"]["state"][0]["m"], torch.zeros(3))
    assert tensor_devices(out) == {"cpu"}
    assert tensor_devices({"meta": torch.empty(2, device="meta")}) == {"meta"}  # what it detects


class _OldPlugin(MAPPOLearner):
    """A plugin written before learner.device: its constructor takes no ``device``."""

    def __init__(self, spec: object, config: MAPPOConfig, *, seed: int) -> None:
        super().__init__(spec, config, seed=seed)  # type: ignore[arg-type]


def test_a_learner_whose_constructor_takes_no_device_runs_on_the_cpu() -> None:
    from light_league.algorithms import registry

    assert registry.takes_device(MAPPOLearner) and not registry.takes_device(_OldPlugin)
    kind = learner_kind(load_config(None, [f"learner.kind={__name__}:_OldPlugin"]).learner)
    assert kind.learner is _OldPlugin and not kind.uses_device
    spec = envs.make_batched("kuhn_poker", 1).spec
    learner = make_learner(_OldPlugin, spec, MAPPOConfig(), seed=0, device="cpu")
    assert isinstance(learner, _OldPlugin) and learner.device == torch.device("cpu")
    with pytest.raises(ConfigError, match="trains on the CPU only"):
        make_learner(_OldPlugin, spec, MAPPOConfig(), seed=0, device="cuda")
