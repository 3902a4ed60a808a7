"""MatchDatabase: win rates from the in-memory index, torn lines, batches, generation truncation."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from light_league.league import MatchDatabase
from light_league.utils.atomic import JsonlLog


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "matches.jsonl"


def test_unplayed_pair_is_even(db_path: Path) -> None:
    db = MatchDatabase(db_path=db_path)
    assert db.win_rate("a", "b") == 0.5
    assert db.games("a", "b") == 0
    assert db.win_rates_for("a") == {}


def test_win_rate_is_wins_plus_half_draws_over_games(db_path: Path) -> None:
    db = MatchDatabase(db_path=db_path)
    for outcome in (1.0, 1.0, 0.5, 0.0, 0.5):  # 2 wins, 2 draws, 1 loss
        db.record("a", "b", outcome)
    assert db.win_rate("a", "b") == pytest.approx((2 + 0.5 * 2) / 5)
    assert db.win_rate("b", "a") == pytest.approx(1 - 3 / 5)
    assert db.games("a", "b") == db.games("b", "a") == 5
    assert len(db) == 5


def test_games_recorded_from_either_side_count_for_both(db_path: Path) -> None:
    db = MatchDatabase(db_path=db_path)
    db.record("a", "b", 1.0)
    db.record("b", "a", 1.0)
    db.record("b", "a", 0.0)
    assert db.win_rate("a", "b") == pytest.approx(2 / 3)
    assert db.win_rate("a", "b") + db.win_rate("b", "a") == pytest.approx(1.0)


def test_win_rates_for_lists_every_opponent(db_path: Path) -> None:
    db = MatchDatabase(db_path=db_path)
    db.record("a", "b", 1.0)
    db.record("c", "a", 0.25)
    db.record("b", "c", 1.0)
    assert db.win_rates_for("a") == {"b": 1.0, "c": pytest.approx(0.75)}
    assert db.win_rates_for("c") == {"a": 0.25, "b": 0.0}
    assert sorted(db.players()) == ["a", "b", "c"]


@pytest.mark.parametrize("bad", [1.01, -0.5, float("nan"), "win"])
def test_outcome_outside_unit_interval_names_the_value(db_path: Path, bad: object) -> None:
    db = MatchDatabase(db_path=db_path)
    with pytest.raises(ValueError, match="outcome must"):
        db.record("a", "b", bad)  # type: ignore[arg-type]
    assert len(db) == 0 and (not db_path.exists() or db_path.read_text() == "")


def test_record_many_is_all_or_nothing(db_path: Path) -> None:
    db = MatchDatabase(db_path=db_path)
    db.record_many(
        [("a", "b", 1.0), ("a", "b", 0.0, {"generation": 2}), {"a": "b", "b": "c", "outcome": 0.5}]
    )
    assert len(db) == 3 and db.win_rate("a", "b") == 0.5 and db.games("b", "c") == 1
    with pytest.raises(ValueError, match="2.0"):
        db.record_many([("a", "b", 1.0), ("a", "b", 2.0)])
    assert len(db) == 3 and len(MatchDatabase(db_path=db_path)) == 3


def test_a_line_of_several_games_counts_as_that_many(db_path: Path) -> None:
    db = MatchDatabase(db_path=db_path)
    db.record("a", "b", 0.75, games=4)  # 3 wins, 1 loss, on one line
    db.record("a", "b", 0.0)
    assert db.games("a", "b") == db.games("b", "a") == 5 and len(db) == 5
    assert db.win_rate("a", "b") == pytest.approx(3 / 5) and db.win_rate("b", "a") == pytest.approx(2 / 5)
    assert len(db_path.read_text().splitlines()) == 2
    again = MatchDatabase(db_path=db_path)  # read back from the file
    assert again.games("a", "b") == 5 and again.win_rate("a", "b") == pytest.approx(3 / 5)


@pytest.mark.parametrize("bad", [0, -2, 1.5, "4", True])
def test_games_must_be_a_positive_integer(db_path: Path, bad: object) -> None:
    db = MatchDatabase(db_path=db_path)
    with pytest.raises(ValueError, match=f"games must be a positive integer.*{bad!r}"):
        db.record("a", "b", 1.0, games=bad)
    assert len(db) == 0


def test_extra_fields_are_stored(db_path: Path) -> None:
    db = MatchDatabase(db_path=db_path)
    db.record("a", "b", 1.0, generation=4, seat=1)
    assert list(db) == [{"a": "a", "b": "b", "outcome": 1.0, "generation": 4, "seat": 1}]
    with pytest.raises(ValueError, match="clash"):
        db.record_many([{"a": "a", "b": "b", "outcome": 1.0, "extra": 1}, ("a", "b", 1.0, {"outcome": 0})])


def test_index_survives_reopen(db_path: Path) -> None:
    db = MatchDatabase(db_path=db_path)
    db.record_many([("a", "b", 1.0), ("a", "c", 0.5), ("b", "c", 0.0)])
    again = MatchDatabase(db_path=db_path)
    for x, y in [("a", "b"), ("b", "a"), ("a", "c"), ("c", "b")]:
        assert again.win_rate(x, y) == db.win_rate(x, y)
    assert again.win_rates_for("c") == db.win_rates_for("c")


def test_queries_do_not_read_the_file(db_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = MatchDatabase(db_path=db_path)
    db.record_many([("a", "b", 1.0)] * 10)

    def no_reads(self: JsonlLog) -> None:
        raise AssertionError("query re-read the log")

    monkeypatch.setattr(JsonlLog, "__iter__", no_reads)
    assert db.win_rate("a", "b") == 1.0
    assert db.win_rates_for("b") == {"a": 0.0}
    assert db.games("a", "b") == 10


def test_torn_last_line_is_cut_and_the_rest_kept(db_path: Path) -> None:
    good = [{"a": "a", "b": "b", "outcome": 1.0}, {"a": "a", "b": "b", "outcome": 0.0}]
    db_path.write_text("".join(json.dumps(r) + "\n" for r in good) + '{"a": "a", "b": "b", "outc')
    db = MatchDatabase(db_path=db_path)
    assert len(db) == 2 and db.win_rate("a", "b") == 0.5
    db.record("a", "b", 1.0)
    lines = db_path.read_text().splitlines()
    assert len(lines) == 3 and all(json.loads(line) for line in lines)
    assert MatchDatabase(db_path=db_path).win_rate("a", "b") == pytest.approx(2 / 3)


def test_truncate_generation_drops_later_generations(db_path: Path) -> None:
    db = MatchDatabase(db_path=db_path)
    db.record("a", "b", 1.0)  # no generation: always kept
    for generation in range(4):
        db.record("a", "b", 0.0, generation=generation)
    assert db.truncate_generation(2) == 2
    assert len(db) == 3 and db.win_rate("a", "b") == pytest.approx(1 / 3)
    assert [r.get("generation") for r in MatchDatabase(db_path=db_path)] == [None, 0, 1]
    assert db.truncate_generation(5) == 0
    with pytest.raises(ValueError, match="non-negative integer"):
        db.truncate_generation(-1)


def test_reload_sees_another_writer(db_path: Path) -> None:
    reader = MatchDatabase(db_path=db_path)
    MatchDatabase(db_path=db_path).record("a", "b", 1.0)
    assert reader.games("a", "b") == 0
    reader.reload()
    assert reader.games("a", "b") == 1


_SHORT_WRITE = r"""
import json, resource, signal, sys
from light_league.utils.atomic import JsonlLog

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # past the limit a write returns short, then EFBIG
path, limit = sys.argv[1], int(sys.argv[2])
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
log = JsonlLog(path)
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
done = failed = 0
for i in range(50):
    try:
        log.append_many([{"i": i, "pad": "x" * 40}, {"i": i, "pad": "y" * 40}])
        done += 2
    except OSError:
        failed += 1
resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))  # the disk has room again
log.append({"i": "after"})
print(json.dumps({"done": done + 1, "failed": failed}))
"""


@pytest.mark.integration
def test_a_short_write_leaves_no_torn_line_inside_the_log(tmp_path: Path) -> None:
    """A file size limit makes ``os.write`` write part of a batch: the batch is all or nothing, and
    records appended once there is room again follow whole lines."""
    path = tmp_path / "log.jsonl"
    out = subprocess.run(
        [sys.executable, "-c", _SHORT_WRITE, str(path), "1000"], capture_output=True, text=True, check=True
    )
    counts = json.loads(out.stdout)
    assert counts["failed"] > 0, "the limit must cut a write short"
    records = list(JsonlLog(path))  # a torn line in the middle would raise here
    assert len(records) == counts["done"]
    assert records[-1] == {"i": "after"}
