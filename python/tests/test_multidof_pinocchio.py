"""The loop models with ball joints (models/cd_rsu_ankle, cd_rsu_leg, cd_delta, cd_stewart, and
cd_ups_wrist, whose independent coordinate is a ball joint: a quaternion in y) against
Pinocchio 4.1's constraintDynamics (PyPI package pin) with the same loops as rigid constraint
models (urdfplus_pinocchio.py: spherical loop -> CONTACT_3D, revolute loop -> two CONTACT_3D
along its axis): at random closed states, clusterdyn's embedded CE-ABA spanning accelerations
q_ddot equal Pinocchio's to 1e-9, and on the spherical loops (delta, Stewart: 3 unique rows each)
the multipliers of clusterdyn's cut-loop proxPV (ModelOptions::cutLoops) equal Pinocchio's contact
forces to 1e-9 (the force on the predecessor at the loop point, in P's axes; clusterdyn's rows
are in the cut constraint's frame A, P turned so that z is the loop axis: mapped back by turn()).
Tolerances relative to max(1, |expected|): the delta's rods spin with ~1e-7 kg m^2 axial
inertia, so their accelerations reach 1e7 rad/s^2 at unit torques.
Coordinates are matched by joint name (anchors_util.PinocchioMap)."""
import pathlib
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import clusterdyn as cd
from anchors_util import PinocchioMap, close

pin = pytest.importorskip("pinocchio", reason="Pinocchio (PyPI package pin) is not installed: "
                          "loop models against Pinocchio's constraintDynamics skipped")

from urdfplus_pinocchio import _floats, build  # noqa: E402

MODELS_DIR = pathlib.Path(__file__).resolve().parents[2] / "models"
NAMES = ["cd_rsu_ankle", "cd_rsu_leg", "cd_delta", "cd_stewart", "cd_ups_wrist"]
TOL = 1e-9


def random_closed_state(model, ws, path, rng):
    """Independent coordinates 0.3 rad / 0.03 m (prismatic joints: the Stewart platform's legs)
    around the reference (a quaternion of y: its 4 entries moved by 0.3, then normalized), y_dot and tau uniform in [-1, 1]; the closed spanning state from the
    loop closure. Returns (q, v, tau, spanning velocity index of each independent one)."""
    iq, iv = model.independent_indices()
    prismatic = {j.get("name") for j in ET.parse(str(path)).getroot().findall("joint")
                 if j.get("type") == "prismatic"}
    scale = np.full(model.nyq, 0.3)
    for name in prismatic:
        scale[iq == model.joint_coordinates(name)[0]] = 0.03
    y = model.reference_configuration()[iq] + scale * rng.uniform(-1, 1, model.nyq)
    for k, yname in enumerate(model.independent_position_names):  # an independent ball joint
        if yname.endswith(":qx"):
            y[k:k + 4] /= np.linalg.norm(y[k:k + 4])
    ydot, tau = rng.uniform(-1, 1, model.ny), rng.uniform(-1, 1, model.ny)
    q, v = ws.independent_to_spanning(y, ydot)
    return q, v, tau, iv


def turn(axis):
    """The rotation from a cut loop's constraint frame A to its loop frame P: cutLoopConstraints
    turns P so that A's z axis is the loop axis (Eigen's FromTwoVectors(z, axis), the smallest
    rotation; a spherical loop's default axis is x)."""
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    z = np.array([0.0, 0.0, 1.0])
    k, c = np.cross(z, a), float(z @ a)
    assert c > -1 + 1e-9, "axis opposite to z: the smallest rotation is not unique"
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + K + K @ K / (1.0 + c)


def pinocchio_dynamics(pm, cms, qp, vp, taup):
    """q_ddot and the stacked contact forces of constraintDynamics (proximal accuracy 1e-14,
    mu 1e-10, at most 500 iterations: the q_ddot comparison is the convergence check)."""
    models = pin.StdVec_RigidConstraintModel()
    for cm in cms:
        models.append(cm)
    datas = pin.StdVec_RigidConstraintData()
    for cm in cms:
        datas.append(cm.createData())
    pd = pm.createData()
    pin.initConstraintDynamics(pm, pd, models, datas)
    settings = pin.ProximalSettings(1e-14, 1e-10, 500)
    qdd = np.array(pin.constraintDynamics(pm, pd, qp, vp, taup, models, datas, settings))
    lam = np.concatenate([np.array(d.contact_force.linear) if cm.type == pin.ContactType.CONTACT_3D
                          else np.array(d.contact_force.vector) for cm, d in zip(models, datas)])
    return qdd, lam, settings


def both_sides(pin, path):
    """The file loaded embedded and cut by clusterdyn and as a Pinocchio model with its loops as
    constraint models: (emb, cut, pm, loops, cms, pmap, pmap_cut, ws, cset, cws)."""
    emb = cd.Model.load(path)
    cut = cd.Model.load(path, cut_loops=True)
    pm, loops = build(pin, path)
    cms = [cm for _, _, group in loops for cm in group]
    pmap, pmap_cut = PinocchioMap(emb, pm), PinocchioMap(cut, pm)
    ws = emb.workspace()
    cset = cut.cut_loop_constraints()
    return emb, cut, pm, loops, cms, pmap, pmap_cut, ws, cset, cset.workspace()


@pytest.mark.parametrize("name", NAMES)
def test_loops_match_pinocchio_constraint_dynamics(name):
    path = MODELS_DIR / f"{name}.urdf"
    emb, cut, pm, loops, cms, pmap, pmap_cut, ws, cset, cws = both_sides(pin, path)
    assert len(loops) == len(cset), "every <loop> of the file is a cut-loop constraint"
    axes = [_floats(lp.find("axis").get("xyz") if lp.find("axis") is not None else None,
                    [1, 0, 0]) for lp in ET.parse(str(path)).getroot().findall("loop")]
    rng = np.random.default_rng(25)
    for trial in range(4):
        q, v, tau, iv = random_closed_state(emb, ws, path, rng)
        ydd, qdd = ws.ce_aba(q, v, tau, return_qdd=True)
        tau_span = np.zeros(emb.nv)
        tau_span[iv] = tau
        qp, vp, taup = pmap.q(q), pmap.v(v), pmap.v(tau_span)
        qdd_pin, lam_pin, _ = pinocchio_dynamics(pm, cms, qp, vp, taup)
        close(qdd, pmap.v_back(qdd_pin),
              f"{name} trial {trial}: q_ddot embedded CE-ABA vs Pinocchio", TOL)
        # The cut model: the same state and spanning torques in its own coordinate order.
        qc = np.zeros(cut.nq)
        for jname in cut.joint_names:
            a, n, _, _ = cut.joint_coordinates(jname)
            ea, en, _, _ = emb.joint_coordinates(jname)
            qc[a:a + n] = q[ea:ea + en]
        vc = pmap_cut.v_back(vp)
        res = cws.prox_pv(qc, vc, pmap_cut.v_back(taup)[cut.independent_indices()[1]],
                          tolerance=1e-10, max_iterations=200,
                          on_not_converged="raise")
        close(res.qdd, pmap_cut.v_back(qdd_pin), f"{name} trial {trial}: q_ddot cut proxPV vs "
              "Pinocchio", TOL)
        if all(t == "spherical" for _, t, _ in loops):  # 3 independent rows per loop
            lam = np.concatenate([turn(axis) @ res.lam[3 * i:3 * i + 3]
                                  for i, axis in enumerate(axes)])
            close(lam, lam_pin, f"{name} trial {trial}: loop forces proxPV vs Pinocchio", TOL)
