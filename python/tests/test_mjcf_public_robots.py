"""Public MJCF robots with closed loops against MuJoCo on the same files (docs/mjcf.md §5).

The robots are third-party files, never copied into this project: tools/fetch_mjcf_robots.sh
DIR fetches them, and the tests read them from $CLUSTERDYN_MJCF_ROBOTS_DIR (skipped, saying
so, when it is unset or a robot is missing). Each file is loaded by MuJoCo (meshes and all) and
by clusterdyn, unchanged except that joints without a name get one (clusterdyn names them
joint#N; the coordinate map between the two programs goes by name).

Cassie (osudrl/cassie-mujoco-sim, model/cassie.xml): four <connect> loops, two plantar-rod
four-bars of hinges and two achilles rods on ball joints; pelvis on three slides and a ball.
  - loops cut: mj_fullM, qfrc_bias, qfrc_passive, body poses at random states; the 12 connect
    rows of efc_J at qpos0 (closed as drawn) = R_P K of the cut loops; to 1e-9;
  - every loop embedded (ny 22): the achilles balls (damping 0.01) become three hinges each,
    which carry their dampers (the ball independent would be too ill-conditioned a choice:
    sigma_min/sigma_max 0.016 of the dependent columns, below the reader's threshold 0.05; with
    armature on the balls, which hinges cannot carry, the load fails saying so): MuJoCo's
    equality rows annihilate P G, P^T qfrc_passive = tau_p, H_y = G^T P^T M_mj P G and CE-ABA =
    the dense solve with MuJoCo's M, bias and passive forces (test_mjcf_ball_hinges_mujoco.py);
  - plantar loops embedded (the achilles connects removed from the file for both programs):
    at closed configurations the cluster mass matrix = G^T M_mj G, the plantar connect rows of
    efc_J = R_P K, and CE-ABA = the dense solve (H_y ydd + C_y = tau) with
    C_y = G^T (bias_mj - passive_mj + M_mj g), g = dG/dt ydot by central differences.

Robotiq 2F-85 (google-deepmind/mujoco_menagerie, robotiq_2f85/2f85.xml, unchanged): two
five-bar fingers closed by <connect>, a joint equality between the drivers, springs, dampers,
armature, STL meshes (the silicone pads' inertia from their meshes):
  - loops cut: total mass, mj_fullM, qfrc_bias, qfrc_passive, body poses at random states;
  - everything embedded (one cluster, ny = 3): the same comparisons as Cassie's plantar loops.
"""
import os
import re

import numpy as np
import pytest

import clusterdyn as cd

mujoco = pytest.importorskip("mujoco", reason="the PyPI package 'mujoco' is not installed")

from test_mjcf_ball_hinges_mujoco import check_balls_as_hinges_against_mujoco  # noqa: E402
from test_mjcf_mujoco import Pair  # noqa: E402

TOL = 1e-9
ROBOTS = os.environ.get("CLUSTERDYN_MJCF_ROBOTS_DIR")
CASSIE = "cassie-mujoco-sim/model/cassie.xml"


def robot_file(rel):
    if not ROBOTS:
        pytest.skip("CLUSTERDYN_MJCF_ROBOTS_DIR is not set (bash tools/fetch_mjcf_robots.sh DIR)")
    path = os.path.join(ROBOTS, rel)
    if not os.path.isfile(path):
        pytest.skip(f"{path} not found (bash tools/fetch_mjcf_robots.sh {ROBOTS})")
    return path


def named_copy(path, drop_equalities=(), edits=()):
    """The file with its unnamed joints named (and some equalities removed, and the (pattern,
    replacement) edits applied), written beside the original so that relative mesh paths still
    resolve; removed by the caller."""
    text = open(path).read()
    for pattern, replacement in edits:
        text, n = re.subn(pattern, replacement, text)
        assert n > 0, pattern
    count = [0]

    def name(m):
        count[0] += 1
        return m.group(0).replace("<joint ", f"<joint name='unnamed{count[0]}' ", 1)

    head, sep, body = text.partition("<worldbody>")  # not the <default> joints
    text = head + sep + re.sub(r"<joint (?![^>]*\bname\s*=)[^>]*>", name, body)
    for eq in drop_equalities:
        text, n = re.subn(r"<connect[^>]*name\s*=\s*'" + re.escape(eq) + r"'[^>]*/>", "", text)
        assert n == 1, eq
    out = os.path.join(os.path.dirname(path),
                       f".clusterdyn_test_{os.getpid()}_{len(drop_equalities)}_{len(edits)}.xml")
    with open(out, "w") as f:
        f.write(text)
    return out


@pytest.fixture
def cassie():
    paths = []

    def make(drop=(), edits=()):
        paths.append(named_copy(robot_file(CASSIE), drop, edits))
        return paths[-1]

    yield make
    for p in paths:
        os.remove(p)


def connect_rows(p, q, eq_ids):
    """MuJoCo's efc_J rows of the given equalities at the state last set (p.mjd)."""
    d, m = p.mjd, p.mjm
    rows = [i for i in range(d.nefc) if d.efc_type[i] == mujoco.mjtConstraint.mjCNSTR_EQUALITY
            and int(d.efc_id[i]) in eq_ids]
    return d.efc_J.reshape(d.nefc, m.nv)[rows]


def test_cassie_tree_and_connect_rows_match_mujoco(cassie):
    path = cassie()
    p = Pair(path, cut_loops=True)
    rigid = cd.Model.load(path, cut_loops=True, joint_dynamics=False).workspace()
    assert p.mjm.neq == 4
    assert abs(p.cdm.total_mass - p.mjm.body_mass.sum()) < TOL * p.mjm.body_mass.sum()
    rng = np.random.default_rng(7)
    for _ in range(10):
        qpos, qvel = p.random_state(rng)
        M_mj, bias_mj = p.mujoco_at(qpos, qvel)
        q, v, T, tdot = p.to_cd(qpos, qvel)
        H = p.ws.crba(q)
        assert np.abs(T.T @ H @ T - M_mj).max() < TOL * np.abs(M_mj).max()
        bias = T.T @ (p.ws.nonlinear_effects(q, v) + H @ tdot)
        # qfrc_bias alone (the rigid model) and qfrc_passive alone (nle = C v + g - tau_p)
        bias_rigid = T.T @ (rigid.nonlinear_effects(q, v) + H @ tdot)
        assert np.abs(bias_rigid - bias_mj).max() < TOL * np.abs(bias_mj).max()
        passive = T.T @ (rigid.nonlinear_effects(q, v) - p.ws.nonlinear_effects(q, v))
        assert np.abs(passive - p.mjd.qfrc_passive).max() < TOL * np.abs(bias_mj).max()
        assert np.abs(p.mjd.qfrc_passive).max() > 1.0  # springs (1500, 1250) and dampers act
        bias_mj = bias_mj - p.mjd.qfrc_passive
        assert np.abs(bias - bias_mj).max() < TOL * np.abs(bias_mj).max()
        p.ws.forward_kinematics(q)
        for b in range(1, p.mjm.nbody):
            R, x = p.ws.frame_placement(p.mjm.body(b).name)
            assert np.abs(x - p.mjd.xpos[b]).max() < TOL
            assert np.abs(R - p.mjd.xmat[b].reshape(3, 3)).max() < TOL
    # qpos0 is closed: every connect row = R_P K (K in body1's axes, clusterdyn's cut loops)
    qpos0 = p.mjm.qpos0.copy()
    p.mujoco_at(qpos0, np.zeros(p.mjm.nv))
    q, _, T, _ = p.to_cd(qpos0, np.zeros(p.mjm.nv))
    K, _ = p.cdm.cut_loop_constraints().workspace().jacobian(q)
    assert K.shape == (12, p.cdm.nv)
    efc = connect_rows(p, q, range(4)) @ np.linalg.inv(T)
    p.ws.forward_kinematics(q)
    for k in range(4):
        R1, _ = p.ws.frame_placement(p.mjm.body(int(p.mjm.eq_obj1id[k])).name)
        assert np.abs(efc[3 * k:3 * k + 3] - R1 @ K[3 * k:3 * k + 3]).max() < TOL


def test_cassie_achilles_balls_become_hinges_and_match_mujoco(cassie):
    # each achilles rod hangs on a ball joint (damping 0.01) at the hip and is connected at the
    # heel spring: dependent as a whole, the ball leaves the rod's spin without a coordinate;
    # independent, only the heel spring (2 degrees from the leg's plane) could follow the rod's
    # swing out of that plane, an ill-conditioned choice the reader rejects; so the builder
    # replaces each ball by three hinges, which carry its damper together, and every loop embeds
    path = cassie()
    c = cd.Model.load(path)
    assert (c.ny, c.nyq, c.nv) == (22, 23, 32)
    assert [n for n in c.independent_velocity_names if "achilles" in n] == [
        "left-achilles-rod:spin", "right-achilles-rod:spin"]
    closed, worst, ball_passive = check_balls_as_hinges_against_mujoco(
        path, ["left-achilles-rod", "right-achilles-rod"], 0.1, 10, 3, 5)
    assert ball_passive > 1e-3  # the balls' dampers act (seen: 6 closed, 2.5e-13, 0.019)
    # with armature on the balls (which hinges cannot carry) the load fails and says why: the
    # ball independent too stiff a choice, the armature; the file loads with its loops cut
    armature = cassie(edits=[(r"(name='(left|right)-achilles-rod' type='ball'[^/]*)/>",
                              r"\1 armature='0.001'/>")])
    with pytest.raises(cd.ClusterdynError) as err:
        cd.Model.load(armature)
    msg = str(err.value)
    assert re.search(r"achilles-rod-eq'.*joint 'left-achilles-rod' of type spherical moves "
                     r"along a direction the constraints leave free.*cut the loop", msg), msg
    assert ("with joints 'left-achilles-rod', 'right-achilles-rod' independent (quaternion in y)"
            in msg), msg
    assert ("sigma_min/sigma_max = 0.016, below the threshold 0.05 (condition number 63 > 20)"
            in msg), msg
    assert "three hinges cannot carry its armature" in msg, msg
    c = cd.Model.load(armature, cut_loops=True)
    assert c.ny == c.nv


def test_cassie_embedded_plantar_loops_match_mujoco(cassie):
    path = cassie(drop=("left-achilles-rod-eq", "right-achilles-rod-eq"))
    c = cd.Model.load(path)  # the two plantar four-bars embedded
    assert c.ny == c.nv - 4  # each planar four-bar: 3 hinges, 1 degree of freedom
    w = c.workspace()
    p = Pair(path, cut_loops=True)  # the same file cut: MuJoCo's coordinates by name
    m = p.mjm
    rng = np.random.default_rng(2)
    y0, _ = w.spanning_to_independent(c.reference_configuration(), np.zeros(c.nv))
    hinge = [j for j, n in enumerate(c.independent_position_names)
             if not any(n.endswith(s) for s in (":qx", ":qy", ":qz", ":qw"))]
    # ydot moves the hinges and slides only (dy: the same motion in y, whose quaternions stay)
    to_vel = [c.independent_velocity_names.index(c.independent_position_names[j])
              for j in hinge]
    for _ in range(4):
        y = y0.copy()
        y[hinge] += rng.uniform(-0.2, 0.2, len(hinge))
        ydot = np.zeros(c.ny)
        ydot[to_vel] = rng.uniform(-1, 1, len(hinge))
        dy = np.zeros(c.nyq)
        dy[hinge] = ydot[to_vel]
        q, v = w.independent_to_spanning(y, ydot, q_guess=c.reference_configuration())
        G = np.column_stack([w.independent_to_spanning(y, e, q_guess=q)[1] for e in np.eye(c.ny)])
        # MuJoCo at the same state (the spanning coordinates by name)
        qpos, qvel, P = m.qpos0.copy(), np.zeros(m.nv), np.zeros((c.nv, m.nv))
        for name, t, qa, da in p.joints():
            if t in (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE):
                qpos[qa] += q[c.position_index[name]]
                P[c.velocity_index[name], da] = 1.0
            else:  # ball: (x y z w) -> (w x y z), angular velocity in the child frame both
                iq, iv = c.position_index[name + ":qx"], c.velocity_index[name + ":wx"]
                qpos[qa:qa + 4] = [q[iq + 3], *q[iq:iq + 3]]
                P[iv:iv + 3, da:da + 3] = np.eye(3)
        qvel = P.T @ v
        M_mj, bias_mj = p.mujoco_at(qpos, qvel)
        Gm = P.T @ G
        H = w.cluster_mass_matrix(q)
        assert np.abs(Gm.T @ M_mj @ Gm - H).max() < TOL * np.abs(H).max()
        # plantar connect rows at this closed configuration (equalities 0 and 1 of this file)
        qc, _, T, _ = p.to_cd(qpos, np.zeros(m.nv))
        K, _ = p.cdm.cut_loop_constraints().workspace().jacobian(qc)
        efc = connect_rows(p, qc, (0, 1)) @ np.linalg.inv(T)
        p.ws.forward_kinematics(qc)
        for k in range(2):
            R1, _ = p.ws.frame_placement(m.body(int(m.eq_obj1id[k])).name)
            assert np.abs(efc[3 * k:3 * k + 3] - R1 @ K[3 * k:3 * k + 3]).max() < TOL
        # CE-ABA against the dense solve with MuJoCo's bias; g = dG/dt ydot (central differences)
        h = 1e-6
        vp = w.independent_to_spanning(y + h * dy, ydot, q_guess=q)[1]
        vm = w.independent_to_spanning(y - h * dy, ydot, q_guess=q)[1]
        g = (vp - vm) / (2 * h)
        M_mj, bias_mj = p.mujoco_at(qpos, qvel)
        Cy = Gm.T @ (bias_mj - p.mjd.qfrc_passive + M_mj @ (P.T @ g))
        assert np.abs(w.cluster_bias(q, v) - Cy).max() < 1e-8 * max(1.0, np.abs(Cy).max())
        tau = rng.uniform(-5, 5, c.ny)
        ydd = w.ce_aba(q, v, tau)
        dense = np.linalg.solve(Gm.T @ M_mj @ Gm, tau - Cy)
        assert np.abs(ydd - dense).max() < 1e-8 * max(1.0, np.abs(dense).max())
        assert np.abs(H @ ydd + w.cluster_bias(q, v) - tau).max() < TOL * np.abs(tau).max() * 1e3


# ---- Robotiq 2F-85 (MuJoCo Menagerie, robotiq_2f85/2f85.xml): two five-bar finger linkages
# closed by <connect>, a joint equality between the drivers, springs, dampers, armature, and
# mesh geoms (the silicone pads take their mass from their STL meshes) -------------------------
GRIPPER = "mujoco_menagerie/robotiq_2f85/2f85.xml"


def hinge_map(c, m):
    """P (nv_cd, nv_mj) and the qpos of a clusterdyn spanning q of an all-hinge model."""
    P = np.zeros((c.nv, m.nv))
    for j in range(m.njnt):
        assert m.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE
        P[c.velocity_index[m.joint(j).name], m.jnt_dofadr[j]] = 1.0

    def qpos_of(q):
        qpos = m.qpos0.copy()
        for j in range(m.njnt):
            qpos[m.jnt_qposadr[j]] += q[c.position_index[m.joint(j).name]]
        return qpos
    return P, qpos_of


def test_robotiq_2f85_tree_matches_mujoco():
    path = robot_file(GRIPPER)
    p = Pair(path, cut_loops=True)
    rigid = cd.Model.load(path, cut_loops=True, joint_dynamics=False).workspace()
    m = p.mjm
    assert (m.nv, m.neq) == (8, 3)
    # the moving bodies' mass (the base is welded to the world), the silicone pads' from their
    # STL meshes (no <inertial>)
    moving = m.body_mass[m.body_weldid != 0].sum()
    assert abs(p.cdm.total_mass - moving) < TOL * moving
    rng = np.random.default_rng(11)
    for _ in range(10):
        qpos, qvel = p.random_state(rng, scale=0.4)
        M_mj, bias_mj = p.mujoco_at(qpos, qvel)
        q, v, T, _ = p.to_cd(qpos, qvel)
        H = p.ws.crba(q)
        assert np.abs(T.T @ H @ T - M_mj).max() < TOL * np.abs(M_mj).max()
        bias_rigid = T.T @ rigid.nonlinear_effects(q, v)
        assert np.abs(bias_rigid - bias_mj).max() < TOL * np.abs(bias_mj).max()
        passive = T.T @ (rigid.nonlinear_effects(q, v) - p.ws.nonlinear_effects(q, v))
        assert np.abs(passive - p.mjd.qfrc_passive).max() < TOL * np.abs(bias_mj).max()
        assert np.abs(p.mjd.qfrc_passive).max() > 1e-4  # springs and dampers act
        p.ws.forward_kinematics(q)
        for b in range(1, m.nbody):
            R, x = p.ws.frame_placement(m.body(b).name)
            assert np.abs(x - p.mjd.xpos[b]).max() < TOL
            assert np.abs(R - p.mjd.xmat[b].reshape(3, 3)).max() < TOL


def test_robotiq_2f85_embedded_matches_mujoco():
    path = robot_file(GRIPPER)
    c = cd.Model.load(path)  # both five-bars and the driver coupling embedded
    assert c.ny == 3 and c.nclusters == 1, (c.ny, c.nclusters)
    w = c.workspace()
    cut = Pair(path, cut_loops=True)
    m, d = cut.mjm, cut.mjd
    P, qpos_of = hinge_map(c, m)
    rng = np.random.default_rng(5)
    y0, _ = w.spanning_to_independent(c.reference_configuration(), np.zeros(c.nv))
    for _ in range(5):
        y = y0 + rng.uniform(-0.15, 0.15, c.nyq)
        ydot = rng.uniform(-1, 1, c.ny)
        q, v = w.independent_to_spanning(y, ydot, q_guess=c.reference_configuration())
        G = np.column_stack([w.independent_to_spanning(y, e, q_guess=q)[1] for e in np.eye(c.ny)])
        Gm = P.T @ G
        qpos, qvel = qpos_of(q), P.T @ v
        M_mj, bias_mj = cut.mujoco_at(qpos, qvel)
        H = w.cluster_mass_matrix(q)
        assert np.abs(Gm.T @ M_mj @ Gm - H).max() < TOL * np.abs(H).max()
        # the connect rows of efc_J at this closed configuration = R_P K (cut loops' K, on the
        # cut model's independent velocities: the driver coupling stays embedded there, Gc)
        qc, _, T, _ = cut.to_cd(qpos, np.zeros(m.nv))
        K, _ = cut.cdm.cut_loop_constraints().workspace().jacobian(qc)
        yc, _ = cut.ws.spanning_to_independent(qc, np.zeros(m.nv))
        Gc = np.column_stack([cut.ws.independent_to_spanning(yc, e, q_guess=qc)[1]
                              for e in np.eye(cut.cdm.ny)])
        efc = connect_rows(cut, qc, (0, 1)) @ np.linalg.inv(T) @ Gc
        cut.ws.forward_kinematics(qc)
        for k in range(2):
            R1, _ = cut.ws.frame_placement(m.body(int(m.eq_obj1id[k])).name)
            assert np.abs(efc[3 * k:3 * k + 3] - R1 @ K[3 * k:3 * k + 3]).max() < TOL
        # CE-ABA = the dense solve with MuJoCo's M and bias; g = dG/dt ydot (central differences)
        h = 1e-6
        g = (w.independent_to_spanning(y + h * ydot, ydot, q_guess=q)[1] -
             w.independent_to_spanning(y - h * ydot, ydot, q_guess=q)[1]) / (2 * h)
        M_mj, bias_mj = cut.mujoco_at(qpos, qvel)
        Cy = Gm.T @ (bias_mj - d.qfrc_passive + M_mj @ (P.T @ g))
        assert np.abs(w.cluster_bias(q, v) - Cy).max() < 1e-8 * max(1.0, np.abs(Cy).max())
        tau = rng.uniform(-0.5, 0.5, c.ny)
        ydd = w.ce_aba(q, v, tau)
        dense = np.linalg.solve(Gm.T @ M_mj @ Gm, tau - Cy)
        assert np.abs(ydd - dense).max() < 1e-8 * max(1.0, np.abs(dense).max())
