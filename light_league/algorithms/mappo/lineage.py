"""What belongs to a MAPPO learner's lineage and restarts with it: the magnet and the snapshot average.

* :class:`Magnet` (``magnet_coef``): a frozen copy of the actor that moves ``magnet_rate`` of the
  way to the actor after each update; ``KL(policy || magnet)`` in the actor loss pulls the last
  iterate toward an equilibrium instead of cycling around it (magnetic mirror descent; Sokota et
  al., ICLR 2023).
* :class:`WeightAverage` (``snapshot_average_rate``): a running average of the learner's
  parameters, what a snapshot freezes (Polyak averaging): after the lineage's ``n``-th update
  every averaged parameter moves ``max(rate, 1/n)`` of the way to the learner's.

Both start again from the current weights when the lineage restarts (``set_weights``, a reset).
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import torch


class Magnet:
    """A frozen, slowly moving copy of an actor network."""

    def __init__(self, actor: torch.nn.Module) -> None:
        self.net = copy.deepcopy(actor)
        self.net.requires_grad_(False)

    @torch.no_grad()
    def move(self, actor: torch.nn.Module, rate: float) -> None:
        """Every magnet parameter moves ``rate`` of the way toward the actor's."""
        for m, p in zip(self.net.parameters(), actor.parameters()):
            m.lerp_(p, rate)

    def kl(
        self,
        logp_all: torch.Tensor,
        mask: torch.Tensor,
        magnet_logp: Callable[[torch.nn.Module], torch.Tensor],
    ) -> torch.Tensor:
        """Mean ``KL(policy || magnet)`` over the rows of ``logp_all`` (legal actions only);
        ``magnet_logp(net)`` gives the magnet's masked log-probabilities of the same rows."""
        with torch.no_grad():
            target = magnet_logp(self.net)
        p = logp_all.exp()
        terms = torch.where(mask, p * (logp_all - target), torch.zeros_like(p))
        return terms.sum(dim=-1).mean()


class WeightAverage:
    """A running average of a module's parameters (a plain mean for the first ``1/rate`` updates)."""

    def __init__(self, module: torch.nn.Module, rate: float) -> None:
        self.rate = rate
        self.updates = 0
        self.params = {name: p.detach().clone() for name, p in module.named_parameters()}

    @torch.no_grad()
    def move(self, module: torch.nn.Module) -> None:
        self.updates += 1
        step = max(self.rate, 1.0 / self.updates)
        for name, p in module.named_parameters():
            self.params[name].lerp_(p, step)

    def state_dict(self) -> dict[str, object]:
        return {
            "params": {k: v.detach().cpu().clone() for k, v in self.params.items()},
            "updates": self.updates,
        }

    def load(self, params: dict[str, torch.Tensor], updates: int) -> None:
        for name, value in params.items():
            self.params[name].copy_(value)
        self.updates = updates
