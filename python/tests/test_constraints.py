"""Constraint sets and proximal constrained dynamics (clusterdyn.ConstraintSet,
ConstraintWorkspace) against independent oracles:

* J and gamma against the frame kinematics (velocity and classical acceleration of the feet at
  qdd = G ydot... = g, i.e. ydd = 0);
* Delassus D = J H^-1 J^T (H from cluster_mass_matrix), its damped inverse by numpy;
* constrainedABA == proxPV == dense == the KKT system [H -J^T; J 0] solved by numpy, the rows
  held (J ydd + gamma = 0), qdd = G ydd + g, CE-RNEA(ydd) = tau + J^T lam (also with fext);
* wrenches of LOCAL point contacts = (0, 0, 0, lam rows), of world-aligned welds = lam rows;
* the four-bar and six-bar with their loops embedded (CE-ABA) vs cut (proxPV): the same
  spanning accelerations, also with the cut loop rebuilt by hand with add() and 4 x 4 poses.
"""
import gc
import warnings

import numpy as np
import pytest
from conftest import REPO, random_closed_state

import clusterdyn as cd

QUADRUPED = REPO / "models" / "cd_quadruped.urdf"
FEET = ("lf_foot", "rf_foot", "lh_foot", "rh_foot")

has_wrenches = pytest.mark.skipif(not hasattr(cd.lib(), "cdyn_constraint_wrenches"),
                                  reason="the library does not export cdyn_constraint_wrenches")


@pytest.fixture
def quadruped():
    """(model, workspace, set of 4 LOCAL point contacts, constraint workspace)."""
    model = cd.Model.load(QUADRUPED)
    ws = model.workspace()
    cset = model.constraint_set()
    for foot in FEET:
        cset.add_contact(foot)
    cws = cset.workspace()
    yield model, ws, cset, cws
    cset.close()
    ws.close()
    model.close()


def kkt(H, C, J, gamma, tau):
    """Dense oracle: [H -J^T; J 0] [ydd; lam] = [tau - C; -gamma]."""
    n, m = H.shape[0], J.shape[0]
    K = np.block([[H, -J.T], [J, np.zeros((m, m))]])
    x = np.linalg.solve(K, np.concatenate([tau - C, -gamma]))
    return x[:n], x[n:]


# ---- sets ------------------------------------------------------------------------------------

def test_set_sizes_and_names(quadruped):
    model, _, cset, cws = quadruped
    assert cset.size == len(cset) == 4 and cset.nrows == cws.nrows == 12
    assert cset.names == tuple(f + "_contact3d" for f in FEET)
    assert cset.row_names[11] == "rh_foot_contact3d:lin_z"
    assert cset.row_names[:3] == tuple(f"lf_foot_contact3d:lin_{c}" for c in "xyz")
    assert "4 constraints, 12 rows" in repr(cset)
    s = model.constraint_set()
    assert s.size == s.nrows == 0 and s.row_names == ()
    assert s.add_contact("lf_foot", "weld", "local_world_aligned") == 0
    assert s.add("knee", "revolute", "lf_shank", np.eye(4), "lf_thigh") == 1
    assert s.add("pl", cd.CONSTRAINT_TYPES.index("planar"), 0, kp=10, kd=2) == 2
    assert s.add("pr", "prismatic", "trunk", (np.eye(3), [0, 0, 0.1]), None, None) == 3
    assert s.add_contact("rf_foot", name="rf") == 4
    assert s.names == ("lf_foot_contact6d", "knee", "pl", "pr", "rf")
    assert s.nrows == 6 + 5 + 3 + 5 + 3 == sum(cd.CONSTRAINT_ROWS[t] for t in
                                               ("weld", "revolute", "planar", "prismatic",
                                                "point"))
    comps = [r.split(":")[1] for r in s.row_names]
    assert comps[:6] == ["ang_x", "ang_y", "ang_z", "lin_x", "lin_y", "lin_z"]
    assert comps[6:11] == ["ang_x", "ang_y", "lin_x", "lin_y", "lin_z"]
    assert comps[11:14] == ["ang_x", "ang_y", "lin_z"]
    s.close()


def test_set_errors(quadruped):
    model, _, cset, _ = quadruped
    s = model.constraint_set()
    s.add_contact("lf_foot")

    def status(fn, *args, **kw):
        with pytest.raises(cd.ClusterdynError) as e:
            fn(*args, **kw)
        return e.value.status, e.value.message

    st, msg = status(s.add_contact, "lf_foot")
    assert st == cd.ERR_INVALID_ARGUMENT and "exists already" in msg
    st, msg = status(s.add_contact, "no_such_link")
    assert st == cd.ERR_NOT_FOUND and "no_such_link" in msg
    st, msg = status(s.add, "c", "point", 99)
    assert st == cd.ERR_INVALID_INDEX and "body1 = 99" in msg
    st, msg = status(s.add, "c", "revolute", 1, frame="local_world_aligned")
    assert st == cd.ERR_INVALID_ARGUMENT
    st, msg = status(s.add, "c", "point", 1, kp=-1.0)
    assert st == cd.ERR_INVALID_ARGUMENT
    bad = np.eye(4)
    bad[0, 0] = 2.0  # not a rotation
    st, msg = status(s.add, "c", "point", 1, bad)
    assert st == cd.ERR_INVALID_ARGUMENT
    bad = np.eye(4)
    bad[3, 0] = 1.0  # last row not (0, 0, 0, 1): column-major layout reaches the library
    st, msg = status(s.add, "c", "point", 1, None, -1, bad)
    assert st == cd.ERR_INVALID_ARGUMENT and "placement2 is not homogeneous" in msg
    bad = np.eye(4)
    bad[0, 3] = np.nan
    st, msg = status(s.add, "c", "point", 1, bad)
    assert st == cd.ERR_NON_FINITE and "placement1[12]" in msg
    assert s.size == 1  # rejected constraints left the set unchanged
    with pytest.raises(ValueError, match=r"placement1 must be a 4 x 4 homogeneous matrix"):
        s.add("c", "point", 1, np.eye(3))
    with pytest.raises(TypeError, match="real numbers"):
        s.add("c", "point", 1, np.eye(4, dtype=complex))
    with pytest.raises(ValueError, match="constraint type must be one of"):
        s.add("c", "hinge", 1)
    with pytest.raises(KeyError, match="no body named 'nope'"):
        s.add("c", "point", "nope")
    with pytest.raises(ValueError, match="reference frame must be one of"):
        s.add_contact("rf_foot", frame="aligned")
    # Read-only once a workspace exists.
    w = s.workspace()
    st, msg = status(s.add_contact, "rf_foot")
    assert st == cd.ERR_INVALID_ARGUMENT and "workspace" in msg
    w.close()
    s.close()


# ---- matrices --------------------------------------------------------------------------------

def test_jacobian_against_frame_kinematics(quadruped):
    model, ws, _, cws = quadruped
    rng = np.random.default_rng(1)
    for _ in range(3):
        q, v = random_closed_state(model, ws, rng)
        J, gamma = cws.jacobian(q, v)
        assert J.shape == (12, model.ny) and gamma.shape == (12,)
        G, g = ws.constraint_matrices(q, v)
        _, vi = model.independent_indices()
        ws.forward_kinematics(q, v, g)  # qdd = G ydd + g at ydd = 0
        for k, foot in enumerate(FEET):
            rows = slice(3 * k, 3 * k + 3)
            np.testing.assert_allclose(J[rows] @ v[vi], ws.frame_velocity(foot, "local")[3:],
                                       atol=1e-12)
            np.testing.assert_allclose(gamma[rows],
                                       ws.frame_classical_acceleration(foot, "local"),
                                       atol=1e-12)
        J0, gamma0 = cws.jacobian(q)  # v = None: zero velocity
        np.testing.assert_array_equal(J0, J)
        np.testing.assert_allclose(gamma0, 0, atol=1e-14)


def test_delassus_and_damped_inverse(quadruped):
    model, ws, _, cws = quadruped
    q, _ = random_closed_state(model, ws, np.random.default_rng(2))
    J, _ = cws.jacobian(q)
    H = ws.cluster_mass_matrix(q)
    D = cws.delassus(q)
    assert D.shape == (12, 12) and D.flags.c_contiguous
    np.testing.assert_allclose(D, J @ np.linalg.solve(H, J.T), atol=1e-10)
    np.testing.assert_allclose(D, D.T, atol=1e-12)
    assert np.linalg.eigvalsh(D).min() > 0
    for rho in (1e-6, 1e-2):
        Dinv = cws.damped_delassus_inverse(q, rho)
        np.testing.assert_allclose(Dinv @ (D + rho * np.eye(12)), np.eye(12), atol=1e-6)


# ---- constrained dynamics --------------------------------------------------------------------

def test_solvers_agree_with_kkt(quadruped):
    model, ws, _, cws = quadruped
    rng = np.random.default_rng(3)
    for trial in range(3):
        q, v = random_closed_state(model, ws, rng)
        tau = rng.uniform(-2, 2, model.ny)
        fext = rng.uniform(-1, 1, (model.nbodies, 6)) if trial == 2 else None
        ra = cws.constrained_aba(q, v, tau, fext)
        rp = cws.prox_pv(q, v, tau, fext)
        rd = cws.constrained_dynamics_dense(q, v, tau, fext)
        for r in (ra, rp, rd):
            assert isinstance(r, cd.ProximalResult)
            assert r.converged and r.status == cd.OK and r.residual <= 1e-10
            assert r.ydd.shape == (model.ny,) and r.qdd.shape == (model.nv,)
            assert r.lam.shape == (12,)
        np.testing.assert_allclose(ra.ydd, rp.ydd, atol=1e-8)
        np.testing.assert_allclose(rd.ydd, rp.ydd, atol=1e-8)
        np.testing.assert_allclose(ra.lam, rp.lam, atol=1e-6)
        np.testing.assert_allclose(rd.lam, rp.lam, atol=1e-6)
        J, gamma = cws.jacobian(q, v)
        # The rows hold; qdd = G ydd + g; CE-RNEA of the solution = tau + J^T lam.
        np.testing.assert_allclose(J @ rp.ydd + gamma, 0, atol=1e-9)
        G, g = ws.constraint_matrices(q, v)
        np.testing.assert_allclose(rp.qdd, G @ rp.ydd + g, atol=1e-9)
        np.testing.assert_allclose(ws.ce_rnea(q, v, rp.ydd, fext), tau + J.T @ rp.lam,
                                   atol=1e-7)
        if fext is None:
            ydd, lam = kkt(ws.cluster_mass_matrix(q), ws.cluster_bias(q, v), J, gamma, tau)
            np.testing.assert_allclose(rp.ydd, ydd, atol=1e-8)
            np.testing.assert_allclose(rp.lam, lam, atol=1e-6 * (1 + np.abs(lam).max()))
    # Standing at rest without efforts: the ground carries the weight (about 1/4 per foot).
    q = model.reference_configuration()
    r = cws.constrained_aba(q, np.zeros(model.nv), np.zeros(model.ny))
    np.testing.assert_allclose(r.lam[2::3].sum(), model.total_mass * 9.81, rtol=1e-6)


def test_warm_start_and_settings(quadruped):
    model, ws, _, cws = quadruped
    q, v = random_closed_state(model, ws, np.random.default_rng(4))
    tau = np.zeros(model.ny)
    cold = cws.prox_pv(q, v, tau)
    warm = cws.prox_pv(q, v, tau, warm_start=True)
    assert warm.iterations <= cold.iterations and warm.converged
    np.testing.assert_allclose(warm.ydd, cold.ydd, atol=1e-9)
    assert cd.default_proximal_settings() == {"mu": 1e-4, "tolerance": 1e-10,
                                              "max_iterations": 50, "warm_start": False}
    with pytest.raises(cd.ClusterdynError) as e:
        cws.prox_pv(q, v, tau, mu=-1.0)
    assert e.value.status == cd.ERR_INVALID_ARGUMENT and "mu" in e.value.message
    with pytest.raises(TypeError, match="max_iterations must be an integer"):
        cws.prox_pv(q, v, tau, max_iterations=2.5)
    with pytest.raises(TypeError, match="mu must be a real number"):
        cws.prox_pv(q, v, tau, mu="small")


def test_not_converged(quadruped):
    model, ws, _, cws = quadruped
    q, v = random_closed_state(model, ws, np.random.default_rng(5))
    tau = np.zeros(model.ny)
    tight = dict(tolerance=1e-300, max_iterations=0)
    with pytest.warns(cd.NotConvergedWarning, match="not converged"):
        r = cws.prox_pv(q, v, tau, **tight)
    assert not r.converged and r.status == cd.ERR_NOT_CONVERGED and r.iterations == 0
    assert np.isfinite(r.ydd).all() and np.isfinite(r.lam).all() and r.residual > 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r2 = cws.constrained_aba(q, v, tau, on_not_converged="ignore", **tight)
    assert not r2.converged
    with pytest.raises(cd.NotConvergedError) as e:
        cws.constrained_dynamics_dense(q, v, tau, on_not_converged="raise", **tight)
    assert isinstance(e.value, cd.ClusterdynError) and e.value.status == cd.ERR_NOT_CONVERGED
    assert not e.value.result.converged and e.value.result.lam.shape == (12,)
    with pytest.raises(ValueError, match="on_not_converged must be one of"):
        cws.prox_pv(q, v, tau, on_not_converged="maybe")


def test_compute_errors(quadruped):
    model, ws, _, cws = quadruped
    q, v, tau = model.reference_configuration(), np.zeros(model.nv), np.zeros(model.ny)
    with pytest.raises(ValueError, match=r"q must have shape \(31,\), got \(30,\)"):
        cws.delassus(q[:-1])
    with pytest.raises(ValueError, match=r"v must have shape \(30,\)"):
        cws.jacobian(q, v[:3])
    with pytest.raises(ValueError, match=r"tau must have shape \(18,\), got \(30,\)"):
        cws.prox_pv(q, v, v)
    with pytest.raises(ValueError, match=r"fext must have shape \(25, 6\)"):
        cws.constrained_aba(q, v, tau, fext=np.zeros((6, 25)))
    with pytest.raises(TypeError, match="real numbers"):
        cws.prox_pv(q.astype(complex), v, tau)
    with pytest.raises(TypeError, match="rho must be a real number"):
        cws.damped_delassus_inverse(q, None)
    bad = v.copy()
    bad[4] = np.inf
    with pytest.raises(cd.ClusterdynError) as e:
        cws.prox_pv(q, bad, tau)
    assert e.value.status == cd.ERR_NON_FINITE and "v[4]" in e.value.message
    with pytest.raises(cd.ClusterdynError) as e:
        cws.damped_delassus_inverse(q, 0.0)
    assert e.value.status == cd.ERR_INVALID_ARGUMENT
    # constrainedABA takes contact sets only; proxPV any set.
    s = model.constraint_set()
    s.add("knee", "point", "lf_shank", None, "lf_thigh")
    w = s.workspace()
    with pytest.raises(cd.ClusterdynError) as e:
        w.constrained_aba(q, v, tau)
    assert e.value.status == cd.ERR_INVALID_ARGUMENT and "proxPv" in e.value.message
    s.close()


@has_wrenches
def test_wrenches(quadruped):
    model, ws, _, cws = quadruped
    np.testing.assert_array_equal(cws.wrenches(), 0)  # before the first solve
    q, v = random_closed_state(model, ws, np.random.default_rng(6))
    r = cws.prox_pv(q, v, np.zeros(model.ny))
    W = cws.wrenches()
    assert W.shape == (4, 6)
    np.testing.assert_array_equal(W[:, :3], 0)
    np.testing.assert_allclose(W[:, 3:], r.lam.reshape(4, 3), atol=1e-12)
    # World-aligned welds: the wrench is the multiplier itself (moment; force in world axes).
    s = model.constraint_set()
    for foot in FEET[:2]:
        s.add_contact(foot, "weld", "local_world_aligned")
    w = s.workspace()
    # The welds' Delassus matrix has an eigenvalue of 3e-5 < mu = 1e-4 here: the proximal
    # iterations contract by about mu / (mu + 3e-5) each and need ~100 to reach 1e-10.
    r = w.prox_pv(q, v, np.zeros(model.ny), max_iterations=200)
    assert r.converged
    np.testing.assert_allclose(w.wrenches(), r.lam.reshape(2, 6), atol=1e-12)
    s.close()


# ---- cut loops -------------------------------------------------------------------------------

def by_name(names_from, values, names_to):
    index = {n: i for i, n in enumerate(names_from)}
    return np.array([values[index[n]] for n in names_to])


@pytest.mark.parametrize("name", ["cd_four_bar", "cd_six_bar"])
def test_embedded_and_cut_loops_agree(name):
    path = REPO / "models" / f"{name}.urdf"
    emb, cut = cd.Model.load(path), cd.Model.load(path, cut_loops=True)
    assert cut.nloops == 0 and cut.ny == cut.nv and emb.nloops > 0
    wse, wsc = emb.workspace(), cut.workspace()
    cset = cut.cut_loop_constraints()
    assert cset.names == emb.loop_names
    cws = cset.workspace()
    rng = np.random.default_rng(8)
    _, vi = emb.independent_indices()
    for _ in range(4):
        qe, ve = random_closed_state(emb, wse, rng)
        tau = rng.uniform(-2, 2, emb.ny)
        _, qdd_e = wse.ce_aba(qe, ve, tau, return_qdd=True)
        tau_span = np.zeros(emb.nv)
        tau_span[vi] = tau
        qc = by_name(emb.position_names, qe, cut.position_names)
        vc = by_name(emb.velocity_names, ve, cut.velocity_names)
        tc = by_name(emb.velocity_names, tau_span, cut.velocity_names)
        r = cws.prox_pv(qc, vc, tc, tolerance=1e-11, max_iterations=200)
        assert r.converged
        np.testing.assert_allclose(r.qdd, by_name(emb.velocity_names, qdd_e, cut.velocity_names),
                                   atol=1e-8)
    cset.close()
    wse.close(), wsc.close()
    emb.close(), cut.close()


def test_cut_loop_rebuilt_with_add():
    """The four-bar's revolute loop added by hand (4 x 4 poses from the embedded model's loop
    frame P, turned so that A's z is the loop axis, URDF +y): the same rows and dynamics as
    cut_loop_constraints; a transposed rotation would leave the wrong axis free."""
    path = REPO / "models" / "cd_four_bar.urdf"
    emb, cut = cd.Model.load(path), cd.Model.load(path, cut_loops=True)
    wse, wsc = emb.workspace(), cut.workspace()
    q, v = random_closed_state(emb, wse, np.random.default_rng(9))
    info = emb.loop_info("coupler_to_rocker")
    pre, suc = emb.body_names[info["predecessor"]], emb.body_names[info["successor"]]
    wsc.forward_kinematics(q)  # same positions on the cut model (no loop, same tree)
    z_to_y = np.array([[1.0, 0, 0, 0], [0, 0, 1, 0], [0, -1, 0, 0], [0, 0, 0, 1]])
    A_in_pre = info["placement"] @ z_to_y
    np.testing.assert_allclose(A_in_pre[:3, 2], [0, 1, 0])
    A_world = wsc.frame_placement_matrix(pre) @ A_in_pre
    B_in_succ = np.linalg.solve(wsc.frame_placement_matrix(suc), A_world)
    B_in_succ[3] = [0, 0, 0, 1]
    hand = cut.constraint_set()
    hand.add("by_hand", "revolute", pre, A_in_pre, suc, B_in_succ)
    auto = cut.cut_loop_constraints()
    wh, wa = hand.workspace(), auto.workspace()
    # Closed: zero row velocity at a closed state, same rows as the automatic set.
    Jh, gh = wh.jacobian(q, v)
    Ja, ga = wa.jacobian(q, v)
    np.testing.assert_allclose(Jh @ v, 0, atol=1e-10)
    np.testing.assert_allclose(Jh, Ja, atol=1e-10)
    np.testing.assert_allclose(gh, ga, atol=1e-10)
    # The transposed rotation (the row-major / column-major mix-up) frees the wrong axis.
    A_wrong = A_in_pre.copy()
    A_wrong[:3, :3] = A_in_pre[:3, :3].T
    with cut.constraint_set() as wrong:
        wrong.add("wrong", "revolute", pre, A_wrong, suc, B_in_succ)
        assert np.abs(wrong.workspace().jacobian(q, v)[0] - Ja).max() > 0.1
    tau = [0.3, 0.0, 0.0]  # on the crank, the embedded model's independent joint
    rh = wh.prox_pv(q, v, tau, tolerance=1e-11, max_iterations=200)
    ra = wa.prox_pv(q, v, tau, tolerance=1e-11, max_iterations=200)
    np.testing.assert_allclose(rh.qdd, ra.qdd, atol=1e-8)
    # The embedded loop's joint force (Forces, on the successor, P axes) is minus the cut
    # loop's multipliers (force on body1 = the predecessor, A axes): lin_x lin_y lin_z rows.
    _, qdd_e = wse.ce_aba(q, v, tau[:1], return_qdd=True)
    np.testing.assert_allclose(ra.qdd, qdd_e, atol=1e-8)
    with emb.forces() as forces:
        f_loop = forces.after_ce_aba(wse, tau[:1]).loop_wrenches()[0]
    R = z_to_y[:3, :3]  # A's axes in P's
    np.testing.assert_allclose(ra.lam[2:], -R.T @ f_loop[3:], atol=1e-8)
    assert np.abs(f_loop[3:]).max() > 0.1
    if hasattr(cd.lib(), "cdyn_constraint_wrenches"):
        np.testing.assert_allclose(wa.wrenches()[0], np.concatenate(
            [-R.T @ f_loop[:3], -R.T @ f_loop[3:]]), atol=1e-8)
    hand.close(), auto.close()
    wse.close(), wsc.close()
    emb.close(), cut.close()


def test_empty_set_is_ce_aba():
    model = cd.Model.load(QUADRUPED)
    ws = model.workspace()
    cset = model.cut_loop_constraints()  # no loop: empty
    assert cset.size == cset.nrows == 0
    cws = cset.workspace()
    q, v = random_closed_state(model, ws, np.random.default_rng(10))
    tau = np.random.default_rng(11).uniform(-1, 1, model.ny)
    r = cws.prox_pv(q, v, tau)
    assert r.lam.shape == (0,) and r.converged
    np.testing.assert_allclose(r.ydd, ws.ce_aba(q, v, tau), atol=1e-10)
    assert cws.jacobian(q)[0].shape == (0, model.ny) and cws.delassus(q).shape == (0, 0)
    cset.close()
    ws.close()
    model.close()


# ---- lifetimes -------------------------------------------------------------------------------

def test_freeing_order():
    model = cd.Model.load(QUADRUPED)
    cset = model.constraint_set()
    cset.add_contact("lf_foot")
    w1, w2 = cset.workspace(), cset.workspace()
    # The model refuses to go while a set exists; the set closes its workspaces first.
    with pytest.raises(cd.ClusterdynError) as e:
        model.close()
    assert e.value.status == cd.ERR_INVALID_ARGUMENT and "constraint sets" in e.value.message
    w1.close()
    cset.close()
    cset.close()  # idempotent
    for w in (w1, w2):
        with pytest.raises(ValueError, match="closed"):
            w.delassus(model.reference_configuration())
    with pytest.raises(ValueError, match="constraint set has been closed"):
        cset.add_contact("rf_foot")
    model.close()
    # Context managers in the natural order, and objects dropped in any order: a workspace
    # keeps its set alive, the set its model (nothing freed early, no crash).
    with cd.Model.load(QUADRUPED) as m2, m2.constraint_set() as s2:
        s2.add_contact("lf_foot")
        with s2.workspace() as w:
            assert w.delassus(m2.reference_configuration()).shape == (3, 3)
    m3 = cd.Model.load(QUADRUPED)
    s3 = m3.constraint_set()
    s3.add_contact("rh_foot")
    w3 = s3.workspace()
    q = m3.reference_configuration()
    del m3, s3
    gc.collect()
    assert w3.delassus(q).shape == (3, 3)
    del w3
    gc.collect()


# ---- batched constrained dynamics --------------------------------------------------------------

has_batch = pytest.mark.skipif(not hasattr(cd.lib(), "cdyn_batch_constrained_dynamics"),
                               reason="the library predates batched constrained dynamics")


def closed_states(model, ws, n, seed):
    rng = np.random.default_rng(seed)
    Q, V = np.zeros((n, model.nq)), np.zeros((n, model.nv))
    for i in range(n):
        Q[i], V[i] = random_closed_state(model, ws, rng)
    return Q, V, rng.uniform(-5, 5, (n, model.ny)), rng.uniform(-1, 1, (n, model.nbodies, 6))


@has_batch
@pytest.mark.parametrize("solver", ["constrained_aba", "prox_pv", "dense"])
def test_batch_equals_single_calls(quadruped, solver):
    """Every state of the batch (pool and started threads, C and Fortran order) equals the
    single call bit for bit, and satisfies the dense KKT system."""
    model, ws, cset, cws = quadruped
    Q, V, TAU, F = closed_states(model, ws, 13, 4)
    single = {"constrained_aba": cws.constrained_aba, "prox_pv": cws.prox_pv,
              "dense": cws.constrained_dynamics_dense}[solver]
    refs = [single(Q[i], V[i], TAU[i], fext=F[i]) for i in range(len(Q))]
    for use_pool in (True, False):
        for order in ("C", "F"):
            r = cset.constrained_dynamics_batch(
                np.asarray(Q, order=order), np.asarray(V, order=order),
                np.asarray(TAU, order=order), fext=F, solver=solver, threads=2,
                use_pool=use_pool)
            assert isinstance(r, cd.BatchProximalResult)
            assert r.ydd.shape == (13, model.ny) and r.lam.shape == (13, cset.nrows)
            for i, ref in enumerate(refs):
                assert np.array_equal(r.ydd[i], ref.ydd)
                assert np.array_equal(r.qdd[i], ref.qdd)
                assert np.array_equal(r.lam[i], ref.lam)
                assert r.iterations[i] == ref.iterations and r.residual[i] == ref.residual
            assert r.converged.all() and (r.status == cd.OK).all()
    # Independent oracle on one state: the KKT system with fext folded into tau by CE-RNEA.
    i = 5
    H = ws.cluster_mass_matrix(Q[i])
    J, gamma = cws.jacobian(Q[i], V[i])
    C = ws.ce_rnea(Q[i], V[i], np.zeros(model.ny), fext=F[i])
    ydd, lam = kkt(H, C, J, gamma, TAU[i])
    tol = 1e-6 if solver == "constrained_aba" else 1e-8
    assert np.allclose(r.ydd[i], ydd, atol=tol * max(1.0, np.abs(ydd).max()))


@has_batch
def test_batch_not_converged_and_errors(quadruped):
    model, ws, cset, cws = quadruped
    Q, V, TAU, _ = closed_states(model, ws, 6, 8)
    kw = dict(solver="constrained_aba", max_iterations=0, tolerance=1e-14, threads=2)
    with pytest.warns(cd.NotConvergedWarning, match="did not converge"):
        r = cset.constrained_dynamics_batch(Q, V, TAU, **kw)
    assert not r.converged.all() and np.isfinite(r.ydd).all()
    assert set(r.status[~r.converged]) == {cd.ERR_NOT_CONVERGED}
    with pytest.raises(cd.NotConvergedError) as e:
        cset.constrained_dynamics_batch(Q, V, TAU, on_not_converged="raise", **kw)
    assert np.array_equal(e.value.result.ydd, r.ydd)
    # A non-finite state: the library's message and the state's index.
    V[3, 2] = np.nan
    with pytest.raises(cd.ClusterdynError, match=r"v\[2\].*\(state 3\)") as e:
        cset.constrained_dynamics_batch(Q, V, TAU, threads=2)
    assert e.value.status == cd.ERR_NON_FINITE
    assert e.value.state == 3
    with pytest.raises(ValueError, match="solver"):
        cset.constrained_dynamics_batch(Q, V, TAU, solver="pgs")
    with pytest.raises(ValueError, match=r"TAU has 5 rows"):
        cset.constrained_dynamics_batch(Q, V, TAU[:5])
    with pytest.raises(cd.ClusterdynError, match="mu") as e:
        cset.constrained_dynamics_batch(Q, V, TAU, mu=-1.0)
    assert e.value.status == cd.ERR_INVALID_ARGUMENT
