"""bench/bench_output.py: the command a bench file records can be pasted into a shell as is."""

from __future__ import annotations

import shlex

import bench_output  # bench/ is on pytest's pythonpath


def test_the_recorded_command_quotes_what_a_shell_would_split_and_drops_out() -> None:
    override = "learner.mappo_by_role={main_exploiter: {entropy_coef: 0.005}}"
    argv = ["bench/x.py", "cfg.yaml:10", "--set", override, "--out", "data.txt", "--seeds", "0", "1"]
    line = bench_output.command_line(argv)
    assert line == f"python bench/x.py cfg.yaml:10 --set '{override}' --seeds 0 1"
    assert shlex.split(line)[1:] == ["bench/x.py", "cfg.yaml:10", "--set", override, "--seeds", "0", "1"]
    assert bench_output.command_line(["bench/x.py", "--out=f.txt", "--quick"]) == "python bench/x.py --quick"
