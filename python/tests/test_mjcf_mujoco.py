"""MJCF reader against MuJoCo on the same files (docs/mjcf.md).

Oracle: MuJoCo from PyPI reads each MJCF file itself. Compared, to 1e-9:
  - mj_fullM (armature included) vs the spanning-tree mass matrix (crba),
  - qfrc_bias - qfrc_passive vs nonlinear_effects (C(q, v) v + g - tau_p),
  - qacc of mj_forward on tree models vs aba, with <option gravity>,
  - xpos / xquat of every body vs clusterdyn's frame placements,
  - the efc_J rows of connect / weld equalities vs the cut-loop constraint Jacobian.
Coordinates: clusterdyn q = qpos - qpos0 for hinge and slide joints (ref), quaternions are
(x, y, z, w) instead of (w, x, y, z), and a free joint's velocity is [w; v] in the body frame
instead of [v (world); w (body)]; the map v_cd = T v_mj below converts.
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


class Pair:
    """A clusterdyn model (spanning tree numbering of its cluster model) and MuJoCo's."""

    def __init__(self, path, cut_loops=False, xml=None):
        self.cdm = cd.Model.load(path, cut_loops=cut_loops)
        self.mjm = mujoco.MjModel.from_xml_path(path)
        self.mjd = mujoco.MjData(self.mjm)
        self.ws = self.cdm.workspace()

    def joints(self):
        m = self.mjm
        for j in range(m.njnt):
            yield m.joint(j).name, int(m.jnt_type[j]), int(m.jnt_qposadr[j]), int(m.jnt_dofadr[j])

    def to_cd(self, qpos, qvel):
        """clusterdyn (q, v) and T (nv_cd, nv_mj) with v_cd = T v_mj, and Tdot v_mj."""
        c, m = self.cdm, self.mjm
        q, v = np.zeros(c.nq), np.zeros(c.nv)
        T = np.zeros((c.nv, m.nv))
        tdot = np.zeros(c.nv)
        J = mujoco.mjtJoint
        for name, t, qa, da in self.joints():
            if t in (J.mjJNT_HINGE, J.mjJNT_SLIDE):
                iq, iv = c.position_index[name], c.velocity_index[name]
                q[iq] = qpos[qa] - m.qpos0[qa]
                v[iv] = qvel[da]
                T[iv, da] = 1.0
            elif t == J.mjJNT_BALL:
                iq, iv = c.position_index[name + ":qx"], c.velocity_index[name + ":wx"]
                w, x, y, z = qpos[qa:qa + 4]
                q[iq:iq + 4] = [x, y, z, w]
                v[iv:iv + 3] = qvel[da:da + 3]
                T[iv:iv + 3, da:da + 3] = np.eye(3)
            else:  # free (an unnamed one: clusterdyn's generated name, the only free joint)
                if not name:
                    name = next(n[:-3] for n in c.position_names if n.endswith(":px"))
                ip, iq = c.position_index[name + ":px"], c.position_index[name + ":qx"]
                iw, il = c.velocity_index[name + ":wx"], c.velocity_index[name + ":vx"]
                w, x, y, z = qpos[qa + 3:qa + 7]
                q[ip:ip + 3] = qpos[qa:qa + 3]
                q[iq:iq + 4] = [x, y, z, w]
                R = np.zeros(9)
                mujoco.mju_quat2Mat(R, qpos[qa + 3:qa + 7])
                R = R.reshape(3, 3)
                T[iw:iw + 3, da + 3:da + 6] = np.eye(3)
                T[il:il + 3, da:da + 3] = R.T
                v[iw:iw + 3] = qvel[da + 3:da + 6]
                v[il:il + 3] = R.T @ qvel[da:da + 3]
                tdot[il:il + 3] = -np.cross(v[iw:iw + 3], v[il:il + 3])
        return q, v, T, tdot

    def random_state(self, rng, scale=0.7):
        m = self.mjm
        qpos, qvel = m.qpos0.copy(), rng.uniform(-1, 1, m.nv)
        J = mujoco.mjtJoint
        for name, t, qa, da in self.joints():
            if t in (J.mjJNT_HINGE, J.mjJNT_SLIDE):
                qpos[qa] += rng.uniform(-scale, scale)
            else:
                off = 3 if t == J.mjJNT_FREE else 0
                if off:
                    qpos[qa:qa + 3] += rng.uniform(-0.5, 0.5, 3)
                quat = rng.normal(size=4)
                qpos[qa + off:qa + off + 4] = quat / np.linalg.norm(quat)
        return qpos, qvel

    def mujoco_at(self, qpos, qvel):
        d = self.mjd
        d.qpos[:], d.qvel[:] = qpos, qvel
        mujoco.mj_forward(self.mjm, d)
        M = np.zeros((self.mjm.nv, self.mjm.nv))
        mujoco.mj_fullM(self.mjm, d, M)
        return M, d.qfrc_bias.copy()


BUNDLED = [("cd_four_bar.xml", False), ("cd_geared_leg.xml", False), ("cd_rod_leg.xml", True),
           ("cd_rod_hip.xml", False)]


@pytest.mark.parametrize("name,cut", BUNDLED)
def test_mass_matrix_bias_and_poses_match_mujoco(name, cut):
    p = Pair(model_path(name), cut_loops=cut)
    rng = np.random.default_rng(3)
    c, w = p.cdm, p.ws
    for _ in range(4):
        qpos, qvel = p.random_state(rng)
        M_mj, bias_mj = p.mujoco_at(qpos, qvel)
        q, v, T, tdot = p.to_cd(qpos, qvel)
        H = w.crba(q)
        # armature is in H, the passive forces in nle (docs/mjcf.md §4)
        assert np.abs(T.T @ H @ T - M_mj).max() < TOL * max(1.0, np.abs(M_mj).max())
        bias = T.T @ (w.nonlinear_effects(q, v) + H @ tdot)
        bias_mj = bias_mj - p.mjd.qfrc_passive
        assert np.abs(bias - bias_mj).max() < TOL * max(1.0, np.abs(bias_mj).max())
        w.forward_kinematics(q)
        for b in range(1, p.mjm.nbody):
            R, x = w.frame_placement(p.mjm.body(b).name)
            assert np.abs(x - p.mjd.xpos[b]).max() < TOL
            assert np.abs(R - p.mjd.xmat[b].reshape(3, 3)).max() < TOL


def closed_states(path, rng, n, scale=0.5):
    """Closed hinge configurations (name -> clusterdyn q) from the embedded model."""
    ws = cd.Model.load(path).workspace()
    m = ws.model
    out = []
    for k in range(n):
        y = np.zeros(m.ny) if k == 0 else rng.uniform(-scale, scale, m.ny)
        q, _ = ws.independent_to_spanning(y, np.zeros(m.ny))
        out.append({name: q[m.position_index[name]] for name in m.position_names})
    return out


def equality_rows_vs_cut_loop(p, closed, body1):
    """At a closed configuration: MuJoCo's connect / weld rows (efc_J) and the cut-loop rows K
    (nu = v_A - A_X_B v_B in A's axes, A = the predecessor frame P), both over the cut model's
    independent velocities y (efc_J T^-1 G, v_cd = G ydot; G embeds couplings and mimics), and
    the rotation of body1's frame."""
    c, m, d = p.cdm, p.mjm, p.mjd
    qpos = m.qpos0.copy()
    for name, t, qa, da in p.joints():
        qpos[qa] += closed[name]
    p.mujoco_at(qpos, np.zeros(m.nv))
    q, _, T, _ = p.to_cd(qpos, np.zeros(m.nv))
    K, _ = c.cut_loop_constraints().workspace().jacobian(q)
    G, _ = p.ws.constraint_matrices(q, np.zeros(c.nv))
    loop_rows = [i for i in range(d.nefc)
                 if d.efc_type[i] == mujoco.mjtConstraint.mjCNSTR_EQUALITY
                 and int(m.eq_type[d.efc_id[i]]) in (int(mujoco.mjtEq.mjEQ_CONNECT),
                                                 int(mujoco.mjtEq.mjEQ_WELD))]
    efc = d.efc_J.reshape(d.nefc, m.nv)[loop_rows] @ np.linalg.inv(T) @ G
    p.ws.forward_kinematics(q)
    R1, _ = p.ws.frame_placement(body1)
    return efc, K, R1


def test_four_bar_connect_rows_match_mujoco_efc_j():
    """efc_J of a connect = J(body1, anchor1) - J(body2, anchor2), world axes = R_P K at every
    closed configuration (P = body1's anchor frame, axes of body1)."""
    path = model_path("cd_four_bar.xml")
    p = Pair(path, cut_loops=True)
    for closed in closed_states(path, np.random.default_rng(5), 4):
        efc, K, R1 = equality_rows_vs_cut_loop(p, closed, "coupler")
        assert efc.shape == (3, p.cdm.ny)
        assert np.abs(efc - R1 @ K).max() < TOL


def test_embedded_four_bar_equals_urdf_twin():
    """The same mechanism as URDF+ (revolute <loop>) and as MJCF (<connect>): identical
    cluster mass matrix, bias and CE-ABA."""
    a = cd.Model.load(model_path("cd_four_bar.urdf")).workspace()
    b = cd.Model.load(model_path("cd_four_bar.xml")).workspace()
    assert a.model.ny == b.model.ny == 1
    for crank in (0.0, 0.4, -1.1):
        y = np.array([crank])
        qa, _ = a.independent_to_spanning(y, np.zeros(1))
        qb, _ = b.independent_to_spanning(y, np.zeros(1))
        assert np.abs(qa - qb).max() < TOL
        va = a.independent_to_spanning(y, np.array([0.8]))[1]
        assert np.abs(a.cluster_mass_matrix(qa) - b.cluster_mass_matrix(qb)).max() < TOL
        assert np.abs(a.cluster_bias(qa, va) - b.cluster_bias(qb, va)).max() < TOL
        tau = np.array([0.3])
        assert np.abs(a.ce_aba(qa, va, tau) - b.ce_aba(qb, va, tau)).max() < TOL


WELD_XML = """
<mujoco model="weld_loop">
  <compiler angle="radian"/>
  <worldbody>
    <body name="a1">
      <joint name="ja1" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02"/>
      <body name="a2" pos="0.3 0 0" euler="0 0.8 0">
        <joint name="ja2" axis="0 1 0"/>
        <geom type="box" pos="0.1 0 0" size="0.1 0.02 0.02"/>
        <body name="a3" pos="0.2 0 0" euler="0 0.3 0">
          <joint name="ja3" axis="0 1 0"/>
          <geom type="sphere" pos="0.05 0 0" size="0.03"/>
        </body>
      </body>
    </body>
    <body name="b1" pos="0.45 0 0" euler="0 -0.6 0">
      <joint name="jb1" axis="0 1 0"/>
      <geom type="cylinder" fromto="0 0 0 0.25 0 0" size="0.02"/>
    </body>
  </worldbody>
  <equality>
    <weld name="tip_weld" body1="a3" body2="b1" anchor="0.25 0 0" torquescale="0.7"/>
  </equality>
</mujoco>
"""


def test_weld_rows_match_mujoco_efc_j(tmp_path):
    """weld -> fixed loop. MuJoCo's rows at a closed configuration: [J_p(1) - J_p(2) (world);
    0.5 torquescale R2^T (w1 - w2)], i.e. [R_P K_lin; 0.5 ts K_ang] (A = P = S at closure,
    and the relative pose of qpos0 gives P the axes of body2)."""
    path = tmp_path / "weld_loop.xml"
    path.write_text(WELD_XML)
    p = Pair(str(path), cut_loops=True)
    for closed in closed_states(str(path), np.random.default_rng(2), 4):
        # P = body1's frame turned by the relative pose of qpos0: its axes are body2's
        efc, K, R_P = equality_rows_vs_cut_loop(p, closed, "b1")
        assert efc.shape == (6, p.cdm.ny)
        assert np.abs(efc[:3] - R_P @ K[3:]).max() < TOL
        assert np.abs(efc[3:] - 0.5 * 0.7 * K[:3]).max() < TOL


def test_passive_parameters_mean_what_mujoco_computes():
    """The mapping passiveJointModel uses (docs/mjcf.md §4): MuJoCo's qfrc_passive of the
    geared leg = -k (q - (springref - ref)) - d v in clusterdyn coordinates (hinge springref and
    ref in degrees here), with k, springref, ref, d as written in the file. The C++ function
    passiveForces is checked against this formula and its potential in test_mjcf_parser.cpp."""
    p = Pair(model_path("cd_geared_leg.xml"))
    m, d = p.mjm, p.mjd
    deg = np.pi / 180
    spring = {"hip_roll": (2.0, 5 * deg - 0.0), "knee": (1.0, -30 * deg - (-20 * deg))}
    damping = {"hip_rotor_joint": 0.001, "knee_rotor_joint": 0.001, "root": 0.0}
    rng = np.random.default_rng(8)
    for _ in range(3):
        qpos, qvel = p.random_state(rng)
        p.mujoco_at(qpos, qvel)
        q, v, T, _ = p.to_cd(qpos, qvel)
        for name, t, qa, da in p.joints():
            if t == mujoco.mjtJoint.mjJNT_FREE:
                assert np.abs(d.qfrc_passive[da:da + 6]).max() == 0.0
                continue
            k, rest = spring.get(name, (0.0, 0.0))
            c = damping.get(name, 0.02)  # the file's default joint damping
            iq, iv = p.cdm.position_index[name], p.cdm.velocity_index[name]
            expect = -k * (q[iq] - rest) - c * v[iv]
            assert abs(d.qfrc_passive[da] - expect) < TOL


def test_site_connect_matches_body_connect(tmp_path):
    """<connect site1 site2> (sites drawn at the pin) loads as the body-anchor connect: the
    same loop rows as MuJoCo's efc_J at closed configurations."""
    text = open(model_path("cd_four_bar.xml")).read()
    text = text.replace('<joint name="coupler_joint" axis="0 1 0"/>',
                        '<joint name="coupler_joint" axis="0 1 0"/>\n'
                        '        <site name="pin_c" pos="0.28 0 0"/>')
    text = text.replace('<joint name="rocker_joint" axis="0 1 0" range="-1.5 1.5"/>',
                        '<joint name="rocker_joint" axis="0 1 0" range="-1.5 1.5"/>\n'
                        '      <site name="pin_r" pos="0.22 0 0"/>')
    text = text.replace('body1="coupler" body2="rocker" anchor="0.28 0 0"',
                        'site1="pin_c" site2="pin_r"')
    assert 'site1="pin_c"' in text
    path = tmp_path / "four_bar_sites.xml"
    path.write_text(text)
    p = Pair(str(path), cut_loops=True)
    for closed in closed_states(str(path), np.random.default_rng(6), 3):
        efc, K, R1 = equality_rows_vs_cut_loop(p, closed, "coupler")
        assert efc.shape == (3, p.cdm.ny)
        assert np.abs(efc - R1 @ K).max() < TOL


def test_from_string_reads_mjcf_by_root_element():
    text = open(model_path("cd_four_bar.xml")).read()
    a = cd.Model.from_string(text)
    b = cd.Model.load(model_path("cd_four_bar.xml"))
    assert (a.nq, a.nv, a.ny) == (b.nq, b.nv, b.ny) == (3, 3, 1)
    assert a.independent_velocity_names == ("crank_joint",)


TREE_XML = """<mujoco model="passive_tree">
  <compiler angle="radian"/>
  <option gravity="0.3 -1.2 -7.5"><flag contact="disable"/></option>
  <default><joint armature="0.02" damping="0.15"/></default>
  <worldbody>
    <body name="base" pos="0 0 1">
      <freejoint name="root"/>
      <inertial pos="0.01 0.02 0" mass="3" diaginertia="0.05 0.04 0.03"/>
      <body name="thigh" pos="0.1 0 -0.1" euler="0.2 0.1 0">
        <joint name="hip" type="hinge" axis="0 1 0.2" stiffness="4" springref="0.3" ref="0.1"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.4" size="0.04"/>
        <body name="shin" pos="0 0 -0.4">
          <joint name="knee" type="ball" stiffness="2.5" armature="0.05"/>
          <geom type="box" size="0.03 0.04 0.2" pos="0 0 -0.2"/>
          <body name="foot" pos="0 0 -0.4">
            <joint name="ankle" type="slide" axis="1 0 0.3" stiffness="30" springref="0.02"
                   damping="0.4" armature="0.3"/>
            <geom type="sphere" size="0.05"/>
          </body>
        </body>
      </body>
      <body name="tail" pos="-0.2 0 0">
        <joint name="tail" type="hinge" axis="1 0 0" armature="0" damping="0" stiffness="0"/>
        <geom type="cylinder" size="0.02 0.1" euler="0 1.2 0"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


# <freejoint> takes no armature or damping; a <joint type="free"> takes the default class's
# damping and here its own armature, which MuJoCo applies along [v_world; w] (docs/mjcf.md §4).
@pytest.mark.parametrize("root", ['<freejoint name="root"/>',
                                  '<joint name="root" type="free" armature="0.1"/>'])
def test_aba_with_armature_springs_dampers_and_file_gravity_matches_mujoco_qacc(tmp_path, root):
    """A tree (no equality, no limit, no contact): MuJoCo's qacc = M^-1 (tau + qfrc_passive -
    qfrc_bias) with M including armature and gravity from <option>, against clusterdyn's aba
    on the same file (armature, springs about springref, dampers, file gravity on by
    default); rnea(aba(tau)) = tau; the energy balance of the joint dynamics."""
    path = tmp_path / "tree.xml"
    path.write_text(TREE_XML.replace('<freejoint name="root"/>', root))
    p = Pair(str(path))
    assert np.allclose(p.cdm.gravity, [0.3, -1.2, -7.5]) if hasattr(p.cdm, "gravity") else True
    rng = np.random.default_rng(11)
    c, w, m, d = p.cdm, p.ws, p.mjm, p.mjd
    for _ in range(5):
        qpos, qvel = p.random_state(rng)
        tau_mj = rng.uniform(-1, 1, m.nv)
        d.qpos[:], d.qvel[:], d.qfrc_applied[:] = qpos, qvel, tau_mj
        mujoco.mj_forward(m, d)
        q, v, T, tdot = p.to_cd(qpos, qvel)
        tau = np.linalg.solve(T.T, tau_mj)  # T^T tau_cd = tau_mj
        vdot = w.aba(q, v, tau)
        expect = T @ d.qacc + tdot
        assert np.abs(vdot - expect).max() < TOL * max(1.0, np.abs(expect).max())
        assert np.abs(w.rnea(q, v, vdot) - tau).max() < TOL * max(1.0, np.abs(tau).max())
        # CE-ABA (a tree: y = q) and (M + A) vdot + nle = tau take the same joint dynamics
        assert np.abs(w.ce_aba(q, v, tau) - expect).max() < TOL * max(1.0, np.abs(expect).max())
        res = w.crba(q) @ vdot + w.nonlinear_effects(q, v) - tau
        assert np.abs(res).max() < TOL * max(1.0, np.abs(tau).max())
    # the same file with MuJoCo's gravity made explicit in clusterdyn's default: different
    assert np.abs(p.mjm.opt.gravity - [0.3, -1.2, -7.5]).max() == 0.0


def test_cluster_algorithms_take_armature_and_passive_forces(tmp_path):
    """The four-bar with armature, springs and dampers on its (dependent too) joints: CE-ABA =
    solve(cluster H, tau - cluster C), CE-RNEA(CE-ABA(tau)) = tau, and the cluster H equals
    G^T M_mj G with MuJoCo's mj_fullM (armature included) and G from independent_to_spanning."""
    src = open(model_path("cd_four_bar.xml")).read()
    assert "<default>" not in src or True
    text = src.replace("<worldbody>", """<default><joint armature="0.07" damping="0.3" stiffness="1.5"
 springref="10"/></default>
  <worldbody>""", 1) if "<default>" not in src else None
    if text is None:
        pytest.skip("cd_four_bar.xml has its own <default>")
    path = tmp_path / "four_bar_passive.xml"
    path.write_text(text)
    c = cd.Model.load(str(path))
    w = c.workspace()
    mjm = mujoco.MjModel.from_xml_path(str(path))
    mjd = mujoco.MjData(mjm)
    assert mjm.dof_armature.min() > 0 and mjm.jnt_stiffness.min() > 0
    rng = np.random.default_rng(5)
    ny = c.ny
    for _ in range(4):
        y = rng.uniform(-0.4, 0.4, c.nyq)
        q, v = w.independent_to_spanning(y, rng.uniform(-1, 1, ny))
        tau = rng.uniform(-1, 1, ny)
        ydd = w.ce_aba(q, v, tau)
        H = w.cluster_mass_matrix(q)
        C = w.cluster_bias(q, v)
        assert np.abs(H @ ydd + C - tau).max() < TOL * max(1.0, np.abs(tau).max())
        assert np.abs(w.ce_rnea(q, v, ydd) - tau).max() < TOL * max(1.0, np.abs(tau).max())
        # G column by column (hinge joints only: MuJoCo dof = clusterdyn coordinate by name)
        G = np.column_stack([w.independent_to_spanning(y, e, q_guess=q)[1] for e in np.eye(ny)])
        P = np.zeros((c.nv, mjm.nv))
        qpos = mjm.qpos0.copy()
        for j in range(mjm.njnt):
            iv = c.velocity_index[mjm.joint(j).name]
            P[iv, mjm.jnt_dofadr[j]] = 1.0
            qpos[mjm.jnt_qposadr[j]] += q[c.position_index[mjm.joint(j).name]]
        mjd.qpos[:] = qpos
        mujoco.mj_forward(mjm, mjd)
        M = np.zeros((mjm.nv, mjm.nv))
        mujoco.mj_fullM(mjm, mjd, M)
        Gm = P.T @ G
        assert np.abs(Gm.T @ M @ Gm - H).max() < TOL * max(1.0, np.abs(H).max())


@pytest.mark.parametrize("name,cut", BUNDLED)
def test_cluster_aba_rnea_mass_matrix_agree_with_joint_dynamics(name, cut):
    """The bundled models carry armature (rotors of the geared leg, in coupling clusters with
    rotor fast paths), springs and dampers: CE-ABA = solve(H_y, tau - C_y), CE-RNEA(CE-ABA) =
    tau, on random closed states."""
    c = cd.Model.load(model_path(name), cut_loops=cut)
    w = c.workspace()
    rng = np.random.default_rng(9)
    for _ in range(4):
        y0, _ = w.spanning_to_independent(c.reference_configuration(), np.zeros(c.nv))
        y = y0.copy()
        for j, n in enumerate(c.independent_position_names):
            if not any(n.endswith(s) for s in (":qx", ":qy", ":qz", ":qw")):
                y[j] += rng.uniform(-0.3, 0.3)
        q, v = w.independent_to_spanning(y, rng.uniform(-1, 1, c.ny), q_guess=c.reference_configuration())
        tau = rng.uniform(-1, 1, c.ny)
        ydd = w.ce_aba(q, v, tau)
        H, C = w.cluster_mass_matrix(q), w.cluster_bias(q, v)
        scale = max(1.0, np.abs(H).max() * np.abs(ydd).max())
        assert np.abs(H @ ydd + C - tau).max() < TOL * scale
        assert np.abs(w.ce_rnea(q, v, ydd) - tau).max() < TOL * scale


def test_embedded_ball_joint_loop_matches_mujoco():
    """cd_rod_hip: the rod's ball joint is an independent coordinate of the embedded loop (its
    quaternion in y). At closed states (y = y_ref (+) e by integrate_independent, closed by
    independent_to_spanning): MuJoCo's connect residual efc_pos is 0, the cluster mass matrix
    is G^T M_mj G and CE-ABA is the dense solve with MuJoCo's M, bias and passive forces:
    ydd = (G^T M G)^-1 (tau - G^T (M g + bias - passive)), v = G ydot, vdot = G ydd + g."""
    path = model_path("cd_rod_hip.xml")
    p = Pair(path)
    c, w, mjm, mjd = p.cdm, p.ws, p.mjm, p.mjd
    assert (c.ny, c.nyq) == (4, 5)
    assert sum(n.startswith("rod_ball:") for n in c.independent_position_names) == 4
    y_ref, _ = w.spanning_to_independent(c.reference_configuration(), np.zeros(c.nv))
    rng = np.random.default_rng(12)
    worst = 0.0
    for _ in range(6):
        y = w.integrate_independent(y_ref, rng.uniform(-0.4, 0.4, c.ny), 1.0)
        q, v = w.independent_to_spanning(y, rng.uniform(-1, 1, c.ny), q_guess=c.reference_configuration())
        qpos, qvel = mjm.qpos0.copy(), np.zeros(mjm.nv)
        for name, t, qa, da in p.joints():
            if t == mujoco.mjtJoint.mjJNT_BALL:
                iq, iv = c.position_index[name + ":qx"], c.velocity_index[name + ":wx"]
                qpos[qa:qa + 4] = [q[iq + 3], q[iq], q[iq + 1], q[iq + 2]]
                qvel[da:da + 3] = v[iv:iv + 3]
            else:
                qpos[qa] += q[c.position_index[name]]
                qvel[da] = v[c.velocity_index[name]]
        M, bias = p.mujoco_at(qpos, qvel)
        assert np.abs(mjd.efc_pos[:3]).max() < 1e-9  # closed
        _, _, T, _ = p.to_cd(qpos, qvel)  # v_cd = T v_mj (constant here: hinges and a ball)
        G, g = w.constraint_matrices(q, v)
        Gm, gm = np.linalg.solve(T, G), np.linalg.solve(T, g)
        H = w.cluster_mass_matrix(q)
        assert np.abs(Gm.T @ M @ Gm - H).max() < TOL * max(1.0, np.abs(H).max())
        tau = rng.uniform(-0.5, 0.5, c.ny)
        ydd = w.ce_aba(q, v, tau)
        rhs = tau - Gm.T @ (M @ gm + bias - mjd.qfrc_passive)
        ydd_mj = np.linalg.solve(Gm.T @ M @ Gm, rhs)
        err = np.abs(ydd - ydd_mj).max() / max(1.0, np.abs(ydd_mj).max())
        worst = max(worst, err)
    assert worst < TOL


FRAME_XML = """<mujoco model="frames">
  <default><default class="f"><joint damping="0.1"/></default></default>
  <worldbody>
    <frame pos="0.1 0.2 0.3" euler="10 20 30">
      <frame pos="0 0 0.5" quat="0.9 0.1 0 0.2" childclass="f">
        <body name="a" pos="0.1 0 0">
          <joint name="ja" axis="0 1 0"/>
          <geom type="box" size="0.1 0.05 0.02"/>
          <frame pos="0.2 0 0" axisangle="1 0 0 30">
            <site name="s" pos="0 0.1 0"/>
            <body name="b" pos="0 0 -0.1">
              <joint name="jb" axis="1 0 0"/>
              <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.03"/>
            </body>
          </frame>
        </body>
      </frame>
    </frame>
  </worldbody>
</mujoco>
"""


def test_frames_compose_as_in_mujoco(tmp_path):
    """<frame> (nested, with orientation and childclass) around bodies and sites: body poses,
    mass matrix, bias and passive forces as MuJoCo's."""
    path = tmp_path / "frames.xml"
    path.write_text(FRAME_XML)
    p = Pair(str(path))
    rng = np.random.default_rng(2)
    for _ in range(3):
        qpos, qvel = p.random_state(rng)
        M_mj, bias_mj = p.mujoco_at(qpos, qvel)
        q, v, T, tdot = p.to_cd(qpos, qvel)
        H = p.ws.crba(q)
        assert np.abs(T.T @ H @ T - M_mj).max() < TOL
        bias = T.T @ (p.ws.nonlinear_effects(q, v) + H @ tdot)
        assert np.abs(bias - (bias_mj - p.mjd.qfrc_passive)).max() < TOL
        p.ws.forward_kinematics(q)
        for b in range(1, p.mjm.nbody):
            R, x = p.ws.frame_placement(p.mjm.body(b).name)
            assert np.abs(x - p.mjd.xpos[b]).max() < TOL
            assert np.abs(R - p.mjd.xmat[b].reshape(3, 3)).max() < TOL
    assert np.abs(p.mjm.dof_damping - 0.1).max() == 0.0
