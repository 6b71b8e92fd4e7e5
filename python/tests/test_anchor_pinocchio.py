"""clusterdyn against Pinocchio (Carpentier et al. 2019), the anchor installed from PyPI (pin),
through its Python API: forward kinematics, ABA, RNEA, CRBA, nonlinear effects and frame
Jacobians on the spanning trees of the bundled models, on the shared *_approximate robots and
on random trees (revolute, prismatic, spherical, fixed, floating base) that Pinocchio builds
from its own API; and with contacts (Sathya & Carpentier 2024; Pinocchio's RigidConstraintModel
and constraintDynamics): constraint Jacobian, Delassus matrix, accelerations and multipliers.
Coordinates are matched by joint name (anchors_util.PinocchioMap). Tolerance 1e-9 (relative to
the size of the compared quantity where it exceeds 1). See docs/anchors.md."""
import numpy as np
import pytest

import clusterdyn as cd
from anchors_util import (PinocchioMap, close, gears_as_mimic, name_map, pin_configuration,
                          random_state, random_tree, symmetric_from_upper, tree_pinocchio,
                          tree_urdf)
from conftest import MODELS, REPO, random_closed_state, shared_dir

pin = pytest.importorskip("pinocchio", reason="Pinocchio (PyPI package pin) is not installed: "
                          "Pinocchio anchor tests skipped")

APPROX = sorted((shared_dir() / "urdfplus").glob("*_approximate.urdf"))
NO_SHARED = f"{shared_dir()} has no urdfplus/*_approximate.urdf: shared anchor tests skipped"


# ---- the models ------------------------------------------------------------------------------

RANDOM = {  # name: (seed, moving links, joint types, floating base)
    "random_revolute": (11, 7, ("revolute",), False),
    "random_mixed": (12, 8, ("revolute", "prismatic", "spherical"), False),
    "random_floating": (13, 8, ("revolute", "prismatic", "spherical"), True),
    "random_floating_spherical": (14, 5, ("spherical",), True),
}
# Random trees whose root link (with mass) gets clusterdyn's floating_base=True (the bundled
# fixed-base models have massless roots: a free joint there is singular, and ABA says so).
ROOT_JOINT = {"random_root_joint": (15, 6, ("revolute", "prismatic", "spherical"))}


def load_pair(case):
    """(clusterdyn model, Pinocchio model) of one case: a bundled model's spanning tree and
    Pinocchio's URDF parser (it ignores the URDF+ elements and, without mimic=True, <mimic>),
    a shared approximate robot, or a random tree (URDF text for clusterdyn, Pinocchio's API for
    Pinocchio)."""
    kind, key = case
    if kind == "random":
        seed, n, types, floating = RANDOM[key]
        links = random_tree(np.random.default_rng(seed), n, types, floating, nfixed=2)
        return cd.Model.from_string(tree_urdf(links, key)), tree_pinocchio(pin, links)
    if kind == "root_joint":  # clusterdyn's floating_base option, Pinocchio's FreeFlyer root
        seed, n, types = ROOT_JOINT[key]
        links = random_tree(np.random.default_rng(seed), n, types, True, nfixed=1)
        return (cd.Model.from_string(tree_urdf(links, key, root_joint=True), floating_base=True),
                tree_pinocchio(pin, links, root_joint=True))
    return (cd.Model.load(key, ignore_constraints=True), pin.buildModelFromUrdf(str(key)))


def _bundled(path):
    """A bundled model's case; skipped (visibly) when standard URDF cannot say it: Pinocchio's
    URDF reader (urdfdom) has no spherical joint type, which the URDF+ models of mechanisms with
    ball joints use (random trees cover spherical joints against Pinocchio's API)."""
    if 'type="spherical"' in path.read_text():
        return pytest.param(("bundled", path), marks=pytest.mark.skip(
            reason=f"{path.name}: spherical <joint> (URDF+), not readable by Pinocchio's URDF parser"))
    return ("bundled", path)


CASES = ([_bundled(p) for p in MODELS] + [("approx", p) for p in APPROX]
         + [("random", k) for k in RANDOM] + [("root_joint", k) for k in ROOT_JOINT])
IDS = [k if isinstance(k, str) else k.stem
       for k in ((c.values[0] if hasattr(c, "values") else c)[1] for c in CASES)]
if not APPROX:  # reported as skipped, with the reason
    CASES, IDS = CASES + [pytest.param(None, marks=pytest.mark.skip(reason=NO_SHARED))], IDS + [
        "shared_approximate"]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_tree_algorithms(case):
    """FK placements of every frame, ABA, RNEA, CRBA (full symmetric M), nonlinear effects,
    gravity, and every frame's Jacobian, velocity, spatial and classical acceleration (local,
    world, local world-aligned) at random states."""
    model, pm = load_pair(case)
    pmap = PinocchioMap(model, pm)
    pd = pm.createData()
    ws = model.workspace()
    rng = np.random.default_rng(2024)
    frame_ids = {name: pm.getFrameId(name, pin.FrameType.BODY) for name in model.frame_names}
    assert all(fid < pm.nframes for fid in frame_ids.values()), "a link frame is missing"
    refs = {"local": pin.LOCAL, "world": pin.WORLD,
            "local_world_aligned": pin.LOCAL_WORLD_ALIGNED}
    for _ in range(3):
        q, v = random_state(model, ws, rng)
        a, tau = rng.uniform(-1, 1, model.nv), rng.uniform(-5, 5, model.nv)
        qp, vp = pmap.q(q), pmap.v(v)

        # Forward kinematics: the world pose of every link frame (fused links included).
        ws.forward_kinematics(q, v)
        pin.forwardKinematics(pm, pd, qp, vp)
        pin.updateFramePlacements(pm, pd)
        for name, fid in frame_ids.items():
            R, p = ws.frame_placement(name)
            close(R, pd.oMf[fid].rotation, f"{name} rotation")
            close(p, pd.oMf[fid].translation, f"{name} position")

        # Dynamics.
        close(ws.aba(q, v, tau), pmap.v_back(pin.aba(pm, pd, qp, vp, pmap.v(tau))), "ABA")
        close(ws.rnea(q, v, a), pmap.v_back(pin.rnea(pm, pd, qp, vp, pmap.v(a))), "RNEA")
        M = ws.crba(q)
        close(M, pmap.matrix(symmetric_from_upper(pin.crba(pm, pd, qp))), "CRBA")
        assert np.array_equal(M, M.T), "M is not exactly symmetric"
        close(ws.nonlinear_effects(q, v), pmap.v_back(pin.nonLinearEffects(pm, pd, qp, vp)),
              "nonlinear effects")
        close(ws.generalized_gravity(q), pmap.v_back(pin.computeGeneralizedGravity(pm, pd, qp)),
              "gravity")

        # Frame Jacobians, velocities and accelerations in the three reference frames.
        ws.forward_kinematics(q, v, a)
        pin.forwardKinematics(pm, pd, qp, vp, pmap.v(a))
        pin.computeJointJacobians(pm, pd, qp)
        pin.updateFramePlacements(pm, pd)
        for name, fid in frame_ids.items():
            if model.frame_bodies[model.frame_index[name]] < 0:
                continue  # a frame on the fixed root: J = 0 in both, no velocity
            for ref, pref in refs.items():
                J = ws.frame_jacobian(name, ref)
                close(J, pmap.jacobian(pin.getFrameJacobian(pm, pd, fid, pref)),
                      f"{name} Jacobian ({ref})")
                close(ws.frame_velocity(name, ref), J @ v, f"{name} velocity ({ref})")
                acc = pin.getFrameAcceleration(pm, pd, fid, pref)
                close(ws.frame_acceleration(name, ref), np.r_[acc.angular, acc.linear],
                      f"{name} spatial acceleration ({ref})")
                # clusterdyn's classical acceleration is the frame origin's in WORLD too
                # (capi/clusterdyn.h), Pinocchio's WORLD one that of the body point at the world
                # origin: compare WORLD with Pinocchio's LOCAL_WORLD_ALIGNED.
                cref = pin.LOCAL_WORLD_ALIGNED if ref == "world" else pref
                close(ws.frame_classical_acceleration(name, ref),
                      pin.getFrameClassicalAcceleration(pm, pd, fid, cref).linear,
                      f"{name} classical acceleration ({ref})")


# ---- contacts --------------------------------------------------------------------------------

def contact_cases():
    """(model case of load_pair, [(frame, type "point"/"weld"[, offset])], reference frame):
    3D contacts at the knee and foot frames and 6D contacts at the feet of the approximate
    robots; points and welds on random trees."""
    by_name = {p.stem: ("approx", p) for p in APPROX}
    quadruped = ("bundled", REPO / "models" / "cd_quadruped_approximate.urdf")
    feet = [(f"{leg}_foot", "point") for leg in ("lf", "rf", "lh", "rh")]  # fused fixed links
    out = [(quadruped, feet, "local"),
           (quadruped, feet[:2] + [("trunk", "weld")], "local_world_aligned"),
           # Random trees: contact sets with full row rank (smallest Delassus eigenvalue
           # >= 0.1 at the test states; most link pairs of these bushy trees are redundant,
           # D singular, and Pinocchio at mu = 0 then has no solution).
           (("random", "random_floating"), [("link8", "point"), ("link10", "weld")], "local"),
           (("random", "random_floating"), [("link9", "point"), ("link6", "weld")],
            "local_world_aligned"),
           (("random", "random_floating_spherical"), [("link6", "point"), ("link7", "point")],
            "local_world_aligned"),
           (("root_joint", "random_root_joint"), [("link5", "point"), ("link6", "point")],
            "local"),
           (("random", "random_mixed"), [("link9", "point")], "local")]
    if "mini_cheetah_approximate" in by_name:
        knees = [(f"{leg}_knee_link", "point") for leg in ("FR", "FL", "HR", "HL")]
        # The feet: points 0.19 m down the shank (knee link), added with an explicit placement.
        feet = [(f"{leg}_knee_link", "point", (0.0, 0.0, -0.19)) for leg in ("FR", "HL")]
        out += [(by_name["mini_cheetah_approximate"], knees, "local"),
                (by_name["mini_cheetah_approximate"], knees, "local_world_aligned"),
                (by_name["mini_cheetah_approximate"], knees[1:3] + feet, "local")]
    if "mit_humanoid_approximate" in by_name:
        feet = [("left_ankle_link", "weld"), ("right_ankle_link", "weld")]
        out += [(by_name["mit_humanoid_approximate"], feet, "local"),
                (by_name["mit_humanoid_approximate"],
                 [("left_ankle_link", "point"), ("right_ankle_link", "point")],
                 "local_world_aligned"),
                (by_name["mit_humanoid_approximate"], feet, "local_world_aligned")]
    if "tello_humanoid_approximate" in by_name:
        out += [(by_name["tello_humanoid_approximate"],
                 [("left-foot", "weld"), ("right-foot", "point"), ("left-elbow", "point")],
                 "local")]
    return out


CONTACTS = contact_cases()
CONTACT_IDS = [f"{c[0][1] if isinstance(c[0][1], str) else c[0][1].stem}-{c[2]}-{k}"
               for k, c in enumerate(CONTACTS)]
if not APPROX:
    CONTACTS.append(pytest.param(None, None, None, marks=pytest.mark.skip(reason=NO_SHARED)))
    CONTACT_IDS.append("shared_approximate")


def pin_contacts(pm, contacts, ref):
    """Pinocchio's RigidConstraintModels of clusterdyn's contacts: frame A = the link frame
    (its parent joint and placement), frame B = the world (joint 0)."""
    models, datas = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
    for frame, kind, *offset in contacts:
        f = pm.frames[pm.getFrameId(frame, pin.FrameType.BODY)]
        ct = pin.ContactType.CONTACT_3D if kind == "point" else pin.ContactType.CONTACT_6D
        rf = pin.LOCAL if ref == "local" else pin.LOCAL_WORLD_ALIGNED
        shift = np.array(offset[0], dtype=float) if offset else np.zeros(3)
        placement = f.placement * pin.SE3(np.eye(3), shift)
        models.append(pin.RigidConstraintModel(ct, pm, f.parentJoint, placement, rf))
    for c in models:
        datas.append(c.createData())
    return models, datas


def row_permutation(contacts):
    """Index map: clusterdyn row k is Pinocchio row perm[k]. A weld is [angular; linear] in
    clusterdyn and [linear; angular] in Pinocchio; points are [x y z] in both."""
    perm, start = [], 0
    for _, kind, *_offset in contacts:
        n = 3 if kind == "point" else 6
        perm += ([start + 3, start + 4, start + 5, start, start + 1, start + 2] if n == 6
                 else [start, start + 1, start + 2])
        start += n
    return np.array(perm)


def rotations(pm, pd, contacts):
    """Block-diagonal world rotations of the contact frames, in Pinocchio's row order."""
    blocks = []
    for frame, kind, *offset in contacts:
        R = pd.oMf[pm.getFrameId(frame, pin.FrameType.BODY)].rotation
        blocks += [R] * (1 if kind == "point" else 2)
    out = np.zeros((3 * len(blocks), 3 * len(blocks)))
    for k, R in enumerate(blocks):
        out[3 * k:3 * k + 3, 3 * k:3 * k + 3] = R
    return out


@pytest.mark.parametrize("case,contacts,ref", CONTACTS, ids=CONTACT_IDS)
def test_contacts(case, contacts, ref):
    """Constraint Jacobian, Delassus matrix, constrained accelerations and multipliers of
    clusterdyn's constrainedABA, proxPV and dense solver against Pinocchio's
    constraintDynamics (mu = 0: the exact KKT solution) on random states."""
    model, pm = load_pair(case)
    pmap, pd = PinocchioMap(model, pm), pm.createData()
    cset = model.constraint_set()
    for k, (frame, kind, *offset) in enumerate(contacts):
        if offset:  # a point at offset in the link's body (its own frame: a moving link)
            T = np.eye(4)
            T[:3, 3] = offset[0]
            cset.add(f"c{k}", kind, frame, placement1=T, frame=ref)
        else:
            cset.add_contact(frame, kind, frame=ref)
    cws = cset.workspace()
    ws = model.workspace()
    cms, cds = pin_contacts(pm, contacts, ref)
    pin.initConstraintDynamics(pm, pd, cms, cds)
    pd_local = pm.createData()
    cms_local, cds_local = pin_contacts(pm, contacts, "local")
    pin.initConstraintDynamics(pm, pd_local, cms_local, cds_local)
    perm = row_permutation(contacts)
    rng = np.random.default_rng(7)
    for _ in range(3):
        q, v = random_state(model, ws, rng, spread=0.4)
        tau = rng.uniform(-5, 5, model.ny)
        if ref != "local" and any(c[1] == "weld" for c in contacts):
            # A world-aligned weld's linear rows: clusterdyn constrains d/dt (R v_local), the
            # classical acceleration in world axes, Pinocchio R (d/dt v_local), the spatial
            # one; they differ by R (omega x v_local), 0 when the rows' velocity J v is 0
            # (checked). Compare on such velocities.
            J, _ = cws.jacobian(q, v)
            v = v - np.linalg.pinv(J) @ (J @ v)
        qp, vp = pmap.q(q), pmap.v(v)

        # Pinocchio 4.1's computeDelassusMatrix returns the LOCAL matrix for
        # LOCAL_WORLD_ALIGNED constraints too (checked: equal to the last bit), so world-aligned
        # sets compare with Pinocchio's LOCAL Delassus turned to world axes, R D R^T (R: the
        # block-diagonal rotations of the contact frames, from Pinocchio's FK).
        Dp = pin.computeDelassusMatrix(pm, pd_local, qp, cms_local, cds_local, 0.0)
        if ref != "local":
            pin.framesForwardKinematics(pm, pd_local, qp)
            R = rotations(pm, pd_local, contacts)
            Dp = R @ Dp @ R.T
        D = cws.delassus(q)
        close(D, Dp[np.ix_(perm, perm)], "Delassus")
        assert np.linalg.eigvalsh(D)[0] > 1e-4, "redundant contact set: pick other frames"

        J, gamma = cws.jacobian(q, v)
        pin.computeJointJacobians(pm, pd, qp)
        pin.framesForwardKinematics(pm, pd, qp)
        settings = pin.ProximalSettings(1e-14, 0.0, 1)
        ap = pin.constraintDynamics(pm, pd, qp, vp, pmap.v(tau), cms, cds, settings)
        lam_p = pd.lambda_c.copy()[perm]
        Jp = pin.getConstraintsJacobian(pm, pd, cms, cds)
        close(J, (Jp @ pmap.P)[perm], "constraint Jacobian")

        qdd_p = pmap.v_back(ap)
        close(J @ qdd_p + gamma, np.zeros(len(perm)), "Pinocchio's accelerations in clusterdyn's "
              "rows (J qdd + gamma = 0)")
        # The stopping test bounds the rows' accelerations |J qdd + gamma|, not lambda
        # (lambda error ~ D^-1 x residual). constrainedABA: mu = 1e-3 and 1e-12 keep lambda
        # within 2e-11 relative here (7.5e-10 at the default mu = 1e-4 and 1e-11; its
        # rounding in the free directions grows like eps/mu, docs/constraints.md). proxPV and
        # the dense solver: 1e-11 (their rounding floor is ~1e-11 at |qdd| ~ 1e4).
        for solve, mu, tol in ((cws.constrained_aba, 1e-3, 1e-12), (cws.prox_pv, 1e-4, 1e-11),
                               (cws.constrained_dynamics_dense, 1e-4, 1e-11)):
            try:
                r = solve(q, v, tau, mu=mu, tolerance=tol, max_iterations=200,
                          on_not_converged="raise")
            except cd.NotConvergedError as e:
                # A tolerance below the rows' rounding floor (16 eps x their terms' size,
                # docs/constraints.md) is reported, never Ok: the last iterate is what the
                # checks below hold against Pinocchio.
                assert "rounding floor" in str(e), str(e)
                r = e.result
            close(r.ydd, qdd_p, f"{solve.__name__} accelerations")
            close(r.lam, lam_p, f"{solve.__name__} multipliers")


# ---- gears and mimics: the cluster tree against Pinocchio's mimic joints ----------------------

GEARED = [REPO / "models" / n for n in ("cd_quadruped.urdf", "cd_geared_chain.urdf",
                                        "cd_mimic_gripper.urdf")] + [
    p for p in (shared_dir() / "urdfplus" / n for n in ("mini_cheetah.urdf",
                                                        "revolute_rotor_chain.urdf"))
    if p.is_file()]
GEARED_IDS = [p.stem for p in GEARED]
if len(GEARED) == 3:
    GEARED_IDS.append("shared_geared")
    GEARED.append(pytest.param(None, marks=pytest.mark.skip(
        reason=f"{shared_dir()}/urdfplus/mini_cheetah.urdf not found: shared gear tests skipped")))


@pytest.mark.parametrize("path", GEARED, ids=GEARED_IDS)
def test_gears_and_mimics_as_mimic_joints(path):
    """A gear coupling r q_joint = q_rotor (zero offset) is a mimic joint: clusterdyn loads the
    file with its <coupling> and <mimic> elements (constraint embedding), Pinocchio a copy
    whose couplings are rewritten as <mimic multiplier=r> on the rotor joints
    (anchors_util.gears_as_mimic), with mimic=True. Then H = G^T M G, C, CE-RNEA and CE-ABA in
    independent coordinates, matched by name, equal Pinocchio's CRBA, nonlinear effects, RNEA
    and H^-1 (tau - C) (Pinocchio 4.1's ABA refuses mimic joints)."""
    original = path.read_text()
    text, ngears = gears_as_mimic(original)
    assert text is not None, ngears
    model = cd.Model.load(path)
    assert model.nrelations == ngears + original.count("<mimic ")
    pm = pin.buildModelFromXML(text, mimic=True)
    pd = pm.createData()
    assert pm.nv == model.ny
    qmap, Py = name_map(pm, (model.independent_position_names, model.independent_velocity_names))
    iq, iv = model.independent_indices()
    ws = model.workspace()
    rng = np.random.default_rng(3)
    for _ in range(3):
        q, v = random_closed_state(model, ws, rng, spread=0.6)
        ydd, tau = rng.uniform(-1, 1, model.ny), rng.uniform(-2, 2, model.ny)
        qp, vp = pin_configuration(pm, qmap, q[iq]), Py @ v[iv]
        H = Py.T @ symmetric_from_upper(pin.crba(pm, pd, qp)) @ Py
        C = Py.T @ pin.nonLinearEffects(pm, pd, qp, vp)
        close(ws.cluster_mass_matrix(q), H, "H")
        close(ws.cluster_bias(q, v), C, "C")
        close(ws.ce_rnea(q, v, ydd), Py.T @ pin.rnea(pm, pd, qp, vp, Py @ ydd), "CE-RNEA")
        close(ws.ce_aba(q, v, tau), np.linalg.solve(H, tau - C), "CE-ABA")
