"""``main.py eval RUN_DIR A B --games N`` and ``main.py watch RUN_DIR A B``: two players of a run
against each other, over many games with an interval, or one game shown step by step.

A player is a member of the run (any snapshot in ``policies/``, a baseline of the run) or a fixed
policy of the run's env (``random``, battalion's ``scripted_l1`` .. ``scripted_l5``), so a
snapshot can meet a scripted level the run did not use as a baseline.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from light_league import envs
from light_league.algorithms.base import Policy, hidden_dim
from light_league.build import make_env_spec
from light_league.errors import LeagueError, did_you_mean
from light_league.rollout.head_to_head import HeadToHead, head_to_head
from light_league.run_reader import RunReader
from light_league.tracking.console import Console
from light_league.utils.text import fixed


def player(run: RunReader, name: str) -> Policy:
    """The policy of ``name``: a member of ``run`` or a fixed policy of its env."""
    env = run.config.env
    members = run.members()
    if name in members or Path(f"{run.policy_path(name)}.pt").exists():
        return run.policy(name)
    fixed = envs.fixed_policy_names(env.name, env.options)
    if name in fixed:
        from light_league.algorithms.registry import FIXED, build_policy

        return build_policy({}, {"kind": FIXED, "name": name}, env_name=env.name, env_options=env.options)
    known = [*members, *(f for f in fixed if f not in members)]
    raise LeagueError(
        f"unknown player {name!r}{did_you_mean(name, known)}: pass a member of {run.root} (e.g. "
        f"{next((m for m, r in members.items() if r != 'baseline'), 'main_agent_0-v1')}) or a fixed "
        f"policy of env {env.name} ({', '.join(fixed) or 'none'})"
    )


def pit(
    run_dir: Path, a: str, b: str, *, games: int, seed: int, overrides: list[str] | None = None
) -> HeadToHead:
    """``a`` against ``b`` over ``games`` fresh games, seats alternated (``a``'s results);
    ``overrides`` change (or confirm) the run's stored config (see ``RunReader``)."""
    if games < 1:
        raise LeagueError(f"--games must be at least 1, got {games}")
    run = RunReader(run_dir, overrides, command="eval")
    make_env_spec(run.config)  # a bad env name or option is one line here
    first, second = player(run, a), player(run, b)
    env = run.make_env(min(games, 256))
    try:
        return head_to_head(env, first, {b: second}, {b: 1.0}, games, seed=seed)
    finally:
        env.close()


def pit_line(a: str, b: str, result: HeadToHead, seed: int) -> str:
    """``main_agent_0-v9 against scripted_l5 over 400 games (seats alternated, seed 0): win rate
    0.531 [0.482, 0.580] (95%), 200 wins, 25 draws, 175 losses; payoff 0.123 [0.05, 0.19] per game``."""
    low, high = result.score_ci95
    pay_low, pay_high = result.payoff_ci95
    return (
        f"{a} against {b} over {result.games:,} games (seats alternated, seed {seed}): win rate "
        f"{fixed(result.score, 3)} [{fixed(low, 3)}, {fixed(high, 3)}] (95%), {result.wins:,} wins, "
        f"{result.draws:,} draws, {result.losses:,} losses; payoff {fixed(result.payoff, 3)} "
        f"[{fixed(pay_low, 3)}, {fixed(pay_high, 3)}] per game"
    )


def watch(
    run_dir: Path,
    a: str,
    b: str,
    *,
    seed: int,
    every: int,
    console: Console,
    overrides: list[str] | None = None,
) -> dict[str, Any]:
    """One game of ``a`` (seat 0) against ``b`` (seat 1) written to ``console``: each step's actions,
    the env's text frame (where it has one: battalion) every ``every`` steps and at the start, and
    the result. Returns ``{"steps", "outcome", "returns"}`` (``outcome``: ``a``'s, 1 win, 0.5 draw,
    0 loss)."""
    if every < 1:
        raise LeagueError(f"--every must be at least 1, got {every}")
    run = RunReader(run_dir, overrides, command="watch")
    make_env_spec(run.config)
    players = [player(run, a), player(run, b)]
    config = run.config
    env = run.make_env(1)
    spec = env.spec
    names = envs.action_names(config.env.name, config.env.options)
    render = getattr(env, "render_text", None)
    rng = np.random.default_rng(seed)
    hidden = [np.zeros((len(spec.seats[s]), hidden_dim(players[s])), dtype=np.float32) for s in (0, 1)]
    index = spec.index_in_team()
    step = env.reset(seed=seed)
    console.note(f"{a} (seat 0) against {b} (seat 1), env {config.env.name}, seed {seed}")
    try:
        for t in range(spec.max_steps + 1):
            if render is not None and t % every == 0:
                console.note(render(0))
            actions = np.zeros((1, spec.n_agents), dtype=np.int64)
            for s in (0, 1):
                agents = np.array(spec.seats[s])
                actions[0, agents], hidden[s] = _act(players[s], step, agents, index[agents], hidden[s], rng)
            moves = [
                f"{spec.agents[k]} {names[actions[0, k]] if names else actions[0, k]}"
                for k in range(spec.n_agents)
                if step.active[0, k]
            ]
            step = env.step(actions)
            console.note(f"step {t + 1}: " + ", ".join(moves))
            if step.done[0]:
                outcome = float(step.outcome[0])
                returns = [float(r) for r in step.seat_return[0]]
                word = result_words(a, b, outcome)
                end = " (step limit)" if step.truncated[0] else ""
                console.note(
                    f"game over after {t + 1} steps{end}: {word}; returns {a} {fixed(returns[0], 3)}, {b} {fixed(returns[1], 3)}"
                )
                return {"steps": t + 1, "outcome": outcome, "returns": returns}
    finally:
        env.close()
    raise RuntimeError(f"env {config.env.name} did not end a game within max_steps={spec.max_steps}")


def result_words(a: str, b: str, outcome: float) -> str:
    """How ``watch`` says ``a``'s ``outcome``: ``a wins`` (1), ``b wins`` (0), ``a draw`` (0.5), and a
    graded result (an env that scores a game between a win and a loss) as ``a scores 0.70``."""
    words = {1.0: f"{a} wins", 0.0: f"{b} wins", 0.5: "a draw"}
    return words.get(outcome, f"{a} scores {outcome:.2f}")


def _act(
    policy: Policy,
    step: Any,
    agents: np.ndarray,
    agent_idx: np.ndarray,
    hidden: np.ndarray,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """Sampled actions of one seat's agents in game 0, and their next hidden states."""
    obs, mask = step.obs[0, agents], step.action_mask[0, agents]
    safe = np.where(mask.any(axis=1, keepdims=True), mask, True)  # an agent out of play: any action
    if hidden.shape[1]:
        log_probs, hidden = policy.step_log_probs(obs, safe, agent_idx, hidden)  # type: ignore[attr-defined]
    else:
        log_probs = policy.log_probs(obs, safe, agent_idx)
    p = np.exp(np.asarray(log_probs, dtype=np.float64))
    p /= p.sum(axis=1, keepdims=True)
    return np.array([rng.choice(p.shape[1], p=row) for row in p]), hidden
