"""The C API from Python through ctypes (standard library only).

For every model: forward dynamics, then inverse dynamics of the result must give tau back
(with and without external forces); M ddq + nle = tau; errors come back as statuses with the
workspace's message. In independent coordinates (the loops of loop models): a closed state from
(y, ydot), one CE-ABA call, CE-RNEA gives tau back and H ydd + C = tau.
Usage: test_capi_ctypes.py path/to/libclusterdyn.so.0 model.urdf...
"""
import ctypes as C
import math
import sys

lib = C.CDLL(sys.argv[1])
CDYN_OK, CDYN_ERR_INVALID_SIZE, CDYN_ERR_NON_FINITE, CDYN_ERR_PARSE = 0, 1, 2, 102
CDYN_ERR_CONSTRAINT_FAILURE = 6
CDYN_ABI_VERSION = 0
D = C.POINTER(C.c_double)
H = C.c_void_p  # handles

lib.cdyn_version.restype = C.c_int
lib.cdyn_version_string.restype = C.c_char_p
lib.cdyn_status_string.restype = C.c_char_p
lib.cdyn_status_string.argtypes = [C.c_int]
lib.cdyn_workspace_last_error.restype = C.c_char_p
lib.cdyn_workspace_last_error.argtypes = [H]
lib.cdyn_model_load.argtypes = [C.c_int, C.c_char_p, C.c_uint, D, C.POINTER(H), C.c_char_p,
                                C.c_size_t]
lib.cdyn_model_free.argtypes = [H]
lib.cdyn_workspace_free.argtypes = [H]
lib.cdyn_workspace_create.argtypes = [H, C.POINTER(H)]
for f in ("cdyn_model_nq", "cdyn_model_nv", "cdyn_model_nbodies", "cdyn_model_ny",
          "cdyn_model_nyq", "cdyn_model_nloops"):
    getattr(lib, f).argtypes = [H, C.POINTER(C.c_int)]
lib.cdyn_model_joint_name.argtypes = [H, C.c_int, C.POINTER(C.c_char_p)]
lib.cdyn_neutral_configuration.argtypes = [H, H, D, C.c_int]
lib.cdyn_integrate.argtypes = [H, H, D, C.c_int, D, C.c_int, C.c_double, D, C.c_int]
lib.cdyn_aba.argtypes = [H, H] + [D, C.c_int] * 5
lib.cdyn_rnea.argtypes = [H, H] + [D, C.c_int] * 5
lib.cdyn_crba.argtypes = [H, H, D, C.c_int, D, C.c_int]
lib.cdyn_nonlinear_effects.argtypes = [H, H, D, C.c_int, D, C.c_int, D, C.c_int]
lib.cdyn_model_reference_configuration.argtypes = [H, D, C.c_int]
lib.cdyn_spanning_to_independent.argtypes = [H, H] + [D, C.c_int] * 4
lib.cdyn_independent_to_spanning.argtypes = [H, H] + [D, C.c_int] * 5
lib.cdyn_ce_aba.argtypes = [H, H] + [D, C.c_int] * 6
lib.cdyn_ce_rnea.argtypes = [H, H] + [D, C.c_int] * 6
lib.cdyn_cluster_mass_matrix.argtypes = [H, H, D, C.c_int, D, C.c_int]
lib.cdyn_cluster_bias.argtypes = [H, H, D, C.c_int, D, C.c_int, D, C.c_int]
lib.cdyn_model_describe_clusters.argtypes = [H, C.c_char_p, C.c_size_t, C.POINTER(C.c_size_t)]

failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAILED:", what)


def arr(values):
    return (C.c_double * len(values))(*values)


major, minor, patch = (int(x) for x in lib.cdyn_version_string().decode().split("."))
check(lib.cdyn_version() == major * 10000 + minor * 100 + patch, "version number")

# A parse error comes back with its message.
model, err = H(), C.create_string_buffer(256)
status = lib.cdyn_model_load(CDYN_ABI_VERSION, b"/nonexistent.urdf", 0, None, C.byref(model),
                             err, len(err))
check(status == CDYN_ERR_PARSE and b"/nonexistent.urdf" in err.value, "parse error")
check(lib.cdyn_status_string(status) == b"model could not be loaded", "status string")

for path in sys.argv[2:]:
    model, ws = H(), H()
    status = lib.cdyn_model_load(CDYN_ABI_VERSION, path.encode(), 0, None, C.byref(model), err,
                                 len(err))
    assert status == CDYN_OK, err.value
    assert lib.cdyn_workspace_create(model, C.byref(ws)) == CDYN_OK
    nq, nv, nb = C.c_int(), C.c_int(), C.c_int()
    lib.cdyn_model_nq(model, C.byref(nq))
    lib.cdyn_model_nv(model, C.byref(nv))
    lib.cdyn_model_nbodies(model, C.byref(nb))
    nq, nv, nb = nq.value, nv.value, nb.value
    name = C.c_char_p()
    check(lib.cdyn_model_joint_name(model, nb - 1, C.byref(name)) == CDYN_OK and name.value,
          "joint name")

    q = arr([0.0] * nq)
    lib.cdyn_neutral_configuration(model, ws, q, nq)
    dq = arr([math.sin(1.0 + i) for i in range(nv)])
    check(lib.cdyn_integrate(model, ws, q, nq, dq, nv, 0.7, q, nq) == CDYN_OK, "integrate")
    v = arr([math.cos(0.5 * i) for i in range(nv)])
    tau = arr([0.3 * i - 1.0 for i in range(nv)])
    fext = arr([0.1 * math.sin(i) for i in range(6 * nb)])
    ddq, tau2, nle = arr([0.0] * nv), arr([0.0] * nv), arr([0.0] * nv)
    M = arr([0.0] * (nv * nv))
    worst = 0.0
    for f, nf in ((None, 0), (fext, 6 * nb)):
        assert lib.cdyn_aba(model, ws, q, nq, v, nv, tau, nv, f, nf, ddq, nv) == CDYN_OK, \
            lib.cdyn_workspace_last_error(ws)
        assert lib.cdyn_rnea(model, ws, q, nq, v, nv, ddq, nv, f, nf, tau2, nv) == CDYN_OK
        err_id = max(abs(tau2[i] - tau[i]) for i in range(nv))
        check(err_id < 1e-9, f"{path}: rnea(aba(tau)) - tau = {err_id}")
        worst = max(worst, err_id)
    # M ddq + nle = tau (without external forces).
    assert lib.cdyn_aba(model, ws, q, nq, v, nv, tau, nv, None, 0, ddq, nv) == CDYN_OK
    assert lib.cdyn_crba(model, ws, q, nq, M, nv) == CDYN_OK
    assert lib.cdyn_nonlinear_effects(model, ws, q, nq, v, nv, nle, nv) == CDYN_OK
    res = max(abs(sum(M[i + j * nv] * ddq[j] for j in range(nv)) + nle[i] - tau[i])
              for i in range(nv))
    check(res < 1e-9, f"{path}: M ddq + nle - tau = {res}")
    # Errors are statuses, with a message.
    status = lib.cdyn_aba(model, ws, q, nq - 1, v, nv, tau, nv, None, 0, ddq, nv)
    check(status == CDYN_ERR_INVALID_SIZE, "size error")
    check(lib.cdyn_workspace_last_error(ws) == f"q has length {nq - 1}, expected {nq}".encode(),
          "size message")
    vbad = arr([float("nan")] * nv)
    check(lib.cdyn_aba(model, ws, q, nq, vbad, nv, tau, nv, None, 0, ddq, nv)
          == CDYN_ERR_NON_FINITE, "NaN error")
    print(f"{path}: nq = {nq}, nv = {nv}, max |rnea(aba(tau)) - tau| = {worst:.3g}, "
          f"max |M ddq + nle - tau| = {res:.3g}")

    # Independent coordinates: y of the reference configuration, a velocity, CE-ABA, CE-RNEA.
    ny, nyq, nloops = C.c_int(), C.c_int(), C.c_int()
    lib.cdyn_model_ny(model, C.byref(ny))
    lib.cdyn_model_nyq(model, C.byref(nyq))
    lib.cdyn_model_nloops(model, C.byref(nloops))
    ny, nyq = ny.value, nyq.value
    needed = C.c_size_t()
    check(lib.cdyn_model_describe_clusters(model, None, 0, C.byref(needed)) == CDYN_OK,
          "describe size")
    text = C.create_string_buffer(needed.value)
    check(lib.cdyn_model_describe_clusters(model, text, needed, None) == CDYN_OK
          and text.value.startswith(b"cluster tree of"), "describe clusters")
    qc, vc = arr([0.0] * nq), arr([0.0] * nv)
    y, ydot = arr([0.0] * nyq), arr([0.0] * ny)
    assert lib.cdyn_model_reference_configuration(model, qc, nq) == CDYN_OK
    assert lib.cdyn_spanning_to_independent(model, ws, qc, nq, vc, nv, y, nyq, ydot, ny) == CDYN_OK
    ydot = arr([0.4 * math.sin(0.3 + i) for i in range(ny)])
    tauy = arr([0.2 * i - 0.5 for i in range(ny)])
    ydd, tauy2, bias = arr([0.0] * ny), arr([0.0] * ny), arr([0.0] * ny)
    Hm = arr([0.0] * (ny * ny))
    assert lib.cdyn_independent_to_spanning(model, ws, y, nyq, ydot, ny, None, 0, qc, nq, vc,
                                            nv) == CDYN_OK, lib.cdyn_workspace_last_error(ws)
    assert lib.cdyn_ce_aba(model, ws, qc, nq, vc, nv, tauy, ny, None, 0, ydd, ny, None,
                           0) == CDYN_OK, lib.cdyn_workspace_last_error(ws)
    assert lib.cdyn_ce_rnea(model, ws, qc, nq, vc, nv, ydd, ny, None, 0, tauy2, ny, None,
                            0) == CDYN_OK
    err_ce = max((abs(tauy2[i] - tauy[i]) for i in range(ny)), default=0.0)
    check(err_ce < 1e-9, f"{path}: ce_rnea(ce_aba(tau)) - tau = {err_ce}")
    assert lib.cdyn_cluster_mass_matrix(model, ws, qc, nq, Hm, ny) == CDYN_OK
    assert lib.cdyn_cluster_bias(model, ws, qc, nq, vc, nv, bias, ny) == CDYN_OK
    res_ce = max((abs(sum(Hm[i + j * ny] * ydd[j] for j in range(ny)) + bias[i] - tauy[i])
                  for i in range(ny)), default=0.0)
    check(res_ce < 1e-9, f"{path}: H ydd + C - tau = {res_ce}")
    if nv > ny:  # a spanning velocity that violates the constraints is reported
        vbad = arr([vc[i] + 1.0 for i in range(nv)])
        status = lib.cdyn_ce_aba(model, ws, qc, nq, vbad, nv, tauy, ny, None, 0, ydd, ny, None, 0)
        check(status == CDYN_ERR_CONSTRAINT_FAILURE
              and b"violates" in lib.cdyn_workspace_last_error(ws), "constraint failure")
    print(f"{path}: ny = {ny}, nyq = {nyq}, {nloops.value} loops, "
          f"max |ce_rnea(ce_aba(tau)) - tau| = {err_ce:.3g}, max |H ydd + C - tau| = {res_ce:.3g}")
    check(lib.cdyn_workspace_free(ws) == CDYN_OK, "workspace free")
    check(lib.cdyn_model_free(model) == CDYN_OK, "model free")

sys.exit(1 if failures else 0)
