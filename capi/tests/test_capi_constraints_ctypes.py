"""The constraint functions of the C API from Python ctypes (standard library only).

A quadruped on four point contacts: the Delassus matrix is symmetric positive definite and
equals J H^-1 J^T (H from cdyn_cluster_mass_matrix, J from cdyn_constraint_jacobian);
constrainedABA and proxPV agree; the settings / result structs cross the boundary; errors come
back as statuses with messages (a wrong row count, CDYN_ERR_NOT_CONVERGED with its outputs).

Usage: test_capi_constraints_ctypes.py LIBRARY cd_quadruped.urdf
"""
import ctypes as C
import sys

lib = C.CDLL(sys.argv[1])
path = sys.argv[2].encode()
OK, INVALID_SIZE, NOT_CONVERGED, POINT, LOCAL = 0, 1, 9, 0, 0
vp, dptr, iptr = C.c_void_p, C.POINTER(C.c_double), C.POINTER(C.c_int)


class Settings(C.Structure):
    _fields_ = [("mu", C.c_double), ("tolerance", C.c_double), ("max_iterations", C.c_int),
                ("warm_start", C.c_int)]


class Result(C.Structure):
    _fields_ = [("status", C.c_int), ("iterations", C.c_int), ("residual", C.c_double),
                ("dual_step", C.c_double), ("converged", C.c_int)]


lib.cdyn_model_load.argtypes = [C.c_int, C.c_char_p, C.c_uint, dptr, C.POINTER(vp), C.c_char_p,
                                C.c_size_t]
lib.cdyn_constraint_set_last_error.restype = C.c_char_p
lib.cdyn_constraint_workspace_last_error.restype = C.c_char_p
lib.cdyn_constraint_set_add_contact.argtypes = [vp, C.c_char_p, C.c_int, C.c_int, C.c_char_p,
                                                iptr]
lib.cdyn_constraint_set_row_name.argtypes = [vp, C.c_int, C.POINTER(C.c_char_p)]
lib.cdyn_constraint_jacobian.argtypes = [vp, vp, dptr, dptr, C.c_int, dptr, C.c_int, dptr]
lib.cdyn_delassus_matrix.argtypes = [vp, vp, dptr, dptr, C.c_int]
lib.cdyn_cluster_mass_matrix.argtypes = [vp, vp, dptr, C.c_int, dptr, C.c_int]
lib.cdyn_model_reference_configuration.argtypes = [vp, dptr, C.c_int]
solve_args = [vp, vp, dptr, dptr, dptr, dptr, C.POINTER(Settings), dptr, dptr, dptr, C.c_int,
              C.POINTER(Result)]
lib.cdyn_constrained_aba.argtypes = solve_args
lib.cdyn_prox_pv.argtypes = solve_args
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAILED:", what)


def ok(status, what):
    if status != OK:
        sys.exit(f"{what}: status {status}")


model, ws, cset, cws = vp(), vp(), vp(), vp()
err = C.create_string_buffer(512)
ok(lib.cdyn_model_load(0, path, 0, None, C.byref(model), err, len(err)), err.value)
ok(lib.cdyn_workspace_create(model, C.byref(ws)), "workspace")
ok(lib.cdyn_constraint_set_create(model, C.byref(cset)), "set")
for foot in (b"lf_foot", b"rf_foot", b"lh_foot", b"rh_foot"):
    ok(lib.cdyn_constraint_set_add_contact(cset, foot, POINT, LOCAL, None, None), foot)
check(lib.cdyn_constraint_set_add_contact(cset, b"lf_foot", POINT, LOCAL, None, None) == 8 and
      b"exists already" in lib.cdyn_constraint_set_last_error(cset), "duplicate contact")
ok(lib.cdyn_constraint_workspace_create(model, cset, C.byref(cws)), "constraint workspace")
sizes = {}
for name in ("nq", "nv", "ny"):
    n = C.c_int()
    ok(getattr(lib, "cdyn_model_" + name)(model, C.byref(n)), name)
    sizes[name] = n.value
m = C.c_int()
ok(lib.cdyn_constraint_set_nrows(cset, C.byref(m)), "nrows")
nq, nv, ny, m = sizes["nq"], sizes["nv"], sizes["ny"], m.value
row = C.c_char_p()
ok(lib.cdyn_constraint_set_row_name(cset, 11, C.byref(row)), "row name")
check(row.value == b"rh_foot_contact3d:lin_z", f"row name {row.value}")

q, v, tau = (C.c_double * nq)(), (C.c_double * nv)(), (C.c_double * ny)()
ok(lib.cdyn_model_reference_configuration(model, q, nq), "reference configuration")
D, J, H = (C.c_double * (m * m))(), (C.c_double * (m * ny))(), (C.c_double * (ny * ny))()
ok(lib.cdyn_delassus_matrix(cset, cws, q, D, m), "delassus")
ok(lib.cdyn_constraint_jacobian(cset, cws, q, v, m, J, m, None), "jacobian")
ok(lib.cdyn_cluster_mass_matrix(model, ws, q, nq, H, ny), "H")


def cholesky_solve(A, n, b):
    """Solves A x = b for symmetric positive definite A (column-major, n x n)."""
    L = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1):
            s = A[i + j * n] - sum(L[i][k] * L[j][k] for k in range(j))
            if i == j:
                if s <= 0.0:
                    raise ValueError("not positive definite")
                L[i][i] = s ** 0.5
            else:
                L[i][j] = s / L[j][j]
    y = [0.0] * n
    for i in range(n):
        y[i] = (b[i] - sum(L[i][k] * y[k] for k in range(i))) / L[i][i]
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (y[i] - sum(L[k][i] * x[k] for k in range(i + 1, n))) / L[i][i]
    return x


# D = J H^-1 J^T, column by column; D symmetric positive definite.
HinvJt = [cholesky_solve(H, ny, [J[r + c * m] for c in range(ny)]) for r in range(m)]
dmax = max(abs(D[i + j * m] - sum(J[i + c * m] * HinvJt[j][c] for c in range(ny)))
           for i in range(m) for j in range(m))
check(dmax < 1e-9, f"D vs J H^-1 J^T: {dmax}")
check(max(abs(D[i + j * m] - D[j + i * m]) for i in range(m) for j in range(m)) < 1e-12,
      "D symmetric")
cholesky_solve(D, m, [1.0] * m)  # raises when D is not positive definite

settings = Settings()
ok(lib.cdyn_proximal_settings_default(C.byref(settings)), "settings")
check(settings.mu == 1e-4 and settings.max_iterations == 50, "default settings")
ydd, lam, ydd2, lam2 = ((C.c_double * n)() for n in (ny, m, ny, m))
res = Result()
ok(lib.cdyn_constrained_aba(cset, cws, q, v, tau, None, C.byref(settings), ydd, None, lam, m,
                            C.byref(res)), lib.cdyn_constraint_workspace_last_error(cws))
check(res.converged == 1 and res.status == OK and res.residual <= 1e-10, "aba result")
ok(lib.cdyn_prox_pv(cset, cws, q, v, tau, None, None, ydd2, None, lam2, m, None), "prox_pv")
check(max(abs(a - b) for a, b in zip(ydd, ydd2)) < 1e-8, "ydd aba vs proxPV")
check(max(abs(a - b) for a, b in zip(lam, lam2)) < 1e-6, "lambda aba vs proxPV")
check(sum(lam[2::3]) > 0.0, "the ground pushes the feet up")

st = lib.cdyn_prox_pv(cset, cws, q, v, tau, None, None, ydd2, None, lam2, m - 1, None)
check(st == INVALID_SIZE and b"expected the set's row count 12" in
      lib.cdyn_constraint_workspace_last_error(cws), "wrong m")
tight = Settings(settings.mu, 1e-300, 0, 0)
st = lib.cdyn_prox_pv(cset, cws, q, v, tau, None, C.byref(tight), ydd2, None, lam2, m,
                      C.byref(res))
check(st == NOT_CONVERGED and res.status == NOT_CONVERGED and res.converged == 0,
      "not converged")

ok(lib.cdyn_constraint_workspace_free(cws), "free")
ok(lib.cdyn_constraint_set_free(cset), "free")
ok(lib.cdyn_workspace_free(ws), "free")
ok(lib.cdyn_model_free(model), "free")
print(f"m = {m}, max |D - J H^-1 J^T| = {dmax:.2e}, {len(failures)} failures")
sys.exit(1 if failures else 0)
