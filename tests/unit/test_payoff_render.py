"""Payoff snapshot rendering: markdown round trip, CSV, JSON round trip, heatmap and Nash chart pixels."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
from matplotlib import colormaps

from light_league.agents.payoff_table import PayoffTable
from light_league.errors import CorruptFileError
from light_league.tracking.formats import fraction, rating
from light_league.tracking.logger import PayoffSnapshot
from light_league.tracking.payoff_render import (
    DIAGONAL_COLOR,
    FULL_TABLE_MAX_AGENTS,
    ROLE_COLORS,
    focus,
    meta_strategy_bar_figure,
    meta_strategy_bar_png,
    meta_strategy_text,
    mixture_text,
    newest_snapshots,
    parse_payoff_markdown,
    payoff_csv,
    payoff_heatmap_figure,
    payoff_heatmap_png,
    payoff_markdown,
    payoff_text,
)
from light_league.utils.text import fixed

ROLES = ["main_agent", "main_exploiter", "league_exploiter", "best_response", "baseline"]


def synthetic_snapshot(generation: int, n: int | None = None, seed: int = 0) -> PayoffSnapshot:
    """A symmetric-looking meta-game of ``3 + generation`` agents with one never-played pair."""
    n = 3 + generation if n is None else n
    rng = np.random.default_rng(seed + generation)
    upper = rng.uniform(size=(n, n))
    win_rates = np.triu(upper, 1) + np.tril(1.0 - upper.T, -1)
    np.fill_diagonal(win_rates, 0.5)
    games = rng.integers(1, 200, size=(n, n))
    games = games + games.T
    win_rates[0, n - 1] = win_rates[n - 1, 0] = np.nan
    games[0, n - 1] = games[n - 1, 0] = 0
    nash = rng.dirichlet(np.ones(n))
    ids = [f"agent_{i}" for i in range(n)]
    return PayoffSnapshot(generation, ids, [ROLES[i % len(ROLES)] for i in range(n)], win_rates, games, nash)


def two_agents(
    rates: list[list[float]],
    games: list[list[int]],
    nash: list[float],
    *,
    generation: int = 0,
    ids: tuple[str, str] = ("a", "b"),
    roles: tuple[str, str] = ("main_agent", "baseline"),
) -> PayoffSnapshot:
    return PayoffSnapshot(
        generation, list(ids), list(roles), np.array(rates), np.array(games), np.array(nash)
    )


def _hex_rgb(color: str) -> np.ndarray:
    return np.array([int(color[i : i + 2], 16) for i in (1, 3, 5)], dtype=np.uint8)


def _has_color(image: np.ndarray, rgb: np.ndarray, tol: int = 2) -> bool:
    return bool(np.any(np.all(np.abs(image.astype(int) - rgb.astype(int)) <= tol, axis=-1)))


def test_markdown_round_trip_gives_back_rates_to_three_decimals_and_games() -> None:
    snap = synthetic_snapshot(4)
    ids, rates, games = parse_payoff_markdown(payoff_markdown(snap))
    assert ids == snap.agent_ids
    np.testing.assert_array_equal(np.isnan(rates), np.isnan(snap.win_rates))
    np.testing.assert_allclose(rates, np.round(snap.win_rates, 3), atol=1e-12)
    np.testing.assert_array_equal(games, snap.games)


def test_markdown_cells_known_answer() -> None:
    snap = two_agents([[0.5, 0.75], [0.25, np.nan]], [[10, 4], [4, 0]], [1.0, 0.0], generation=7)
    text = payoff_markdown(snap)
    assert "| row vs column | a | b |" in text
    assert "| a (main_agent) | 0.500 (10) | 0.750 (4) |" in text
    assert "| b (baseline) | 0.250 (4) | – (0) |" in text
    assert "Meta-strategy (nash): a 1.000, b 0.000" in text
    assert text.startswith("Generation 7:")


def test_markdown_escapes_pipes_in_agent_ids() -> None:
    snap = two_agents([[0.5, 1.0], [0.0, 0.5]], [[2, 2], [2, 2]], [1.0, 0.0], ids=("x|1", "y"))
    ids, rates, _ = parse_payoff_markdown(payoff_markdown(snap))
    assert ids == ["x|1", "y"]
    np.testing.assert_allclose(rates, [[0.5, 1.0], [0.0, 0.5]])


def test_parse_rejects_a_non_square_table() -> None:
    text = "| row vs column | a | b |\n|---|---:|---:|\n| a (main_agent) | 0.500 (1) | 0.500 (1) |\n"
    with pytest.raises(ValueError, match="2 columns but 1 rows"):
        parse_payoff_markdown(text)


def test_csv_matches_the_snapshot_with_empty_cells_for_unplayed_pairs() -> None:
    snap = synthetic_snapshot(2)
    rows = list(csv.reader(io.StringIO(payoff_csv(snap))))
    assert rows[0] == ["agent", "role", *snap.agent_ids]
    for i, row in enumerate(rows[1:]):
        assert row[:2] == [snap.agent_ids[i], snap.roles[i]]
        parsed = np.array([np.nan if c == "" else float(c) for c in row[2:]])
        np.testing.assert_allclose(parsed, snap.win_rates[i], rtol=1e-5)
    games_rows = list(csv.reader(io.StringIO(payoff_csv(snap, field="games"))))
    assert [int(c) for c in games_rows[1][2:]] == snap.games[0].tolist()


def test_snapshot_json_round_trip_uses_null_for_nan() -> None:
    snap = synthetic_snapshot(1)
    data = json.loads(json.dumps(snap.to_json(), allow_nan=False))
    assert data["win_rates"][0][-1] is None
    back = PayoffSnapshot.from_json(data)
    np.testing.assert_array_equal(back.win_rates, snap.win_rates)
    np.testing.assert_array_equal(back.games, snap.games)
    np.testing.assert_allclose(back.meta_strategy, snap.meta_strategy)
    assert (back.generation, back.agent_ids, back.roles) == (snap.generation, snap.agent_ids, snap.roles)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("win_rates", np.zeros((2, 3)), r"win_rates must have shape \(3, 3\)"),
        ("meta_strategy", np.zeros(2), r"meta_strategy must have shape \(3,\)"),
        ("win_rates", np.full((3, 3), 1.5), r"must lie in \[0, 1\]"),
        ("roles", ["main_agent"], "1 roles for 3 agent ids"),
    ],
)
def test_snapshot_rejects_bad_input_with_a_clear_message(field: str, value: object, message: str) -> None:
    fields = synthetic_snapshot(0).__dict__ | {field: value}
    with pytest.raises(ValueError, match=message):
        PayoffSnapshot(**fields)


def test_from_json_with_a_missing_key_is_a_corrupt_file_error() -> None:
    data = synthetic_snapshot(0).to_json()
    del data["games"]
    with pytest.raises(CorruptFileError, match="KeyError"):
        PayoffSnapshot.from_json(data)


def _cmap_rgb(value: float) -> np.ndarray:
    return np.array([round(255 * c) for c in colormaps["RdBu"](value)[:3]], dtype=np.uint8)


def _cell_area(image: np.ndarray) -> np.ndarray:
    """The image without its title, tick labels and colour bar."""
    h, w = image.shape[:2]
    return image[h // 8 : h - h // 8, : int(w * 0.8)]


def test_heatmap_colours_follow_the_win_rates() -> None:
    one_sided = two_agents([[0.5, 1.0], [0.0, 0.5]], [[4, 4], [4, 4]], [1.0, 0.0])
    image = payoff_heatmap_png(one_sided)
    assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3
    assert _has_color(_cell_area(image), _cmap_rgb(1.0)) and _has_color(_cell_area(image), _cmap_rgb(0.0))
    even = two_agents([[0.5, 0.5], [0.5, 0.5]], [[1, 1], [1, 1]], [0.5, 0.5])
    assert not _has_color(_cell_area(payoff_heatmap_png(even)), _cmap_rgb(1.0))


def league_snapshot(
    mains: int = 24, main_exploiters: int = 13, league_exploiters: int = 12
) -> PayoffSnapshot:
    """A 55-member league like generation 23 of league.yaml: 6 baselines, three learners' snapshots."""
    ids = ["random"] + [f"scripted_l{k}" for k in range(1, 6)]
    roles = ["baseline"] * 6
    for learner, role, count in (
        ("main_agent_0", "main_agent", mains),
        ("main_exploiter_0", "main_exploiter", main_exploiters),
        ("league_exploiter_0", "league_exploiter", league_exploiters),
    ):
        ids += [f"{learner}-v{v}" for v in range(count)]
        roles += [role] * count
    n = len(ids)
    strength = np.random.default_rng(0).normal(size=n)
    rates = 1.0 / (1.0 + np.exp(strength[None, :] - strength[:, None]))
    np.fill_diagonal(rates, 0.5)
    games = np.full((n, n), 16)
    np.fill_diagonal(games, 0)
    nash = np.zeros(n)
    # the masses of the chart: v9 and v11 beside exploiter snapshots, a league exploiter
    for agent, p in (("scripted_l5", 0.3), ("main_agent_0-v9", 0.149), ("main_agent_0-v11", 0.27)):
        nash[ids.index(agent)] = p
    nash[ids.index("main_exploiter_0-v4")] = 0.2
    nash[ids.index("league_exploiter_0-v7")] = 0.081
    return PayoffSnapshot(23, ids, roles, rates, games, nash)


def _bar_labels(snap: PayoffSnapshot) -> dict[str, float]:
    """``{label text: bar length}``, pairing each bar with the tick label at its own height."""
    ax = meta_strategy_bar_figure(snap).axes[0]
    ticks = {round(float(y), 6): label.get_text() for y, label in zip(ax.get_yticks(), ax.get_yticklabels())}
    out = {}
    for bar in ax.patches:
        centre = round(bar.get_y() + bar.get_height() / 2, 6)
        assert centre in ticks, f"bar at y={centre} has no label of its own"
        out[ticks[centre]] = bar.get_width()
    return out


@pytest.mark.parametrize("snap", [league_snapshot(), synthetic_snapshot(4), synthetic_snapshot(0, n=30)])
def test_every_meta_strategy_bar_is_labelled_with_its_own_member(snap: PayoffSnapshot) -> None:
    labelled = _bar_labels(snap)
    for label, width in labelled.items():
        agent = label.removesuffix(" (newest)")
        assert width == pytest.approx(snap.meta_strategy[snap.agent_ids.index(agent)]), label
    shown_support = {snap.agent_ids[i] for i in focus(snap).support}
    assert shown_support <= {label.removesuffix(" (newest)") for label in labelled}
    assert len(shown_support) == min(8, int(np.sum(snap.meta_strategy >= 5e-4)))


def test_meta_strategy_chart_of_a_large_league_names_the_support_and_every_learners_newest_snapshot() -> None:
    labelled = _bar_labels(league_snapshot())
    assert labelled["main_agent_0-v9"] == pytest.approx(0.149)
    assert labelled["main_agent_0-v11"] == pytest.approx(0.27)
    assert labelled["league_exploiter_0-v7"] == pytest.approx(0.081)
    for newest in (
        "main_agent_0-v23 (newest)",
        "main_exploiter_0-v12 (newest)",
        "league_exploiter_0-v11 (newest)",
    ):
        assert labelled[newest] == 0.0


def test_focus_is_the_baselines_the_support_and_each_learners_newest_snapshot() -> None:
    snap = league_snapshot()
    chosen = focus(snap)
    names = [snap.agent_ids[i] for i in chosen.members]
    assert names == [
        "random", "scripted_l1", "scripted_l2", "scripted_l3", "scripted_l4", "scripted_l5",
        "main_agent_0-v9", "main_agent_0-v11", "main_agent_0-v23",
        "main_exploiter_0-v4", "main_exploiter_0-v12",
        "league_exploiter_0-v7", "league_exploiter_0-v11",
    ]  # fmt: skip
    assert [snap.agent_ids[i] for i in chosen.support][:2] == ["scripted_l5", "main_agent_0-v11"]
    assert newest_snapshots(["a-v2", "a-v10", "b", "c-v0"], ["main_agent"] * 3 + ["baseline"]) == [1]


def test_heatmap_of_a_large_league_is_readable_at_tensorboards_card_size() -> None:
    snap = league_snapshot()
    image = payoff_heatmap_png(snap)
    assert image.shape[1] <= 600 and image.shape[0] <= 700  # shown about 350-500 px wide, unscaled
    ax = payoff_heatmap_figure(snap).axes[0]
    rows = [t.get_text() for t in ax.get_yticklabels()]
    assert rows == [snap.agent_ids[i] for i in focus(snap).members]
    assert min(t.get_fontsize() for t in ax.get_yticklabels()) >= 8
    assert any("13 of 55 members" in t.get_text() for t in ax.figure.texts)


def test_small_populations_are_drawn_and_tabled_whole_in_role_blocks() -> None:
    snap = synthetic_snapshot(0, n=FULL_TABLE_MAX_AGENTS)
    ax = payoff_heatmap_figure(snap).axes[0]
    rows = [t.get_text() for t in ax.get_yticklabels()]
    assert sorted(rows) == sorted(snap.agent_ids)
    blocks = [snap.roles[snap.agent_ids.index(r)] for r in rows]
    assert blocks == sorted(
        blocks, key=["baseline", "main_agent", "main_exploiter", "league_exploiter", "best_response"].index
    )
    assert parse_payoff_markdown(payoff_markdown(snap))[0] == snap.agent_ids


def test_markdown_of_a_large_league_shows_the_focus_and_the_whole_table_on_request() -> None:
    snap = league_snapshot()
    short = payoff_markdown(snap)
    ids, _, _ = parse_payoff_markdown(short)
    assert ids == [snap.agent_ids[i] for i in focus(snap).tabled]  # the handover too (test_leaderboard)
    assert set(focus(snap).members) <= set(focus(snap).tabled)
    assert max(len(line) for line in short.splitlines()) < 400
    assert f"Showing {len(ids)} of 55 members" in short and "--full" in short
    assert "the other 50 members 0.000" in short
    whole, _, _ = parse_payoff_markdown(payoff_markdown(snap, full=True))
    assert whole == snap.agent_ids


def test_diagonal_and_never_played_cells_are_rendered_as_docs_metrics_md_says() -> None:
    table = PayoffTable()
    table.add("a", "a", 1.0, 2.0)  # even self-play games do not change the defined diagonal
    rates, games = table.matrix(["a", "b"])
    np.testing.assert_array_equal(np.diag(rates), [0.5, 0.5])
    np.testing.assert_array_equal(np.diag(games), [0, 0])
    assert np.isnan(rates[0, 1]) and games[0, 1] == 0
    snap = two_agents(rates.tolist(), games.astype(int).tolist(), [0.5, 0.5])
    assert payoff_csv(snap).splitlines()[1] == "a,main_agent,0.5,"
    text = payoff_markdown(snap)
    assert "| a (main_agent) | 0.500 (0) | – (0) |" in text
    image = payoff_heatmap_png(snap)
    assert _has_color(image, _hex_rgb(DIAGONAL_COLOR))
    doc = (Path(__file__).resolve().parents[2] / "docs" / "metrics.md").read_text(encoding="utf-8")
    for phrase in (
        "`0.500 (0)`",
        "`– (0)`",
        "hatched",
        "light grey",
        f"`{DIAGONAL_COLOR}`",
        "`null`",
        "empty",
    ):
        assert phrase in doc, phrase


def test_meta_strategy_bars_are_coloured_by_role() -> None:
    snap = two_agents(
        [[0.5, 0.4], [0.6, 0.5]], [[2, 2], [2, 2]], [0.7, 0.3], roles=("main_agent", "main_exploiter")
    )
    image = meta_strategy_bar_png(snap)
    assert _has_color(image, _hex_rgb(ROLE_COLORS["main_agent"]))
    assert _has_color(image, _hex_rgb(ROLE_COLORS["main_exploiter"]))
    assert not _has_color(image, _hex_rgb(ROLE_COLORS["best_response"]))


def _wide_support() -> PayoffSnapshot:
    """league_snapshot with 15 members in the meta-strategy's support, the 8 largest holding 0.871
    and 7 more 0.129 between them."""
    snap = league_snapshot()
    meta = np.zeros(snap.size)
    big = [snap.agent_ids.index(a) for a in ("scripted_l4", "main_agent_0-v9", "main_agent_0-v11")]
    rest = [i for i in range(snap.size) if i not in big and snap.roles[i] != "baseline"][:12]
    meta[big] = [0.4, 0.25, 0.096]
    meta[rest[:5]] = 0.025
    meta[rest[5:]] = 0.129 / 7
    return PayoffSnapshot(
        snap.generation, snap.agent_ids, snap.roles, snap.win_rates, snap.games, meta, meta_solver="qre"
    )


def _masses(text: str) -> float:
    """The sum of the masses a mixture line names, counted members included."""
    return sum(float(m) for m in re.findall(r" (\d\.\d{3})(?=[,;]|$)", text))


def test_every_place_naming_the_support_accounts_for_all_its_mass() -> None:
    """A support of 15 where the focus names 8: the mixture lines name 8 and count the other 7
    with their mass, so what they show adds up to 1; the charts' titles say what is left out."""
    snap = _wide_support()
    support = focus(snap).support
    assert focus(snap).support_size == 15 and len(support) == 8
    left_out = float(snap.meta_strategy.sum() - snap.meta_strategy[support].sum())
    line = meta_strategy_text(snap)
    assert f"; 7 more in the support {left_out:.3f}" in line
    assert _masses(line) == pytest.approx(1.0, abs=8e-3)
    for text in (payoff_markdown(snap), payoff_text(snap), payoff_text(snap, width=100)):
        (meta_line,) = [x for x in text.splitlines() if x.startswith("Meta-strategy (qre): ")]
        assert f"7 more in the support {left_out:.3f}" in meta_line
        assert _masses(meta_line) == pytest.approx(1.0, abs=8e-3)
    heatmap_title = " ".join(t.get_text() for t in payoff_heatmap_figure(snap).texts)
    assert f"7 more support members hold {left_out:.3f}" in heatmap_title
    bar_title = " ".join(t.get_text() for t in meta_strategy_bar_figure(snap).texts)
    assert (
        "15 of 55 members in the support" in bar_title
        and f"7 more support members hold {left_out:.3f}" in bar_title
    )


def test_a_probe_of_a_wide_meta_strategy_counts_the_mass_it_does_not_name() -> None:
    from light_league.evaluation.probe import ProbeResult
    from light_league.exploit import summary_line

    weights = {"a": 0.5, "b": 0.2, "c": 0.1, "d": 0.1, "e": 0.06, "f": 0.04}
    result = ProbeResult("meta", 3, weights, 1000, 64, 0.1, [0.0, 0.2], 0.55, [0.5, 0.6], None, None, 0, 1.0)
    assert "(generation 3: a 0.500, b 0.200, c 0.100 and 3 more holding 0.200)" in summary_line(
        result, Path("x")
    )


def test_a_number_that_rounds_to_zero_reads_0_000_never_minus_0_000() -> None:
    assert [fixed(v, 3) for v in (-0.0001, -0.0, 0.0004, -0.0006)] == ["0.000", "0.000", "0.000", "-0.001"]
    assert (fixed(-1e-12, 2), fraction(-1e-9), rating(-0.4)) == ("0.00", "0.000", "0")
    # a solver's mass a hair below 0, and a sum of the members outside the support below 0
    mass = np.array([0.6, 0.4 + 2e-16, -1e-12, -3e-16])
    ids = ["a", "b", "c", "d"]
    assert mixture_text(ids, mass, full=True) == "a 0.600, b 0.400, c 0.000, d 0.000"
    assert mixture_text(ids, mass) == "a 0.600, b 0.400; the other 2 members 0.000"
