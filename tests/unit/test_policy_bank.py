"""Frozen MAPPO actors stacked in a MAPPOBank give the per-policy log-probabilities; the bank hook
banks any policy class that declares it, and the rollout side knows no MAPPO."""

from __future__ import annotations

import ast
import functools
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from light_league.algorithms.mappo import bank as policy_bank
from light_league.algorithms.mappo.bank import MAPPOBank as PolicyBank
from light_league.algorithms.mappo.policy import MAPPOPolicy
from light_league.rollout.policy_bank import BankedPolicy, build_banks, policy_log_probs

ROOT = Path(__file__).resolve().parents[2]

# float32 log-probabilities up to ~10 in size: a batched matmul may sum in another order than the
# per-policy one (CPU kernels differ between machines), a few ulps apart (2.9e-6 seen on CI)
CLOSE = {"rtol": 2e-6, "atol": 2e-6}
DIMS = {"obs_dim": 7, "state_dim": 9, "num_actions": 5, "team_size": 3}


def make(seed: int, **arch: object) -> MAPPOPolicy:
    policy = MAPPOPolicy(**DIMS, seed=seed, gain=1.0, **arch)  # type: ignore[arg-type]
    rng = np.random.default_rng(seed)
    # LayerNorm affines and biases away from their 1 / 0 init, so a wrong gather shows
    policy.set_weights({k: v + 0.3 * rng.normal(size=v.shape) for k, v in policy.get_weights().items()})
    return policy


def rows(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    obs = rng.normal(size=(n, DIMS["obs_dim"])).astype(np.float32) * 3
    mask = rng.random((n, DIMS["num_actions"])) < 0.7
    mask[np.arange(n), rng.integers(0, DIMS["num_actions"], n)] = True
    return obs, mask, rng.integers(0, DIMS["team_size"], n)


@pytest.mark.parametrize(
    "arch",
    [
        {},
        {"use_relu": False, "layer_N": 2, "hidden_size": 32},
        {"use_feature_normalization": False, "add_agent_id": False},
    ],
)
def test_batched_log_probs_equal_per_policy_log_probs(arch: dict[str, object]) -> None:
    policies = [make(s, **arch) for s in range(6)]
    bank = PolicyBank(policies)
    obs, mask, idx = rows(500, 1)
    slots = np.random.default_rng(2).integers(0, len(policies), 500)
    got = bank.log_probs(slots, obs, mask, idx)
    for s, policy in enumerate(policies):
        sel = slots == s
        want = policy.log_probs(obs[sel], mask[sel], idx[sel])
        assert np.array_equal(np.isinf(got[sel]), ~mask[sel])
        np.testing.assert_allclose(got[sel][mask[sel]], want[mask[sel]], **CLOSE)


@pytest.mark.parametrize(("size", "in_bank"), [(2, 2), (2, 0), (4, 4), (16, 0), (16, 16), (None, None)])
def test_every_row_layout_gives_the_per_policy_log_probs(
    monkeypatch: pytest.MonkeyPatch, size: int | None, in_bank: int | None
) -> None:
    policies = [make(s) for s in range(12)]
    bank = PolicyBank(policies)
    rng = np.random.default_rng(5)
    # one busy policy, the rest spread thinly: every layout has full and padded chunks
    slots = np.where(rng.random(400) < 0.5, 3, rng.integers(0, 12, 400))
    if size is not None:
        forced = functools.partial(policy_bank._Layout, choice=(size, in_bank))
        monkeypatch.setattr(policy_bank, "_Layout", forced)
        kinds = [block[3] is None for block in forced(slots, 12, bank.params).blocks()]
        assert kinds == ([True, False] if in_bank else [False])
    obs, mask, idx = rows(400, 6)
    got = bank.log_probs(slots, obs, mask, idx)
    for s, policy in enumerate(policies):
        sel = slots == s
        want = policy.log_probs(obs[sel], mask[sel], idx[sel])
        np.testing.assert_allclose(got[sel][mask[sel]], want[mask[sel]], **CLOSE)


def test_policy_log_probs_mixes_banked_and_plain_policies() -> None:
    frozen = {f"m{i}": make(i) for i in range(4)}
    other = {"wide": make(9, hidden_size=16)}  # another architecture: a bank of its own
    banked = build_banks({**frozen, **other})
    assert banked["m0"].bank is banked["m3"].bank and banked["wide"].bank is not banked["m0"].bank
    live = make(11)
    policies = [live, *(banked[k] for k in frozen), banked["wide"]]
    plain = [live, *frozen.values(), other["wide"]]
    obs, mask, idx = rows(300, 3)
    which = np.random.default_rng(4).integers(0, len(policies), 300)
    got = policy_log_probs(policies, which, obs, mask, idx)
    for p, policy in enumerate(plain):
        sel = which == p
        want = policy.log_probs(obs[sel], mask[sel], idx[sel])
        np.testing.assert_allclose(got[sel][mask[sel]], want[mask[sel]], **CLOSE)
    member = banked["m2"]
    assert isinstance(member, BankedPolicy)
    np.testing.assert_allclose(
        member.log_probs(obs, mask, idx)[mask], frozen["m2"].log_probs(obs, mask, idx)[mask], **CLOSE
    )


def test_bank_rejects_mixed_architectures() -> None:
    with pytest.raises(ValueError, match="share an architecture"):
        PolicyBank([make(0), make(1, hidden_size=8)])


RECURRENT = {"recurrent_cell": "gru", "recurrent_hidden_size": 6}


@pytest.mark.parametrize("size", [(2, 2), (4, 0)])
def test_recurrent_bank_gives_each_policys_step_and_next_hidden_state(
    monkeypatch: pytest.MonkeyPatch, size: tuple[int, int] | None
) -> None:
    policies = [make(s, **RECURRENT) for s in range(7)]
    bank = PolicyBank(policies)
    assert bank.hidden_dim == 12
    if size is not None:
        monkeypatch.setattr(policy_bank, "_Layout", functools.partial(policy_bank._Layout, choice=size))
    obs, mask, idx = rows(300, 7)
    hidden = np.random.default_rng(8).normal(size=(300, 12)).astype(np.float32)
    slots = np.random.default_rng(9).integers(0, len(policies), 300)
    got, after = bank.step_log_probs(slots, obs, mask, idx, hidden)
    for s, policy in enumerate(policies):
        sel = slots == s
        want, want_after = policy.step_log_probs(obs[sel], mask[sel], idx[sel], hidden[sel])
        np.testing.assert_allclose(got[sel][mask[sel]], want[mask[sel]], **CLOSE)
        np.testing.assert_allclose(after[sel], want_after, **CLOSE)
    np.testing.assert_array_equal(after[:, 6:], hidden[:, 6:])  # the critic's part passes through
    with pytest.raises(TypeError, match="step_log_probs"):
        bank.log_probs(slots, obs, mask, idx)


def test_policy_log_probs_advances_the_hidden_states_of_recurrent_rows_only() -> None:
    banked = build_banks({f"r{i}": make(i, **RECURRENT) for i in range(3)} | {"f": make(5)})
    live = make(11, **RECURRENT)
    policies = [live, banked["r0"], banked["r1"], banked["r2"], banked["f"]]
    obs, mask, idx = rows(200, 3)
    which = np.random.default_rng(4).integers(0, len(policies), 200)
    hidden = np.random.default_rng(5).normal(size=(200, 14)).astype(np.float32)  # wider than any policy
    before = hidden.copy()
    got = policy_log_probs(policies, which, obs, mask, idx, hidden=hidden)
    for p, policy in enumerate([live, *(banked[k].policy for k in ("r0", "r1", "r2"))]):
        sel = which == p
        want, after = policy.step_log_probs(obs[sel], mask[sel], idx[sel], before[sel, :12])
        np.testing.assert_allclose(got[sel][mask[sel]], want[mask[sel]], **CLOSE)
        np.testing.assert_allclose(hidden[sel, :12], after, **CLOSE)
    np.testing.assert_array_equal(hidden[:, 12:], before[:, 12:])
    np.testing.assert_array_equal(hidden[which == 4], before[which == 4])


class Tabled:
    """A policy of another learner, with the bank hook: a fixed action table per policy."""

    calls = 0

    def __init__(self, table: np.ndarray) -> None:
        self.table = table.astype(np.float32)

    def log_probs(self, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray) -> np.ndarray:
        logits = np.where(mask, self.table[agent_idx], -np.inf)
        return logits - np.log(np.exp(logits).sum(1, keepdims=True))

    def bank_signature(self) -> tuple[int, ...]:
        return self.table.shape

    @staticmethod
    def stack(policies: Sequence[Tabled]) -> TabledBank:
        return TabledBank([p.table for p in policies])


class TabledBank:
    hidden_dim = 0

    def __init__(self, tables: list[np.ndarray]) -> None:
        self.members = [Tabled(t) for t in tables]

    def log_probs(
        self, slots: np.ndarray, obs: np.ndarray, mask: np.ndarray, agent_idx: np.ndarray
    ) -> np.ndarray:
        Tabled.calls += 1
        out = np.empty(mask.shape, dtype=np.float32)
        for s, member in enumerate(self.members):
            sel = slots == s
            out[sel] = member.log_probs(obs[sel], mask[sel], agent_idx[sel])
        return out


def test_any_policy_class_that_declares_the_bank_hook_is_banked() -> None:
    rng = np.random.default_rng(0)
    tabled = {f"t{i}": Tabled(rng.normal(size=(3, 5))) for i in range(3)}
    banked = build_banks({**tabled, "plain": make(0)} | {"odd": Tabled(rng.normal(size=(3, 4)))})
    assert {k for k in banked} == {"t0", "t1", "t2", "plain", "odd"}  # MAPPO's hook too
    assert banked["t0"].bank is banked["t2"].bank and isinstance(banked["t0"].bank, TabledBank)
    assert banked["odd"].bank is not banked["t0"].bank and banked["plain"].bank is not banked["t0"].bank
    without = TabledBank([np.zeros((3, 5))]).members[0]
    without.bank_signature = lambda: None  # type: ignore[method-assign]  # an instance that declines
    assert build_banks({"m": without}) == {}
    obs, mask, idx = rows(90, 1)
    idx = idx % 3
    which = np.random.default_rng(2).integers(0, 3, 90)
    before = Tabled.calls
    got = policy_log_probs([banked[f"t{i}"] for i in range(3)], which, obs, mask, idx)
    assert Tabled.calls == before + 1  # the three members' rows in one bank call
    for i in range(3):
        sel = which == i
        np.testing.assert_allclose(got[sel], tabled[f"t{i}"].log_probs(obs[sel], mask[sel], idx[sel]))


def test_the_rollout_side_imports_no_mappo() -> None:
    for path in sorted((ROOT / "light_league" / "rollout").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith("light_league.algorithms.mappo"), path.name
