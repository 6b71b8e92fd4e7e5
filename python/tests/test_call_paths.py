"""The argument paths of a single-state call give the same results: a float64 C-contiguous array
(the fast path: passed as it is, through the buffer protocol), and every other array-like the
package converts or passes differently (list, int dtype, big-endian, strided view, read-only,
Fortran-ordered fext, a subclass), and returned arrays are fresh (never alias a later call's)."""
import ctypes as C

import numpy as np
import pytest

import clusterdyn as cd
from clusterdyn import _core
from conftest import REPO, random_closed_state

QUADRUPED = REPO / "models" / "cd_quadruped.urdf"


@pytest.fixture
def state():
    model = cd.Model.load(QUADRUPED)
    ws = model.workspace()
    rng = np.random.default_rng(3)
    q, v = random_closed_state(model, ws, rng)
    a = rng.standard_normal(model.nv)
    fext = rng.standard_normal((model.nbodies, 6))
    yield model, ws, q, v, a, fext
    ws.close()
    model.close()


def variants(x):
    """x (float64 vector) as other array-likes of the same values."""
    ro = x.copy()
    ro.flags.writeable = False
    wide = np.zeros(2 * x.size)
    wide[::2] = x
    return {"list": x.tolist(), "big-endian": x.astype(">f8"), "strided": wide[::2],
            "read-only": ro, "subclass": x.copy().view(_Sub)}


class _Sub(np.ndarray):
    pass


def test_fast_path_returns_the_array_itself():
    x = np.arange(4.0)
    assert _core._vec(x, 4, "x") is x
    assert _core._vec(x.tolist(), 4, "x") is not x
    ro = x.copy()
    ro.flags.writeable = False
    assert _core._vec(ro, 4, "x") is ro  # read-only: passed as it is, through data_as


def test_pointer_is_the_first_element():
    """_ptr gives the address of element 0 for every layout it may get, or None."""
    assert _core._ptr(None) is None
    ro = np.arange(3.0)
    ro.flags.writeable = False
    F = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    for a in (np.arange(3.0), ro, F, np.zeros(0), np.arange(6.0)[::2]):
        assert _address(_core._ptr(a)) == a.ctypes.data


def _address(p):
    """The address a ctypes double* argument passes: a pointer's value, or the address of a
    c_double (over the array's buffer; ctypes passes it by reference)."""
    if isinstance(p, C._Pointer):
        return C.cast(p, C.c_void_p).value
    assert isinstance(p, C.c_double)
    return C.addressof(p)


def test_every_input_path_gives_the_same_result(state):
    model, ws, q, v, a, fext = state
    tau = ws.rnea(q, v, a, fext)
    ydd = ws.ce_aba(q, v, a[:model.ny])
    H = ws.cluster_mass_matrix(q)
    for name, qq in variants(q).items():
        np.testing.assert_array_equal(ws.rnea(qq, v, a, fext), tau, err_msg=name)
        np.testing.assert_array_equal(ws.cluster_mass_matrix(qq), H, err_msg=name)
    for name, vv in variants(v).items():
        np.testing.assert_array_equal(ws.rnea(q, vv, a, fext), tau, err_msg=name)
        np.testing.assert_array_equal(ws.ce_aba(q, vv, a[:model.ny]), ydd, err_msg=name)
    np.testing.assert_array_equal(ws.rnea(q, v, a, np.asfortranarray(fext)), tau)
    np.testing.assert_array_equal(ws.rnea(q, v, a, fext.reshape(-1)), tau)
    np.testing.assert_array_equal(ws.rnea(q, v, a.astype(np.int64).astype(np.float64), fext),
                                  ws.rnea(q, v, a.astype(np.int64), fext))


def test_results_are_fresh_arrays(state):
    model, ws, q, v, a, fext = state
    t1 = ws.rnea(q, v, a)
    t1_copy = t1.copy()
    t2 = ws.rnea(q, v, 2 * a)
    assert not np.shares_memory(t1, t2)
    np.testing.assert_array_equal(t1, t1_copy)
    H1, H2 = ws.crba(q), ws.crba(q)
    assert not np.shares_memory(H1, H2) and H1.flags.c_contiguous
    ws.forward_kinematics(q)
    R1, p1 = ws.frame_placement(0)
    R2, p2 = ws.frame_placement(0)
    assert not np.shares_memory(R1, R2) and not np.shares_memory(p1, p2)


def test_closed_handles_still_raise(state):
    model, ws, q, v, a, fext = state
    other = model.workspace()
    other.close()
    with pytest.raises(ValueError, match="the workspace has been closed"):
        other.rnea(q, v, a)
