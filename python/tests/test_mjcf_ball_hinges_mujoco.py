"""MJCF ball joints that the cluster builder replaces by three hinges (docs/mjcf.md section 3)
against MuJoCo, which keeps the balls: the hinges carry each ball's damper and spring together
(MuJoCo's -d w - k subQuat(q, qpos0) on the ball is J^T (-d J t_dot - k r) on the hinges,
Model::ballHinges). cd_rod_leg (its ball's damping 0.01) and a variant with a stiffer damper and
a spring; test_mjcf_public_robots.py applies the same check to Cassie's achilles rods.
"""
import os

import numpy as np
import pytest

import clusterdyn as cd

mujoco = pytest.importorskip("mujoco", reason="the PyPI package 'mujoco' is not installed")

MODELS = os.path.join(os.path.dirname(__file__), "..", "..", "models")
TOL = 1e-9


def model_path(name):
    return os.path.join(MODELS, name)


def _rotation(axis, t):
    """exp([axis]x t) (Rodrigues), axis a unit vector."""
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(t) * K + (1 - np.cos(t)) * K @ K


def _ball_hinge_axes(c, w, mjm, ball):
    """b1, b2, a (the ball's frame) of the hinges the builder put in place of MuJoCo's ball joint
    `ball`: the child body's rotation relative to its parent, one hinge angle at 1 rad and the
    other two at 0, is exp(b t) after the one at all three 0."""
    body = int(mjm.jnt_bodyid[mjm.joint(ball).id])
    child, parent = mjm.body(body).name, mjm.body(int(mjm.body_parentid[body])).name
    names = [ball + s for s in (":swing1", ":swing2", ":spin")]
    axes = []
    for name in names:
        rel = []
        for t in (0.0, 1.0):
            q = c.reference_configuration().copy()
            q[[c.position_index[n] for n in names]] = 0.0
            q[c.position_index[name]] = t
            w.forward_kinematics(q)
            Rp = w.frame_placement(parent)[0] if int(mjm.body_parentid[body]) else np.eye(3)
            rel.append(Rp.T @ w.frame_placement(child)[0])
        E = rel[0].T @ rel[1]  # exp(b 1)
        axes.append(np.array([E[2, 1] - E[1, 2], E[0, 2] - E[2, 0], E[1, 0] - E[0, 1]])
                    / (2 * np.sin(1.0)))
    return axes


def _mujoco_state(c, mjm, q, v, hinge_axes):
    """MuJoCo's qpos, P (qvel = P v) and Pdot v of clusterdyn's spanning state (q, v) on a model
    whose balls in hinge_axes are three hinges each (the rest: hinges, slides, balls by name):
    the hinges compose into the ball's quaternion exp(b1 t1) exp(b2 t2) exp(a t3), its angular
    velocity is w = J t_dot, J = [R3^T R2^T b1, R3^T b2, a], and w_dot = J t_ddot + J_dot t_dot."""
    P, pdot_v, qpos = np.zeros((mjm.nv, c.nv)), np.zeros(mjm.nv), mjm.qpos0.copy()
    J_ = mujoco.mjtJoint
    for j in range(mjm.njnt):
        name, qa, da = mjm.joint(j).name, mjm.jnt_qposadr[j], mjm.jnt_dofadr[j]
        kind = int(mjm.jnt_type[j])
        if kind in (int(J_.mjJNT_HINGE), int(J_.mjJNT_SLIDE)):
            qpos[qa] += q[c.position_index[name]]
            P[da, c.velocity_index[name]] = 1.0
        elif kind == int(J_.mjJNT_BALL) and name in hinge_axes:
            b1, b2, a = hinge_axes[name]
            names = [name + s for s in (":swing1", ":swing2", ":spin")]
            it = [c.velocity_index[n] for n in names]
            t, td = q[[c.position_index[n] for n in names]], v[it]
            R2, R3 = _rotation(b2, t[1]), _rotation(a, t[2])
            Jb = np.column_stack([R3.T @ R2.T @ b1, R3.T @ b2, a])
            u1dot = -td[2] * np.cross(a, Jb[:, 0]) - td[1] * R3.T @ np.cross(b2, R2.T @ b1)
            u2dot = -td[2] * np.cross(a, Jb[:, 1])
            quat = np.zeros(4)
            mujoco.mju_mat2Quat(quat, (_rotation(b1, t[0]) @ R2 @ R3).flatten())
            qpos[qa:qa + 4] = quat
            P[da:da + 3, it] = Jb
            pdot_v[da:da + 3] = u1dot * td[0] + u2dot * td[1]
        elif kind == int(J_.mjJNT_BALL):  # kept: (x y z w) -> (w x y z), w alike
            iq, iv = c.position_index[name + ":qx"], c.velocity_index[name + ":wx"]
            qpos[qa:qa + 4] = [q[iq + 3], *q[iq:iq + 3]]
            P[da:da + 3, iv:iv + 3] = np.eye(3)
        else:
            raise AssertionError(f"joint {name}: free joints are not mapped here")
    return qpos, P, pdot_v


def check_balls_as_hinges_against_mujoco(path, balls, y_range, draws, seed, min_closed):
    """The model of `path` with its ball joints `balls` replaced by three hinges each, joint
    dynamics loaded, against MuJoCo keeping the balls, at closed states from our closure
    (y = y_ref (+) e, |e| <= y_range): MuJoCo's equality residual efc_pos is 0 and its efc_J
    annihilates P G; the passive forces tau_p (nle without minus with the joint dynamics) are
    P^T qfrc_passive (the balls' dampers and springs J^T tau_ball on the hinges); G^T P^T M_mj
    P G is the cluster mass matrix; CE-ABA mapped to MuJoCo's coordinates is the dense solve
    with MuJoCo's M, bias and passive forces (the hinges' forces as the balls' torques J^-T tau):
    qacc = P (G ydd + g) + Pdot v, qacc_mj = Gm (Gm^T M Gm)^-1 Gm^T (f - bias + passive - M gm) +
    gm. (mj_forward's own qacc is not the oracle: MuJoCo's equality constraints are soft.)
    Returns (closed states, worst relative CE-ABA error, largest |qfrc_passive| on the balls)."""
    c = cd.Model.load(path)
    rigid = cd.Model.load(path, joint_dynamics=False)
    assert list(rigid.position_names) == list(c.position_names)
    w, wr = c.workspace(), rigid.workspace()
    mjm = mujoco.MjModel.from_xml_path(path)
    mjd = mujoco.MjData(mjm)
    axes = {b: _ball_hinge_axes(c, w, mjm, b) for b in balls}
    for b1, b2, a in axes.values():
        assert np.abs(np.cross(b1, b2) - a).max() < 1e-12 and abs(b1 @ a) < 1e-12
    ball_dofs = [int(mjm.jnt_dofadr[mjm.joint(b).id]) + k for b in balls for k in range(3)]
    y_ref, _ = w.spanning_to_independent(c.reference_configuration(), np.zeros(c.nv))
    rng = np.random.default_rng(seed)
    worst, closed, ball_passive = 0.0, 0, 0.0
    for _ in range(draws):
        y = w.integrate_independent(y_ref, rng.uniform(-y_range, y_range, c.ny), 1.0)
        try:
            q, v = w.independent_to_spanning(y, rng.uniform(-1, 1, c.ny),
                                             q_guess=c.reference_configuration())
        except cd.ClusterdynError:
            continue  # a draw the closure cannot reach (a rod too short for the lever)
        closed += 1
        qpos, P, pdot_v = _mujoco_state(c, mjm, q, v, axes)
        mjd.qpos[:], mjd.qvel[:] = qpos, P @ v
        mujoco.mj_forward(mjm, mjd)
        M = np.zeros((mjm.nv, mjm.nv))
        mujoco.mj_fullM(mjm, mjd, M)
        G, g = w.constraint_matrices(q, v)
        Gm, gm = P @ G, P @ g + pdot_v
        rows = [i for i in range(mjd.nefc)
                if mjd.efc_type[i] == mujoco.mjtConstraint.mjCNSTR_EQUALITY]
        efc_J = mjd.efc_J.reshape(mjd.nefc, mjm.nv)[rows]
        assert np.abs(efc_J @ Gm).max() < 1e-9 * max(1.0, np.abs(Gm).max())
        assert np.abs(mjd.efc_pos[rows]).max() < 1e-9  # closed
        tau_p = wr.nonlinear_effects(q, v) - w.nonlinear_effects(q, v)
        passive = mjd.qfrc_passive.copy()
        assert np.abs(tau_p - P.T @ passive).max() < TOL * max(1.0, np.abs(passive).max())
        ball_passive = max(ball_passive, np.abs(passive[ball_dofs]).max())
        H = w.cluster_mass_matrix(q)
        assert np.abs(Gm.T @ M @ Gm - H).max() < TOL * max(1.0, np.abs(H).max())
        tau = rng.uniform(-0.5, 0.5, c.ny)
        ydd = w.ce_aba(q, v, tau)
        qacc = P @ (G @ ydd + g) + pdot_v
        tau_spanning = np.zeros(c.nv)
        tau_spanning[[c.velocity_index[n] for n in c.independent_velocity_names]] = tau
        f = np.linalg.lstsq(P.T, tau_spanning, rcond=None)[0]  # P^T f = tau_spanning
        assert np.abs(P.T @ f - tau_spanning).max() < 1e-12 * max(1.0, np.abs(tau).max())
        rhs = Gm.T @ (f - mjd.qfrc_bias + passive - M @ gm)
        qacc_mj = Gm @ np.linalg.solve(Gm.T @ M @ Gm, rhs) + gm
        worst = max(worst, np.abs(qacc - qacc_mj).max() / max(1.0, np.abs(qacc_mj).max()))
    assert closed >= min_closed
    assert worst < 1e-8
    return closed, worst, ball_passive


def test_ball_as_three_hinges_matches_mujoco():
    """cd_rod_leg: every hinge of its loop turns about y, so the builder replaces the rod's ball
    joint (damping 0.01) by three hinges rod_ball:swing1, :swing2 (dependent) and :spin
    (independent) (docs/mjcf.md section 3), which carry the ball's damper together."""
    path = model_path("cd_rod_leg.xml")
    c = cd.Model.load(path)
    assert (c.ny, c.nyq) == (3, 3)
    assert list(c.independent_velocity_names) == ["hip_pitch", "knee_motor", "rod_ball:spin"]
    b1, b2, a = _ball_hinge_axes(c, c.workspace(), mujoco.MjModel.from_xml_path(path), "rod_ball")
    assert abs(abs(a @ np.array([-0.01, -0.06, -0.32])) / np.linalg.norm([0.01, 0.06, 0.32])
               - 1) < 1e-9  # the spin is about the rod
    _, _, ball_passive = check_balls_as_hinges_against_mujoco(path, ["rod_ball"], 0.3, 10, 21, 6)
    assert ball_passive > 1e-3  # the ball's damper acts


def test_ball_as_three_hinges_with_damper_and_spring_matches_mujoco(tmp_path):
    """cd_rod_leg with a stiffer damper and a spring on the ball: MuJoCo's -d w - k subQuat(q,
    qpos0) on the ball is J^T (-d J t_dot - k r) on the hinges, and the dynamics agree."""
    text = open(model_path("cd_rod_leg.xml")).read()
    ball = '<joint name="rod_ball" type="ball" damping="0.01"/>'
    assert ball in text
    path = tmp_path / "rod_leg_spring.xml"
    path.write_text(text.replace(ball, '<joint name="rod_ball" type="ball" damping="0.3" '
                                       'stiffness="0.8"/>'))
    _, _, ball_passive = check_balls_as_hinges_against_mujoco(str(path), ["rod_ball"], 0.3, 10,
                                                              22, 6)
    assert ball_passive > 0.05
