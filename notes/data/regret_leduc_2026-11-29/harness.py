"""Dev harness: the regret learner in self-play on an EpisodeLoop, exact NashConv over time."""
import sys, time, json
sys.path.insert(0, "/tmp/rk")
import numpy as np, torch
import envs
from light_league.algorithms.regret import RegretConfig
from light_league.algorithms.regret.learner import RegretLearner
from light_league.algorithms.registry import build_policy
from light_league.algorithms.game_tree import nash_conv
from light_league.rollout.episode import EpisodeLoop

env = sys.argv[1]; seconds = float(sys.argv[2]); seed = int(sys.argv[3])
num_envs = int(sys.argv[4]); steps = int(sys.argv[5])
overrides = json.loads(sys.argv[6]) if len(sys.argv) > 6 else {}
torch.set_num_threads(1)
loop = EpisodeLoop(envs.make_batched(env, num_envs), seed=seed)
cfg = RegretConfig(**overrides)
learner = RegretLearner(loop.spec, cfg, seed=seed)
start = time.process_time(); marks = [10, 20, 30, 60, 90, 120, 180, 240, 300, 450, 600, 900, 1200, 1800]
by_iter = seconds < 0
if by_iter:
    marks = [100, 200, 400, 800, 1600, 3200, 6400]; seconds = -seconds
it = 0; mi = 0; meas = 0.0
while True:
    el = it if by_iter else time.process_time() - start - meas
    if mi < len(marks) and el >= marks[mi] or el >= seconds:
        m0 = time.process_time()
        snap = learner.snapshot()  # trains the average net
        avg = build_policy(snap.weights, snap.meta)
        cur = learner.policy
        import diag
        tab = nash_conv(env, diag.avg_policy(learner._strategies))
        rm = nash_conv(env, diag.rm_policy(learner._regrets))
        print(f"t={el:6.1f}s it={it:5d} avg={nash_conv(env, avg):.4f} cur={nash_conv(env, cur):.4f} avg_table={tab:.4f} rm_table={rm:.4f}", flush=True)
        meas += time.process_time() - m0
        mi += 1
        if el >= seconds: break
    batch = loop.collect(learner.policy, {"me": learner.policy}, {"me": 1.0}, steps, learner_id="me", mirror=True).batch
    m = learner.update(batch); it += 1
    if it % 500 == 0: print({k: round(v, 4) for k, v in m.items()}, flush=True)
