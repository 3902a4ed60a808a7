"""Resume memory is bounded by the population and the generation, not by the games played
(issue 13): a run whose match log holds 100 MB of games resumes in well under the memory that
reading the log would take (the 500 MB figure is bench/resume_long_run.py's, notes/benchmarks.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
import resume_long_run as bench  # bench/ is on pytest's pythonpath

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_resume_of_a_100_mb_match_log_stays_small(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    code, _, _, _, err = bench.run(
        ROOT, ["--config", str(bench.RPS), "--run-dir", str(run_dir), "stop.max_generations=2", *bench.SMALL]
    )
    assert code == 0, err
    cut, lines = bench.inflate(run_dir, 100)
    assert lines > 900_000
    code, wall, cpu, peak_mb, err = bench.run(ROOT, ["--resume", str(run_dir), "stop.max_generations=2"])
    assert code == 0, err
    assert (run_dir / "matches.jsonl").stat().st_size == cut  # the interrupted generation's games cut
    # reading 100 MB of games into memory took ~1.1 GB before; the imports alone take ~0.4 GB
    assert peak_mb < 600, peak_mb
    assert cpu < 30, cpu


def test_the_peak_memory_is_the_child_s_not_that_of_the_process_that_starts_it() -> None:
    """The kernel's max RSS of a child counts the address space it was forked from until it
    exec's; the bench starts main.py from a small launcher, so a large test process is not charged."""
    ballast = b"x" * (600 * 1024 * 1024)  # 600 MB, written, so resident
    code, _, _, peak_mb, _ = bench.run(ROOT, ["--help"])
    assert code == 0 and peak_mb < 300, peak_mb
    del ballast
