#!/usr/bin/env python3
"""Price of exactness: the exact loop model against its armature approximation, side by side.

For a URDF+ model with loops or rotors (MODEL.urdf) and its approximate twin (by default
MODEL_approximate.urdf: the same robot as a tree, rotor inertia folded in as armature), runs
`clusterdyn bench --json` on the two models in alternation (`--rounds` interleaved rounds, so
both see the same machine load) and prints the median over rounds of each algorithm's median
ns per call and the ratios a user choosing between the two pays:

    CE-ABA / tree ABA,  CE-RNEA / tree RNEA,  cluster H / tree CRBA

(the cluster algorithms on MODEL against the tree algorithms on the twin).

Usage: compare_approx.py MODEL.urdf [TWIN.urdf] [--rounds 5] [--calls 20000]
                         [--cli build/tools/clusterdyn] [--json]
"""
import argparse
import json
import pathlib
import statistics
import subprocess
import sys

PAIRS = (("ce_aba", "aba", "CE-ABA / tree ABA"),
         ("ce_rnea", "rnea", "CE-RNEA / tree RNEA"),
         ("cluster_h", "crba", "cluster H / tree CRBA"))


def bench(cli, model, calls):
    out = subprocess.run([cli, "bench", str(model), "--calls", str(calls), "--json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model")
    ap.add_argument("twin", nargs="?")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--cli", default=None, help="the clusterdyn tool (default: build*/tools/)")
    ap.add_argument("--json", action="store_true", help="print the table as JSON")
    args = ap.parse_args()
    model = pathlib.Path(args.model)
    twin = pathlib.Path(args.twin) if args.twin else model.with_name(
        model.stem + "_approximate" + model.suffix)
    if not twin.exists():
        ap.error(f"no approximate twin {twin}: pass it as the second argument")
    cli = args.cli
    if cli is None:
        root = pathlib.Path(__file__).resolve().parents[2]
        found = sorted(root.glob("build*/tools/clusterdyn"))
        if not found:
            ap.error("clusterdyn tool not found: pass --cli")
        cli = str(found[0])
    if args.rounds < 1 or args.calls < 1:
        ap.error("--rounds and --calls must be positive")

    exact, approx = [], []
    for _ in range(args.rounds):  # interleaved: exact, twin, exact, twin, ...
        exact.append(bench(cli, model, args.calls)["median_ns"])
        approx.append(bench(cli, twin, args.calls)["median_ns"])

    def med(runs, key):
        return statistics.median(r[key] for r in runs)

    rows = []
    for mine, theirs, label in PAIRS:
        a, b = med(exact, mine), med(approx, theirs)
        rows.append({"ratio": label, "exact": mine, "exact_ns": a, "approx": theirs,
                     "approx_ns": b, "factor": a / b})
    if args.json:
        print(json.dumps({"model": str(model), "twin": str(twin), "rounds": args.rounds,
                          "calls": args.calls, "rows": rows}, indent=2))
        return 0
    print(f"{model.name} (exact) vs {twin.name} (approximate); median of {args.rounds} "
          f"interleaved rounds of {args.calls} calls")
    print(f"{'ratio':24s} {'exact ns':>10s} {'approx ns':>10s} {'factor':>7s}")
    for r in rows:
        print(f"{r['ratio']:24s} {r['exact_ns']:10.0f} {r['approx_ns']:10.0f} "
              f"{r['factor']:7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
