"""Reading a large league (issue 58): with an archive, ``report``, the payoff tables and heatmap
``report`` and the board show are of the active set's focus (the baselines, the meta-strategy's
support, each learner's newest snapshot, the handover) with one line about the archive, never a
grid of every member; their size does not grow with the archive.

A real run (rock-paper-scissors, six learners, an active set of 14) archives more members than
it keeps active by its fourth generation. (At 1,000 members, 805 archived, bench/league_scale.py's
league reads the same way: ``report`` 85 lines within 100 columns, the table 13 of 203 members,
the heatmap 560 x 554 pixels.)
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from light_league.cli import main
from light_league.tracking.payoff_render import (
    FULL_TABLE_MAX_AGENTS,
    IMAGE_WIDTH_PX,
    focus,
    payoff_heatmap_png,
    payoff_markdown,
)
from light_league.tracking.report import REPORT_WIDTH, load_payoff_snapshot, report, report_json

ROOT = Path(__file__).resolve().parents[2]
RPS = str(ROOT / "expr_configs" / "rps_tiny.yaml")
ARGS = [
    "stop.max_generations=4",
    "scheduler.main_exploiters=2",
    "scheduler.league_exploiters=3",
    "scheduler.steps_per_generation=128",
    *(
        f"scheduler.{role}.checkpoint_{end}_steps=128"
        for role in ("main_agent", "main_exploiter", "league_exploiter")
        for end in ("min", "max")
    ),
    "evaluation.episodes_per_pair=8",
    "execution.envs_per_worker=16",
    "league.meta_stability_draws=0",
    "league.active_set.size=14",
    "league.active_set.recent=3",
    "league.active_set.archive_sample=4",
    "--quiet",
]


def _named(text: str, members: set[str]) -> set[str]:
    return {m for m in members if re.search(rf"(?<![\w-]){re.escape(m)}(?![\w-])", text)}


def test_report_heatmap_and_board_show_the_focus_and_the_archive_in_one_line(tmp_path: Path) -> None:
    run = tmp_path / "run"
    assert main(["--config", RPS, "--run-dir", str(run), *ARGS]) == 0
    pool = json.loads((run / "pool.json").read_text())["agents"]
    archived = {a["agent_id"] for a in pool if a["metadata"].get("archived")}
    snapshot = load_payoff_snapshot(run)
    active = set(snapshot.agent_ids)  # the table solved, before the generation's own archiving
    last = json.loads((run / "generations.jsonl").read_text().splitlines()[-1])
    before = archived - set(last["archived_now"])  # archived in an earlier generation
    assert len(active) > FULL_TABLE_MAX_AGENTS and len(before) >= 5 and not active & before
    assert active | archived == {a["agent_id"] for a in pool}

    text = report(run)
    assert f"archive: {len(archived)} members outside the active set of {len(active)}" in text
    assert "`pool.json` marks them" in text
    shown = len(focus(snapshot).tabled)
    assert shown < len(active) and f"Showing {shown} of {len(active)} members" in text
    assert not _named(text, before)  # no archived member in the leaderboard, table or history
    assert max(len(line) for line in text.splitlines()) <= REPORT_WIDTH
    assert len(report_json(run)["leaderboard"]) == len(active)

    # what the board shows: the heatmap and the table of the focus, as logged each generation
    image = payoff_heatmap_png(snapshot)
    assert image.shape[1] == IMAGE_WIDTH_PX and image.shape[0] <= 640
    assert not _named(payoff_markdown(snapshot), before)
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    board = EventAccumulator(str(run / "tensorboard"), size_guidance={"images": 0, "tensors": 0})
    board.Reload()
    drawn = board.Images("league/payoff_heatmap")[-1]
    assert drawn.step == snapshot.generation and (drawn.width, drawn.height) == (
        image.shape[1],
        image.shape[0],
    )
    table = board.Tensors("league/payoff_table/text_summary")[-1].tensor_proto.string_val[0].decode()
    assert f"Showing {shown} of {len(active)} members" in table and not _named(table, before)
