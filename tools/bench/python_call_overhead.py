"""Per-call time of single-state Python calls (clusterdyn package over ctypes).

    .venv/bin/python tools/bench/python_call_overhead.py MODEL.urdf [--baseline DIR]
        [--rounds 15] [--number 2000]

For each method: the median over `rounds` of the wall time per call (timeit, `number` calls a
round) and the CPU time per call (time.process_time over the same calls), in microseconds.
With --baseline DIR (a directory holding another copy of the `clusterdyn` package, e.g. an
older commit's python/ directory), that copy is imported as a second package and timed in the
same rounds, interleaved method by method with this checkout's package, so that the load of a
busy machine falls on both alike. Both use the same libclusterdyn.so.0 (see
clusterdyn._library). The state is the model's reference configuration with a random
velocity of its independent coordinates (closed), fixed seed.
"""

import argparse
import ctypes
import importlib.util
import os
import statistics
import sys
import time
import timeit

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

import numpy as np  # noqa: E402

import clusterdyn  # noqa: E402


def import_copy(directory, alias):
    """The package directory/clusterdyn imported under the name `alias`."""
    init = os.path.join(directory, "clusterdyn", "__init__.py")
    spec = importlib.util.spec_from_file_location(
        alias, init, submodule_search_locations=[os.path.dirname(init)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[alias] = module
    spec.loader.exec_module(module)
    return module


def calls(cd, path):
    """{method: zero-argument callable} for the package `cd` on the model at `path`."""
    cd.set_log_level("error")  # no load warnings
    model = cd.Model.load(path)
    ws = model.workspace()
    rng = np.random.default_rng(7)
    q0 = model.reference_configuration()
    y, _ = ws.spanning_to_independent(q0, np.zeros(model.nv))
    q, v = ws.independent_to_spanning(y, rng.standard_normal(model.ny))
    a = rng.standard_normal(model.nv)
    tau = rng.standard_normal(model.ny)
    frame = model.frame_names[-1]
    cset = model.constraint_set()
    cset.add_contact(frame)
    cws = cset.workspace()
    keep = (model, ws, cset, cws)  # alive as long as the closures
    # The floor: cdyn_rnea called through ctypes with pointers made beforehand.
    out = np.zeros(model.nv)
    q_p, v_p, a_p, out_p = (x.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
                            for x in (q, v, a, out))
    args = (model.handle, ws.handle, q_p, model.nq, v_p, model.nv, a_p, model.nv, None, 0,
            out_p, model.nv)
    rnea_c = cd.lib().cdyn_rnea
    assert rnea_c(*args) == 0 and np.array_equal(out, ws.rnea(q, v, a))
    keep += (out, args)
    return {
        "rnea(q, v, a)": lambda: ws.rnea(q, v, a),
        "aba(q, v, tau)": lambda: ws.aba(q, v, a),
        "crba(q)": lambda: ws.crba(q),
        "ce_aba(q, v, tau)": lambda: ws.ce_aba(q, v, tau),
        "cluster_mass_matrix(q)": lambda: ws.cluster_mass_matrix(q),
        "forward_kinematics(q) + frame_placement(frame)": lambda: (
            ws.forward_kinematics(q), ws.frame_placement(frame)),
        "forward_kinematics(q)": lambda: ws.forward_kinematics(q),
        "constrained_aba (1 contact)": lambda: cws.constrained_aba(q, v, tau),
        "rnea, list inputs": lambda: ws.rnea(q.tolist(), v.tolist(), a.tolist()),
        "cdyn_rnea alone (ctypes, pointers made before)": lambda: rnea_c(*args),
    }, keep


def measure(fn, number):
    """(wall, cpu) seconds per call over `number` calls."""
    t0 = time.process_time()
    wall = timeit.timeit(fn, number=number)
    return wall / number, (time.process_time() - t0) / number


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("model")
    p.add_argument("--baseline", help="directory holding another copy of the clusterdyn package")
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--number", type=int, default=2000)
    p.add_argument("--calls", nargs=2, metavar=("METHOD", "N"),
                   help="only make N calls of METHOD (a name above, e.g. 'rnea(q, v, a)') with "
                        "this package, untimed: run under valgrind --tool=callgrind with N and "
                        "with 0, the difference / N is the instructions per call")
    args = p.parse_args()
    if args.calls:
        fns, _ = calls(clusterdyn, args.model)
        fn = fns[args.calls[0]]
        fn(), fn()
        for _ in range(int(args.calls[1])):
            fn()
        return
    packages = {"this": clusterdyn}
    if args.baseline:  # the baseline copy loads the library this checkout's package finds
        os.environ.setdefault("CLUSTERDYN_LIBRARY", str(clusterdyn._library.find_library()))
        packages = {"baseline": import_copy(args.baseline, "clusterdyn_baseline"), **packages}
    suites = {name: calls(cd, args.model) for name, cd in packages.items()}
    methods = list(suites["this"][0])
    wall = {(n, m): [] for n in packages for m in methods}
    cpu = {(n, m): [] for n in packages for m in methods}
    for fns, _ in suites.values():  # warm up (first calls bind the C functions)
        for fn in fns.values():
            fn()
    for _ in range(args.rounds):
        for m in methods:
            for n in packages:
                w, c = measure(suites[n][0][m], args.number)
                wall[n, m].append(w)
                cpu[n, m].append(c)
    cols = [f"{n} wall / cpu [us]" for n in packages]
    print(f"{'method':46s} " + " ".join(f"{c:>24s}" for c in cols))
    for m in methods:
        cells = [f"{1e6 * statistics.median(wall[n, m]):10.2f} / "
                 f"{1e6 * statistics.median(cpu[n, m]):8.2f}" for n in packages]
        print(f"{m:46s} " + " ".join(f"{c:>24s}" for c in cells))
    print(f"(median of {args.rounds} rounds of {args.number} calls; {os.path.basename(args.model)})")


if __name__ == "__main__":
    main()
