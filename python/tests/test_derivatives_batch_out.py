"""The derivative batches write the library's output in place: out= arrays are filled and
returned (no copy, no transpose afterwards), bit-identical to fresh arrays and to single calls,
in both input layouts; wrong out arrays are refused with the argument named. The constrained
dynamics derivatives of N states (clusterdyn.distributed's local loop) equal N single calls."""
import numpy as np
import pytest

import clusterdyn as cd
from clusterdyn import _batch_loops
from conftest import REPO, random_closed_state

CASES = [("ce_aba_derivatives", "ny", "return_ydd"), ("ce_rnea_derivatives", "ny", "return_tau"),
         ("aba_derivatives", "nv", "return_ddq"), ("rnea_derivatives", "nv", "return_tau")]


def states(model, N, seed):
    ws = model.workspace()
    rng = np.random.default_rng(seed)
    S = [random_closed_state(model, ws, rng) for _ in range(N)]
    return np.array([s[0] for s in S]), np.array([s[1] for s in S]), rng


@pytest.mark.parametrize("order", ["C", "F"])
def test_out_equals_fresh_and_single_calls(order):
    model = cd.Model.load(REPO / "models" / "cd_quadruped.urdf")
    N = 6
    Q, V, rng = states(model, N, 4)
    Q, V = np.asarray(Q, order=order), np.asarray(V, order=order)
    F = rng.uniform(-1, 1, (N, model.nbodies, 6))
    for name, size, flag in CASES:
        n = getattr(model, size)
        X = np.asarray(rng.uniform(-1, 1, (N, n)), order=order)
        fresh = getattr(model, name + "_batch")(Q, V, X, F, threads=2)
        # The matrices are the library's column-major output, viewed (not copied).
        for M in fresh[1:]:
            assert M.shape == (N, n, n)
            assert (M.flags.f_contiguous if order == "F" else
                    M.transpose(0, 2, 1).flags.c_contiguous and not M.flags.c_contiguous)
        if order == "F":
            out = (np.full((N, n), np.nan, order="F"),) + tuple(
                np.full((N, n, n), np.nan, order="F") for _ in range(3))
        else:
            out = (np.full((N, n), np.nan),) + tuple(
                np.full((N, n, n), np.nan).transpose(0, 2, 1) for _ in range(3))
        got = getattr(model, name + "_batch")(Q, V, X, F, threads=2, out=out)
        assert all(g is o for g, o in zip(got, out))  # written in place, returned
        for g, f in zip(got, fresh):
            assert np.array_equal(g, f)
        # The arrays of a call are valid out arrays of the next one.
        again = getattr(model, name + "_batch")(Q, V, X, F, threads=1, out=fresh)
        assert all(a is f for a, f in zip(again, fresh))
        for i in range(N):
            single = getattr(model, name)(Q[i], V[i], X[i], F[i], **{flag: True})
            for b, s in zip(got, single):
                np.testing.assert_array_equal(b[i], s, err_msg=f"{name} state {i}")


def test_wrong_out_is_refused():
    model = cd.Model.load(REPO / "models" / "cd_quadruped.urdf")
    Q, V, rng = states(model, 3, 2)
    T = rng.uniform(-1, 1, (3, model.ny))
    ny = model.ny
    good = [np.zeros((3, ny))] + [np.zeros((3, ny, ny)).transpose(0, 2, 1) for _ in range(3)]
    with pytest.raises(ValueError, match="4 arrays"):
        model.ce_aba_derivatives_batch(Q, V, T, out=good[:3])
    c_ordered = good[:3] + [np.zeros((3, ny, ny))]  # row-major per state: the wrong memory
    with pytest.raises(ValueError, match=r"out\[3\].*column-major"):
        model.ce_aba_derivatives_batch(Q, V, T, out=c_ordered)
    with pytest.raises(ValueError, match=r"out\[0\]"):
        model.ce_aba_derivatives_batch(Q, V, T, out=[np.zeros((3, ny + 1))] + good[1:])
    with pytest.raises(ValueError, match=r"out\[1\]"):
        model.ce_aba_derivatives_batch(Q, V, T, out=[good[0], good[1].astype(np.float32)] +
                                       good[2:])


def test_constrained_derivatives_batch_equals_single_calls():
    model = cd.Model.load(REPO / "models" / "cd_quadruped.urdf")
    cs = model.constraint_set()
    for foot in ("lf_foot", "rf_foot"):
        cs.add_contact(foot)
    N = 5
    Q, V, rng = states(model, N, 9)
    T = rng.uniform(-3, 3, (N, model.ny))
    F = rng.uniform(-1, 1, (N, model.nbodies, 6))
    batch = _batch_loops.constrained_dynamics_derivatives_batch(cs, np.asfortranarray(Q), V, T,
                                                                fext=F)
    assert batch.lam.shape == (N, cs.nrows) and batch.dlam_dy.shape == (N, cs.nrows, model.ny)
    for i in range(N):
        single = cs.constrained_dynamics_derivatives(Q[i], V[i], T[i], fext=F[i])
        for field in single._fields:
            assert np.array_equal(getattr(batch, field)[i], getattr(single, field)), field
    again = _batch_loops.constrained_dynamics_derivatives_batch(cs, Q, V, T, fext=F, out=batch)
    assert all(a is b for a, b in zip(again, batch))
    V[3, 1] = np.nan
    with pytest.raises(cd.ClusterdynError) as e:
        _batch_loops.constrained_dynamics_derivatives_batch(cs, Q, V, T)
    with pytest.raises(cd.ClusterdynError) as single:
        cs.constrained_dynamics_derivatives(Q[3], V[3], T[3])
    assert e.value.state == 3 and e.value.status == single.value.status
    assert str(e.value).endswith(f"{single.value.message} (state 3)")
    with pytest.raises(ValueError, match="9 arrays"):
        _batch_loops.constrained_dynamics_derivatives_batch(cs, Q, V, T, out=batch[:8])
