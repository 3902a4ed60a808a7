"""Machinery shared by the two-player poker games (Kuhn and Leduc).

A poker game here is a **betting tree** that does not depend on the cards (who acts, which
actions are legal, what each player has put in the pot, where each betting round ends) plus a
**deal** (the private cards and, for Leduc, the public card). Both faces of a game read the same
tables:

* :class:`PokerBatchedEnv` keeps one betting-tree node and one deal per game and steps ``B`` games
  with a handful of numpy gathers;
* :class:`PokerParallelEnv` plays one game in plain Python (the PettingZoo face).

Observations use OpenSpiel's ``information_state_tensor`` layout: the observer's one-hot seat,
the observer's private card, the public card (Leduc, once dealt) and two bits per action of each
betting round (Kuhn: pass/bet, Leduc: call/raise). Action ids are OpenSpiel's.

Deals come from counter-based random streams: episode ``e`` of a game seeded ``s`` is dealt from
``splitmix64(splitmix64(s) + e)``, so a game's deals depend only on its own seed and episode
count, never on how many games share a batch.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any

import gymnasium
import numpy as np
from pettingzoo import ParallelEnv

from light_league.envs.base import BatchedEnv, BatchStep, EnvSpec

AGENTS = ("player_0", "player_1")
_MASK64 = (1 << 64) - 1


# ----------------------------------------------------------------------------- random streams


def splitmix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser of ``x`` (uint64 array), element-wise; wraps modulo 2**64."""
    z = np.asarray(x, dtype=np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def seed_to_uint64(seed: int | np.ndarray) -> np.ndarray:
    """Map Python ints (any sign, any size) to uint64 modulo 2**64."""
    arr = np.asarray(seed, dtype=object) if not isinstance(seed, np.ndarray) else seed
    return np.asarray(np.vectorize(lambda s: int(s) & _MASK64, otypes=[np.uint64])(arr))


def deal_index(seed: np.ndarray, episode: np.ndarray, num_deals: int) -> np.ndarray:
    """Index of the deal of episode ``episode`` of games seeded ``seed`` (uint64 arrays).

    ``h % num_deals`` of a 64-bit hash: the bias is below ``num_deals / 2**64``.
    """
    h = splitmix64(splitmix64(seed) + np.asarray(episode, dtype=np.uint64))
    return (h % np.uint64(num_deals)).astype(np.int64)


def random_seed() -> int:
    """A fresh seed from the operating system's entropy (for ``reset(seed=None)``)."""
    return int(np.random.SeedSequence().generate_state(1, dtype=np.uint64)[0])


# ----------------------------------------------------------------------------- betting tree


@dataclass(frozen=True)
class BettingState:
    """A node of the card-independent betting tree, as the rules module builds it."""

    player: int  #: player to act, -1 at a terminal node
    round: int  #: betting round (0 or 1)
    contrib: tuple[int, int]  #: chips each player has put in the pot (antes included)
    rounds: tuple[tuple[int, ...], ...]  #: actions taken in each round so far
    folded: int = -1  #: player who folded, -1 if none
    legal: tuple[int, ...] = ()  #: legal action ids (empty at a terminal node)


@dataclass(frozen=True)
class PokerRules:
    """Everything that defines one poker variant."""

    name: str
    deck_size: int
    has_public_card: bool
    num_actions: int
    #: bits per action in the observation (2) and slots per round
    round_slots: int
    num_rounds: int
    #: action id -> (bit index within the action's 2-bit slot)
    action_bit: tuple[int, ...]
    root: BettingState
    transition: Callable[[BettingState, int], BettingState]
    #: rank used to compare hands at showdown, indexed by card
    card_rank: tuple[int, ...]
    score_bound: float
    max_steps: int


@dataclass(frozen=True)
class PokerTables:
    """The betting tree flattened into numpy tables (node 0 is the root)."""

    player: np.ndarray  #: (M,) int64, -1 at terminal nodes
    round: np.ndarray  #: (M,) int64
    legal: np.ndarray  #: (M, A) bool
    next_node: np.ndarray  #: (M, A) int64, -1 where illegal
    contrib: np.ndarray  #: (M, 2) float64
    folded: np.ndarray  #: (M,) int64
    seq_bits: np.ndarray  #: (M, num_rounds * round_slots * 2) float32
    states: tuple[BettingState, ...]

    @property
    def terminal(self) -> np.ndarray:
        return self.player < 0


def build_tables(rules: PokerRules) -> PokerTables:
    """Enumerate the betting tree breadth-first from the root."""
    states: list[BettingState] = [rules.root]
    index: dict[BettingState, int] = {rules.root: 0}
    edges: list[tuple[int, int, int]] = []
    i = 0
    while i < len(states):
        for a in states[i].legal:
            child = rules.transition(states[i], a)
            if child not in index:
                index[child] = len(states)
                states.append(child)
            edges.append((i, a, index[child]))
        i += 1
    m, n_bits = len(states), rules.num_rounds * rules.round_slots * 2
    next_node = np.full((m, rules.num_actions), -1, dtype=np.int64)
    for parent, a, child_id in edges:
        next_node[parent, a] = child_id
    seq_bits = np.zeros((m, n_bits), dtype=np.float32)
    for j, st in enumerate(states):
        for r, acts in enumerate(st.rounds):
            for k, a in enumerate(acts):
                seq_bits[j, (r * rules.round_slots + k) * 2 + rules.action_bit[a]] = 1.0
    return PokerTables(
        player=np.array([s.player for s in states], dtype=np.int64),
        round=np.array([s.round for s in states], dtype=np.int64),
        legal=next_node >= 0,
        next_node=next_node,
        contrib=np.array([s.contrib for s in states], dtype=np.float64),
        folded=np.array([s.folded for s in states], dtype=np.int64),
        seq_bits=seq_bits,
        states=tuple(states),
    )


def all_deals(rules: PokerRules) -> np.ndarray:
    """(D, 3) every ordered deal (private card of player 0, of player 1, public card or -1)."""
    n_cards = 3 if rules.has_public_card else 2
    deals = list(itertools.permutations(range(rules.deck_size), n_cards))
    out = np.full((len(deals), 3), -1, dtype=np.int64)
    out[:, :n_cards] = np.array(deals, dtype=np.int64)
    return out


class PokerGame:
    """Rules + tables + the per-deal helpers both env faces use."""

    def __init__(self, rules: PokerRules) -> None:
        self.rules = rules
        self.tables = build_tables(rules)
        self.deals = all_deals(rules)
        self.rank = np.array(rules.card_rank, dtype=np.int64)
        d = rules.deck_size
        self.obs_dim = 2 + d + (d if rules.has_public_card else 0) + self.tables.seq_bits.shape[1]
        self.state_dim = self.obs_dim + d
        self._seq_index = {
            row.tobytes(): j for j, row in enumerate(self.tables.seq_bits) if self.tables.player[j] >= 0
        }
        self.spec = EnvSpec(
            name=rules.name,
            agents=AGENTS,
            seats=((0,), (1,)),
            obs_dim=self.obs_dim,
            state_dim=self.state_dim,
            num_actions=rules.num_actions,
            symmetric=False,
            turn_based=True,
            score_range=(-rules.score_bound, rules.score_bound),
            max_steps=rules.max_steps,
            win_loss=False,
            openspiel_game=rules.name,  # the variants are named as OpenSpiel names them
        )

    def make_batched(self, num_envs: int, **options: Any) -> PokerBatchedEnv:
        """``num_envs`` games stepped together (poker games take no options)."""
        self._no_options(options)
        return PokerBatchedEnv(self, num_envs)

    def make_parallel(self, **options: Any) -> PokerParallelEnv:
        """One game as a PettingZoo ``ParallelEnv`` (poker games take no options)."""
        self._no_options(options)
        return PokerParallelEnv(self)

    def _no_options(self, options: dict[str, Any]) -> None:
        if options:
            raise ValueError(f"{self.rules.name} takes no options, got {sorted(options)}")

    def deal(self, seed: int, episode: int) -> np.ndarray:
        """(3,) cards of episode ``episode`` of a game seeded ``seed`` (public card -1 if none)."""
        idx = deal_index(seed_to_uint64(np.array([seed])), np.array([episode]), len(self.deals))
        return self.deals[int(idx[0])].copy()

    def hand_strength(self, cards: np.ndarray, player: int) -> np.ndarray:
        """Showdown strength of ``player``'s hand; ``cards`` (..., 3). A pair beats any high card."""
        own = self.rank[cards[..., player]]
        if not self.rules.has_public_card:
            return own
        pair = own == self.rank[cards[..., 2]]
        return own + pair * 100

    def returns(self, node: np.ndarray, cards: np.ndarray) -> np.ndarray:
        """(..., 2) final chip result of each player at terminal ``node`` with ``cards`` (..., 3)."""
        t = self.tables
        contrib = t.contrib[node]
        folded = t.folded[node]
        diff = np.sign(self.hand_strength(cards, 0) - self.hand_strength(cards, 1))
        r0 = np.where(
            folded == 0, -contrib[..., 0], np.where(folded == 1, contrib[..., 1], diff * contrib[..., 0])
        )
        return np.stack([r0, -r0], axis=-1)

    def encode(self, node: np.ndarray, cards: np.ndarray, observer: int) -> np.ndarray:
        """(..., obs_dim) float32 information-state tensor of ``observer``."""
        d = self.rules.deck_size
        shape = node.shape
        out = np.zeros((*shape, self.obs_dim), dtype=np.float32)
        out[..., observer] = 1.0
        flat = out.reshape(-1, self.obs_dim)
        rows = np.arange(flat.shape[0])
        flat[rows, 2 + cards[..., observer].reshape(-1)] = 1.0
        offset = 2 + d
        if self.rules.has_public_card:
            shown = (self.tables.round[node] > 0).reshape(-1)
            flat[rows[shown], offset + cards[..., 2].reshape(-1)[shown]] = 1.0
            offset += d
        flat[:, offset:] = self.tables.seq_bits[node.reshape(-1)]
        return out

    def encode_one(self, node: int, cards: np.ndarray, observer: int) -> np.ndarray:
        """(state_dim,) float32 for one game: the observer's obs (the first ``obs_dim`` entries)
        followed by the opponent's private card one-hot (the critic's state)."""
        d, seq = self.rules.deck_size, self.tables.seq_bits
        out = np.zeros(self.state_dim, dtype=np.float32)
        out[observer] = 1.0
        out[2 + cards[observer]] = 1.0
        if self.rules.has_public_card and self.tables.round[node] > 0:
            out[2 + d + cards[2]] = 1.0
        out[self.obs_dim - seq.shape[1] : self.obs_dim] = seq[node]
        out[self.obs_dim + cards[1 - observer]] = 1.0
        return out

    def decode(self, obs: np.ndarray) -> tuple[int, int, int, BettingState]:
        """Inverse of :meth:`encode` for one obs: (observer, private card, public card or -1, node)."""
        d = self.rules.deck_size
        o = np.asarray(obs, dtype=np.float32).reshape(-1)
        if o.shape[0] != self.obs_dim:
            raise ValueError(f"{self.rules.name} obs must have {self.obs_dim} entries, got {o.shape[0]}")
        observer = int(np.argmax(o[:2]))
        private = int(np.argmax(o[2 : 2 + d]))
        offset, public = 2 + d, -1
        if self.rules.has_public_card:
            block = o[offset : offset + d]
            public = int(np.argmax(block)) if block.any() else -1
            offset += d
        node = self._seq_index.get(o[offset:].astype(np.float32).tobytes())
        if node is None or not o[:2].any() or not o[2 : 2 + d].any():
            raise ValueError(f"not a valid {self.rules.name} observation: {o.tolist()}")
        return observer, private, public, self.tables.states[node]


# ----------------------------------------------------------------------------- batched face


class PokerBatchedEnv(BatchedEnv):
    """``num_envs`` games of one poker variant stepped together (auto-reset, counter-based deals).

    Only the player to act is active; the other player's mask is all False (as OpenSpiel's legal
    actions for a player who is not to act) and its action is ignored.
    """

    def __init__(self, game: PokerGame, num_envs: int) -> None:
        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        self.game = game
        self.spec = game.spec
        self.num_envs = num_envs
        self._seeds = np.zeros(num_envs, dtype=np.uint64)
        self._episode = np.zeros(num_envs, dtype=np.uint64)
        self._node = np.zeros(num_envs, dtype=np.int64)
        self._cards = np.zeros((num_envs, 3), dtype=np.int64)
        self._return = np.zeros((num_envs, 2), dtype=np.float64)
        self._started = False

    @property
    def cards(self) -> np.ndarray:
        """(B, 3) current deals (private card of player 0, of player 1, public card or -1)."""
        return self._cards.copy()

    def reset(self, seed: int | None = None) -> BatchStep:
        base = random_seed() if seed is None else seed
        self._seeds = seed_to_uint64(np.array([base + b for b in range(self.num_envs)], dtype=object))
        self._episode[:] = 0
        self._node[:] = 0
        self._cards = self._deal(np.arange(self.num_envs))
        self._started = True
        zeros = np.zeros(self.num_envs, dtype=bool)
        return self._batch_step(np.zeros((self.num_envs, 2), dtype=np.float32), zeros)

    def _deal(self, games: np.ndarray) -> np.ndarray:
        idx = deal_index(self._seeds[games], self._episode[games], len(self.game.deals))
        return self.game.deals[idx]

    def step(self, actions: np.ndarray) -> BatchStep:
        if not self._started:
            raise RuntimeError(f"{self.spec.name}: call reset() before step()")
        actions = np.asarray(actions, dtype=np.int64)
        if actions.shape != (self.num_envs, 2):
            raise ValueError(f"actions must have shape ({self.num_envs}, 2), got {actions.shape}")
        t = self.game.tables
        games = np.arange(self.num_envs)
        acting = t.player[self._node]
        chosen = actions[games, acting]
        in_range = (chosen >= 0) & (chosen < self.spec.num_actions)
        ok = in_range & t.legal[self._node, np.clip(chosen, 0, self.spec.num_actions - 1)]
        if not ok.all():
            b = int(np.flatnonzero(~ok)[0])
            legal = np.flatnonzero(t.legal[self._node[b]]).tolist()
            raise ValueError(
                f"{self.spec.name}: illegal action {int(chosen[b])} for player {int(acting[b])} "
                f"in game {b} (legal: {legal}); mask actions with BatchStep.action_mask"
            )
        self._node = t.next_node[self._node, chosen]
        done = t.player[self._node] < 0
        reward = np.zeros((self.num_envs, 2), dtype=np.float32)
        if done.any():
            ended = np.flatnonzero(done)
            reward[ended] = self.game.returns(self._node[ended], self._cards[ended])
            self._episode[ended] += np.uint64(1)
            self._node[ended] = 0
            self._cards[ended] = self._deal(ended)
        return self._batch_step(reward, done)

    def _batch_step(self, reward: np.ndarray, done: np.ndarray) -> BatchStep:
        g, t, b = self.game, self.game.tables, self.num_envs
        obs = np.stack([g.encode(self._node, self._cards, p) for p in (0, 1)], axis=1)
        state = np.concatenate([obs, self._opponent_cards()], axis=-1)
        acting = t.player[self._node]
        active = np.zeros((b, 2), dtype=bool)
        active[np.arange(b), acting] = True
        mask = t.legal[self._node][:, None, :] & active[:, :, None]
        lo, hi = self.spec.score_range
        return BatchStep(
            obs=obs,
            state=state,
            action_mask=mask,
            active=active,
            reward=reward,
            done=done,
            truncated=np.zeros(b, dtype=bool),
            seat_return=reward.copy(),
            outcome=((reward[:, 0] - lo) / (hi - lo)).astype(np.float32),
        )

    def _opponent_cards(self) -> np.ndarray:
        d = self.game.rules.deck_size
        out = np.zeros((self.num_envs, 2, d), dtype=np.float32)
        rows = np.arange(self.num_envs)
        out[rows, 0, self._cards[:, 1]] = 1.0
        out[rows, 1, self._cards[:, 0]] = 1.0
        return out


# ----------------------------------------------------------------------------- PettingZoo face


class PokerParallelEnv(ParallelEnv):
    """One game as a PettingZoo ``ParallelEnv`` (a turn-based game exposed in parallel form).

    Both agents stay in ``agents`` until the game ends; each step only the player to act is
    active and the other player's action is ignored (it may be omitted from the action dict).
    Observations are dicts ``{"observation": info-state tensor, "action_mask": int8}`` as in
    PettingZoo's classic games; the non-acting player's mask is all zero. ``infos[agent]`` holds
    ``"active"`` and the critic's ``"state"``. Rewards are 0 until the final step, which pays
    each player's chip result. ``reset(seed=s)`` deals like game 0 of a batch reset with ``s``;
    later ``reset()`` calls without a seed continue that seed's stream of deals.
    """

    def __init__(self, game: PokerGame) -> None:
        self.game = game
        self.metadata = {"render_modes": [], "name": game.rules.name, "is_parallelizable": True}
        self.possible_agents = list(AGENTS)
        self.agents: list[str] = []
        self.render_mode = None
        self._obs_space = gymnasium.spaces.Dict(
            {
                "observation": gymnasium.spaces.Box(0.0, 1.0, (game.obs_dim,), dtype=np.float32),
                "action_mask": gymnasium.spaces.Box(0, 1, (game.rules.num_actions,), dtype=np.int8),
            }
        )
        self._act_space = gymnasium.spaces.Discrete(game.rules.num_actions)
        self._seed = random_seed()
        self._episode = -1
        self._node = 0
        self._cards = np.zeros(3, dtype=np.int64)

    @functools.cache  # noqa: B019 - one space object per agent, as the API test requires
    def observation_space(self, agent: str) -> gymnasium.spaces.Space:
        return self._obs_space

    @functools.cache  # noqa: B019 - one space object per agent, as the API test requires
    def action_space(self, agent: str) -> gymnasium.spaces.Space:
        return self._act_space

    @property
    def cards(self) -> np.ndarray:
        """(3,) the current deal (private card of player 0, of player 1, public card or -1)."""
        return self._cards.copy()

    @property
    def current_player(self) -> int:
        """Index of the player to act (-1 once the game is over)."""
        return int(self.game.tables.player[self._node]) if self.agents else -1

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        if seed is not None:
            self._seed, self._episode = seed, -1
        self._episode += 1
        self._cards = self.game.deal(self._seed, self._episode)
        self._node = 0
        self.agents = list(AGENTS)
        return self._observe()

    def step(
        self, actions: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, float], dict[str, bool], dict[str, bool], dict[str, Any]]:
        if not self.agents:
            raise RuntimeError(f"{self.game.rules.name}: the game is over; call reset()")
        t = self.game.tables
        player = int(t.player[self._node])
        agent = AGENTS[player]
        if agent not in actions:
            raise ValueError(f"{self.game.rules.name}: no action for {agent}, the player to act")
        a = int(actions[agent])
        nxt = int(t.next_node[self._node, a]) if 0 <= a < t.next_node.shape[1] else -1
        if nxt < 0:
            legal = np.flatnonzero(t.legal[self._node]).tolist()
            raise ValueError(f"{self.game.rules.name}: illegal action {a} for {agent} (legal: {legal})")
        self._node = nxt
        obs, infos = self._observe()
        if t.player[nxt] >= 0:
            zero = dict.fromkeys(AGENTS, 0.0)
            return obs, zero, dict.fromkeys(AGENTS, False), dict.fromkeys(AGENTS, False), infos
        r = self.game.returns(np.array(nxt), self._cards)
        rewards = {AGENTS[p]: float(r[p]) for p in (0, 1)}
        self.agents = []
        return obs, rewards, dict.fromkeys(AGENTS, True), dict.fromkeys(AGENTS, False), infos

    def state(self) -> np.ndarray:
        """(2, state_dim) each player's critic state (its obs plus the opponent's private card)."""
        return np.stack([self.game.encode_one(self._node, self._cards, p) for p in (0, 1)])

    def _observe(self) -> tuple[dict[str, Any], dict[str, Any]]:
        t, g = self.game.tables, self.game
        acting = int(t.player[self._node])
        legal = t.legal[self._node].astype(np.int8)
        obs, infos = {}, {}
        for p, agent in enumerate(AGENTS):
            full = g.encode_one(self._node, self._cards, p)
            mask = legal if p == acting else np.zeros_like(legal)
            obs[agent] = {"observation": full[: g.obs_dim], "action_mask": mask}
            infos[agent] = {"active": p == acting, "state": full}
        return obs, infos


# ----------------------------------------------------------------------------- reference checks


@dataclass
class GameRecord:
    """One played game: the deal, each decision (both players' obs and masks) and the returns."""

    cards: np.ndarray  #: (3,)
    obs: list[np.ndarray] = dataclass_field(default_factory=list)  #: per decision, (2, obs_dim)
    masks: list[np.ndarray] = dataclass_field(default_factory=list)  #: per decision, (2, A) bool
    acting: list[int] = dataclass_field(default_factory=list)
    actions: list[int] = dataclass_field(default_factory=list)
    returns: np.ndarray = dataclass_field(default_factory=lambda: np.zeros(2))


def play_random_batched(env: PokerBatchedEnv, seed: int, rng: np.random.Generator) -> list[GameRecord]:
    """The first game of each of ``env.num_envs`` slots, with uniformly random legal actions."""
    step = env.reset(seed=seed)
    records = [GameRecord(cards=c) for c in env.cards]
    open_games = np.ones(env.num_envs, dtype=bool)
    for _ in range(env.spec.max_steps):
        acting = np.argmax(step.active, axis=1)
        legal = step.action_mask[np.arange(env.num_envs), acting]
        actions = np.zeros((env.num_envs, 2), dtype=np.int64)
        actions[np.arange(env.num_envs), acting] = _sample_legal(legal, rng)
        for b in np.flatnonzero(open_games):
            rec = records[b]
            rec.obs.append(step.obs[b])
            rec.masks.append(step.action_mask[b])
            rec.acting.append(int(acting[b]))
            rec.actions.append(int(actions[b, acting[b]]))
        step = env.step(actions)
        for b in np.flatnonzero(open_games & step.done):
            records[b].returns = step.seat_return[b].astype(np.float64)
        open_games &= ~step.done
    if open_games.any():
        raise RuntimeError(f"{env.spec.name}: games still running after max_steps={env.spec.max_steps}")
    return records


def play_parallel(
    env: PokerParallelEnv,
    seeds: list[int | None],
    rng: np.random.Generator,
    actions: list[list[int]] | None = None,
) -> list[GameRecord]:
    """One game per entry of ``seeds`` (``None`` continues the stream of the previous reset).

    Actions are uniformly random legal ones, or ``actions[g]`` replayed for game ``g``.
    """
    records = []
    for g, seed in enumerate(seeds):
        obs, _ = env.reset(seed=seed)
        rec = GameRecord(cards=env.cards)
        while env.agents:
            p = env.current_player
            masks = np.stack([obs[a]["action_mask"].astype(bool) for a in AGENTS])
            t = len(rec.actions)
            a = actions[g][t] if actions is not None else int(_sample_legal(masks[p][None], rng)[0])
            rec.obs.append(np.stack([obs[ag]["observation"] for ag in AGENTS]))
            rec.masks.append(masks)
            rec.acting.append(p)
            rec.actions.append(a)
            obs, rewards, *_ = env.step({AGENTS[p]: a})
        rec.returns = np.array([rewards[a] for a in AGENTS])
        records.append(rec)
    return records


def records_equal(a: GameRecord, b: GameRecord) -> bool:
    """Same deal, decisions (obs, masks, acting player, actions) and returns."""
    same_steps = len(a.actions) == len(b.actions) and all(
        np.array_equal(x, y) for xs, ys in ((a.obs, b.obs), (a.masks, b.masks)) for x, y in zip(xs, ys)
    )
    return (
        same_steps
        and np.array_equal(a.cards, b.cards)
        and a.acting == b.acting
        and a.actions == b.actions
        and np.allclose(a.returns, b.returns)
    )


def reference_mismatches(
    records: list[GameRecord], reference_game: Any, infostate_string: Callable[[np.ndarray, int], str]
) -> list[str]:
    """Replay ``records`` in a reference implementation (an OpenSpiel game object, duck-typed).

    Chance nodes take the recorded cards in order; at every decision the acting player, both
    players' legal actions, information-state strings and tensors are compared, and at the end
    the terminal step and the returns. Returns one line per mismatch (empty when all agree).
    """
    check = _InfostateCheck(infostate_string)
    errors: list[str] = []
    for g, rec in enumerate(records):
        state, cards = reference_game.new_initial_state(), iter(rec.cards.tolist())
        for t, action in enumerate(rec.actions):
            while state.is_chance_node():
                state.apply_action(next(cards))
            errors.extend(f"game {g} step {t}: {e}" for e in check.decision(state, rec, t))
            state.apply_action(action)
        while state.is_chance_node():
            state.apply_action(next(cards))
        if not state.is_terminal():
            errors.append(f"game {g}: ours ended after {len(rec.actions)} actions, the reference did not")
        elif state.returns() != rec.returns.tolist():
            errors.append(f"game {g}: returns {rec.returns.tolist()} != reference {state.returns()}")
        if len(errors) > 20:
            break
    return errors


class _InfostateCheck:
    """Compares decisions with the reference, remembering information states already verified."""

    def __init__(self, infostate_string: Callable[[np.ndarray, int], str]) -> None:
        self._to_string = infostate_string
        self._ours: dict[tuple[bytes, int], str] = {}
        self._tensor_of: dict[tuple[str, int], bytes] = {}

    def decision(self, state: Any, rec: GameRecord, t: int) -> list[str]:
        if state.is_terminal() or state.current_player() != rec.acting[t]:
            return [f"acting player {rec.acting[t]} != reference {state.current_player()}"]
        errors = []
        for p in (0, 1):
            legal = np.flatnonzero(rec.masks[t][p]).tolist()
            if legal != state.legal_actions(p):
                errors.append(f"player {p} legal {legal} != reference {state.legal_actions(p)}")
            errors.extend(self._infostate(state, rec.obs[t][p], p))
        return errors

    def _infostate(self, state: Any, obs: np.ndarray, p: int) -> list[str]:
        key = (obs.tobytes(), p)
        if key not in self._ours:
            self._ours[key] = self._to_string(obs, p)
        ours, ref = self._ours[key], state.information_state_string(p)
        if ours != ref:
            return [f"player {p} infostate {ours!r} != reference {ref!r}"]
        if (ref, p) not in self._tensor_of:
            tensor = state.information_state_tensor(p)
            self._tensor_of[ref, p] = np.asarray(tensor, dtype=np.float32).tobytes()
        if self._tensor_of[ref, p] != key[0]:
            return [f"player {p} obs differs from the reference information_state_tensor at {ref!r}"]
        return []


def _sample_legal(legal: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of ``legal`` (N, A) bool."""
    scores = np.where(legal, rng.random(legal.shape), -1.0)
    return np.argmax(scores, axis=1)
