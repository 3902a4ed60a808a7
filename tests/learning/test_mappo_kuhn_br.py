"""MAPPO as a best-response oracle in Kuhn poker.

The learner trains against a fixed, non-Nash tabular opponent, playing both seats (seat drawn
per episode). Its exact value, averaged over the two seats, must come within 0.02 chips of the
exact best-response value, both computed by walking OpenSpiel's ``kuhn_poker`` game tree
(OpenSpiel's ``BestResponsePolicy`` for the best response). A fast check confirms that
``light_league.evaluation.exploitability`` gives the same numbers.

Poker settings (see docs/mappo.md): undiscounted returns (gamma = lambda = 1, the payoff is the
episode's chips), a small entropy bonus and a linearly decaying learning rate so the last iterate
can settle on the (deterministic) best response, a small clip, several mini-batches.

CPU budget: 60 iterations x 4096 env steps (about 245k env steps, about 20 s on one core).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from light_league import envs
from light_league.algorithms.mappo import MAPPOConfig, MAPPOLearner, MAPPOPolicy
from light_league.envs.kuhn_poker import GAME, infostate_string
from light_league.rollout.episode import EpisodeLoop

pyspiel = pytest.importorskip("pyspiel")
best_response = pytest.importorskip("open_spiel.python.algorithms.best_response")
os_policy = pytest.importorskip("open_spiel.python.policy")

#: P(bet) of the fixed opponent per OpenSpiel information-state string (card + history)
OPPONENT_BET = {
    "0": 0.6, "1": 0.5, "2": 0.4,  # player 0 opens: bluffs too much, slow-plays the king
    "0p": 0.5, "1p": 0.7, "2p": 0.6,  # player 1 after a pass
    "0b": 0.3, "1b": 0.6, "2b": 0.9,  # player 1 facing a bet: calls too loosely
    "0pb": 0.4, "1pb": 0.5, "2pb": 0.8,  # player 0 facing a bet after passing
}  # fmt: skip

POKER_CONFIG = MAPPOConfig(
    lr=1e-3,
    critic_lr=1e-3,
    lr_schedule="linear",
    lr_decay_updates=60,
    lr_final_fraction=0.1,
    ppo_epoch=5,
    num_mini_batch=4,
    clip_param=0.1,
    entropy_coef=0.003,
    gamma=1.0,
    gae_lambda=1.0,
)
ITERATIONS = 60
NUM_ENVS, STEPS = 256, 16


class TabularKuhnOpponent:
    """Fixed opponent: P(bet) looked up by information-state string (the Policy protocol)."""

    def log_probs(self, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray) -> np.ndarray:
        p_bet = np.array([OPPONENT_BET[infostate_string(o, GAME.decode(o)[0])] for o in obs])
        probs = np.stack([1.0 - p_bet, p_bet], axis=1)
        with np.errstate(divide="ignore"):
            return np.where(mask, np.log(probs), -np.inf).astype(np.float32)


def learner_value(policy: MAPPOPolicy, game: Any, seat: int) -> float:
    """Exact expected chips of ``policy`` in ``seat`` against the opponent table."""

    def walk(state: Any) -> float:
        if state.is_terminal():
            return float(state.returns()[seat])
        if state.is_chance_node():
            return sum(p * walk(state.child(a)) for a, p in state.chance_outcomes())
        player = state.current_player()
        if player == seat:
            obs = np.asarray(state.information_state_tensor(player), dtype=np.float32)[None]
            probs = np.exp(policy.log_probs(obs, np.ones((1, 2), dtype=bool), np.zeros(1, dtype=np.int64)))[0]
        else:
            bet = OPPONENT_BET[state.information_state_string(player)]
            probs = np.array([1.0 - bet, bet])
        return sum(float(probs[a]) * walk(state.child(a)) for a in state.legal_actions())

    return walk(game.new_initial_state())


def best_response_value(game: Any, seat: int) -> float:
    table = os_policy.TabularPolicy(game)
    for key, row in table.state_lookup.items():
        table.action_probability_array[row] = [1.0 - OPPONENT_BET[key], OPPONENT_BET[key]]
    return float(best_response.BestResponsePolicy(game, seat, table).value(game.new_initial_state()))


@pytest.mark.slow
@pytest.mark.openspiel
def test_mappo_reaches_the_best_response_value() -> None:
    game = pyspiel.load_game("kuhn_poker")
    target = np.mean([best_response_value(game, seat) for seat in (0, 1)])
    env = envs.make_batched("kuhn_poker", num_envs=NUM_ENVS)
    learner = MAPPOLearner(env.spec, POKER_CONFIG, seed=0)
    loop = EpisodeLoop(env, seed=0)
    opponent = {"table": TabularKuhnOpponent()}
    start = np.mean([learner_value(learner.policy, game, seat) for seat in (0, 1)])
    for _ in range(ITERATIONS):
        res = loop.collect(learner.policy, opponent, {"table": 1.0}, STEPS)
        learner.update(res.batch)
    final = np.mean([learner_value(learner.policy, game, seat) for seat in (0, 1)])
    assert target - start > 0.1, "the opponent table should be exploitable from the uniform start"
    assert final == pytest.approx(target, abs=0.02), (start, final, target)


@pytest.mark.openspiel
def test_framework_evaluation_agrees_with_the_direct_openspiel_walk() -> None:
    from light_league.algorithms.game_tree import best_response_value as framework_br
    from light_league.algorithms.game_tree import expected_payoff

    game = pyspiel.load_game("kuhn_poker")
    opponent = TabularKuhnOpponent()
    learner = MAPPOLearner(envs.make_batched("kuhn_poker", num_envs=1).spec, POKER_CONFIG, seed=0)
    for seat in (0, 1):
        assert framework_br("kuhn_poker", opponent, seat) == pytest.approx(
            best_response_value(game, seat), abs=1e-6
        )
    assert expected_payoff("kuhn_poker", learner.policy, opponent) == pytest.approx(
        learner_value(learner.policy, game, 0), abs=1e-6
    )
    assert -expected_payoff("kuhn_poker", opponent, learner.policy) == pytest.approx(
        learner_value(learner.policy, game, 1), abs=1e-6
    )
