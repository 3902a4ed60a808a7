"""Same seed, same ``generations.jsonl``: the fast shipped configs against recorded runs.

The files under ``tests/integration/golden/`` were written by ``main.py`` with the config named
in each test (seed 0). A change meant to preserve behaviour (a refactor) must reproduce them,
wall-time fields aside (``tools/compare_generations.py`` says which fields those are). A change
that means to alter what a run does (a new default, a learner fix) re-records them:

    python tests/integration/test_golden_generations.py rps_tiny psro_kuhn

Runs are compared across machines, and CPUs pick different vector kernels for the same sum
(AVX-512 or AVX2 in numpy and OpenBLAS, oneDNN and MKL in torch): the last digits of a payoff
differ, and a Nash LP on a degenerate game (Kuhn's has many equilibria) can then pick another
vertex, and the run goes another way. So each run, recorded or checked, is a subprocess whose
numeric libraries are held to their AVX2 kernels (``PINNED_KERNELS``; a CPU without AVX2 is
skipped), and floats are compared to a relative 1e-9.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "golden"
sys.path.insert(0, str(ROOT / "tools"))

from compare_generations import differences, load  # noqa: E402

#: environment that holds numpy, OpenBLAS, torch, MKL and oneDNN to the same (AVX2) kernels on
#: every x86 CPU that has AVX2, whatever more it has
PINNED_KERNELS = {
    "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
    "OPENBLAS_CORETYPE": "Haswell",
    "ATEN_CPU_CAPABILITY": "avx2",
    "MKL_CBWR": "AVX2",
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "OMP_NUM_THREADS": "1",
}
RTOL = 1e-9


def has_avx2() -> bool:
    try:
        return "avx2" in Path("/proc/cpuinfo").read_text()
    except OSError:
        return False


def run(config: str, run_dir: Path) -> Path:
    """``main.py --config expr_configs/CONFIG.yaml`` in a subprocess with the pinned kernels."""
    env = {**os.environ, **PINNED_KERNELS, "WANDB_MODE": "disabled"}
    command = [
        sys.executable,
        "main.py",
        "--config",
        f"expr_configs/{config}.yaml",
        "--run-dir",
        str(run_dir),
    ]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{config}: main.py exited {done.returncode}: {done.stderr[-2000:]}"
    return run_dir / "generations.jsonl"


@pytest.mark.skipif(not has_avx2(), reason="the recorded runs use AVX2 kernels; this CPU has none")
@pytest.mark.parametrize(
    "config",
    ["rps_tiny", pytest.param("psro_kuhn", marks=pytest.mark.openspiel)],
)
def test_same_seed_same_generations(tmp_path: Path, config: str) -> None:
    got = run(config, tmp_path / config)
    diffs = differences(load(GOLDEN / f"{config}.generations.jsonl"), load(got), RTOL)
    assert diffs == [], (
        f"{config}: the run's generations.jsonl differs from the recorded one ({len(diffs)} differences, "
        f"first: {diffs[:5]}); if the change is meant to alter runs, re-record it (see this file's docstring)"
    )


if __name__ == "__main__":  # re-record: python tests/integration/test_golden_generations.py CONFIG ...
    for name in sys.argv[1:]:
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copy(run(name, Path(tmp) / name), GOLDEN / f"{name}.generations.jsonl")
            print(f"recorded {GOLDEN / f'{name}.generations.jsonl'}")
