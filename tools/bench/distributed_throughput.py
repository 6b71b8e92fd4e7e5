#!/usr/bin/env python3
"""States per second of clusterdyn.distributed against the local pool, on this machine.

For N closed states of a model (default models/cd_quadruped.urdf, N = 10^5), times
--function: Model.ce_aba_batch (default), the other Model batches (ce_aba_independent,
ce_rnea, mass_matrix, ce_aba_derivatives), ConstraintSet.constrained_dynamics_batch with
solver prox_pv and point contacts at the frames of --contacts ("prox_pv"), the
constrained-dynamics derivatives of those contacts ("constrained_derivatives": the local
reference is clusterdyn.distributed's one-thread loop, as the library has no batch), or N
contact rollouts of --steps steps ("rollout": models/cd_parallel_walker.urdf, floating base,
4 sphere feet; N counts rollouts and the chunk size rollouts per task),

* locally, on the model's pool with P threads (P = 1, 2, ...: the reference), and
* on a Dask LocalCluster of P worker processes (1 task slot and 1 library thread each), via
  DistributedModel.ce_aba_batch, for every chunk size of --chunks,

and reports, per P: states per second (best of --repeat interleaved rounds), the overhead per
chunk (wall: (T_dist - T_local) * P / chunks, the extra time of one task slot per chunk; CPU:
the extra CPU seconds of all processes - client, scheduler, workers - per chunk, less
sensitive to other load), and the chunk size at which the distributed call reaches 90 % of
the local pool's throughput (log-linear interpolation between measured chunk sizes), and
"net eff", the CPU efficiency without the cluster's idle CPU rate (measured over --idle
seconds with no task), which every round pays in proportion to its wall time. Every
distributed result is checked bit for bit against the local call (exit 1 otherwise).

Usage: .venv/bin/python tools/bench/distributed_throughput.py [--states 100000]
           [--function ce_aba|prox_pv] [--contacts lf_foot,rf_foot,lh_foot,rh_foot]
           [--workers 1,2] [--chunks 64,256,1024,4096,16384] [--repeat 3]
           [--plot docs/images/distributed_throughput.png] [--json out.json]
       .venv/bin/python tools/bench/distributed_throughput.py --summary OUT.png A.json B.json ...
           (one figure of "vs local" and CPU eff. against chunk size from several --json runs)
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
    """Smallest chunk size from which on every measured size reaches 0.9 reference,
    interpolated in log(chunk) between the last size below and the first size above; None
    when the largest size does not reach it (a single lucky size among slower ones does not
    count: the machine is shared)."""
    goal = 0.9 * reference
    i = len(rates)
    while i > 0 and rates[i - 1] >= goal:
        i -= 1
    if i == len(rates):
        return None
    if i == 0:
        return chunks[0]
    c0, r0, c, r = chunks[i - 1], rates[i - 1], chunks[i], rates[i]
    f = (goal - r0) / (r - r0)
    return math.exp(math.log(c0) + f * (math.log(c) - math.log(c0)))


FUNCTIONS = ("ce_aba", "ce_aba_independent", "ce_rnea", "mass_matrix", "ce_aba_derivatives",
             "prox_pv", "constrained_derivatives", "rollout")
WALKER = REPO / "models" / "cd_parallel_walker.urdf"
LEGS = ("lf", "rf", "lh", "rh")


def rollout_states(model, N, T, seed=1):
    """N closed states of cd_parallel_walker at touch-down height (slightly rolled, cranks
    spread) and efforts (N, T, ny): (Q0, V0, TAU)."""
    rng = np.random.default_rng(seed)
    Q0, V0 = [], []
    with model.workspace() as ws:
        for i in range(N):
            y, ydot = np.zeros(model.nyq), np.zeros(model.ny)
            roll = 0.05 * rng.uniform(-1, 1)
            y[2], y[3:7] = 0.236 + 0.01 * rng.uniform(), [np.sin(roll / 2), 0, 0, np.cos(roll / 2)]
            y[7:11] = [0.2, -0.2, 0.2, -0.2]
            ydot[2] = 0.2 * rng.uniform(-1, 1)
            q, v = ws.independent_to_spanning(y, ydot)
            Q0.append(q)
            V0.append(v)
    return np.array(Q0), np.array(V0), 0.2 * rng.standard_normal((N, T, model.ny))


def calls(args, model, dm, states, P):
    """(local call, distributed call) of args.function on the states (Y, YD, TAU, Q, V)."""
    if args.function == "rollout":
        Q0, V0, TAU = states
        local, remote = cd.ContactProblem(model), dm.contact_problem()
        for leg in LEGS:
            for p in (local, remote):
                p.add_foot(leg + "_foot", leg + "_coupler", (0.03, 0.0, -0.05), radius=0.02,
                           mu=0.8)
        kw = dict(max_iterations=5000)
        return (lambda: local.rollout(Q0, V0, TAU, pool=model.pool(P), **kw),
                lambda: remote.rollout(Q0, V0, TAU, **kw))
    Y, YD, TAU, Q, V = states
    if args.function == "constrained_derivatives":
        local, remote = model.constraint_set(), dm.constraint_set()
        for frame in args.contacts.split(","):
            local.add_contact(frame)
            remote.add_contact(frame)
        return (lambda: cdd.constrained_dynamics_derivatives_batch(local, Q, V, TAU),
                lambda: remote.constrained_dynamics_derivatives_batch(Q, V, TAU))
    if args.function == "prox_pv":
        local, remote = model.constraint_set(), dm.constraint_set()
        for frame in args.contacts.split(","):
            local.add_contact(frame)
            remote.add_contact(frame)
        kw = dict(solver="prox_pv", on_not_converged="ignore")
        return (lambda: local.constrained_dynamics_batch(Q, V, TAU, threads=P, **kw),
                lambda: remote.constrained_dynamics_batch(Q, V, TAU, **kw))
    method, inputs = {"ce_aba": ("ce_aba_batch", (Q, V, TAU)),
                      "ce_aba_independent": ("ce_aba_independent_batch", (Y, YD, TAU)),
                      "ce_rnea": ("ce_rnea_batch", (Q, V, TAU)),  # TAU as accelerations
                      "mass_matrix": ("mass_matrix_batch", (Q,)),
                      "ce_aba_derivatives": ("ce_aba_derivatives_batch", (Q, V, TAU))
                      }[args.function]
    if dm.transport == "scatter":
        return (lambda: getattr(model, method)(*inputs, threads=P),
                lambda: scattered(dm, method, inputs))
    return (lambda: getattr(model, method)(*inputs, threads=P),
            lambda: getattr(dm, method)(*inputs))


def scattered(dm, method, inputs):
    """The alternative measured against the transports, not offered by the module: every
    chunk scattered straight to a worker (client.scatter(direct=True), no scheduler hop), then
    one task per chunk on the scattered data. Scattered data is not recomputable: when its
    worker dies, Dask cannot run the task again (the reason clusterdyn.distributed does not use
    it)."""
    client, c, N = dm.client, dm.chunk_size, len(inputs[0])
    work = dict(threads=dm.threads, use_pool=True)
    futures = []
    for s in range(0, N, c):
        data = client.scatter([a[s:s + c] for a in inputs], direct=True)
        futures.append(client.submit(cdd._run_chunk, dm._spec, None, method, data, {}, work,
                                     pure=False))
    return np.concatenate(client.gather(futures))


def same(a, b):
    if isinstance(a, tuple):
        return all(same(x, y) for x, y in zip(a, b)) and len(a) == len(b)
    return np.array_equal(a, b)


def run(args, model_path, states, P):
    """One cluster of P workers: local pool and distributed timings (best of args.repeat) for
    every (transport, chunk size), interleaved round by round."""
    model = cd.Model.load(model_path, **args.load)
    cluster = distributed.LocalCluster(n_workers=P, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", silence_logs=logging.ERROR)
    client = distributed.Client(cluster)
    try:
        pids = [os.getpid()] + list(client.run(os.getpid).values())
        fns = {}
        for t in args.transports:
            for c in args.chunks:
                dm = cdd.DistributedModel.load(client, model_path, threads=1, chunk_size=c,
                                               transport="inline" if t == "scatter" else t,
                                               **args.load)
                if t == "scatter":
                    if args.function not in ("ce_aba", "ce_rnea", "mass_matrix"):
                        raise SystemExit("--transports scatter: only for ce_aba, ce_rnea, "
                                         "mass_matrix")
                    dm.transport = "scatter"
                fns["local"], fns[t, c] = calls(args, model, dm, states, P)
        ref = fns["local"]()
        for name, fn in fns.items():  # warm-up: workers load the model; check bit for bit
            if name != "local" and not same(fn(), ref):
                raise SystemExit(f"{name}: distributed result differs from local")
        # The idle CPU rate of these processes (Dask's heartbeats and monitors; the scheduler
        # runs in this process): it is counted in every round, local ones too, in proportion
        # to the wall time, which other jobs stretch on a loaded machine.
        c0, t0 = cpu_seconds(pids), time.perf_counter()
        time.sleep(args.idle)
        idle = (cpu_seconds(pids) - c0) / (time.perf_counter() - t0)
        best = {name: (math.inf, math.inf) for name in fns}
        for _ in range(args.repeat):  # interleaved rounds: every variant sees the same load
            for name in best:
                c0, t0 = cpu_seconds(pids), time.perf_counter()
                fns[name]()
                t, cpu = time.perf_counter() - t0, cpu_seconds(pids) - c0
                w, c = best[name]
                best[name] = (min(w, t), min(c, cpu))
        return best, idle
    finally:
        client.close()
        cluster.close()  # the model and its constraint sets are freed with the last reference


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    if len(sys.argv) > 2 and sys.argv[1] == "--summary":
        return summary(sys.argv[2], sys.argv[3:])
    ap.add_argument("--model", help="default models/cd_quadruped.urdf (rollout: "
                                    "models/cd_parallel_walker.urdf, floating base)")
    ap.add_argument("--steps", type=int, default=20, help="steps per rollout (rollout)")
    ap.add_argument("--states", type=int, default=100000)
    ap.add_argument("--function", choices=FUNCTIONS, default="ce_aba")
    ap.add_argument("--contacts", default="lf_foot,rf_foot,lh_foot,rh_foot")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--chunks", default="1024,4096,16384,65536")
    ap.add_argument("--transports", default="auto,inline",
                    help="DistributedModel transports to time (auto = shared memory here; "
                         "scatter: chunks scattered to the workers, for comparison)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--idle", type=float, default=3.0,
                    help="seconds of idle cluster over which Dask's background CPU is measured")
    ap.add_argument("--plot", help="PNG of states/s against chunk size")
    ap.add_argument("--json", help="write the measurements here")
    args = ap.parse_args()
    args.chunks = sorted(int(c) for c in args.chunks.split(","))
    args.transports = args.transports.split(",")
    workers = [int(p) for p in args.workers.split(",")]
    cd.set_log_level("off")
    rollout = args.function == "rollout"
    args.model = args.model or str(WALKER if rollout else REPO / "models" / "cd_quadruped.urdf")
    args.load = {"floating_base": True} if rollout else {}
    model = cd.Model.load(args.model, **args.load)
    states = (rollout_states(model, args.states, args.steps) if rollout else
              random_states(model, args.states))
    N = args.states
    print(f"{args.function} on {model.name}: nq {model.nq}, nv {model.nv}, ny {model.ny}; "
          f"N = {N} {f'rollouts of {args.steps} steps' if rollout else 'states'}; "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; "
          f"best of {args.repeat} interleaved rounds; dask {distributed.__version__}")
    print(f"{'P':>2} {'how':<30} {'ms/batch':>9} {'states/s':>10} {'vs local':>8} "
          f"{'chunks':>6} {'ms/chunk':>8} {'cpu ms':>8} {'cpu ms/chunk':>12} {'cpu eff':>7} "
          f"{'net eff':>7}")
    results = {}
    for P in workers:
        best, idle = run(args, args.model, states, P)
        load = os.getloadavg()[0]
        tl, cl = best["local"]
        rows = {"local": {"seconds": tl, "cpu": cl, "rate": N / tl}, "load_average": load,
                "idle_cpu_per_s": idle}
        ref = "local loop, 1 thread" if args.function == "constrained_derivatives" else \
            f"local pool threads={P}"
        print(f"{P:>2} {ref:<30} {1e3 * tl:9.1f} {N / tl:10.0f} "
              f"{1.0:8.2f} {'':6} {'':8} {1e3 * cl:8.0f} {'':12} {1.0:7.2f} {1.0:7.2f}")
        for tr in args.transports:
            for c in args.chunks:
                t, cpu = best[tr, c]
                n = math.ceil(N / c)
                over, over_cpu = (t - tl) * P / n, (cpu - cl) / n
                net = (cl - idle * tl) / (cpu - idle * t)  # CPU eff. without the idle rate
                rows[f"{tr} {c}"] = {"seconds": t, "cpu": cpu, "rate": N / t, "chunks": n,
                                     "overhead_s": over, "overhead_cpu_s": over_cpu,
                                     "net_eff": net}
                print(f"{P:>2} {f'dask {tr} workers={P} c={c}':<30} {1e3 * t:9.1f} "
                      f"{N / t:10.0f} {tl / t:8.2f} {n:6d} {1e3 * over:8.2f} {1e3 * cpu:8.0f} "
                      f"{1e3 * over_cpu:12.2f} {cl / cpu:7.2f} {net:7.2f}")
            c90 = at_90(args.chunks, [rows[f"{tr} {c}"]["rate"] for c in args.chunks], N / tl)
            rows[f"{tr} chunk_at_90"] = c90
            print(f"{P:>2} {tr}: chunk size at 90 % of the local pool: "
                  f"{'not reached' if c90 is None else f'{c90:.0f} states'}")
        print(f"{P:>2} load average after these rounds: {load:.1f}; idle CPU of the "
              f"cluster's processes: {1e3 * idle:.0f} ms/s")
        results[P] = rows
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(
            {"function": args.function, "model": model.name, "N": N, "chunks": args.chunks,
             "steps": args.steps if rollout else None, "transports": args.transports,
             "results": {str(k): r for k, r in results.items()}}, indent=1))
    if args.plot:
        plot(args, model, results, N)


def plot(args, model, results, N):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    styles = {"auto": "o-", "shared": "o-", "inline": "s--", "scatter": "^:"}
    names = {"auto": "shared memory", "shared": "shared memory", "inline": "arrays in tasks",
             "scatter": "scattered chunks"}
    for i, (P, rows) in enumerate(results.items()):
        color = f"C{i}"
        for tr in args.transports:
            ax.plot(args.chunks, [rows[f"{tr} {c}"]["rate"] for c in args.chunks],
                    styles.get(tr, "o-"), color=color, alpha=1.0 if tr != "inline" else 0.6,
                    label=f"Dask, {P} worker{'s' if P > 1 else ''}, {names.get(tr, tr)}")
        ax.axhline(rows["local"]["rate"], color=color, ls="-", lw=2, alpha=0.35,
                   label=f"local pool, {P} thread{'s' if P > 1 else ''}")
        ax.axhline(0.9 * rows["local"]["rate"], color=color, ls=":", lw=0.8)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("chunk size [states per task]")
    ax.set_ylabel(f"states per second ({args.function})")
    ax.set_title(f"{model.name}, N = {N}: distributed vs local (2-core machine, "
                 f"dotted: 90 %)", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(args.plot, dpi=110)
    print(f"plot: {args.plot}")


LABELS = {"ce_aba": "CE-ABA", "ce_rnea": "CE-RNEA", "mass_matrix": "H",
          "ce_aba_independent": "closure + CE-ABA", "ce_aba_derivatives": "CE-ABA derivatives",
          "prox_pv": "constrained dynamics", "constrained_derivatives":
          "constrained derivatives", "rollout": "contact rollouts"}


def summary(out, paths):
    """One figure from several --json runs: per worker count, "vs local" (wall) and CPU eff.
    of the shared-memory transport against the chunk size, one line per function."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    runs = [json.loads(pathlib.Path(p).read_text()) for p in paths]
    Ps = sorted({P for r in runs for P in r["results"]}, key=int)
    fig, axes = plt.subplots(1, len(Ps), figsize=(5.2 * len(Ps), 4.6), sharey=True,
                             squeeze=False)
    for ax, P in zip(axes[0], Ps):
        for i, r in enumerate(runs):
            rows, tr = r["results"].get(P), r["transports"][0]
            if rows is None:
                continue
            loc = rows["local"]
            wall = [loc["seconds"] / rows[f"{tr} {c}"]["seconds"] for c in r["chunks"]]
            # CPU eff. without the idle rate ("net eff") when the run measured it.
            eff = [rows[f"{tr} {c}"].get("net_eff", loc["cpu"] / rows[f"{tr} {c}"]["cpu"])
                   for c in r["chunks"]]
            name = LABELS.get(r["function"], r["function"])
            ax.plot(r["chunks"], wall, "o-", color=f"C{i}", label=f"{name}: vs local (wall)")
            ax.plot(r["chunks"], eff, "s--", color=f"C{i}", alpha=0.6,
                    label=f"{name}: net CPU eff.")
        ax.axhline(0.9, color="k", ls=":", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("chunk size [states (rollouts) per task]")
        ax.set_title(f"{P} worker process{'es' if P != '1' else ''} vs local pool of {P} "
                     f"thread{'s' if P != '1' else ''}", fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("distributed / local (dotted: 0.9)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=5, fontsize=6)
    fig.suptitle("clusterdyn.distributed, shared memory, 2-core machine loaded by other jobs",
                 fontsize=9)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    fig.savefig(out, dpi=110)
    print(f"plot: {out}")


if __name__ == "__main__":
    main()
