"""The leaderboard as the console, ``report`` and TensorBoard show it, and what a run hands over.

On issue 55's failure shape (tests/unit/test_ranking.py): the order is the ranking's, not the
rating's, the rating stays beside it; the best main agent so far is named (here an older snapshot,
not the newest) with the newest one's worst opponents, and the reference opponent is marked.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from test_ranking import EXPLOITER, LEVELS, MAINS, cycle, failure_shape

from light_league.tracking.console import summary_lines
from light_league.tracking.handover import best_main, handover_focus, worst_opponents
from light_league.tracking.headline import custom_scalars_layout, headline_scalars
from light_league.tracking.leaderboard import (
    BOARD_HEADER,
    final_lines,
    leaderboard,
    leaderboard_markdown,
    with_ranking,
)
from light_league.tracking.logger import PayoffSnapshot
from light_league.tracking.payoff_render import focus, parse_payoff_text, payoff_text
from light_league.tracking.record import BestEntry, GenerationRecord, newest_entries
from light_league.tracking.record_entries import ranking_fields

BEST = MAINS[8]  # main_agent_0-v9: the one snapshot that scores against the exploiter


def snapshot() -> PayoffSnapshot:
    """The failure shape, but v9 scores 0.4 against the exploiter (every other snapshot 0)."""
    ids, w = failure_shape()
    best, exploiter = ids.index(BEST), ids.index(EXPLOITER)
    w[best, exploiter], w[exploiter, best] = 0.4, 0.6
    roles = ["baseline"] * len(LEVELS) + ["main_agent"] * len(MAINS) + ["league_exploiter"]
    games = np.full(w.shape, 32)
    np.fill_diagonal(games, 0)
    return PayoffSnapshot(33, ids, roles, w, games, np.full(len(ids), 1 / len(ids)))


def record_json(snap: PayoffSnapshot, *, ranked: bool = True) -> dict[str, Any]:
    """A record of ``snap`` whose rating (a population fit) puts the exploiter first."""
    rating = {a: 1000.0 + 10 * k for k, a in enumerate(snap.agent_ids)} | {EXPLOITER: 2000.0}
    return {
        "generation": snap.generation,
        "population": [{"id": a, "role": r} for a, r in zip(snap.agent_ids, snap.roles)],
        "meta_strategy": dict(zip(snap.agent_ids, snap.meta_strategy.tolist())),
        "rating": rating,
        "newest": [e.to_json() for e in newest_entries(snap, rating, reference="scripted_l5")],
        "reference": "scripted_l5",
        "best_main": BestEntry.of(snap, "scripted_l5").to_json(),  # type: ignore[union-attr]
        **(
            {k: list(v) if isinstance(v, tuple) else v for k, v in ranking_fields(snap).items()}
            if ranked
            else {}
        ),
    }


def test_the_best_main_agent_is_judged_against_the_baselines_and_exploiters() -> None:
    snap = snapshot()
    judged = best_main(snap)
    assert judged is not None and snap.agent_ids[judged.member] == BEST
    assert snap.agent_ids[judged.worst] == "scripted_l3" and judged.worst_win_rate == 0.15  # the rest: 0
    assert judged.references == len(LEVELS) + 1
    newest = snap.agent_ids.index(MAINS[-1])
    assert [snap.agent_ids[j] for j in worst_opponents(snap, newest)] == [
        EXPLOITER,
        "scripted_l3",
        "scripted_l4",
    ]
    focus = {snap.agent_ids[j] for j in handover_focus(snap)}
    assert focus == {BEST, EXPLOITER, "scripted_l3", "scripted_l4"}


def test_the_leaderboard_goes_in_the_ranking_with_the_rating_beside_it() -> None:
    record = GenerationRecord.from_json(record_json(snapshot()))
    assert GenerationRecord.from_json(json.loads(json.dumps(record.to_json()))) == record
    board = leaderboard(record)
    assert [row.agent for row in board[:4]] == ["scripted_l5", "scripted_l4", "scripted_l3", EXPLOITER]
    assert board[3].rating == 2000.0  # the population fit's first, fourth here
    assert board[0].nash_average == record.nash_average["scripted_l5"]
    lines = summary_lines(33, record, top_k=4)
    assert BOARD_HEADER in lines and BOARD_HEADER.split()[3:6] == ["layer", "vs", "Nash"]
    assert lines[lines.index(BOARD_HEADER) + 1].split()[:2] == ["1", "scripted_l5"]


def test_an_old_record_is_ranked_from_its_payoff_table() -> None:
    snap = snapshot()
    old = GenerationRecord.from_json(record_json(snap, ranked=False))
    assert leaderboard(old)[0].agent == EXPLOITER  # no ranking: by rating
    ranked = with_ranking(old, snap)
    assert ranked.ranking == GenerationRecord.from_json(record_json(snap)).ranking
    other = PayoffSnapshot(
        33, ["a", "b"], ["baseline"] * 2, np.full((2, 2), 0.5), np.ones((2, 2)), [0.5, 0.5]
    )
    assert with_ranking(old, other) is old  # another population's table: left as it is


def test_the_markdown_says_how_the_order_holds_and_names_the_handover() -> None:
    table = leaderboard_markdown(GenerationRecord.from_json(record_json(snapshot())), top_k=3)
    assert (
        "Nash clustering of the payoff table (layer: 1 is the Nash mixture" in table
        and "then Nash averaging" in table
    )
    assert "Each of the top 10 beats every member below it among them at least 0.5." in table
    assert "| 1 | scripted_l5 | baseline | 1 | 0.500 |" in table
    assert (
        f"- best main agent so far: {BEST}, worst against the baselines and exploiters scripted_l3 0.150"
        in table
    )
    assert f"(not the newest, {MAINS[-1]})" in table
    assert (
        f"- newest {MAINS[-1]} does worst against: {EXPLOITER} 0.000, scripted_l3 0.150, scripted_l4 0.300"
        in table
    )


def test_the_final_summary_names_the_best_main_agent_and_marks_the_reference() -> None:
    snap = snapshot()
    lines = final_lines("stop.max_generations=34", GenerationRecord.from_json(record_json(snap)), snap)
    assert lines[1].startswith("leaderboard, top 5. Ordered by who beats whom")
    assert lines[2] == BOARD_HEADER  # the strongest members' columns are named above them
    assert lines[3].split()[:2] == ["1", "scripted_l5"]
    assert any(
        line.startswith(f"best main agent so far: {BEST}") and "vs scripted_l5 0.300" in line
        for line in lines
    )
    (l5,) = [line for line in lines if line.strip().startswith("scripted_l5 ")]
    assert l5.endswith("the reference opponent")
    # the same from a record written before the ranking: ranked from the table
    old = final_lines(
        "stop.max_generations=34", GenerationRecord.from_json(record_json(snap, ranked=False)), snap
    )
    assert old[3] == lines[3]


def test_a_cycle_at_the_top_is_named_in_one_line_beside_the_leaderboard() -> None:
    ids, w = cycle()
    snap = PayoffSnapshot(2, ids, ["main_agent"] * 5, w, np.full((5, 5), 10), np.full(5, 0.2))
    record = GenerationRecord.from_json(
        {
            "generation": 2,
            "population": [{"id": a, "role": "main_agent"} for a in ids],
            **{k: list(v) if isinstance(v, tuple) else v for k, v in ranking_fields(snap).items()},
        }
    )
    assert record.ranking_note is not None and "rock beats scissors 0.70" in record.ranking_note
    assert record.ranking_note in summary_lines(2, record)
    assert record.ranking_note in leaderboard_markdown(record)


def test_the_headline_follows_the_newest_and_the_best_main_agent_against_the_reference() -> None:
    snap = snapshot()
    rating = {a: 1000.0 for a in snap.agent_ids}
    out = headline_scalars(snap, rating, {}, reference="scripted_l5", best=BEST)
    newest, best = "headline/main_agent_0/reference_win_rate", "headline/best_main/reference_win_rate"
    assert out[newest] == 0.3 and out[best] == 0.3  # every snapshot scores 0.3 against level 5
    assert {f"{newest}_low", f"{newest}_high", f"{best}_low", f"{best}_high"} <= set(out)
    assert not any("reference" in key for key in headline_scalars(snap, rating, {}))  # no reference
    layout = custom_scalars_layout(out)
    first, *_ = layout
    assert first == "against the reference opponent: the newest and the best main agent"
    titles = [chart[0] for chart in layout[first]]
    assert titles[1:] == [
        "main_agent_0's newest snapshot against the reference opponent, 95% interval",
        "the best main agent so far against the reference opponent, 95% interval",
    ]


def test_the_payoff_tables_focus_brings_in_the_best_main_agent_and_the_newest_ones_worst_opponents() -> None:
    snap = snapshot()
    tabled = {snap.agent_ids[i] for i in focus(snap).tabled}
    assert {BEST, EXPLOITER, "scripted_l3", MAINS[-1]} <= tabled
    assert BEST not in {snap.agent_ids[i] for i in focus(snap).members}  # the charts keep to the rest
    ids, _ = parse_payoff_text(payoff_text(snap, width=100))
    assert BEST in ids  # kept where the table is cut to fit 100 columns
