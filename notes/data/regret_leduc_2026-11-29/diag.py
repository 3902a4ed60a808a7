import numpy as np
from light_league.algorithms.tabular import TabularPolicy

def table(memory, unseen="uniform"):
    n = memory.size
    a = {k: v[:n] for k, v in memory.arrays.items()}
    keys = np.concatenate([a["obs"], a["agent_idx"][:, None].astype(np.float32)], axis=1)
    uniq, inv = np.unique(keys, axis=0, return_inverse=True)
    inv = inv.ravel()
    w = a["weight"]
    tgt = np.zeros((len(uniq), a["target"].shape[1]))
    np.add.at(tgt, inv, w[:, None] * a["target"])
    ws = np.bincount(inv, weights=w, minlength=len(uniq))
    tgt /= ws[:, None]
    mask = np.zeros_like(tgt, dtype=bool)
    mask[inv] = a["mask"]
    return uniq[:, :-1], tgt, mask

def avg_policy(memory):
    obs, tgt, mask = table(memory)
    p = np.where(mask, tgt, 0); p = p / np.maximum(p.sum(1, keepdims=True), 1e-12)
    return TabularPolicy(obs.astype(np.float32), p.astype(np.float32), unseen="uniform")

def rm_policy(memory):
    obs, tgt, mask = table(memory)
    pos = np.where(mask, np.maximum(tgt, 0), 0)
    s = pos.sum(1, keepdims=True)
    best = np.where(mask, tgt, -np.inf).argmax(1)
    greedy = np.eye(tgt.shape[1])[best]
    p = np.where(s > 0, pos / np.maximum(s, 1e-30), greedy)
    return TabularPolicy(obs.astype(np.float32), p.astype(np.float32), unseen="uniform")
