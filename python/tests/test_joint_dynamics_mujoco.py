"""Tree derivatives with MJCF joint dynamics (armature, springs, dampers) against MuJoCo.

Oracle: MuJoCo from PyPI reads the same MJCF text itself.
  - Fixed base (ball, hinge, slide; each with armature, damping and a spring about springref):
    MuJoCo's own finite-difference inverse-dynamics Jacobians (mjd_inverseFD of qfrc_inverse =
    M qacc + bias - qfrc_passive) against rnea_derivatives: d/dqpos (both take the tangent of
    a ball along its body-frame rotation), d/dqvel, d/dqacc = M + A.
  - Free base (damped, with armature) over the same limbs: d qacc / d qvel and d qacc / d qfrc
    by central differences of mj_forward's qacc against aba_derivatives' ddq_dv and Minv, mapped
    to clusterdyn's coordinates (v_cd = T v_mj: a free joint's [w; v_body] vs [v_world; w], and
    ddq_cd = T qacc + Tdot v_mj; docs/mjcf.md section 1).
Coordinates: q = qpos - qpos0 for hinge and slide (ref), quaternions (x, y, z, w).
"""
import numpy as np
import pytest

import clusterdyn as cd

mujoco = pytest.importorskip("mujoco", reason="the PyPI package 'mujoco' is not installed")

LIMBS = """
      <body name="upper" pos="0.1 0.02 0">
        <joint name="shoulder" type="ball" stiffness="2" damping="0.3" armature="0.02"/>
        <geom type="capsule" fromto="0 0 0 0.02 0 -0.3" size="0.04"/>
        <body name="lower" pos="0 0 -0.3">
          <joint name="elbow" axis="0 1 0.2" ref="10" springref="40" stiffness="4"
                 damping="0.2" armature="0.01"/>
          <geom type="capsule" fromto="0 0 0 0 0.02 -0.25" size="0.03"/>
          <body name="tip" pos="0 0 -0.25">
            <joint name="extend" type="slide" axis="0.1 0 1" springref="0.05" stiffness="20"
                   damping="0.5" armature="0.03"/>
            <geom type="sphere" size="0.04"/>
          </body>
        </body>
      </body>
      <body name="side" pos="-0.1 0 0">
        <joint name="yaw" axis="0 0 1" stiffness="1.5" springref="-25" damping="0.1"
               armature="0.004"/>
        <geom type="box" size="0.05 0.05 0.02" pos="-0.05 0 0"/>
      </body>"""


def xml(free):
    # Armature on the free joint: MuJoCo adds it in [v_world; w], clusterdyn in [w; v_body], so
    # clusterdyn carries the velocity product a (w x v_body) (Model::finalize, docs/mjcf.md §4).
    root = '<joint name="root" type="free" damping="0.4" armature="0.05"/>' if free else ""
    return f"""<mujoco model="jd">
  <option><flag contact="disable"/></option>
  <worldbody>
    <body name="base" pos="0.1 0 1" euler="10 -20 30">
      {root}
      <geom type="box" size="0.1 0.08 0.05"/>{LIMBS}
    </body>
  </worldbody>
</mujoco>
"""


class Pair:
    def __init__(self, tmp_path, free):
        path = tmp_path / ("jd_free.xml" if free else "jd_fixed.xml")
        path.write_text(xml(free))
        self.cdm = cd.Model.load(str(path))
        self.mjm = mujoco.MjModel.from_xml_path(str(path))
        self.mjd = mujoco.MjData(self.mjm)

    def to_cd(self, qpos, qvel):
        """clusterdyn (q, v), T (v_cd = T v_mj) and the free joint's (iw, il) velocity offsets."""
        c, m = self.cdm, self.mjm
        q, v, T = np.zeros(c.nq), np.zeros(c.nv), np.zeros((c.nv, m.nv))
        free = None
        J = mujoco.mjtJoint
        for j in range(m.njnt):
            name, t = m.joint(j).name, int(m.jnt_type[j])
            qa, da = int(m.jnt_qposadr[j]), int(m.jnt_dofadr[j])
            if t in (J.mjJNT_HINGE, J.mjJNT_SLIDE):
                iq, iv = c.position_index[name], c.velocity_index[name]
                q[iq] = qpos[qa] - m.qpos0[qa]
                T[iv, da] = 1.0
            elif t == J.mjJNT_BALL:
                iq, iv = c.position_index[name + ":qx"], c.velocity_index[name + ":wx"]
                w, x, y, z = qpos[qa:qa + 4]
                q[iq:iq + 4] = [x, y, z, w]
                T[iv:iv + 3, da:da + 3] = np.eye(3)
            else:
                ip, iq = c.position_index[name + ":px"], c.position_index[name + ":qx"]
                iw, il = c.velocity_index[name + ":wx"], c.velocity_index[name + ":vx"]
                w, x, y, z = qpos[qa + 3:qa + 7]
                q[ip:ip + 3] = qpos[qa:qa + 3]
                q[iq:iq + 4] = [x, y, z, w]
                R = np.zeros(9)
                mujoco.mju_quat2Mat(R, qpos[qa + 3:qa + 7])
                T[iw:iw + 3, da + 3:da + 6] = np.eye(3)
                T[il:il + 3, da:da + 3] = R.reshape(3, 3).T
                free = (iw, il)
        return q, T @ qvel, T, free

    def random_state(self, rng):
        m = self.mjm
        qpos = m.qpos0.copy()
        J = mujoco.mjtJoint
        for j in range(m.njnt):
            t, qa = int(m.jnt_type[j]), int(m.jnt_qposadr[j])
            if t in (J.mjJNT_HINGE, J.mjJNT_SLIDE):
                qpos[qa] += rng.uniform(-0.6, 0.6)
            else:
                off = 3 if t == J.mjJNT_FREE else 0
                qpos[qa:qa + off] += rng.uniform(-0.3, 0.3, off)
                quat = np.zeros(4)  # a rotation of at most ~1.7 rad (subQuat wraps at pi)
                axis = rng.normal(size=3)
                mujoco.mju_axisAngle2Quat(quat, axis / np.linalg.norm(axis), rng.uniform(0.2, 1.7))
                qpos[qa + off:qa + off + 4] = quat
        return qpos, rng.uniform(-1, 1, m.nv)


def rel(a, b):
    return np.abs(a - b).max() / max(1.0, np.abs(b).max())


def test_inverse_dynamics_derivatives_match_mujoco_inverse_fd(tmp_path):
    p = Pair(tmp_path, free=False)
    m, d, c = p.mjm, p.mjd, p.cdm
    assert c.nv == m.nv == 6
    rng = np.random.default_rng(11)
    for _ in range(3):
        qpos, qvel = p.random_state(rng)
        qacc = rng.uniform(-1, 1, m.nv)
        q, v, T, _ = p.to_cd(qpos, qvel)
        a = T @ qacc
        d.qpos[:], d.qvel[:], d.qacc[:] = qpos, qvel, qacc
        mujoco.mj_inverse(m, d)
        tau_mj = d.qfrc_inverse.copy()
        DfDq, DfDv, DfDa = (np.zeros((m.nv, m.nv)) for _ in range(3))
        mujoco.mjd_inverseFD(m, d, 1e-7, False, DfDq, DfDv, DfDa, None, None, None, None)
        tau, dq, dv, da = c.rnea_derivatives(q, v, a, return_tau=True)
        assert rel(tau, T @ tau_mj) < 1e-9  # passive forces and armature included
        # MuJoCo's outputs are transposed (row i: d f / d x_i); permutation T between orders.
        assert rel(dq, T @ DfDq.T @ T.T) < 1e-5
        assert rel(dv, T @ DfDv.T @ T.T) < 1e-6
        assert rel(da, T @ DfDa.T @ T.T) < 1e-6
        # the joint dynamics matter here: the rigid-body partials differ
        rigid = cd.Model.load(str(tmp_path / "jd_fixed.xml"), joint_dynamics=False)
        _, dq0, dv0, _ = rigid.rnea_derivatives(q, v, a, return_tau=True)
        assert rel(dq0, T @ DfDq.T @ T.T) > 1e-2 and rel(dv0, T @ DfDv.T @ T.T) > 1e-2


def test_forward_dynamics_derivatives_match_mujoco_qacc(tmp_path):
    p = Pair(tmp_path, free=True)
    m, d, c = p.mjm, p.mjd, p.cdm
    assert c.nv == m.nv == 12
    rng = np.random.default_rng(12)

    def qacc(qpos, qvel, qfrc):
        d.qpos[:], d.qvel[:], d.qfrc_applied[:] = qpos, qvel, qfrc
        mujoco.mj_forward(m, d)
        return d.qacc.copy()

    for _ in range(3):
        qpos, qvel = p.random_state(rng)
        frc = rng.uniform(-1, 1, m.nv)
        q, v, T, (iw, il) = p.to_cd(qpos, qvel)
        Tinv = np.linalg.inv(T)
        tau = Tinv.T @ frc  # the same power: frc . qvel = tau . v
        ddq, ddq_dq, ddq_dv, Minv = c.aba_derivatives(q, v, tau, return_ddq=True)
        # central differences of MuJoCo's qacc: exact for qfrc (linear), for qvel (quadratic)
        # up to rounding
        E = np.eye(m.nv)
        dA_dfrc = np.column_stack([(qacc(qpos, qvel, frc + E[k]) - qacc(qpos, qvel, frc - E[k]))
                                   / 2 for k in range(m.nv)])
        h = 1e-3
        dA_dvel = np.column_stack([(qacc(qpos, qvel + h * E[k], frc)
                                    - qacc(qpos, qvel - h * E[k], frc)) / (2 * h)
                                   for k in range(m.nv)])
        acc = qacc(qpos, qvel, frc)
        w, vl = v[iw:iw + 3], v[il:il + 3]
        tdot = np.zeros(c.nv)
        tdot[il:il + 3] = -np.cross(w, vl)  # d/dt (R^T) v_world
        assert rel(ddq, T @ acc + tdot) < 1e-9
        assert rel(Minv, T @ dA_dfrc @ T.T) < 1e-9
        # ddq_cd(v_cd) = T qacc(T^-1 v_cd) + tdot(v_cd)
        dtdot = np.zeros((c.nv, c.nv))
        skew = lambda x: np.array([[0, -x[2], x[1]], [x[2], 0, -x[0]], [-x[1], x[0], 0]])
        dtdot[il:il + 3, iw:iw + 3] = skew(vl)
        dtdot[il:il + 3, il:il + 3] = -skew(w)
        assert rel(ddq_dv, T @ dA_dvel @ Tinv + dtdot) < 1e-7
