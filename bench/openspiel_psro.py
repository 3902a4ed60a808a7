"""OpenSpiel's own PSRO (``psro_v2.PSROSolver``, Nash meta-solver) as a NashConv-against-time curve.

Two oracles, each at the settings of OpenSpiel's ``examples/psro_v2_example.py``:

* ``pg``: the reinforcement-learning oracle (``rl_oracle.RLOracle``) with the example's policy
  gradient settings (QPG loss, 4 hidden layers of 256, Adam, entropy cost 0.001, critic lr 1e-2,
  policy lr 1e-3, 8 critic updates per policy update, 10,000 training episodes per new policy).
  OpenSpiel's own wrapper ``rl_policy.PGPolicy`` wraps the JAX agent (and needs jax and chex);
  :class:`TorchPGPolicy` here wraps OpenSpiel's **PyTorch** agent
  (``open_spiel.python.pytorch.policy_gradient.PolicyGradient``) the same way, so only torch is
  needed;
* ``br``: the exact best-response oracle (``best_response_oracle.BestResponseOracle``, C++
  backend).

Both use 1,000 simulations per meta-game entry, the probabilistic training-strategy selector and
sampling from the marginals (the example's defaults). Torch runs one intra-op thread, as the
framework's MAPPO learner does by default: with torch's default (one thread per core) on a busy
two-core machine, each single-state forward pass of the PG agent waited on thread hand-offs and
an episode took about 70 times longer. After every PSRO iteration the Nash mixture
is measured the standard way (``PolicyAggregator`` + ``exploitability.nash_conv``); that time is
excluded from the curve's clock, as the framework's curve excludes its own NashConv time.

    python bench/openspiel_psro.py --game leduc_poker --oracle pg --seconds 60 --out curve.jsonl

writes one JSON line per point, ``{"iteration", "time_s", "nash_conv", "eval_s"}``, flushed as it
goes, so a caller can stop the process at any time and keep every finished point.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyspiel
import torch
from open_spiel.python import policy as os_policy
from open_spiel.python import rl_environment
from open_spiel.python.algorithms import exploitability, policy_aggregator
from open_spiel.python.algorithms.psro_v2 import best_response_oracle, psro_v2, rl_oracle
from open_spiel.python.pytorch import policy_gradient

ORACLES = ("pg", "br")

#: the policy-gradient settings of OpenSpiel's psro_v2_example.py (its flag defaults)
PG_SETTINGS: dict[str, Any] = {
    "loss_str": "qpg",
    "hidden_layers_sizes": [256] * 4,
    "entropy_cost": 0.001,
    "critic_learning_rate": 1e-2,
    "pi_learning_rate": 1e-3,
    "num_critic_before_pi": 8,
    "optimizer_str": "adam",
}
PG_TRAINING_EPISODES = 10_000
SIMS_PER_ENTRY = 1000
TORCH_THREADS = 1


class TorchPGPolicy(os_policy.Policy):
    """OpenSpiel's PyTorch policy-gradient agent seen as a ``policy.Policy`` that PSRO can train.

    Frozen policies never learn (``step`` then always evaluates); ``action_probabilities`` asks
    the agent for its action distribution at a state, as OpenSpiel's JAX wrapper does.
    """

    def __init__(self, env: rl_environment.Environment, player_id: int, **agent_kwargs: Any) -> None:
        super().__init__(env.game, player_id)
        self._env = env
        self._player = player_id
        self._agent_kwargs = agent_kwargs
        self._agent = policy_gradient.PolicyGradient(player_id=player_id, **agent_kwargs)
        self._frozen = False
        num_players = env.game.num_players()
        self._obs: dict[str, Any] = {
            "info_state": [None] * num_players,
            "legal_actions": [None] * num_players,
        }

    def action_probabilities(self, state: Any, player_id: int | None = None) -> dict[int, float]:
        player = state.current_player()
        legal = state.legal_actions(player)
        self._obs["current_player"] = player
        self._obs["info_state"][player] = state.information_state_tensor(player)
        self._obs["legal_actions"][player] = legal
        time_step = rl_environment.TimeStep(
            observations=self._obs,
            rewards=[0.0] * self.game.num_players(),
            discounts=[1.0] * self.game.num_players(),
            step_type=rl_environment.StepType.MID,
        )
        probs = self._agent.step(time_step, is_evaluation=True).probs
        return {a: float(probs[a]) for a in legal}

    def step(self, time_step: rl_environment.TimeStep, is_evaluation: bool = False) -> Any:
        return self._agent.step(time_step, is_evaluation=is_evaluation or self._frozen)

    def freeze(self) -> None:
        self._frozen = True

    def unfreeze(self) -> None:
        self._frozen = False

    def is_frozen(self) -> bool:
        return self._frozen

    def copy_with_noise(self, sigma: float = 0.0) -> TorchPGPolicy:
        """A fresh trainable policy with the same settings (``sigma`` is 0 in the example).

        What ``rl_policy`` does for an agent without its own ``copy_with_noise``. The PyTorch
        agent has one, but it fails on the agent's own torso (``'Sequential' object has no
        attribute 'weight'``) and, even when it works, builds a fresh network and only rescales
        its new weights, so the result is the same: a newly initialised network.
        """
        return TorchPGPolicy(self._env, self._player, **self._agent_kwargs)


def make_oracle(game: Any, oracle: str) -> tuple[Any, list[Any]]:
    """``(oracle, initial policies)`` for ``oracle`` in :data:`ORACLES` (the example's setup)."""
    if oracle == "br":
        uniform = os_policy.TabularPolicy(game)
        return best_response_oracle.BestResponseOracle(game=game, policy=uniform), [
            uniform.__copy__() for _ in range(game.num_players())
        ]
    if oracle != "pg":
        raise ValueError(f"oracle must be one of {ORACLES}, got {oracle!r}")
    env = rl_environment.Environment(game)
    kwargs = {
        "info_state_size": env.observation_spec()["info_state"][0],
        "num_actions": env.action_spec()["num_actions"],
        **PG_SETTINGS,
    }
    pg_oracle = rl_oracle.RLOracle(
        env, TorchPGPolicy, kwargs, number_training_episodes=PG_TRAINING_EPISODES, self_play_proportion=0.0
    )
    agents = [TorchPGPolicy(env, p, **kwargs) for p in range(game.num_players())]
    for agent in agents:
        agent.freeze()
    return pg_oracle, agents


def nash_conv(game: Any, solver: Any) -> float:
    """Exact NashConv of the solver's current Nash mixture (OpenSpiel's standard measurement)."""
    aggregator = policy_aggregator.PolicyAggregator(game)
    players = range(game.num_players())
    mixture = aggregator.aggregate(players, solver.get_policies(), solver.get_meta_strategies())
    return float(exploitability.nash_conv(game, mixture))


def run_curve(game_name: str, oracle: str, seconds: float, out: Path, *, seed: int, target: float) -> None:
    """PSRO iterations until ``seconds`` of PSRO time (NashConv time excluded) or ``target`` NashConv."""
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(TORCH_THREADS)
    game = pyspiel.load_game_as_turn_based(game_name)
    with out.open("w", encoding="utf-8") as sink:
        psro_s = 0.0
        start = time.perf_counter()
        trainer, initial = make_oracle(game, oracle)
        solver = psro_v2.PSROSolver(
            game,
            trainer,
            initial_policies=initial,
            training_strategy_selector="probabilistic",
            sims_per_entry=SIMS_PER_ENTRY,
            number_policies_selected=1,
            meta_strategy_method="nash",
            sample_from_marginals=True,
            symmetric_game=False,
        )
        iteration = 0
        while True:
            psro_s += time.perf_counter() - start
            eval_start = time.perf_counter()
            value = nash_conv(game, solver)
            point = {
                "iteration": iteration,
                "time_s": round(psro_s, 3),
                "nash_conv": value,
                "eval_s": round(time.perf_counter() - eval_start, 3),
            }
            sink.write(json.dumps(point) + "\n")
            sink.flush()
            if psro_s >= seconds or value <= target:
                return
            start = time.perf_counter()
            solver.iteration()
            iteration += 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="leduc_poker", help="OpenSpiel game name (kuhn_poker, leduc_poker)")
    parser.add_argument("--oracle", choices=ORACLES, default="br")
    parser.add_argument(
        "--seconds", type=float, default=60.0, help="PSRO time budget (NashConv time excluded)"
    )
    parser.add_argument("--target", type=float, default=1e-9, help="stop once NashConv is at most this")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True, help="JSONL file of (time, NashConv) points")
    args = parser.parse_args()
    run_curve(args.game, args.oracle, args.seconds, args.out, seed=args.seed, target=args.target)


if __name__ == "__main__":
    main()
