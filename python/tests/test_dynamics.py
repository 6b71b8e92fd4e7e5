"""Tree and cluster-tree dynamics through the package: the same bits as the C functions called
directly through ctypes, and the identities of the equations of motion on random states."""
import ctypes as C

import numpy as np
import pytest

import clusterdyn as cd
from conftest import LOOP_MODELS, random_closed_state

TOL = 1e-9


def raw(model, ws, name, *arrays_and_sizes):
    """Calls a C function directly on (pointer, length) pairs; numpy outputs are written."""
    args = []
    for x in arrays_and_sizes:
        if isinstance(x, np.ndarray):
            args.append(x.ctypes.data_as(C.POINTER(C.c_double)))
        else:
            args.append(x)
    status = getattr(cd.lib(), name)(model.handle, ws.handle, *args)
    assert status == cd.OK, ws.last_error


def test_tree_dynamics(model):
    rng = np.random.default_rng(1)
    ws = model.workspace()
    q = ws.integrate(ws.neutral_configuration(), rng.uniform(-1, 1, model.nv), 0.7)
    v, tau, a = (rng.uniform(-1, 1, model.nv) for _ in range(3))
    fext = rng.uniform(-0.5, 0.5, (model.nbodies, 6))
    ddq = ws.aba(q, v, tau, fext)
    np.testing.assert_allclose(ws.rnea(q, v, ddq, fext), tau, atol=TOL)
    M = ws.crba(q)
    np.testing.assert_allclose(M, M.T, atol=0)
    ddq0 = ws.aba(q, v, tau)
    np.testing.assert_allclose(M @ ddq0 + ws.nonlinear_effects(q, v), tau, atol=TOL)
    np.testing.assert_allclose(ws.rnea(q, np.zeros(model.nv), np.zeros(model.nv)),
                               ws.generalized_gravity(q), atol=TOL)
    assert ws.kinetic_energy(q, v) == pytest.approx(0.5 * v @ M @ v, abs=TOL)
    # Bits: the wrapper passes the arguments as the C API expects them.
    out = np.zeros(model.nv)
    raw(model, ws, "cdyn_aba", q, model.nq, v, model.nv, tau, model.nv, None, 0, out, model.nv)
    np.testing.assert_array_equal(out, ddq0)
    raw(model, ws, "cdyn_rnea", q, model.nq, v, model.nv, a, model.nv, None, 0, out, model.nv)
    np.testing.assert_array_equal(out, ws.rnea(q, v, a))


def test_kinematics(model):
    rng = np.random.default_rng(2)
    ws = model.workspace()
    q = ws.integrate(ws.neutral_configuration(), rng.uniform(-1, 1, model.nv), 0.5)
    v = rng.uniform(-1, 1, model.nv)
    ws.forward_kinematics(q, v)
    last = model.frame_names[-1]
    R, p = ws.frame_placement(last)
    np.testing.assert_allclose(R.T @ R, np.eye(3), atol=1e-12)
    T = ws.frame_placement_matrix(model.frame_index[last])
    np.testing.assert_array_equal(T[:3, :3], R)
    np.testing.assert_array_equal(T[:3, 3], p)
    J = ws.frame_jacobian(last, "world")
    np.testing.assert_allclose(J @ v, ws.frame_velocity(last, cd.WORLD), atol=TOL)
    J2 = ws.compute_frame_jacobian(q, last, "local_world_aligned")
    ws.forward_kinematics(q, v)
    np.testing.assert_allclose(J2 @ v, ws.frame_velocity(last, "local_world_aligned"), atol=TOL)
    assert ws.center_of_mass(q).shape == (3,)


def test_cluster_dynamics(model):
    rng = np.random.default_rng(3)
    ws = model.workspace()
    for _ in range(5):
        q, v = random_closed_state(model, ws, rng)
        tau = rng.uniform(-1, 1, model.ny)
        ydd, qdd = ws.ce_aba(q, v, tau, return_qdd=True)
        np.testing.assert_allclose(ws.ce_rnea(q, v, ydd), tau, atol=TOL)
        H, Cb = ws.cluster_mass_matrix(q), ws.cluster_bias(q, v)
        np.testing.assert_allclose(H @ ydd + Cb, tau, atol=TOL)
        G, g = ws.constraint_matrices(q, v)
        np.testing.assert_allclose(G @ ydd + g, qdd, atol=TOL)
        y, ydot = ws.spanning_to_independent(q, v)
        np.testing.assert_allclose(G @ ydot, v, atol=TOL)
        # H = G^T M G with the spanning tree's M (Featherstone 2008; Jain, inter-body forces).
        np.testing.assert_allclose(G.T @ ws.crba(q) @ G, H, atol=TOL)
        # Efforts on the spanning joints act through G^T.
        tau_s = rng.uniform(-1, 1, model.nv)
        np.testing.assert_allclose(ws.ce_aba_spanning_forces(q, v, tau_s),
                                   ws.ce_aba(q, v, G.T @ tau_s), atol=TOL)
        # Independent coordinates in, same dynamics out.
        ydd2, q2, v2, qdd2 = ws.ce_aba_independent(y, ydot, tau, )
        np.testing.assert_allclose(q2, q, atol=1e-8)
        np.testing.assert_allclose(ydd2, ydd, atol=1e-6)
        # Bits against the C function.
        out = np.zeros(model.ny)
        raw(model, ws, "cdyn_ce_aba", q, model.nq, v, model.nv, tau, model.ny, None, 0, out,
            model.ny, None, 0)
        np.testing.assert_array_equal(out, ydd)
        for k in range(model.nclusters):
            r = model.cluster_coordinates(k)
            Gk, gk = ws.cluster_constraint_matrices(k, q, v)
            np.testing.assert_array_equal(
                Gk, G[r["idx_v"]:r["idx_v"] + r["nv"], r["idx_y"]:r["idx_y"] + r["ny"]])
            np.testing.assert_array_equal(gk, g[r["idx_v"]:r["idx_v"] + r["nv"]])


@pytest.mark.parametrize("path", LOOP_MODELS, ids=[p.stem for p in LOOP_MODELS])
def test_loop_closure_and_projection(path):
    model = cd.Model.load(path)
    ws = model.workspace()
    rng = np.random.default_rng(4)
    q, v = random_closed_state(model, ws, rng)
    y, ydot = ws.spanning_to_independent(q, v)
    q2 = ws.solve_loop_closure(y, q_guess=q)
    np.testing.assert_allclose(q2, q, atol=1e-9)
    iterations, residual = ws.last_loop_closure()
    assert 0 <= iterations <= 50 and residual <= 1e-10
    q3, v3 = ws.independent_to_spanning(y, ydot, q_guess=q)
    np.testing.assert_allclose(v3, v, atol=1e-9)
    if model.nv > model.ny:
        # An open state is refused; the projection closes it again.
        qo, vo = q + 0.05, v + 0.5
        qo = ws.normalize_configuration(qo)
        with pytest.raises(cd.ClusterdynError) as e:
            ws.ce_aba(qo, vo, np.zeros(model.ny))
        assert e.value.status == cd.ERR_CONSTRAINT_FAILURE and "violates" in e.value.message
        qp, vp = ws.project_to_constraints(qo, vo)
        ws.ce_aba(qp, vp, np.zeros(model.ny))


def test_energy_is_conserved_by_the_dynamics():
    """Unforced four-bar: the total energy drifts only at the integrator's order
    (checks ce_aba, kinetic and potential energy together)."""
    from conftest import REPO
    model = cd.Model.load(REPO / "models" / "cd_four_bar.urdf")
    ws = model.workspace()
    q = model.reference_configuration()
    y, ydot = ws.spanning_to_independent(q, np.zeros(model.nv))

    def energy(y, ydot, guess):
        q, v = ws.independent_to_spanning(y, ydot, q_guess=guess)
        return ws.kinetic_energy(q, v) + ws.potential_energy(q), q

    e0, q = energy(y, ydot, q)
    dt = 1e-4
    for _ in range(2000):  # 0.2 s, RK2 (midpoint)
        ydd, q, _, _ = ws.ce_aba_independent(y, ydot, np.zeros(model.ny))
        ym, ydm = y + 0.5 * dt * ydot, ydot + 0.5 * dt * ydd
        yddm, _, _, _ = ws.ce_aba_independent(ym, ydm, np.zeros(model.ny))
        y, ydot = y + dt * ydm, ydot + dt * yddm
    e1, _ = energy(y, ydot, q)
    assert abs(e1 - e0) < 1e-5 * max(1.0, abs(e0))
    assert np.abs(ydot).max() > 0.1  # it moved


def test_caller_memory_workspace(model):
    """A workspace built in caller memory (cdyn_workspace_init_in) gives the same bits."""
    rng = np.random.default_rng(5)
    heap, mem = model.workspace(), model.workspace(caller_memory=True)
    assert len(mem._memory) == model.workspace_size() > 0
    q, v = random_closed_state(model, heap, rng)
    tau = rng.uniform(-1, 1, model.ny)
    np.testing.assert_array_equal(mem.ce_aba(q, v, tau), heap.ce_aba(q, v, tau))
    mem.close()
    assert mem._memory is None
