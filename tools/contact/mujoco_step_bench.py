#!/usr/bin/env python3
"""One simulation step of the mini cheetah on four feet: clusterdyn's contactStep on
mini_cheetah.urdf (exact rotor transmissions) against MuJoCo's mj_step on
mini_cheetah_approximate.urdf loaded by MuJoCo's URDF importer (docs/contact.md, "Speed").

    mujoco_step_bench.py CONTACT_STEP_BENCH URDFPLUS_DIR [--steps N] [--reps R] [--callgrind]
                         [--cone elliptic|pyramidal] [--solver admm|pgs] [--tolerance T]

Both sides run compiled loops: contact_step_bench times runSteps (N contactStep calls, the PD
torques computed in the loop), MuJoCo mj_step(model, data, nstep=N) (the loop inside C; the
PD is MuJoCo's joint stiffness / damping towards the same posture, computed inside mj_step).
Same dt (1 ms), same four contacts (point feet: spheres of 1 mm radius on the knee links at
0.19 m, a ground plane, no other geometry), same posture, friction 0.8, 3 rows per contact
(elliptic cone; --cone pyramidal: MuJoCo's default, 4 rows). Reported: median wall time per
step over R blocks of N steps, mean solver iterations, contacts, and with --callgrind the
instructions per step (valgrind --toggle-collect on runSteps / mj_step).

The MuJoCo model is generated in memory from the URDF (MjSpec): balanceinertia (the URDF's hip
link inertia violates the triangle inequality MuJoCo enforces), a free base, the foot spheres,
the floor; nothing is written to the project.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time


try:
    import mujoco
    import numpy as np
except ImportError as e:  # pragma: no cover
    print(f"SKIPPED: numpy or mujoco not importable ({e})")
    sys.exit(77)

LEGS = ("FR", "FL", "HR", "HL")
HIP, KNEE, KP, KD, MU, DT = -0.8, 1.6, 60.0, 1.5, 0.8, 1e-3
FOOT_R = 1e-3


def build_model(urdf, cone):
    spec = mujoco.MjSpec.from_string(open(urdf).read())
    spec.compiler.balanceinertia = True
    spec.option.timestep = DT
    spec.option.cone = (mujoco.mjtCone.mjCONE_ELLIPTIC if cone == "elliptic"
                        else mujoco.mjtCone.mjCONE_PYRAMIDAL)
    floor = spec.worldbody.add_geom()
    floor.type = mujoco.mjtGeom.mjGEOM_PLANE
    floor.size = [0, 0, 1]
    floor.friction = [MU, 0.005, 0.0001]
    for leg in LEGS:
        b = spec.body(f"{leg}_knee_link")
        g = b.add_geom()
        g.type = mujoco.mjtGeom.mjGEOM_SPHERE
        g.size = [FOOT_R, 0, 0]
        g.pos = [0, 0, -0.19]
        g.mass = 0.0
        g.friction = [MU, 0.005, 0.0001]
    for j in spec.joints:
        if j.type != mujoco.mjtJoint.mjJNT_HINGE:
            continue
        ref = HIP if j.name.endswith("abad_to_hip_j") else KNEE if j.name.endswith(
            "hip_to_knee_j") else 0.0
        j.stiffness = [KP, 0.0, 0.0]
        j.springref = ref
        j.damping = [KD, 0.0, 0.0]
    m = spec.compile()
    d = mujoco.MjData(m)
    for j in range(m.njnt):
        if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE:
            d.qpos[m.jnt_qposadr[j]] = m.qpos_spring[m.jnt_qposadr[j]]
    d.qpos[2], d.qpos[3] = 0.5, 1.0
    mujoco.mj_kinematics(m, d)
    feet = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, f"{l}_knee_link") for l in LEGS]
    lowest = min((d.xpos[b] + d.xmat[b].reshape(3, 3) @ np.array([0, 0, -0.19]))[2] for b in feet)
    d.qpos[2] -= lowest - FOOT_R
    mujoco.mj_forward(m, d)
    return m, d


def time_mujoco(m, d, steps, reps):
    mujoco.mj_step(m, d, nstep=500)  # settle on the feet
    per = []
    for _ in range(reps):
        t0 = time.perf_counter()
        mujoco.mj_step(m, d, nstep=steps)
        per.append((time.perf_counter() - t0) / steps)
    it, con, rows = [], [], []
    for _ in range(200):  # statistics, one step at a time
        mujoco.mj_step(m, d)
        it.append(int(d.solver_niter[0]))
        con.append(int(d.ncon))
        rows.append(int(d.nefc))
    return {"engine": "mujoco " + mujoco.__version__, "model": "mini_cheetah_approximate.urdf",
            "solver": ["PGS", "CG", "Newton"][int(m.opt.solver)], "dt": DT, "nv": int(m.nv),
            "median_us": 1e6 * float(np.median(per)), "min_us": 1e6 * min(per),
            "mean_iterations": float(np.mean(it)), "mean_contacts": float(np.mean(con)),
            "mean_rows": float(np.mean(rows)), "base_height": float(d.qpos[2])}


def callgrind(cmd, fn):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                        f"--toggle-collect={fn}"] + cmd, check=True, capture_output=True)
        txt = subprocess.run(["callgrind_annotate", out], capture_output=True, text=True).stdout
    mt = re.search(r"([\d,]+)\s+(\(100.0%\)\s+)?PROGRAM TOTALS", txt)
    return int(mt.group(1).replace(",", ""))


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        print(__doc__)
        return 2
    bench, urdfplus = args[0], args[1]
    opt = lambda k, dflt: args[args.index(k) + 1] if k in args else dflt
    steps, reps = int(opt("--steps", 1000)), int(opt("--reps", 7))
    cone, solver = opt("--cone", "elliptic"), opt("--solver", "admm")
    tol = opt("--tolerance", "1e-10")
    ours = json.loads(subprocess.run(
        [bench, urdfplus, "--steps", str(steps), "--reps", str(reps), "--solver", solver,
         "--tolerance", tol], check=True, capture_output=True, text=True).stdout)
    m, d = build_model(os.path.join(urdfplus, "mini_cheetah_approximate.urdf"), cone)
    theirs = time_mujoco(m, d, steps, reps)
    theirs["cone"] = cone
    if "--callgrind" in args:
        n = 200
        ours["instructions_per_step"] = callgrind(
            [bench, urdfplus, "--steps", str(n), "--reps", "1", "--solver", solver,
             "--tolerance", tol],
            "*runSteps*") / (n + 500)  # runSteps also runs the 500 settling steps
        script = (f"import sys; sys.argv=['x']; sys.path.insert(0, {os.path.dirname(__file__)!r});"
                  f"import mujoco_step_bench as b, mujoco;"
                  f"m, d = b.build_model({os.path.join(urdfplus, 'mini_cheetah_approximate.urdf')!r},"
                  f" {cone!r}); mujoco.mj_step(m, d, nstep=500); mujoco.mj_step(m, d, nstep={n})")
        theirs["instructions_per_step"] = callgrind([sys.executable, "-c", script],
                                                    "mj_step") / (n + 500)
    print(json.dumps(ours))
    print(json.dumps(theirs))
    ratio = ours["median_us"] / theirs["median_us"]
    line = (f"clusterdyn/mujoco wall ratio {ratio:.2f} (clusterdyn {ours['median_us']:.1f} us, "
            f"{ours['mean_iterations']:.1f} {solver} iterations; mujoco {theirs['median_us']:.1f} us, "
            f"{theirs['mean_iterations']:.1f} {theirs['solver']} iterations, "
            f"{theirs['mean_contacts']:.1f} contacts, {theirs['mean_rows']:.0f} rows)")
    if "instructions_per_step" in ours:
        line += (f"; instructions per step {ours['instructions_per_step']:.0f} vs "
                 f"{theirs['instructions_per_step']:.0f} "
                 f"(ratio {ours['instructions_per_step'] / theirs['instructions_per_step']:.2f})")
    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
