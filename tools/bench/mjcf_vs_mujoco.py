#!/usr/bin/env python3
"""clusterdyn's CE-ABA against MuJoCo's forward dynamics on the same MJCF file, in one run.

    .venv/bin/python tools/bench/mjcf_vs_mujoco.py [--cli build/tools/clusterdyn]
        [--calls 20000] [--rounds 3] [--callgrind] FILE.xml[@cut=LOOP,LOOP...]...

clusterdyn side: `clusterdyn bench FILE --json` (its CE-ABA at random closed states; loops
named after "@cut=" are cut instead of embedded, and proxPV then solves CE-ABA plus those cut
loops). MuJoCo side (the pip package `mujoco` of this interpreter), at qpos0 at rest (the files
are drawn closed: the loops hold there, the least work for its solver), median ns per call of a Python loop over each function (the Python call overhead is
measured alone and printed: subtract it per MuJoCo call of the row):
  - mj_forward: everything (kinematics, collision detection, mass matrix and factorization,
    bias, passive, actuation, the constraint rows of equalities, limits and contacts and their
    iterative soft solve);
  - mj_forward without contacts (mjDSBL_CONTACT): the same with collision detection off, so
    the constraint solve has the equality (loop) and active limit rows only;
  - smooth dynamics: MuJoCo's own stages mj_kinematics, mj_comPos, mj_crb, mj_factorM,
    mj_fwdVelocity (mj_comVel, mj_passive, mj_rne bias, and the constraint reference of the
    stored rows), mj_fwdActuation, mj_fwdAcceleration: the unconstrained tree forward dynamics
    qacc_smooth = M^-1 qfrc_smooth, loops ignored (7 binding calls);
  - mj_fwdAcceleration alone (qacc_smooth from the stored factorization and forces: a solve).
With --callgrind, instructions per call under valgrind: clusterdyn's as (I(N2) - I(N1)) /
(N2 - N1) of `bench --only ALGO`, so loading and set-up cancel; MuJoCo's inside its C functions
only (--toggle-collect on mj_forward, or on the seven smooth stages), over N2 + 1 calls of this
script's child mode (one set-up call), so the Python interpreter is not counted.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def mujoco_rows(path, calls, rounds):
    """Median ns per call of each MuJoCo row (and of an empty binding call)."""
    import mujoco
    import numpy as np

    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(12345)
    # qpos0 (the files are drawn closed) at rest: the loops hold, so MuJoCo's solver does its
    # least work (a random perturbation would open them); random controls
    states = [(m.qpos0.copy(), np.zeros(m.nv), rng.uniform(-1, 1, m.nu)) for _ in range(64)]

    def smooth():  # the unconstrained (smooth) forward dynamics, MuJoCo's own stages
        mujoco.mj_kinematics(m, d)
        mujoco.mj_comPos(m, d)
        mujoco.mj_crb(m, d)
        mujoco.mj_factorM(m, d)
        mujoco.mj_fwdVelocity(m, d)  # mj_comVel, mj_passive, mj_rne (qfrc_bias)
        mujoco.mj_fwdActuation(m, d)
        mujoco.mj_fwdAcceleration(m, d)

    def forward_nocontact():
        mujoco.mj_forward(m, d)

    rows = {
        "mj_forward": (lambda: mujoco.mj_forward(m, d), 1),
        "mj_forward_nocontact": (forward_nocontact, 1),
        "smooth": (smooth, 7),
        "mj_fwdAcceleration": (lambda: mujoco.mj_fwdAcceleration(m, d), 1),
        "python_call": (lambda: mujoco.mj_resetCallbacks(), 1),
    }
    out = {}
    for name, (fn, ncalls) in rows.items():
        flags = m.opt.disableflags
        if name == "mj_forward_nocontact":
            m.opt.disableflags = flags | mujoco.mjtDisableBit.mjDSBL_CONTACT
        meds = []
        for _ in range(rounds):
            per = []
            batch = max(1, calls // 20)
            for b in range(20):
                qpos, qvel, ctrl = states[b % len(states)]
                d.qpos[:], d.qvel[:], d.ctrl[:] = qpos, qvel, ctrl
                mujoco.mj_forward(m, d)  # every stage's inputs exist (mj_fwdAcceleration)
                t0 = time.perf_counter_ns()
                for _ in range(batch):
                    fn()
                per.append((time.perf_counter_ns() - t0) / batch)
            meds.append(statistics.median(per))
        m.opt.disableflags = flags
        out[name] = {"ns": statistics.median(meds), "binding_calls": ncalls}
    out["info"] = {"nq": m.nq, "nv": m.nv, "neq": m.neq, "mujoco": mujoco.__version__,
                   "nefc_last_state": int(d.nefc)}
    return out


SMOOTH_STAGES = ["mj_kinematics", "mj_comPos", "mj_crb", "mj_factorM", "mj_fwdVelocity",
                 "mj_fwdActuation", "mj_fwdAcceleration"]


def mujoco_child(path, row, n):
    """The callgrind child: n calls of one row at one state (after one set-up mj_forward)."""
    import mujoco
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:] = m.qpos0, 0.0  # closed, at rest, as mujoco_rows
    if row == "mj_forward_nocontact":
        m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    mujoco.mj_forward(m, d)
    stages = [getattr(mujoco, f) for f in SMOOTH_STAGES]
    for _ in range(n):
        if row == "smooth":
            for f in stages:
                f(m, d)
        else:
            mujoco.mj_forward(m, d)


def callgrind_total(cmd):
    """Total instructions of cmd under callgrind; valgrind options may lead cmd."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"] + cmd,
                       check=True, capture_output=True)
        for line in open(out):
            if line.startswith("totals:") or line.startswith("summary:"):
                return int(line.split()[1])
    raise RuntimeError("no callgrind total for " + " ".join(cmd))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="+", help="FILE.xml[@cut=LOOP,LOOP...]")
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "tools", "clusterdyn"))
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--callgrind", action="store_true")
    ap.add_argument("--cg-calls", default="1000,2000")
    ap.add_argument("--mujoco-child", help=argparse.SUPPRESS)  # callgrind child: ROW (N: --calls)
    args = ap.parse_args()
    if args.mujoco_child:
        mujoco_child(args.models[0], args.mujoco_child, args.calls)
        return 0
    n1, n2 = (int(x) for x in args.cg_calls.split(","))
    report = []
    for spec in args.models:
        path, _, opt = spec.partition("@")
        cut = [c for c in opt[len("cut="):].split(",") if c] if opt.startswith("cut=") else []
        extra = sum((["--cut", c] for c in cut), [])
        only = "ce_aba,prox_pv" if cut else "ce_aba"
        cds, mjs = [], []
        for _ in range(args.rounds):  # interleaved: both sides see the same machine load
            r = subprocess.run([args.cli, "bench", path, "--json", "--calls", str(args.calls),
                                "--only", only] + extra, check=True, capture_output=True, text=True)
            cds.append(json.loads(r.stdout))
            mjs.append(mujoco_rows(path, args.calls, 1))
        cd = {k: statistics.median(c["median_ns"][k] for c in cds) for k in cds[0]["median_ns"]}
        mj = {k: dict(mjs[0][k], ns=statistics.median(x[k]["ns"] for x in mjs))
              for k in mjs[0] if k != "info"}
        mj["info"] = mjs[0]["info"]
        entry = {"model": spec, "clusterdyn": cd, "clusterdyn_info": {
            k: cds[0].get(k) for k in ("nq", "nv", "ny", "nclusters", "cut_loops")},
            "mujoco": mj}
        if args.callgrind:
            ci = {}
            for k in cd:
                base = [args.cli, "bench", path, "--only", k] + extra
                ci[k] = (callgrind_total(base + ["--calls", str(n2)]) -
                         callgrind_total(base + ["--calls", str(n1)])) / (n2 - n1)
            entry["clusterdyn_instructions"] = ci
            mi = {}
            for row in ("mj_forward", "mj_forward_nocontact", "smooth"):
                funcs = SMOOTH_STAGES if row == "smooth" else ["mj_forward"]
                total = callgrind_total(["--collect-atstart=no"] +
                                        [f"--toggle-collect={f}" for f in funcs] +
                                        [sys.executable, os.path.abspath(__file__), path,
                                         "--mujoco-child", row, "--calls", str(n2)])
                mi[row] = total / (n2 + 1)  # the set-up mj_forward runs the stages once too
            entry["mujoco_instructions"] = mi
        report.append(entry)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
