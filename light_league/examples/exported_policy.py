"""Play an exported policy (``python main.py export RUN_DIR MEMBER``) with torch alone.

    python main.py export runs/my_league main_agent_0-v12 --out main.pt2
    python -m light_league.examples.exported_policy main.pt2 --games 20

The file is loaded with ``torch.export.load``; nothing of light_league is imported but its envs
(the game, through PettingZoo's Parallel API; ``light_league.envs`` imports nothing else of the
package). The exported policy takes seat 0 and plays ``--games`` games against a uniformly random
opponent; the script prints its wins, draws and losses (the seat with the larger return wins).

``torch.export.load`` is not safe on a file from elsewhere: it unpickles entries a file marks as
pickled (and falls back to ``weights_only=False`` when a safe load fails), loads compiled code a
file carries, and evaluates expressions and guard code from the file's program. :func:`load`
therefore checks the file first (:func:`check_exported`) and refuses, before torch reads it,
anything that ``main.py export`` does not write: a pickled or compiled entry, an entry it does not
know, an operator outside ``torch.ops.aten``, an expression or guard that is not a plain shape.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # run as a file from a checkout: the light_league package beside it
    sys.path.insert(0, str(ROOT))

from light_league import envs  # noqa: E402
from light_league.envs.parallel import split_obs  # noqa: E402

#: the entries a file of ``main.py export`` holds (under its one top folder), and nothing else
_ENTRIES = re.compile(
    r"(archive_format|archive_version|byteorder|\.data/version|\.data/serialization_id|models/model\.json"
    r"|data/weights/model_weights_config\.json|data/weights/weight_\d+|data/constants/model_constants_config\.json"
    r"|data/constants/tensor_\d+|data/sample_inputs/model\.pt|extra/policy\.json)"
)
#: operators a program may call: ATen's (tensor arithmetic), except the one that reads a file
_TARGET = re.compile(r"torch\.ops\.aten\.(?!from_file\b)\w+\.\w+")
#: a shape expression: symbols, integers, arithmetic and these sympy names, nothing Python could run
_EXPR_CHARS = re.compile(r"[\w+\-*/(), ='%<>]*")
_EXPR_NAMES = {
    "Symbol",
    "positive",
    "integer",
    "nonnegative",
    "True",
    "False",
    "Max",
    "Min",
    "FloorDiv",
    "Mod",
}
#: a guard: a comparison of input sizes (``L['obs'].size()[0] == L['mask'].size()[0]``) or with a number
_SIZE = r"L\['\w+'\]\.size\(\)\[\d+\]"
_GUARD = re.compile(rf"{_SIZE} (==|!=|<=|>=|<|>) ({_SIZE}|-?\d+)")


class UnsafeFile(ValueError):
    """The file holds something ``torch.export.load`` would run or unpickle."""


def check_exported(path: Path) -> None:
    """Refuse (:class:`UnsafeFile`) a ``.pt2`` that holds anything ``main.py export`` does not
    write, reading it as a zip of JSON and raw bytes only (nothing is unpickled or run)."""
    try:
        archive = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as exc:
        raise UnsafeFile(f"{path} is not a torch.export file ({exc})") from None
    with archive:
        names = archive.namelist()
        roots = {name.split("/", 1)[0] for name in names}
        if len(roots) != 1 or any("/" not in name for name in names):
            raise UnsafeFile(f"{path}: entries outside one top folder")
        root = roots.pop() + "/"
        for name in names:
            if not _ENTRIES.fullmatch(name[len(root) :]):
                raise UnsafeFile(f"{path}: entry {name} is not one main.py export writes")

        def read_json(entry: str) -> Any:
            return json.loads(archive.read(root + entry)) if root + entry in names else None

        for entry in ("data/weights/model_weights_config.json", "data/constants/model_constants_config.json"):
            for key, payload in ((read_json(entry) or {}).get("config") or {}).items():
                if payload.get("use_pickle") or not str(payload.get("path_name", "")).startswith(
                    ("weight_", "tensor_")
                ):
                    raise UnsafeFile(
                        f"{path}: {key} is stored pickled or as an object, not as raw tensor bytes"
                    )
        if root + "data/sample_inputs/model.pt" in names:
            try:
                torch.load(io.BytesIO(archive.read(root + "data/sample_inputs/model.pt")), weights_only=True)
            except Exception as exc:  # torch would retry with weights_only=False: never get there
                raise UnsafeFile(
                    f"{path}: its sample inputs are not plain tensors ({exc.__class__.__name__})"
                ) from None
        _check_program(path, read_json("models/model.json"))


def _check_program(path: Path, program: Any) -> None:
    """Every operator, shape expression and guard of the serialised program is a plain one."""
    if not isinstance(program, dict):
        raise UnsafeFile(f"{path}: no program (models/model.json)")
    stack: list[Any] = [program]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, dict):
            continue
        for key, value in node.items():
            if key == "target" and not (isinstance(value, str) and _TARGET.fullmatch(value)):
                raise UnsafeFile(f"{path}: operator {value!r} is not an ATen tensor operator")
            if key == "expr_str" and not _plain_expression(value):
                raise UnsafeFile(f"{path}: shape expression {value!r} is not a plain one")
            if key == "custom_obj_values" and value:
                raise UnsafeFile(f"{path}: the program holds script objects")
            stack.append(value)
    for key in program.get("range_constraints") or {}:
        if not _plain_expression(key):
            raise UnsafeFile(f"{path}: shape symbol {key!r} is not a plain one")
    for guard in program.get("guards_code") or []:
        if not (isinstance(guard, str) and _GUARD.fullmatch(guard)):
            raise UnsafeFile(f"{path}: guard {guard!r} is not a comparison of input sizes")


def _plain_expression(text: Any) -> bool:
    if not isinstance(text, str) or "__" in text or not _EXPR_CHARS.fullmatch(text):
        return False
    names = re.findall(r"[A-Za-z_]\w*", re.sub(r"'[su]\d+'", "", text))
    return all(name in _EXPR_NAMES or re.fullmatch(r"[su]\d+", name) for name in names)


def load(path: Path) -> tuple[torch.nn.Module, dict]:
    """The exported actor and its description (``policy.json`` inside the file), once
    :func:`check_exported` has found nothing in it that loading would run."""
    check_exported(path)
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
    try:
        actor, meta = load(args.policy)
    except UnsafeFile as exc:
        print(f"error: {exc}; refusing to load it (load only files main.py export wrote)", file=sys.stderr)
        return 2
    wins, draws, losses = play(actor, meta, args.games, args.seed)
    print(f"{meta['member']} ({meta['env']}) against random: {wins} wins, {draws} draws, {losses} losses")
    return 0


if __name__ == "__main__":
    sys.exit(main())
