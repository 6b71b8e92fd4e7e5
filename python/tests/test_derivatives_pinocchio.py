"""The tree derivatives through the C API against Pinocchio 4.1 (PyPI package pin):
computeRNEADerivatives, computeABADerivatives (with external forces) and computeMinverse on the
spanning trees of the bundled models, the shared *_approximate robots and random trees, to 1e-9.
Coordinates are mapped as in test_anchor_pinocchio.py (anchors_util.PinocchioMap: joints
matched by name, free flyer [v; omega]); the tangent spaces agree (both the joint's right
exponential), so d f / d q maps like d f / d v: P^T D_pin P. Pinocchio's Minverse fills only the
upper triangle (ours both): compared through symmetric_from_upper."""
import numpy as np
import pytest

from anchors_util import PinocchioMap, close, random_state, symmetric_from_upper

pin = pytest.importorskip("pinocchio", reason="Pinocchio (PyPI package pin) is not installed: "
                          "derivative comparisons with Pinocchio skipped")

from test_anchor_pinocchio import CASES, IDS, load_pair  # noqa: E402


def pin_forces(model, pm, fext):
    """clusterdyn's per-body (moment; force) in body frames as Pinocchio's per-joint Forces
    (force; moment) in the joint frames (the same frames: a body's frame is its joint's)."""
    out = pin.StdVec_Force()
    for _ in range(pm.njoints):
        out.append(pin.Force.Zero())
    for i, name in enumerate(model.joint_names):
        jid = pm.getJointId(name)
        out[jid] = pin.Force(fext[i, 3:], fext[i, :3])
    return out


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_tree_derivatives_match_pinocchio(case):
    model, pm = load_pair(case)
    pmap = PinocchioMap(model, pm)
    pd = pm.createData()
    ws = model.workspace()
    dws = model.derivative_workspace()
    rng = np.random.default_rng(41)
    for trial in range(3):
        q, v = random_state(model, ws, rng)
        a, tau = rng.uniform(-1, 1, model.nv), rng.uniform(-5, 5, model.nv)
        fext = rng.uniform(-1, 1, (model.nbodies, 6)) if trial else None
        qp, vp = pmap.q(q), pmap.v(v)
        fp = pin_forces(model, pm, fext) if fext is not None else None

        args = (pm, pd, qp, vp, pmap.v(a)) + ((fp,) if fp is not None else ())
        dq, dv, da = (np.array(x) for x in pin.computeRNEADerivatives(*args))
        tau_cd, dtau_dq, dtau_dv, M = dws.rnea_derivatives(q, v, a, fext, return_tau=True)
        close(tau_cd, pmap.v_back(pd.tau), "RNEA")
        close(dtau_dq, pmap.matrix(dq), "d tau / dq")
        close(dtau_dv, pmap.matrix(dv), "d tau / dv")
        close(M, pmap.matrix(symmetric_from_upper(da)), "d tau / da = M")

        args = (pm, pd, qp, vp, pmap.v(tau)) + ((fp,) if fp is not None else ())
        dq, dv, dtau = (np.array(x) for x in pin.computeABADerivatives(*args))
        ddq, ddq_dq, ddq_dv, Minv = dws.aba_derivatives(q, v, tau, fext, return_ddq=True)
        close(ddq, pmap.v_back(pd.ddq), "ABA")
        close(ddq_dq, pmap.matrix(dq), "d ddq / dq")
        close(ddq_dv, pmap.matrix(dv), "d ddq / dv")
        close(Minv, pmap.matrix(symmetric_from_upper(dtau)), "d ddq / d tau = M^-1")

        Minv_pin = np.array(pin.computeMinverse(pm, pd, qp))
        close(dws.minverse(q), pmap.matrix(symmetric_from_upper(Minv_pin)), "computeMinverse")

        # Loaded without its loop constraints, every cluster is one body and y = q: the
        # cluster-tree derivatives (a separate code path) must give Pinocchio's numbers too.
        if model.ny == model.nv and model.nloops == 0 and model.nrelations == 0:
            ydd, dy, dyd, Hinv = dws.ce_aba_derivatives(q, v, tau, fext, return_ydd=True)
            close(ydd, pmap.v_back(pd.ddq), "CE-ABA")
            close(dy, pmap.matrix(dq), "d ydd / dy")
            close(dyd, pmap.matrix(dv), "d ydd / dydot")
            close(Hinv, pmap.matrix(symmetric_from_upper(dtau)), "H^-1")
    dws.close()
