#!/usr/bin/env python3
"""clusterdyn and Pinocchio side by side on the same URDF and contact set.

Runs `clusterdyn bench` and the Pinocchio bench (tools/bench/pinocchio/, built into
build-bench-pin/ from the pip package `pin` of .venv) interleaved over ROUNDS rounds and prints
the median over the rounds of each side's median ns per call, and the ratio clusterdyn /
Pinocchio, for ABA, RNEA, CRBA, the RNEA and ABA derivatives, M^-1 and, with contacts, the
Delassus matrix, its damped inverse (rho 1e-6) and constrained forward dynamics. For a loop
model MODEL.urdf with a tree twin MODEL_approximate.urdf beside it, the cluster-tree rows
(CE-RNEA and CE-ABA derivatives, H^-1 by the cluster recursion: TWIN_ROWS) time clusterdyn on
MODEL.urdf against Pinocchio's tree derivatives and M^-1 on the twin. Pinocchio's
figure is the faster of its generic and -march=native builds (and of its two Delassus routines);
clusterdyn's is the CLI as built.

    .venv/bin/python tools/bench/side_by_side.py [--rounds 5] [--calls 20000] [--callgrind]
        [--cli build/tools/clusterdyn] [--json] MODEL.urdf[@3:LINK,6:LINK,...]...

A model without "@..." gets the contacts of CONTACT_PRESETS for its name (else none). With
--callgrind, instructions per call are counted for both sides under valgrind (Pinocchio: the
generic build, as valgrind cannot run AVX-512): each algorithm alone (`--only`), at N1 and N2
calls; per call = (I(N2) - I(N1)) / (N2 - N1), so the loading and set-up cancel.

Before timing, each Pinocchio build dumps its values at two states of its pool (--dump) and
pinocchio_compare checks them against clusterdyn at the same states (joints mapped by name):
ABA, RNEA, CRBA, the derivatives, M^-1, the Delassus matrix and its damped inverse; a deviation
above --value-tol (1e-9, relative to max(1, |value|)) is an error, except for the quantities of
--known-deviation (default: the damped inverse, whose PV formula in Pinocchio loses about
log10(|D| / rho) digits), which are reported and timed. Before the table, the sorted
diagonal of the Delassus matrix at the neutral configuration is
compared between the two programs (it does not depend on the row order): a mismatch means the
two sides do not solve the same contact problem, and is an error.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# Contacts of the Pinocchio comparison (docs/benchmarks.md), by model name prefix.
CONTACT_PRESETS = {
    "mit_humanoid": ["6:left_ankle_link", "6:right_ankle_link"],
    "mini_cheetah": ["3:FR_knee_link", "3:FL_knee_link", "3:HR_knee_link", "3:HL_knee_link"],
    "tello_humanoid": ["6:left-foot", "6:right-foot"],
}

# Rows of the table: label, clusterdyn key, Pinocchio keys (the fastest counts).
ROWS = [
    ("ABA", "aba", ["aba"]),
    ("RNEA", "rnea", ["rnea"]),
    ("CRBA", "crba", ["crba"]),
    ("RNEA derivatives", "rnea_derivatives", ["rnea_derivatives"]),
    ("ABA derivatives", "aba_derivatives", ["aba_derivatives"]),
    ("M^-1", "minverse", ["minverse"]),
    ("Delassus", "delassus", ["delassus", "delassus_pv"]),
    ("damped inverse", "damped_inverse", ["damped_inverse"]),
    ("constrained FD (constrainedABA)", "constrained_aba", ["constrained_aba"]),
    ("constrained FD (vs constraintDynamics)", "constrained_aba", ["constraint_dynamics"]),
]
# Cluster-tree algorithms on the exact loop model against Pinocchio's tree algorithms on its
# approximate twin (rotors folded into the links): label, clusterdyn key, Pinocchio keys.
TWIN_ROWS = [
    ("CE-RNEA derivatives (Pinocchio: RNEA derivatives, twin)", "ce_rnea_derivatives",
     ["rnea_derivatives"]),
    ("CE-ABA derivatives (Pinocchio: ABA derivatives, twin)", "ce_aba_derivatives",
     ["aba_derivatives"]),
    ("cluster H^-1 (Pinocchio: M^-1, twin)", "cluster_minverse", ["minverse"]),
]
TWIN_KEYS = {r[1] for r in TWIN_ROWS}
CD_KEYS = sorted({r[1] for r in ROWS + TWIN_ROWS})
PIN_KEYS = ["aba", "rnea", "crba", "rnea_derivatives", "aba_derivatives", "minverse", "delassus",
            "delassus_pv", "damped_inverse", "constraint_dynamics", "constrained_aba"]
VARIANTS = ("generic", "native")


def build_pinocchio(build_dir, variants, cd_build):
    """Configures (once) and builds tools/bench/pinocchio into build_dir: the bench variants and
    pinocchio_compare (linked with cd_build's libclusterdyn_core.a). cmake --build is a no-op
    when nothing changed."""
    src = os.path.join(HERE, "pinocchio")
    if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
        print(f"== configuring the Pinocchio bench in {build_dir}", file=sys.stderr)
        subprocess.run(["cmake", "-S", src, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
                        f"-DPython3_EXECUTABLE={sys.executable}",
                        f"-DCLUSTERDYN_BUILD_DIR={cd_build}"], check=True, stdout=sys.stderr)
    targets = [f"pinocchio_bench_{v}" for v in variants] + ["pinocchio_compare"]
    subprocess.run(["cmake", "--build", build_dir, "-j2", "--target"] + targets, check=True,
                   stdout=sys.stderr)
    exes = [os.path.join(build_dir, t) for t in targets]
    return exes[:-1], exes[-1]


def compare_values(bench, compare, path, contacts, tol):
    """Runs the bench with --dump and pinocchio_compare on the dump: the largest deviation per
    quantity between this Pinocchio build and clusterdyn at the dumped states."""
    with tempfile.TemporaryDirectory(prefix="side_by_side_") as d:
        dump = os.path.join(d, "values.json")
        subprocess.run([bench, path, "--calls", "1", "--only", "aba", "--dump", dump] +
                       contact_args(contacts), check=True, stdout=subprocess.DEVNULL)
        out = subprocess.run([compare, path, dump, "--json", "--tol", str(tol)],
                             stdout=subprocess.PIPE, text=True)
        if out.returncode not in (0, 1) or not out.stdout.strip():
            # exit 1 without JSON: an exception, its message is on stderr above
            hint = (" (tree rows compare the file itself: for a model with rotors or loops pass "
                    "its *_approximate.urdf twin)" if os.path.exists(
                        os.path.splitext(path)[0] + "_approximate.urdf") else "")
            sys.exit(f"error: pinocchio_compare failed on {path}{hint}")
        return json.loads(out.stdout)


def run_json(cmd):
    out = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True).stdout
    return json.loads(out)


def contact_args(contacts):
    return [a for c in contacts for a in ("--contact", c)]


def callgrind_total(cmd):
    with tempfile.TemporaryDirectory(prefix="side_by_side_") as d:
        out = os.path.join(d, "cg.out")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"] + cmd,
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(out) as f:
            for line in f:
                if line.startswith("summary:") or line.startswith("totals:"):
                    return int(line.split()[1])
    raise RuntimeError("no callgrind total for " + " ".join(cmd))


def instructions(cmd, key, n1, n2):
    """Instructions per call of one algorithm: (I(n2) - I(n1)) / (n2 - n1)."""
    base = cmd + ["--only", key]
    return (callgrind_total(base + ["--calls", str(n2)]) -
            callgrind_total(base + ["--calls", str(n1)])) / (n2 - n1)


def parse_model(arg):
    path, _, cs = arg.partition("@")
    if cs:
        contacts = [c for c in cs.split(",") if c]
    else:
        name = os.path.basename(path)
        contacts = next((v for k, v in CONTACT_PRESETS.items() if name.startswith(k)), [])
    return path, contacts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("models", nargs="+", help="MODEL.urdf[@3:LINK,6:LINK,...]")
    ap.add_argument("--rounds", type=int, default=int(os.environ.get("ROUNDS", 5)))
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "tools", "clusterdyn"))
    ap.add_argument("--pin-build", default=os.path.join(ROOT, "build-bench-pin"))
    ap.add_argument("--callgrind", action="store_true", help="also count instructions per call")
    ap.add_argument("--cg-calls", default="1000,2000", help="N1,N2 of the callgrind difference")
    ap.add_argument("--variants", default="generic,native",
                    help="Pinocchio builds to run (the faster counts)")
    ap.add_argument("--algorithms", default=",".join(CD_KEYS),
                    help="rows to time, by clusterdyn key (default all): " + ",".join(CD_KEYS))
    ap.add_argument("--value-tol", type=float, default=1e-9,
                    help="largest deviation from clusterdyn accepted before timing")
    ap.add_argument("--known-deviation", default="damped_inverse",
                    help="quantities (pinocchio_compare names) whose deviation is reported but "
                         "does not stop the script (default: damped_inverse, Pinocchio's "
                         "1/rho cancellation at rho 1e-6: docs/benchmarks.md)")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    args = ap.parse_args()
    known = {k for k in args.known_deviation.split(",") if k}
    if not os.access(args.cli, os.X_OK):
        sys.exit(f"no clusterdyn CLI at {args.cli} (build the clusterdyn_cli target or --cli)")
    variants = [v for v in args.variants.split(",") if v]
    if not variants or any(v not in VARIANTS for v in variants) or "generic" not in variants:
        sys.exit("--variants: generic[,native]")
    keys = [k for k in args.algorithms.split(",") if k]
    if not keys or any(k not in CD_KEYS for k in keys):
        sys.exit("--algorithms: a comma-separated subset of " + ",".join(CD_KEYS))
    rows = [r for r in ROWS + TWIN_ROWS if r[1] in keys]
    self_rows = [r for r in rows if r[1] not in TWIN_KEYS]
    twin_rows = [r for r in rows if r[1] in TWIN_KEYS]
    pin_only = sorted({k for r in self_rows for k in r[2]})
    pin_twin = sorted({k for r in twin_rows for k in r[2]})
    cd_build = os.path.dirname(os.path.dirname(os.path.abspath(args.cli)))
    exes, compare = build_pinocchio(args.pin_build, variants, cd_build)
    pin = dict(zip(variants, exes))
    models = [parse_model(m) for m in args.models]

    def twin_of(path):
        root, ext = os.path.splitext(path)
        return root + "_approximate" + ext

    # The Pinocchio runs: (model path, the path Pinocchio loads, its --only keys).
    pin_runs = []
    for path, contacts in models:
        if self_rows:
            pin_runs.append((path, path, pin_only))
        if twin_rows:
            if not os.path.exists(twin_of(path)):
                sys.exit(f"error: {path}: no approximate twin {twin_of(path)} for the rows "
                         f"{','.join(r[1] for r in twin_rows)}")
            pin_runs.append((path, twin_of(path), pin_twin))

    # Before timing: each Pinocchio build's values against clusterdyn's at the same states.
    values = {}
    compared = {}
    for model_path, path, _ in pin_runs:
        compared[path] = next(c for p, c in models if p == model_path)
    for path, contacts in compared.items():
        for v in variants:
            c = compare_values(pin[v], compare, path, contacts, args.value_tol)
            values[(os.path.basename(path), v)] = c["max_deviation"]
            worst = max(c["max_deviation"].items(), key=lambda kv: kv[1])
            print(f"values {os.path.basename(path)} ({v}): largest deviation from clusterdyn "
                  f"{worst[1]:.1e} ({worst[0]}) over {c['states']} states", file=sys.stderr)
            bad = {k: x for k, x in c["max_deviation"].items() if not x <= args.value_tol}
            if set(bad) - known:
                sys.exit(f"error: {path}: Pinocchio ({v}) and clusterdyn disagree beyond "
                         f"{args.value_tol:g}: {bad}")
            if bad:
                print(f"warning: {os.path.basename(path)} ({v}): known deviations beyond "
                      f"{args.value_tol:g}, timed anyway: {bad}", file=sys.stderr)

    # wall[(model, side, key)] -> list of per-round medians; side: "cd", "generic", "native"
    # (Pinocchio on the model itself), "generic@twin", "native@twin" (on its twin).
    wall, info = {}, {}
    for r in range(args.rounds):
        for path, contacts in models:
            # Alternate which side goes first, so neither always follows the other.
            sides = [("cd", path, keys, "cd")]
            for model_path, pin_path, pin_keys in pin_runs:
                if model_path == path:
                    tag = "" if pin_path == path else "@twin"
                    sides += [(v, pin_path, pin_keys, v + tag) for v in variants]
            if r % 2:
                sides.reverse()
            for side, run_path, run_keys, label in sides:
                if side == "cd":
                    cmd = [args.cli, "bench", run_path, "--calls", str(args.calls), "--json",
                           "--only", ",".join(run_keys)]
                else:
                    cmd = [pin[side], run_path, "--calls", str(args.calls), "--json", "--only",
                           ",".join(run_keys)]
                j = run_json(cmd + contact_args(contacts))
                info[(path, label)] = j
                for k, ns in j["median_ns"].items():
                    wall.setdefault((path, label, k), []).append(ns)
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)

    # Same problem: sorted Delassus diagonal at the neutral configuration on both sides.
    for path, contacts in models:
        if not contacts or not self_rows:
            continue
        a = info[(path, "cd")].get("delassus_reference_diagonal", [])
        b = info[(path, "generic")].get("delassus_neutral_diagonal", [])
        err = max((abs(x - y) / max(1.0, abs(y)) for x, y in zip(a, b)), default=0.0)
        if len(a) != len(b) or err > 1e-8:
            sys.exit(f"error: {path}: the two sides' Delassus matrices at the neutral "
                     f"configuration differ (max rel. {err:.3g}): not the same contact problem")
        print(f"check {os.path.basename(path)}: Delassus diagonal at the neutral configuration "
              f"equal on both sides (max rel. difference {err:.1e}); Pinocchio against its "
              f"dense oracle: {info[(path, 'generic')].get('oracle_check')}", file=sys.stderr)

    n1, n2 = (int(x) for x in args.cg_calls.split(","))
    results = []
    for path, contacts in models:
        cdi, pini = info[(path, "cd")], info.get((path, "generic"), {})
        for label, ckey, pkeys in rows:
            if (path, "cd", ckey) not in wall:
                continue
            tag = "@twin" if ckey in TWIN_KEYS else ""
            pin_path = twin_of(path) if tag else path
            cands = [(statistics.median(wall[(path, v + tag, k)]), v, k) for k in pkeys
                     for v in variants if (path, v + tag, k) in wall]
            if not cands:
                continue
            cd_ns = statistics.median(wall[(path, "cd", ckey)])
            pin_ns, variant, pkey = min(cands)
            per_variant = {v: min((c for c in cands if c[1] == v), default=(None,))[0]
                           for v in variants}
            row = {"model": os.path.basename(path), "contacts": contacts, "algorithm": label,
                   "pinocchio_model": os.path.basename(pin_path),
                   "clusterdyn_ns": cd_ns, "pinocchio_ns": pin_ns,
                   "pinocchio_ns_by_variant": per_variant,
                   "pinocchio_call": f"{pkey} ({variant})", "ratio": cd_ns / pin_ns}
            if ckey == "constrained_aba":
                row["iterations"] = [cdi.get("constrained_aba_iterations"),
                                     pini.get("constrained_aba_iterations")]
            if args.callgrind:
                ca = contact_args(contacts)
                ci = instructions([args.cli, "bench", path] + ca, ckey, n1, n2)
                pis = [(instructions([pin["generic"], pin_path] + ca, k, n1, n2), k)
                       for k in pkeys]
                pi, pk = min(pis)
                row.update({"clusterdyn_instructions": ci, "pinocchio_instructions": pi,
                            "pinocchio_instructions_call": pk, "instruction_ratio": ci / pi})
            results.append(row)

    checks = {os.path.basename(p): info[(p, "generic")].get("oracle_check")
              for p, c in models if c and (p, "generic") in info}
    if args.json:
        print(json.dumps({"rounds": args.rounds, "calls": args.calls, "results": results,
                          "pinocchio_oracle_check": checks,
                          "value_deviation": {f"{m} ({v})": d for (m, v), d in values.items()}},
                         indent=2))
        return
    head = ("| model | algorithm | clusterdyn ns | " +
            " | ".join(f"Pinocchio {v} ns" for v in variants) + " | ratio (faster) |")
    rule = "|---|---|---|" + "---|" * len(variants) + "---|"
    if args.callgrind:
        head += " clusterdyn instr. | Pinocchio instr. | instr. ratio |"
        rule += "---|---|---|"
    print(head)
    print(rule)
    for r in results:
        name = r["model"].replace(".urdf", "")
        pv = " | ".join("" if r["pinocchio_ns_by_variant"][v] is None else
                        f"{r['pinocchio_ns_by_variant'][v]:.0f}" for v in variants)
        line = (f"| {name} | {r['algorithm']} | {r['clusterdyn_ns']:.0f} | {pv} | "
                f"{r['ratio']:.2f} [{r['pinocchio_call']}] |")
        if args.callgrind:
            line += (f" {r['clusterdyn_instructions']:.0f} | {r['pinocchio_instructions']:.0f} "
                     f"| {r['instruction_ratio']:.2f} |")
        print(line)
    for (name, v), d in values.items():
        print(f"\n{name} ({v}): Pinocchio's values against clusterdyn's at the dumped states, "
              f"max |pin - cd| / max(1, |cd|): " +
              ", ".join(f"{k} {x:.1e}" for k, x in sorted(d.items())))
    for name, c in checks.items():
        print(f"\n{name}: Pinocchio's results at 4 states against a dense oracle "
              f"(relative; damped inverse: |Dinv (D + rho I) - I|): {c}")
    its = [r for r in results if "iterations" in r and r["algorithm"].endswith("(constrainedABA)")]
    for r in its:
        a, b = r["iterations"]
        print(f"\n{r['model']}: constrainedABA iterations after the first pass (mean over 64 "
              f"states): clusterdyn {a}, Pinocchio {b}")


if __name__ == "__main__":
    main()
