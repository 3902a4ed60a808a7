"""The AlphaStar league scheduler: each role's opponent rule, checkpoints, resets, Nash weighting."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from fake_league import FakeLeague, league_learners, member
from pydantic import ValidationError

from light_league.scheduling.alphastar import (
    LeagueScheduler,
    LeagueSchedulerConfig,
    combine_weights,
    remove_monotonic_suffix,
)
from light_league.scheduling.task_scheduler import TrainingTask
from light_league.types import AgentType, MatchResult

MA, ME, LE = "main_agent_0", "main_exploiter_0", "league_exploiter_0"
PFSP_ONLY = {"weighting": "pfsp"}


def make_scheduler(seed: int = 0, **options: Any) -> LeagueScheduler:
    base: dict[str, Any] = {
        "league_exploiters": 1,
        "main_agent": PFSP_ONLY,
        "league_exploiter": PFSP_ONLY,
    }
    base.update(options)
    return LeagueScheduler(LeagueSchedulerConfig.model_validate(base), seed=seed)


def task_for(tasks: list[TrainingTask], learner_id: str) -> TrainingTask:
    (task,) = [t for t in tasks if t.learner_id == learner_id]
    return task


def assert_mixture(actual: dict[str, float], expected: dict[str, float]) -> None:
    assert set(actual) == set(expected), (actual, expected)
    for key, p in expected.items():
        assert actual[key] == pytest.approx(p, abs=1e-12), key
    assert sum(actual.values()) == pytest.approx(1.0, abs=1e-12)


# ---- pure functions ----------------------------------------------------------------------------


def pseudocode_remove_monotonic_suffix(win_rates: list[float]) -> list[float]:
    """AlphaStar's loop, with the empty-array pitfall fixed (len instead of truthiness)."""
    if len(win_rates) == 0:
        return win_rates
    for i in range(len(win_rates) - 1, 0, -1):
        if win_rates[i - 1] < win_rates[i]:
            return win_rates[: i + 1]
    return []


def test_remove_monotonic_suffix_matches_the_pseudocode_loop() -> None:
    rng = np.random.default_rng(3)
    for _ in range(500):
        rates = rng.choice([0.1, 0.3, 0.5, 0.7], size=rng.integers(0, 7)).tolist()
        assert remove_monotonic_suffix(rates) == len(pseudocode_remove_monotonic_suffix(rates))


@pytest.mark.parametrize(
    ("rates", "keep"),
    [([], 0), ([0.4], 0), ([0.9, 0.6, 0.3], 0), ([0.4, 0.6, 0.55], 2), ([0.2, 0.5, 0.5, 0.8], 4)],
)
def test_remove_monotonic_suffix_known_answers(rates: list[float], keep: int) -> None:
    assert remove_monotonic_suffix(rates) == keep


def test_combine_weights_known_answers() -> None:
    pfsp = np.array([0.5, 0.4, 0.1])
    nash = np.array([0.7, 0.0, 0.3])
    probs, label = combine_weights(pfsp, nash, "pfsp_meta")
    np.testing.assert_allclose(probs, [0.35 / 0.38, 0.0, 0.03 / 0.38])
    assert label == "pfsp_meta"
    probs, label = combine_weights(pfsp, nash, "meta")
    np.testing.assert_allclose(probs, [0.7, 0.0, 0.3])
    assert label == "meta"
    assert combine_weights(pfsp, None, "meta")[1] == "pfsp(fallback:no_meta_strategy)"
    probs, label = combine_weights(pfsp, np.zeros(3), "meta")
    np.testing.assert_allclose(probs, pfsp)
    assert label == "pfsp(fallback:zero_meta_strategy)"
    probs, label = combine_weights(np.array([1.0, 0.0]), np.array([0.0, 1.0]), "pfsp_meta")
    np.testing.assert_allclose(probs, [1.0, 0.0])
    assert label == "pfsp(fallback:zero_product)"


# ---- generation 0 and learners -----------------------------------------------------------------


def test_learner_ids_follow_the_configured_counts() -> None:
    scheduler = LeagueScheduler(LeagueSchedulerConfig(), seed=0)
    roles = {s.learner_id: s.role for s in scheduler.learners()}
    assert roles == league_learners(main_agents=1, main_exploiters=1, league_exploiters=2)


def test_generation_zero_with_no_frozen_players_gives_valid_tasks() -> None:
    league = FakeLeague(league_learners(main_agents=2, main_exploiters=1, league_exploiters=1))
    tasks = make_scheduler(main_agents=2).next_tasks(league)
    assert len(tasks) == 4
    ma0 = task_for(tasks, MA)
    assert_mixture(ma0.opponents, {MA: 0.5, "main_agent_1": 0.5})
    assert ma0.weighting == "self_play(fallback:no_frozen_players)"
    assert_mixture(task_for(tasks, ME).opponents, {MA: 0.5, "main_agent_1": 0.5})
    le = task_for(tasks, LE)
    assert_mixture(le.opponents, {MA: 0.5, "main_agent_1": 0.5})
    assert le.weighting == "current_main(fallback:no_frozen_players)"
    assert all(t.env_steps == 20_000 for t in tasks)


# ---- main agent ----------------------------------------------------------------------------------


def main_agent_league(**extra_rates: float) -> FakeLeague:
    league = FakeLeague(
        league_learners(),
        population=[member("random", AgentType.BASELINE), member("ma_s0", AgentType.MAIN_AGENT, parent=MA)],
    )
    league.set_win_rates(MA, {"random": 0.9, "ma_s0": 0.6, **extra_rates})
    return league


def test_main_agent_without_exploiter_snapshots_puts_verification_into_self_play() -> None:
    task = task_for(make_scheduler().next_tasks(main_agent_league()), MA)
    assert_mixture(task.opponents, {"random": 0.5 * 0.01 / 0.17, "ma_s0": 0.5 * 0.16 / 0.17, MA: 0.5})
    assert task.weighting == "pfsp"
    assert task.info["branches"] == pytest.approx({"pfsp": 0.5, "self_play": 0.5})


def test_verification_picks_an_exploiter_snapshot_the_main_agent_does_not_beat() -> None:
    league = main_agent_league(me_s0=0.2)
    league.population.append(member("me_s0", AgentType.MAIN_EXPLOITER, parent=ME))
    task = task_for(make_scheduler().next_tasks(league), MA)
    total = 0.01 + 0.16 + 0.64
    expected = {"random": 0.5 * 0.01 / total, "ma_s0": 0.5 * 0.16 / total, "me_s0": 0.5 * 0.64 / total + 0.15}
    assert_mixture(task.opponents, {**expected, MA: 0.35})


def test_verification_skips_exploiter_snapshots_the_main_agent_beats() -> None:
    league = main_agent_league(me_s0=0.35)
    league.population.append(member("me_s0", AgentType.MAIN_EXPLOITER, parent=ME))
    task = task_for(make_scheduler().next_tasks(league), MA)
    assert task.opponents[MA] == pytest.approx(0.5)


def test_verification_picks_forgotten_snapshots_of_the_main_lineage() -> None:
    history = {"ma_s0": 0.4, "ma_s1": 0.6, "ma_s2": 0.55}
    league = FakeLeague(
        league_learners(), population=[member(k, AgentType.MAIN_AGENT, parent=MA) for k in history]
    )
    league.set_win_rates(MA, history)
    task = task_for(make_scheduler().next_tasks(league), MA)
    pfsp = {k: (1 - x) ** 2 for k, x in history.items()}
    pfsp_total = sum(pfsp.values())
    expected = {k: 0.5 * w / pfsp_total for k, w in pfsp.items()}
    expected["ma_s0"] += 0.15 * 0.36 / 0.52  # the kept prefix is ma_s0, ma_s1 (squared PFSP)
    expected["ma_s1"] += 0.15 * 0.16 / 0.52
    assert_mixture(task.opponents, {**expected, MA: 0.35})


def two_main_league(rate_vs_other_main: float) -> FakeLeague:
    other = "main_agent_1"
    league = FakeLeague(
        league_learners(main_agents=2),
        population=[member(k, AgentType.MAIN_AGENT, parent=other) for k in ("m1_s0", "m1_s1")],
    )
    league.set_win_rates(MA, {"m1_s0": 0.5, "m1_s1": 0.2, other: rate_vs_other_main})
    return league


def test_struggling_main_agent_gets_variance_pfsp_over_the_other_mains_history() -> None:
    task = task_for(make_scheduler(main_agents=2).next_tasks(two_main_league(0.2)), MA)
    expected = {
        "m1_s0": 0.5 * 0.25 / 0.89 + 0.25 * 0.25 / 0.41,
        "m1_s1": 0.5 * 0.64 / 0.89 + 0.25 * 0.16 / 0.41,
        MA: 0.25,  # the uniformly drawn opponent main is itself half the time
    }
    assert_mixture(task.opponents, expected)


def test_main_agent_above_the_self_play_threshold_plays_the_other_main() -> None:
    task = task_for(make_scheduler(main_agents=2).next_tasks(two_main_league(0.31)), MA)
    assert task.opponents["main_agent_1"] == pytest.approx(0.25)
    assert task.opponents[MA] == pytest.approx(0.25)


# ---- main exploiter ------------------------------------------------------------------------------


def exploiter_league(rate_vs_main: float) -> FakeLeague:
    league = FakeLeague(
        league_learners(),
        population=[member(k, AgentType.MAIN_AGENT, parent=MA) for k in ("ma_s0", "ma_s1")],
    )
    league.set_win_rates(ME, {MA: rate_vs_main, "ma_s1": 0.2})
    return league


def test_main_exploiter_above_threshold_plays_the_current_main_agent() -> None:
    task = task_for(make_scheduler().next_tasks(exploiter_league(0.15)), ME)
    assert_mixture(task.opponents, {MA: 1.0})
    assert task.weighting == "current_main"


def test_main_exploiter_below_threshold_uses_the_variance_curriculum() -> None:
    task = task_for(make_scheduler().next_tasks(exploiter_league(0.1)), ME)
    assert_mixture(task.opponents, {"ma_s0": 0.25 / 0.41, "ma_s1": 0.16 / 0.41})
    assert task.weighting == "pfsp"


def test_main_exploiter_paper_variant_threshold_and_coin() -> None:
    scheduler = make_scheduler(main_exploiter={"main_win_rate": 0.2, "curriculum_probability": 0.5})
    task = task_for(scheduler.next_tasks(exploiter_league(0.15)), ME)
    assert_mixture(task.opponents, {MA: 0.5, "ma_s0": 0.5 * 0.25 / 0.41, "ma_s1": 0.5 * 0.16 / 0.41})


def test_main_exploiter_without_history_plays_the_main_agent() -> None:
    league = exploiter_league(0.05)
    league.population.clear()
    task = task_for(make_scheduler().next_tasks(league), ME)
    assert_mixture(task.opponents, {MA: 1.0})
    assert task.info["fallbacks"] == [f"curriculum->current:{MA}:no_history"]


def test_main_exploiter_scalars_go_on_while_it_plays_only_the_main_agents_history() -> None:
    """Below ``main_win_rate`` a main exploiter plays only the main agent's snapshots (for good
    with the default ``curriculum_probability: 1``): its scalars are still written."""
    league = exploiter_league(0.05)
    scheduler = make_scheduler()
    assert set(task_for(scheduler.next_tasks(league), ME).opponents) == {"ma_s0", "ma_s1"}
    results = [
        MatchResult(ME, "ma_s0", 0, 1.0, 1.0),
        MatchResult(ME, "ma_s1", 1, 0.0, -1.0),
        MatchResult(ME, "ma_s1", 0, 0.0, -1.0),
        MatchResult(LE, MA, 0, 1.0, 1.0),  # another role's game
    ]
    assert scheduler.metrics(league, results) == {
        "exploiter/rolling_win_rate_vs_main": pytest.approx(0.05),  # what its rules read
        "exploiter/win_rate_vs_main_lineage": pytest.approx(1 / 3),
    }
    assert scheduler.metrics(league, []) == {"exploiter/rolling_win_rate_vs_main": pytest.approx(0.05)}


# ---- league exploiter and Nash weighting ---------------------------------------------------------


def exploiter_pool_league(nash: dict[str, float] | None = None) -> FakeLeague:
    league = FakeLeague(
        league_learners(),
        population=[member(k, AgentType.MAIN_AGENT, parent=MA) for k in ("a", "b", "c")],
        mixture=nash or {},
    )
    league.set_win_rates(LE, {"a": 0.2, "b": 0.6, "c": 0.9})
    return league


def test_league_exploiter_uses_linear_capped_pfsp() -> None:
    task = task_for(make_scheduler().next_tasks(exploiter_pool_league()), LE)
    assert_mixture(task.opponents, {"a": 0.5, "b": 0.4, "c": 0.1})
    assert task.weighting == "pfsp"


def test_pfsp_meta_multiplies_and_renormalises() -> None:
    scheduler = make_scheduler(league_exploiter={"weighting": "pfsp_meta"})
    task = task_for(scheduler.next_tasks(exploiter_pool_league({"a": 0.7, "b": 0.0, "c": 0.3})), LE)
    assert_mixture(task.opponents, {"a": 0.35 / 0.38, "c": 0.03 / 0.38})
    assert task.weighting == "pfsp_meta"


def test_pfsp_meta_before_any_meta_strategy_falls_back_to_pfsp_and_says_so() -> None:
    scheduler = make_scheduler(league_exploiter={"weighting": "pfsp_nash"})  # its former name
    task = task_for(scheduler.next_tasks(exploiter_pool_league()), LE)
    assert_mixture(task.opponents, {"a": 0.5, "b": 0.4, "c": 0.1})
    assert task.weighting == "pfsp(fallback:no_meta_strategy)"


def test_meta_weighting_never_draws_a_zero_mass_member() -> None:
    rng = np.random.default_rng(7)
    scheduler = make_scheduler(main_agent={"weighting": "meta"}, league_exploiter={"weighting": "nash"})
    for _ in range(50):
        weights = rng.random(3) * (rng.random(3) < 0.6)
        if weights.sum() == 0:
            continue
        nash = dict(zip("abc", (weights / weights.sum()).tolist()))
        tasks = scheduler.next_tasks(exploiter_pool_league(nash))
        le = task_for(tasks, LE)
        assert le.weighting == "meta"
        assert_mixture(le.opponents, {k: v for k, v in nash.items() if v > 0})
        expected_main = {k: 0.5 * v for k, v in nash.items() if v > 0}
        assert_mixture(task_for(tasks, MA).opponents, {**expected_main, MA: 0.5})


# ---- checkpoints and resets ----------------------------------------------------------------------


def checkpoint_league(steps: int, rate: float) -> FakeLeague:
    league = FakeLeague(
        league_learners(),
        population=[member("random", AgentType.BASELINE), member("ma_s0", AgentType.MAIN_AGENT, parent=MA)],
        steps={MA: steps, ME: steps, LE: steps},
    )
    for learner in (MA, ME, LE):
        league.set_win_rates(learner, {"random": rate, "ma_s0": rate})
    league.set_win_rates(ME, {MA: rate})
    return league


@pytest.mark.parametrize(
    ("steps", "rate", "snapshot"),
    [
        (19_999, 0.9, False),
        (20_000, 0.9, True),
        (20_000, 0.7, False),
        (39_999, 0.1, False),
        (40_000, 0.1, True),
    ],
)
def test_checkpoint_needs_min_steps_and_win_rates_above_threshold_or_timeout(
    steps: int, rate: float, snapshot: bool
) -> None:
    scheduler = make_scheduler(league_exploiter={"reset_probability": 0.0})
    decisions = scheduler.after_training(checkpoint_league(steps, rate))
    assert decisions.snapshot == (sorted([LE, MA, ME]) if snapshot else [])
    assert decisions.reset == ([ME] if snapshot else [])


def test_main_exploiter_checkpoints_on_win_rate_against_the_main_agents_only() -> None:
    league = checkpoint_league(20_000, 0.1)
    league.set_win_rates(ME, {MA: 0.8})
    decisions = make_scheduler().after_training(league)
    assert decisions.snapshot == [ME]
    assert decisions.reset == [ME]


def test_empty_population_counts_as_beaten() -> None:
    league = FakeLeague(league_learners(), steps={MA: 20_000})
    assert make_scheduler().after_training(league).snapshot == [MA]


def test_league_exploiter_resets_with_probability_one_quarter() -> None:
    scheduler = make_scheduler(seed=11)
    league = FakeLeague({LE: AgentType.LEAGUE_EXPLOITER}, steps={LE: 40_000})
    n = 4000
    resets = sum(bool(scheduler.after_training(league).reset) for _ in range(n))
    assert resets / n == pytest.approx(0.25, abs=4 * np.sqrt(0.25 * 0.75 / n))
    assert scheduler.snapshot_counts[LE] == n
    assert scheduler.reset_counts[LE] == resets


def test_state_dict_restores_rng_and_counts() -> None:
    league = FakeLeague({LE: AgentType.LEAGUE_EXPLOITER}, steps={LE: 40_000})
    first = make_scheduler(seed=5)
    for _ in range(10):
        first.after_training(league)
    second = make_scheduler(seed=99)
    second.load_state_dict(first.state_dict())
    assert second.reset_counts == first.reset_counts
    assert [first.after_training(league).reset for _ in range(50)] == [
        second.after_training(league).reset for _ in range(50)
    ]


def test_config_rejects_inconsistent_numbers() -> None:
    with pytest.raises(ValidationError, match="checkpoint_max_steps"):
        LeagueSchedulerConfig.model_validate(
            {"main_agent": {"checkpoint_min_steps": 10, "checkpoint_max_steps": 5}}
        )
    with pytest.raises(ValidationError, match="pfsp_probability"):
        LeagueSchedulerConfig.model_validate(
            {"main_agent": {"pfsp_probability": 0.9, "verification_probability": 0.2}}
        )


def test_reset_to_main_agent_names_the_source_and_initial_names_none() -> None:
    league = checkpoint_league(40_000, 0.1)
    plain = make_scheduler(league_exploiter={"reset_probability": 1.0}).after_training(league)
    assert plain.reset == [LE, ME] and plain.reset_from == {}
    warm = make_scheduler(
        main_exploiter={"reset_to": "main_agent"},
        league_exploiter={"reset_probability": 1.0, "reset_to": "main_agent"},
    ).after_training(league)
    assert warm.reset == [LE, ME] and warm.reset_from == {LE: MA, ME: MA}


def test_role_steps_per_generation_overrides_the_scheduler_default() -> None:
    scheduler = make_scheduler(
        steps_per_generation=1000, main_agent={**PFSP_ONLY, "steps_per_generation": 3000}
    )
    steps = {t.learner_id: t.env_steps for t in scheduler.next_tasks(FakeLeague(league_learners()))}
    assert steps == {MA: 3000, ME: 1000, LE: 1000}


@pytest.mark.parametrize("weighting", ["meta", "pfsp_meta", "pfsp"])
def test_an_untrained_snapshot_is_left_out_only_where_the_meta_strategy_does_not_decide(
    weighting: str,
) -> None:
    """``meta`` trains against the meta-strategy itself, an untrained snapshot it holds mass on
    included (rock-paper-scissors: the untrained network plays near the equilibrium); the other
    weightings leave untrained snapshots out and the task's info says so; ``meta_mass`` is the
    share of the meta-strategy on the branch's candidates."""
    untrained = member("ma-v0", AgentType.MAIN_AGENT, parent=MA)
    untrained.metadata["steps"] = 0
    trained = member("le-v0", AgentType.LEAGUE_EXPLOITER, parent=LE)
    trained.metadata["steps"] = 5000
    league = FakeLeague(
        league_learners(), population=[untrained, trained], mixture={"ma-v0": 0.25, "le-v0": 0.75}
    )
    league.set_win_rates(LE, {"ma-v0": 0.5, "le-v0": 0.5})
    task = task_for(make_scheduler(league_exploiter={"weighting": weighting}).next_tasks(league), LE)
    assert task.weighting == weighting
    if weighting == "meta":
        assert_mixture(task.opponents, {"ma-v0": 0.25, "le-v0": 0.75})
        assert task.info["meta_mass"] == {"pfsp": 1.0} and "excluded" not in task.info
    else:
        assert_mixture(task.opponents, {"le-v0": 1.0})
        assert task.info["excluded"] == {"ma-v0": "untrained"}
        assert task.info.get("meta_mass", {"pfsp": 0.75}) == {"pfsp": 0.75}


def test_untrained_snapshots_are_never_training_opponents_once_trained_ones_exist() -> None:
    untrained = member("ma-v0", AgentType.MAIN_AGENT, parent=MA)
    untrained.metadata["steps"] = 0
    trained = member("ma-v1", AgentType.MAIN_AGENT, parent=MA)
    trained.metadata["steps"] = 5000
    league = FakeLeague(league_learners(), population=[untrained, trained])
    for learner in (MA, ME, LE):
        league.set_win_rates(learner, {"ma-v0": 0.5, "ma-v1": 0.5})
    league.set_win_rates(ME, {MA: 0.0})  # a struggling exploiter: the curriculum branch
    tasks = make_scheduler().next_tasks(league)
    for task in tasks:
        assert "ma-v0" not in task.opponents, (task.learner_id, task.opponents)
    assert "ma-v1" in task_for(tasks, ME).opponents
    only_untrained = FakeLeague(league_learners(), population=[untrained])
    only_untrained.set_win_rates(LE, {"ma-v0": 0.5})
    assert "ma-v0" in task_for(make_scheduler().next_tasks(only_untrained), LE).opponents


# ---- opponents: history (PFSP over the archive too) -----------------------------------------------


def archived_league() -> FakeLeague:
    """The exploiter pool with two archived main-agent snapshots: "old" (which the league
    exploiter rarely beats) and "older"."""
    league = exploiter_pool_league()
    league.archived = [member(k, AgentType.MAIN_AGENT, parent=MA) for k in ("older", "old")]
    league.set_win_rates(LE, {"old": 0.1, "older": 0.7})
    league.set_win_rates(ME, {"old": 0.3})
    return league


def test_history_draws_archived_members_by_pfsp_and_active_never_does() -> None:
    history = {"weighting": "pfsp", "opponents": "history"}
    league = archived_league()
    default = make_scheduler().next_tasks(league)
    for task in default:
        assert not {"old", "older"} & set(task.opponents), task
    tasks = make_scheduler(league_exploiter=history, main_agent=history).next_tasks(league)
    le = task_for(tasks, LE)
    # linear capped PFSP over everyone: min(0.5, 1 - rate), normalised
    raw = {"a": 0.5, "b": 0.4, "c": 0.1, "old": 0.5, "older": 0.3}
    assert_mixture(le.opponents, {k: v / sum(raw.values()) for k, v in raw.items()})
    assert {"old", "older"} <= set(task_for(tasks, MA).opponents)
    # a main exploiter's curriculum over the main agent's history, the archived snapshots too
    league.set_win_rates(ME, {MA: 0.0})
    curriculum = make_scheduler(main_exploiter={"opponents": "history"}).next_tasks(league)
    assert "old" in task_for(curriculum, ME).opponents
    assert "old" not in task_for(make_scheduler().next_tasks(league), ME).opponents


def test_history_needs_pfsp_weighting_and_the_scheduler_says_it_reads_history() -> None:
    with pytest.raises(ValidationError, match="opponents: history.*set weighting: pfsp"):
        LeagueSchedulerConfig.model_validate({"league_exploiter": {"opponents": "history"}})
    with pytest.raises(ValidationError, match="opponents"):
        LeagueSchedulerConfig.model_validate({"league_exploiter": {"opponents": "everyone"}})
    assert not make_scheduler().reads_history
    assert make_scheduler(main_exploiter={"opponents": "history"}).reads_history
