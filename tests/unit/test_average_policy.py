"""The average policy (``league.average_policy``): a mixture of members distilled into one network.

On Kuhn poker the exact NashConv of the distilled network is compared with the mixture's own
(``game_tree.nash_conv`` of the members and weights): the distillation must weigh each member by
how often its own play reaches an information state, not average the members state by state
(that would be a different, here less exploitable, policy).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from fixed_policies import Pure

from light_league import envs
from light_league.algorithms.game_tree import nash_conv
from light_league.algorithms.mappo.policy import MAPPOPolicy
from light_league.training.average import AveragePolicy, average_path, distill, mixture_decisions


def kuhn_network(seed: int = 0) -> MAPPOPolicy:
    spec = envs.make_spec("kuhn_poker")
    return MAPPOPolicy(
        obs_dim=spec.obs_dim,
        state_dim=spec.state_dim,
        num_actions=spec.num_actions,
        team_size=spec.team_size,
        hidden_size=64,
        seed=seed,
    )


def test_a_mixture_plays_exactly_its_games_and_records_each_members_probabilities() -> None:
    members = [Pure(0), Pure(1)]  # always pass (check or fold), always bet (bet or call)
    data = mixture_decisions(envs.make_batched("kuhn_poker", 64), members, np.array([0.5, 0.5]), 4000, seed=0)
    assert data.games == 4000
    assert data.obs.shape[0] == data.mask.shape[0] == data.probs.shape[0] == data.agent_idx.shape[0]
    assert 4000 * 2 <= len(data) <= 4000 * 3  # a Kuhn game has two or three decisions
    np.testing.assert_allclose(data.probs.sum(axis=1), 1.0, rtol=1e-6)
    assert set(np.unique(data.probs).tolist()) <= {0.0, 1.0}  # each decision follows one pure member
    assert (data.probs[~data.mask] == 0).all()
    with pytest.raises(ValueError, match="weights"):
        mixture_decisions(envs.make_batched("kuhn_poker", 8), members, np.array([0.0, 0.0]), 10, seed=0)


def test_a_distilled_mixture_is_as_exploitable_as_the_mixture_itself() -> None:
    members = [Pure(0), Pure(1)]
    weights = np.array([0.5, 0.5])
    exact = nash_conv("kuhn_poker", members, weights)  # 1.167; the state-by-state average: 0.917
    data = mixture_decisions(envs.make_batched("kuhn_poker", 256), members, weights, 20_000, seed=1)
    net = kuhn_network()
    distill(net, data, epochs=10, lr=1e-2, batch_size=2048, seed=0)
    assert nash_conv("kuhn_poker", net) == pytest.approx(exact, abs=0.03)
    assert abs(nash_conv("kuhn_poker", net) - 0.9167) > 0.2


def test_the_average_policy_is_saved_per_generation_and_restored(tmp_path: Path) -> None:
    start = kuhn_network(seed=3)
    meta = {"kind": "mappo", "version": 1, "env": "kuhn_poker", "architecture": dict(start.arch)}
    meta.update(obs_dim=start.obs_dim, state_dim=start.state_dim, num_actions=start.num_actions, team_size=1)

    def build(weights, policy_meta):  # type: ignore[no-untyped-def]
        net = kuhn_network()
        net.set_weights(dict(weights))
        return net

    def average() -> AveragePolicy:
        return AveragePolicy(
            games=2000,
            epochs=2,
            lr=1e-3,
            batch_size=1024,
            num_envs=64,
            seed=0,
            policies_dir=tmp_path,
            make_env=lambda n: envs.make_batched("kuhn_poker", n),
            build=build,
        )

    first = average()
    members = {"pass": Pure(0), "bet": Pure(1)}
    for gen in range(2):
        first.update(gen, members, {"pass": 0.25, "bet": 0.75}, (start.get_weights(), meta))
        assert average_path(tmp_path, gen).with_suffix(".pt").exists()
    assert first.last["games"] == 2000 and first.last["decisions"] > 2000
    again = average()
    assert not again.restore(5)
    assert again.restore(1)
    for key, value in first.policy.get_weights().items():
        np.testing.assert_array_equal(again.policy.get_weights()[key], value)
