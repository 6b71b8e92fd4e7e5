"""A URDF+ file with kinematic loops as a Pinocchio 4.1 model plus rigid constraint models, for
test_multidof_pinocchio.py and tools/bench/multidof_pinocchio.py.

Pinocchio's URDF reader (urdfdom) knows no `spherical` joint type and no `<loop>` element, so the
file is read here (xml.etree) and the tree is built through Pinocchio's Python API, as
anchors_util.tree_pinocchio does for random trees: every joint in depth-first order (Pinocchio's
constraint Cholesky needs each subtree's coordinates contiguous), named as in the file, so that
anchors_util.PinocchioMap matches it with clusterdyn's spanning tree. revolute and continuous
joints become JointModelRevoluteUnaligned (one angle, as clusterdyn's continuous joint),
prismatic JointModelPrismaticUnaligned, spherical JointModelSpherical (quaternion x y z w, as
clusterdyn's); fixed joints append their link to the parent joint's body.

Each `<loop>` (docs/urdfplus.md, section 3.3: frames P = link A * predecessor origin and
S = link B * successor origin, the axis in P) becomes RigidConstraintModels between P (joint1)
and S (joint2), LOCAL frame:
- spherical: one CONTACT_3D (the origins of P and S coincide: 3 rows);
- fixed: one CONTACT_6D;
- revolute / continuous: two CONTACT_3D, at the origins and at the points P * (axis h) and
  S * (axis h), h = 0.1 m (6 rows for the loop's 5: one redundant row, so the multipliers are not
  unique; Pinocchio's proximal solver handles the redundancy, the accelerations stay unique);
- prismatic and planar loops have no CONTACT_3D / CONTACT_6D form: NotExpressible.
"""
import xml.etree.ElementTree as ET

import numpy as np

from anchors_util import _rpy_matrix

AXIS_OFFSET = 0.1  # m: the second point of a revolute loop, along its axis


class NotExpressible(ValueError):
    """A loop type without a Pinocchio RigidConstraintModel form."""


def _floats(text, default):
    return np.array([float(x) for x in text.split()]) if text else np.array(default, float)


def _origin(pin, el):
    """SE3 of an element's <origin xyz rpy> child (identity when absent)."""
    o = el.find("origin") if el is not None else None
    if o is None:
        return pin.SE3.Identity()
    xyz = _floats(o.get("xyz"), [0, 0, 0])
    rpy = _floats(o.get("rpy"), [0, 0, 0])
    return pin.SE3(_rpy_matrix(*rpy), xyz)


def _inertia(pin, link):
    el = link.find("inertial")
    if el is None:
        return pin.Inertia.Zero()
    M = _origin(pin, el)
    mass = float(el.find("mass").get("value"))
    a = {k: float(el.find("inertia").get(k, "0")) for k in
         ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")}
    I = np.array([[a["ixx"], a["ixy"], a["ixz"]], [a["ixy"], a["iyy"], a["iyz"]],
                  [a["ixz"], a["iyz"], a["izz"]]])
    return pin.Inertia(mass, M.translation, M.rotation @ I @ M.rotation.T)


def build(pin, path):
    """(model, constraints): the Pinocchio model of the file's spanning tree and a list of
    (loop name, loop type, [RigidConstraintModel, ...]) in the file's <loop> order."""
    root = ET.parse(str(path)).getroot()
    links = {l.get("name"): l for l in root.findall("link")}
    joints = root.findall("joint")
    children = {}
    child_links = set()
    for j in joints:
        children.setdefault(j.find("parent").get("link"), []).append(j)
        child_links.add(j.find("child").get("link"))
    roots = [n for n in links if n not in child_links]
    if len(roots) != 1:
        raise ValueError(f"{path}: expected one root link, found {roots}")
    model = pin.Model()
    model.name = root.get("name", "")
    frame = {roots[0]: (0, pin.SE3.Identity())}  # link -> (joint id, link frame in joint frame)
    stack = list(reversed(children.get(roots[0], [])))
    while stack:  # depth first
        j = stack.pop()
        parent, child = j.find("parent").get("link"), j.find("child").get("link")
        pj, pM = frame[parent]
        origin = pM * _origin(pin, j)
        jt = j.get("type")
        axis_el = j.find("axis")
        axis = _floats(axis_el.get("xyz") if axis_el is not None else None, [1, 0, 0])
        if jt == "fixed":
            jid, M = pj, origin
        else:
            if jt in ("revolute", "continuous"):
                jm = pin.JointModelRevoluteUnaligned(axis / np.linalg.norm(axis))
            elif jt == "prismatic":
                jm = pin.JointModelPrismaticUnaligned(axis / np.linalg.norm(axis))
            elif jt == "spherical":
                jm = pin.JointModelSpherical()
            else:
                raise NotExpressible(f"joint {j.get('name')}: type {jt}")
            jid, M = model.addJoint(pj, jm, origin, j.get("name")), pin.SE3.Identity()
        model.appendBodyToJoint(jid, _inertia(pin, links[child]), M)
        frame[child] = (jid, M)
        stack += reversed(children.get(child, []))
    constraints = []
    for lp in root.findall("loop"):
        pred, succ = lp.find("predecessor"), lp.find("successor")
        j1, M1 = frame[pred.get("link")]
        j2, M2 = frame[succ.get("link")]
        P, S = M1 * _origin(pin, pred), M2 * _origin(pin, succ)
        lt = lp.get("type")

        def rigid(kind, A, B):
            return pin.RigidConstraintModel(kind, model, j1, A, j2, B, pin.ReferenceFrame.LOCAL)

        if lt == "spherical":
            cms = [rigid(pin.ContactType.CONTACT_3D, P, S)]
        elif lt == "fixed":
            cms = [rigid(pin.ContactType.CONTACT_6D, P, S)]
        elif lt in ("revolute", "continuous"):
            axis_el = lp.find("axis")
            axis = _floats(axis_el.get("xyz") if axis_el is not None else None, [1, 0, 0])
            shift = pin.SE3(np.eye(3), AXIS_OFFSET * axis / np.linalg.norm(axis))
            cms = [rigid(pin.ContactType.CONTACT_3D, P, S),
                   rigid(pin.ContactType.CONTACT_3D, P * shift, S * shift)]
        else:
            raise NotExpressible(f"loop {lp.get('name')}: type {lt}")
        constraints.append((lp.get("name"), lt, cms))
    return model, constraints
