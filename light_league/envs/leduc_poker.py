"""Leduc poker (two players), native and batched, matching OpenSpiel's ``leduc_poker``.

Six cards (three ranks, two suits; card ``c`` has rank ``c // 2``), one private card each and
one public card dealt after the first betting round. Ante 1; raises are 2 in round 1 and 4 in
round 2, at most two per round. Actions (OpenSpiel's ids): 0 fold (only when facing a raise),
1 call/check, 2 raise. At showdown a pair with the public card wins, otherwise the higher rank;
equal ranks split. Returns are in chips, within ``[-13, 13]``.

The observation is OpenSpiel's ``information_state_tensor`` (30 floats: observer one-hot,
private card, public card once dealt, then four [call, raise] pairs per round);
:func:`infostate_string` maps it to OpenSpiel's ``information_state_string``. See
``light_league/envs/_poker.py`` for the batched and PettingZoo faces.
"""

from __future__ import annotations

import numpy as np

from light_league.envs._poker import (
    BettingState,
    PokerGame,
    PokerRules,
)
from light_league.envs.parallel import UniformRandomPolicy

FOLD, CALL, RAISE = 0, 1, 2
RAISE_SIZES = (2, 4)
MAX_RAISES = 2
STARTING_MONEY = 100


def _legal(contrib: tuple[int, int], player: int, acts: tuple[int, ...]) -> tuple[int, ...]:
    facing = contrib[player] < contrib[1 - player]
    can_raise = acts.count(RAISE) < MAX_RAISES
    return tuple(a for a, ok in ((FOLD, facing), (CALL, True), (RAISE, can_raise)) if ok)


def _transition(s: BettingState, a: int) -> BettingState:
    p, r, c = s.player, s.round, list(s.contrib)
    acts = s.rounds[r] + (a,)
    rounds = s.rounds[:r] + (acts,) + s.rounds[r + 1 :]
    if a == FOLD:
        return BettingState(player=-1, round=r, contrib=s.contrib, rounds=rounds, folded=p)
    c[p] = c[1 - p] + (RAISE_SIZES[r] if a == RAISE else 0)
    contrib = (c[0], c[1])
    if a == CALL and len(acts) >= 2:
        if r == 1:
            return BettingState(player=-1, round=r, contrib=contrib, rounds=rounds)
        return BettingState(player=0, round=1, contrib=contrib, rounds=rounds, legal=_legal(contrib, 0, ()))
    return BettingState(
        player=1 - p, round=r, contrib=contrib, rounds=rounds, legal=_legal(contrib, 1 - p, acts)
    )


RULES = PokerRules(
    name="leduc_poker",
    deck_size=6,
    has_public_card=True,
    num_actions=3,
    round_slots=4,
    num_rounds=2,
    action_bit=(0, 0, 1),
    root=BettingState(player=0, round=0, contrib=(1, 1), rounds=((), ()), legal=(CALL, RAISE)),
    transition=_transition,
    card_rank=(0, 0, 1, 1, 2, 2),
    score_bound=13.0,
    max_steps=8,
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
    observer, private, public, node = GAME.decode(obs)
    if observer != player:
        raise ValueError(f"obs belongs to player {observer}, not player {player}")
    c0, c1 = node.contrib
    text = (
        f"[Observer: {player}][Private: {private}][Round {node.round + 1}][Player: {node.player}]"
        f"[Pot: {c0 + c1}][Money: {STARTING_MONEY - c0} {STARTING_MONEY - c1}]"
    )
    if public >= 0:
        text += f"[Public: {public}]"
    for r, acts in enumerate(node.rounds):
        text += f"[Round{r + 1}: {' '.join(str(a) for a in acts)}]"
    return text
