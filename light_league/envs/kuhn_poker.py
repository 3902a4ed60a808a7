"""Kuhn poker (two players), native and batched, matching OpenSpiel's ``kuhn_poker``.

Three cards (0 < 1 < 2), one each, ante 1. Actions (OpenSpiel's ids): 0 pass, 1 bet. A bet costs
1; passing when facing a bet folds. Returns are in chips, within ``[-2, 2]``.

The observation is OpenSpiel's ``information_state_tensor`` (11 floats: observer one-hot, private
card one-hot, then for each of the three possible actions a [pass, bet] pair);
:func:`infostate_string` maps it to OpenSpiel's ``information_state_string`` (e.g. ``"2pb"``).
See ``light_league/envs/_poker.py`` for the batched and PettingZoo faces.
"""

from __future__ import annotations

import numpy as np

from light_league.envs._poker import (
    BettingState,
    PokerGame,
    PokerRules,
)
from light_league.envs.parallel import UniformRandomPolicy

PASS, BET = 0, 1
_LETTERS = "pb"


def _transition(s: BettingState, a: int) -> BettingState:
    p, c = s.player, list(s.contrib)
    acts = s.rounds[0] + (a,)
    folded = -1
    if a == BET:
        c[p] += 1
    elif c[p] < c[1 - p]:
        folded = p
    contrib = (c[0], c[1])
    if folded >= 0 or (len(acts) >= 2 and c[0] == c[1]):
        return BettingState(player=-1, round=0, contrib=contrib, rounds=(acts,), folded=folded)
    return BettingState(player=1 - p, round=0, contrib=contrib, rounds=(acts,), legal=(PASS, BET))


RULES = PokerRules(
    name="kuhn_poker",
    deck_size=3,
    has_public_card=False,
    num_actions=2,
    round_slots=3,
    num_rounds=1,
    action_bit=(0, 1),
    root=BettingState(player=0, round=0, contrib=(1, 1), rounds=((),), legal=(PASS, BET)),
    transition=_transition,
    card_rank=(0, 1, 2),
    score_bound=2.0,
    max_steps=3,
)
GAME = PokerGame(RULES)
SPEC = GAME.spec
#: fixed opponents by name: builders taking the env spec (the registry calls them)
FIXED_POLICIES = {"random": UniformRandomPolicy}
#: the Elo anchor of the fixed opponent (a uniformly random player rates 800)
FIXED_POLICY_RATINGS = {"random": 800.0}


#: the registry's factories: ``make_batched(num_envs)`` and ``make_parallel()`` (no options)
make_batched = GAME.make_batched
make_parallel = GAME.make_parallel


def infostate_string(obs: np.ndarray, player: int) -> str:
    """OpenSpiel's information-state string of ``player`` for our observation ``obs``."""
    observer, private, _, node = GAME.decode(obs)
    if observer != player:
        raise ValueError(f"obs belongs to player {observer}, not player {player}")
    return str(private) + "".join(_LETTERS[a] for a in node.rounds[0])
