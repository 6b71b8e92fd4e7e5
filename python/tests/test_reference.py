"""Third-party reference data (../shared/reference, README there): grbda (generalized_rbda,
constraint embedding: Chignoli, Adrian and Wensing 2023) for CE-ABA, CE-RNEA, H and C on models
with loops and transmissions, and Pinocchio 3.7 (Carpentier et al. 2019) for tree ABA, RNEA and
CRBA. Vectors are matched by coordinate name. Tolerance 1e-9."""
import json

import numpy as np
import pytest

import clusterdyn as cd
from conftest import shared_dir

TOL = 1e-9
REF = shared_dir() / "reference"
GRBDA = sorted(REF.glob("grbda_*.json")) if REF.is_dir() else []
PINOCCHIO = sorted(REF.glob("pinocchio_*.json")) if REF.is_dir() else []
MISSING = f"{REF} not found (the shared/ folder next to the repository): reference tests skipped"


def name_of(token, base_joint):
    return f"{base_joint}:{token[5:]}" if token.startswith("base:") else token


def spanning_q(model, sample, base_joint, quat_key):
    q = np.zeros(model.nq)
    for name, value in sample["q"].items():
        q[model.position_index[name]] = value
    if base_joint:
        b = sample["base"]
        quat = b[quat_key]
        xyzw = quat[1:] + quat[:1] if quat_key == "quaternion_wxyz" else quat
        for k, x in zip(("px", "py", "pz", "qx", "qy", "qz", "qw"), list(b["position"]) + xyzw):
            q[model.position_index[f"{base_joint}:{k}"]] = x
    return q


def by_name(model_names, values, base_joint):
    mapped = {name_of(k, base_joint): v for k, v in values.items()}
    return np.array([mapped[n] for n in model_names])


def load(data):
    path = shared_dir() / data["model"]["urdf"]
    return cd.Model.load(path), data["model"].get("base_joint") if data["model"][
        "floating_base"] else None


@pytest.mark.skipif(not GRBDA, reason=MISSING)
@pytest.mark.parametrize("path", GRBDA, ids=[p.stem for p in GRBDA])
def test_grbda(path):
    data = json.loads(path.read_text())
    model, base = load(data)
    ws = model.workspace()
    order = [name_of(n, base) for n in data["independent_coordinates"]]
    perm = [model.independent_velocity_index[n] for n in order]
    worst = 0.0
    for s in data["samples"]:
        q = spanning_q(model, s, base, "quaternion_wxyz")
        v = by_name(model.velocity_names, s["qd"], base)
        tau = by_name(model.independent_velocity_names, s["tau"], base)
        ydd_ref = by_name(model.independent_velocity_names, s["ydd"], base)
        ydd, qdd = ws.ce_aba(q, v, tau, return_qdd=True)
        np.testing.assert_allclose(ydd, ydd_ref, atol=TOL, rtol=0)
        np.testing.assert_allclose(qdd, by_name(model.velocity_names, s["qdd"], base), atol=TOL,
                                   rtol=0)
        tau_id = ws.ce_rnea(q, v, ydd_ref)
        np.testing.assert_allclose(tau_id, by_name(model.independent_velocity_names,
                                                   s["tau_id"], base), atol=TOL, rtol=0)
        H = ws.cluster_mass_matrix(q)
        np.testing.assert_allclose(H[np.ix_(perm, perm)], np.array(s["H"]), atol=TOL, rtol=0)
        np.testing.assert_allclose(ws.cluster_bias(q, v),
                                   by_name(model.independent_velocity_names, s["C"], base),
                                   atol=TOL, rtol=0)
        worst = max(worst, np.abs(ydd - ydd_ref).max())
    # The batch functions on the same samples.
    Q = np.array([spanning_q(model, s, base, "quaternion_wxyz") for s in data["samples"]])
    V = np.array([by_name(model.velocity_names, s["qd"], base) for s in data["samples"]])
    T = np.array([by_name(model.independent_velocity_names, s["tau"], base)
                  for s in data["samples"]])
    YDD = np.array([by_name(model.independent_velocity_names, s["ydd"], base)
                    for s in data["samples"]])
    np.testing.assert_allclose(model.ce_aba_batch(Q, V, T, threads=2), YDD, atol=TOL, rtol=0)
    Hs = model.mass_matrix_batch(Q, threads=2)
    for Hi, s in zip(Hs, data["samples"]):
        np.testing.assert_allclose(Hi[np.ix_(perm, perm)], np.array(s["H"]), atol=TOL, rtol=0)


@pytest.mark.skipif(not PINOCCHIO, reason=MISSING)
@pytest.mark.parametrize("path", PINOCCHIO, ids=[p.stem for p in PINOCCHIO])
def test_pinocchio(path):
    data = json.loads(path.read_text())
    model, base = load(data)
    ws = model.workspace()
    order = [name_of(n, base) for n in data["coordinates"]]
    perm = [model.velocity_index[n] for n in order]
    for s in data["samples"]:
        q = spanning_q(model, s, base, "quaternion_xyzw")
        v = by_name(model.velocity_names, s["v"], base)
        tau = by_name(model.velocity_names, s["tau"], base)
        np.testing.assert_allclose(ws.aba(q, v, tau),
                                   by_name(model.velocity_names, s["aba_ddq"], base),
                                   atol=TOL, rtol=0)
        a = by_name(model.velocity_names, s["rnea_a"], base)
        np.testing.assert_allclose(ws.rnea(q, v, a),
                                   by_name(model.velocity_names, s["rnea_tau"], base),
                                   atol=TOL, rtol=0)
        M = ws.crba(q)
        np.testing.assert_allclose(M[np.ix_(perm, perm)], np.array(s["M"]), atol=TOL, rtol=0)
        np.testing.assert_allclose(ws.nonlinear_effects(q, v),
                                   by_name(model.velocity_names, s["nle"], base),
                                   atol=TOL, rtol=0)
