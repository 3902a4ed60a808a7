"""A Kuhn poker output's strategy, information state by information state, beside Nash's.

Kuhn's equilibria form one family (Kuhn, 1950): the first player bets a Jack with some
``a`` in [0, 1/3], a King with ``3a``, never opens with a Queen, and calls a bet with a Queen
after checking ``a + 1/3`` of the time; the second player bets a Jack after a check 1/3 of the
time, calls a bet with a Queen 1/3 of the time, always bets and calls with a King, never with a
Jack. This prints, for the newest main-agent snapshot of each generation (or of the last only),
the probability of betting (or calling) at each of Kuhn's twelve information states, the exact
NashConv, and the family's member closest to the first player's Jack (the ``Nash`` row), so a
NashConv can be read as "which decisions are off, and by how much":

    python bench/kuhn_strategy.py RUN_DIR [RUN_DIR ...]              # the last snapshot of each run
    python bench/kuhn_strategy.py RUN_DIR --every 2                  # every other generation
    python bench/kuhn_strategy.py RUN_DIR --out docs/data/FILE.txt   # also to a file, with provenance
    python bench/kuhn_strategy.py RUN_DIR --mixtures 1 2 4 8         # the last k snapshots mixed

With ``--mixtures K ...`` it also prints, per run, the exact NashConv of the uniform mixture of
the main agent's last ``k`` snapshots for each ``k`` (a mixture of policies, each game playing
one, not an average of their weights): lower than the last snapshot alone where the snapshots
wander around an equilibrium, no lower where they lag behind one together.

Columns: ``J Q K`` the first player's opening bet with each card; ``Jcb Qcb Kcb`` its call after
check, bet; ``J_c Q_c K_c`` the second player's bet after a check; ``J_b Q_b K_b`` its call of a bet.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from bench_output import print_table, recorded

if TYPE_CHECKING:
    from light_league.algorithms.base import Policy
    from light_league.run_reader import RunReader

#: (player, OpenSpiel information state string) of each column: cards 0 J, 1 Q, 2 K; p pass, b bet
COLUMNS = {
    "J": (0, "0"),
    "Q": (0, "1"),
    "K": (0, "2"),
    "Jcb": (0, "0pb"),
    "Qcb": (0, "1pb"),
    "Kcb": (0, "2pb"),
    "J_c": (1, "0p"),
    "Q_c": (1, "1p"),
    "K_c": (1, "2p"),
    "J_b": (1, "0b"),
    "Q_b": (1, "1b"),
    "K_b": (1, "2b"),
}


def nash_row(jack_bet: float) -> list[float]:
    """The equilibrium whose first player bets a Jack ``a`` (clipped to [0, 1/3]) of the time."""
    a = min(max(jack_bet, 0.0), 1.0 / 3.0)
    return [a, 0.0, 3 * a, 0.0, a + 1 / 3, 1.0, 1 / 3, 0.0, 1.0, 0.0, 1 / 3, 1.0]


def bet_probabilities(policy: Policy) -> list[float]:
    """The probability of action 1 (bet / call) at each column's information state (one forward pass)."""
    from light_league.algorithms.game_tree import infostate_table

    table = infostate_table("kuhn_poker")
    rows = [(player, table.strings[player].index(key)) for player, key in COLUMNS.values()]
    obs = np.stack([table.obs[player][row] for player, row in rows])
    mask = np.stack([table.mask[player][row] for player, row in rows])
    log_probs = np.asarray(policy.log_probs(obs, mask, np.zeros(len(rows), dtype=np.int64)))
    return np.exp(log_probs[:, 1]).tolist()


def mixtures(reader: RunReader, sizes: list[int]) -> None:
    """The exact NashConv of the uniform mixture of the main agent's last ``k`` snapshots."""
    from light_league.algorithms.game_tree import nash_conv

    ids = sorted(
        (m for m in reader.members() if m.startswith("main_agent_0-v")),
        key=lambda m: int(m.rsplit("-v", 1)[1]),
    )
    policies = reader.policies(ids)
    sizes = [k for k in sizes if k <= len(ids)]
    cells = [f"{nash_conv('kuhn_poker', [policies[i] for i in ids[-k:]]):.4f}" for k in sizes]
    print(f"the last k of its {len(ids)} main-agent snapshots mixed uniformly, NashConv:")
    print_table([f"k={k}" for k in sizes], [cells])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path, help="run directories of a Kuhn poker league")
    ap.add_argument(
        "--every", type=int, default=0, help="every K-th generation and the last (0: the last only)"
    )
    ap.add_argument("--out", type=Path, default=None, help="also write the output here, with its provenance")
    ap.add_argument(
        "--mixtures",
        type=int,
        nargs="+",
        default=[],
        metavar="K",
        help="NashConv of the last K snapshots mixed",
    )
    args = ap.parse_args()
    from light_league.algorithms.game_tree import nash_conv
    from light_league.run_reader import RunReader

    with recorded(args.out):
        for run in args.runs:
            reader = RunReader(run)
            if reader.config.env.name != "kuhn_poker":
                raise SystemExit(f"{run} is a {reader.config.env.name} run; this bench reads kuhn_poker runs")
            last = len(reader.records()) - 1
            generations = list(range(0, last, args.every)) + [last] if args.every else [last]
            rows, probs = [], []
            for gen in generations:
                weights = reader.target("main", gen).weights
                if len(weights) != 1:
                    raise SystemExit(f"{run} has {len(weights)} main agents; this bench reads runs with one")
                member = next(iter(weights))
                policy = reader.policy(member)
                probs = bet_probabilities(policy)
                nc = nash_conv("kuhn_poker", policy)
                rows.append([str(gen), member, f"{nc:.3f}", *(f"{p:.2f}" for p in probs)])
            rows.append(["", "Nash", "0.000", *(f"{p:.2f}" for p in nash_row(probs[0]))])
            print(f"\n{run.name}: the newest main agent's probability of betting (calling), per generation")
            print_table(["gen", "member", "NashConv", *COLUMNS], rows)
            if args.mixtures:
                mixtures(reader, args.mixtures)


if __name__ == "__main__":
    main()
