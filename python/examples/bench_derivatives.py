"""States per second of the batched derivatives (cdyn_batch_*_derivatives) at 1, 2, ... threads.

For N closed states of a model (default: the shared mini_cheetah.urdf when present, else
models/cd_quadruped.urdf), times one batch of CE-ABA derivatives (d ydd / d(y, ydot), H^-1),
CE-RNEA derivatives (d tau / d(y, ydot), H) and the spanning tree's ABA and RNEA derivatives per
thread count, interleaved over --repeat rounds, and prints the median time per batch, states per
second and microseconds per state. One derivative workspace per thread (created once, outside
the timing). The machine's load shows in the wall times: give instruction counts beside them
(docs/derivatives.md).

Usage: python3 bench_derivatives.py [--model PATH] [--states 2000] [--threads 1,2] [--repeat 7]
"""
import argparse
import pathlib
import statistics
import sys
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE.parent))

import clusterdyn as cd  # noqa: E402


def closed_states(model, n, seed=1):
    rng = np.random.default_rng(seed)
    ws = model.workspace()
    q0 = model.reference_configuration()
    Q, V = np.zeros((n, model.nq)), np.zeros((n, model.nv))
    for i in range(n):
        q = ws.integrate(q0, 0.2 * rng.uniform(-1, 1, model.nv), 1.0)
        Q[i], V[i] = ws.project_to_constraints(q, rng.uniform(-1, 1, model.nv))
    return Q, V, rng.uniform(-1, 1, (n, model.ny)), rng.uniform(-1, 1, (n, model.nv))


def main():
    shared = REPO.parent / "shared" / "urdfplus" / "mini_cheetah.urdf"
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default=str(shared if shared.is_file()
                                          else REPO / "models" / "cd_quadruped.urdf"))
    p.add_argument("--states", type=int, default=2000)
    p.add_argument("--threads", default="1,2")
    p.add_argument("--repeat", type=int, default=7)
    args = p.parse_args()
    cd.set_log_level("off")
    model = cd.Model.load(args.model)
    threads = [int(t) for t in args.threads.split(",")]
    Q, V, TY, TV = closed_states(model, args.states)
    jobs = {"ce_aba_derivatives": lambda t: model.ce_aba_derivatives_batch(Q, V, TY, threads=t),
            "ce_rnea_derivatives": lambda t: model.ce_rnea_derivatives_batch(Q, V, TY, threads=t),
            "aba_derivatives": lambda t: model.aba_derivatives_batch(Q, V, TV, threads=t),
            "rnea_derivatives": lambda t: model.rnea_derivatives_batch(Q, V, TV, threads=t)}
    times = {(name, t): [] for name in jobs for t in threads}
    for name in jobs:  # warm-up: the derivative workspaces are made here
        for t in threads:
            jobs[name](t)
    for _ in range(args.repeat):
        for name, fn in jobs.items():
            for t in threads:
                start = time.perf_counter()
                fn(t)
                times[(name, t)].append(time.perf_counter() - start)
    print(f"{pathlib.Path(args.model).name}: ny = {model.ny}, nv = {model.nv}, "
          f"N = {args.states} states, median of {args.repeat}")
    print(f"{'function':22s} {'threads':>7s} {'batch [ms]':>11s} {'states/s':>10s} "
          f"{'us/state':>9s}")
    for (name, t), ts in times.items():
        m = statistics.median(ts)
        print(f"{name:22s} {t:7d} {1e3 * m:11.2f} {args.states / m:10.0f} "
              f"{1e6 * m / args.states:9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
