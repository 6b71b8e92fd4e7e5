#!/usr/bin/env python3
"""Side by side on the loop models with ball joints (issue #25, docs/benchmarks.md "Multi-dof
joints inside loops"): Pinocchio 4.1's constraintDynamics with the loops as rigid constraint
models (python/tests/urdfplus_pinocchio.py), clusterdyn's embedded CE-ABA and clusterdyn's proxPV
on the same file with its loops cut, at the same random closed state, in the same run.

- Pinocchio: timed through its Python bindings (wall median of --repeat batches of --calls
  calls), minus its per-call Python overhead measured the same way on a one-joint model with no
  constraint ("net": an estimate of the compiled call, stated as such).
- Pinocchio compiled (`--pin-cpp BINARY`): the same Pinocchio model, constraint models, settings
  and state written as a text description (pin_description) and timed by
  tools/bench/pinocchio/multidof_constraint_dynamics.cpp (wall median of --repeat batches of
  --calls calls in C++, header-only Pinocchio from the pip package's headers); its q_ddot is
  checked against the Python binding's to 1e-12 (relative to max(1, |q_ddot|)). When BINARY does
  not exist it is compiled there first (one translation unit, g++ -O3, a few minutes).
- clusterdyn: the compiled calls, timed with the instruction harness (tools/bench/
  bench_instructions.cpp, `--harness PATH`: `MODEL.urdf ceaba|cutpv N`) as
  (T(3N) - T(N)) / 2N, wall median over --repeat pairs (model loading cancels). Without
  --harness only Pinocchio is timed. (clusterdyn's ctypes calls cost ~0.2 ms of Python each,
  which would hide the algorithms.)

    .venv/bin/python tools/bench/multidof_pinocchio.py --harness build/bench_instructions \
        [--pin-cpp build-pin-multidof/multidof_constraint_dynamics] [--calls 2000] [--repeat 7] [MODEL...]

MODEL: names in models/ (default: cd_rsu_ankle cd_rsu_leg cd_delta cd_stewart). Needs the
pip package pin; exit 77 (skipped) without it.
"""
import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
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


PIN_CPP_SOURCE = REPO / "tools" / "bench" / "pinocchio" / "multidof_constraint_dynamics.cpp"
JOINT_CODES = {"JointModelRevoluteUnaligned": "R", "JointModelPrismaticUnaligned": "P",
               "JointModelSpherical": "S"}


def _numbers(x):
    return " ".join(repr(float(a)) for a in np.asarray(x, float).ravel())


def pin_description(pm, cms, accuracy, mu, max_iter, q, v, tau):
    """The text read by multidof_constraint_dynamics.cpp (format in its header): every joint of
    the Pinocchio model pm (revolute / prismatic unaligned, spherical: the joints of
    urdfplus_pinocchio.build) with its placement and combined inertia, the constraint models,
    the ProximalSettings arguments and the state."""
    lines = []
    for jid in range(1, pm.njoints):
        jm = pm.joints[jid]
        code = JOINT_CODES.get(jm.shortname())
        if code is None:
            raise ValueError(f"joint {pm.names[jid]}: {jm.shortname()} has no description code")
        axis = jm.extract().axis if code in "RP" else np.zeros(3)
        M, inertia = pm.jointPlacements[jid], pm.inertias[jid]
        I = inertia.inertia
        lines.append(f"joint {pm.parents[jid]} {code} {_numbers(axis)} {_numbers(M.rotation)} "
                     f"{_numbers(M.translation)} {repr(float(inertia.mass))} "
                     f"{_numbers(inertia.lever)} "
                     f"{_numbers([I[0, 0], I[0, 1], I[1, 1], I[0, 2], I[1, 2], I[2, 2]])} "
                     f"{pm.names[jid]}")
    kinds = {pin.ContactType.CONTACT_3D: "3D", pin.ContactType.CONTACT_6D: "6D"}
    for cm in cms:
        if cm.reference_frame != pin.ReferenceFrame.LOCAL or cm.type not in kinds:
            raise ValueError("constraint models: LOCAL CONTACT_3D / CONTACT_6D only")
        P1, P2 = cm.joint1_placement, cm.joint2_placement
        lines.append(f"constraint {kinds[cm.type]} {cm.joint1_id} {_numbers(P1.rotation)} "
                     f"{_numbers(P1.translation)} {cm.joint2_id} {_numbers(P2.rotation)} "
                     f"{_numbers(P2.translation)}")
    lines.append(f"settings {repr(float(accuracy))} {repr(float(mu))} {int(max_iter)}")
    for key, x in (("q", q), ("v", v), ("tau", tau)):
        lines.append(f"{key} {len(x)} {_numbers(x)}")
    return "\n".join(lines) + "\n"


def build_pin_cpp(binary):
    """Compiles multidof_constraint_dynamics.cpp into `binary` against the pip package's
    Pinocchio headers (cmeel prefix) and the system's Eigen (as tools/bench/pinocchio/
    CMakeLists.txt: header-only, its Boost defines; include links to the prefix's pinocchio/
    and boost/ only)."""
    import cmeel.consts
    site = pathlib.Path(cmeel.consts.__file__).resolve().parents[1]
    prefix = site / cmeel.consts.CMEEL_PREFIX
    binary = pathlib.Path(binary)
    inc = binary.parent / "pin-include"
    inc.mkdir(parents=True, exist_ok=True)
    for d in ("pinocchio", "boost"):
        link = inc / d
        if not link.exists():
            os.symlink(prefix / "include" / d, link)
    cmd = ["g++", "-O3", "-std=c++17", "-DNDEBUG", "-w", "-isystem", "/usr/include/eigen3",
           "-isystem", str(inc), "-DBOOST_MPL_LIMIT_LIST_SIZE=30",
           "-DBOOST_MPL_LIMIT_VECTOR_SIZE=30", "-DBOOST_MPL_CFG_NO_PREPROCESSED_HEADERS",
           "-DBOOST_FUSION_INVOKE_MAX_ARITY=12", str(PIN_CPP_SOURCE), "-o", str(binary)]
    print("compiling " + " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def pin_cpp_run(binary, description, calls, repeat):
    """(microseconds per call, iterations, q_ddot) of the compiled constraintDynamics."""
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write(description)
    try:
        out = subprocess.run([str(binary), f.name, str(calls), str(repeat)], check=True,
                             capture_output=True, text=True).stdout
    finally:
        os.unlink(f.name)
    fields = {line.split()[0]: line.split()[1:] for line in out.splitlines() if line.strip()}
    qdd = np.array([float(x) for x in fields["qdd"][1:]])
    return float(fields["us_per_call"][0]), int(fields["iterations"][0]), qdd


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
    ap.add_argument("--pin-cpp", help="multidof_constraint_dynamics binary (Pinocchio compiled; "
                    "built there from tools/bench/pinocchio/ when missing)")
    args = ap.parse_args()
    cd.set_log_level("off")
    # Pinocchio's proximal settings: accuracy 1e-10 (clusterdyn's default tolerance), mu 1e-4
    # (clusterdyn's default), at most 50 iterations (clusterdyn's default).
    accuracy, mu, max_iter = 1e-10, 1e-4, 50
    settings = pin.ProximalSettings(accuracy, mu, max_iter)
    if args.pin_cpp and not pathlib.Path(args.pin_cpp).exists():
        build_pin_cpp(args.pin_cpp)

    pm1 = pin.Model()
    pm1.appendBodyToJoint(pm1.addJoint(0, pin.JointModelRZ(), pin.SE3.Identity(), "j"),
                          pin.Inertia.Identity(), pin.SE3.Identity())
    z1 = np.zeros(1)
    over_pin = median_us(pin_call(pm1, [], z1, z1, z1, settings), args.calls, args.repeat)
    print(f"Pinocchio {pin.__version__}; its per-call Python overhead (one-joint model, no "
          f"constraint): {over_pin:.2f} us")
    cpp_head = " Pinocchio C++ (it.) |" if args.pin_cpp else ""
    print(f"| model | Pinocchio constraintDynamics, Python (it.) | Pinocchio net |{cpp_head} "
          "CE-ABA embedded | proxPV cut (it.) |")
    print("|---|---|---|" + ("---|" if args.pin_cpp else "") + "---|---|")
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
        cpp = ""
        if args.pin_cpp:
            text = pin_description(pm, cms, accuracy, mu, max_iter, qp, vp, taup)
            t_cpp, it_cpp, qdd_cpp = pin_cpp_run(args.pin_cpp, text, args.calls, args.repeat)
            qdd_py = np.array(f_pin())
            dev = np.abs(qdd_cpp - qdd_py).max() / max(1.0, np.abs(qdd_py).max())
            if not dev <= 1e-12 or it_cpp != it_pin:
                raise SystemExit(f"{name}: Pinocchio C++ q_ddot differs from the Python "
                                 f"binding's by {dev:.1e} relative (iterations {it_cpp} vs "
                                 f"{it_pin})")
            cpp = f" {t_cpp:.1f} us ({it_cpp}) |"
        if args.harness:
            t_ce = f"{harness_us(args.harness, path, 'ceaba', args.calls, args.repeat):.1f} us"
            t_pv = f"{harness_us(args.harness, path, 'cutpv', args.calls, args.repeat):.1f} us"
        else:
            t_ce = t_pv = "-"
        print(f"| {name} | {t_pin:.1f} us ({it_pin}) | {t_pin - over_pin:.1f} us |{cpp} {t_ce} | "
              f"{t_pv} ({res.iterations}) |  (max |q_ddot| difference {err:.1e}, "
              f"|q_ddot| {np.abs(qdd).max():.1e})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
