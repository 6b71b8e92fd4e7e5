"""Batched evaluation from Python: bit-identical to single calls, any thread count, both the
pool and per-call threads, C- and Fortran-ordered arrays."""
import numpy as np
import pytest

import clusterdyn as cd
from conftest import random_closed_state


def states(model, n, seed):
    rng = np.random.default_rng(seed)
    ws = model.workspace()
    Q, V = zip(*(random_closed_state(model, ws, rng) for _ in range(n)))
    return np.array(Q), np.array(V), rng.uniform(-1, 1, (n, model.ny)), rng


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("use_pool", [True, False])
def test_batch_equals_single_calls(model, threads, use_pool):
    N = 23
    Q, V, T, rng = states(model, N, threads)
    ws = model.workspace()
    fext = rng.uniform(-0.3, 0.3, (N, model.nbodies, 6))
    YDD, QDD = model.ce_aba_batch(Q, V, T, threads=threads, use_pool=use_pool, return_qdd=True)
    YDDF = model.ce_aba_batch(Q, V, T, fext=fext, threads=threads, use_pool=use_pool)
    TAU = model.ce_rnea_batch(Q, V, YDD, threads=threads, use_pool=use_pool)
    H = model.mass_matrix_batch(Q, threads=threads, use_pool=use_pool)
    Y, YD = zip(*(ws.spanning_to_independent(q, v) for q, v in zip(Q, V)))
    YDDI, QI, VI, QDDI = model.ce_aba_independent_batch(np.array(Y), np.array(YD), T,
                                                        threads=threads, use_pool=use_pool)
    qref = model.reference_configuration()
    for i in range(N):
        ydd, qdd = ws.ce_aba(Q[i], V[i], T[i], return_qdd=True)
        np.testing.assert_array_equal(YDD[i], ydd)
        np.testing.assert_array_equal(QDD[i], qdd)
        np.testing.assert_array_equal(YDDF[i], ws.ce_aba(Q[i], V[i], T[i], fext[i]))
        np.testing.assert_array_equal(TAU[i], ws.ce_rnea(Q[i], V[i], YDD[i]))
        np.testing.assert_array_equal(H[i], ws.cluster_mass_matrix(Q[i]))
        q, v = ws.independent_to_spanning(Y[i], YD[i], q_guess=qref)
        np.testing.assert_array_equal(QI[i], q)
        np.testing.assert_array_equal(VI[i], v)
        np.testing.assert_array_equal(YDDI[i], ws.ce_aba(q, v, T[i]))
    np.testing.assert_allclose(TAU, T, atol=1e-9)


def test_fortran_order_and_views(model):
    Q, V, T, _ = states(model, 9, 7)
    ref = model.ce_aba_batch(Q, V, T, threads=2)
    F = model.ce_aba_batch(np.asfortranarray(Q), np.asfortranarray(V), np.asfortranarray(T),
                           threads=2)
    assert F.flags.f_contiguous  # computed in the column-major layout, no copy
    np.testing.assert_array_equal(F, ref)
    # Mixed orders and strided views are converted (row-major).
    M = model.ce_aba_batch(np.asfortranarray(Q), V, T[:, :].copy(), threads=2, use_pool=False)
    np.testing.assert_array_equal(M, ref)
    H = model.mass_matrix_batch(np.asfortranarray(Q), threads=2)
    np.testing.assert_array_equal(H, model.mass_matrix_batch(Q, threads=1))


def test_empty_batch(model):
    out = model.ce_aba_batch(np.zeros((0, model.nq)), np.zeros((0, model.nv)),
                             np.zeros((0, model.ny)))
    assert out.shape == (0, model.ny)


def test_pool_object(model):
    pool = model.pool(2)
    assert pool is model.pool(2) and pool.threads == 2
    model._free_batch_resources()
    assert pool._h is None


def test_python_threads_with_own_workspaces(model):
    """ctypes releases the GIL: Python threads, one workspace each, agree with one thread."""
    import threading
    Q, V, T, _ = states(model, 40, 11)
    ref = model.ce_aba_batch(Q, V, T, threads=1)
    out = np.zeros_like(ref)

    def run(rows):
        ws = model.workspace()
        for i in rows:
            out[i] = ws.ce_aba(Q[i], V[i], T[i])

    threads = [threading.Thread(target=run, args=(range(k, 40, 4),)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    np.testing.assert_array_equal(out, ref)


def test_out_arrays_are_written_and_checked(model):
    """out= receives exactly what a new array would, in the inputs' layout; a wrong shape,
    dtype or order is refused with the argument's name."""
    Q, V, T, _ = states(model, 7, 5)
    YDD, QDD = model.ce_aba_batch(Q, V, T, threads=2, return_qdd=True)
    Y2, QDD2 = np.empty_like(YDD), np.empty_like(QDD)
    got = model.ce_aba_batch(Q, V, T, threads=2, return_qdd=True, out=(Y2, QDD2))
    assert got[0] is Y2 and got[1] is QDD2
    np.testing.assert_array_equal(Y2, YDD)
    np.testing.assert_array_equal(QDD2, QDD)
    TAU = np.empty_like(T)
    assert model.ce_rnea_batch(Q, V, YDD, out=TAU) is TAU
    np.testing.assert_array_equal(TAU, model.ce_rnea_batch(Q, V, YDD))
    H = model.mass_matrix_batch(Q)
    Hf = np.zeros(H.shape, order="F")
    assert model.mass_matrix_batch(np.asfortranarray(Q), out=Hf) is Hf
    np.testing.assert_array_equal(Hf, H)
    if model.ny > 1:  # (7, 1, 1) is both C- and Fortran-ordered
        with pytest.raises(ValueError, match="out must be a writeable C-ordered"):
            model.mass_matrix_batch(Q, out=Hf)
    with pytest.raises(ValueError, match="float64 array of shape"):
        model.mass_matrix_batch(Q, out=H.astype(np.float32))
    with pytest.raises(ValueError, match=r"out\[1\]"):
        model.ce_aba_batch(Q, V, T, return_qdd=True, out=(Y2, np.empty((7, model.nv + 1))))
    with pytest.raises(ValueError, match="out must hold 2"):
        model.ce_aba_batch(Q, V, T, return_qdd=True, out=Y2)


def test_mass_matrix_exactly_symmetric_with_armature():
    """The armature terms of a cluster block are rounded in another order on each side of the
    diagonal; H is returned exactly symmetric (the batch returns each state's column-major H as
    a row-major array, which relies on it)."""
    import os
    path = os.path.join(os.path.dirname(__file__), "..", "..", "models", "cd_geared_leg.xml")
    m = cd.Model.load(path)
    ws = m.workspace()
    rng = np.random.default_rng(3)
    Q = np.array([random_closed_state(m, ws, rng)[0] for _ in range(20)])
    for H in m.mass_matrix_batch(Q, threads=1):
        np.testing.assert_array_equal(H, H.T)
