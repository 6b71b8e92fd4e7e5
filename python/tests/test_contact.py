"""The contact API (ContactProblem, Stepper, rollouts) on cd_parallel_walker: a floating trunk
on four parallelogram legs (implicit loops, kept exact) with sphere feet on the ground. A drop
comes to rest, energy never increases without position feedback (beta = 0), rollouts equal
single steps bit for bit, bad input raises ClusterdynError naming the argument."""
import numpy as np
import pytest
from conftest import REPO

import clusterdyn as cd

LEGS = ("lf", "rf", "lh", "rh")


@pytest.fixture
def walker():
    m = cd.Model.load(REPO / "models" / "cd_parallel_walker.urdf", floating_base=True)
    problem = cd.ContactProblem(m)
    for leg in LEGS:
        problem.add_foot(leg + "_foot", leg + "_coupler", (0.03, 0.0, -0.05), radius=0.02, mu=0.8)
    yield m, problem
    problem.close()


def closed_state(m, height, roll=0.05, yaw_rate=0.0):
    """Trunk `height` up (touch-down near 0.234), slightly rolled, cranks spread."""
    y = np.zeros(m.nyq)
    ydot = np.zeros(m.ny)
    y[2] = height
    y[3:7] = [np.sin(roll / 2), 0.0, 0.0, np.cos(roll / 2)]
    y[7:11] = [0.2, -0.2, 0.2, -0.2]
    ydot[2] = yaw_rate  # angular z of the floating base (v: angular, then linear)
    with m.workspace() as ws:
        return ws.independent_to_spanning(y, ydot)


def energy(ws, q, v):
    return ws.kinetic_energy(q, v) + ws.potential_energy(q)


def test_sizes_and_defaults(walker):
    m, problem = walker
    assert (problem.ncontacts, problem.nbilateral_rows, problem.m) == (4, 0, 12)
    d = cd.default_contact_settings()
    assert d["dt"] == 1e-3 and d["solver"] == "admm" and d["warm_start"] is True
    assert d["polish_after"] == 100 and d["active_set_steps"] == 2


def test_solver_settings_reach_admm(walker):
    # active_set_steps = 0 (plain ADMM) iterates where the default, warm-started from the same
    # impulses, takes the active-set solve; polish_after < 0 is refused with its name.
    m, problem = walker
    q, v = closed_state(m, 0.25)
    tau = np.zeros(m.ny)
    plain = problem.stepper(active_set_steps=0, polish_after=50, warm_start=False)
    lam0, rep0 = plain.solve(q, v, tau)
    assert rep0.converged and rep0.iterations > 0
    warm = problem.stepper()
    warm.solve(q, v, tau)
    lam1, rep1 = warm.solve(q, v, tau)  # warm start at the solution: no ADMM iteration
    assert rep1.converged and rep1.iterations == 0
    # The same constraint velocities (unique; the impulses are not: G is singular here).
    assert np.abs(warm.frames()[2] - plain.frames()[2]).max() < 1e-8
    with pytest.raises(cd.ClusterdynError, match="polish_after"):
        problem.stepper(polish_after=-1).solve(q, v, tau)


def test_drop_comes_to_rest(walker):
    m, problem = walker
    q, v = closed_state(m, 0.34, yaw_rate=0.5)
    stepper = problem.stepper(max_iterations=5000, on_not_converged="ignore")
    speeds, landed, stalled = [], 0, []
    ws = m.workspace()
    crank0 = ws.spanning_to_independent(q, v)[0][7:11]
    for _ in range(2000):
        y, ydot = ws.spanning_to_independent(q, v)
        tau = np.zeros(m.ny)  # PD on the four cranks holds the legs (the trunk is free)
        tau[6:10] = -20.0 * (y[7:11] - crank0) - 1.0 * ydot[6:10]
        r = stepper.step(q, v, tau)
        # The crouched stance is nearly a mechanism (docs/contact.md, "Known: ill-conditioned
        # stances"): plain ADMM stalled just above its 1e-10 tolerance on 8 of these steps; with
        # the Newton polish every step converges.
        rep = r.report
        if not rep.converged:
            stalled.append((len(speeds), rep))
        q, v = r.q, r.v
        landed += r.lam[2::3].max() > 0
        speeds.append(np.abs(v).max())
    assert landed > 1000
    assert stalled == []
    assert max(speeds[-200:]) < 1e-3  # at rest on its feet
    R, gap, _ = stepper.frames()
    assert np.allclose(R[:, :, 2], [0.0, 0.0, 1.0])  # n = +z for every foot
    assert np.all(np.abs(gap) < 2e-3)  # standing on the ground


def test_energy_never_increases_without_feedback(walker):
    m, problem = walker
    q, v = closed_state(m, 0.34, yaw_rate=0.5)
    stepper = problem.stepper(beta=0.0, max_iterations=5000)
    with m.workspace() as ws:
        e = e0 = energy(ws, q, v)
        worst = 0.0
        for _ in range(800):
            r = stepper.step(q, v)
            q, v = r.q, r.v
            e1 = energy(ws, q, v)
            worst = max(worst, e1 - e)
            e = e1
    assert worst < 1e-6 * abs(e0)
    assert e < e0


def test_rollouts_equal_single_steps_bit_for_bit(walker):
    m, problem = walker
    N, T = 5, 40
    states = [closed_state(m, 0.236 + 0.003 * i, roll=0.02 * i, yaw_rate=0.2) for i in range(N)]
    Q0 = np.array([s[0] for s in states])
    V0 = np.array([s[1] for s in states])
    rng = np.random.default_rng(3)
    TAU = 0.2 * rng.standard_normal((N, T, m.ny))
    stepper = problem.stepper(max_iterations=5000, on_not_converged="ignore")
    Q, V, L = np.zeros((N, T, m.nq)), np.zeros((N, T, m.nv)), np.zeros((N, T, problem.m))
    for i in range(N):
        stepper.reset()
        q, v = Q0[i], V0[i]
        for t in range(T):
            r = stepper.step(q, v, TAU[i, t])
            q, v = Q[i, t], V[i, t] = r.q, r.v
            L[i, t] = r.lam
    for kwargs in ({"threads": 1}, {"threads": 3}, {"pool": m.pool(2)}):
        R = problem.rollout(Q0, V0, TAU, max_iterations=5000, **kwargs)
        assert np.array_equal(R.q, Q) and np.array_equal(R.v, V) and np.array_equal(R.lam, L)
        rep = R.reports
        assert np.array_equal(rep["status"], np.where(rep["converged"] == 1, cd.OK,
                                                       cd.ERR_NOT_CONVERGED))
        assert rep["converged"].any()
        assert (R.lam[:, :, 2::3] > 0).any()  # some feet landed


def test_bad_input_names_the_argument(walker):
    m, problem = walker
    q, v = closed_state(m, 0.35)
    stepper = problem.stepper()
    with pytest.raises(cd.ClusterdynError, match="q has length") as e:
        stepper.step(q[:-1], v)
    assert e.value.status == cd.ERR_INVALID_SIZE
    with pytest.raises(cd.ClusterdynError, match="tau has length"):
        stepper.step(q, v, np.zeros(m.ny + 2))
    stepper.configure(dt=0.0)
    with pytest.raises(cd.ClusterdynError, match=r"settings->dt"):
        stepper.step(q, v)
    stepper.configure(dt=1e-3, beta=float("nan"))
    with pytest.raises(cd.ClusterdynError, match=r"settings->beta"):
        stepper.step(q, v)
    stepper.configure(beta=0.2)
    assert stepper.step(q, v).report.converged  # still usable
    with pytest.raises(TypeError, match="unknown contact setting"):
        problem.stepper(dtt=1e-3)
    with pytest.raises(cd.ClusterdynError, match="normal has length"):
        stepper.set_caller(np.zeros(3), np.zeros(4), np.zeros(4))
    with cd.ContactProblem(m) as p2:
        with pytest.raises(cd.ClusterdynError, match="body"):
            p2.add_foot("f", 1000, (0, 0, 0))
        with pytest.raises(cd.ClusterdynError, match="radius"):
            p2.add_foot("f", 0, (0, 0, 0), radius=-1.0)
        with pytest.raises(cd.ClusterdynError, match="centre has length"):
            p2.add_foot("f", 0, (0, 0))
    # A rollout names its lowest failed state.
    Q0 = np.array([q] * 4)
    Q0[2, 3] = 2.0  # not a unit quaternion
    Q0[3, 3] = 2.0
    with pytest.raises(cd.ClusterdynError, match="state 2, step 0") as e:
        problem.rollout(Q0, np.array([v] * 4), np.zeros((4, 3, m.ny)), threads=2)
    assert e.value.state == 2
    with pytest.raises(cd.ClusterdynError, match="q0 has length"):
        problem.rollout(Q0[:, :-1], np.array([v] * 4), np.zeros((4, 3, m.ny)))


def test_rollout_caller_contacts_are_per_call(walker):
    """A rollout of a problem with caller contacts takes their data in every call (as a reset
    Stepper with set_caller, bit for bit); without it, or with it on a problem without caller
    contacts, it raises instead of reusing an earlier call's data."""
    m, problem = walker
    q, v = closed_state(m, 0.236)
    N, T = 2, 15
    Q0, V0 = np.array([q] * N), np.array([v] * N)
    TAU = np.zeros((N, T, m.ny))
    with pytest.raises(cd.ClusterdynError, match="no caller contacts") as e:
        problem.rollout(Q0, V0, TAU, caller=(np.tile([0.0, 0.0, 1.0], 4), np.zeros(4),
                                             np.full(4, 0.5)))
    assert e.value.status == cd.ERR_INVALID_ARGUMENT
    with cd.ContactProblem(m) as p2:
        for leg in LEGS:
            p2.add_foot(leg + "_foot", leg + "_coupler", (0.03, 0.0, -0.05), radius=0.02,
                        mu=0.8)
        p2.add_point("trunk", 0, (0.0, 0.0, 0.0))
        normal = np.tile([0.0, 0.0, 1.0], 5)
        results = []
        for gap in (-0.01, 1.0):  # penetrating, then far away
            caller = (normal, np.full(5, gap), np.full(5, 0.5))
            stepper = p2.stepper(max_iterations=5000, on_not_converged="ignore")
            stepper.set_caller(*caller)
            qs, vs = q, v
            for t in range(T):
                r = stepper.step(qs, vs, TAU[0, t])
                qs, vs = r.q, r.v
            R = p2.rollout(Q0, V0, TAU, caller=caller, max_iterations=5000, threads=2)
            assert np.array_equal(R.q[1, -1], qs) and np.array_equal(R.v[1, -1], vs)
            results.append(R.lam[0, :, 12:15])
        assert not np.array_equal(results[0], results[1])
        with pytest.raises(cd.ClusterdynError, match="1 caller contacts") as e:
            p2.rollout(Q0, V0, TAU)
        assert e.value.status == cd.ERR_INVALID_ARGUMENT


def test_docs_example_runs():
    from test_docs import run_section
    scope = run_section("Frictional contact and time stepping")
    assert scope["landed"] > 100
    assert scope["report"].active_contacts > 0 and scope["lam"].shape == (12,)
    assert scope["out"].q.shape == (2, 100, scope["model"].nq)
    assert np.allclose(scope["R"][:, :, 2], [0.0, 0.0, 1.0])
