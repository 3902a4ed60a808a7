"""Play an exported policy (``python main.py export RUN_DIR MEMBER``) with torch alone.

    python main.py export runs/my_league main_agent_0-v12 --out main.pt2
    python examples/exported_policy.py main.pt2 --games 20

The file is loaded with ``torch.export.load``; no light_league module is imported (the game comes
from this repository's ``envs`` package, PettingZoo's Parallel API). The exported policy takes
seat 0 and plays ``--games`` games against a uniformly random opponent; the script prints its
wins, draws and losses (the seat with the larger return wins).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # the envs package of this checkout
    sys.path.insert(0, str(ROOT))

import envs  # noqa: E402
from envs.parallel import split_obs  # noqa: E402


def load(path: Path) -> tuple[torch.nn.Module, dict]:
    """The exported actor and its description (``policy.json`` inside the file)."""
    extra = {"policy.json": ""}
    actor = torch.export.load(str(path), extra_files=extra).module()
    return actor, json.loads(extra["policy.json"])


def play(actor: torch.nn.Module, meta: dict, games: int, seed: int) -> tuple[int, int, int]:
    """``(wins, draws, losses)`` of the exported policy in seat 0 against uniform random: the
    env's ``outcome`` info where it gives one, else the seats' mean returns compared."""
    env = envs.make_parallel(meta["env"], **meta["env_options"])
    agents = {a["name"]: a for a in meta["agents"]}
    rng = np.random.default_rng(seed)
    tally = [0, 0, 0]
    for game in range(games):
        obs, infos = env.reset(seed=seed + game)
        hidden = {name: torch.zeros(1, meta["hidden_size"]) for name in agents}
        returns = dict.fromkeys(agents, 0.0)
        outcome = None
        while env.agents:
            actions = {}
            for name in env.agents:
                flat, mask = split_obs(obs[name], infos[name], meta["num_actions"])
                if agents[name]["seat"] == 1 or not mask.any():
                    legal = np.flatnonzero(mask) if mask.any() else np.arange(meta["num_actions"])
                    actions[name] = int(rng.choice(legal))
                    continue
                inputs = (
                    torch.as_tensor(flat, dtype=torch.float32)[None],
                    torch.as_tensor(mask, dtype=torch.bool)[None],
                    torch.tensor([agents[name]["index_in_team"]]),
                )
                with torch.no_grad():
                    if meta["hidden_size"]:
                        log_probs, hidden[name] = actor(*inputs, hidden[name])
                    else:
                        log_probs = actor(*inputs)
                p = torch.exp(log_probs[0]).numpy().astype(np.float64)
                actions[name] = int(rng.choice(len(p), p=p / p.sum()))
            obs, rewards, _, _, infos = env.step(actions)
            for name, reward in rewards.items():
                returns[name] += float(reward)
                if agents[name]["seat"] == 0 and "outcome" in infos.get(name, {}):
                    outcome = float(infos[name]["outcome"])
        if outcome is None:
            seat = [np.mean([r for n, r in returns.items() if agents[n]["seat"] == s]) for s in (0, 1)]
            outcome = 1.0 if seat[0] > seat[1] else 0.5 if seat[0] == seat[1] else 0.0
        tally[0 if outcome > 0.5 else 1 if outcome == 0.5 else 2] += 1
    env.close()
    return tally[0], tally[1], tally[2]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("policy", type=Path, help="a .pt2 file written by main.py export")
    parser.add_argument("--games", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    actor, meta = load(args.policy)
    wins, draws, losses = play(actor, meta, args.games, args.seed)
    print(f"{meta['member']} ({meta['env']}) against random: {wins} wins, {draws} draws, {losses} losses")
    return 0


if __name__ == "__main__":
    sys.exit(main())
