"""Recurrent MAPPO (``learner.mappo.recurrent``): chunking, truncated backpropagation against the
whole sequence, hidden states through the episode loop, checkpoints, exact evaluation on Kuhn."""

from __future__ import annotations

import io

import numpy as np
import pytest
import torch

from light_league import envs
from light_league.algorithms.mappo import MAPPOConfig, MAPPOLearner, MAPPOPolicy, load_policy, save_policy
from light_league.algorithms.mappo.chunks import chunk_index, to_chunks
from light_league.algorithms.mappo.gae import compute_gae, normalize_advantages
from light_league.algorithms.mappo.loss import categorical_entropy, mappo_value_loss, policy_loss
from light_league.data_buffer.episode import SampleBatch
from light_league.envs.base import EnvSpec
from light_league.errors import ConfigError
from light_league.rollout.episode import EpisodeLoop
from light_league.rollout.policy_bank import build_banks

OBS, STATE, ACTIONS, TEAM = 5, 7, 3, 2
SPEC = EnvSpec(
    name="toy",
    agents=("a0", "a1", "b0", "b1"),
    seats=((0, 1), (2, 3)),
    obs_dim=OBS,
    state_dim=STATE,
    num_actions=ACTIONS,
    symmetric=True,
    turn_based=False,
    score_range=(-1.0, 1.0),
    max_steps=10,
)


def gru(chunk_length: int = 10, size: int = 8, **kw: object) -> MAPPOConfig:
    return MAPPOConfig(recurrent={"cell": "gru", "hidden_size": size, "chunk_length": chunk_length}, **kw)  # type: ignore[arg-type]


def lively(policy: MAPPOPolicy, seed: int, scale: float = 0.5) -> MAPPOPolicy:
    """Weights away from their near-uniform init, so outputs depend on the hidden state."""
    rng = np.random.default_rng(seed)
    policy.set_weights({k: v + scale * rng.normal(size=v.shape) for k, v in policy.get_weights().items()})
    return policy


# ---------------------------------------------------------------------- chunks


def chunks_by_loop(valid: np.ndarray, dones: np.ndarray, length: int) -> list[list[tuple[int, int]]]:
    """Each chunk as its (time, stream) entries, by walking every stream."""
    out: list[list[tuple[int, int]]] = []
    for n in range(valid.shape[1]):
        pos = 0
        for t in range(valid.shape[0]):
            if not valid[t, n]:
                break
            if pos % length == 0:
                out.append([])
            out[-1].append((t, n))
            pos = 0 if dones[t, n] else pos + 1
    return out


@pytest.mark.parametrize("length", [1, 2, 3, 10])
def test_chunk_index_matches_a_walk_over_every_stream(length: int) -> None:
    rng = np.random.default_rng(length)
    t, n = 9, 6
    lengths = rng.integers(0, t + 1, n)
    valid = np.arange(t)[:, None] < lengths[None, :]
    dones = valid & (rng.random((t, n)) < 0.3)
    index = chunk_index(valid, dones, length)
    want = chunks_by_loop(valid, dones, length)
    assert index.num_chunks == len(want)
    got = [[] for _ in want]  # type: list[list[tuple[int, int]]]
    for time, stream, chunk, offset in zip(index.time, index.stream, index.chunk, index.offset):
        assert offset == len(got[chunk])
        got[chunk].append((int(time), int(stream)))
    assert got == want
    x = rng.normal(size=(t, n, 2))
    chunked = to_chunks(x, index)
    for c, entries in enumerate(want):
        np.testing.assert_array_equal(chunked[: len(entries), c], [x[e] for e in entries])
        assert not chunked[len(entries) :, c].any()


# ---------------------------------------------------------------------- truncated BPTT


def short_episode_batch(policy: MAPPOPolicy, seed: int) -> SampleBatch:
    """Streams of episodes of 1 to 4 decisions; each stream's first entries continue an episode
    of an earlier batch (a non-zero stored hidden state at t = 0), later episodes start at zero."""
    rng = np.random.default_rng(seed)
    t, n = 9, 6
    lengths = np.array([9, 7, 4, 1, 8, 5])
    valid = np.arange(t)[:, None] < lengths[None, :]
    dones = np.zeros((t, n), dtype=bool)
    for s in range(n):  # episodes of 1-4 decisions; a stream's last one may go on after it
        time = int(rng.integers(1, 5))
        while time <= lengths[s]:
            dones[time - 1, s] = True
            time += int(rng.integers(1, 5))
    mask = rng.random((t, n, ACTIONS)) < 0.7
    mask[..., 0] = True
    hidden = np.zeros((t, n, policy.hidden_dim), dtype=np.float32)
    hidden[0] = rng.normal(size=(n, policy.hidden_dim))
    return SampleBatch(
        obs=rng.normal(size=(t, n, OBS)).astype(np.float32) * valid[..., None],
        state=rng.normal(size=(t, n, STATE)).astype(np.float32) * valid[..., None],
        action_mask=mask & valid[..., None],
        agent_idx=np.tile(np.arange(TEAM), n // TEAM),
        actions=np.zeros((t, n), dtype=np.int64),
        logp=(rng.normal(size=(t, n)) * 0.1 - 1.0).astype(np.float32) * valid,
        values=rng.normal(size=(t, n)).astype(np.float32) * valid,
        rewards=rng.normal(size=(t, n)).astype(np.float32) * valid,
        dones=dones,
        valid=valid,
        bootstrap_values=rng.normal(size=n).astype(np.float32),
        hidden=hidden,
    )


def sequence_losses(learner: MAPPOLearner, batch: SampleBatch) -> tuple[torch.Tensor, torch.Tensor]:
    """Actor and critic losses of ``batch`` run one decision at a time along each whole stream,
    the hidden state zeroed after each episode's last decision (no chunks)."""
    pol, c = learner.policy, learner.config
    size = pol.recurrent_size
    adv, returns = compute_gae(
        batch.rewards,
        batch.values,
        batch.dones,
        batch.valid,
        batch.bootstrap_values,
        gamma=c.gamma,
        lam=c.gae_lambda,
    )
    adv = normalize_advantages(adv, batch.valid)
    rows: dict[str, list[torch.Tensor]] = {k: [] for k in ("logits", "values", "t", "n")}
    t_max, n_streams = batch.shape
    for n in range(n_streams):
        h = torch.from_numpy(batch.hidden[0, n])[None]  # type: ignore[index]
        idx = torch.tensor([int(batch.agent_idx[n])])
        for t in range(t_max):
            if not batch.valid[t, n]:
                break
            obs = torch.from_numpy(batch.obs[t, n])[None, None]
            state = torch.from_numpy(batch.state[t, n])[None, None]
            mask = torch.from_numpy(batch.action_mask[t, n])[None, None]
            logits, actor = pol.actor_sequence(obs, mask, idx, h[:, :size])
            values, critic = pol.critic_sequence(state, idx, h[:, size:])
            rows["logits"].append(logits[0, 0])
            rows["values"].append(values[0, 0])
            rows["t"].append(torch.tensor(t))
            rows["n"].append(torch.tensor(n))
            h = torch.cat([actor[0], critic[0]], dim=1)
            if batch.dones[t, n]:
                h = torch.zeros_like(h)
    t_idx, n_idx = torch.stack(rows["t"]).numpy(), torch.stack(rows["n"]).numpy()
    logp_all = torch.log_softmax(torch.stack(rows["logits"]), dim=-1)
    actions = torch.from_numpy(batch.actions[t_idx, n_idx])
    logp = logp_all.gather(1, actions[:, None]).squeeze(1)
    actor_loss = (
        policy_loss(
            logp,
            torch.from_numpy(batch.logp[t_idx, n_idx]),
            torch.from_numpy(adv[t_idx, n_idx]),
            clip=c.clip_param,
        )
        - c.entropy_coef * categorical_entropy(logp_all).mean()
    )
    old = pol.to_critic_units(torch.from_numpy(batch.values[t_idx, n_idx]))
    value_loss = mappo_value_loss(
        torch.stack(rows["values"]),
        old,
        torch.from_numpy(returns[t_idx, n_idx]),
        None,
        clip=c.clip_param,
        huber_delta=c.huber_delta,
        clipped=True,
    )
    return actor_loss, value_loss


def chunk_losses(learner: MAPPOLearner, batch: SampleBatch) -> tuple[torch.Tensor, torch.Tensor]:
    """The learner's own losses of ``batch``: its chunks, each from its stored hidden state."""
    c = learner.config
    data, _ = learner._prepare(batch)
    logits, samples = learner._actor_logits(data)
    logp_all = torch.log_softmax(logits, dim=-1)
    logp = logp_all.gather(1, samples["actions"][:, None]).squeeze(1)
    actor_loss = policy_loss(logp, samples["old_logp"], samples["advantages"], clip=c.clip_param)
    actor_loss = actor_loss - c.entropy_coef * categorical_entropy(logp_all).mean()
    value_loss = mappo_value_loss(
        learner._critic_values(data),
        samples["old_values"],
        samples["returns"],
        None,
        clip=c.clip_param,
        huber_delta=c.huber_delta,
        clipped=True,
    )
    return actor_loss, value_loss


def gradients(learner: MAPPOLearner, losses: tuple[torch.Tensor, torch.Tensor]) -> dict[str, np.ndarray]:
    learner.policy.zero_grad(set_to_none=True)
    (losses[0] + losses[1]).backward()
    return {k: p.grad.numpy().copy() for k, p in learner.policy.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_chunked_backpropagation_matches_full_sequence_gradients_on_short_episodes(seed: int) -> None:
    learner = MAPPOLearner(SPEC, gru(chunk_length=4, use_valuenorm=False), seed=seed)
    lively(learner.policy, seed)
    batch = short_episode_batch(learner.policy, seed)
    batch.actions = np.random.default_rng(seed).integers(0, ACTIONS, batch.shape) * batch.valid
    batch.actions = np.where(
        batch.action_mask[np.arange(9)[:, None], np.arange(6), batch.actions], batch.actions, 0
    )
    full = gradients(learner, sequence_losses(learner, batch))
    chunked = gradients(learner, chunk_losses(learner, batch))
    assert set(full) == set(chunked) and any(k.startswith("actor.rnn") for k in full)
    for name, grad in full.items():
        np.testing.assert_allclose(chunked[name], grad, atol=1e-5, rtol=1e-5, err_msg=name)
    # chunks shorter than the episodes cut the gradient: the comparison would see it
    learner.config = gru(chunk_length=1, use_valuenorm=False)
    cut = gradients(learner, chunk_losses(learner, batch))
    assert any(np.abs(cut[k] - full[k]).max() > 1e-4 for k in full if k.startswith("actor.rnn"))


def test_a_recurrent_learner_needs_the_batch_hidden_states() -> None:
    learner = MAPPOLearner(SPEC, gru(), seed=0)
    batch = short_episode_batch(learner.policy, 0)
    batch.hidden = None
    with pytest.raises(ValueError, match=r"SampleBatch.hidden is None.*\(9, 6, 16\)"):
        learner.update(batch)


# ---------------------------------------------------------------------- rollouts


class Recording:
    """A recurrent policy that records the hidden states it is asked with."""

    def __init__(self, policy: MAPPOPolicy) -> None:
        self.policy = policy
        self.calls: list[tuple[np.ndarray, np.ndarray]] = []

    @property
    def hidden_dim(self) -> int:
        return self.policy.hidden_dim

    def log_probs(self, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray) -> np.ndarray:
        return self.policy.log_probs(obs, mask, agent_idx)

    def step_log_probs(
        self, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray, hidden: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        self.calls.append((obs.copy(), hidden.copy()))
        return self.policy.step_log_probs(obs, mask, agent_idx, hidden)


def recall_policy(seed: int, size: int = 8) -> MAPPOPolicy:
    spec = envs.make_batched("recall", 1, delay=2, team_size=2).spec
    learner = MAPPOLearner(spec, gru(size=size, gain=1.0), seed=seed)
    return lively(learner.policy, seed)


def test_no_hidden_state_leaks_across_an_episode_boundary() -> None:
    """Recall's episodes differ (each starts with a new cue): every episode's first decision is
    taken from a zero state, by the learner and by its opponent, and replaying each recorded
    episode from zeros gives the recorded values and log-probabilities."""
    env = envs.make_batched("recall", 16, delay=2, team_size=2)
    learner, opponent = recall_policy(0), Recording(recall_policy(1))
    loop = EpisodeLoop(env, seed=3)
    batch = loop.collect(learner, {"opp": opponent}, {"opp": 1.0}, 14).batch  # 3 episodes and a part
    assert batch.hidden is not None and batch.dones.sum() >= 3 * batch.shape[1]
    starts = np.zeros(batch.shape, dtype=bool)
    starts[0], starts[1:] = True, batch.dones[:-1]
    assert not batch.hidden[starts & batch.valid].any()
    assert batch.hidden[~starts & batch.valid].any(axis=-1).all()
    for n in range(batch.shape[1]):
        h = np.zeros((1, learner.hidden_dim), dtype=np.float32)
        for t in np.flatnonzero(batch.valid[:, n]):
            logp, values, h = learner.step_evaluate(
                batch.obs[t, n][None],
                batch.state[t, n][None],
                batch.action_mask[t, n][None],
                batch.agent_idx[n : n + 1],
                h,
            )
            # one row at a time rounds a little differently from the rollout's batched rows
            np.testing.assert_allclose(values[0], batch.values[t, n], atol=1e-5)
            np.testing.assert_allclose(logp[0, batch.actions[t, n]], batch.logp[t, n], atol=1e-5)
            if batch.dones[t, n]:
                h = np.zeros_like(h)
    cue = env.spec.obs_dim - 2  # the cue flag: an episode's first decision
    obs = np.concatenate([o for o, _ in opponent.calls])
    hidden = np.concatenate([h for _, h in opponent.calls])
    assert not hidden[obs[:, cue] == 1].any()
    assert hidden[obs[:, cue] == 0].any(axis=-1).all()


def test_evaluation_restarts_hidden_states_for_every_game() -> None:
    env = envs.make_batched("recall", 8, delay=1)
    a, b = Recording(recall_policy(0)), Recording(recall_policy(1))
    EpisodeLoop(env, seed=0).evaluate({"a": a, "b": b}, [("a", "b", 20), ("b", "a", 20)])
    for rec in (a, b):
        obs = np.concatenate([o for o, _ in rec.calls])
        hidden = np.concatenate([h for _, h in rec.calls])
        assert not hidden[obs[:, -2] == 1].any() and hidden[obs[:, -2] == 0].any()


def test_rollout_log_probs_equal_the_learners_recomputation() -> None:
    """The PPO ratio starts at 1: the learner's chunks reproduce what the rollout recorded."""
    spec = envs.make_batched("recall", 1, delay=3).spec
    learner = MAPPOLearner(spec, gru(chunk_length=3, gain=1.0), seed=0)
    lively(learner.policy, 0)
    banked = build_banks(
        {f"f{i}": lively(MAPPOPolicy.from_meta(learner.policy_meta()), 10 + i) for i in range(3)}
    )
    loop = EpisodeLoop(envs.make_batched("recall", 32, delay=3), seed=1)
    batch = loop.collect(learner.policy, banked, dict.fromkeys(banked, 1.0), 13).batch
    data, _ = learner._prepare(batch)
    logits, samples = learner._actor_logits(data)
    logp = torch.log_softmax(logits, dim=-1).gather(1, samples["actions"][:, None]).squeeze(1)
    np.testing.assert_allclose(logp.detach().numpy(), samples["old_logp"].numpy(), atol=2e-6)
    values = learner._critic_values(data).detach().numpy()
    np.testing.assert_allclose(values, samples["old_values"].numpy(), atol=2e-6)
    metrics = learner.update(batch)
    assert np.isfinite(metrics["policy_loss"]) and metrics["num_samples"] == batch.num_samples


# ---------------------------------------------------------------------- policy API, checkpoints


def test_a_recurrent_policy_refuses_the_memoryless_calls() -> None:
    policy = MAPPOLearner(SPEC, gru(), seed=0).policy
    obs, mask = np.zeros((2, OBS), dtype=np.float32), np.ones((2, ACTIONS), dtype=bool)
    with pytest.raises(TypeError, match=r"log_probs of a recurrent MAPPO policy .* call step_log_probs"):
        policy.log_probs(obs, mask, np.zeros(2, dtype=np.int64))
    with pytest.raises(ValueError, match=r"hidden must have shape \(2, 16\)"):
        policy.step_log_probs(obs, mask, np.zeros(2, dtype=np.int64), np.zeros((2, 3)))
    ff = MAPPOLearner(SPEC, MAPPOConfig(), seed=0).policy
    assert ff.hidden_dim == 0 and "recurrent_cell" not in ff.arch
    with pytest.raises(TypeError, match="feed-forward"):
        ff.step_log_probs(obs, mask, np.zeros(2, dtype=np.int64), np.zeros((2, 16)))


def test_recurrent_checkpoint_round_trips(tmp_path: object) -> None:
    cfg = gru(chunk_length=3, num_mini_batch=2, ppo_epoch=2)
    a = MAPPOLearner(SPEC, cfg, seed=1)
    batch = short_episode_batch(a.policy, 4)
    a.update(batch)
    buffer = io.BytesIO()
    torch.save(a.state_dict(), buffer)
    buffer.seek(0)
    b = MAPPOLearner(SPEC, cfg, seed=9)
    b.load_state_dict(torch.load(buffer, weights_only=True))
    for k, v in a.get_weights().items():
        np.testing.assert_array_equal(v, b.get_weights()[k])
    assert a.update(batch) == b.update(batch)
    meta = a.policy_meta()
    assert (
        meta["architecture"]["recurrent_cell"] == "gru" and meta["architecture"]["recurrent_hidden_size"] == 8
    )
    path = tmp_path / "policy"  # type: ignore[operator]
    save_policy(path, a.get_weights(), meta)
    loaded = load_policy(path)
    assert isinstance(loaded, MAPPOPolicy) and loaded.hidden_dim == 16
    rng = np.random.default_rng(0)
    obs, state = rng.normal(size=(4, OBS)).astype(np.float32), rng.normal(size=(4, STATE)).astype(np.float32)
    mask, idx, h = (
        np.ones((4, ACTIONS), dtype=bool),
        np.array([0, 1, 0, 1]),
        rng.normal(size=(4, 16)).astype(np.float32),
    )
    for x, y in zip(
        a.policy.step_evaluate(obs, state, mask, idx, h), loaded.step_evaluate(obs, state, mask, idx, h)
    ):
        np.testing.assert_array_equal(x, y)


# ---------------------------------------------------------------------- exact evaluation


@pytest.mark.openspiel
def test_recurrent_policys_exact_nash_conv_on_kuhn_matches_sampled_play() -> None:
    """The game tree runs the network along each history: the exact best-response values of a
    recurrent policy equal the returns of those best responses playing it, sampled."""
    pytest.importorskip("pyspiel")
    from light_league.algorithms import game_tree as ex

    spec = envs.make_batched("kuhn_poker", 1).spec
    policy = lively(MAPPOLearner(spec, gru(size=8, gain=1.0), seed=0).policy, 0, scale=1.5)
    exact = ex.nash_conv("kuhn_poker", policy)
    responses = [ex.best_response("kuhn_poker", policy, None, player) for player in (0, 1)]
    games = 20_000
    loop = EpisodeLoop(envs.make_batched("kuhn_poker", 1024), seed=2)
    res = loop.evaluate(
        {"rnn": policy, "br0": responses[0][0], "br1": responses[1][0]},
        [("br0", "rnn", games), ("rnn", "br1", games)],
    )
    ret = {(r.player_id, r.opponent_id): [] for r in res.results}  # type: dict[tuple[str, str], list[float]]
    for r in res.results:
        ret[r.player_id, r.opponent_id].append(r.player_return)
    br0, br1 = np.array(ret["br0", "rnn"]), -np.array(ret["rnn", "br1"])
    sampled = br0.mean() + br1.mean()
    error = np.hypot(br0.std(), br1.std()) / np.sqrt(games)
    assert abs(sampled - exact) < 4 * error, (sampled, exact, error)
    np.testing.assert_allclose([br0.mean(), br1.mean()], [responses[0][1], responses[1][1]], atol=4 * error)
    # the same network asked from a zero state at every decision is another policy: the check bites
    forgetful = ex.nash_conv("kuhn_poker", Forgetful(policy))
    assert abs(forgetful - exact) > 8 * error, (forgetful, exact)


class Forgetful:
    """A recurrent policy asked from a zero hidden state at every decision."""

    def __init__(self, policy: MAPPOPolicy) -> None:
        self.policy = policy

    def log_probs(self, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray) -> np.ndarray:
        zeros = np.zeros((len(obs), self.policy.hidden_dim), dtype=np.float32)
        return self.policy.step_log_probs(obs, mask, agent_idx, zeros)[0]


# ---------------------------------------------------------------------- config


def test_config_names_what_does_not_combine_with_recurrence() -> None:
    from light_league.config import load_config

    with pytest.raises(ConfigError, match=r"magnet_coef=0.1 does not work with recurrent.cell=gru"):
        load_config(None, ["learner.mappo.recurrent.cell=gru", "learner.mappo.magnet_coef=0.1"])
    with pytest.raises(ConfigError, match=r"recurrent.cell: 'lstm' is invalid"):
        load_config(None, ["learner.mappo.recurrent.cell=lstm"])
    config = load_config(
        None,
        [
            "learner.mappo.recurrent.cell=gru",
            "learner.mappo.recurrent.hidden_size=32",
            "learner.by_role={main_exploiter: {recurrent: {chunk_length: 5}}}",
        ],
    )
    merged = config.learner.mappo_for("main_exploiter").recurrent
    assert (merged.cell, merged.hidden_size, merged.chunk_length) == ("gru", 32, 5)
