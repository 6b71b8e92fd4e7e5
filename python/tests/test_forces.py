"""Constraint forces (clusterdyn.Forces, cdyn_forces_*) against independent oracles.

* The spanning-tree RNEA (an independent algorithm) with the loop joints' wrenches applied as
  external forces (successor +W, predecessor -W, moved from the loop frame P to the bodies)
  gives back the applied efforts plus the couplings' generalized forces: validates the loop
  wrenches, the loop frame poses and the coupling forces (K^T lambda) at once.
* Each tree joint's wrench projected on its motion subspace (the body Jacobian's column of the
  joint, local frame) equals that RNEA's generalized force on the joint (the floating base:
  S = identity, the whole wrench).
* World wrenches are the body wrenches moved by the body poses of forward kinematics.
* After CE-RNEA with CE-ABA's accelerations: the same forces as after CE-ABA.
* Couplings: joint_forces = coefficients * multiplier, and passive (G^T tau_c = 0).
"""
import gc

import numpy as np
import pytest
from conftest import REPO, random_closed_state

import clusterdyn as cd

FORCE_MODELS = ["cd_quadruped", "cd_four_bar", "cd_six_bar", "cd_differential", "cd_belt_leg",
                "cd_mimic_gripper", "cd_geared_chain"]


def act_force(T, f):
    """The wrench f (moment; force), given in frame T's coordinates about T's origin, expressed
    in the parent coordinates of T = [R p; 0 1] about the parent's origin."""
    R, p = T[:3, :3], T[:3, 3]
    return np.concatenate([R @ f[:3] + np.cross(p, R @ f[3:]), R @ f[3:]])


def body_poses(model, ws, q):
    ws.forward_kinematics(q)
    return [ws.frame_placement_matrix(model.body_names[b]) for b in range(model.nbodies)]


def loop_fext(model, forces, poses):
    """Body-frame external forces equivalent to the loop joints' wrenches."""
    fext = np.zeros((model.nbodies, 6))
    L = forces.loop_wrenches()
    for k in range(model.nloops):
        info = forces.loop_info(k)
        pre, suc = info["predecessor"], info["successor"]
        f_pre = act_force(info["placement"], L[k])  # on the successor, predecessor coordinates
        f_world = act_force(poses[pre], f_pre) if pre >= 0 else f_pre
        if pre >= 0:
            fext[pre] -= f_pre
        if suc >= 0:
            fext[suc] += act_force(np.linalg.inv(poses[suc]), f_world)
    return fext


def coupling_forces(model, forces):
    """Sum over the relations of their generalized forces on their joints (nv,)."""
    tc = np.zeros(model.nv)
    for r in range(model.nrelations):
        info = forces.coupling_info(r)
        mult, jf = forces.coupling(r)
        np.testing.assert_allclose(jf, info["coefficients"] * mult, rtol=1e-12, atol=1e-12)
        tc[list(info["velocity_indices"])] += jf
    return tc


def check_forces(model, ws, forces, q, v, qdd, tau_span):
    scale = 1.0 + np.abs(tau_span).max()
    poses = body_poses(model, ws, q)
    Wb = forces.joint_wrenches(ws, "body")
    assert Wb.shape == (model.nbodies, 6) and Wb.dtype == np.float64
    # The Newton-Euler oracle: RNEA with the loop forces external.
    tau_rnea = ws.rnea(q, v, qdd, fext=loop_fext(model, forces, poses))
    tc = coupling_forces(model, forces)
    np.testing.assert_allclose(tau_rnea, tau_span + tc, atol=1e-9 * scale)
    # Passive constraints do no virtual work on the independent motions.
    G, _ = ws.constraint_matrices(q, v)
    np.testing.assert_allclose(G.T @ tc, 0, atol=1e-9 * scale)
    # Each joint transmits its generalized force.
    for b in range(model.nbodies):
        _, _, iv, nvj = model.joint_coordinates(b)
        S = ws.compute_frame_jacobian(q, model.body_names[b], "local")[:, iv:iv + nvj]
        np.testing.assert_allclose(S.T @ Wb[b], tau_rnea[iv:iv + nvj], atol=1e-9 * scale,
                                   err_msg=f"joint {model.joint_names[b]}")
    # World frame: the body wrench moved by the body pose (poses of the workspace's last call).
    ws.forward_kinematics(q)
    Ww = forces.joint_wrenches(ws, "world")
    for b in range(model.nbodies):
        np.testing.assert_allclose(Ww[b], act_force(poses[b], Wb[b]), atol=1e-12 * scale)
    return Wb


@pytest.mark.parametrize("name", FORCE_MODELS)
def test_forces_after_ce_aba_and_ce_rnea(name):
    model = cd.Model.load(REPO / "models" / f"{name}.urdf")
    ws = model.workspace()
    rng = np.random.default_rng(7)
    with model.forces() as forces, model.forces() as forces2:
        for _ in range(3):
            q, v = random_closed_state(model, ws, rng)
            tau = rng.uniform(-1, 1, model.ny)
            ydd, qdd = ws.ce_aba(q, v, tau, return_qdd=True)
            assert forces.after_ce_aba(ws, tau) is forces
            _, vi = model.independent_indices()
            tau_span = np.zeros(model.nv)
            tau_span[vi] = tau
            W1, L1 = forces.joint_wrenches(ws), forces.loop_wrenches()
            C1 = [forces.coupling(r)[0] for r in range(model.nrelations)]
            check_forces(model, ws, forces, q, v, qdd, tau_span)
            # CE-RNEA at the same state and accelerations: the same forces.
            np.testing.assert_allclose(ws.ce_rnea(q, v, ydd), tau, atol=1e-9)
            forces2.after_ce_rnea(ws)
            s = 1.0 + np.abs(W1).max()
            np.testing.assert_allclose(forces2.joint_wrenches(ws), W1, atol=1e-9 * s)
            np.testing.assert_allclose(forces2.loop_wrenches(), L1, atol=1e-9 * s)
            np.testing.assert_allclose(forces2.couplings(), C1, atol=1e-9 * s)
            # Efforts on every spanning joint (G^T tau through CE-ABA).
            tau_s = rng.uniform(-1, 1, model.nv)
            _, qdd_s = ws.ce_aba_spanning_forces(q, v, tau_s, return_qdd=True)
            forces.after_ce_aba(ws, tau_s, spanning=True)
            check_forces(model, ws, forces, q, v, qdd_s, tau_s)
    ws.close()
    model.close()


def test_loop_rows_and_info():
    model = cd.Model.load(REPO / "models" / "cd_six_bar.urdf")
    ws = model.workspace()
    q, v = random_closed_state(model, ws, np.random.default_rng(3))
    tau = [0.4]
    ws.ce_aba(q, v, tau)
    forces = model.forces().after_ce_aba(ws, tau)
    L = forces.loop_wrenches()
    assert L.shape == (2, 6) and model.loop_names == ("loop_a", "loop_b")
    for k, name in enumerate(model.loop_names):
        info = forces.loop_info(name)
        assert info["name"] == name and info["nrows"] == 5
        assert -1 <= info["predecessor"] < model.nbodies and 0 <= info["successor"]
        P = info["placement"]
        np.testing.assert_allclose(P[:3, :3] @ P[:3, :3].T, np.eye(3), atol=1e-12)
        np.testing.assert_array_equal(P[3], [0, 0, 0, 1])
        # Revolute loop: 2 rotational rows (the wrench has no moment about the loop axis, so
        # they carry the whole moment), then the 3 force components in P's axes.
        rows = forces.loop_rows(name)
        np.testing.assert_array_equal(rows, forces.loop_rows(k))
        np.testing.assert_allclose(rows[2:], L[k, 3:], atol=1e-12)
        np.testing.assert_allclose(np.linalg.norm(rows[:2]), np.linalg.norm(L[k, :3]),
                                   atol=1e-12)
        assert np.abs(rows).max() > 1e-3
    with pytest.raises(IndexError, match="loop index 2 out of range"):
        forces.loop_rows(2)
    with pytest.raises(KeyError, match="no loop named 'nope'"):
        model.loop_info("nope")
    forces.close()


def test_gear_relation():
    """A gear ratio r: the rotor torque is the link torque / -r (coefficients (r, -1))."""
    model = cd.Model.load(REPO / "models" / "cd_quadruped.urdf")
    ws = model.workspace()
    q, v = random_closed_state(model, ws, np.random.default_rng(11))
    tau = np.random.default_rng(12).uniform(-1, 1, model.ny)
    ws.ce_aba(q, v, tau)
    forces = model.forces().after_ce_aba(ws, tau)
    info = forces.coupling_info("lf_knee_gear")
    assert info["velocity_names"] == ("lf_knee_joint", "lf_knee_rotor_joint")
    ratio, minus_one = info["coefficients"]
    assert ratio > 1 and minus_one == -1
    mult, jf = forces.coupling("lf_knee_gear")
    assert abs(mult) > 1e-6
    np.testing.assert_allclose(jf[0], -ratio * jf[1], rtol=1e-12)
    assert len(forces.couplings()) == model.nrelations == 12
    with pytest.raises(IndexError, match="coupling index 12 out of range"):
        forces.coupling(12)


def test_forces_errors():
    model = cd.Model.load(REPO / "models" / "cd_four_bar.urdf")
    other = cd.Model.load(REPO / "models" / "cd_six_bar.urdf")
    ws, ws_other = model.workspace(), other.workspace()
    forces = model.forces()
    with pytest.raises(ValueError, match=r"tau must have shape \(1,\), got \(3,\)"):
        forces.after_ce_aba(ws, np.zeros(3))
    with pytest.raises(ValueError, match=r"tau must have shape \(3,\)"):
        forces.after_ce_aba(ws, np.zeros(1), spanning=True)
    with pytest.raises(TypeError, match="real numbers"):
        forces.after_ce_aba(ws, np.zeros(1, dtype=complex))
    with pytest.raises(cd.ClusterdynError) as e:
        forces.after_ce_aba(ws, [np.nan])
    assert e.value.status == cd.ERR_NON_FINITE
    with pytest.raises(cd.ClusterdynError) as e:
        forces.after_ce_rnea(ws_other)
    assert e.value.status == cd.ERR_WORKSPACE_MISMATCH and "another model" in e.value.message
    # The forces need the workspace's last call to be the matching dynamics call.
    with pytest.raises(cd.ClusterdynError) as e:
        forces.after_ce_aba(ws, [0.0])
    assert e.value.status == cd.ERR_INVALID_ARGUMENT and "last call" in e.value.message
    with pytest.raises(TypeError, match="Workspace"):
        forces.joint_wrenches(object())
    with pytest.raises(ValueError, match="frame must be one of"):
        forces.joint_wrenches(ws, "loop")
    # Lifetimes: the model refuses to close while Forces are open; closed Forces refuse calls.
    with pytest.raises(cd.ClusterdynError, match="Forces object"):
        model.close()
    forces.close()
    forces.close()
    with pytest.raises(ValueError, match="closed"):
        forces.loop_wrenches()
    ws.close()
    model.close()
    with other.forces() as f2:
        assert f2.loop_wrenches().shape == (2, 6)
    # A Forces object dropped without close() is freed by the garbage collector first.
    f3 = other.forces()
    del f3
    gc.collect()
    assert other._nforces == 0
    ws_other.close()
    other.close()  # the Forces object left by the with block is closed
