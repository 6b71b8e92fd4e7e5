"""Bad input raises a clear exception (never crashes): shapes and dtypes are caught in Python
before the C call; the library's failures carry its status and message."""
import numpy as np
import pytest

import clusterdyn as cd
from conftest import REPO

FOUR_BAR = REPO / "models" / "cd_four_bar.urdf"


@pytest.fixture
def ws():
    return cd.Model.load(FOUR_BAR).workspace()


def test_wrong_shape(ws):
    m = ws.model
    with pytest.raises(ValueError, match=r"q must have shape \(3,\), got \(2,\)"):
        ws.aba(np.zeros(2), np.zeros(3), np.zeros(3))
    with pytest.raises(ValueError, match=r"v must have shape \(3,\), got \(3, 1\)"):
        ws.aba(np.zeros(3), np.zeros((3, 1)), np.zeros(3))
    with pytest.raises(ValueError, match="tau must have shape"):
        ws.ce_aba(m.reference_configuration(), np.zeros(3), np.zeros(3))
    with pytest.raises(ValueError, match="fext must have shape"):
        ws.rnea(np.zeros(3), np.zeros(3), np.zeros(3), fext=np.zeros((3, 5)))
    with pytest.raises(ValueError, match=r"Q must have shape \(N, 3\)"):
        m.ce_aba_batch(np.zeros((4, 2)), np.zeros((4, 3)), np.zeros((4, 1)))
    with pytest.raises(ValueError, match="V has 5 rows"):
        m.ce_aba_batch(np.zeros((4, 3)), np.zeros((5, 3)), np.zeros((4, 1)))
    with pytest.raises(ValueError, match="threads must be a positive integer"):
        m.ce_aba_batch(np.zeros((4, 3)), np.zeros((4, 3)), np.zeros((4, 1)), threads=0)


def test_wrong_dtype(ws):
    with pytest.raises(TypeError, match="q must be an array of real numbers, got dtype complex"):
        ws.aba(np.zeros(3, complex), np.zeros(3), np.zeros(3))
    with pytest.raises(TypeError, match="got dtype <U"):
        ws.aba(["a", "b", "c"], np.zeros(3), np.zeros(3))
    with pytest.raises(TypeError, match="got dtype object"):
        ws.aba([None, 1.0, 2.0], np.zeros(3), np.zeros(3))
    with pytest.raises(TypeError, match="got dtype bool"):
        ws.aba(np.zeros(3, bool), np.zeros(3), np.zeros(3))
    with pytest.raises(TypeError, match="frame must be an index"):
        ws.frame_placement(1.5)
    with pytest.raises(KeyError, match="no frame named 'nope'"):
        ws.frame_placement("nope")
    # Any real array-like is accepted: lists, ints, float32, non-contiguous views.
    a = ws.aba([0, 0, 0], np.zeros(6)[::2], np.zeros(3, np.float32))
    assert a.dtype == np.float64 and a.shape == (3,)


def test_nan_and_library_errors(ws):
    with pytest.raises(cd.ClusterdynError) as e:
        ws.aba(np.zeros(3), [0.0, np.nan, 0.0], np.zeros(3))
    assert e.value.status == cd.ERR_NON_FINITE
    assert e.value.message == "v[1] is not finite"
    assert e.value.function == "cdyn_aba"
    assert "non-finite" in str(e.value) or "finite" in e.value.status_name
    with pytest.raises(cd.ClusterdynError) as e:
        ws.frame_placement(99)
    assert e.value.status == cd.ERR_INVALID_INDEX
    with pytest.raises(cd.ClusterdynError) as e:  # frame functions need forward kinematics
        ws.frame_velocity(0)
    assert e.value.status == cd.ERR_INVALID_ARGUMENT and "forward_kinematics" in e.value.message
    with pytest.raises(ValueError, match="reference frame must be one of"):
        ws.frame_velocity(0, "sideways")
    # The workspace stays usable after failures.
    assert ws.aba(np.zeros(3), np.zeros(3), np.zeros(3)).shape == (3,)
    # Batches report the lowest failed state.
    m = ws.model
    q = m.reference_configuration()
    Q, V, T = np.tile(q, (6, 1)), np.zeros((6, 3)), np.zeros((6, 1))
    V[4, 0] = np.inf
    for use_pool in (True, False):
        with pytest.raises(cd.ClusterdynError, match=r"\(state 4\)") as e:
            m.ce_aba_batch(Q, V, T, threads=2, use_pool=use_pool)
        assert e.value.status in (cd.ERR_NON_FINITE, cd.ERR_CONSTRAINT_FAILURE)
        assert e.value.state == 4


def test_missing_file():
    with pytest.raises(cd.ClusterdynError) as e:
        cd.Model.load("/nonexistent/robot.urdf")
    assert e.value.status == cd.ERR_PARSE
    assert e.value.state is None
    assert "/nonexistent/robot.urdf" in e.value.message


@pytest.mark.parametrize("text", [
    "",
    "<robot name='x'><link name='a'/>",
    "<robot name='x'><link name='a'/><joint name='j' type='revolute'><parent link='a'/>"
    "<child link='missing'/></joint></robot>",
    "not xml at all",
])
def test_bad_urdf_text(text):
    with pytest.raises(cd.ClusterdynError) as e:
        cd.Model.from_string(text)
    assert e.value.status == cd.ERR_PARSE and e.value.message


def test_bad_gravity():
    with pytest.raises(ValueError, match="gravity must have shape"):
        cd.Model.load(FOUR_BAR, gravity=[0, -9.81])
    with pytest.raises(cd.ClusterdynError):
        cd.Model.load(FOUR_BAR, gravity=[0, 0, np.nan])


def test_closed_handles():
    m = cd.Model.load(FOUR_BAR)
    ws = m.workspace()
    ws.close()
    with pytest.raises(ValueError, match="closed"):
        ws.aba(np.zeros(3), np.zeros(3), np.zeros(3))
    m.close()
    with pytest.raises(ValueError, match="closed"):
        m.workspace()


def test_library_override(tmp_path, monkeypatch):
    """CLUSTERDYN_LIBRARY pointing nowhere is an error naming it (no silent fallback)."""
    from clusterdyn import _library
    monkeypatch.setenv("CLUSTERDYN_LIBRARY", str(tmp_path / "nope.so"))
    with pytest.raises(OSError, match="CLUSTERDYN_LIBRARY"):
        _library.load()
    assert _library.find_library() == str(tmp_path / "nope.so")
