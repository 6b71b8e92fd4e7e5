"""The derivative functions through the C API and the Python wrappers (clusterdyn.h
"Derivatives", docs/derivatives.md): central finite differences with a Richardson step in the
tangent space (loop robots: independent joints integrated, dependent ones re-closed on the same
branch), bit-identical batches, cdyn_difference as the inverse of cdyn_integrate, and the
statuses. Pinocchio comparisons: test_derivatives_pinocchio.py."""
import numpy as np
import pytest

import clusterdyn as cd
from conftest import REPO, random_closed_state, shared_dir

MINI_CHEETAH = shared_dir() / "urdfplus" / "mini_cheetah.urdf"
LOOP_CASES = [REPO / "models" / "cd_four_bar.urdf", REPO / "models" / "cd_quadruped.urdf",
              pytest.param(MINI_CHEETAH, marks=pytest.mark.skipif(
                  not MINI_CHEETAH.is_file(), reason=f"{MINI_CHEETAH} is absent"))]
FD_TOL = 1e-7


def rel_close(actual, expected, what, tol=FD_TOL):
    scale = max(1.0, float(np.abs(expected).max()))
    err = float(np.abs(actual - expected).max())
    assert err <= tol * scale, f"{what}: max error {err:.3g} > {tol:g} x {scale:.3g}"


def at_perturbed(model, ws, q, dy, ydot):
    """The closed state whose independent joints are integrate(q, dy) (dy: ny, tangent of y),
    dependent joints re-closed from q (same branch), v = G ydot."""
    pidx, vidx = model.independent_indices()
    dq = np.zeros(model.nv)
    dq[vidx] = dy
    qs = ws.integrate(q, dq, 1.0)
    return ws.independent_to_spanning(qs[pidx], ydot, q_guess=q)


def fd_independent(model, ws, f, q, v, h=5e-4):
    """(d f / d y, d f / d ydot) by central differences, steps h and h / 2, Richardson."""
    _, vidx = model.independent_indices()
    ydot = v[vidx]
    ny, n = model.ny, np.size(f(q, v))
    dy, dyd = np.zeros((n, ny)), np.zeros((n, ny))

    def central(k, step, config):
        e = np.zeros(ny)
        e[k] = step
        if config:
            return (f(*at_perturbed(model, ws, q, e, ydot))
                    - f(*at_perturbed(model, ws, q, -e, ydot))) / (2 * step)
        zero = np.zeros(ny)
        return (f(*at_perturbed(model, ws, q, zero, ydot + e))
                - f(*at_perturbed(model, ws, q, zero, ydot - e))) / (2 * step)

    for k in range(ny):
        dy[:, k] = (4 * central(k, h / 2, True) - central(k, h, True)) / 3
        dyd[:, k] = central(k, 0.1, False)  # quadratic in ydot: exact at any step
    return dy, dyd


@pytest.mark.parametrize("path", LOOP_CASES, ids=lambda p: getattr(p, "stem", str(p)))
def test_cluster_derivatives_against_finite_differences(path):
    """d ydd / d(y, ydot) of CE-ABA, H^-1 H = I, d tau / d(y, ydot) of CE-RNEA, with fext, on
    loop robots through the C API (1e-7 relative)."""
    model = cd.Model.load(path)
    ws = model.workspace()
    rng = np.random.default_rng(7)
    q, v = random_closed_state(model, ws, rng)
    tau = rng.uniform(-2, 2, model.ny)
    fext = rng.uniform(-1, 1, (model.nbodies, 6))
    ydd, dydd_dy, dydd_dydot, Hinv = model.ce_aba_derivatives(q, v, tau, fext, return_ydd=True)
    np.testing.assert_array_equal(ydd, ws.ce_aba(q, v, tau, fext))
    dy, dyd = fd_independent(model, ws, lambda qq, vv: ws.ce_aba(qq, vv, tau, fext), q, v)
    rel_close(dydd_dy, dy, "d ydd / d y")
    rel_close(dydd_dydot, dyd, "d ydd / d ydot")
    H = ws.cluster_mass_matrix(q)
    rel_close(Hinv @ H, np.eye(model.ny), "H^-1 H", 1e-9)
    tau2, dtau_dy, dtau_dydot, H2 = model.ce_rnea_derivatives(q, v, ydd, fext, return_tau=True)
    rel_close(tau2, tau, "CE-RNEA(CE-ABA)", 1e-9)
    rel_close(H2, H, "H", 1e-12)
    dy, dyd = fd_independent(model, ws, lambda qq, vv: ws.ce_rnea(qq, vv, ydd, fext), q, v)
    rel_close(dtau_dy, dy, "d tau / d y")
    rel_close(dtau_dydot, dyd, "d tau / d ydot")


def four_bar_with_joint_dynamics():
    """models/cd_four_bar.xml with armature, a spring and a damper on each of its three joints
    (the crank independent, coupler and rocker dependent in the loop)."""
    xml = (REPO / "models" / "cd_four_bar.xml").read_text()
    for name, extra in (("crank_joint", 'armature="0.002" damping="0.05" stiffness="0.7" '
                                         'springref="0.2"'),
                        ("coupler_joint", 'armature="0.001" damping="0.03" stiffness="0.4"'),
                        ("rocker_joint", 'armature="0.003" damping="0.04" stiffness="0.5" '
                                         'springref="-0.1"')):
        tag = f'<joint name="{name}"'
        assert tag in xml
        xml = xml.replace(tag, f"{tag} {extra}")
    return cd.Model.from_string(xml)


@pytest.mark.parametrize("name", ["cd_four_bar.xml", "cd_geared_leg.xml"])
def test_cluster_derivatives_with_joint_dynamics(name):
    """The CE-ABA / CE-RNEA derivatives and cluster_minverse of MJCF models loaded with their
    joint dynamics (armature, springs, dampers; cd_four_bar.xml with them added on every joint of
    its loop) against finite differences of ce_aba / ce_rnea (1e-7 relative), H^-1 H = I with
    H = G^T (M + A) G from cluster_mass_matrix, and against the same model without them.
    (cd_rod_hip.xml: in tests/test_cluster_derivatives.cpp, whose two Richardson steps get below
    the closure's rounding noise, which these differences meet at 1e-7 on its rigid model too.)"""
    model = (four_bar_with_joint_dynamics() if name == "cd_four_bar.xml"
             else cd.Model.load(REPO / "models" / name))
    rigid = (cd.Model.from_string((REPO / "models" / name).read_text(), joint_dynamics=False)
             if name != "cd_four_bar.xml" else cd.Model.load(REPO / "models" / name))
    ws = model.workspace()
    rng = np.random.default_rng(11)
    q, v = random_closed_state(model, ws, rng)
    tau = rng.uniform(-0.5, 0.5, model.ny)
    ydd, dydd_dy, dydd_dydot, Hinv = model.ce_aba_derivatives(q, v, tau, return_ydd=True)
    np.testing.assert_array_equal(ydd, ws.ce_aba(q, v, tau))
    dy, dyd = fd_independent(model, ws, lambda qq, vv: ws.ce_aba(qq, vv, tau), q, v)
    rel_close(dydd_dy, dy, "d ydd / d y")
    rel_close(dydd_dydot, dyd, "d ydd / d ydot")
    H = ws.cluster_mass_matrix(q)
    rel_close(Hinv @ H, np.eye(model.ny), "H^-1 H", 1e-9)
    rel_close(model.cluster_minverse(q) @ H, np.eye(model.ny), "cluster_minverse H", 1e-9)
    tau2, dtau_dy, dtau_dydot, H2 = model.ce_rnea_derivatives(q, v, ydd, return_tau=True)
    rel_close(tau2, tau, "CE-RNEA(CE-ABA)", 1e-9)
    rel_close(H2, H, "H", 1e-12)
    dy, dyd = fd_independent(model, ws, lambda qq, vv: ws.ce_rnea(qq, vv, ydd), q, v)
    rel_close(dtau_dy, dy, "d tau / d y")
    rel_close(dtau_dydot, dyd, "d tau / d ydot")
    # The joint dynamics matter here: the rigid model's derivatives differ.
    _, r_dy, r_dyd, _ = rigid.ce_rnea_derivatives(q, v, ydd, return_tau=True)
    assert np.abs(dtau_dydot - r_dyd).max() > 1e-3
    assert np.abs(dtau_dy - r_dy).max() > 1e-3


def test_tree_derivatives_against_finite_differences():
    """d tau / d(q, v) of RNEA and d ddq / d(q, v) of ABA on a floating-base spanning tree, in
    the tangent space of cdyn_integrate."""
    model = cd.Model.load(REPO / "models" / "cd_quadruped_approximate.urdf")
    ws = model.workspace()
    rng = np.random.default_rng(3)
    q = ws.integrate(ws.neutral_configuration(), rng.uniform(-0.5, 0.5, model.nv), 1.0)
    v, a, tau = (rng.uniform(-1, 1, model.nv) for _ in range(3))
    dtau_dq, dtau_dv, M = model.rnea_derivatives(q, v, a)
    ddq_dq, ddq_dv, Minv = model.aba_derivatives(q, v, tau)
    rel_close(M, ws.crba(q), "M", 1e-12)
    rel_close(Minv, np.linalg.inv(ws.crba(q)), "M^-1", 1e-9)
    rel_close(model.minverse(q), Minv, "cdyn_minverse", 1e-12)
    n = model.nv
    for f, dq_ref, dv_ref, what in ((lambda qq, vv: ws.rnea(qq, vv, a), dtau_dq, dtau_dv, "RNEA"),
                                    (lambda qq, vv: ws.aba(qq, vv, tau), ddq_dq, ddq_dv, "ABA")):
        dq, dv = np.zeros((n, n)), np.zeros((n, n))
        for k in range(n):
            e = np.zeros(n)

            def c(h):
                e[:] = 0
                e[k] = h
                return (f(ws.integrate(q, e, 1.0), v) - f(ws.integrate(q, -e, 1.0), v)) / (2 * h)
            dq[:, k] = (4 * c(2.5e-4) - c(5e-4)) / 3
            e[:] = 0
            e[k] = 0.1
            dv[:, k] = (f(q, v + e) - f(q, v - e)) / 0.2
        rel_close(dq_ref, dq, f"d {what} / dq")
        rel_close(dv_ref, dv, f"d {what} / dv")


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("order", ["C", "F"])
def test_batches_are_bit_identical(threads, order):
    """Every batched derivative function equals its single call bit for bit, with fext, both
    layouts, 1 and 2 threads."""
    model = cd.Model.load(REPO / "models" / "cd_quadruped.urdf")
    ws = model.workspace()
    rng = np.random.default_rng(5)
    N = 7
    states = [random_closed_state(model, ws, rng) for _ in range(N)]
    Q = np.asarray([s[0] for s in states], order=order)
    V = np.asarray([s[1] for s in states], order=order)
    T = np.asarray(rng.uniform(-1, 1, (N, model.ny)), order=order)
    A = np.asarray(rng.uniform(-1, 1, (N, model.nv)), order=order)
    F = rng.uniform(-1, 1, (N, model.nbodies, 6))
    cases = [("ce_aba_derivatives", T, "return_ydd"), ("ce_rnea_derivatives", T, "return_tau"),
             ("aba_derivatives", A, "return_ddq"), ("rnea_derivatives", A, "return_tau")]
    for name, X, flag in cases:
        batch = getattr(model, name + "_batch")(Q, V, X, F, threads=threads)
        for i in range(N):
            single = getattr(model, name)(Q[i], V[i], X[i], F[i], **{flag: True})
            for b, s in zip(batch, single):
                np.testing.assert_array_equal(b[i], s, err_msg=f"{name} state {i}")


def test_batch_reports_the_failed_state():
    model = cd.Model.load(REPO / "models" / "cd_four_bar.urdf")
    ws = model.workspace()
    q, v = random_closed_state(model, ws, np.random.default_rng(1))
    Q, V, T = np.tile(q, (4, 1)), np.tile(v, (4, 1)), np.zeros((4, model.ny))
    V[2, 0] = np.nan
    with pytest.raises(cd.ClusterdynError) as e:
        model.ce_aba_derivatives_batch(Q, V, T, threads=2)
    assert e.value.status == cd.ERR_NON_FINITE and e.value.state == 2
    assert "v[0]" in str(e.value)


PLANAR_URDF = """<robot name="planar_arm">
  <link name="world"/>
  <link name="base"><inertial><mass value="1"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0"
    ixz="0" iyz="0"/></inertial></link>
  <link name="arm"><inertial><origin xyz="0.2 0 0"/><mass value="0.5"/><inertia ixx="0.01"
    iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="plane" type="planar"><parent link="world"/><child link="base"/>
    <origin xyz="0 0 0.3" rpy="0.2 0 0"/><axis xyz="0 0 1"/></joint>
  <joint name="elbow" type="revolute"><parent link="base"/><child link="arm"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="10" velocity="10"/></joint>
</robot>"""


def test_difference_inverts_integrate():
    """cdyn_difference(q0, integrate(q0, v, 1)) == v for floating, spherical, planar, prismatic
    and revolute joints (rotations below pi)."""
    for model in (cd.Model.load(REPO / "models" / "cd_quadruped_approximate.urdf"),
                  cd.Model.load(REPO / "models" / "cd_stewart.urdf"),
                  cd.Model.from_string(PLANAR_URDF)):
        assert {"floating", "spherical", "planar"} & set(model.joint_types)
        ws = model.workspace()
        rng = np.random.default_rng(11)
        for _ in range(5):
            q0 = ws.integrate(ws.neutral_configuration(), rng.uniform(-1, 1, model.nv), 1.0)
            v = rng.uniform(-1.2, 1.2, model.nv)
            np.testing.assert_allclose(ws.difference(q0, ws.integrate(q0, v, 1.0)), v,
                                       rtol=0, atol=1e-12)
        assert np.array_equal(ws.difference(q0, q0), np.zeros(model.nv))
    # A non-unit quaternion is refused, naming the argument.
    model = cd.Model.load(REPO / "models" / "cd_quadruped_approximate.urdf")
    ws = model.workspace()
    q0 = ws.neutral_configuration()
    q1 = q0.copy()
    q1[3:7] *= 1.1
    with pytest.raises(cd.ClusterdynError) as e:
        ws.difference(q0, q1)
    assert e.value.status == cd.ERR_NOT_UNIT_QUATERNION and "q1: " in str(e.value)


def test_statuses_and_messages():
    model = cd.Model.load(REPO / "models" / "cd_four_bar.urdf")
    other = cd.Model.load(REPO / "models" / "cd_six_bar.urdf")
    ws = model.workspace()
    dws = model.derivative_workspace()
    q, v = random_closed_state(model, ws, np.random.default_rng(2))
    L = cd.lib()
    n = model.ny
    out = np.zeros((n, n), order="F")
    p = out.ctypes.data_as(cd._core._D)
    qq, vv, tt = (np.ascontiguousarray(x, dtype=float) for x in (q, v, np.zeros(n)))
    P = lambda a: a.ctypes.data_as(cd._core._D)  # noqa: E731
    # ld too small: INVALID_SIZE naming ld, nothing written.
    out[:] = 7.0
    s = L.cdyn_ce_aba_derivatives(model.handle, dws.handle, P(qq), qq.size, P(vv), vv.size,
                                  P(tt), n, None, 0, None, 0, p, p, None, n - 1)
    assert s == cd.ERR_INVALID_SIZE and "ld is" in dws.last_error
    assert np.all(out == 7.0)
    # A wrong length names the argument.
    s = L.cdyn_ce_aba_derivatives(model.handle, dws.handle, P(qq), qq.size - 1, P(vv), vv.size,
                                  P(tt), n, None, 0, None, 0, p, p, None, n)
    assert s == cd.ERR_INVALID_SIZE and dws.last_error.startswith("q has length")
    # A required matrix NULL.
    s = L.cdyn_ce_aba_derivatives(model.handle, dws.handle, P(qq), qq.size, P(vv), vv.size,
                                  P(tt), n, None, 0, None, 0, None, p, None, n)
    assert s == cd.ERR_NULL_POINTER and "dydd_dy" in dws.last_error
    # Another model's derivative workspace.
    odws = other.derivative_workspace()
    s = L.cdyn_ce_aba_derivatives(model.handle, odws.handle, P(qq), qq.size, P(vv), vv.size,
                                  P(tt), n, None, 0, None, 0, p, p, None, n)
    assert s == cd.ERR_WORKSPACE_MISMATCH and "another model" in odws.last_error
    # An open state: CONSTRAINT_FAILURE; then the workspace still works.
    q_open = q.copy()
    q_open[0] += 0.3
    with pytest.raises(cd.ClusterdynError) as e:
        dws.ce_aba_derivatives(q_open, v, np.zeros(n))
    assert e.value.status == cd.ERR_CONSTRAINT_FAILURE
    ref = dws.ce_aba_derivatives(q, v, np.zeros(n))
    rel_close(ref[2] @ ws.cluster_mass_matrix(q), np.eye(n), "H^-1 H after a failure", 1e-9)
    # The model refuses to be freed while a derivative workspace exists.
    assert L.cdyn_model_free(other.handle) == cd.ERR_INVALID_ARGUMENT
    odws.close()
    dws.close()


def test_constrained_dynamics_derivatives_against_finite_differences():
    """ConstraintSet.constrained_dynamics_derivatives on the quadruped with four point feet, with
    fext: ydd and lam equal the dense constrained dynamics, and d ydd / d(tau, ydot, y) and
    d lam / d(tau, ydot) equal central differences of it (1e-6 relative)."""
    model = cd.Model.load(REPO / "models" / "cd_quadruped.urdf")
    ws = model.workspace()
    cset = model.constraint_set()
    for foot in ("lf_foot", "rf_foot", "lh_foot", "rh_foot"):
        cset.add_contact(foot, "point", frame="local_world_aligned")
    cws = cset.workspace()
    rng = np.random.default_rng(11)
    q, v = random_closed_state(model, ws, rng)
    tau = rng.uniform(-2, 2, model.ny)
    fext = rng.uniform(-1, 1, (model.nbodies, 6))

    def solve(qq, vv, tt):
        try:
            r = cws.constrained_dynamics_dense(qq, vv, tt, fext, tolerance=1e-13,
                                               max_iterations=200, on_not_converged="raise")
        except cd.NotConvergedError as e:
            # 1e-13 is below the rows' rounding floor (16 eps x their terms' size,
            # docs/constraints.md), which is reported, never Ok: the last iterate is as
            # converged as double precision allows, what the finite differences need.
            assert "rounding floor" in str(e), str(e)
            r = e.result
        return np.concatenate([r.ydd, r.lam])

    d = cset.constrained_dynamics_derivatives(q, v, tau, fext)
    ny, m = model.ny, cset.nrows
    assert isinstance(d, cd.ConstrainedDerivatives)
    assert d.dydd_dy.shape == (ny, ny) and d.dlam_dtau.shape == (m, ny) and d.rank == m == 12
    rel_close(np.concatenate([d.ydd, d.lam]), solve(q, v, tau), "(ydd, lam) vs dense", 1e-9)
    dtau = np.zeros((ny + m, ny))
    for k in range(ny):  # linear in tau: central differences are exact at any step
        e = np.zeros(ny)
        e[k] = 1.0
        dtau[:, k] = (solve(q, v, tau + e) - solve(q, v, tau - e)) / 2
    rel_close(d.dydd_dtau, dtau[:ny], "d ydd / d tau", 1e-6)
    rel_close(d.dlam_dtau, dtau[ny:], "d lam / d tau", 1e-6)
    dy, dyd = fd_independent(model, ws, lambda qq, vv: solve(qq, vv, tau), q, v)
    rel_close(d.dydd_dydot, dyd[:ny], "d ydd / d ydot", 1e-6)
    rel_close(d.dlam_dydot, dyd[ny:], "d lam / d ydot", 1e-6)
    rel_close(d.dydd_dy, dy[:ny], "d ydd / d y", 1e-6)
    # Bad arguments are named; the set is read-only once its derivative workspace exists.
    with pytest.raises(cd.ClusterdynError, match="rank_tolerance"):
        cset.constrained_dynamics_derivatives(q, v, tau, rank_tolerance=2.0)
    with pytest.raises(ValueError, match="tau"):
        cset.constrained_dynamics_derivatives(q, v, tau[1:])
    with pytest.raises(cd.ClusterdynError):
        cset.add_contact("lf_foot", "point")
    cws.close()
    cset.close()
