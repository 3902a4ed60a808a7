"""OpenSpiel's PyTorch NFSP (Heinrich and Silver, 2016) as a NashConv-against-time curve: the neural peer.

Two ``open_spiel.python.pytorch.nfsp.NFSP`` agents play each other at the settings of OpenSpiel's
``examples/nfsp_leduc_pytorch.py`` (its flag defaults: one hidden layer of 128, replay buffer
2e5, reservoir buffer 2e6, anticipatory parameter 0.1, batch 128, a learning step every 64
steps, SGD at 0.01 for both networks, MSE loss, target network every 19,200 steps, epsilon 0.06
to 0.001 over 20 M steps); the same settings serve Kuhn. The product NFSP hands over is its
average policy: every ``--eval-every`` seconds of training its exact NashConv is measured
(``exploitability.nash_conv`` on the joint average policy, OpenSpiel's own measurement), that
time excluded from the curve's clock, as the framework's curve excludes its own NashConv time.
Torch runs one intra-op thread, as ``bench/openspiel_psro.py`` and our learners do.

    python bench/openspiel_nfsp.py --game leduc_poker --seconds 600 --out curve.jsonl

writes one JSON line per point, ``{"episodes", "time_s", "nash_conv", "eval_s"}``, flushed as it
goes, so a caller can stop the process at any time and keep every finished point.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from open_spiel.python import policy as os_policy
from open_spiel.python import rl_environment
from open_spiel.python.algorithms import exploitability
from open_spiel.python.pytorch import nfsp

#: the flag defaults of OpenSpiel's examples/nfsp_leduc_pytorch.py
NFSP_SETTINGS: dict[str, Any] = {
    "replay_buffer_capacity": int(2e5),
    "reservoir_buffer_capacity": int(2e6),
    "min_buffer_size_to_learn": 1000,
    "anticipatory_param": 0.1,
    "batch_size": 128,
    "learn_every": 64,
    "rl_learning_rate": 0.01,
    "sl_learning_rate": 0.01,
    "optimizer_str": "sgd",
    "loss_str": "mse",
    "update_target_network_every": 19200,
    "discount_factor": 1.0,
    "epsilon_decay_duration": int(20e6),
    "epsilon_start": 0.06,
    "epsilon_end": 0.001,
}
HIDDEN_LAYERS = [128]
TORCH_THREADS = 1


class AveragePolicy(os_policy.Policy):
    """The agents' average policies, one per seat, as one OpenSpiel policy (what NFSP hands over)."""

    def __init__(self, game: Any, agents: list[nfsp.NFSP]) -> None:
        super().__init__(game, list(range(game.num_players())))
        self._agents = agents
        self._obs: dict[str, Any] = {
            "info_state": [None] * game.num_players(),
            "legal_actions": [None] * game.num_players(),
        }

    def action_probabilities(self, state: Any, player_id: int | None = None) -> dict[int, float]:
        player = state.current_player()
        legal = state.legal_actions(player)
        self._obs["current_player"] = player
        self._obs["info_state"][player] = state.information_state_tensor(player)
        self._obs["legal_actions"][player] = legal
        step = rl_environment.TimeStep(observations=self._obs, rewards=None, discounts=None, step_type=None)
        with self._agents[player].temp_mode_as(nfsp.MODE.AVERAGE_POLICY):
            probs = self._agents[player].step(step, is_evaluation=True).probs
        return {a: float(probs[a]) for a in legal}


def run_curve(game_name: str, seconds: float, out: Path, *, seed: int, eval_every: float) -> None:
    """NFSP self-play episodes until ``seconds`` of training (NashConv time excluded)."""
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(TORCH_THREADS)
    env = rl_environment.Environment(game_name)
    env.seed(seed)
    size = env.observation_spec()["info_state"][0]
    actions = env.action_spec()["num_actions"]
    agents = [nfsp.NFSP(p, size, actions, HIDDEN_LAYERS, seed=seed + p, **NFSP_SETTINGS) for p in range(2)]
    average = AveragePolicy(env.game, agents)
    train_s, episodes, next_eval = 0.0, 0, 0.0
    with out.open("w", encoding="utf-8") as sink:
        while True:
            if train_s >= next_eval:
                start = time.perf_counter()
                value = float(exploitability.nash_conv(env.game, average))
                point = {
                    "episodes": episodes,
                    "time_s": round(train_s, 3),
                    "nash_conv": value,
                    "eval_s": round(time.perf_counter() - start, 3),
                }
                sink.write(json.dumps(point) + "\n")
                sink.flush()
                if train_s >= seconds:
                    return
                next_eval += eval_every
            start = time.perf_counter()
            step = env.reset()
            while not step.last():
                player = step.observations["current_player"]
                step = env.step([agents[player].step(step).action])
            for agent in agents:
                agent.step(step)
            episodes += 1
            train_s += time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default="leduc_poker", help="OpenSpiel game name (kuhn_poker, leduc_poker)")
    parser.add_argument(
        "--seconds", type=float, default=60.0, help="training budget (NashConv time excluded)"
    )
    parser.add_argument("--eval-every", type=float, default=30.0, help="seconds of training between points")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True, help="JSONL file of (time, NashConv) points")
    args = parser.parse_args()
    run_curve(args.game, args.seconds, args.out, seed=args.seed, eval_every=args.eval_every)


if __name__ == "__main__":
    main()
