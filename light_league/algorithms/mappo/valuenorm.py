"""Running normalisation of value targets (MAPPO's ``ValueNorm``).

The critic predicts returns in normalised units; ``normalize`` maps returns into those units and
``denormalize`` maps predictions back. Running first and second moments are decayed by ``beta``
once per ``update`` call (not per element) and debiased as in Adam; the variance is floored at
1e-2. This reproduces ``onpolicy/utils/valuenorm.py`` of the reference implementation.
"""

from __future__ import annotations

import torch
from torch import nn

#: floor of the running variance (reference value)
VAR_FLOOR = 1e-2


class ValueNorm(nn.Module):
    """Scalar running mean / variance with debiasing; state lives in buffers (saved with weights)."""

    running_mean: torch.Tensor
    running_mean_sq: torch.Tensor
    debiasing_term: torch.Tensor

    def __init__(self, *, beta: float = 0.99999, epsilon: float = 1e-5) -> None:
        super().__init__()
        if not 0.0 < beta < 1.0:
            raise ValueError(f"ValueNorm beta must lie in (0, 1), got {beta}")
        self.beta = beta
        self.epsilon = epsilon
        self.register_buffer("running_mean", torch.zeros((), dtype=torch.float64))
        self.register_buffer("running_mean_sq", torch.zeros((), dtype=torch.float64))
        self.register_buffer("debiasing_term", torch.zeros((), dtype=torch.float64))

    def reset(self) -> None:
        """Forget all statistics."""
        for buf in (self.running_mean, self.running_mean_sq, self.debiasing_term):
            buf.zero_()

    def mean_var(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Debiased running mean and variance (float64 scalars)."""
        debias = self.debiasing_term.clamp(min=self.epsilon)
        mean = self.running_mean / debias
        mean_sq = self.running_mean_sq / debias
        return mean, (mean_sq - mean**2).clamp(min=VAR_FLOOR)

    def mean_std(self) -> tuple[float, float]:
        """Debiased running mean and standard deviation as Python floats."""
        debias = max(float(self.debiasing_term), self.epsilon)
        mean = float(self.running_mean) / debias
        var = max(float(self.running_mean_sq) / debias - mean * mean, VAR_FLOOR)
        return mean, var**0.5

    @torch.no_grad()
    def update(self, targets: torch.Tensor) -> None:
        """Fold one batch of returns (any shape) into the running moments."""
        x = targets.detach().to(torch.float64)
        w = self.beta
        self.running_mean.mul_(w).add_(x.mean() * (1.0 - w))
        self.running_mean_sq.mul_(w).add_((x**2).mean() * (1.0 - w))
        self.debiasing_term.mul_(w).add_(1.0 - w)

    def normalize(self, x: torch.Tensor) -> torch.Tensor:
        mean, var = self.mean_var()
        return ((x - mean) / var.sqrt()).to(x.dtype)

    def denormalize(self, x: torch.Tensor) -> torch.Tensor:
        mean, var = self.mean_var()
        return (x * var.sqrt() + mean).to(x.dtype)
