"""bench/bench_output.py: the command a bench file records can be pasted into a shell as is."""

from __future__ import annotations

import importlib.util
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location("bench_output", ROOT / "bench" / "bench_output.py")
assert SPEC is not None and SPEC.loader is not None
bench_output = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(bench_output)


def test_the_recorded_command_quotes_what_a_shell_would_split_and_drops_out() -> None:
    override = "learner.mappo_by_role={main_exploiter: {entropy_coef: 0.005}}"
    argv = ["bench/x.py", "cfg.yaml:10", "--set", override, "--out", "data.txt", "--seeds", "0", "1"]
    line = bench_output.command_line(argv)
    assert line == f"python bench/x.py cfg.yaml:10 --set '{override}' --seeds 0 1"
    assert shlex.split(line)[1:] == ["bench/x.py", "cfg.yaml:10", "--set", override, "--seeds", "0", "1"]
    assert bench_output.command_line(["bench/x.py", "--out=f.txt", "--quick"]) == "python bench/x.py --quick"
