"""Patch contacts from Python (ContactProblem.add_foot with mu_torsion / mu_rolling, add_point
with a cone, Stepper.set_caller with the patch coefficients): a block on a flat torsional patch
under a torque about the normal sticks below mu_tor m g and spins with the analytic angular
acceleration above; a sphere with (almost no) rolling friction rolls down a slope at
(5/7) g sin(theta); a caller rolling contact equals the ground foot it copies; bad coefficients
raise naming the argument."""
import numpy as np
import pytest

import clusterdyn as cd

BLOCK = """<robot name="block"><link name="box"><inertial><mass value="2.0"/>
<inertia ixx="0.00833" ixy="0" ixz="0" iyy="0.0183" iyz="0" izz="0.0217"/></inertial></link>
</robot>"""
SPHERE = """<robot name="ball"><link name="ball"><inertial><mass value="1.0"/>
<inertia ixx="0.004" ixy="0" ixz="0" iyy="0.004" iyz="0" izz="0.004"/></inertial></link>
</robot>"""
G = 9.81


@pytest.mark.parametrize("solver", ["admm", "pgs"])
@pytest.mark.parametrize("ratio", [0.9, 1.5])
def test_torsional_patch_sticks_then_spins(solver, ratio):
    m = cd.Model.from_string(BLOCK, floating_base=True)
    problem = cd.ContactProblem(m)
    mu_tor = 0.02
    problem.add_foot("patch", 0, (0, 0, -0.05), radius=0.0, mu=0.5, mu_torsion=mu_tor)
    assert problem.m == 6
    stepper = problem.stepper(solver=solver, max_iterations=20000)
    q = np.array([0, 0, 0.05, 0, 0, 0, 1.0])
    v = np.zeros(6)
    tau = np.zeros(6)
    limit = mu_tor * 2.0 * G
    tau[2] = ratio * limit  # v and tau: angular first (body frame)
    n = 200
    for _ in range(n):
        r = stepper.step(q, v, tau)
        q, v = r.q, r.v
    assert r.report.converged
    assert r.lam[5] == pytest.approx(2.0 * G * 1e-3, abs=1e-10)
    if ratio < 1:
        assert np.abs(v).max() < 1e-9
        assert abs(r.lam[2]) == pytest.approx(tau[2] * 1e-3, abs=1e-10)
    else:
        assert v[2] == pytest.approx(n * 1e-3 * (tau[2] - limit) / 0.0217, abs=1e-8)
    problem.close()


def test_sphere_rolls_and_caller_patch_equals_ground_foot():
    m = cd.Model.from_string(SPHERE, floating_base=True)
    theta, R = 0.1, 0.1
    n = np.array([-np.sin(theta), 0.0, np.cos(theta)])
    ground = cd.ContactProblem(m)
    ground.set_ground(n, 0.0)
    ground.add_foot("ball", 0, (0, 0, 0), radius=R, mu=0.8, mu_rolling=1e-9)
    q = np.concatenate([R * n, [0, 0, 0, 1.0]])
    st = ground.stepper(max_iterations=50000, tolerance=1e-14)
    r = st.step(q, np.zeros(6))
    Rq, _, vel = st.frames()
    down = -np.array([np.cos(theta), 0.0, np.sin(theta)])
    w = Rq[0] @ vel[:3]
    slip = Rq[0] @ vel[3:]
    speed = slip @ down + R * w @ np.cross(n, down)
    assert speed == pytest.approx(1e-3 * 5.0 / 7.0 * G * np.sin(theta), rel=1e-6)
    assert abs(slip @ down) < 1e-12
    # The same contact as a caller rolling contact at the touching point (body point R (-n)
    # in body coordinates at q: the ball is not rotated).
    caller = cd.ContactProblem(m)
    caller.add_point("ball", 0, -R * n, cone="rolling")
    sc = caller.stepper(max_iterations=50000, tolerance=1e-14)
    sc.set_caller(n.reshape(1, 3), [0.0], [0.8], mu_torsion=[0.0], mu_rolling=[1e-9])
    rc = sc.step(q, np.zeros(6))
    np.testing.assert_allclose(rc.v, r.v, atol=1e-12)
    np.testing.assert_allclose(rc.lam, r.lam, atol=1e-12)
    with pytest.raises(cd.ClusterdynError, match="mu_rolling"):
        sc.set_caller(n.reshape(1, 3), [0.0], [0.8], mu_rolling=[-1.0])
    ground.close()
    caller.close()
    fresh = cd.ContactProblem(m)
    with pytest.raises(cd.ClusterdynError, match="mu_torsion"):
        fresh.add_foot("bad", 0, (0, 0, 0), radius=R, mu=0.8, mu_torsion=-1.0)
    with pytest.raises(ValueError, match="cone"):
        fresh.add_point("bad", 0, (0, 0, 0), cone="spin")
    fresh.close()
