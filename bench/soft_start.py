"""Does a learner stay at its own fixed point? Start a poker run at the soft equilibrium.

An entropy bonus of temperature ``T`` (``bench/entropy_floor.py``) makes the soft equilibrium the
point a learner with that bonus settles at, if it settles. This bench starts every MAPPO learner
of a run there: each new learner's actor is distilled (cross-entropy over every information
state, exact) into the soft equilibrium of ``--temperature``, then the actor is held for
``--warm`` updates while the critic learns its values, and the run goes on as configured. Its
``main_nash_conv`` per generation shows what the learner's updates do to a policy that is
already where they should converge: stay near the floor, or leave it. Measurement only: the
exact solve starts a lab run; no shipped config does this.

    python bench/soft_start.py expr_configs/league_leduc.yaml --temperature 0.3 --run-dir DIR \\
        [--warm 40] [CONFIG OVERRIDES ...]
    python bench/league_quality.py --from-runs DIR ...     # the curves, as for any run

The run directory is an ordinary run (``main.py report``, ``main.py exploit``, TensorBoard).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np

from light_league.algorithms import game_tree
from light_league.algorithms.mappo import learner as mappo_learner
from light_league.training.average import Decisions, distill

DISTILL_EPOCHS = 3000  #: full-batch steps of cross-entropy to the soft equilibrium


@contextlib.contextmanager
def soft_start(env_name: str, temperature: float, warm: int) -> Iterator[float]:
    """Within the block, every new MAPPO learner starts at the soft equilibrium (its actor
    distilled, its magnet and initial weights with it) and keeps its actor still for its first
    ``warm`` updates. Yields the soft equilibrium's exact NashConv."""
    soft = game_tree.soft_equilibrium(env_name, temperature)
    table = game_tree.infostate_table(env_name)
    obs = np.concatenate(table.obs).astype(np.float32)
    mask = np.concatenate(table.mask)
    idx = np.zeros(len(obs), dtype=np.int64)
    probs = np.where(mask, np.exp(soft.policy.log_probs(obs, mask, idx)), 0.0).astype(np.float32)
    every_state = Decisions(obs, mask, idx, probs, games=0)
    cls = mappo_learner.MAPPOLearner
    init, schedule = cls.__init__, cls._apply_lr_schedule

    def start(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        distill(self._policy, every_state, epochs=DISTILL_EPOCHS, lr=3e-3, batch_size=len(obs), seed=0)
        self._magnet.net.load_state_dict(self._policy.actor.state_dict())
        self._initial_weights = self._policy.get_weights()
        nc = game_tree.nash_conv(env_name, self._policy)
        print(f"soft start: a learner distilled to NashConv {nc:.4f}", file=sys.stderr, flush=True)

    def hold(self: Any) -> float:
        frac = schedule(self)
        if self.num_updates < warm:
            for group in self._actor_opt.param_groups:
                group["lr"] = 0.0
        return frac

    cls.__init__, cls._apply_lr_schedule = start, hold  # type: ignore[method-assign]
    try:
        yield soft.nash_conv
    finally:
        cls.__init__, cls._apply_lr_schedule = init, schedule  # type: ignore[method-assign]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("config", help="a Kuhn or Leduc poker config")
    ap.add_argument("--temperature", type=float, required=True, help="of the soft equilibrium, in chips")
    ap.add_argument(
        "--warm", type=int, default=40, help="updates with the actor held while the critic learns"
    )
    ap.add_argument("--run-dir", required=True)
    ap.add_argument("overrides", nargs="*", help="config overrides, key=value")
    args = ap.parse_intermixed_args(argv)
    if args.temperature <= 0 or args.warm < 0:
        raise SystemExit(
            f"--temperature {args.temperature} --warm {args.warm}: give a temperature > 0, warm >= 0"
        )
    from light_league.cli import main as cli_main
    from light_league.config import load_config

    env_name = load_config(args.config, args.overrides).env.name
    with soft_start(env_name, args.temperature, args.warm) as floor:
        print(f"soft equilibrium at temperature {args.temperature}: NashConv {floor:.4f}", flush=True)
        return cli_main(["--config", args.config, "--run-dir", args.run_dir, "--quiet", *args.overrides])


if __name__ == "__main__":
    sys.exit(main())
