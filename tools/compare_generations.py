"""Compare two ``generations.jsonl`` files, ignoring the fields that measure wall time.

A refactor that preserves behaviour gives, for the same config and seed, the same generation
records except for how long things took. This script says where two files differ:

    python tools/compare_generations.py RUN_A/generations.jsonl RUN_B/generations.jsonl

exits 0 when they match and 1 (listing the first differences) when they do not. ``--rtol R``
counts two floats within ``R`` of each other (relative) as equal: the same run on another CPU
can differ in the last digits of a sum (its vector units add in another order).

Ignored: ``wall_s``, ``env_steps_per_s``, ``timings`` and ``train_split_s`` (clock readings), and ``meta_stability``
when the two records solved a different number of posterior draws (the number of draws is capped
by ``league.meta_stability_max_s``, a wall-time budget; with the same number of draws the field
is compared like any other).
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # this checkout's light_league, not another one installed in the env
    sys.path.insert(0, str(ROOT))

from light_league.tracking.record import GenerationRecord, read_generations_file  # noqa: E402

#: fields of a generation record that are clock readings
WALL_TIME_FIELDS = ("wall_s", "env_steps_per_s", "timings", "train_split_s")


def load(path: Path) -> list[GenerationRecord]:
    return read_generations_file(path)


def comparable(record: GenerationRecord, other: GenerationRecord | None = None) -> dict[str, Any]:
    """``record`` as JSON without its wall-time fields (and without ``meta_stability`` when
    ``other``'s was computed from a different number of draws)."""
    mine, theirs = record.meta_stability, None if other is None else other.meta_stability
    differ = mine is not None and theirs is not None and mine.draws != theirs.draws
    skipped = (*WALL_TIME_FIELDS, *(("meta_stability",) if differ else ()))
    return {k: v for k, v in record.to_json().items() if k not in skipped}


def _diff(a: Any, b: Any, path: str, out: list[str], rtol: float) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        if list(a) != list(b):
            out.append(f"{path}: keys {list(a)} != {list(b)}")
        for key in a:
            if key in b:
                _diff(a[key], b[key], f"{path}.{key}", out, rtol)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(f"{path}: {len(a)} items != {len(b)}")
        for i, (x, y) in enumerate(zip(a, b)):
            _diff(x, y, f"{path}[{i}]", out, rtol)
    elif isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return
    elif isinstance(a, float) and isinstance(b, float) and math.isclose(a, b, rel_tol=rtol):
        return
    elif a != b or type(a) is not type(b):
        out.append(f"{path}: {a!r} != {b!r}")


def differences(a: list[GenerationRecord], b: list[GenerationRecord], rtol: float = 0.0) -> list[str]:
    """Every difference between two runs' generation records, wall-time fields ignored; floats
    within ``rtol`` of each other (relative) count as equal."""
    out: list[str] = []
    if len(a) != len(b):
        out.append(f"{len(a)} generation records != {len(b)}")
    for i, (x, y) in enumerate(zip(a, b)):
        _diff(comparable(x, y), comparable(y, x), f"generation[{i}]", out, rtol)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", type=Path)
    parser.add_argument("b", type=Path)
    parser.add_argument("--show", type=int, default=20, help="differences to print (default 20)")
    parser.add_argument("--rtol", type=float, default=0.0, help="relative tolerance for floats (default 0)")
    args = parser.parse_args(argv)
    diffs = differences(load(args.a), load(args.b), args.rtol)
    if not diffs:
        print(f"same: {args.a} and {args.b} ({len(load(args.a))} generations, wall times ignored)")
        return 0
    print(f"{len(diffs)} differences between {args.a} and {args.b}:")
    for line in diffs[: args.show]:
        print(f"  {line}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
