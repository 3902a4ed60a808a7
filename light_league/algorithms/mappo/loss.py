"""MAPPO's losses as pure functions of tensors (``r_mappo.py`` of the reference implementation).

Every loss is a masked mean: ``(x * mask).sum() / mask.sum()`` with ``mask`` 1 for samples that
count (the reference's active masks); ``mask=None`` means all samples count.

* Policy: ``-mean(min(ratio * A, clip(ratio, 1 - eps, 1 + eps) * A))`` with
  ``ratio = exp(logp - logp_old)``.
* Entropy of the categorical over legal actions (illegal logits are ``-1e10``: probability 0).
* Value, in the critic's (normalised) units: ``V_clip = V_old + clip(V - V_old, -eps, eps)``,
  loss ``max(l(target - V), l(target - V_clip))`` with ``l`` Huber or squared error / 2.
* :func:`mappo_value_loss` adds the ValueNorm step exactly as the reference orders it: first
  update the running statistics with the mini-batch's returns, then normalise those returns into
  targets.
"""

from __future__ import annotations

import torch

from light_league.algorithms.mappo.valuenorm import ValueNorm


def masked_mean(x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """Mean of ``x`` over entries where ``mask`` is 1 (all entries when ``mask`` is None)."""
    if mask is None:
        return x.mean()
    m = mask.to(x.dtype)
    return (x * m).sum() / m.sum().clamp(min=1.0)


def huber_loss(error: torch.Tensor, delta: float) -> torch.Tensor:
    """Elementwise ``e^2 / 2`` if ``|e| <= delta`` else ``delta * (|e| - delta / 2)``."""
    abs_e = error.abs()
    return torch.where(abs_e <= delta, 0.5 * error**2, delta * (abs_e - 0.5 * delta))


def policy_loss(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    advantages: torch.Tensor,
    *,
    clip: float,
    mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """PPO clipped surrogate, to be minimised (scalar)."""
    ratio = torch.exp(logp - old_logp)
    surr = torch.min(ratio * advantages, torch.clamp(ratio, 1.0 - clip, 1.0 + clip) * advantages)
    return -masked_mean(surr, mask)


def categorical_entropy(logp: torch.Tensor) -> torch.Tensor:
    """(N,) entropy from (N, A) log-probabilities (``log_softmax`` of masked logits); illegal
    actions have probability 0 and add nothing."""
    p = logp.exp()
    return -(torch.where(p > 0, p * logp, torch.zeros_like(p))).sum(dim=-1)


def value_loss(
    values: torch.Tensor,
    old_values: torch.Tensor,
    targets: torch.Tensor,
    *,
    clip: float,
    huber_delta: float | None,
    clipped: bool,
    mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """Critic loss in the critic's units (scalar); ``huber_delta=None`` uses squared error / 2."""

    def elementwise(err: torch.Tensor) -> torch.Tensor:
        return huber_loss(err, huber_delta) if huber_delta is not None else 0.5 * err**2

    loss = elementwise(targets - values)
    if clipped:
        v_clip = old_values + torch.clamp(values - old_values, -clip, clip)
        loss = torch.max(loss, elementwise(targets - v_clip))
    return masked_mean(loss, mask)


def mappo_value_loss(
    values: torch.Tensor,
    old_values: torch.Tensor,
    returns: torch.Tensor,
    value_norm: ValueNorm | None,
    *,
    clip: float,
    huber_delta: float | None,
    clipped: bool,
    mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """The reference's ``cal_value_loss``: ``values``/``old_values`` in critic units, ``returns`` in
    return units. With a ValueNorm, its statistics are updated with ``returns`` (masked entries
    included, as in the reference) before the returns are normalised into targets."""
    if value_norm is not None:
        value_norm.update(returns)
        targets = value_norm.normalize(returns)
    else:
        targets = returns
    return value_loss(
        values, old_values, targets, clip=clip, huber_delta=huber_delta, clipped=clipped, mask=mask
    )


@torch.no_grad()
def ppo_diagnostics(
    logp: torch.Tensor, old_logp: torch.Tensor, *, clip: float, mask: torch.Tensor | None = None
) -> tuple[float, float]:
    """``(approx_kl, clip_frac)``: KL(old || new) by the unbiased ``(r - 1) - log r`` estimator,
    and the fraction of samples whose ratio left ``[1 - clip, 1 + clip]``."""
    log_ratio = logp - old_logp
    ratio = log_ratio.exp()
    kl = masked_mean((ratio - 1.0) - log_ratio, mask)
    frac = masked_mean(((ratio - 1.0).abs() > clip).to(logp.dtype), mask)
    return float(kl), float(frac)
