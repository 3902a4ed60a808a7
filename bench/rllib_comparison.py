"""Env steps per second, training included: RLlib's PPO self-play vs our MAPPO self-play on Kuhn poker.

Both sides get the same wall time (``--seconds``), one after the other in this one run:

* **ours**: ``main.py`` with MAPPO (default settings) in self-play (``scheduler.name:
  self_play``: the learner against its current weights) on our ``kuhn_poker``, local backend,
  one rollout worker; env steps are the training env steps of ``generations.jsonl`` and the time
  is the run's ``wall_s`` (rollouts, updates, evaluation and logging, the process start left out);
  the run stops after the first generation that ends past ``--seconds`` (``stop.max_wall_s``).
* **RLlib**: PPO on the new API stack with its default settings (but ``sample_timeout_s``, see
  ``--rllib-sample-timeout``), one env runner, both players
  mapped to one shared policy (self-play), on OpenSpiel's ``kuhn_poker`` through RLlib's
  ``OpenSpielEnv``; ``algo.train()`` is called until ``--seconds`` have passed; env steps are
  ``num_env_steps_sampled_lifetime``, the time that of the ``train()`` calls (building the
  algorithm left out).

An env step is one player's decision on both sides (Kuhn poker is turn-based). RLlib is an
optional extra: ``pip install -e .[rllib]`` (``ray[rllib]`` of our Ray version and open_spiel);
without it the RLlib side is skipped with one line.

    python bench/rllib_comparison.py --seconds 120
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from light_league.run_reader import RunReader

ROOT = Path(__file__).resolve().parents[1]

#: our side: everything at its default but the environment, the scheduler and the stop rule
OURS = {
    "experiment": {"name": "rllib_comparison", "seed": 0},
    "env": {"name": "kuhn_poker"},
    "execution": {"backend": "local", "num_workers": 1},
    "learner": {"kind": "mappo"},
    "scheduler": {"name": "self_play"},
    "logging": {"console": "quiet"},
}


def run_ours(seconds: float, scratch: Path) -> dict[str, Any]:
    config = scratch / "ours.yaml"
    config.write_text(yaml.safe_dump({**OURS, "stop": {"max_wall_s": seconds, "max_generations": 100000}}))
    run_dir = scratch / "ours_run"
    done = subprocess.run(
        [sys.executable, "main.py", "--config", str(config), "--run-dir", str(run_dir), "--quiet"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"our run failed (exit {done.returncode}): {done.stderr.strip().splitlines()[-1:]}")
    last = RunReader(run_dir).record()
    steps, wall = int(last.env_steps or 0), float(last.wall_s or 0.0)
    return {
        "env_steps": steps,
        "seconds": wall,
        "env_steps_per_s": steps / wall,
        "generations": last.generation + 1,
    }


def rllib_missing() -> str | None:
    """Why RLlib cannot run here, or None."""
    try:
        import pyspiel  # noqa: F401
        from ray.rllib.algorithms.ppo import PPOConfig  # noqa: F401
        from ray.rllib.env.wrappers.open_spiel import OpenSpielEnv  # noqa: F401
    except ImportError as exc:
        return f"{exc.__class__.__name__}: {exc}"
    return None


def run_rllib(seconds: float, sample_timeout_s: float | None = None) -> dict[str, Any]:
    import pyspiel
    import ray
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.env.wrappers.open_spiel import OpenSpielEnv
    from ray.tune.registry import register_env

    ray.init(num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False, configure_logging=False)
    register_env("open_spiel_kuhn_poker", lambda _: OpenSpielEnv(pyspiel.load_game("kuhn_poker")))
    config = (
        PPOConfig()
        .environment("open_spiel_kuhn_poker")
        # sample_timeout_s=None: a train() waits for its whole batch. RLlib's default (60 s) drops
        # a batch not sampled by then, and on a loaded 2-core machine one env runner samples the
        # default 4,000 steps slower than that, so no train() would ever train
        .env_runners(num_env_runners=1, sample_timeout_s=sample_timeout_s)
        .multi_agent(policies={"shared"}, policy_mapping_fn=lambda agent_id, episode, **kwargs: "shared")
    )
    algo = config.build_algo()
    steps, iterations, empty, started = 0, 0, 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        result = algo.train()
        iterations += 1
        # a train() whose sampling timed out (sample_timeout_s, 60 s by default) reports no samples
        sampled = result.get("env_runners", {}).get("num_env_steps_sampled_lifetime")
        if sampled is None:
            empty += 1
        else:
            steps = int(sampled)
    wall = time.perf_counter() - started
    algo.stop()
    ray.shutdown()
    return {
        "env_steps": steps,
        "seconds": wall,
        "env_steps_per_s": steps / wall,
        "iterations": iterations,
        "iterations_without_samples": empty,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=120.0, help="wall time of each side")
    parser.add_argument("--out", type=Path, help="also write the result as JSON here")
    parser.add_argument(
        "--rllib-sample-timeout",
        type=float,
        default=None,
        help="RLlib's sample_timeout_s (its default is 60; default here: none, wait for the batch)",
    )
    args = parser.parse_args(argv)
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="rllib-cmp-") as scratch:
        ours = run_ours(args.seconds, Path(scratch))
    print(
        f"ours  (MAPPO self-play, our kuhn_poker):      {ours['env_steps']:>10,} env steps in {ours['seconds']:6.1f} s "
        f"= {ours['env_steps_per_s']:>10,.0f} env steps/s ({ours['generations']} generations)"
    )
    result: dict[str, Any] = {
        "ours": ours,
        "seconds": args.seconds,
        "rllib_sample_timeout_s": args.rllib_sample_timeout,
        "started": started,
    }
    missing = rllib_missing()
    if missing is not None:
        print(f"RLlib: skipped, not installed ({missing}); pip install -e .[rllib] to compare")
    else:
        theirs = run_rllib(args.seconds, args.rllib_sample_timeout)
        result["rllib"] = theirs
        rate = theirs["env_steps_per_s"]
        result["ratio"] = ours["env_steps_per_s"] / rate if rate > 0 else None
        print(
            f"RLlib (PPO self-play, OpenSpiel kuhn_poker): {theirs['env_steps']:>10,} env steps in {theirs['seconds']:6.1f} s "
            f"= {theirs['env_steps_per_s']:>10,.1f} env steps/s ({theirs['iterations']} train() calls, "
            f"{theirs['iterations_without_samples']} of them without samples)"
        )
        if result["ratio"] is None:
            print("ours / RLlib: not defined (RLlib trained on no env step in that time)")
        else:
            print(f"ours / RLlib: {result['ratio']:.1f}x")
    from importlib import metadata

    result["load_average_before"] = [round(x, 2) for x in load_before]
    result["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    result["machine"] = {
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
    }
    result["versions"] = {name: metadata.version(name) for name in ("ray", "torch", "open_spiel")}
    print(
        f"started {started}; {os.cpu_count()} CPUs ({platform.platform()}); load average "
        f"{load_before[0]:.1f} before, {os.getloadavg()[0]:.1f} after; "
        + ", ".join(f"{k} {v}" for k, v in result["versions"].items())
    )
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
