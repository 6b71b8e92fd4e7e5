"""clusterdyn from Python with ctypes (standard library only).

Usage: python3 example.py path/to/libclusterdyn.so.0 path/to/robot.urdf
"""
import ctypes as C
import sys

lib = C.CDLL(sys.argv[1])
CDYN_ABI_VERSION, CDYN_OK = 0, 0
dptr = C.POINTER(C.c_double)
lib.cdyn_status_string.restype = C.c_char_p
lib.cdyn_workspace_last_error.restype = C.c_char_p
lib.cdyn_model_load.argtypes = [C.c_int, C.c_char_p, C.c_uint, dptr, C.POINTER(C.c_void_p),
                                C.c_char_p, C.c_size_t]
for name in ("cdyn_workspace_create", "cdyn_model_nq", "cdyn_model_nv"):
    getattr(lib, name).argtypes = [C.c_void_p, C.c_void_p]
for name in ("cdyn_workspace_free", "cdyn_model_free"):
    getattr(lib, name).argtypes = [C.c_void_p]
lib.cdyn_neutral_configuration.argtypes = [C.c_void_p, C.c_void_p, dptr, C.c_int]
lib.cdyn_aba.argtypes = [C.c_void_p, C.c_void_p] + [dptr, C.c_int] * 5
lib.cdyn_rnea.argtypes = [C.c_void_p, C.c_void_p] + [dptr, C.c_int] * 5


def check(status, ws=None):
    """Raises with the library's message when a call fails."""
    if status != CDYN_OK:
        detail = lib.cdyn_workspace_last_error(ws).decode() if ws else ""
        raise RuntimeError(f"{lib.cdyn_status_string(status).decode()}: {detail}")


model, ws, err = C.c_void_p(), C.c_void_p(), C.create_string_buffer(512)
status = lib.cdyn_model_load(CDYN_ABI_VERSION, sys.argv[2].encode(), 0, None, C.byref(model),
                             err, len(err))
if status != CDYN_OK:
    sys.exit(f"cannot load the model: {err.value.decode()}")
check(lib.cdyn_workspace_create(model, C.byref(ws)))
nq, nv = C.c_int(), C.c_int()
check(lib.cdyn_model_nq(model, C.byref(nq)))
check(lib.cdyn_model_nv(model, C.byref(nv)))
nq, nv = nq.value, nv.value

q = (C.c_double * nq)()
v = (C.c_double * nv)(*([0.5] * nv))
tau = (C.c_double * nv)(*([1.0] * nv))
ddq, tau2 = (C.c_double * nv)(), (C.c_double * nv)()
check(lib.cdyn_neutral_configuration(model, ws, q, nq), ws)
# Forward dynamics, then inverse dynamics of the result (fext = None, 0: no external forces).
check(lib.cdyn_aba(model, ws, q, nq, v, nv, tau, nv, None, 0, ddq, nv), ws)
check(lib.cdyn_rnea(model, ws, q, nq, v, nv, ddq, nv, None, 0, tau2, nv), ws)
error = max((abs(a - b) for a, b in zip(tau2, tau)), default=0.0)
print(f"nq = {nq}, nv = {nv}, ddq[0] = {ddq[0]:.9f}, max |rnea(aba(tau)) - tau| = {error:.3g}")

check(lib.cdyn_workspace_free(ws))
check(lib.cdyn_model_free(model))
sys.exit(0 if error < 1e-9 else 1)
