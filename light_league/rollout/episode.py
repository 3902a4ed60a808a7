"""The pure episode loop: batched games between policies, one forward pass per policy (or bank) per step.

:class:`EpisodeLoop` owns one :class:`~light_league.envs.base.BatchedEnv` and keeps its games running across
calls, so episodes longer than one call are not cut short, and a game keeps the opponent and
seat it was drawn with until it ends, whatever later calls' distributions say. Two uses:

* :meth:`EpisodeLoop.collect` — a learner plays ``num_steps`` batched steps against opponents
  sampled per episode from a distribution; returns a :class:`SampleBatch` of the learner's
  decisions and the finished games' results.
* :meth:`EpisodeLoop.evaluate` — fixed pairings play a quota of episodes each, in one batch.

Every game ``b`` has a policy per seat. Each step, all agents that one policy controls (across
all games) go through that policy in one call, and all agents of the members of one bank
(:mod:`light_league.rollout.policy_bank`) through the bank in one call; actions are
sampled here with Gumbel-max from a seeded numpy generator, so a run is reproducible under its
seed.

**Memory.** When a policy in play is recurrent (``hidden_dim`` > 0, see
:class:`~light_league.algorithms.base.RecurrentPolicy`), the loop keeps one hidden-state vector per
game and agent (``(B, N, H)``, ``H`` the widest in play; a policy uses its first
``hidden_dim`` entries). An agent's state advances on each of its own decisions, a game's states
are zeroed when it ends (its next episode starts fresh, whoever plays it) and all of them when the
loop restarts its games. The learner's state before each decision goes into the
:class:`SampleBatch` (``hidden``) for training on chunks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from light_league.algorithms.base import (
    Policy,
    RecurrentTrainablePolicy,
    TrainablePolicy,
    hidden_dim,
)
from light_league.data_buffer.episode import SampleBatch
from light_league.envs.base import BatchedEnv, BatchStep
from light_league.errors import NonFiniteError
from light_league.rollout.env_checks import check_finite, check_legal_actions
from light_league.rollout.policy_bank import policy_log_probs
from light_league.rollout.streams import StreamRecorder, with_mirror
from light_league.types import BEHAVIOUR_SAMPLES, Behaviour, MatchResult, pack_results, unpack_results

__all__ = [
    "BEHAVIOUR_SAMPLES",
    "Behaviour",
    "EpisodeLoop",
    "EvaluationResult",
    "MatchResult",
    "RolloutResult",
]


#: a hook of :meth:`EpisodeLoop._act` that sees every row it played: ``(step, games, agents, policy
#: index, log-probabilities, actions)``
Played = Callable[[BatchStep, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray], None]


@dataclass
class RolloutResult:
    batch: SampleBatch
    results: list[MatchResult]
    env_steps: int
    episodes: int


@dataclass
class EvaluationResult:
    results: list[MatchResult]
    env_steps: int
    behaviour: dict[str, Behaviour]
    #: ``(len(results), 2)``: both seats' episode returns of each game, in the order of ``results``
    #: (a result holds seat 0's only); None where a caller built the result without them
    seat_returns: np.ndarray | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "results": pack_results(self.results)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, results=unpack_results(state["results"]))


def sample_actions(logp: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Gumbel-max sampling from (N, A) log-probabilities (``-inf`` entries are never drawn).

    A NaN (a policy fed non-finite numbers, or with non-finite weights) is a
    :class:`NonFiniteError`: the argmax of NaN would pick action 0 without a word."""
    if np.isnan(logp).any():
        row = int(np.argwhere(np.isnan(logp))[0][0])
        raise NonFiniteError(
            f"a policy returned NaN log-probabilities (row {row} of {logp.shape[0]}: {logp[row].tolist()}); "
            "its weights or inputs are not finite numbers"
        )
    gumbel = -np.log(-np.log(rng.random(logp.shape) + 1e-300) + 1e-300)
    return np.argmax(logp + gumbel, axis=1).astype(np.int64)


class EpisodeLoop:
    """A batched env plus the per-game bookkeeping of who plays which seat."""

    def __init__(self, env: BatchedEnv, *, seed: int) -> None:
        self.env = env
        self.spec = env.spec
        self.rng = np.random.default_rng(seed)
        self._seats = np.asarray(self.spec.seats, dtype=np.int64)  # (2, K)
        self._seat_of = self.spec.seat_of()  # (N,)
        self._team_idx = self.spec.index_in_team()
        self._step: BatchStep | None = None
        self._game_steps = np.zeros(env.num_envs, dtype=np.int64)  #: steps each game has taken
        self._owner: str | None = None  #: the learner whose games are in progress (collect)
        # every opponent id this loop has drawn, by slot (ids, not positions in a caller's list,
        # so a game keeps its opponent when the distribution changes)
        self._opp_ids: list[str] = []
        self._opp_index: dict[str, int] = {}
        # per game (collect): seat of the learner, opponent slot and the generation that drew it;
        # the learner's agents (B, K) and each agent's policy (B, N: 0 = learner, 1 + slot =
        # opponent), kept in step by _assign
        self._learner_seat = np.zeros(env.num_envs, dtype=np.int64)
        self._opponent = np.zeros(env.num_envs, dtype=np.int64)
        self._drawn = np.zeros(env.num_envs, dtype=np.int64)
        self._learner_agents = self._seats[self._learner_seat]
        self._agent_policy = np.zeros((env.num_envs, self.spec.n_agents), dtype=np.int64)
        #: (B, N, H) hidden state of every agent of every game, while a recurrent policy plays
        self._hidden: np.ndarray | None = None

    # ------------------------------------------------------------------ helpers
    def _restart(self, seed: int | None = None) -> BatchStep:
        if seed is None:
            seed = int(self.rng.integers(0, 2**31 - 1))
        self._game_steps[:] = 0
        self._step = self.env.reset(seed=seed)
        self._hidden = None
        check_finite(self._step, self.spec, self._game_steps)
        check_legal_actions(self._step, self.spec, self._game_steps)
        return self._step

    def _make_room(self, policies: Sequence[Policy | None]) -> None:
        """Hidden states at least as wide as the widest recurrent policy in ``policies`` (zeros
        for what is new: the games of a policy not yet in play have not started with it)."""
        width = max((hidden_dim(p) for p in policies if p is not None), default=0)
        have = 0 if self._hidden is None else self._hidden.shape[2]
        if width > have:
            grown = np.zeros((self.env.num_envs, self.spec.n_agents, width), dtype=np.float32)
            if self._hidden is not None:
                grown[:, :, :have] = self._hidden
            self._hidden = grown

    def _forget(self, games: np.ndarray) -> None:
        """Zero the hidden states of ``games`` (their next episode starts fresh)."""
        if self._hidden is not None:
            self._hidden[games] = 0.0

    def _env_step(self, actions: np.ndarray) -> BatchStep:
        """One step of every game, its numbers checked (:func:`check_finite`)."""
        step = self.env.step(actions)
        self._game_steps += 1
        check_finite(step, self.spec, self._game_steps)
        check_legal_actions(step, self.spec, self._game_steps)
        self._game_steps[step.done] = 0
        return step

    def _act(
        self,
        step: BatchStep,
        active: np.ndarray,
        agent_policy: np.ndarray,
        policies: Sequence[Policy | None],
        behaviour: list[Behaviour] | None = None,
        played: Played | None = None,
    ) -> np.ndarray:
        """Actions (B, N) for the ``active`` agents; ``agent_policy`` (B, N) indexes ``policies``.

        The log-probabilities of all rows are computed first (one call per policy, or one per
        bank for banked policies), then every row is sampled in one draw. ``played`` is handed
        every row: ``(step, games, agents, policy index, log-probabilities, actions)``.
        """
        actions = np.zeros(active.shape, dtype=np.int64)
        rows_b, rows_i = np.nonzero(active)
        if rows_b.size == 0:
            return actions
        which = agent_policy[rows_b, rows_i]
        obs, mask = step.obs[rows_b, rows_i], step.action_mask[rows_b, rows_i]
        if self._hidden is None:
            logp = policy_log_probs(policies, which, obs, mask, self._team_idx[rows_i])
        else:
            hidden = self._hidden[rows_b, rows_i]
            logp = policy_log_probs(policies, which, obs, mask, self._team_idx[rows_i], hidden=hidden)
            self._hidden[rows_b, rows_i] = hidden
        chosen = sample_actions(logp, self.rng)
        actions[rows_b, rows_i] = chosen
        if played is not None:
            played(step, rows_b, rows_i, which, logp, chosen)
        if behaviour is not None:
            for p in np.unique(which).tolist():
                sel = which == p
                pos = step.positions[rows_b[sel], rows_i[sel]] if step.positions is not None else None
                behaviour[p].add(chosen[sel], pos)
        return actions

    # ------------------------------------------------------------------ training
    def opponents_in_use(self) -> list[str]:
        """Ids of the opponents of the games in progress (a caller must pass their policies on)."""
        if self._step is None:
            return []
        return [self._opp_ids[o] for o in np.unique(self._opponent).tolist()]

    def collect(
        self,
        learner: TrainablePolicy,
        opponents: Mapping[str, Policy],
        probs: Mapping[str, float],
        num_steps: int,
        *,
        learner_id: str = "learner",
        learner_seat: int | None = None,
        policy_version: int = 0,
        generation: int = 0,
        mirror: bool = False,
    ) -> RolloutResult:
        """Play ``num_steps`` batched steps of ``learner`` against opponents drawn per episode.

        Games in progress continue from the previous call with the opponent and seat they were
        drawn with, whatever ``probs`` says now; only games that start in this call draw from
        ``probs`` (and are stamped with ``generation``). ``opponents`` holds the policies of every
        id with positive probability and of every id in :meth:`opponents_in_use`. ``mirror``: the
        batch also holds the opponent seat's decisions in the games whose opponent is
        ``learner_id`` itself, as mirror streams (:class:`SampleBatch`; feed-forward learners).
        """
        cdf, draw_ids = self._opponent_cdf(opponents, probs)
        step = self._step
        if step is None or self._owner != learner_id:
            step = self._restart()
            self._owner = learner_id
            self._assign(np.ones(self.env.num_envs, dtype=bool), cdf, draw_ids, learner_seat, generation)
        policies = self._collect_policies(learner, opponents)
        rec = StreamRecorder(self.env.num_envs, self.spec.team_size, num_steps, hidden_dim(learner))
        mirrored = self._mirror_recorder(learner, learner_id, num_steps) if mirror else None
        results: list[MatchResult] = []
        learner_rows = np.arange(self.env.num_envs)[:, None]
        for t in range(num_steps):
            agents = self._learner_agents
            opposing = self._seats[1 - self._learner_seat]
            actions = self._act_opponents(step, policies, None if mirrored is None else mirrored[1](t))
            self._act_learner(step, learner, agents, actions, rec, t)
            step = self._env_step(actions)
            rec.add_rewards(step.reward[learner_rows, agents])
            if mirrored is not None:
                mirrored[0].add_rewards(step.reward[learner_rows, opposing])
            if step.done.any():
                done_idx = np.flatnonzero(step.done)
                rec.end_episodes(done_idx)
                if mirrored is not None:
                    mirrored[0].end_episodes(done_idx)
                self._forget(done_idx)
                results.extend(self._results(step, done_idx, learner_id))
                self._assign(step.done, cdf, draw_ids, learner_seat, generation)
                policies = self._collect_policies(learner, opponents)
        self._step = step
        boot = self._bootstrap(learner, step)
        batch = rec.build(
            np.asarray(boot, dtype=np.float32), self.spec, policy_version, num_steps * self.env.num_envs
        )
        if mirrored is not None:
            batch = with_mirror(batch, mirrored[0], self.spec, policy_version)
        return RolloutResult(batch, results, num_steps * self.env.num_envs, len(results))

    def _mirror_recorder(
        self, learner: Policy, learner_id: str, num_steps: int
    ) -> tuple[StreamRecorder, Callable[[int], Played]]:
        """A recorder of the opponent seat's decisions where the learner plays itself, and for
        each step ``t`` the ``played`` hook of :meth:`_act` that feeds it."""
        if hidden_dim(learner):
            raise ValueError(
                "mirror streams need a feed-forward learner policy (its hidden states are not kept)"
            )
        recorder = StreamRecorder(self.env.num_envs, self.spec.team_size, num_steps)
        team_idx = self._team_idx

        def hook(t: int) -> Played:
            def played(
                step: BatchStep,
                games: np.ndarray,
                agents: np.ndarray,
                which: np.ndarray,
                logp: np.ndarray,
                chosen: np.ndarray,
            ) -> None:
                slot = self._opp_index.get(learner_id)
                sel = which == (-1 if slot is None else 1 + slot)
                if not sel.any():
                    return
                g, i, a = games[sel], agents[sel], chosen[sel]
                recorder.add_decisions(
                    t,
                    g * self.spec.team_size + team_idx[i],
                    step.obs[g, i],
                    step.state[g, i],
                    step.action_mask[g, i],
                    a,
                    logp[sel][np.arange(a.size), a],
                    np.zeros(a.size, dtype=np.float32),
                    seat=1 - self._learner_seat[g],
                )

            return played

        return recorder, hook

    def _bootstrap(self, learner: TrainablePolicy, step: BatchStep) -> np.ndarray:
        """The learner's values of its agents' states after the last step (from their hidden
        states, when it is recurrent)."""
        learner_rows = np.arange(self.env.num_envs)[:, None]
        state = step.state[learner_rows, self._learner_agents].reshape(-1, self.spec.state_dim)
        idx = np.tile(np.arange(self.spec.team_size), self.env.num_envs)
        width = hidden_dim(learner)
        if not width:
            return np.asarray(learner.values(state, idx))
        assert self._hidden is not None
        hidden = self._hidden[learner_rows, self._learner_agents, :width].reshape(-1, width)
        return np.asarray(cast(RecurrentTrainablePolicy, learner).step_values(state, idx, hidden))

    def _opponent_cdf(
        self, opponents: Mapping[str, Policy], probs: Mapping[str, float]
    ) -> tuple[np.ndarray, np.ndarray]:
        """The cumulative draw distribution and the opponent index (in ``_opp_ids``) of each entry."""
        ids = [o for o, p in probs.items() if p > 0]
        weights = np.array([probs[o] for o in ids], dtype=np.float64)
        if not ids or not np.isfinite(weights).all():
            raise ValueError(f"collect needs opponents with positive probability, got {dict(probs)}")
        missing = [o for o in ids if o not in opponents]
        if missing:
            raise ValueError(f"collect got no policy for opponents {missing} of the distribution")
        cdf = weights.cumsum()
        cdf /= cdf[-1]  # what Generator.choice(p=weights) draws from, without its per-call checks
        return cdf, np.array([self._opp_slot(o) for o in ids], dtype=np.int64)

    def _opp_slot(self, opponent_id: str) -> int:
        slot = self._opp_index.get(opponent_id)
        if slot is None:
            slot = self._opp_index[opponent_id] = len(self._opp_ids)
            self._opp_ids.append(opponent_id)
        return slot

    def _collect_policies(self, learner: Policy, opponents: Mapping[str, Policy]) -> list[Policy | None]:
        """Policy list for ``_act``: 0 the learner, ``1 + slot`` each opponent in play (else None)."""
        policies: list[Policy | None] = [learner, *([None] * len(self._opp_ids))]
        for slot in np.unique(self._opponent).tolist():
            oid = self._opp_ids[slot]
            if oid not in opponents:
                raise ValueError(f"collect got no policy for {oid!r}, the opponent of games in progress")
            policies[1 + slot] = opponents[oid]
        self._make_room(policies)
        return policies

    def _act_opponents(
        self, step: BatchStep, policies: Sequence[Policy | None], played: Played | None = None
    ) -> np.ndarray:
        """Actions (B, N) of the opponents' active agents (the learner's entries are left 0)."""
        return self._act(
            step, step.active & (self._agent_policy > 0), self._agent_policy, policies, played=played
        )

    def _act_learner(
        self,
        step: BatchStep,
        learner: TrainablePolicy,
        agents: np.ndarray,
        actions: np.ndarray,
        rec: StreamRecorder,
        t: int,
    ) -> None:
        """The learner's acting agents in one ``evaluate`` call; fills ``actions`` and records them."""
        num_envs, team = agents.shape
        rows_b, rows_k = np.nonzero(step.active[np.arange(num_envs)[:, None], agents])
        if rows_b.size == 0:
            return
        rows_i = agents[rows_b, rows_k]
        obs = step.obs[rows_b, rows_i]
        state = step.state[rows_b, rows_i]
        mask = step.action_mask[rows_b, rows_i]
        width = rec.hidden_dim
        hidden = None
        if width:
            assert self._hidden is not None  # (a runtime protocol check costs too much per step)
            hidden = self._hidden[rows_b, rows_i, :width]
            logp_all, values, self._hidden[rows_b, rows_i, :width] = cast(
                RecurrentTrainablePolicy, learner
            ).step_evaluate(obs, state, mask, rows_k, hidden)
        else:
            logp_all, values = learner.evaluate(obs, state, mask, rows_k)
        logp_all = np.asarray(logp_all)
        chosen = sample_actions(logp_all, self.rng)
        actions[rows_b, rows_i] = chosen
        rec.add_decisions(
            t,
            rows_b * team + rows_k,
            obs,
            state,
            mask,
            chosen,
            logp_all[np.arange(chosen.size), chosen],
            np.asarray(values),
            hidden,
            seat=self._learner_seat[rows_b],
        )

    def _assign(
        self,
        games: np.ndarray,
        cdf: np.ndarray,
        draw_ids: np.ndarray,
        learner_seat: int | None,
        generation: int,
    ) -> None:
        """Draw an opponent (from ``cdf``) and, unless fixed, the learner's seat for ``games``."""
        n = int(games.sum())
        if n == 0:
            return
        self._opponent[games] = draw_ids[cdf.searchsorted(self.rng.random(n), side="right")]
        self._drawn[games] = generation
        if learner_seat is None:
            self._learner_seat[games] = self.rng.integers(0, 2, size=n)
        else:
            self._learner_seat[games] = learner_seat
        self._learner_agents = self._seats[self._learner_seat]
        self._agent_policy = np.where(
            self._seat_of[None, :] == self._learner_seat[:, None], 0, self._opponent[:, None] + 1
        )

    def _results(self, step: BatchStep, done_idx: np.ndarray, learner_id: str) -> list[MatchResult]:
        seats = self._learner_seat[done_idx]
        seat0_outcome = step.outcome[done_idx].astype(np.float64)
        outcomes = np.where(seats == 0, seat0_outcome, 1.0 - seat0_outcome)
        returns = step.seat_return[done_idx, seats].astype(np.float64)
        return [
            MatchResult(learner_id, self._opp_ids[o], seat, outcome, ret, drawn)
            for o, seat, outcome, ret, drawn in zip(
                self._opponent[done_idx].tolist(),
                seats.tolist(),
                outcomes.tolist(),
                returns.tolist(),
                self._drawn[done_idx].tolist(),
            )
        ]

    # ------------------------------------------------------------------ evaluation
    def evaluate(
        self,
        policies: Mapping[str, Policy],
        pairings: Sequence[tuple[str, str, int]],
        *,
        max_steps: int | None = None,
        paired: bool = False,
    ) -> EvaluationResult:
        """Play each ``(seat0_id, seat1_id, n_episodes)`` pairing for exactly ``n_episodes`` games.

        Games are spread over the batch; a game whose pairing has met its quota takes the next
        pairing with episodes left to start. Results are from seat 0's side.

        ``paired``: where every pairing ``(a, b, n)`` comes with its mirror ``(b, a, n)``, the
        mirrors replay the same chance: the pairings play in two passes from one reset seed, and
        the ``k``-th game of a pairing in the first pass and of its mirror in the second start
        from the same game seed and episode. Where an env draws its chance from those (every
        built-in env does; :mod:`light_league.envs._rng`), ``a`` and ``b`` each play both seats of the same deal
        or map, so the luck of the deal cancels from ``a``'s mean over both seat orders (common
        random numbers; duplicate bridge and poker score this way). Each pass is capped at
        ``max_steps``. Pairings without mirrors play unpaired.
        """
        halves = mirrored_halves(pairings) if paired else None
        if halves is None:
            return self._play(policies, pairings, max_steps, seed=None)
        seed = int(self.rng.integers(0, 2**31 - 1))
        first = self._play(policies, halves[0], max_steps, seed=seed)
        second = self._play(policies, halves[1], max_steps, seed=seed)
        behaviour = first.behaviour
        for pid, beh in second.behaviour.items():
            acts, pos = beh.arrays()
            behaviour[pid].add(acts, pos)
        returns = [r for r in (first.seat_returns, second.seat_returns) if r is not None]
        return EvaluationResult(
            first.results + second.results,
            first.env_steps + second.env_steps,
            behaviour,
            np.concatenate(returns) if returns else None,
        )

    def _play(
        self,
        policies: Mapping[str, Policy],
        pairings: Sequence[tuple[str, str, int]],
        max_steps: int | None,
        *,
        seed: int | None,
    ) -> EvaluationResult:
        """:meth:`evaluate`'s loop. ``seed`` None: restart from the loop's stream and hand each
        freed game the next pairing with episodes left. ``seed`` given: restart from it, and game
        ``g`` plays games ``g, g + B, g + 2B, ...`` of the pairings' quotas in order (a fixed
        schedule, the same for any pairings with the same quotas), so the ``k``-th episode of a
        game slot is the same game in every pass with that seed."""
        ids = list(policies)
        index = {pid: i for i, pid in enumerate(ids)}
        plist = [policies[pid] for pid in ids]
        todo = [(index[a], index[b], n) for a, b, n in pairings if n > 0]
        to_start = np.array([n for _, _, n in todo], dtype=np.int64)
        pair_seats = np.array([(a, b) for a, b, _ in todo], dtype=np.int64).reshape(-1, 2)
        num_envs = self.env.num_envs
        pair_of = np.full(num_envs, -1, dtype=np.int64)
        behaviour = [Behaviour() for _ in ids]
        schedule: np.ndarray | None = None
        if seed is None:
            step = self._restart()
            self._fill(pair_of, np.ones(num_envs, dtype=bool), to_start)
        else:
            step = self._restart(seed)
            tickets = np.repeat(np.arange(len(todo), dtype=np.int64), to_start)
            rounds = -(-tickets.size // num_envs)
            schedule = np.full(rounds * num_envs, -1, dtype=np.int64)
            schedule[: tickets.size] = tickets
            schedule = schedule.reshape(rounds, num_envs)
            played = np.zeros(num_envs, dtype=np.int64)  # episodes each game slot has started
            if rounds:
                pair_of[:] = schedule[0]
        self._owner = None
        self._make_room(plist)
        results: list[MatchResult] = []
        returns: list[np.ndarray] = []
        env_steps = 0
        limit = max_steps if max_steps is not None else 10**9
        seat_policy = np.zeros((num_envs, 2), dtype=np.int64)
        while (pair_of >= 0).any() and env_steps < limit:
            playing = pair_of >= 0
            seat_policy[:] = np.where(playing[:, None], pair_seats[np.maximum(pair_of, 0)], 0)
            active = step.active & playing[:, None]
            actions = self._act(step, active, seat_policy[:, self._seat_of], plist, behaviour)
            idle = step.active & ~playing[:, None]  # games past their quota step on a legal action
            actions[idle] = np.argmax(step.action_mask[idle], axis=-1)
            step = self._env_step(actions)
            env_steps += int(playing.sum())
            finished = step.done & playing
            for b in np.nonzero(finished)[0]:
                a_idx, b_idx = pair_seats[pair_of[b]]
                results.append(
                    MatchResult(
                        ids[a_idx], ids[b_idx], 0, float(step.outcome[b]), float(step.seat_return[b, 0])
                    )
                )
                returns.append(step.seat_return[b].astype(np.float64))
            pair_of[finished] = -1
            self._forget(finished)
            if schedule is None:
                self._fill(pair_of, finished, to_start)
            else:
                played[finished] += 1
                nxt = finished & (played < schedule.shape[0])
                pair_of[nxt] = schedule[played[nxt], np.nonzero(nxt)[0]]
        self._step = None
        seat_returns = np.array(returns, dtype=np.float64).reshape(-1, 2)
        return EvaluationResult(
            results, env_steps, {pid: behaviour[i] for i, pid in enumerate(ids)}, seat_returns
        )

    @staticmethod
    def _fill(pair_of: np.ndarray, free: np.ndarray, to_start: np.ndarray) -> None:
        for b in np.nonzero(free)[0]:
            left = np.nonzero(to_start > 0)[0]
            if left.size == 0:
                return
            pair_of[b] = left[0]
            to_start[left[0]] -= 1


def mirrored_halves(
    pairings: Sequence[tuple[str, str, int]],
) -> tuple[list[tuple[str, str, int]], list[tuple[str, str, int]]] | None:
    """``(first, mirrors)``: the pairings split so that ``mirrors[i]`` is ``first[i]`` with its
    seats swapped and the same quota; None when some pairing has no mirror."""
    waiting: dict[tuple[str, str, int], int] = {}
    first: list[tuple[str, str, int]] = []
    for a, b, n in pairings:
        if n <= 0:
            continue
        if waiting.get((b, a, n), 0) > 0:
            waiting[(b, a, n)] -= 1
            first.append((b, a, n))
        else:
            waiting[(a, b, n)] = waiting.get((a, b, n), 0) + 1
    if any(waiting.values()) or not first:
        return None
    return first, [(b, a, n) for a, b, n in first]
