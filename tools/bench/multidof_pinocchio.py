#!/usr/bin/env python3
"""Side by side on the loop models with ball joints (issue #25, docs/benchmarks.md "Multi-dof
joints inside loops"): Pinocchio 4.1's constraintDynamics with the loops as rigid constraint
models (python/tests/urdfplus_pinocchio.py), clusterdyn's embedded CE-ABA and clusterdyn's proxPV
on the same file with its loops cut, at the same random closed state, all three called through
Python in the same run (wall medians of --repeat batches of --calls calls).

Each library's per-call Python overhead is measured on a one-joint model with the same call
(Pinocchio: constraintDynamics with no constraint; clusterdyn: ce_aba / prox_pv of a one-joint
model) and subtracted in the "net" columns: an estimate of the compiled call, stated as such.

    .venv/bin/python tools/bench/multidof_pinocchio.py [--calls 2000] [--repeat 7] [MODEL...]

MODEL: names in models/ (default: cd_rsu_ankle cd_rsu_leg cd_delta cd_stewart). Needs the
pip package pin; exit 77 (skipped) without it.
"""
import argparse
import pathlib
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
from anchors_util import PinocchioMap  # noqa: E402
from test_multidof_pinocchio import random_closed_state  # noqa: E402
from urdfplus_pinocchio import build  # noqa: E402

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


def pin_call(pm, cms, q, v, tau, settings):
    models, datas = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
    for cm in cms:
        models.append(cm)
        datas.append(cm.createData())
    pd = pm.createData()
    pin.initConstraintDynamics(pm, pd, models)
    return lambda: pin.constraintDynamics(pm, pd, q, v, tau, models, datas, settings)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="*",
                    default=["cd_rsu_ankle", "cd_rsu_leg", "cd_delta", "cd_stewart"])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    cd.set_log_level("off")
    # Pinocchio's proximal settings: accuracy 1e-10 (clusterdyn's default tolerance), mu 1e-4
    # (clusterdyn's default), at most 50 iterations (clusterdyn's default).
    settings = pin.ProximalSettings(1e-10, 1e-4, 50)

    one = cd.Model.from_string(ONE_JOINT)
    one_ws = one.workspace()
    one_set = cd.Model.from_string(ONE_JOINT, cut_loops=True).cut_loop_constraints()
    one_cws = one_set.workspace()
    z1 = np.zeros(1)
    over_cd = median_us(lambda: one_ws.ce_aba(z1, z1, z1), args.calls, args.repeat)
    over_pv = median_us(lambda: one_cws.prox_pv(z1, z1, z1), args.calls, args.repeat)
    pm1 = pin.Model()
    pm1.appendBodyToJoint(pm1.addJoint(0, pin.JointModelRZ(), pin.SE3.Identity(), "j"),
                          pin.Inertia.Identity(), pin.SE3.Identity())
    over_pin = median_us(pin_call(pm1, [], z1, z1, z1, settings), args.calls, args.repeat)
    print(f"Pinocchio {pin.__version__}; per-call Python overhead (one-joint model): "
          f"Pinocchio {over_pin:.2f} us, clusterdyn ce_aba {over_cd:.2f} us, prox_pv "
          f"{over_pv:.2f} us")
    print("| model | Pinocchio constraintDynamics (it.) | CE-ABA embedded | proxPV cut (it.) "
          "| net Pin / CE-ABA / proxPV |")
    print("|---|---|---|---|---|")
    for name in args.models:
        path = REPO / "models" / f"{name}.urdf"
        emb, cut = cd.Model.load(path), cd.Model.load(path, cut_loops=True)
        pm, loops = build(pin, path)
        cms = [cm for _, _, group in loops for cm in group]
        pmap, pmap_cut = PinocchioMap(emb, pm), PinocchioMap(cut, pm)
        ws = emb.workspace()
        cset = cut.cut_loop_constraints()
        cws = cset.workspace()
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
        t_ce = median_us(lambda: ws.ce_aba(q, v, tau), args.calls, args.repeat)
        t_pv = median_us(lambda: cws.prox_pv(qc, vc, tc), args.calls, args.repeat)
        print(f"| {name} | {t_pin:.1f} us ({it_pin}) | {t_ce:.1f} us | {t_pv:.1f} us "
              f"({res.iterations}) | {t_pin - over_pin:.1f} / {t_ce - over_cd:.1f} / "
              f"{t_pv - over_pv:.1f} us |  (max |q_ddot| difference {err:.1e})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
