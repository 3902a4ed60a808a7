"""TabularPolicy: vectorised lookup against a plain loop, masking, errors and weight round trips."""

from __future__ import annotations

import numpy as np
import pytest

from light_league.algorithms.base import Policy
from light_league.algorithms.tabular import TabularPolicy

OBS = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0.5, 0.25, 0.125]], dtype=np.float32)
PROBS = np.array([[0.2, 0.8, 0.0], [1.0, 0.0, 0.0], [0.25, 0.25, 0.5], [0.0, 0.5, 0.5]], dtype=np.float32)


def test_lookup_matches_a_plain_loop_over_rows() -> None:
    pol = TabularPolicy(OBS, PROBS)
    rng = np.random.default_rng(0)
    pick = rng.integers(0, 4, size=50)
    mask = np.ones((50, 3), dtype=bool)
    got = pol.log_probs(OBS[pick], mask, np.zeros(50, dtype=np.int64))
    for n, k in enumerate(pick):
        for a in range(3):
            expected = np.log(PROBS[k, a]) if PROBS[k, a] > 0 else -np.inf
            assert got[n, a] == pytest.approx(expected)
    assert got.dtype == np.float32 and isinstance(pol, Policy)


def test_mask_drops_forbidden_actions_and_renormalises() -> None:
    pol = TabularPolicy(OBS, PROBS)
    lp = pol.log_probs(OBS[[0, 2]], np.array([[True, True, False], [False, True, True]]), np.zeros(2))
    assert np.allclose(np.exp(lp), [[0.2, 0.8, 0.0], [0.0, 1 / 3, 2 / 3]])
    assert np.isneginf(lp[0, 2]) and np.isneginf(lp[1, 0])
    with pytest.raises(
        ValueError, match=r"no probability on the legal actions of row 0 \(mask \[False, False, True\]\)"
    ):
        pol.log_probs(OBS[[1]], np.array([[False, False, True]]), np.zeros(1))


def test_unseen_observation_is_an_error_naming_it_or_uniform_when_asked() -> None:
    unseen = np.array([[0.0, 0.0, 0.0]], dtype=np.float32)
    with pytest.raises(KeyError, match=r"observation not in the tabular policy: \[0.0, 0.0, 0.0\]"):
        TabularPolicy(OBS, PROBS).log_probs(unseen, np.ones((1, 3), dtype=bool), np.zeros(1))
    lenient = TabularPolicy(OBS, PROBS, unseen="uniform")
    lp = lenient.log_probs(
        np.r_[unseen, OBS[:1]], np.array([[True, False, True], [True, True, True]]), np.zeros(2)
    )
    assert np.allclose(np.exp(lp), [[0.5, 0.0, 0.5], [0.2, 0.8, 0.0]])


def test_weights_and_meta_round_trip() -> None:
    pol = TabularPolicy(OBS, PROBS, unseen="uniform")
    weights = pol.get_weights()
    assert weights["obs"].dtype == np.float32 and weights["probs"].shape == (4, 3)
    meta = pol.policy_meta()
    assert meta == {"kind": "tabular", "obs_dim": 3, "num_actions": 3, "num_rows": 4, "unseen": "uniform"}
    again = TabularPolicy.from_weights(weights, meta)
    mask = np.ones((4, 3), dtype=bool)
    assert np.array_equal(again.log_probs(OBS, mask, np.zeros(4)), pol.log_probs(OBS, mask, np.zeros(4)))
    with pytest.raises(KeyError, match="missing \\['probs'\\]"):
        TabularPolicy.from_weights({"obs": OBS})


def test_bad_tables_are_refused() -> None:
    with pytest.raises(ValueError, match="must have K rows each"):
        TabularPolicy(OBS, PROBS[:3])
    with pytest.raises(ValueError, match="probability distribution"):
        TabularPolicy(OBS, PROBS * 2)
    with pytest.raises(ValueError, match="1 duplicates"):
        TabularPolicy(np.r_[OBS, OBS[:1]], np.r_[PROBS, PROBS[:1]])
    with pytest.raises(ValueError, match=r"obs must have shape \(N, 3\)"):
        TabularPolicy(OBS, PROBS).log_probs(np.zeros((2, 4)), np.ones((2, 3), dtype=bool), np.zeros(2))
