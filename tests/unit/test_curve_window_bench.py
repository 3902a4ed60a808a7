"""bench/curve_window.py: each seed's window mean and last point, read from an exploitability
bench's output lines, and a clear refusal of a file that is not one."""

from __future__ import annotations

from pathlib import Path

import curve_window as bench  # bench/ is on pytest's pythonpath
import pytest

OUTPUT = """\
curves (time s, NashConv):
  ours main/s5: (30.0s, 0.100) (95.0s, 0.010) (110.0s, 0.020) (125.0s, 0.500)
  ours meta/s5: (30.0s, 0.200) (100.0s, 0.004)
  ours main/s6: (92.0s, 0.030)
  ours:fast main/s5: (91.0s, 0.008) (119.0s, 0.006)
  OS-BR: (0.0s, 0.917) (100.0s, 0.002)
"""


def test_each_seed_is_averaged_inside_the_window(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bench.txt"
    path.write_text(OUTPUT)
    curves = bench.read_curves(path)
    assert set(curves) == {"shipped main", "shipped meta", "fast main"}  # OS-BR is not ours
    out = tmp_path / "window.txt"
    bench.main([str(path), "--window", "90", "120", "--out", str(out)])
    text = out.read_text()
    lines = {
        " ".join(line.split()[:2]): line for line in text.splitlines() if line.startswith(("shipped", "fast"))
    }
    # seed 5: 0.010 and 0.020 inside (30 s and 125 s are outside), seed 6: 0.030
    assert "s5:0.0150 s6:0.0300" in lines["shipped main"] and "0.0225 / 0.0300" in lines["shipped main"]
    assert "0.0250 / 0.0300" in lines["shipped main"]  # the last points: 0.020 and 0.030
    assert "s5:0.0040" in lines["shipped meta"]
    assert "s5:0.0070" in lines["fast main"] and "0.0060 / 0.0060" in lines["fast main"]  # a variant
    assert text.startswith("# command: python ")  # the provenance header


def test_a_file_without_curves_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.txt"
    path.write_text("nothing here\n")
    with pytest.raises(SystemExit, match="no 'ours' curves"):
        bench.main([str(path)])
    with pytest.raises(SystemExit, match="FROM must be below TO"):
        bench.main([str(path), "--window", "120", "90"])
    with pytest.raises(SystemExit, match="no such file"):
        bench.main([str(tmp_path / "missing.txt")])
