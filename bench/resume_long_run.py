"""Resume of a long run: time and peak memory against the size of the match log.

A real ``rps_tiny`` run of two generations is made, then its match log is inflated with
synthesised games of those generations (a long run's history) to ``--mb`` megabytes, plus a
tail of games of the interrupted third generation that resume must cut. The run is then resumed
in a fresh process: once with no generation left to run (resume alone), once running one more
generation, and ``main.py report`` is run on it. Peak memory is the child's max RSS.

    python bench/resume_long_run.py                    # 500 MB log
    python bench/resume_long_run.py --compare /path/to/other/checkout   # same resume with that code
    python bench/resume_long_run.py --quick            # 50 MB
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

try:
    from bench_output import recorded
except ImportError:  # imported by a test rather than run as a script
    from bench.bench_output import recorded

from light_league.run_dir import RunDir

ROOT = Path(__file__).resolve().parents[1]
RPS = ROOT / "expr_configs" / "rps_tiny.yaml"
SMALL = ["scheduler.steps_per_generation=256", "evaluation.episodes_per_pair=8", "logging.console=quiet"]


#: started by :func:`run` in a fresh interpreter: spawns ``main.py ARGV`` (stdout discarded) and
#: prints its exit code, CPU seconds and peak RSS (kB) as JSON
_LAUNCHER = """
import json, os, sys
out = [(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)]
pid = os.posix_spawn(sys.executable, [sys.executable, "main.py", *sys.argv[1:]], os.environ, file_actions=out)
_, status, usage = os.wait4(pid, 0)
code = os.waitstatus_to_exitcode(status)
print(json.dumps([code, usage.ru_utime + usage.ru_stime, usage.ru_maxrss]))
"""


def run(code_root: Path, argv: list[str]) -> tuple[int, float, float, float, str]:
    """(exit code, wall s, CPU s, peak RSS MB, stderr tail) of ``main.py argv`` run from ``code_root``.

    ``main.py`` is started by a small launcher process, not by this one: a child's max RSS as
    the kernel reports it includes the address space it was forked from before it exec'd, so a
    child of a large process (a test session that ran leagues in-process) would be charged that
    process's size.
    """
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "WANDB_MODE": "disabled"}
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", _LAUNCHER, *argv], cwd=code_root, env=env, capture_output=True, text=True
    )
    wall = time.perf_counter() - start
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"the launcher failed ({proc.returncode}): {proc.stderr.strip()[-300:]}")
    code, cpu, max_rss_kb = json.loads(lines[-1])
    return int(code), wall, float(cpu), max_rss_kb / 1024.0, proc.stderr.strip()[-300:]


def inflate(run_dir: Path, megabytes: int) -> tuple[int, int]:
    """Grow the committed match log to ``megabytes`` (synthesised games of generations 0-1) and add a
    torn-free tail of generation-2 games; return (committed bytes, lines)."""
    rd = RunDir(run_dir)
    latest = json.loads((rd.checkpoint / "latest.json").read_text())
    state_file = rd.checkpoint / latest["dir"] / "state.json"
    state = json.loads(state_file.read_text())
    gen = int(state["generation"])
    members = [m for m in state["members"]] or ["a", "b"]
    log = rd.matches
    committed = log.read_bytes()[: state.get("matches_bytes", log.stat().st_size)]
    block_lines = []
    for i in range(4096):
        a, b = members[i % len(members)], members[(i * 7 + 1) % len(members)]
        rec = {
            "a": a,
            "b": b,
            "outcome": float(i % 3) / 2,
            "seat": i % 2,
            "generation": 0,
            "kind": "train",
            "session": 0,
        }
        block_lines.append(json.dumps(rec, separators=(",", ":")))
    target = megabytes * 1024 * 1024
    lines = 0
    tmp = log.with_name("matches.jsonl.new")
    with open(tmp, "wb") as out:
        written = 0
        per_gen = max(1, target // max(gen, 1))
        for g in range(gen):
            block = ("\n".join(block_lines).replace('"generation":0', f'"generation":{g}') + "\n").encode()
            n = 0
            while n < per_gen and written < target:
                out.write(block)
                n += len(block)
                written += len(block)
                lines += 4096
        out.write(committed)
        cut = out.tell()
        tail = ("\n".join(block_lines).replace('"generation":0', f'"generation":{gen}') + "\n").encode()
        for _ in range(max(1, (2 * 1024 * 1024) // len(tail))):  # ~2 MB of the interrupted generation
            out.write(tail)
    os.replace(tmp, log)
    state["matches_bytes"] = cut
    state_text = json.dumps(state) + "\n"
    state_file.write_text(state_text)
    # the checkpoint pointer holds state.json's checksum, as the run's own checkpoint writes it
    latest["state_sha256"] = hashlib.sha256(state_text.encode("utf-8")).hexdigest()
    (rd.checkpoint / "latest.json").write_text(json.dumps(latest, indent=2))
    return cut, lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=500, help="size of the committed match log in MB")
    ap.add_argument("--quick", action="store_true", help="50 MB")
    ap.add_argument(
        "--compare", type=Path, default=None, help="also resume a copy with the code of this checkout"
    )
    ap.add_argument("--work", type=Path, default=None, help="scratch directory (default: a temp dir)")
    ap.add_argument("--out", type=Path, default=None, help="also write the output here (for docs/data/)")
    args = ap.parse_args()
    with recorded(args.out):
        mb = 50 if args.quick else args.mb
        work = Path(tempfile.mkdtemp(prefix="resume_bench_", dir=args.work))
        try:
            run_dir = work / "run"
            code, _, _, _, err = run(
                ROOT, ["--config", str(RPS), "--run-dir", str(run_dir), "stop.max_generations=2", *SMALL]
            )
            assert code == 0, err
            cut, lines = inflate(run_dir, mb)
            size = RunDir(run_dir).matches.stat().st_size
            print(
                f"match log: {size / 2**20:.0f} MB ({lines:,} synthesised games), committed part {cut / 2**20:.0f} MB"
            )
            copies = [("this checkout", ROOT, run_dir)]
            if args.compare is not None:
                other = work / "run_compare"
                shutil.copytree(run_dir, other)
                copies.append((f"{args.compare}", args.compare.resolve(), other))
            rows = []
            for label, code_root, rd in copies:
                r1 = run(code_root, ["--resume", str(rd), "stop.max_generations=2"])
                after = RunDir(rd).matches.stat().st_size
                r2 = run(code_root, ["--resume", str(rd), "stop.max_generations=3"])
                r3 = run(code_root, ["report", str(rd)])
                for what, (c, w, cpu, m, e) in (
                    ("resume, no generation left", r1),
                    ("resume + 1 generation", r2),
                    ("report", r3),
                ):
                    assert c == 0, (label, what, e)
                    rows.append((label, what, w, cpu, m))
                print(
                    f"{label}: match log after resume {after / 2**20:.1f} MB (cut at the checkpoint: {after == cut})"
                )
            print()
            load = os.getloadavg()
            print(
                f"load average at the end (1/5/15 min): {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} on {os.cpu_count()} CPUs"
            )
            print("| code | command | wall s | CPU s | peak RSS MB |")
            print("|---|---|---:|---:|---:|")
            for label, what, w, cpu, m in rows:
                print(f"| {label} | {what} | {w:.1f} | {cpu:.1f} | {m:.0f} |")
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
