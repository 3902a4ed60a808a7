"""A :class:`SampleBatch` made ready for PPO epochs: GAE, then tensors on the learner's device.

:func:`prepare` is the first phase of ``MAPPOLearner.update``: GAE in return units
(:mod:`.gae`), advantage normalisation over the valid entries, then either the valid samples of
every stream flattened into one sample set (feed-forward), or the streams cut into chunks that
start from the hidden state the rollout stored (recurrent, :mod:`.chunks`). The old values are
mapped into the critic's units with the ValueNorm statistics of the rollout (they change only
inside an update, so they equal the critic's raw outputs at collection time).

Feed-forward sample sets also carry, per network input (``obs``, ``state``), the index of each
sample's row among the batch's distinct rows when there are few (poker batches repeat a few
information states thousands of times): a network then runs once per distinct row.
"""

from __future__ import annotations

import numpy as np
import torch

from light_league.algorithms.mappo.chunks import chunk_index, to_chunks
from light_league.algorithms.mappo.gae import compute_gae, normalize_advantages
from light_league.algorithms.mappo.policy import MAPPOPolicy, distinct_rows
from light_league.data_buffer.episode import SampleBatch

#: per-chunk arrays of the recurrent layout (``(C, ...)``); every other one is ``(L, C, ...)``
PER_CHUNK = ("agent_idx", "h0")


def explained_variance(values: np.ndarray, returns: np.ndarray) -> float:
    """``1 - Var(returns - values) / Var(returns)``; NaN when the returns do not vary."""
    var = float(np.var(returns))
    return float("nan") if var == 0.0 else 1.0 - float(np.var(returns - values)) / var


def num_samples(data: dict[str, torch.Tensor]) -> int:
    """Samples in prepared data: rows, or the valid entries of chunks."""
    return int(data["valid"].sum()) if "h0" in data else int(data["actions"].shape[0])


def prepare(
    batch: SampleBatch,
    policy: MAPPOPolicy,
    *,
    gamma: float,
    gae_lambda: float,
    advantage_norm: bool,
    chunk_length: int,
    device: torch.device,
) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor], dict[str, float]]:
    """``(data, distinct, stats)``: the batch's samples (or chunks) as tensors on ``device``, the
    distinct network inputs they index (``distinct[key]`` with ``data[key + "_inverse"]``), and
    two diagnostics: the explained variance of the batch's values and the advantages' standard
    deviation before normalisation."""
    adv, returns = compute_gae(
        batch.rewards,
        batch.values,
        batch.dones,
        batch.valid,
        batch.bootstrap_values,
        gamma=gamma,
        lam=gae_lambda,
    )
    ok = np.asarray(batch.valid, dtype=bool)
    stats = {"advantage_std": float(adv[ok].std())}
    if advantage_norm:
        adv = normalize_advantages(adv, batch.valid)
    values = np.asarray(batch.values, dtype=np.float32)[ok]
    stats["explained_variance"] = explained_variance(values, returns[ok])
    if policy.recurrent_size:
        return _chunks(batch, policy, adv, returns, chunk_length, device), {}, stats
    idx = np.broadcast_to(np.asarray(batch.agent_idx, dtype=np.int64)[None, :], ok.shape)
    arrays = {
        "obs": (batch.obs[ok], np.float32),
        "state": (batch.state[ok], np.float32),
        "mask": (batch.action_mask[ok], bool),
        "agent_idx": (idx[ok], np.int64),
        "actions": (batch.actions[ok], np.int64),
        "old_logp": (batch.logp[ok], np.float32),
        "advantages": (adv[ok], np.float32),
        "returns": (returns[ok], np.float32),
    }
    data = {k: torch.from_numpy(np.ascontiguousarray(x, dtype=t)).to(device) for k, (x, t) in arrays.items()}
    distinct: dict[str, torch.Tensor] = {}
    for key in ("obs", "state"):
        found = distinct_rows(policy._with_id(data[key], data["agent_idx"]))
        if found is not None:
            distinct[key], data[f"{key}_inverse"] = found
    with torch.no_grad():
        data["old_values"] = policy.to_critic_units(torch.from_numpy(values).to(device))
    return data, distinct, stats


def _chunks(
    batch: SampleBatch,
    policy: MAPPOPolicy,
    adv: np.ndarray,
    returns: np.ndarray,
    chunk_length: int,
    device: torch.device,
) -> dict[str, torch.Tensor]:
    """The recurrent layout: ``(L, C, ...)`` chunks (:mod:`.chunks`) with their ``valid``
    entries, each chunk's agent position and the hidden state stored at its start (``h0``)."""
    hidden = batch.hidden
    width = policy.hidden_dim
    if hidden is None or hidden.shape != (*batch.shape, width):
        got = None if hidden is None else hidden.shape
        raise ValueError(
            f"SampleBatch.hidden is {got}, this recurrent learner needs {(*batch.shape, width)}: the hidden "
            "states its policy's rollouts store; was the batch collected by another policy?"
        )
    index = chunk_index(batch.valid, batch.dones, chunk_length)
    fields = {
        "obs": (batch.obs, np.float32),
        "state": (batch.state, np.float32),
        "mask": (batch.action_mask, bool),
        "actions": (batch.actions, np.int64),
        "old_logp": (batch.logp, np.float32),
        "advantages": (adv, np.float32),
        "returns": (returns, np.float32),
        "values": (batch.values, np.float32),
        "valid": (batch.valid, bool),
    }
    arrays = {k: torch.from_numpy(to_chunks(np.asarray(x, dtype=t), index)) for k, (x, t) in fields.items()}
    arrays["agent_idx"] = torch.from_numpy(np.asarray(batch.agent_idx, dtype=np.int64)[index.start_stream])
    arrays["h0"] = torch.from_numpy(np.ascontiguousarray(hidden[index.start_time, index.start_stream]))
    data = {k: t.to(device) for k, t in arrays.items()}
    with torch.no_grad():
        data["old_values"] = policy.to_critic_units(data.pop("values"))
    return data


def minibatches(
    data: dict[str, torch.Tensor], parts: int, generator: torch.Generator
) -> list[dict[str, torch.Tensor]]:
    """A fresh shuffle of ``data``'s samples (or chunks: axis 1 of the chunk arrays) split into
    ``parts`` near-equal mini-batches (no sample dropped). With one part the order cannot change
    the gradient, so the data is used as is."""
    chunked = "h0" in data
    num_items = int(data["h0"].shape[0] if chunked else data["actions"].shape[0])
    parts = min(parts, num_items)
    if parts == 1:
        return [data]
    perm = torch.randperm(num_items, generator=generator).to(data["actions"].device)
    if not chunked:
        return [{k: t[idx] for k, t in data.items()} for idx in torch.tensor_split(perm, parts)]
    return [
        {k: t[idx] if k in PER_CHUNK else t[:, idx] for k, t in data.items()}
        for idx in torch.tensor_split(perm, parts)
    ]
