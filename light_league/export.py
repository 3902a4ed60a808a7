"""``main.py export RUN_DIR MEMBER``: a member's policy as one file that loads with torch alone.

The file is a ``torch.export`` program (``.pt2``) of the member's actor, with the policy's
description beside it in the same file (``policy.json``)::

    import json, torch
    extra = {"policy.json": ""}
    actor = torch.export.load("main_agent_0-v12.pt2", extra_files=extra).module()
    meta = json.loads(extra["policy.json"])
    log_probs = actor(obs, mask, agent_idx)                     # feed-forward
    log_probs, hidden = actor(obs, mask, agent_idx, hidden)     # recurrent (meta["hidden_size"] > 0)

Every tensor is stored as raw bytes, none pickled, and the program calls ATen operators only.
Still, ``torch.export.load`` itself is not safe on a file from elsewhere (it unpickles what a file
marks as pickled and runs expressions and code a file carries): ``light_league/examples/exported_policy.py``'s
``load`` checks a file holds only what this module writes before it calls it (docs/trust.md).

``obs`` (N, obs_dim) float32, ``mask`` (N, num_actions) bool (at least one legal action per row),
``agent_idx`` (N,) int64 (each agent's position in its team, ``meta["agents"]``), ``hidden``
(N, hidden_size) float32 (zeros where an episode starts). It returns the (N, num_actions)
log-probabilities, ``-inf`` where ``mask`` is False. ``light_league/examples/exported_policy.py`` plays the
env's games with such a file and no light_league import.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import torch
from torch import nn

from light_league.algorithms.mappo.policy import ILLEGAL_LOGIT, MAPPOPolicy, RecurrentNet
from light_league.build import make_env_spec
from light_league.errors import LeagueError
from light_league.run_reader import RunReader
from light_league.utils.atomic import atomic_write_bytes

#: the description stored beside the program in the exported file
META_FILE = "policy.json"


class ExportedActor(nn.Module):
    """The actor of a MAPPO policy as a plain function of tensors (what ``torch.export`` traces)."""

    def __init__(self, policy: MAPPOPolicy) -> None:
        super().__init__()
        self.actor = policy.actor
        self.add_agent_id = bool(policy.arch["add_agent_id"])
        self.recurrent = bool(policy.recurrent_size)
        self.eye: torch.Tensor
        self.register_buffer("eye", policy._eye.detach().clone())

    def _logp(self, logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        logits = logits.masked_fill(~mask, ILLEGAL_LOGIT)
        return torch.log_softmax(logits, dim=-1).masked_fill(~mask, float("-inf"))

    def _inputs(self, obs: torch.Tensor, agent_idx: torch.Tensor) -> torch.Tensor:
        return torch.cat([obs, self.eye[agent_idx]], dim=-1) if self.add_agent_id else obs


class _FeedForward(ExportedActor):
    def forward(self, obs: torch.Tensor, mask: torch.Tensor, agent_idx: torch.Tensor) -> torch.Tensor:
        return self._logp(self.actor(self._inputs(obs, agent_idx)), mask)


class _Recurrent(ExportedActor):
    def forward(
        self, obs: torch.Tensor, mask: torch.Tensor, agent_idx: torch.Tensor, hidden: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        net: RecurrentNet = self.actor  # type: ignore[assignment]
        logits, state = net.step(self._inputs(obs, agent_idx), hidden)
        return self._logp(logits, mask), state


def export_policy(policy: MAPPOPolicy, out: Path, meta: dict[str, Any]) -> Path:
    """Write ``policy``'s actor to ``out`` (``torch.export``, with ``meta`` as ``policy.json``)."""
    module = (_Recurrent if policy.recurrent_size else _FeedForward)(policy).eval()
    rows = torch.export.Dim("rows", min=1)
    example: tuple[torch.Tensor, ...] = (
        torch.zeros(2, policy.obs_dim),
        torch.ones(2, policy.num_actions, dtype=torch.bool),
        torch.zeros(2, dtype=torch.int64),
    )
    if policy.recurrent_size:
        example += (torch.zeros(2, policy.recurrent_size),)
    with torch.no_grad():
        program = torch.export.export(module, example, dynamic_shapes=tuple({0: rows} for _ in example))
    stored = {**program.state_dict, **program.constants}
    odd = sorted(k for k, v in stored.items() if type(v) not in (torch.Tensor, nn.Parameter))
    if odd:  # torch.export.save would pickle these: the file would not load safely (see docstring)
        raise LeagueError(
            f"export: {', '.join(odd)} would be stored pickled; only plain tensors are exported"
        )
    buffer = io.BytesIO()
    torch.export.save(program, buffer, extra_files={META_FILE: json.dumps(meta, indent=2)})
    atomic_write_bytes(out, buffer.getvalue())  # a whole file or none, never written through a link
    return out


def export_member(
    run_dir: Path, member: str, out: Path | None = None, *, overrides: list[str] | None = None
) -> Path:
    """Export ``member`` of ``run_dir`` (a frozen MAPPO snapshot) to ``out`` (default
    ``<member>.pt2`` in the current directory; a directory: that file in it); returns the path
    written. ``overrides`` change (or confirm) the run's stored config (see ``RunReader``)."""
    run = RunReader(run_dir, overrides, command="export")
    config = run.config
    make_env_spec(config)  # a bad env name or option is one line here
    members = run.members()
    member = run.member_name(member)  # best / newest: the member they stand for
    if members.get(member) == "baseline":
        raise LeagueError(
            f"{member} is a fixed policy of env {config.env.name} (a baseline), not a trained network; "
            "export a learner's snapshot, e.g. "
            + next((m for m, r in members.items() if r != "baseline"), "MEMBER")
        )
    if member not in members and not Path(f"{run.policy_path(member)}.pt").exists():
        from light_league.errors import did_you_mean

        raise LeagueError(
            f"{run.root} has no member {member!r}{did_you_mean(member, list(members))}; "
            f"members of its last generation: {', '.join(m for m, r in members.items() if r != 'baseline')}"
        )
    policy = run.policy(member)
    if not isinstance(policy, MAPPOPolicy):
        raise LeagueError(
            f"{member} is a {type(policy).__name__} ({config.learner.kind} learner); export writes MAPPO "
            "policies (learner.kind mappo) only"
        )
    env = run.make_env(1)
    spec = env.spec
    env.close()
    meta = {
        "format": "light_league exported actor, torch.export",
        "member": member,
        "env": config.env.name,
        "env_options": dict(config.env.options),
        "obs_dim": policy.obs_dim,
        "num_actions": policy.num_actions,
        "team_size": policy.team_size,
        "hidden_size": policy.recurrent_size,
        "agents": [
            {"name": name, "seat": int(seat), "index_in_team": int(index)}
            for name, seat, index in zip(spec.agents, spec.seat_of(), spec.index_in_team(), strict=True)
        ],
        "inputs": ["obs", "mask", "agent_idx"] + (["hidden"] if policy.recurrent_size else []),
        "outputs": ["log_probs"] + (["hidden"] if policy.recurrent_size else []),
    }
    target = Path(out) if out is not None else Path(f"{member}.pt2")
    if target.is_dir():  # --out DIR: the member's file in it
        target = target / f"{member}.pt2"
    try:
        return export_policy(policy, target, meta)
    except OSError as exc:
        raise LeagueError(f"--out {target}: cannot write it ({exc.strerror}); pass a writable path") from None
