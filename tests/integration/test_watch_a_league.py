"""A real tiny league, watched: TensorBoard events read back, the report command, documented keys,
the rating against an independent fit of the games, the console's first and last lines."""

from __future__ import annotations

import contextlib
import io
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import minimize
from tensorboard.backend.event_processing.event_accumulator import IMAGES, SCALARS, TENSORS, EventAccumulator
from tensorboard.plugins.custom_scalar import layout_pb2

from light_league.cli import main
from light_league.league import MatchDatabase
from light_league.tracking.logger import undocumented_keys
from light_league.tracking.payoff_render import parse_payoff_text
from light_league.tracking.tensorboard_logger import LAYOUT_TAG, PAYOFF_HEATMAP_TAG, PAYOFF_TABLE_TAG

ROOT = Path(__file__).resolve().parents[2]
RPS = str(ROOT / "expr_configs" / "rps_tiny.yaml")


@pytest.fixture(scope="module")
def watched(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """rps_tiny with the env's two baselines (``random``, the anchor, and ``nash``): the run
    directory and what the console printed."""
    path = tmp_path_factory.mktemp("watch") / "run"
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(
            [
                "--config",
                RPS,
                "--run-dir",
                str(path),
                "stop.max_generations=3",
                "scheduler.steps_per_generation=1024",
                "evaluation.episodes_per_pair=64",
                "evaluation.baselines=[random,nash]",
                "logging.console=plain",
            ]
        )
    assert code == 0
    return path, err.getvalue()


@pytest.fixture(scope="module")
def run_dir(watched: tuple[Path, str]) -> Path:
    return watched[0]


def accumulator(run_dir: Path) -> EventAccumulator:
    acc = EventAccumulator(str(run_dir / "tensorboard"), size_guidance={SCALARS: 0, IMAGES: 0, TENSORS: 0})
    acc.Reload()
    return acc


def last_text(acc: EventAccumulator, tag: str) -> str:
    (*_, event) = acc.Tensors(f"{tag}/text_summary")
    return str(event.tensor_proto.string_val[0].decode())


def test_payoff_text_and_images_per_generation_matching_the_match_log(run_dir: Path) -> None:
    acc = accumulator(run_dir)
    images = acc.Images(PAYOFF_HEATMAP_TAG)
    texts = acc.Tensors(f"{PAYOFF_TABLE_TAG}/text_summary")
    # images are drawn in the background on a CPU budget; by the run's end, every generation's
    assert sorted(e.step for e in images) == [0, 1, 2]
    assert [e.step for e in texts] == [0, 1, 2]
    matches = MatchDatabase(db_path=str(run_dir / "matches.jsonl"))
    for event in texts:
        ids, rates = parse_payoff_text(event.tensor_proto.string_val[0].decode())
        assert len(ids) >= 3
        for i, a in enumerate(ids):
            for j, b in enumerate(ids):
                if i != j:
                    assert rates[i, j] == pytest.approx(matches.win_rate(a, b), abs=5e-3)


def test_scalars_open_on_the_headline_and_are_documented(run_dir: Path) -> None:
    acc = accumulator(run_dir)
    keys = acc.Tags()["scalars"]
    for key in (
        "league/meta_entropy",
        "league/population_size",
        "rollout/env_steps_per_s",
        "timing/train_s",
        "headline/main_agent_0/rating",
        "headline/main_agent_0/rating_low",
        "headline/main_agent_0/win_rate/random",
        "headline/main_agent_0/win_rate/nash",
        "headline/main_agent_0/reference_win_rate",  # nash: the baseline rps rates highest
        "headline/main_agent_0/reference_win_rate_low",
    ):
        assert key in keys
        assert [e.step for e in acc.Scalars(key)] == [0, 1, 2]
    assert any(k.startswith("train/main_agent_0/") for k in keys)
    assert not any(k.startswith(("rating/", "elo_sequential/", "nash/", "support/")) for k in keys)
    assert undocumented_keys(keys, ROOT / "docs" / "metrics.md") == []
    (*_, layout) = acc.Tensors(LAYOUT_TAG)
    first, second = layout_pb2.Layout.FromString(layout.tensor_proto.string_val[0]).category[:2]
    assert first.title == "against the reference opponent: the newest and the best main agent"
    assert first.chart[1].margin.series[0].value == "headline/main_agent_0/reference_win_rate"
    assert second.title == "rating of the newest main agent" and not second.closed
    assert second.chart[0].margin.series[0].value == "headline/main_agent_0/rating"
    last = json.loads((run_dir / "generations.jsonl").read_text().splitlines()[-1])
    assert last["reference"] == "nash" and {e["baseline"] for e in last["newest"]} == {"nash"}


def test_payoff_tables_are_saved_as_json_and_npy(run_dir: Path) -> None:
    for g in range(3):
        data = json.loads((run_dir / "payoff" / f"gen_{g:04d}.json").read_text())
        rates = np.load(run_dir / "payoff" / f"gen_{g:04d}.npy")
        assert rates.shape == (len(data["agent_ids"]),) * 2


def test_report_prints_the_latest_table_and_exports_csv(
    run_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    csv_path = tmp_path / "gen1.csv"
    assert main(["report", str(run_dir), "--generation", "1", "--csv", str(csv_path)]) == 0
    out = capsys.readouterr().out
    last = json.loads((run_dir / "payoff" / "gen_0001.json").read_text())
    for agent in last["agent_ids"]:
        assert agent in out
    assert csv_path.read_text().count("\n") >= len(last["agent_ids"])
    assert main(["report", str(run_dir), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["generation"] == 2 and {r["member"] for r in data["leaderboard"]} >= {"random", "nash"}


def independent_fit(run_dir: Path, ids: list[str]) -> tuple[dict[str, float], dict[str, float]]:
    """The match log's evaluation games fitted again, written out here: Bradley-Terry on the Elo
    scale, ``random`` held at 800, one virtual draw of each other member against a 1000-rated
    opponent, maximised by BFGS; the standard errors from the Fisher information summed game by
    game."""
    free = [a for a in ids if a != "random"]
    games: list[tuple[str, str, float]] = []
    for line in (run_dir / "matches.jsonl").read_text().splitlines():
        m = json.loads(line)
        # a line of n games: the log-likelihood is linear in a game's outcome, so n games at their
        # mean score fit as the n games themselves do
        if m["kind"] == "eval":
            games += [(m["a"], m["b"], float(m["outcome"]))] * m.get("games", 1)
    c = math.log(10) / 400

    def strengths(x: np.ndarray) -> dict[str, float]:
        return {"random": 800.0 * c, **{a: v * c for a, v in zip(free, x, strict=True)}}

    def negll(x: np.ndarray) -> float:
        s = strengths(x)
        total = 0.0
        for a, b, outcome in games:
            d = s[a] - s[b]
            total += outcome * np.logaddexp(0.0, -d) + (1.0 - outcome) * np.logaddexp(0.0, d)
        for a in free:  # the virtual draw
            d = s[a] - 1000.0 * c
            total += 0.5 * np.logaddexp(0.0, -d) + 0.5 * np.logaddexp(0.0, d)
        return float(total)

    x = minimize(negll, np.full(len(free), 1000.0), method="BFGS", options={"gtol": 1e-7}).x
    s = strengths(x)
    index = {a: k for k, a in enumerate(free)}
    info = np.zeros((len(free), len(free)))
    for a, b, _ in games:
        w = 1.0 / (1.0 + math.exp(-(s[a] - s[b])))
        w *= 1.0 - w
        for p, q, sign in ((a, a, 1), (b, b, 1), (a, b, -1), (b, a, -1)):
            if p in index and q in index:
                info[index[p], index[q]] += sign * w
    for a in free:
        w = 1.0 / (1.0 + math.exp(-(s[a] - 1000.0 * c)))
        info[index[a], index[a]] += w * (1.0 - w)
    se = np.sqrt(np.diag(np.linalg.inv(info))) / c
    return {"random": 800.0, **dict(zip(free, x.tolist()))}, {a: float(e) for a, e in zip(free, se)}


def test_the_rating_agrees_with_an_independent_fit_everywhere_it_is_shown(
    watched: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """One fit, one anchor: the logged ratings and intervals equal an independent fit of the match
    log's games, and the console, report, TensorBoard's leaderboard and headline show them."""
    run_dir, console = watched
    last = json.loads((run_dir / "generations.jsonl").read_text().splitlines()[-1])
    ids = [m["id"] for m in last["population"]]
    rating, se = independent_fit(run_dir, ids)
    assert last["rating_anchor"] == "random" and last["rating"]["random"] == 800.0
    assert last["rating"] == pytest.approx(rating, abs=0.02)
    assert last["rating"]["nash"] != 1000.0  # the baseline's declared rating is not held
    for agent, error in se.items():
        low, high = last["rating_ci95"][agent]
        assert (high - low) / 2 == pytest.approx(1.959964 * error, abs=0.1)
    shown = {
        a: f"{last['rating'][a]:.0f} ± {(last['rating_ci95'][a][1] - last['rating_ci95'][a][0]) / 2:.0f}"
        for a in se
    }
    acc = accumulator(run_dir)
    board = last_text(acc, "league/leaderboard")
    capsys.readouterr()
    assert main(["report", str(run_dir)]) == 0
    report = capsys.readouterr().out
    final = console.split("run stopped:")[1]
    roles = {m["id"]: m["role"] for m in last["population"]}
    for agent, text in shown.items():
        for table in (board, report):  # | # | member | role | layer | vs Nash | rating | meta |
            (row,) = [line for line in table.splitlines() if f"| {agent} | {roles[agent]} | " in line]
            assert row.split(" | ")[5] == text
        assert text in final or agent not in final  # the final summary shows the top 5
    main_agent = next(e for e in last["newest"] if e["role"] == "main_agent")["id"]
    (*_, event) = acc.Scalars("headline/main_agent_0/rating")
    assert event.step == last["generation"] and event.value == pytest.approx(
        last["rating"][main_agent], abs=0.01
    )
    (*_, low) = acc.Scalars("headline/main_agent_0/rating_low")
    assert low.value == pytest.approx(last["rating_ci95"][main_agent][0], abs=0.01)


def test_the_console_opens_on_the_run_and_closes_with_a_summary(watched: tuple[Path, str]) -> None:
    run_dir, console = watched
    lines = console.splitlines()
    assert lines[0] == (
        f"run directory {run_dir} · backend local (1 rollout worker) · stops at stop.max_generations=3"
    )
    final = console.split("run stopped: ")[1].splitlines()
    assert final[0].startswith("stop.max_generations=3 after 3 generations")
    assert "random = 800 held fixed" in final[1]
    versus = [line.split() for line in final if line.startswith("     ")]
    assert [v[0] for v in versus] == ["random", "nash"] and all(v[4].startswith("(") for v in versus)
    assert " ".join(versus[1][5:]) == "the reference opponent"
