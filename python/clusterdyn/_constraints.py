"""Constraints (contacts, welds, loops), proximal constrained dynamics and constraint forces:
numpy wrappers of the cdyn_constraint_*, cdyn_delassus_*, cdyn_*_aba / prox_pv / dense and
cdyn_forces_* functions of the C API.

Equations (docs/constraints.md), in the cluster tree's independent coordinates:

    H ydd + C = tau + J^T lam,        J ydd + gamma = k

J (m, ny) the row Jacobian, gamma (m,) the row accelerations at ydd = 0, k the Baumgarte targets
(0 without gains), lam (m,) the multipliers: J^T lam is the generalized force ON the robot (lam
is the force on body1 at frame A, in the rows' axes).

Lifetimes: a ConstraintWorkspace keeps its ConstraintSet alive and the set keeps its Model
alive. ConstraintSet.close() closes the set's workspaces first; Model.close() refuses while
sets or Forces of the model are open.
"""

import collections
import ctypes as C
import warnings
import weakref

import numpy as np

from . import _constrained_derivatives, _core
from ._core import (ERR_INVALID_ARGUMENT, ERR_NOT_CONVERGED, OK, ClusterdynError, Workspace,
                    _check, _fext, _Handle, _index, _ptr, _real, _rf, _vec, lib)
from ._library import ProximalResult as _CResult
from ._library import ProximalSettings as _CSettings

CONSTRAINT_ROWS = {"point": 3, "weld": 6, "revolute": 5, "planar": 3, "prismatic": 5}
"""Constraint types in cdyn_constraint_type order, and their number of rows."""
CONSTRAINT_TYPES = tuple(CONSTRAINT_ROWS)
"""Constraint types (cdyn_constraint_type order: the index is the C value)."""
FORCE_FRAMES = {"body": 0, "world": 1}
ON_NOT_CONVERGED = ("warn", "raise", "ignore")


class ProximalResult(collections.namedtuple(
        "ProximalResult", "ydd qdd lam iterations residual dual_step converged status")):
    """Result of a proximal constrained-dynamics solve.

    ydd (ny,) independent accelerations; qdd (nv,) spanning accelerations G ydd + g; lam (m,)
    multipliers (force on body1 at frame A, rows' axes); iterations (proximal iterations used),
    residual (final |J ydd + gamma - k|_inf), dual_step (last |lam_k - lam_(k-1)|_inf),
    converged (bool: the row residual <= tolerance and the dynamics residual
    |H ydd + C - tau - J^T lam|_inf <= tolerance * max(1, |tau|, |lam|, |fext|), see
    cdyn_proximal_result in clusterdyn.h); status (OK or ERR_NOT_CONVERGED). When converged is
    False the arrays hold the last iterate (finite).
    """
    __slots__ = ()


class BatchProximalResult(collections.namedtuple(
        "BatchProximalResult", "ydd qdd lam iterations residual dual_step converged status")):
    """Result of N proximal solves (:meth:`ConstraintSet.constrained_dynamics_batch`): the
    fields of :class:`ProximalResult` stacked per state: ydd (N, ny), qdd (N, nv), lam (N, m),
    iterations (N,) int, residual (N,), dual_step (N,), converged (N,) bool, status (N,) int
    (OK or ERR_NOT_CONVERGED). States that did not converge hold their last iterate (finite).
    """
    __slots__ = ()


_RESULT_DTYPE = np.dtype({
    "names": [name for name, _ in _CResult._fields_],
    "formats": [np.int32 if t is C.c_int else np.float64 for _, t in _CResult._fields_],
    "offsets": [getattr(_CResult, name).offset for name, _ in _CResult._fields_],
    "itemsize": C.sizeof(_CResult)})
"""numpy view of cdyn_proximal_result."""

SOLVERS = {"constrained_aba": 0, "prox_pv": 1, "dense": 2}
"""Solvers of the batched constrained dynamics (cdyn_constrained_solver)."""


class NotConvergedWarning(RuntimeWarning):
    """A proximal solve stopped above its tolerance (on_not_converged="warn")."""


class NotConvergedError(ClusterdynError):
    """A proximal solve stopped above its tolerance (on_not_converged="raise"); ``result``
    holds the :class:`ProximalResult` of the last iterate."""

    def __init__(self, message, function, result):
        super().__init__(ERR_NOT_CONVERGED, message, function)
        self.result = result


def default_proximal_settings():
    """The library's default settings as a dict (mu, tolerance, max_iterations, warm_start)."""
    s = _CSettings()
    _check(lib().cdyn_proximal_settings_default(C.byref(s)), "cdyn_proximal_settings_default")
    return {"mu": s.mu, "tolerance": s.tolerance, "max_iterations": s.max_iterations,
            "warm_start": bool(s.warm_start)}


# ---- argument conversion ---------------------------------------------------------------------

def _pose(T, name):
    """A placement as the C API wants it: None (identity), a 4 x 4 homogeneous matrix [R p;
    0 0 0 1] or a pair (R (3, 3), p (3,)) -> 16 doubles, column-major."""
    if T is None:
        return None
    if isinstance(T, tuple) and len(T) == 2:
        R, p = _real(T[0], name + " R"), _real(T[1], name + " p")
        if R.shape != (3, 3) or p.shape != (3,):
            raise ValueError(f"{name} as (R, p) must have shapes ((3, 3), (3,)), got "
                             f"({R.shape}, {p.shape})")
        M = np.eye(4)
        M[:3, :3], M[:3, 3] = R, p
        T = M
    a = _real(T, name)
    if a.shape != (4, 4):
        raise ValueError(f"{name} must be a 4 x 4 homogeneous matrix (or a pair (R, p)), got "
                         f"shape {a.shape}")
    return np.asfortranarray(a, dtype=np.float64)


def _ctype(t):
    if isinstance(t, str):
        try:
            return CONSTRAINT_TYPES.index(t.lower())
        except ValueError:
            raise ValueError(f"constraint type must be one of {CONSTRAINT_TYPES}, "
                             f"got {t!r}") from None
    if isinstance(t, (bool, np.bool_)) or not isinstance(t, (int, np.integer)):
        raise TypeError(f"constraint type must be a name {CONSTRAINT_TYPES} or an int, got {t!r}")
    return int(t)


def _number(x, name):
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, float, np.integer,
                                                             np.floating)):
        raise TypeError(f"{name} must be a real number, got {x!r}")
    return float(x)


def _count(x, name):
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {x!r}")
    if not -2**31 <= x < 2**31:
        raise ValueError(f"{name} = {x} does not fit a C int")
    return int(x)


def _on_not_converged(value):
    if value not in ON_NOT_CONVERGED:
        raise ValueError(f"on_not_converged must be one of {ON_NOT_CONVERGED}, got {value!r}")
    return value


# ---- constraint sets -------------------------------------------------------------------------

class ConstraintSet(_Handle):
    """The constraints of one model (cdyn_constraint_set): contacts of frames with the world,
    welds and two-body constraints (loops). Create with :meth:`Model.constraint_set` (empty)
    or :meth:`Model.cut_loop_constraints`; add constraints, then create one
    :meth:`workspace` per thread: from then on the set is read-only.

    Sizes: ``size`` (len(set): number of constraints), ``nrows`` (m, the rows of lam, gamma,
    J, the Delassus matrix); names: ``row_names`` ("<constraint>:<component>", components
    ang_x ang_y ang_z lin_x lin_y lin_z) and ``names`` (the constraints, in index order).
    """

    def __init__(self, model, cut_loops=False):
        """Use :meth:`Model.constraint_set` or :meth:`Model.cut_loop_constraints`."""
        self.model = model
        self._h = None
        self._workspaces = weakref.WeakSet()
        self._batch_ws = []  # constraint workspaces of the batched calls, one per thread
        self._cdws = None  # cdyn_constrained_derivative_workspace, created on first use
        h = C.c_void_p()
        fn = "cdyn_constraint_set_create" + ("_cut_loops" if cut_loops else "")
        _check(getattr(lib(), fn)(model.handle, C.byref(h)), fn)
        self._h = h

    # -- lifetime

    def close(self):
        """Closes the constraint workspaces of this set, then frees the set. Idempotent."""
        if self._h is None:
            return
        for ws in list(self._workspaces):
            ws.close()
        self._batch_ws.clear()
        self._free_derivative_workspace()
        status = lib().cdyn_constraint_set_free(self._h)
        if status != OK:
            raise ClusterdynError(status, "constraint workspaces of this set still exist",
                                  "cdyn_constraint_set_free")
        self._h = None

    _what = "constraint set"

    def _release(self):
        if getattr(self, "_h", None) is not None:
            self._free_derivative_workspace()
            lib().cdyn_constraint_set_free(self._h)  # refused while workspaces exist
            self._h = None

    @property
    def last_error(self):
        """Message of the last failed call on the set ("" after a success)."""
        return lib().cdyn_constraint_set_last_error(self._h).decode(errors="replace")

    def _call(self, name, *args):
        status = getattr(lib(), name)(self.handle, *args)
        if status != OK:  # set functions write the set's message, set queries cdyn_last_error
            raise ClusterdynError(status, self.last_error or lib().cdyn_last_error().decode(),
                                  name)

    def __repr__(self):
        if self._h is None:
            return "<clusterdyn.ConstraintSet (closed)>"
        return (f"<clusterdyn.ConstraintSet of {self.model.name!r}: {self.size} constraints, "
                f"{self.nrows} rows>")

    # -- building

    def _body(self, body, what, world_ok):
        if body is None or (isinstance(body, str) and body == "world"):
            if world_ok:
                return -1
        return _index(body, self.model.body_index, what)

    def add(self, name, type, body1, placement1=None, body2=-1, placement2=None, frame="local",
            kp=0.0, kd=0.0):
        """Adds a constraint between frame A (placement1 on body1) and frame B (placement2 on
        body2, or a fixed world pose when body2 is -1 / None / "world"); returns its index.

        name: unique in the set. type: "point" (3 rows: linear), "weld" (6: angular, linear),
        "revolute" (5: free about A's z), "planar" (3: free in A's xy plane), "prismatic" (5:
        free along A's z). body1, body2: body index or name. placement1, placement2: poses of
        A and B in their bodies (B in the world when body2 is -1) as 4 x 4 homogeneous numpy
        matrices [R p; 0 0 0 1] (or pairs (R, p)); None: the identity. frame: rows in A's axes
        ("local") or, for point and weld only, in world axes at A's origin
        ("local_world_aligned"). kp [1/s^2], kd [1/s]: Baumgarte gains (>= 0).
        The library rejects unknown bodies, world-world, a non-rotation R, negative gains and
        duplicate names (ClusterdynError with its message); the set is then unchanged.
        """
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, got {name!r}")
        t = _ctype(type)
        b1 = self._body(body1, "body", False)
        b2 = self._body(body2, "body", True)
        T1, T2 = _pose(placement1, "placement1"), _pose(placement2, "placement2")
        gains = np.array([_number(kp, "kp"), _number(kd, "kd")])
        index = C.c_int(-1)
        self._call("cdyn_constraint_set_add", name.encode(), t, b1, _ptr(T1), b2, _ptr(T2),
                   _rf(frame), _ptr(gains), C.byref(index))
        return index.value

    def add_contact(self, frame_name, type="point", frame="local", name=None):
        """Adds a contact of the named frame (a link) with the world: frame A is the link's
        frame, frame B its world pose at the model's reference configuration. type: "point"
        (3D contact, rows lin_x lin_y lin_z) or "weld" (6D contact). frame: "local" (rows in
        the link's axes) or "local_world_aligned". name: default "<frame>_contact3d" /
        "<frame>_contact6d". Returns the constraint's index."""
        if not isinstance(frame_name, str):
            raise TypeError(f"frame_name must be a str, got {frame_name!r}")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name must be a str or None, got {name!r}")
        index = C.c_int(-1)
        self._call("cdyn_constraint_set_add_contact", frame_name.encode(), _ctype(type),
                   _rf(frame), None if name is None else name.encode(), C.byref(index))
        return index.value

    # -- queries

    @property
    def size(self):
        """Number of constraints."""
        out = C.c_int()
        self._call("cdyn_constraint_set_size", C.byref(out))
        return out.value

    def __len__(self):
        return self.size

    @property
    def nrows(self):
        """Number of rows m (sum of the constraints' rows)."""
        out = C.c_int()
        self._call("cdyn_constraint_set_nrows", C.byref(out))
        return out.value

    @property
    def row_names(self):
        """Tuple of the m row names "<constraint>:<component>"."""
        out, s = [], C.c_char_p()
        for r in range(self.nrows):
            self._call("cdyn_constraint_set_row_name", r, C.byref(s))
            out.append(s.value.decode())
        return tuple(out)

    @property
    def names(self):
        """Tuple of the constraint names, in index order (from the row names)."""
        out = []
        for row in self.row_names:
            n = row.rsplit(":", 1)[0]
            if not out or out[-1] != n:
                out.append(n)
        return tuple(out)

    def workspace(self):
        """A new :class:`ConstraintWorkspace` of this set (one per thread). The set is
        read-only from now on (add raises)."""
        return ConstraintWorkspace(self)

    # -- batched constrained dynamics

    def _batch_workspaces(self, n):
        ws = self._batch_ws
        while len(ws) < n:
            ws.append(ConstraintWorkspace(self))
        return (C.c_void_p * n)(*(w.handle.value for w in ws[:n])), ws[0]

    def constrained_dynamics_batch(self, Q, V, TAU, fext=None, solver="prox_pv", mu=1e-4,
                                   tolerance=1e-10, max_iterations=50, threads=None,
                                   use_pool=True, on_not_converged="warn"):
        """Proximal constrained dynamics of N closed states at once
        (cdyn_batch_constrained_dynamics / cdyn_pool_constrained_dynamics).

        Q (N, nq), V (N, nv): closed spanning states; TAU (N, ny) independent efforts; fext
        None or (N, nbodies, 6). solver: "constrained_aba" (contact sets only), "prox_pv" or
        "dense"; mu, tolerance, max_iterations as :meth:`ConstraintWorkspace.prox_pv` (no warm
        start: each state is solved from lam = 0). threads: default os.cpu_count(); use_pool:
        the model's persistent pool (True) or threads started for this call. The set keeps
        one constraint workspace per thread (so it is read-only from the first call on).
        Returns a :class:`BatchProximalResult`; every state's arrays are bit-identical to the
        single call. States that stop above the tolerance still return their last iterate:
        on_not_converged "warn" (default), "ignore" or "raise" (:class:`NotConvergedError`
        whose ``result`` is the whole BatchProximalResult), as for the single calls.
        """
        if not hasattr(lib(), "cdyn_batch_constrained_dynamics"):
            raise ClusterdynError(ERR_INVALID_ARGUMENT, "the loaded library "
                                  f"{_core._library.find_library()} predates batched "
                                  "constrained dynamics", "cdyn_batch_constrained_dynamics")
        if solver not in SOLVERS:
            raise ValueError(f"solver must be one of {tuple(SOLVERS)}, got {solver!r}")
        _on_not_converged(on_not_converged)
        model = self.model
        N, (Q, V, TAU), layout = _core._stack([(Q, model.nq, "Q"), (V, model.nv, "V"),
                                               (TAU, model.ny, "TAU")])
        F = _core._stack_fext(fext, N, model.nbodies, layout)
        settings = _CSettings(_number(mu, "mu"), _number(tolerance, "tolerance"),
                              _count(max_iterations, "max_iterations"), 0)
        m = self.nrows
        YDD, QDD, LAM = (_core._out(N, k, layout) for k in (model.ny, model.nv, m))
        res = (_CResult * max(1, N))()
        failed = C.c_int(-1)
        n = _core._threads(threads)
        ws, ws0 = self._batch_workspaces(n)
        args = (N, layout, SOLVERS[solver], _ptr(Q), _ptr(V), _ptr(TAU), _ptr(F),
                C.byref(settings), _ptr(YDD), _ptr(QDD), _ptr(LAM), m, res, C.byref(failed))
        if use_pool:
            pool = model.pool(n)
            fn = "cdyn_pool_constrained_dynamics"
            status = lib().cdyn_pool_constrained_dynamics(self.handle, pool.handle, ws, n, *args)
            message = pool.last_error
        else:
            fn = "cdyn_batch_constrained_dynamics"
            status = lib().cdyn_batch_constrained_dynamics(self.handle, ws, n, *args)
            message = ws0.last_error
        where = f" (state {failed.value})" if failed.value >= 0 else ""
        if status not in (OK, ERR_NOT_CONVERGED):
            raise ClusterdynError(status, message + where, fn, state=failed.value)
        r = np.frombuffer(res, dtype=_RESULT_DTYPE, count=N)  # the C structs, no copy
        result = BatchProximalResult(
            np.ascontiguousarray(YDD), np.ascontiguousarray(QDD), np.ascontiguousarray(LAM),
            r["iterations"].astype(int), r["residual"].copy(), r["dual_step"].copy(),
            r["converged"] != 0, r["status"].astype(int))
        if status == ERR_NOT_CONVERGED:
            count = int(np.count_nonzero(~result.converged))
            text = f"{count} of {N} states did not converge; first{where}: {message}"
            if on_not_converged == "raise":
                raise NotConvergedError(text, fn, result)
            if on_not_converged == "warn":
                warnings.warn(f"{fn}: {text}", NotConvergedWarning, stacklevel=2)
        return result

    # -- derivatives of the constrained dynamics

    def _free_derivative_workspace(self):
        if getattr(self, "_cdws", None) is not None:
            lib().cdyn_constrained_derivative_workspace_free(self._cdws)
            self._cdws = None

    def constrained_dynamics_derivatives(self, q, v, tau, fext=None, rank_tolerance=None):
        """The constrained dynamics (ydd, lam) and its derivatives with respect to y, ydot and
        tau (cdyn_constrained_dynamics_derivatives): see
        :func:`._constrained_derivatives.constrained_dynamics_derivatives`. Returns a
        :class:`ConstrainedDerivatives`. The first call creates the set's derivative workspace
        (the set is read-only from then on)."""
        return _constrained_derivatives.constrained_dynamics_derivatives(self, q, v, tau, fext, rank_tolerance)


# ---- constraint workspaces -------------------------------------------------------------------

class ConstraintWorkspace(_Handle):
    """Everything the constrained algorithms of one :class:`ConstraintSet` write
    (cdyn_constraint_workspace, with its own cluster workspace); one per thread.

    q (nq,) and v (nv,) must be a closed spanning state (Workspace.independent_to_spanning,
    project_to_constraints); tau (ny,) independent efforts; fext None or (nbodies, 6).
    Matrices come back in their natural shape: J (m, ny), D (m, m).
    """

    def __init__(self, cset):
        self.set = cset
        self.model = cset.model
        self._h = None
        h = C.c_void_p()
        _check(lib().cdyn_constraint_workspace_create(self.model.handle, cset.handle,
                                                      C.byref(h)),
               "cdyn_constraint_workspace_create")
        self._h = h
        cset._workspaces.add(self)
        self._m = cset.nrows
        self._nc = cset.size

    def close(self):
        """Frees the workspace. Idempotent."""
        if self._h is not None:
            lib().cdyn_constraint_workspace_free(self._h)
            self._h = None

    _what = "constraint workspace"

    @property
    def last_error(self):
        """Message of the last failed compute call on this workspace ("" after a success)."""
        return lib().cdyn_constraint_workspace_last_error(self._h).decode(errors="replace")

    @property
    def nrows(self):
        """Rows m of the set."""
        return self._m

    def __repr__(self):
        return f"<clusterdyn.ConstraintWorkspace: {self._nc} constraints, {self._m} rows>"

    def _call(self, name, *args):
        status = getattr(lib(), name)(self.set.handle, self.handle, *args)
        if status != OK:
            raise ClusterdynError(status, self.last_error, name)

    def _q(self, q):
        return _vec(q, self.model.nq, "q")

    # -- matrices

    def jacobian(self, q, v=None, return_phi=False):
        """(J (m, ny), gamma (m,)) at the closed state q (nq,), v (nv,) (None: zero velocity):
        row Jacobian (J ydot = the row velocities) and row accelerations at ydd = 0, so
        J ydd + gamma is the rows' acceleration (velocity terms only, no gravity; classical
        accelerations for "local" point rows). With return_phi: (J, gamma, phi), phi (m,) the
        rows' position error (:meth:`position_error`). Definitions: capi/clusterdyn.h,
        "Constraints"."""
        q = self._q(q)
        v = None if v is None else _vec(v, self.model.nv, "v")
        m, ny = self._m, self.model.ny
        J = np.zeros((m, ny), order="F")
        gamma, phi = np.zeros(m), np.zeros(m)
        self._call("cdyn_constraint_kinematics", _ptr(q), _ptr(v), m, _ptr(J), m, _ptr(gamma),
                   _ptr(phi))
        J = np.ascontiguousarray(J)
        return (J, gamma, phi) if return_phi else (J, gamma)

    def position_error(self, q):
        """phi (m,): the rows' position error at q (nq,), 0 where the constraints hold: the
        selected components of (log(R_B^T R_A), R_A^T (p_A - p_B)) in A's axes (world axes for
        "local_world_aligned"). k = -kp phi - kd J ydot are the Baumgarte targets."""
        q = self._q(q)
        phi = np.zeros(self._m)
        self._call("cdyn_constraint_kinematics", _ptr(q), None, self._m, None, 0, None,
                   _ptr(phi))
        return phi

    def delassus(self, q):
        """Delassus matrix D = J H^-1 J^T (m, m) at the closed configuration q (PV-OSIMr)."""
        q = self._q(q)
        m = self._m
        D = np.zeros((m, m), order="F")
        self._call("cdyn_delassus_matrix", _ptr(q), _ptr(D), max(1, m))
        return np.ascontiguousarray(D)

    def damped_delassus_inverse(self, q, rho):
        """(D + rho I)^-1 (m, m) at q, rho > 0 (cABA-OSIM for contact sets, else Cholesky)."""
        q = self._q(q)
        rho = _number(rho, "rho")
        m = self._m
        Dinv = np.zeros((m, m), order="F")
        self._call("cdyn_damped_delassus_inverse", _ptr(q), rho, _ptr(Dinv), max(1, m))
        return np.ascontiguousarray(Dinv)

    # -- proximal constrained dynamics

    def _solve(self, fn, q, v, tau, fext, mu, tolerance, max_iterations, warm_start,
               on_not_converged):
        model = self.model
        q, v = self._q(q), _vec(v, model.nv, "v")
        tau = _vec(tau, model.ny, "tau")
        f = _fext(fext, model.nbodies)
        _on_not_converged(on_not_converged)
        settings = _CSettings(_number(mu, "mu"), _number(tolerance, "tolerance"),
                              _count(max_iterations, "max_iterations"), 1 if warm_start else 0)
        m = self._m
        ydd, qdd, lam = np.zeros(model.ny), np.zeros(model.nv), np.zeros(m)
        res = _CResult()
        status = getattr(lib(), fn)(self.set.handle, self.handle, _ptr(q), _ptr(v), _ptr(tau),
                                    _ptr(f), C.byref(settings), _ptr(ydd), _ptr(qdd), _ptr(lam),
                                    m, C.byref(res))
        if status not in (OK, ERR_NOT_CONVERGED):
            raise ClusterdynError(status, self.last_error, fn)
        result = ProximalResult(ydd, qdd, lam, res.iterations, res.residual, res.dual_step,
                                bool(res.converged), status)
        if status == ERR_NOT_CONVERGED:
            message = (self.last_error or f"residual {res.residual:.3g} > tolerance "
                       f"{settings.tolerance:.3g} after {res.iterations} iterations")
            if on_not_converged == "raise":
                raise NotConvergedError(message, fn, result)
            if on_not_converged == "warn":
                warnings.warn(f"{fn}: not converged: {message}", NotConvergedWarning,
                              stacklevel=3)
        return result

    def constrained_aba(self, q, v, tau, fext=None, mu=1e-4, tolerance=1e-10, max_iterations=50,
                        warm_start=False, on_not_converged="warn"):
        """constrainedABA (Sathya & Carpentier 2024): constrained forward dynamics of a contact
        set (every constraint with the world; ClusterdynError ERR_INVALID_ARGUMENT otherwise).

        q (nq,), v (nv,): closed state; tau (ny,) independent efforts; fext None or
        (nbodies, 6). mu: proximal parameter (augmented-Lagrangian penalty 1/mu); tolerance on
        |J ydd + gamma - k|_inf; max_iterations after the first solve; warm_start: start from
        this workspace's lam of its last solve. Returns a :class:`ProximalResult`.

        When the residual stays above the tolerance the library returns ERR_NOT_CONVERGED and
        still writes the last iterate: on_not_converged="warn" (default) returns it with
        converged=False and issues a :class:`NotConvergedWarning`, "ignore" returns it
        silently, "raise" raises :class:`NotConvergedError` (its ``result`` holds it).
        """
        return self._solve("cdyn_constrained_aba", q, v, tau, fext, mu, tolerance,
                           max_iterations, warm_start, on_not_converged)

    def prox_pv(self, q, v, tau, fext=None, mu=1e-4, tolerance=1e-10, max_iterations=50,
                warm_start=False, on_not_converged="warn"):
        """proxPV (Sathya & Carpentier 2024, Alg. 4) for any set (contacts and two-body
        constraints); arguments and result as :meth:`constrained_aba`."""
        return self._solve("cdyn_prox_pv", q, v, tau, fext, mu, tolerance, max_iterations,
                           warm_start, on_not_converged)

    def constrained_dynamics_dense(self, q, v, tau, fext=None, mu=1e-4, tolerance=1e-10,
                                   max_iterations=50, on_not_converged="warn"):
        """Dense baseline (Cholesky of H, the same proximal iterations; no warm start), any
        set; arguments and result as :meth:`constrained_aba`."""
        return self._solve("cdyn_constrained_dynamics_dense", q, v, tau, fext, mu, tolerance,
                           max_iterations, False, on_not_converged)

    def wrenches(self):
        """(nconstraints, 6) wrenches [moment; force] (N m, N) each constraint applies to its
        body1, at the origin of frame A, from the multipliers of this workspace's last solve
        (zeros before the first): in A's axes ("local" constraints) or world axes
        ("local_world_aligned"); components a constraint leaves free are 0; body2 receives
        the opposite wrench."""
        if not hasattr(lib(), "cdyn_constraint_wrenches"):
            raise ClusterdynError(ERR_INVALID_ARGUMENT, "the loaded library "
                                  f"{_core._library.find_library()} predates this function",
                                  "cdyn_constraint_wrenches")
        W = np.zeros((self._nc, 6))
        self._call("cdyn_constraint_wrenches", _ptr(W), 6)
        return W


# ---- constraint forces -----------------------------------------------------------------------

class Forces(_Handle):
    """Forces inside the mechanism after a CE-ABA or CE-RNEA call on a :class:`Workspace`
    (cdyn_forces; one per thread): the wrench of every spanning-tree joint, of every embedded
    <loop> joint and the multiplier of every coupling / mimic. Create with
    :meth:`Model.forces`; fill with :meth:`after_ce_aba` / :meth:`after_ce_rnea`, then read.
    """

    def __init__(self, model):
        self.model = model
        self._h = None
        h = C.c_void_p()
        _check(lib().cdyn_forces_create(model.handle, C.byref(h)), "cdyn_forces_create")
        self._h = h
        model._nforces += 1

    def close(self):
        """Frees the forces. Idempotent."""
        if self._h is not None:
            lib().cdyn_forces_free(self._h)
            self._h = None
            self.model._nforces -= 1

    _what = "forces object"

    def _ws(self, ws):
        if not isinstance(ws, Workspace):
            raise TypeError(f"ws must be a clusterdyn.Workspace, got {type(ws).__name__}")
        return ws

    def _call_ws(self, name, ws, *args):
        ws = self._ws(ws)
        status = getattr(lib(), name)(self.model.handle, ws.handle, self.handle, *args)
        if status != OK:
            raise ClusterdynError(status, ws.last_error, name)

    def _call(self, name, *args, message=""):
        status = getattr(lib(), name)(self.model.handle, self.handle, *args)
        if status != OK:
            raise ClusterdynError(status, message or lib().cdyn_last_error().decode(), name)

    # -- filling

    def after_ce_aba(self, ws, tau=None, spanning=False):
        """Fills the forces from ws's last successful ce_aba / ce_aba_independent (spanning
        False) or ce_aba_spanning_forces (spanning True), with no other call on ws in between.
        tau: None (the efforts of that call, kept by the workspace) or the same efforts again
        ((ny,) or (nv,)); different efforts raise ClusterdynError (ERR_INVALID_ARGUMENT)."""
        if tau is None:
            self._call_ws("cdyn_forces_after_ce_aba", ws, None, 0, 1 if spanning else 0)
            return self
        n = self.model.nv if spanning else self.model.ny
        tau = _vec(tau, n, "tau")
        self._call_ws("cdyn_forces_after_ce_aba", ws, _ptr(tau), tau.size, 1 if spanning else 0)
        return self

    def after_ce_rnea(self, ws):
        """Fills the forces from ws's last successful ce_rnea."""
        self._call_ws("cdyn_forces_after_ce_rnea", ws)
        return self

    # -- results

    def joint_wrenches(self, ws, frame="body"):
        """(nbodies, 6): row i the spatial force (moment; force) [N m; N] joint i applies TO
        its child body, in the child body's frame about its origin (frame="body") or in world
        axes about the world origin (frame="world", with the poses of ws's last call)."""
        if frame not in FORCE_FRAMES:
            raise ValueError(f"frame must be one of {tuple(FORCE_FRAMES)}, got {frame!r}")
        W = np.zeros((self.model.nbodies, 6))
        self._call_ws("cdyn_forces_joint_wrenches", ws, FORCE_FRAMES[frame], _ptr(W), 6)
        return W

    def loop_wrenches(self):
        """(nloops, 6): row l the wrench (moment; force) of <loop> l's cut joint applied TO its
        successor body BY its predecessor, in the loop frame P (see :meth:`loop_info`) about
        P's origin; the predecessor receives the opposite."""
        W = np.zeros((self.model.nloops, 6))
        self._call("cdyn_forces_loop_wrenches", _ptr(W), 6)
        return W

    def loop_rows(self, loop):
        """The multipliers of a loop (index or name): its wrench along the constrained
        directions, rotational rows then translational ones ((nrows,); redundant rows 0)."""
        k = self.model._loop(loop)
        n = self.model.loop_info(k)["nrows"]
        rows = np.zeros(n)
        self._call("cdyn_forces_loop_rows", k, _ptr(rows), n)
        return rows

    def loop_info(self, loop):
        """Model.loop_info (name, predecessor, successor, nrows, placement)."""
        return self.model.loop_info(loop)

    def coupling_info(self, relation):
        """Model.coupling_info (name, velocity_indices, velocity_names, coefficients)."""
        return self.model.coupling_info(relation)

    def coupling(self, relation):
        """(multiplier, joint_forces (nterms,)) of a coupling / mimic relation (index or name):
        joint_forces[t] = coefficients[t] * multiplier is the generalized force [N m or N] the
        relation exerts on its t-th joint (the gear torque on each side)."""
        k = self.model._relation(relation)
        n = len(self.model.coupling_info(k)["coefficients"])
        mult, jf = C.c_double(), np.zeros(n)
        self._call("cdyn_forces_coupling", k, C.byref(mult), _ptr(jf), n)
        return mult.value, jf

    def couplings(self):
        """(nrelations,) multipliers of every coupling / mimic relation."""
        return np.array([self.coupling(r)[0] for r in range(self.model.nrelations)])


__all__ = ["ConstraintSet", "ConstraintWorkspace", "Forces", "ProximalResult",
           "NotConvergedWarning", "NotConvergedError", "CONSTRAINT_TYPES", "CONSTRAINT_ROWS",
           "default_proximal_settings"]
