"""bench/adaptive_evaluation.py: its bookkeeping, and one tiny real run on the scripted baselines."""

from __future__ import annotations

import json
from pathlib import Path

import adaptive_evaluation as bench  # bench/ is on pytest's pythonpath
import pytest

from light_league import envs
from light_league.run_dir import RUN_FORMAT
from light_league.run_reader import RunReader

#: four scripted baselines joining over three generations
MEMBERS = [
    bench.Member("scripted_l2", "baseline", 0),
    bench.Member("scripted_l3", "baseline", 0),
    bench.Member("scripted_l4", "baseline", 3),
    bench.Member("scripted_l5", "baseline", 7),
]


def test_fewest_is_the_cheapest_setting_from_which_on_every_seed_meets_the_target() -> None:
    rows = [(100, [0.01, 0.02]), (200, [0.2, 0.01]), (400, [0.04, 0.05]), (800, [0.0, 0.03])]
    assert bench.fewest(rows, 0.05) == 400  # 100 met it by luck, but 200 did not in one seed
    assert bench.fewest(list(reversed(rows)), 0.05) == 400  # order of the rows does not matter
    assert bench.fewest(rows, 0.01) is None  # the most expensive row misses it


def test_growth_orders_members_by_generation_and_tv_is_half_the_l1_distance() -> None:
    groups = bench.growth(list(reversed(MEMBERS)))
    assert [[m.agent_id for m in g] for g in groups] == [
        ["scripted_l3", "scripted_l2"],
        ["scripted_l4"],
        ["scripted_l5"],
    ]
    assert bench.tv({"a": 1.0}, {"b": 1.0}) == pytest.approx(1.0)
    assert bench.tv({"a": 0.5, "b": 0.5}, {"a": 0.75, "b": 0.25}) == pytest.approx(0.25)


def test_members_from_run_takes_baselines_and_the_chosen_generations(tmp_path: Path) -> None:
    population = [{"id": b, "role": "baseline"} for b in ("random", "scripted_l1")]
    records = []
    for gen in range(4):  # a snapshot of the main agent joins in every generation
        population = [*population, {"id": f"main_agent_0-v{gen}", "role": "main_agent"}]
        records.append(json.dumps({"generation": gen, "population": population}))
    (tmp_path / "manifest.json").write_text(json.dumps({"format": RUN_FORMAT}))
    (tmp_path / "config.yaml").write_text("{}\n")
    (tmp_path / "generations.jsonl").write_text("\n".join(records) + "\n")
    run = RunReader(tmp_path)
    members = bench.members_from_run(run, [1, 3], per_generation=1)
    assert [(m.agent_id, m.generation) for m in members] == [
        ("random", 0),
        ("scripted_l1", 0),
        ("main_agent_0-v1", 1),
        ("main_agent_0-v3", 3),
    ]
    assert members[2].path == str(tmp_path / "policies" / "main_agent_0-v1")
    with pytest.raises(SystemExit, match="expected 2 members per generation"):
        bench.members_from_run(run, [1, 3])


def test_game_bank_replays_the_same_games_and_plays_more_only_when_short(tmp_path: Path) -> None:
    games = bench.Games("battalion", {"team_size": 2}, MEMBERS, envs=8)
    bank = bench.GameBank(games.rollout(5), tmp_path / "bank.json")
    first = [r.outcome for r in bank.evaluate([("scripted_l2", "scripted_l4", 10)]).results]
    assert len(first) == 10 and bank.played == bench.CHUNK  # a short pair plays a whole chunk
    more = [r.outcome for r in bank.evaluate([("scripted_l2", "scripted_l4", 60)]).results]
    assert len(more) == 60 and bank.played == 2 * bench.CHUNK  # 70 > 64: one more chunk
    bank.restart()
    again = [r.outcome for r in bank.evaluate([("scripted_l2", "scripted_l4", 70)]).results]
    assert again == first + more and bank.played == 2 * bench.CHUNK  # rewound: the same games, none played
    bank.save()
    reread = bench.GameBank(games.rollout(5), tmp_path / "bank.json")
    assert [r.outcome for r in reread.evaluate([("scripted_l2", "scripted_l4", 70)]).results] == again


@pytest.mark.integration
def test_tiny_bench_run_uses_the_evaluation_manager_and_caches_the_reference(tmp_path: Path) -> None:
    games = bench.Games("battalion", {"team_size": 2}, MEMBERS, envs=16)
    setup = bench.Setup(
        envs.make_spec("battalion", team_size=2), "battalion", {"name": "nash"}, ["scripted_l2"]
    )
    lines: list[str] = []
    kwargs = dict(
        reference_games=20,
        reference_path=tmp_path / "ref.json",
        cache=tmp_path / "banks",
        seeds=[0, 1],
        fixed=[2, 8],
        budgets=[10, 40],
        batch=2,
        cap=30,
        target=0.05,
        emit=lines.append,
    )
    out = bench.run_bench(MEMBERS, games, setup, **kwargs)
    ref = json.loads((tmp_path / "ref.json").read_text())
    assert ref["ids"] == [m.agent_id for m in MEMBERS] and ref["games_per_pair"] == 20
    assert sum(ref["meta"].values()) == pytest.approx(1.0)
    assert all(sum(g) == 20 * 3 for g in ref["games"])  # every pair 20 games (both seat orders)
    # fixed n: n games per pair (symmetric seats); 6 pairs
    fixed = {value: runs for value, _, runs in out["results"]["fixed"]}
    assert [r.games for r in fixed[2]] == [12, 12] and [r.games for r in fixed[8]] == [48, 48]
    # adaptive: a first batch of 2 for each new pair, then refinement up to the budget per generation
    adaptive = {value: runs for value, _, runs in out["results"]["adaptive"]}
    for run in adaptive[40]:
        # three generations of at most 40 (the first has one pair, full at the cap of 30)
        assert 2 * 40 < run.games <= 3 * 40
        assert max(run.cell_games.values()) <= 30  # the cap
    assert any("ratio fixed / adaptive" in line or "not reached" in line for line in lines)
    # a second run reads the reference from its file (same games per pair: nothing played again)
    before = (tmp_path / "ref.json").read_text()
    bench.run_bench(MEMBERS, games, setup, **{**kwargs, "fixed": [2], "budgets": [10]})
    assert (tmp_path / "ref.json").read_text() == before
