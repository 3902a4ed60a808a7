"""How much of a poker league's meta-strategy exploitability is evaluation noise?

A league solves its meta-strategy from a payoff table of played games. On a game that can be
evaluated exactly (Kuhn, Leduc) this bench takes a finished run's last table apart, measuring
only (nothing here feeds back into training):

* ``games/cell``: games behind each played cell (median, fewest, most), and ``rms error``: how far
  the played cells are from the members' exact expected payoffs, in chips (a cell is the row's
  mean over both seats);
* ``run meta``: the exact NashConv of the run's own meta-strategy (what ``meta_nash_conv``
  records), against ``exact-table Nash``: the Nash of the *same members* with their exact payoffs.
  The gap between the two is what evaluation noise costs; the second is the floor that better
  payoff estimates could reach without a better population;
* ``noise sd S``: the Nash of the exact table with independent Gaussian noise of ``S`` chips added
  to every cell (antisymmetric, as a played table is), mean / worst exact NashConv over
  ``--draws`` draws: how accurate the cells must be for the meta-strategy to reach a target;
  ``games for S`` is how many unpaired games per cell that accuracy takes at the spread of one
  game that the run's own cells show (the mean of a cell's squared error times its games, over
  ``S`` squared);
* ``solvers``: the run's *played* table through other meta-solvers (``league.meta_solver``): the
  exact NashConv of the LP Nash (the run's own, as the shipped poker configs solve), of the logit
  QRE at each ``--qre`` temperature (in win-rate units, as the config takes it), of projected
  replicator dynamics and of the uniform mixture: which solver copes with the table's noise.

* ``--shared-games N ...``: the table ``evaluation.shared_games: N`` would give the meta-solver
  (every cell from one pool of ``N`` uniformly random games, reweighted per member), its rms error
  against the exact payoffs and the exact NashConv of its Nash, for each
  ``evaluation.shared_games_behaviour`` (the weights divided by the uniform choice that played the
  games, or by each history's action shares estimated from them), mean / worst over ``--pools``
  independent pools.

    python bench/meta_noise.py RUN_DIR [RUN_DIR ...]
    python bench/meta_noise.py RUN_DIR ... --sd 0.005 0.01 0.05 --draws 5 --qre 0.003 0.01
    python bench/meta_noise.py RUN_DIR ... --out docs/data/FILE.txt   # also to a file, with provenance
    python bench/meta_noise.py RUN_DIR ... --shared-games 100000 1000000 --pools 3

The noise levels are solved with the LP Nash (``league.meta_solver: nash``).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from bench_output import print_table, recorded

DEFAULT_SD = (0.005, 0.01, 0.02, 0.05, 0.1)
DEFAULT_QRE = (0.001, 0.003, 0.01)
#: seeds of independent shared-games pools lie this far apart
POOL_SEED_STRIDE = 10**7


@dataclass
class Reading:
    """One run's last table, taken apart."""

    run: str
    members: int
    games: tuple[float, int, int]
    rms_error: float
    #: the variance of one game's outcome, in chips squared, as the cells' errors show it
    game_variance: float
    run_meta: float
    exact_nash: float
    exact_support: int
    #: noise sd -> (mean, worst) NashConv of the noisy exact table's Nash
    noisy: dict[float, tuple[float, float]] = field(default_factory=dict)
    #: meta-solver label -> exact NashConv of its mixture of the played table
    solvers: dict[str, float] = field(default_factory=dict)
    #: (shared games N, behaviour) -> per pool: (rms error of that table in chips, exact NashConv of its Nash)
    shared: dict[tuple[int, str], list[tuple[float, float]]] = field(default_factory=dict)

    def games_for(self, sd: float) -> int:
        """Unpaired games per cell for a cell error of ``sd`` chips, at this run's spread."""
        return int(np.ceil(self.game_variance / sd**2))


def read_run(
    run: Path,
    sds: tuple[float, ...],
    draws: int,
    seed: int,
    qre: tuple[float, ...] = DEFAULT_QRE,
    shared: tuple[int, ...] = (),
    pools: int = 1,
) -> Reading:
    from light_league.algorithms.game_tree import expected_payoff_matrix, nash_conv
    from light_league.game_theory import meta_solvers
    from light_league.run_reader import RunReader

    reader = RunReader(run)
    env_name = reader.config.env.name
    if env_name not in ("kuhn_poker", "leduc_poker"):
        raise SystemExit(f"{run} is a {env_name} run; this bench reads kuhn_poker and leduc_poker runs")
    snap = reader.payoff()
    ids = list(snap.agent_ids)
    policies = [reader.policy(i) for i in ids]
    lo, hi = reader.make_env(1).spec.score_range
    seat0 = expected_payoff_matrix(env_name, policies, policies)
    exact = (seat0 - seat0.T) / 2  # the row's mean over both seats, in chips
    played = snap.games > 0
    np.fill_diagonal(played, False)
    sampled = (snap.win_rates - 0.5) * (hi - lo)
    errors = (sampled - exact)[played]
    counts = snap.games[played]
    x = meta_solvers.nash(exact)  # the LP Nash, as the runs solve their played tables
    reading = Reading(
        run=run.name,
        members=len(ids),
        games=(float(np.median(counts)), int(counts.min()), int(counts.max())),
        rms_error=float(np.sqrt(np.mean(errors**2))),
        game_variance=float(np.mean(errors**2 * counts)),
        run_meta=nash_conv(env_name, policies, snap.meta_strategy),
        exact_nash=nash_conv(env_name, policies, x),
        exact_support=int((x >= meta_solvers.SUPPORT_THRESHOLD).sum()),
    )
    rng = np.random.default_rng(seed)
    for sd in sds:
        values = []
        for _ in range(draws):
            noise = rng.normal(0.0, sd, exact.shape)
            noise = (noise - noise.T) / np.sqrt(2.0)  # antisymmetric, each cell still sd
            values.append(nash_conv(env_name, policies, meta_solvers.nash(exact + noise)))
        reading.noisy[sd] = (float(np.mean(values)), float(np.max(values)))
    table = np.where(played, snap.win_rates, 0.5) - 0.5  # zero-sum form; every shipped table is full
    mixtures = {"nash": meta_solvers.nash(table)}
    mixtures.update({f"qre {t:g}": meta_solvers.qre(table, temperature=t) for t in qre})
    mixtures["prd"] = meta_solvers.prd(table)
    mixtures["uniform"] = meta_solvers.uniform(table)
    reading.solvers = {name: nash_conv(env_name, policies, mix) for name, mix in mixtures.items()}
    if shared:
        from light_league.evaluation.shared_games import BEHAVIOURS, SharedGames

        members = dict(zip(ids, policies))
        off = ~np.eye(len(ids), dtype=bool)
        for n in shared:
            for behaviour in BEHAVIOURS:
                # pools seeded far apart: a poker env seeded s deals its b-th stream from s + b
                for k in range(pools):
                    pool = SharedGames(reader.make_env, n, seed + k * POOL_SEED_STRIDE, behaviour=behaviour)
                    rates = pool.rates(members)
                    error = float(np.sqrt(np.mean(((rates - 0.5) * (hi - lo) - exact)[off] ** 2)))
                    value = nash_conv(env_name, policies, meta_solvers.nash(rates - 0.5))
                    reading.shared.setdefault((n, behaviour), []).append((error, value))
    return reading


def _mean_worst(values: list[float]) -> str:
    return f"{np.mean(values):.4f} / {max(values):.4f}"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path, help="run directories of Kuhn or Leduc poker leagues")
    ap.add_argument("--sd", type=float, nargs="+", default=list(DEFAULT_SD), help="cell noise, in chips")
    ap.add_argument("--draws", type=int, default=3, help="noisy tables per noise level")
    ap.add_argument("--seed", type=int, default=0, help="seed of the noise")
    ap.add_argument(
        "--qre", type=float, nargs="+", default=list(DEFAULT_QRE), help="QRE temperatures (win-rate units)"
    )
    ap.add_argument(
        "--shared-games",
        type=int,
        nargs="+",
        default=[],
        help="also the table of evaluation.shared_games at these pool sizes (its error, its Nash's NashConv)",
    )
    ap.add_argument(
        "--pools", type=int, default=1, help="independent shared-games pools per size and behaviour"
    )
    ap.add_argument("--out", type=Path, default=None, help="also write the output here, with its provenance")
    args = ap.parse_args(argv)
    if args.draws < 1 or any(sd <= 0 for sd in args.sd) or any(t <= 0 for t in args.qre):
        raise SystemExit(
            f"--draws {args.draws} --sd {args.sd} --qre {args.qre}: give at least one draw,"
            " positive noise levels and positive temperatures"
        )
    sds = tuple(args.sd)
    with recorded(args.out):
        if any(n < 1 for n in args.shared_games) or args.pools < 1:
            raise SystemExit(
                f"--shared-games {args.shared_games} --pools {args.pools}: give pool sizes of at least"
                " 1 game and at least one pool"
            )
        shared = tuple(args.shared_games)
        readings = [
            read_run(run, sds, args.draws, args.seed, tuple(args.qre), shared, args.pools)
            for run in args.runs
        ]
        print("\nThe last payoff table of each run (chips; NashConv exact, measured only):")
        print_table(
            ["run", "members", "games/cell", "rms error", "run meta", "exact-table Nash", "support"],
            [
                [
                    r.run,
                    str(r.members),
                    f"{r.games[0]:.0f} ({r.games[1]}-{r.games[2]})",
                    f"{r.rms_error:.3f}",
                    f"{r.run_meta:.4f}",
                    f"{r.exact_nash:.4f}",
                    str(r.exact_support),
                ]
                for r in readings
            ],
        )
        print(
            f"\nNash of the exact table with noise added to every cell (mean / worst of {args.draws} draws):"
        )
        print_table(
            ["run", *(f"noise sd {sd:g}" for sd in sds)],
            [[r.run, *(f"{r.noisy[sd][0]:.4f} / {r.noisy[sd][1]:.4f}" for sd in sds)] for r in readings],
        )
        print("\nUnpaired games per cell that each noise level takes, at the run's own spread:")
        print_table(
            ["run", *(f"games for {sd:g}" for sd in sds)],
            [[r.run, *(f"{r.games_for(sd):,}" for sd in sds)] for r in readings],
        )
        names = list(readings[0].solvers)
        print("\nThe played table through each meta-solver (exact NashConv of its mixture):")
        print_table(["run", *names], [[r.run, *(f"{r.solvers[n]:.4f}" for n in names)] for r in readings])
        if shared:
            from light_league.evaluation.shared_games import BEHAVIOURS

            keys = [(n, b) for n in shared for b in BEHAVIOURS]
            print(
                "\nThe shared-games table (evaluation.shared_games; pool seeds --seed, then"
                f" {POOL_SEED_STRIDE:.0e} apart): its rms error in chips and the exact NashConv of its Nash,"
                f" mean / worst of {args.pools} pool(s), per evaluation.shared_games_behaviour:"
            )
            for what, index in (("rms error", 0), ("NashConv", 1)):
                print_table(
                    ["run", *(f"{n:,} {b} {what}" for n, b in keys)],
                    [
                        [r.run, *(_mean_worst([x[index] for x in r.shared[k]]) for k in keys)]
                        for r in readings
                    ],
                )
            if len(readings) > 1:
                print(
                    "over the runs (mean / worst of every pool): "
                    + "; ".join(
                        f"{n:,} {b}: error {_mean_worst([x[0] for r in readings for x in r.shared[(n, b)]])},"
                        f" NashConv {_mean_worst([x[1] for r in readings for x in r.shared[(n, b)]])}"
                        for n, b in keys
                    )
                )
        if len(readings) > 1:
            run_meta = [r.run_meta for r in readings]
            exact = [r.exact_nash for r in readings]
            print(
                f"\nover {len(readings)} runs (mean / worst): run meta {np.mean(run_meta):.4f} / {max(run_meta):.4f};"
                f" exact-table Nash {np.mean(exact):.4f} / {max(exact):.4f}; "
                + "; ".join(
                    f"noise sd {sd:g} {np.mean([r.noisy[sd][0] for r in readings]):.4f} / "
                    f"{max(r.noisy[sd][1] for r in readings):.4f}"
                    for sd in sds
                )
            )
            print(
                "meta-solvers on the played tables (mean / worst): "
                + "; ".join(
                    f"{n} {np.mean([r.solvers[n] for r in readings]):.4f} / {max(r.solvers[n] for r in readings):.4f}"
                    for n in names
                )
            )


if __name__ == "__main__":
    main()
