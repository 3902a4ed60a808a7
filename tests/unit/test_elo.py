"""Elo: the base-10 / 400 formula, zero-sum updates, fixed baselines, persistence."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from light_league.errors import CorruptFileError
from light_league.game_theory.elo import DEFAULT_BASELINES, elo_delta, expected_score
from light_league.league import EloRegistry


def test_expected_score_known_values() -> None:
    assert expected_score(1000, 1000) == 0.5
    assert expected_score(1400, 1000) == pytest.approx(10 / 11)  # 400 points: odds 10 to 1
    assert expected_score(1000, 1400) == pytest.approx(1 / 11)
    assert expected_score(1200, 1000) == pytest.approx(1 / (1 + 10 ** (-0.5)))


def test_elo_delta_known_values() -> None:
    assert elo_delta(1000, 1000, 1.0, k_factor=32) == pytest.approx(16.0)
    assert elo_delta(1000, 1000, 0.5, k_factor=32) == 0.0
    assert elo_delta(1000, 1400, 1.0, k_factor=32, n_games=3) == pytest.approx(3 * 32 * 10 / 11)


def test_update_returns_delta_and_is_zero_sum() -> None:
    reg = EloRegistry(baselines={})
    delta = reg.update("a", "b", 1.0)
    assert delta == pytest.approx(16.0)
    assert reg.get_rating("a") == pytest.approx(1016.0)
    assert reg.get_rating("b") == pytest.approx(984.0)
    for outcome in (0.0, 0.3, 1.0, 0.5):
        before = reg.get_rating("a") + reg.get_rating("b")
        reg.update("b", "a", outcome, n_games=4)
        assert reg.get_rating("a") + reg.get_rating("b") == pytest.approx(before)
    assert reg.get_game_count("a") == 1 + 4 * 4


def test_n_games_applies_k_per_game() -> None:
    reg = EloRegistry(baselines={}, k_factor=10)
    assert reg.update("a", "b", 0.75, n_games=8) == pytest.approx(10 * 8 * 0.25)
    assert reg.get_game_count("b") == 8


def test_baselines_never_move() -> None:
    reg = EloRegistry()
    assert reg.get_rating("random") == 800.0
    assert reg.get_rating("scripted_l5") == 1400.0
    delta = reg.update("learner", "scripted_l3", 1.0, n_games=10)
    assert delta == pytest.approx(10 * 32 * (1 - expected_score(1000, 1200)))
    assert reg.get_rating("scripted_l3") == 1200.0
    assert reg.get_rating("learner") == pytest.approx(1000 + delta)
    back = reg.update("scripted_l3", "learner", 1.0)  # a baseline as the first player
    assert reg.get_rating("scripted_l3") == 1200.0
    assert reg.get_rating("learner") == pytest.approx(1000 + delta - back)


def test_default_baselines_are_documented_ladder() -> None:
    assert DEFAULT_BASELINES == {
        "random": 800.0,
        "scripted_l1": 1000.0,
        "scripted_l2": 1100.0,
        "scripted_l3": 1200.0,
        "scripted_l4": 1300.0,
        "scripted_l5": 1400.0,
    }
    assert EloRegistry().all_ratings() == DEFAULT_BASELINES


def test_unseen_agent_has_initial_rating() -> None:
    reg = EloRegistry(initial_rating=1500.0)
    assert reg.get_rating("new") == 1500.0
    assert reg.get_game_count("new") == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("a", "b", 1.5), r"\[0, 1\]"),
        (("a", "b", -0.1), r"\[0, 1\]"),
        (("a", "a", 1.0), "against itself"),
        (("a", "b", 1.0, 0), "positive integer"),
    ],
)
def test_bad_updates_are_refused(args: tuple, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        EloRegistry().update(*args)


def test_save_and_reload(tmp_path: Path) -> None:
    path = tmp_path / "elo.json"
    reg = EloRegistry(path, k_factor=24)
    reg.update("a", "scripted_l1", 1.0, n_games=3)
    reg.update("a", "b", 0.25)
    assert reg.save() == path
    again = EloRegistry(path, k_factor=24)
    assert again.all_ratings() == pytest.approx(reg.all_ratings())
    assert again.get_game_count("a") == 4
    assert json.loads(path.read_text())["ratings"]["a"] == pytest.approx(reg.get_rating("a"))


def test_baseline_ratings_come_from_the_constructor_not_the_file(tmp_path: Path) -> None:
    path = tmp_path / "elo.json"
    path.write_text(json.dumps({"ratings": {"random": 5.0, "a": 1234.0}, "games": {"a": 1}}))
    reg = EloRegistry(path)
    assert reg.get_rating("random") == 800.0
    assert reg.get_rating("a") == 1234.0


def test_save_without_path_is_refused() -> None:
    with pytest.raises(ValueError, match="needs a path"):
        EloRegistry().save()


def test_corrupt_file_is_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "elo.json"
    path.write_text("{not json")
    with pytest.raises(CorruptFileError) as info:
        EloRegistry(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)
