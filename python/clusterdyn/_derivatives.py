"""Analytical derivatives of the dynamics (clusterdyn.h "Derivatives"; docs/derivatives.md).

Tree derivatives (spanning tree, loop constraints ignored): RNEA d tau / d(q, v, a), ABA
d ddq / d(q, v, tau), M^-1 (Carpentier & Mansard 2018). Cluster-tree derivatives in the
independent coordinates (loops embedded, Chignoli et al. 2023): CE-RNEA d tau / d(y, ydot, ydd),
CE-ABA d ydd / d(y, ydot, tau).

Conventions: configuration derivatives are in the tangent space (nv, or ny, columns): column k
is the derivative along integrate(q, e e_k, 1), the floating base's body-frame Lie-group tangent;
matrices are numpy (n, n) arrays with both triangles filled (also M^-1, H^-1). Cluster-tree
inputs (q, v) must be a closed spanning state (Workspace.independent_to_spanning).
"""

import ctypes as C
import threading

import numpy as np

from . import _core as core

_LOCK_GUARD = threading.Lock()


class DerivativeWorkspace(core._Handle):
    """The derivative arrays of one model (cdyn_derivative_workspace; about 6 nv^2 + 6 ny^2
    doubles), created on demand; one per thread. Its calls allocate nothing in the library."""

    _what = "derivative workspace"

    def __init__(self, model):
        self.model = model
        self._h = None
        h = C.c_void_p()
        core._check(core.lib().cdyn_derivative_workspace_create(model.handle, C.byref(h)),
                     "cdyn_derivative_workspace_create",
                     core.lib().cdyn_last_error().decode(errors="replace"))
        self._h = h

    def close(self):
        """Frees the derivative workspace. Idempotent."""
        if self._h is not None:
            core.lib().cdyn_derivative_workspace_free(self._h)
            self._h = None

    @property
    def last_error(self):
        """Message of the last failed call ("" after a success)."""
        return core.lib().cdyn_derivative_workspace_last_error(self._h).decode(errors="replace")

    def _run(self, name, sizes, x3, x3name, fext, out_n, mat_n, want_value):
        m = self.model
        q = core._vec(sizes[0], m.nq, "q")
        v = core._vec(sizes[1], m.nv, "v")
        x = core._vec(x3, out_n, x3name)
        f = core._fext(fext, m.nbodies)
        value = np.zeros(out_n)
        mats = [np.zeros((mat_n, mat_n), order="F") for _ in range(3)]
        ptr = core._ptr
        status = getattr(core.lib(), name)(
            m.handle, self.handle, ptr(q), q.size, ptr(v), v.size, ptr(x), x.size, ptr(f),
            core._len(f), ptr(value), value.size, ptr(mats[0]), ptr(mats[1]), ptr(mats[2]),
            max(1, mat_n))
        if status != core.OK:
            raise core.ClusterdynError(status, self.last_error, name)
        mats = tuple(np.ascontiguousarray(a) for a in mats)
        return (value,) + mats if want_value else mats

    def rnea_derivatives(self, q, v, a, fext=None, return_tau=False):
        """(dtau_dq, dtau_dv, M) (nv, nv) of tau = rnea(q, v, a, fext) on the spanning tree;
        with return_tau: (tau, dtau_dq, dtau_dv, M). MJCF joint dynamics included, as in rnea:
        tau = rnea + A a - tau_p(q, v) and M + A (A = armature)."""
        return self._run("cdyn_rnea_derivatives", (q, v), a, "a", fext, self.model.nv,
                         self.model.nv, return_tau)

    def aba_derivatives(self, q, v, tau, fext=None, return_ddq=False):
        """(ddq_dq, ddq_dv, Minv) (nv, nv) of ddq = aba(q, v, tau, fext), Minv = d ddq / d tau;
        with return_ddq: (ddq, ddq_dq, ddq_dv, Minv). MJCF joint dynamics included, as in aba:
        Minv = (M + A)^-1, springs and dampers in ddq and its derivatives."""
        return self._run("cdyn_aba_derivatives", (q, v), tau, "tau", fext, self.model.nv,
                         self.model.nv, return_ddq)

    def minverse(self, q):
        """M(q)^-1 (nv, nv) of the spanning tree (articulated-body recursion)."""
        return self._inverse("cdyn_minverse", q, self.model.nv)

    def cluster_minverse(self, q):
        """H(q)^-1 (ny, ny) of the cluster tree at a closed configuration q, by the recursion on
        the cluster tree (cdyn_cluster_minverse), without forming or factoring H. With joint
        dynamics (an MJCF file's armature A): H = G^T (M + A) G, as ce_aba."""
        return self._inverse("cdyn_cluster_minverse", q, self.model.ny)

    def _inverse(self, fn, q, n):
        """The (n, n) matrix of the C function fn(model, dws, q, nq, out, ld), C-ordered."""
        m = self.model
        q = core._vec(q, m.nq, "q")
        out = np.zeros((n, n), order="F")
        status = getattr(core.lib(), fn)(m.handle, self.handle, core._ptr(q), q.size,
                                         core._ptr(out), max(1, n))
        if status != core.OK:
            raise core.ClusterdynError(status, self.last_error, fn)
        return np.ascontiguousarray(out)

    def ce_rnea_derivatives(self, q, v, ydd, fext=None, return_tau=False):
        """(dtau_dy, dtau_dydot, H) (ny, ny) of tau = ce_rnea(q, v, ydd, fext) at a closed
        state; with return_tau: (tau, dtau_dy, dtau_dydot, H). The joint dynamics of an MJCF
        file (armature, springs, dampers) are included as in ce_rnea."""
        return self._run("cdyn_ce_rnea_derivatives", (q, v), ydd, "ydd", fext, self.model.ny,
                         self.model.ny, return_tau)

    def ce_aba_derivatives(self, q, v, tau, fext=None, return_ydd=False):
        """(dydd_dy, dydd_dydot, Hinv) (ny, ny) of ydd = ce_aba(q, v, tau, fext) at a closed
        state, Hinv = d ydd / d tau; with return_ydd: (ydd, dydd_dy, dydd_dydot, Hinv). The
        joint dynamics are included as in ce_aba."""
        return self._run("cdyn_ce_aba_derivatives", (q, v), tau, "tau", fext, self.model.ny,
                         self.model.ny, return_ydd)


class DerivativesMixin:
    """The Model methods of the derivatives: single states on the model's own derivative
    workspace (serialized by a lock), and batches on several threads."""

    def derivative_workspace(self):
        """A new :class:`DerivativeWorkspace` of this model (one per thread)."""
        return DerivativeWorkspace(self)

    def _own_dws(self):
        """The lock of the model's own derivative workspaces (made once, under a module lock)."""
        with _LOCK_GUARD:
            if getattr(self, "_dws_lock", None) is None:
                self._dws_lock = threading.Lock()
            return self._dws_lock

    def _single(self, method, *args, **kw):
        with self._own_dws():
            if not getattr(self, "_dws", None):
                self._dws = [DerivativeWorkspace(self)]
            return getattr(self._dws[0], method)(*args, **kw)

    def rnea_derivatives(self, q, v, a, fext=None, return_tau=False):
        """See :meth:`DerivativeWorkspace.rnea_derivatives`."""
        return self._single("rnea_derivatives", q, v, a, fext, return_tau)

    def aba_derivatives(self, q, v, tau, fext=None, return_ddq=False):
        """See :meth:`DerivativeWorkspace.aba_derivatives`."""
        return self._single("aba_derivatives", q, v, tau, fext, return_ddq)

    def minverse(self, q):
        """See :meth:`DerivativeWorkspace.minverse`."""
        return self._single("minverse", q)

    def cluster_minverse(self, q):
        """See :meth:`DerivativeWorkspace.cluster_minverse`."""
        return self._single("cluster_minverse", q)

    def ce_rnea_derivatives(self, q, v, ydd, fext=None, return_tau=False):
        """See :meth:`DerivativeWorkspace.ce_rnea_derivatives`."""
        return self._single("ce_rnea_derivatives", q, v, ydd, fext, return_tau)

    def ce_aba_derivatives(self, q, v, tau, fext=None, return_ydd=False):
        """See :meth:`DerivativeWorkspace.ce_aba_derivatives`."""
        return self._single("ce_aba_derivatives", q, v, tau, fext, return_ydd)

    def _free_derivative_workspaces(self):
        for d in getattr(self, "_dws", None) or []:
            d.close()
        self._dws = []

    # -- batches

    def _batch_dws(self, n):
        """The model's first n derivative workspaces as a ctypes array (call under the lock)."""
        if getattr(self, "_dws", None) is None:
            self._dws = []
        while len(self._dws) < n:
            self._dws.append(DerivativeWorkspace(self))
        return (C.c_void_p * n)(*(d.handle.value for d in self._dws[:n]))

    def _derivative_batch(self, name, Q, V, X, xname, xn, mn, fext, threads, out):
        n = core._threads(threads)
        N, (Q, V, X), layout = core._stack([(Q, self.nq, "Q"), (V, self.nv, "V"),
                                            (X, xn, xname)])
        F = core._stack_fext(fext, N, self.nbodies, layout)
        value, mats = _derivative_outs(out, N, xn, mn, layout)
        with self._own_dws():
            arr = self._batch_dws(n)
            failed = C.c_int(-1)
            p = core._ptr
            status = getattr(core.lib(), "cdyn_batch_" + name)(
                self.handle, arr, n, N, layout, p(Q), self.nq, p(V), self.nv, p(X), xn, p(F),
                0 if F is None else 6 * self.nbodies, p(value), xn,
                *(x for M in mats for x in _mat_ptr(M)),
                C.byref(failed))
            message = self._dws[0].last_error
        if status != core.OK:
            where = f" (state {failed.value})" if failed.value >= 0 else ""
            raise core.ClusterdynError(status, message + where, "cdyn_batch_" + name,
                                       state=failed.value)
        return (value,) + tuple(mats)

    def rnea_derivatives_batch(self, Q, V, A, fext=None, threads=None, out=None):
        """N states of :meth:`rnea_derivatives`: Q (N, nq), V, A (N, nv), fext None or
        (N, nbodies, 6) -> (TAU (N, nv), DTAU_DQ, DTAU_DV, M (N, nv, nv)), bit-identical to
        single calls; threads: derivative workspaces / threads (default os.cpu_count()).

        The matrices are views of the library's output, not copies: each state's matrix is
        column-major in memory (``M[i]`` is Fortran-ordered; ``M.transpose(0, 2, 1)`` is
        C-contiguous; for Fortran-ordered inputs ``M`` is a Fortran-ordered array). out: None,
        or the four arrays to write into instead, returned: the first as for the other *_batch
        calls (:meth:`Model.mass_matrix_batch`), the matrices (N, n, n) float64 in the layout
        just described (the arrays of an earlier call of the same size are valid; a new one:
        ``np.empty((N, n, n)).transpose(0, 2, 1)``). The same holds for the other derivative
        batches."""
        return self._derivative_batch("rnea_derivatives", Q, V, A, "A", self.nv, self.nv, fext,
                                      threads, out)

    def aba_derivatives_batch(self, Q, V, TAU, fext=None, threads=None, out=None):
        """N states of :meth:`aba_derivatives` -> (DDQ (N, nv), DDQ_DQ, DDQ_DV, MINV
        (N, nv, nv)); layout and out as :meth:`rnea_derivatives_batch`."""
        return self._derivative_batch("aba_derivatives", Q, V, TAU, "TAU", self.nv, self.nv,
                                      fext, threads, out)

    def ce_rnea_derivatives_batch(self, Q, V, YDD, fext=None, threads=None, out=None):
        """N closed states of :meth:`ce_rnea_derivatives`: YDD (N, ny) -> (TAU (N, ny),
        DTAU_DY, DTAU_DYDOT, H (N, ny, ny)); layout and out as :meth:`rnea_derivatives_batch`."""
        return self._derivative_batch("ce_rnea_derivatives", Q, V, YDD, "YDD", self.ny, self.ny,
                                      fext, threads, out)

    def ce_aba_derivatives_batch(self, Q, V, TAU, fext=None, threads=None, out=None):
        """N closed states of :meth:`ce_aba_derivatives`: TAU (N, ny) -> (YDD (N, ny),
        DYDD_DY, DYDD_DYDOT, HINV (N, ny, ny)); layout and out as
        :meth:`rnea_derivatives_batch`."""
        return self._derivative_batch("ce_aba_derivatives", Q, V, TAU, "TAU", self.ny, self.ny,
                                      fext, threads, out)

    def minverse_batch(self, Q, threads=None, out=None):
        """N configurations of :meth:`DerivativeWorkspace.minverse`: Q (N, nq) -> MINV (N, nv,
        nv), bit-identical to single calls (cdyn_batch_minverse); threads, layout and out as
        :meth:`cluster_minverse_batch`."""
        return self._inverse_batch("cdyn_batch_minverse", Q, self.nv, threads, out)

    def cluster_minverse_batch(self, Q, threads=None, out=None):
        """N closed configurations of :meth:`cluster_minverse`: Q (N, nq) -> HINV (N, ny, ny),
        bit-identical to single calls (cdyn_batch_cluster_minverse); threads as
        :meth:`rnea_derivatives_batch`. HINV is a view of the library's output (each state's
        matrix column-major, as the matrices of :meth:`rnea_derivatives_batch`); out: None or
        such an (N, ny, ny) array to write into, returned."""
        return self._inverse_batch("cdyn_batch_cluster_minverse", Q, self.ny, threads, out)

    def _inverse_batch(self, fn, Q, dim, threads, out):
        """N matrices (N, dim, dim) of the batch function fn(model, dws, nws, N, layout, Q, nq,
        out, dim^2, failed)."""
        n = core._threads(threads)
        N, (Q,), layout = core._stack([(Q, self.nq, "Q")])
        if out is None:
            H = _new_mat(N, dim, layout)
        else:
            H = _check_mat_out(out, N, dim, layout, "out")
        with self._own_dws():
            arr = self._batch_dws(n)
            failed = C.c_int(-1)
            status = getattr(core.lib(), fn)(self.handle, arr, n, N, layout, core._ptr(Q),
                                             self.nq, *_mat_ptr(H), C.byref(failed))
            message = self._dws[0].last_error
        if status != core.OK:
            where = f" (state {failed.value})" if failed.value >= 0 else ""
            raise core.ClusterdynError(status, message + where, fn, state=failed.value)
        return H

def _mat_ptr(M):
    """(pointer, n * n) of a batch matrix output: the library writes state i's matrix
    column-major at i * n * n (row-major layout) or its element e at i + e * N (column-major)."""
    return core._ptr(M), M.shape[1] * M.shape[2]


def _mat_storage_ok(M, layout):
    """Whether the (N, n, n) array M is the memory the library writes (see _mat_ptr): element
    (i, r, c) at i * n * n + r + c * n (row-major layout) or i + (r + c * n) * N (column-major),
    i.e. M.transpose(0, 2, 1) C-contiguous, or M Fortran-ordered."""
    if layout == core._COL_MAJOR:
        return M.flags.f_contiguous
    return M.transpose(0, 2, 1).flags.c_contiguous


def _new_mat(N, n, layout):
    if layout == core._COL_MAJOR:
        return np.zeros((N, n, n), order="F")
    return np.zeros((N, n, n)).transpose(0, 2, 1)  # state i's matrix column-major: no copy


def _derivative_outs(out, N, xn, mn, layout):
    """(value (N, xn), [three (N, mn, mn) matrices]) of a derivative batch: new ones when out is
    None, else the caller's four arrays, checked (the library writes them in place)."""
    if out is None:
        return core._out(N, xn, layout), [_new_mat(N, mn, layout) for _ in range(3)]
    given = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    if len(given) != 4:
        raise ValueError(f"out must hold 4 arrays (the value and three matrices), got "
                         f"{len(given)}")
    core._check_out(given[0], (N, xn), layout, "out[0]")
    for k, M in enumerate(given[1:], 1):
        _check_mat_out(M, N, mn, layout, f"out[{k}]")
    return given[0], list(given[1:])


def _check_mat_out(M, N, mn, layout, name):
    """M, when it is an (N, mn, mn) matrix output the library can write in place (_mat_ptr);
    else a ValueError naming the argument."""
    if not isinstance(M, np.ndarray) or M.dtype != np.float64 or M.shape != (N, mn, mn) \
            or not M.flags.writeable or not _mat_storage_ok(M, layout):
        got = f"{M.dtype} {M.shape}" if isinstance(M, np.ndarray) else type(M).__name__
        want = ("a Fortran-ordered array" if layout == core._COL_MAJOR else
                "each state's matrix column-major, e.g. np.empty((N, n, n)).transpose(0, 2, "
                "1)")
        raise ValueError(f"{name} must be a writeable float64 array of shape "
                         f"{(N, mn, mn)}, {want} (the layout of the inputs), got {got}")
    return M
