"""Battalion with ``unit_classes``: the cycle of the committed scripts, and what stands above them.

Every pair of players plays ``--games`` fresh 2v2 games (half from each seat) with
``env.options.unit_classes: true``; the table gives the row player's score (wins + draws / 2)
with its 95% Jeffreys interval. Every player plays level 5's game after the choice step; they
differ in the classes they choose:

* ``scripted_l5``: each battalion's class uniformly at random (the ladder's top with classes);
* ``scripted_l5_infantry``, ``scripted_l5_cavalry``, ``scripted_l5_archers``: one class for
  every battalion (the env's committed scripts);
* ``l5 as infantry + cavalry`` (and the two other two-class teams, bench only): battalion 0 of
  the first class, battalion 1 of the second.

Below the table: the Nash mixture of the table (the meta-game a league solves) and each
player's score against it (at most 0.5; the mixture itself scores 0.5 against everyone), and
each player's worst score: a committed script's is its counter's win.

    python bench/unit_classes.py                 # 400 games a pair (about 2 minutes)
    python bench/unit_classes.py --games 100     # a quick look

One process, one core; the figures are game outcomes, not timings.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np
from bench_output import print_table, recorded

from light_league import envs
from light_league.envs import battalion_classes as bc
from light_league.envs.battalion import NUM_ACTIONS
from light_league.envs.battalion_scripted import ScriptedBattalionPolicy, one_hot
from light_league.game_theory.nash import compute_nash_distribution
from light_league.rollout.head_to_head import match

TEAM = 2
OPTIONS = {"team_size": TEAM, "unit_classes": True}
COMMITTED = tuple(f"scripted_l5_{name}" for name in bc.CLASS_NAMES)
#: the two-class teams: battalion 0's class, battalion 1's
PAIRS = ((bc.INFANTRY, bc.CAVALRY), (bc.CAVALRY, bc.ARCHERS), (bc.ARCHERS, bc.INFANTRY))


class TeamPolicy:
    """Level 5 whose battalion ``k`` chooses class ``classes[k]`` (by its index in the team)."""

    def __init__(self, spec: envs.EnvSpec, classes: tuple[int, ...]) -> None:
        self.level5 = ScriptedBattalionPolicy(spec, 5)
        self.classes = np.array(classes)

    def log_probs(self, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray) -> np.ndarray:
        mask = np.asarray(mask, dtype=bool)
        played = self.level5.log_probs(obs, mask, agent_idx)
        choice = one_hot(NUM_ACTIONS + self.classes[np.asarray(agent_idx)], mask.shape[1]) > 0
        chosen = np.where(choice, 0.0, -np.inf).astype(np.float32)
        return np.where(mask[:, NUM_ACTIONS:].any(axis=1, keepdims=True), chosen, played)


def players() -> dict[str, Any]:
    spec = envs.make_spec("battalion", **OPTIONS)
    out: dict[str, Any] = {
        name: envs.make_fixed_policy("battalion", name, **OPTIONS) for name in ("scripted_l5", *COMMITTED)
    }
    for pair in PAIRS:
        out[f"l5 as {' + '.join(bc.CLASS_NAMES[k] for k in pair)}"] = TeamPolicy(spec, pair)
    return out


def _cell(value: float, ci: tuple[float, float]) -> str:
    return f"{value:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=400, help="games per pair, half from each seat")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--edge-weight", type=float, default=1.0, help="the class-aware player's weight of the edge"
    )
    parser.add_argument("--out", type=Path, default=None, help="also write the output here")
    args = parser.parse_args(argv)
    with recorded(args.out):
        table = players()
        names = list(table)
        env = envs.make_batched("battalion", min(args.games, 256), **OPTIONS)
        score = {}
        for i, a in enumerate(names):
            for j, b in enumerate(names[i + 1 :], start=i + 1):
                got = match(env, table[a], table[b], args.games, seed=args.seed + 1000 * i + j)
                score[a, b] = (got.score, got.score_ci95)
                score[b, a] = (1.0 - got.score, (1.0 - got.score_ci95[1], 1.0 - got.score_ci95[0]))
        print(
            f"battalion {TEAM}v{TEAM} with unit_classes: the row player's score against the column player, "
            f"{args.games} games a pair (half from each seat), 95% interval"
        )
        print(
            f"damage into the class a class beats x{bc.STRONG:g}, into the one that beats it x{bc.WEAK:.3g}"
        )
        short = {name: name.replace("scripted_", "") for name in names}
        rows = [[a, *("-" if a == b else _cell(*score[a, b]) for b in names)] for a in names]
        print_table(["", *(short[b] for b in names)], rows)
        payoff = np.array([[0.5 if a == b else score[a, b][0] for b in names] for a in names])
        nash = compute_nash_distribution(payoff)
        print()
        print(
            "the Nash mixture of the table: "
            + ", ".join(f"{names[k]} {p:.2f}" for k, p in enumerate(nash) if p > 0.005)
        )
        print("each player's score against that mixture, and its worst score (against whom):")
        for k, a in enumerate(names):
            worst = min((b for b in names if b != a), key=lambda b: score[a, b][0])
            print(f"  {a}: {payoff[k] @ nash:.2f}; worst {score[a, worst][0]:.2f} against {worst}")
        env.close()


if __name__ == "__main__":
    main()
