"""Workspace.integrate_independent / difference_independent (cdyn_integrate_independent,
cdyn_difference_independent): on cd_ups_wrist (an independent ball joint inside its loop
clusters, its quaternion in y) integrate then difference is the identity and difference then
integrate gives y1 back, to 1e-12; on a tree they equal integrate / difference; refusals."""
import numpy as np
import pytest

import clusterdyn as cd
from conftest import REPO


def wrist():
    return cd.Model.load(REPO / "models" / "cd_ups_wrist.urdf")


def reference_y(m, ws):
    y, _ = ws.spanning_to_independent(m.reference_configuration(), np.zeros(m.nv))
    return y


def test_integrate_then_difference_is_the_identity_on_a_quaternion_in_y():
    m = wrist()
    ws = m.workspace()
    assert m.nyq > m.ny  # the ball's quaternion
    rng = np.random.default_rng(7)
    y_ref = reference_y(m, ws)
    worst = 0.0
    for _ in range(20):
        y0 = ws.integrate_independent(y_ref, rng.uniform(-1, 1, m.ny), 1.0)
        e = rng.uniform(-1.5, 1.5, m.ny)
        y1 = ws.integrate_independent(y0, e, 1.0)
        worst = max(worst, np.abs(ws.difference_independent(y0, y1) - e).max())
        y2 = ws.integrate_independent(y0, ws.difference_independent(y0, y1), 1.0)
        worst = max(worst, np.abs(y2 - y1).max())
        # the integrated y closes the loops: the closed state's y is y1 itself
        q, v = ws.independent_to_spanning(y1, np.zeros(m.ny))
        y_back, _ = ws.spanning_to_independent(q, v)
        assert np.abs(y_back - y1).max() < 1e-14
    assert worst < 1e-12


def test_on_a_tree_they_are_integrate_and_difference():
    m = cd.Model.load(REPO / "models" / "cd_quadruped_approximate.urdf")
    ws = m.workspace()
    assert (m.nyq, m.ny) == (m.nq, m.nv)
    rng = np.random.default_rng(8)
    q0 = ws.integrate(ws.neutral_configuration(), rng.uniform(-1, 1, m.nv), 1.0)
    v = rng.uniform(-1, 1, m.nv)
    assert np.array_equal(ws.integrate_independent(q0, v, 0.3), ws.integrate(q0, v, 0.3))
    q1 = ws.integrate(q0, v, 0.3)
    assert np.array_equal(ws.difference_independent(q0, q1), ws.difference(q0, q1))


def test_refusals_name_the_argument():
    m = wrist()
    ws = m.workspace()
    y = reference_y(m, ws)
    with pytest.raises(ValueError, match="ydot"):
        ws.integrate_independent(y, np.zeros(m.ny + 1), 0.1)
    bad = y.copy()
    k = m.independent_position_names.index("wrist_ball:qx")
    bad[k:k + 4] *= 1.01
    with pytest.raises(cd.ClusterdynError, match=r"wrist_ball.*y\[") as e:
        ws.integrate_independent(bad, np.zeros(m.ny), 0.1)
    assert e.value.status == cd.ERR_NOT_UNIT_QUATERNION
    with pytest.raises(cd.ClusterdynError, match=r"y1\["):
        ws.difference_independent(y, bad)
    with pytest.raises(cd.ClusterdynError, match="dt"):
        ws.integrate_independent(y, np.zeros(m.ny), float("nan"))
