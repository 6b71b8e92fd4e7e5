#!/usr/bin/env python3
"""States per second of clusterdyn.distributed against the local pool, on this machine.

For N closed states of a model (default models/cd_quadruped.urdf, N = 10^5), times
--function: Model.ce_aba_batch (default), or ConstraintSet.constrained_dynamics_batch with
solver prox_pv and point contacts at the frames of --contacts ("prox_pv"),

* locally, on the model's pool with P threads (P = 1, 2, ...: the reference), and
* on a Dask LocalCluster of P worker processes (1 task slot and 1 library thread each), via
  DistributedModel.ce_aba_batch, for every chunk size of --chunks,

and reports, per P: states per second (best of --repeat interleaved rounds), the overhead per
chunk (wall: (T_dist - T_local) * P / chunks, the extra time of one task slot per chunk; CPU:
the extra CPU seconds of all processes - client, scheduler, workers - per chunk, less
sensitive to other load), and the chunk size at which the distributed call reaches 90 % of
the local pool's throughput (log-linear interpolation between measured chunk sizes). Every
distributed result is checked bit for bit against the local call (exit 1 otherwise).

Usage: .venv/bin/python tools/bench/distributed_throughput.py [--states 100000]
           [--function ce_aba|prox_pv] [--contacts lf_foot,rf_foot,lh_foot,rh_foot]
           [--workers 1,2] [--chunks 64,256,1024,4096,16384] [--repeat 3]
           [--plot docs/images/distributed_throughput.png] [--json out.json]
"""
import argparse
import json
import logging
import math
import os
import pathlib
import sys
import time

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(REPO / "python" / "examples"))

import clusterdyn as cd  # noqa: E402
from bench_batch import random_states  # noqa: E402

try:
    import distributed
    import psutil  # a dependency of distributed
except ImportError:
    print("distributed_throughput: needs Dask distributed (pip install \"dask[distributed]\")")
    sys.exit(77)
import clusterdyn.distributed as cdd  # noqa: E402


def cpu_seconds(pids):
    """User + system CPU seconds of the processes `pids` so far."""
    total = 0.0
    for pid in pids:
        t = psutil.Process(pid).cpu_times()
        total += t.user + t.system
    return total


def at_90(chunks, rates, reference):
    """Smallest chunk size where rate >= 0.9 reference, interpolated in log(chunk) between
    the two measured sizes around it; None when no measured size reaches it."""
    goal = 0.9 * reference
    for i, (c, r) in enumerate(zip(chunks, rates)):
        if r >= goal:
            if i == 0:
                return c
            c0, r0 = chunks[i - 1], rates[i - 1]
            f = (goal - r0) / (r - r0)
            return math.exp(math.log(c0) + f * (math.log(c) - math.log(c0)))
    return None


def calls(args, model, dm, Q, V, TAU, P):
    """(local call, distributed call) of args.function on (Q, V, TAU)."""
    if args.function == "ce_aba":
        return (lambda: model.ce_aba_batch(Q, V, TAU, threads=P),
                lambda: dm.ce_aba_batch(Q, V, TAU))
    local, remote = model.constraint_set(), dm.constraint_set()
    for frame in args.contacts.split(","):
        local.add_contact(frame)
        remote.add_contact(frame)
    kw = dict(solver="prox_pv", on_not_converged="ignore")
    return (lambda: local.constrained_dynamics_batch(Q, V, TAU, threads=P, **kw),
            lambda: remote.constrained_dynamics_batch(Q, V, TAU, **kw))


def same(a, b):
    if isinstance(a, tuple):
        return all(same(x, y) for x, y in zip(a, b)) and len(a) == len(b)
    return np.array_equal(a, b)


def run(args, model_path, Q, V, TAU, P):
    """One cluster of P workers: local pool and distributed timings (best of args.repeat)."""
    model = cd.Model.load(model_path)
    cluster = distributed.LocalCluster(n_workers=P, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", silence_logs=logging.ERROR)
    client = distributed.Client(cluster)
    try:
        pids = [os.getpid()] + list(client.run(os.getpid).values())
        fns = {}
        for c in args.chunks:
            dm = cdd.DistributedModel.load(client, model_path, threads=1, chunk_size=c)
            fns["local"], fns[c] = calls(args, model, dm, Q, V, TAU, P)
        ref = fns["local"]()
        for c in args.chunks:  # warm-up: workers load the model; check bit for bit
            if not same(fns[c](), ref):
                raise SystemExit(f"chunk_size {c}: distributed result differs from local")
        best = {"local": (math.inf, math.inf)}
        best.update({c: (math.inf, math.inf) for c in args.chunks})
        for _ in range(args.repeat):  # interleaved rounds: every variant sees the same load
            for name in best:
                c0, t0 = cpu_seconds(pids), time.perf_counter()
                fns[name]()
                t, cpu = time.perf_counter() - t0, cpu_seconds(pids) - c0
                w, c = best[name]
                best[name] = (min(w, t), min(c, cpu))
        return best
    finally:
        client.close()
        cluster.close()  # the model and its constraint sets are freed with the last reference


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=str(REPO / "models" / "cd_quadruped.urdf"))
    ap.add_argument("--states", type=int, default=100000)
    ap.add_argument("--function", choices=("ce_aba", "prox_pv"), default="ce_aba")
    ap.add_argument("--contacts", default="lf_foot,rf_foot,lh_foot,rh_foot")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--chunks", default="64,256,1024,4096,16384")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--plot", help="PNG of states/s against chunk size")
    ap.add_argument("--json", help="write the measurements here")
    args = ap.parse_args()
    args.chunks = sorted(int(c) for c in args.chunks.split(","))
    workers = [int(p) for p in args.workers.split(",")]
    cd.set_log_level("off")
    model = cd.Model.load(args.model)
    _, _, TAU, Q, V = random_states(model, args.states)
    N = args.states
    print(f"{args.function} on {model.name}: nq {model.nq}, nv {model.nv}, ny {model.ny}; "
          f"N = {N} states; "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; "
          f"best of {args.repeat} interleaved rounds; dask {distributed.__version__}")
    print(f"{'P':>2} {'how':<22} {'ms/batch':>9} {'states/s':>10} {'vs local':>8} "
          f"{'chunks':>6} {'ms/chunk':>8} {'cpu ms/chunk':>12}")
    results = {}
    for P in workers:
        best = run(args, args.model, Q, V, TAU, P)
        tl, cl = best["local"]
        rows = {"local": {"seconds": tl, "cpu": cl, "rate": N / tl}}
        print(f"{P:>2} {f'local pool threads={P}':<22} {1e3 * tl:9.1f} {N / tl:10.0f} "
              f"{1.0:8.2f}")
        for c in args.chunks:
            t, cpu = best[c]
            n = math.ceil(N / c)
            over, over_cpu = (t - tl) * P / n, (cpu - cl) / n
            rows[c] = {"seconds": t, "cpu": cpu, "rate": N / t, "chunks": n,
                       "overhead_s": over, "overhead_cpu_s": over_cpu}
            print(f"{P:>2} {f'dask workers={P} c={c}':<22} {1e3 * t:9.1f} {N / t:10.0f} "
                  f"{tl / t:8.2f} {n:6d} {1e3 * over:8.2f} {1e3 * over_cpu:12.2f}")
        c90 = at_90(args.chunks, [rows[c]["rate"] for c in args.chunks], N / tl)
        rows["chunk_at_90"] = c90
        print(f"{P:>2} chunk size at 90 % of the local pool: "
              f"{'not reached' if c90 is None else f'{c90:.0f} states'}")
        results[P] = rows
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps({str(k): {str(c): v for c, v in r.items()}
                                                       for k, r in results.items()}, indent=1))
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(6.4, 4.0))
        for i, (P, rows) in enumerate(results.items()):
            color = f"C{i}"
            ax.plot(args.chunks, [rows[c]["rate"] for c in args.chunks], "o-", color=color,
                    label=f"Dask, {P} worker process{'es' if P > 1 else ''}")
            ax.axhline(rows["local"]["rate"], color=color, ls="--",
                       label=f"local pool, {P} thread{'s' if P > 1 else ''}")
            ax.axhline(0.9 * rows["local"]["rate"], color=color, ls=":", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("chunk size [states per task]")
        ax.set_ylabel(f"states per second ({args.function})")
        ax.set_title(f"{model.name}, N = {N}: distributed vs local (loaded 2-core machine)",
                     fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)
        print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
