"""A run whose learner checkpoints were written on a GPU resumes on this CPU-only machine.

The checkpoint files are those of a real run, retagged so that every tensor says ``cuda:0`` (what
``torch.save`` writes for the same state on a GPU); ``torch.load`` without ``map_location`` refuses
them here, the resume (``map_location="cpu"``, then the learner's device) must not.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

from light_league import envs
from light_league.algorithms.mappo import MAPPOConfig, MAPPOLearner
from light_league.cli import main
from light_league.rollout.episode import EpisodeLoop
from light_league.utils.device import tensor_devices

ROOT = Path(__file__).resolve().parents[2]
RPS = str(ROOT / "expr_configs" / "rps_tiny.yaml")
NO_CUDA = not torch.cuda.is_available()
ARGS = ["stop.max_generations=1", "scheduler.steps_per_generation=512", "evaluation.episodes_per_pair=32"]


def cuda_tagged(saved: bytes) -> bytes:
    """``saved`` (a ``torch.save`` archive) with every storage tagged ``cuda:0``: what the same
    state saved from a GPU looks like (torch pickles each storage's device name once)."""
    src = zipfile.ZipFile(io.BytesIO(saved))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename.endswith("/data.pkl"):
                assert data.count(b"X\x03\x00\x00\x00cpu") == 1
                data = data.replace(b"X\x03\x00\x00\x00cpu", b"X\x06\x00\x00\x00cuda:0")
            dst.writestr(info, data)
    return out.getvalue()


def kuhn_batch(learner: MAPPOLearner) -> object:
    env = envs.make_batched("kuhn_poker", num_envs=16)
    loop = EpisodeLoop(env, seed=0)
    opponent = {"random": envs.make_fixed_policy("kuhn_poker", "random")}
    return loop.collect(learner.policy, opponent, {"random": 1.0}, 64).batch


def test_a_gpu_written_learner_state_loads_on_the_cpu_and_resumes_training() -> None:
    spec = envs.make_batched("kuhn_poker", 1).spec
    trained = MAPPOLearner(spec, MAPPOConfig(ppo_epoch=2), seed=0, device="cpu")
    trained.update(kuhn_batch(trained))  # type: ignore[arg-type]
    buf = io.BytesIO()
    torch.save(trained.state_dict(), buf)
    from_gpu = cuda_tagged(buf.getvalue())
    if NO_CUDA:  # the file really says cuda: torch refuses it without map_location
        with pytest.raises(RuntimeError, match="CUDA"):
            torch.load(io.BytesIO(from_gpu), weights_only=True)
    state = torch.load(io.BytesIO(from_gpu), map_location="cpu", weights_only=True)  # what resume does
    fresh = MAPPOLearner(spec, MAPPOConfig(ppo_epoch=2), seed=1, device="cpu")
    fresh.load_state_dict(state)
    for k, w in trained.get_weights().items():
        np.testing.assert_array_equal(w, fresh.get_weights()[k])
    batch = kuhn_batch(trained)
    a, b = trained.update(batch), fresh.update(batch)  # type: ignore[arg-type]
    assert a["policy_loss"] == b["policy_loss"]  # optimiser state and rng came across too


def test_a_gpu_written_checkpoint_resumes_on_the_cpu(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    assert main(["--config", RPS, "--run-dir", str(run_dir), "--quiet", "learner.device=cpu", *ARGS]) == 0
    latest = json.loads((run_dir / "checkpoint" / "latest.json").read_text())
    files = sorted((run_dir / "checkpoint" / latest["dir"] / "learners").glob("*.pt"))
    assert files
    for path in files:  # what this run saved is CPU-only
        assert tensor_devices(torch.load(path, weights_only=True)) == {"cpu"}
        path.write_bytes(cuda_tagged(path.read_bytes()))
        if not torch.cuda.is_available():
            with pytest.raises(RuntimeError, match="CUDA"):
                torch.load(path, weights_only=True)
    # as a GPU run writes them: the checkpoint's checksums are those of these bytes
    state_path = run_dir / "checkpoint" / latest["dir"] / "state.json"
    state = json.loads(state_path.read_text())
    state["learners_sha256"] = {path.stem: hashlib.sha256(path.read_bytes()).hexdigest() for path in files}
    state_path.write_text(json.dumps(state) + "\n")
    latest["state_sha256"] = hashlib.sha256(state_path.read_bytes()).hexdigest()
    (run_dir / "checkpoint" / "latest.json").write_text(json.dumps(latest))
    for policy in (run_dir / "policies").glob("*.pt"):
        assert tensor_devices(torch.load(policy, weights_only=True)) == {"cpu"}
    assert main(["--resume", str(run_dir), "--quiet", "stop.max_generations=2", "learner.device=cpu"]) == 0
    generations = [
        json.loads(line)["generation"] for line in (run_dir / "generations.jsonl").read_text().splitlines()
    ]
    assert generations == [0, 1]
