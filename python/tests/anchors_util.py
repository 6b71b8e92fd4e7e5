"""Shared helpers of the anchor tests (test_anchor_pinocchio.py, test_anchor_mujoco.py):
random URDF trees, and the maps between clusterdyn's coordinates and Pinocchio's / MuJoCo's.

Conventions mapped here (docs/anchors.md):
- clusterdyn: spatial vectors [angular; linear]; floating q = [p, quaternion x y z w],
  v = [omega; v] of the body in body coordinates; spherical q = quaternion x y z w, v = angular
  velocity in the child frame; continuous joints have one angle.
- Pinocchio: spatial vectors [linear; angular]; free flyer q = [p, x y z w], v = [v; omega] in
  the body frame (LOCAL); continuous joints (JointModelRUB*) have q = (cos, sin).
- MuJoCo: free joint qpos = [p, w x y z], qvel = [linear velocity of the body origin in WORLD
  axes; angular velocity in the body frame]; ball qpos = w x y z, qvel body angular velocity.
"""
import math
import re

import numpy as np

TOL = 1e-9


def close(actual, expected, what, tol=TOL):
    """Asserts |actual - expected|_inf <= tol max(1, |expected|_inf): absolute below 1,
    relative to the largest entry above."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
    err = float(np.abs(actual - expected).max(initial=0.0))
    assert err <= tol * scale, f"{what}: max error {err:.3g} > {tol:g} x {scale:.3g}"


# ---- random trees ----------------------------------------------------------------------------


def _rpy_matrix(r, p, y):
    """URDF's R = Rz(y) Ry(p) Rx(r)."""
    cr, sr, cp, sp, cy, sy = (math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y),
                              math.sin(y))
    Rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    Ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    Rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return Rz @ Ry @ Rx


def _f(x):
    return repr(float(x))


def _vec3(v):
    return " ".join(_f(x) for x in v)


class RandomLink:
    """One link of a random tree and the joint above it (parent index -1: the root)."""

    def __init__(self, name, parent, joint_type, xyz, rpy, axis, mass, com, irpy, inertia):
        self.name, self.parent, self.joint_type = name, parent, joint_type
        self.xyz, self.rpy, self.axis = np.asarray(xyz), np.asarray(rpy), np.asarray(axis)
        self.mass, self.com, self.irpy = mass, np.asarray(com), np.asarray(irpy)
        self.inertia = inertia  # (ixx, iyy, izz, ixy, ixz, iyz) about the COM, in irpy axes

    def inertia_matrix(self):
        ixx, iyy, izz, ixy, ixz, iyz = self.inertia
        return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])


def _random_inertia(rng):
    """Principal moments satisfying the triangle inequality, rotated: (ixx..iyz) of a valid
    tensor."""
    a, b = rng.uniform(0.01, 0.1, 2)
    c = rng.uniform(abs(a - b) + 0.005, a + b - 0.005)
    R = _rpy_matrix(*rng.uniform(-math.pi, math.pi, 3))
    I = R @ np.diag([a, b, c]) @ R.T
    return (I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2])


def random_tree(rng, nlinks, types=("revolute", "prismatic", "spherical"), floating=False,
                nfixed=1):
    """A random tree: a massless root link `world`; with floating=True a `floating` trunk;
    then nlinks moving links on random parents with joints drawn from `types` (random origins,
    rpy and unit axes), plus nfixed links on `fixed` joints (fused by clusterdyn, frames in
    Pinocchio). Every link has a random mass, COM, inertial rpy and a valid inertia."""
    links = []
    first = 1 if floating else 0
    for i in range(first + nlinks + nfixed):
        if i < first:
            jt, parent = "floating", -1
        elif i < first + nlinks:
            jt = str(rng.choice(types))
            parent = int(rng.integers(-1 if not floating else 0, len(links))) if links else -1
        else:
            jt, parent = "fixed", int(rng.integers(0, len(links)))
        axis = rng.normal(size=3)
        axis /= np.linalg.norm(axis)
        if rng.uniform() < 0.3:  # along a coordinate axis, either sign (Pinocchio's RX...)
            axis = np.eye(3)[int(rng.integers(0, 3))] * rng.choice([-1.0, 1.0])
        zero = jt == "floating"
        links.append(RandomLink(
            f"link{i}", parent, jt,
            np.zeros(3) if zero else rng.uniform(-0.3, 0.3, 3),
            np.zeros(3) if zero else rng.uniform(-math.pi, math.pi, 3),
            axis, rng.uniform(0.5, 3.0), rng.uniform(-0.1, 0.1, 3),
            rng.uniform(-math.pi, math.pi, 3), _random_inertia(rng)))
    return links


def tree_urdf(links, name="random_tree", root_joint=False):
    """URDF text of a random tree (the root link is the massless `world`). root_joint: the
    tree of random_tree(floating=True) without `world` and the floating joint, so link0 (with
    its mass) is the root link, for clusterdyn's floating_base option."""
    out = [f'<robot name="{name}">'] + ([] if root_joint else ['  <link name="world"/>'])
    for link in links:
        ixx, iyy, izz, ixy, ixz, iyz = link.inertia
        out.append(
            f'  <link name="{link.name}"><inertial><origin xyz="{_vec3(link.com)}" '
            f'rpy="{_vec3(link.irpy)}"/><mass value="{_f(link.mass)}"/><inertia '
            f'ixx="{_f(ixx)}" iyy="{_f(iyy)}" izz="{_f(izz)}" ixy="{_f(ixy)}" ixz="{_f(ixz)}" '
            f'iyz="{_f(iyz)}"/></inertial></link>')
    for link in links:
        if root_joint and link.parent < 0:
            continue
        parent = "world" if link.parent < 0 else links[link.parent].name
        axis = "" if link.joint_type in ("fixed", "floating", "spherical") else (
            f'<axis xyz="{_vec3(link.axis)}"/>')
        out.append(
            f'  <joint name="{link.name}_joint" type="{link.joint_type}"><parent link="{parent}"/>'
            f'<child link="{link.name}"/><origin xyz="{_vec3(link.xyz)}" '
            f'rpy="{_vec3(link.rpy)}"/>{axis}</joint>')
    out.append("</robot>")
    return "\n".join(out)


def tree_pinocchio(pin, links, root_joint=False):
    """The same tree built through Pinocchio's Python API (no URDF parser): joints, bodies
    (fixed links appended to their parent's joint) and BODY frames named after the links.
    root_joint: the floating joint is named `root_joint` (clusterdyn's floating_base) and there
    is no `world` frame."""
    model = pin.Model()
    model.name = "random_tree"
    joint_of = {}  # link index -> (joint id, placement of the link in that joint's frame)
    frame_of = {}
    world_frame = model.getFrameId("universe")
    if not root_joint:
        world_frame = model.addBodyFrame("world", 0, pin.SE3.Identity(), world_frame)
    children = {}
    for i, link in enumerate(links):
        children.setdefault(link.parent, []).append(i)
    order, stack = [], list(reversed(children.get(-1, [])))
    while stack:  # depth first: Pinocchio's CRBA needs each subtree's dofs contiguous
        i = stack.pop()
        order.append(i)
        stack += reversed(children.get(i, []))
    for i in order:
        link = links[i]
        if link.parent < 0:
            pj, pM, pf = 0, pin.SE3.Identity(), world_frame
        else:
            pj, pM = joint_of[link.parent]
            pf = frame_of[link.parent]
        origin = pM * pin.SE3(_rpy_matrix(*link.rpy), link.xyz)
        jt = link.joint_type
        if jt == "fixed":
            jid, M = pj, origin
        else:
            jm = {"revolute": lambda: pin.JointModelRevoluteUnaligned(link.axis),
                  "prismatic": lambda: pin.JointModelPrismaticUnaligned(link.axis),
                  "spherical": pin.JointModelSpherical,
                  "floating": pin.JointModelFreeFlyer}[jt]()
            jname = "root_joint" if root_joint and jt == "floating" else f"{link.name}_joint"
            jid, M = model.addJoint(pj, jm, origin, jname), pin.SE3.Identity()
        inertia = pin.Inertia(link.mass, link.com, _rpy_matrix(*link.irpy) @ link.inertia_matrix()
                              @ _rpy_matrix(*link.irpy).T)
        model.appendBodyToJoint(jid, inertia, M)
        frame_of[i] = model.addBodyFrame(link.name, jid, M, pf)
        joint_of[i] = (jid, M)
    return model


# ---- clusterdyn <-> Pinocchio ----------------------------------------------------------------


class PinocchioMap:
    """Coordinates of a clusterdyn spanning tree and a Pinocchio model of the same robot,
    matched by joint name. v_pin = P v_cd (P a permutation: Pinocchio's joint order, free
    flyer [v; omega]), so M_cd = P^T M_pin P, tau_cd = P^T tau_pin, qdd_cd = P^T qdd_pin."""

    def __init__(self, cd_model, pin_model):
        self.cd, self.pin = cd_model, pin_model
        self.P = np.zeros((pin_model.nv, cd_model.nv))
        self.joints = []  # (pin joint short name, cd iq, cd nq, pin iq, pin nq)
        names = set(cd_model.joint_names)
        for jid in range(1, pin_model.njoints):
            name = pin_model.names[jid]
            assert name in names, f"Pinocchio joint {name} not in clusterdyn's model"
            iq, nq, iv, nv = cd_model.joint_coordinates(name)
            jm = pin_model.joints[jid]
            kind = jm.shortname()
            assert jm.nv == nv, (name, kind, jm.nv, nv)
            perm = list(range(nv))
            if kind == "JointModelFreeFlyer":
                perm = [3, 4, 5, 0, 1, 2]  # Pinocchio [v; omega] <- clusterdyn [omega; v]
            for k in range(nv):
                self.P[jm.idx_v + k, iv + perm[k]] = 1.0
            self.joints.append((kind, iq, nq, jm.idx_q, jm.nq))
        assert len(self.joints) == cd_model.nbodies, "joint sets differ"
        assert np.allclose(self.P.sum(0), 1) and pin_model.nv == cd_model.nv

    def q(self, q_cd):
        q = np.zeros(self.pin.nq)
        for kind, iq, nq, pq, pnq in self.joints:
            x = q_cd[iq:iq + nq]
            if kind.startswith("JointModelRUB"):  # continuous: (cos, sin) of the angle
                q[pq:pq + 2] = math.cos(x[0]), math.sin(x[0])
            else:  # same layout: angle, displacement, [p, x y z w], x y z w
                assert pnq == nq, kind
                q[pq:pq + nq] = x
        return q

    def v(self, v_cd):
        return self.P @ v_cd

    def v_back(self, v_pin):
        return self.P.T @ v_pin

    def matrix(self, M_pin):
        return self.P.T @ M_pin @ self.P

    def jacobian(self, J_pin):
        """Pinocchio's 6 x nv frame Jacobian [linear; angular] in clusterdyn's rows and
        columns."""
        return np.vstack([J_pin[3:], J_pin[:3]]) @ self.P


def symmetric_from_upper(M):
    """The full symmetric matrix from an upper triangle (Pinocchio's CRBA fills the upper part
    only in some versions)."""
    return np.triu(M) + np.triu(M, 1).T


# ---- clusterdyn <-> MuJoCo -------------------------------------------------------------------


def mujoco_urdf(text, compiler='discardvisual="true" fusestatic="true" balanceinertia="false"'):
    """URDF text with MuJoCo's <mujoco><compiler/></mujoco> extension element, for
    MjModel.from_xml_string (the files on disk are never changed)."""
    text = re.sub(r"<\?xml[^>]*\?>", "", text)
    return re.sub(r"(<robot[^>]*>)", r"\1\n  <mujoco><compiler " + compiler + "/></mujoco>",
                  text, count=1)


def _principal(I):
    w = np.linalg.eigvalsh(I)
    return np.sort(w)


def balance_inertias(text):
    """URDF text in which every inertia that violates the triangle inequality A + B >= C of
    its principal moments gets (C - A - B)(1 + 1e-6) + 1e-12 added to ixx, iyy and izz (a
    tensor plus d I: every principal moment + d). MuJoCo refuses such tensors (or changes them
    itself with balanceinertia); loading this same text into both libraries keeps them
    comparable. Returns (text, names of the changed links)."""
    changed = []

    def fix(m):
        link, body = m.group(1), m.group(2)
        mi = re.search(r"<inertia([^>]*)/>", body)
        attrs = dict(re.findall(r'(i[xyz]{2})\s*=\s*"([^"]*)"', mi.group(1)))
        g = {k: float(attrs.get(k, 0.0)) for k in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")}
        I = np.array([[g["ixx"], g["ixy"], g["ixz"]], [g["ixy"], g["iyy"], g["iyz"]],
                      [g["ixz"], g["iyz"], g["izz"]]])
        a, b, c = _principal(I)
        if a + b >= c:
            return m.group(0)
        d = (c - a - b) * (1 + 1e-6) + 1e-12
        changed.append(link)
        for k in ("ixx", "iyy", "izz"):
            g[k] += d
        new = "<inertia " + " ".join(f'{k}="{_f(x)}"' for k, x in g.items()) + "/>"
        return m.group(0).replace(mi.group(0), new)

    text = re.sub(r'<link\s+name="([^"]*)"\s*>(.*?)</link>', fix, text, flags=re.S)
    return text, changed


class MujocoMap:
    """Coordinates of a clusterdyn spanning tree and a MuJoCo model of the same robot, matched
    by joint name. For a state (q, v) of clusterdyn, qvel = T v with T a permutation except
    for free joints, whose linear rows are R v_body (R the body's rotation); then
    M_cd = T^T M_mj T and bias_cd = T^T (bias_mj + M_mj Tdot v), Tdot v = [R (omega x v_body);
    0] on the free joint's rows (the derivative of qvel's world-axes linear part)."""

    def __init__(self, cd_model, mj, mujoco):
        self.cd, self.mj, self.mujoco = cd_model, mj, mujoco
        self.joints = []
        for j in range(mj.njnt):
            name = mj.joint(j).name
            iq, nq, iv, nv = cd_model.joint_coordinates(name)
            self.joints.append((int(mj.jnt_type[j]), iq, nq, iv, nv, int(mj.jnt_qposadr[j]),
                                int(mj.jnt_dofadr[j])))
        assert mj.nv == cd_model.nv and len(self.joints) == cd_model.nbodies

    def state(self, q_cd, v_cd):
        """(qpos, qvel, T, Tdot_v) of a clusterdyn state."""
        FREE, BALL = self.mujoco.mjtJoint.mjJNT_FREE, self.mujoco.mjtJoint.mjJNT_BALL
        qpos, T = np.zeros(self.mj.nq), np.zeros((self.mj.nv, self.cd.nv))
        tdv = np.zeros(self.mj.nv)
        for jt, iq, nq, iv, nv, pq, pv in self.joints:
            x = q_cd[iq:iq + nq]
            if jt == FREE:
                R = quat_xyzw_matrix(x[3:7])
                qpos[pq:pq + 7] = np.r_[x[:3], x[6], x[3:6]]
                T[pv:pv + 3, iv + 3:iv + 6] = R  # world linear velocity = R v_body
                T[pv + 3:pv + 6, iv:iv + 3] = np.eye(3)  # body angular velocity
                w, vb = v_cd[iv:iv + 3], v_cd[iv + 3:iv + 6]
                tdv[pv:pv + 3] = R @ np.cross(w, vb)
            elif jt == BALL:
                qpos[pq:pq + 4] = np.r_[x[3], x[:3]]
                T[pv:pv + 3, iv:iv + 3] = np.eye(3)
            else:
                qpos[pq] = x[0]
                T[pv, iv] = 1.0
        return qpos, T @ v_cd, T, tdv


def quat_xyzw_matrix(q):
    x, y, z, w = q
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def random_state(model, ws, rng, spread=0.8):
    """A random spanning state (q, v) of a tree model: the neutral configuration moved by a
    random velocity (quaternions stay unit), random velocities."""
    q = ws.integrate(ws.neutral_configuration(), spread * rng.uniform(-1, 1, model.nv), 1.0)
    return q, rng.uniform(-1, 1, model.nv)


def gears_as_mimic(text):
    """URDF text in which every single-predecessor <coupling> whose two paths are one joint
    each (a gear: link A and rotor B on joints with the same parent link) is written as a
    standard <mimic joint="joint of A" multiplier="ratio"/> on B's joint, the <coupling>
    removed. r q_A = q_B with zero offset is the coupling's position relation
    (docs/urdfplus.md §3.2). Returns (text, number of gears), or (None, reason) when a
    coupling is not such a gear (belts, differentials)."""
    import xml.etree.ElementTree as ET
    root = ET.fromstring(re.sub(r"<\?xml[^>]*\?>", "", text))
    joint_of_child = {j.find("child").get("link"): j for j in root.iter("joint")}
    couplings = root.findall("coupling")
    for c in couplings:
        preds, succ = c.findall("predecessor"), c.find("successor")
        if len(preds) != 1:
            return None, f"coupling {c.get('name')} has {len(preds)} predecessors"
        ratio = preds[0].get("ratio") or (c.find("ratio").get("value")
                                          if c.find("ratio") is not None else None)
        ja, jb = joint_of_child[preds[0].get("link")], joint_of_child[succ.get("link")]
        if ja.find("parent").get("link") != jb.find("parent").get("link"):
            return None, f"coupling {c.get('name')} is not a gear on one parent"
        if jb.get("type") == "continuous" and ja.get("type") != "continuous":
            # Pinocchio's mimic needs equal configuration sizes (a continuous joint has
            # (cos, sin)): the rotor becomes a revolute joint with a wide limit, the same
            # dynamics.
            jb.set("type", "revolute")
            for old in jb.findall("limit"):
                jb.remove(old)
            ET.SubElement(jb, "limit", lower="-1e6", upper="1e6", effort="0", velocity="0")
        ET.SubElement(jb, "mimic", joint=ja.get("name"), multiplier=ratio, offset="0")
        root.remove(c)
    return ET.tostring(root, encoding="unicode"), len(couplings)


def name_map(pin_model, names):
    """Index maps of the non-mimic Pinocchio joints onto clusterdyn coordinate names (for
    position names and velocity names, spanning or independent): returns (qmap, vmap), lists of
    (Pinocchio index or slice start, kind, [clusterdyn names]) and the (nv_pin x len(velocity
    names)) matrix P with v_pin = P v_cd. `names` = (position_names, velocity_names)."""
    pos, vel = ({n: i for i, n in enumerate(names[0])}, {n: i for i, n in enumerate(names[1])})
    qmap, P = [], np.zeros((pin_model.nv, len(names[1])))
    for jid in range(1, pin_model.njoints):
        jm, n = pin_model.joints[jid], pin_model.names[jid]
        kind = jm.shortname()
        if kind == "JointModelMimic":
            continue
        if kind == "JointModelFreeFlyer":
            qn = [f"{n}:{c}" for c in ("px", "py", "pz", "qx", "qy", "qz", "qw")]
            vn = [f"{n}:{c}" for c in ("vx", "vy", "vz", "wx", "wy", "wz")]
        else:
            assert jm.nv == 1, kind
            qn, vn = [n], [n]
        qmap.append((jm.idx_q, kind, [pos[x] for x in qn]))
        for k, x in enumerate(vn):
            P[jm.idx_v + k, vel[x]] = 1.0
    assert np.allclose(P.sum(0), 1), "coordinates without a Pinocchio counterpart"
    return qmap, P


def pin_configuration(pin_model, qmap, q_cd):
    q = np.zeros(pin_model.nq)
    for iq, kind, idx in qmap:
        x = q_cd[idx]
        if kind.startswith("JointModelRUB"):
            q[iq:iq + 2] = math.cos(x[0]), math.sin(x[0])
        else:
            q[iq:iq + len(idx)] = x
    return q
