"""The C contract as Python sees it (issue 22): load() of XML text, ce_aba_independent's
q_guess, (J, gamma, phi), total_mass, one spanning order for cut and embedded loops, the efforts
of Forces.after_ce_aba, messages of refusals without a handle."""
import ctypes as C

import numpy as np
import pytest

import clusterdyn as cd
from conftest import REPO

FOUR_BAR = REPO / "models" / "cd_four_bar.urdf"
QUADRUPED = REPO / "models" / "cd_quadruped.urdf"


def four_bar_with_tip():
    """The four-bar with a body on the crank declared before the coupler: depth-first spanning
    order puts it among the loop's bodies, the cluster tree after them."""
    text = FOUR_BAR.read_text()
    tip = ('  <link name="tip"><inertial><mass value="0.2"/><inertia ixx="1e-3" iyy="2e-3" '
           'izz="1e-3" ixy="0" ixz="0" iyz="0"/></inertial></link>\n'
           '  <joint name="tip_joint" type="continuous"><parent link="crank"/>'
           '<child link="tip"/><origin xyz="0.05 0 0"/><axis xyz="0 1 0"/></joint>\n')
    i = text.index('  <joint name="coupler_joint"')
    return text[:i] + tip + text[i:]


def test_load_of_xml_text_points_to_from_string():
    text = FOUR_BAR.read_text()
    with pytest.raises(cd.ClusterdynError, match="from_string") as e:
        cd.Model.load(text)
    assert e.value.status == cd.ERR_INVALID_ARGUMENT
    with pytest.raises(cd.ClusterdynError, match="from_string"):
        cd.Model.load(text.encode())
    with cd.Model.from_string(text) as m:
        assert m.nloops == 1


def test_ce_aba_independent_takes_q_guess():
    with cd.Model.load(FOUR_BAR) as m:
        ws = m.workspace()
        y, ydot, tau = [0.4], [1.2], [0.3]
        q_guess = m.reference_configuration()
        ydd, q, v, qdd = ws.ce_aba_independent(y, ydot, tau, q_guess=q_guess)
        YDD, Q, V, QDD = m.ce_aba_independent_batch([y], [ydot], [tau], q_guess=q_guess,
                                                    threads=1)
        np.testing.assert_array_equal(ydd, YDD[0])
        np.testing.assert_array_equal(q, Q[0])
        np.testing.assert_array_equal(qdd, QDD[0])
        ydd2, q2, _, _ = ws.ce_aba_independent(y, ydot, tau)  # warm start: the same branch
        np.testing.assert_allclose(ydd2, ydd, atol=1e-12)
        np.testing.assert_allclose(q2, q, atol=1e-12)
        ws.close()


def test_jacobian_returns_phi_and_keeps_its_old_form():
    emb, cut = cd.Model.load(FOUR_BAR), cd.Model.load(FOUR_BAR, cut_loops=True)
    wse = emb.workspace()
    q, v = wse.independent_to_spanning([0.3], [0.8])
    cset = cut.cut_loop_constraints()
    cws = cset.workspace()
    J, gamma = cws.jacobian(q, v)  # unchanged two-tuple
    J3, gamma3, phi = cws.jacobian(q, v, return_phi=True)
    np.testing.assert_array_equal(J, J3)
    np.testing.assert_array_equal(gamma, gamma3)
    assert phi.shape == (cset.nrows,) and np.abs(phi).max() < 1e-10  # closed
    np.testing.assert_array_equal(cws.position_error(q), phi)
    q_open = q.copy()
    q_open[1] += 0.05
    assert np.abs(cws.position_error(q_open)).max() > 1e-3
    cset.close()
    wse.close()
    emb.close(), cut.close()


def test_total_mass_leaves_out_links_fixed_to_the_world():
    text = """<robot name="r">
      <link name="base"><inertial><mass value="5"/>
        <inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <link name="arm"><inertial><mass value="2"/>
        <inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <link name="tool"><inertial><mass value="0.5"/>
        <inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <joint name="j" type="revolute"><parent link="base"/><child link="arm"/>
        <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
      <joint name="fix" type="fixed"><parent link="arm"/><child link="tool"/></joint>
    </robot>"""
    with cd.Model.from_string(text) as m:  # base is the world: 2 + 0.5 (fused tool)
        assert m.total_mass == pytest.approx(2.5, abs=1e-12)
    with cd.Model.from_string(text, floating_base=True) as m:  # base moves now
        assert m.total_mass == pytest.approx(7.5, abs=1e-12)


def test_cut_loops_keep_the_embedded_spanning_order():
    """The documented cut-loop recipe with the embedded model's vectors, unchanged."""
    text = four_bar_with_tip()
    emb, cut = cd.Model.from_string(text), cd.Model.from_string(text, cut_loops=True)
    assert cut.position_names == emb.position_names
    assert cut.velocity_names == emb.velocity_names
    ws = emb.workspace()
    q, v = ws.independent_to_spanning([0.3, 0.2], [1.0, -0.5])
    tau = np.array([0.4, 0.15])
    _, qdd = ws.ce_aba(q, v, tau, return_qdd=True)
    tau_cut = np.zeros(cut.nv)
    for k, name in enumerate(emb.independent_velocity_names):
        tau_cut[cut.velocity_index[name]] = tau[k]
    cset = cut.cut_loop_constraints()
    r = cset.workspace().prox_pv(q, v, tau_cut, tolerance=1e-11, max_iterations=300)
    assert r.converged
    np.testing.assert_allclose(r.qdd, qdd, atol=1e-8)
    cset.close()
    ws.close()
    emb.close(), cut.close()


def test_forces_take_the_efforts_of_the_ce_aba_call():
    with cd.Model.load(FOUR_BAR) as m:
        ws = m.workspace()
        q, v = ws.independent_to_spanning([0.3], [0.8])
        ws.ce_aba(q, v, [0.7])
        with m.forces() as f:
            W = f.after_ce_aba(ws).joint_wrenches(ws)  # tau=None: the call's own efforts
            ws.ce_aba(q, v, [0.7])
            np.testing.assert_array_equal(f.after_ce_aba(ws, [0.7]).joint_wrenches(ws), W)
            ws.ce_aba(q, v, [0.7])
            with pytest.raises(cd.ClusterdynError, match="differs") as e:
                f.after_ce_aba(ws, [0.8])
            assert e.value.status == cd.ERR_INVALID_ARGUMENT
        ws.close()


def test_refusals_without_a_handle_leave_a_message():
    L = cd.lib()
    with cd.Model.load(FOUR_BAR) as m:
        f = C.c_void_p()
        assert L.cdyn_forces_create(m.handle, C.byref(f)) == cd.OK
        assert L.cdyn_model_free(m.handle) == cd.ERR_INVALID_ARGUMENT  # the forces still live
        assert b"cdyn_model_free" in L.cdyn_last_error()
        assert L.cdyn_forces_free(f) == cd.OK
        s = C.c_char_p()
        assert L.cdyn_model_body_name(m.handle, 99, C.byref(s)) == cd.ERR_INVALID_INDEX
        assert b"range" in L.cdyn_last_error()
        with m.constraint_set() as cset:
            with pytest.raises(cd.ClusterdynError, match="out of range"):
                cset._call("cdyn_constraint_set_row_name", 3, C.byref(s))
