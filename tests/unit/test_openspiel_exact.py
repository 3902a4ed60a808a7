"""Exact NashConv of any small two-player zero-sum OpenSpiel game (``openspiel:<game>`` envs),
checked against OpenSpiel's own ``exploitability.nash_conv`` on the same policies."""

from __future__ import annotations

import numpy as np
import pytest

from light_league import envs
from light_league.algorithms.mappo.policy import MAPPOPolicy

pytest.importorskip("pyspiel")
pytestmark = pytest.mark.openspiel

import pyspiel  # noqa: E402
from open_spiel.python import policy as os_policy  # noqa: E402
from open_spiel.python.algorithms import exploitability as os_exploitability  # noqa: E402

from light_league.algorithms import game_tree  # noqa: E402

GAMES = ["openspiel:kuhn_poker", "openspiel:liars_dice(numdice=1,dice_sides=4)"]


def random_network(env: str, seed: int) -> MAPPOPolicy:
    """A MAPPO network of ``env``'s spec with large random output weights (a mixed policy far from uniform)."""
    spec = envs.make_spec(env)
    pol = MAPPOPolicy(
        obs_dim=spec.obs_dim,
        state_dim=spec.state_dim,
        num_actions=spec.num_actions,
        team_size=spec.team_size,
        hidden_size=16,
        gain=3.0,
        seed=seed,
    )
    return pol


def openspiel_policy(game: pyspiel.Game, policy: MAPPOPolicy) -> os_policy.TabularPolicy:
    """``policy`` queried state by state on OpenSpiel's own information-state tensors: a mapping
    that does not go through our game walk."""
    out = os_policy.TabularPolicy(game)
    for index in out.state_lookup.values():
        state = out.states[index]
        player = state.current_player()
        obs = np.asarray(state.information_state_tensor(player), dtype=np.float32)[None]
        mask = np.zeros((1, game.num_distinct_actions()), dtype=bool)
        mask[0, state.legal_actions(player)] = True
        probs = np.exp(policy.log_probs(obs, mask, np.zeros(1, dtype=np.int64)))[0]
        out.action_probability_array[index] = np.where(mask[0], probs, 0.0)
    return out


@pytest.mark.parametrize("env", GAMES)
def test_nash_conv_of_an_openspiel_game_matches_openspiels(env: str) -> None:
    assert envs.exact_game(env) is not None
    game = pyspiel.load_game(env.partition(":")[2])
    for seed in (0,):
        pol = random_network(env, seed)
        ours = game_tree.nash_conv(env, pol)
        theirs = os_exploitability.nash_conv(game, openspiel_policy(game, pol))
        assert ours > 0.01  # a random network is far from an equilibrium
        assert ours == pytest.approx(theirs, abs=1e-6)


def test_a_game_whose_tensors_do_not_name_its_information_states_is_refused_in_one_line() -> None:
    """Dark hex's information-state tensor leaves out the order of a player's moves: two
    information states share a tensor, so no policy of the observation can be evaluated."""
    with pytest.raises(RuntimeError, match=r"do not tell its \d+ information states apart"):
        game_tree.nash_conv(
            "openspiel:dark_hex(board_size=2)", random_network("openspiel:dark_hex(board_size=2)", 0)
        )


def test_games_openspiel_cannot_solve_exactly_are_not_exact() -> None:
    """General-sum, simultaneous-move and more-player games have no exact NashConv here."""
    for env in ("openspiel:first_sealed_auction", "openspiel:goofspiel(num_cards=3,imp_info=True)"):
        assert envs.exact_game(env) is None
    assert "openspiel:kuhn_poker" not in envs.exact_games()  # the list names the built-in envs only
