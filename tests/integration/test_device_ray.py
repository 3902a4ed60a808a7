"""On Ray, a learner on a GPU asks for its GPU share; rollout workers get none.

Ray is started (in a child process, so as not to disturb the session's Ray) with one *declared*
GPU: Ray schedules by declared resources, so the request and the assignment are real even though
this machine has no GPU device; the learner itself is not built (it would need CUDA).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.ray

SCRIPT = r"""
import json, os, sys
import ray
ray.init(num_cpus=2, num_gpus=1, include_dashboard=False, log_to_driver=False,
         configure_logging=False, object_store_memory=100 * 1024 * 1024)
from light_league.config import load_config
from light_league.errors import ConfigError
from light_league.execution.ray_executor import RayExecutor
from light_league.build import learner_placement

class Probe:
    def seen(self):
        return {"gpu_ids": [str(i) for i in ray.get_gpu_ids()],
                "visible": os.environ.get("CUDA_VISIBLE_DEVICES")}

out = {}
executor = RayExecutor()
rps = "expr_configs/rps_tiny.yaml"
auto = load_config(rps, ["execution.backend=ray"])
out["auto"] = learner_placement(auto, executor.gpus(), num_learners=2)
quarter = load_config(rps, ["execution.backend=ray", "learner.device=cuda", "learner.num_gpus=0.25"])
out["quarter"] = learner_placement(quarter, executor.gpus(), num_learners=2)
try:
    learner_placement(load_config(rps, ["execution.backend=ray", "learner.device=cuda:0"]), 1.0, num_learners=1)
except ConfigError as exc:
    out["cuda0_error"] = str(exc)
learner = executor.create(Probe, name="learner_probe", gpus=out["quarter"][1])
worker = executor.create(Probe, name="worker_probe", restartable=True, cpus=0.1)
out["learner"] = executor.call(learner, "seen")
out["worker"] = executor.call(worker, "seen")
out["gpus_left"] = ray.available_resources().get("GPU", 0.0)
print("RESULT " + json.dumps(out))
"""


def test_a_gpu_learner_asks_ray_for_its_share_and_workers_get_no_gpu() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "PYTHONPATH": str(ROOT), "RAY_USAGE_STATS_ENABLED": "0"},
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stderr[-2000:]
    out = json.loads(lines[-1].removeprefix("RESULT "))
    assert out["auto"] == ["cuda", 0.5]  # auto: the cluster has a GPU; one GPU for two learners
    assert out["quarter"] == ["cuda", 0.25]
    assert "on Ray a learner sees only the GPU Ray gives it" in out["cuda0_error"]
    assert out["learner"]["gpu_ids"] == ["0"] and out["learner"]["visible"] == "0"
    assert out["worker"]["gpu_ids"] == [] and not out["worker"]["visible"]
    assert out["gpus_left"] == pytest.approx(0.75)
