#!/usr/bin/env python3
"""Side by side on the loop models with ball joints (issue #25, docs/benchmarks.md "Multi-dof
joints inside loops"): Pinocchio 4.1's constraintDynamics with the loops as rigid constraint
models (python/tests/urdfplus_pinocchio.py), clusterdyn's embedded CE-ABA and clusterdyn's proxPV
on the same file with its loops cut, at the same random closed state, in the same run.

- Pinocchio: timed through its Python bindings (wall median of --repeat batches of --calls
  calls), minus its per-call Python overhead measured the same way on a one-joint model with no
  constraint ("net": an estimate of the compiled call, stated as such).
- clusterdyn: the compiled calls, timed with the instruction harness (tools/bench/
  bench_instructions.cpp, `--harness PATH`: `MODEL.urdf ceaba|cutpv N`) as
  (T(3N) - T(N)) / 2N, wall median over --repeat pairs (model loading cancels). Without
  --harness only Pinocchio is timed. (clusterdyn's ctypes calls cost ~0.2 ms of Python each,
  which would hide the algorithms.)

    .venv/bin/python tools/bench/multidof_pinocchio.py --harness build/bench_instructions \
        [--calls 2000] [--repeat 7] [MODEL...]

MODEL: names in models/ (default: cd_rsu_ankle cd_rsu_leg cd_delta cd_stewart). Needs the
pip package pin; exit 77 (skipped) without it.
"""
import argparse
import pathlib
import subprocess
import sys
import time

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(REPO / "python" / "tests"))

import numpy as np  # noqa: E402

try:
    import pinocchio as pin
except ImportError as e:  # pragma: no cover - depends on the environment
    print(f"SKIPPED: pinocchio not importable ({e}); pip install pin", flush=True)
    sys.exit(77)

import clusterdyn as cd  # noqa: E402
from test_multidof_pinocchio import both_sides, random_closed_state  # noqa: E402

ONE_JOINT = """<robot name="one"><link name="base"/><link name="l"><inertial><mass value="1"/>
<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
<joint name="j" type="revolute"><parent link="base"/><child link="l"/><axis xyz="0 0 1"/>
</joint></robot>"""


def median_us(fn, calls, repeat):
    """Median over `repeat` batches of the wall time per call, microseconds."""
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        out.append((time.perf_counter() - t0) / calls * 1e6)
    return float(np.median(out))


def harness_us(harness, path, algo, calls, repeat):
    """Wall microseconds per compiled call: (T(3N) - T(N)) / 2N, median over `repeat` pairs."""
    def run(n):
        t0 = time.perf_counter()
        subprocess.run([harness, str(path), algo, str(n)], check=True, stdout=subprocess.DEVNULL)
        return time.perf_counter() - t0
    return float(np.median([(run(3 * calls) - run(calls)) / (2 * calls) * 1e6
                            for _ in range(repeat)]))


def pin_call(pm, cms, q, v, tau, settings):
    models, datas = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
    for cm in cms:
        models.append(cm)
        datas.append(cm.createData())
    pd = pm.createData()
    pin.initConstraintDynamics(pm, pd, models, datas)
    return lambda: pin.constraintDynamics(pm, pd, q, v, tau, models, datas, settings)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="*",
                    default=["cd_rsu_ankle", "cd_rsu_leg", "cd_delta", "cd_stewart"])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--harness", help="bench_instructions binary (clusterdyn's timings)")
    args = ap.parse_args()
    cd.set_log_level("off")
    # Pinocchio's proximal settings: accuracy 1e-10 (clusterdyn's default tolerance), mu 1e-4
    # (clusterdyn's default), at most 50 iterations (clusterdyn's default).
    settings = pin.ProximalSettings(1e-10, 1e-4, 50)

    pm1 = pin.Model()
    pm1.appendBodyToJoint(pm1.addJoint(0, pin.JointModelRZ(), pin.SE3.Identity(), "j"),
                          pin.Inertia.Identity(), pin.SE3.Identity())
    z1 = np.zeros(1)
    over_pin = median_us(pin_call(pm1, [], z1, z1, z1, settings), args.calls, args.repeat)
    print(f"Pinocchio {pin.__version__}; its per-call Python overhead (one-joint model, no "
          f"constraint): {over_pin:.2f} us")
    print("| model | Pinocchio constraintDynamics, Python (it.) | Pinocchio net | "
          "CE-ABA embedded | proxPV cut (it.) |")
    print("|---|---|---|---|---|")
    for name in args.models:
        path = REPO / "models" / f"{name}.urdf"
        emb, cut, pm, loops, cms, pmap, pmap_cut, ws, cset, cws = both_sides(pin, path)
        q, v, tau, iv = random_closed_state(emb, ws, path, np.random.default_rng(1))
        tau_span = np.zeros(emb.nv)
        tau_span[iv] = tau
        qp, vp, taup = pmap.q(q), pmap.v(v), pmap.v(tau_span)
        qc = np.zeros(cut.nq)
        for j in cut.joint_names:
            a, n, _, _ = cut.joint_coordinates(j)
            ea, en, _, _ = emb.joint_coordinates(j)
            qc[a:a + n] = q[ea:ea + en]
        vc, tc = pmap_cut.v_back(vp), pmap_cut.v_back(taup)[cut.independent_indices()[1]]
        f_pin = pin_call(pm, cms, qp, vp, taup, settings)
        f_pin()
        it_pin = settings.iter
        qdd_pin = pmap.v_back(np.array(f_pin()))
        _, qdd = ws.ce_aba(q, v, tau, return_qdd=True)
        res = cws.prox_pv(qc, vc, tc)
        err = max(np.abs(qdd - qdd_pin).max(),
                  np.abs(pmap_cut.v_back(pmap.v(qdd)) - res.qdd).max())
        t_pin = median_us(f_pin, args.calls, args.repeat)
        if args.harness:
            t_ce = f"{harness_us(args.harness, path, 'ceaba', args.calls, args.repeat):.1f} us"
            t_pv = f"{harness_us(args.harness, path, 'cutpv', args.calls, args.repeat):.1f} us"
        else:
            t_ce = t_pv = "-"
        print(f"| {name} | {t_pin:.1f} us ({it_pin}) | {t_pin - over_pin:.1f} us | {t_ce} | "
              f"{t_pv} ({res.iterations}) |  (max |q_ddot| difference {err:.1e}, "
              f"|q_ddot| {np.abs(qdd).max():.1e})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
