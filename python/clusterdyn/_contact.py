"""Frictional contact and time stepping with the loops kept exact: numpy wrappers of the
cdyn_contact_* and cdyn_*_contact_rollout functions of the C API (docs/contact.md).

    problem = cd.ContactProblem(model)                        # ground plane z = 0
    for leg in ("lf", "rf", "lh", "rh"):
        problem.add_foot(leg + "_foot", leg + "_coupler", (0.03, 0, -0.05), radius=0.02, mu=0.8)
    stepper = problem.stepper(dt=1e-3, beta=0.2)              # one contact workspace
    r = stepper.step(q, v, tau)                               # r.q, r.v, r.lam, r.report
    R = problem.rollout(Q0, V0, TAU, threads=2)               # N states x T steps

Rows: the bilateral rows first, then (t1, t2, n) per contact (n the world normal out of the
obstacle; Stepper.frames gives the frames). lam: impulses over the step in N s (the impulse ON
the robot; divide by dt for the mean force). Every array is checked by the library against the
model's sizes: a wrong length raises ClusterdynError naming the argument.
"""

import collections
import ctypes as C
import warnings
import weakref

import numpy as np

from ._constraints import NotConvergedError, NotConvergedWarning
from ._core import (ERR_INVALID_ARGUMENT, ERR_INVALID_SIZE, ERR_NOT_CONVERGED, OK, ClusterdynError, Pool, _check,
                    _Handle, _index, _real, lib)
from ._library import ContactReport as _CReport
from ._library import ContactSettings as _CSettings

CONTACT_SOLVERS = {"admm": 0, "pgs": 1}
"""Contact solvers (cdyn_contact_solver)."""

_D = C.POINTER(C.c_double)
_REPORT_DTYPE = np.dtype({
    "names": [name for name, _ in _CReport._fields_],
    "formats": [np.int32 if t is C.c_int else np.float64 for _, t in _CReport._fields_],
    "offsets": [getattr(_CReport, name).offset for name, _ in _CReport._fields_],
    "itemsize": C.sizeof(_CReport)})
"""numpy view of cdyn_contact_report."""


class ContactReport(collections.namedtuple(
        "ContactReport", "status iterations converged active_contacts primal_residual "
                         "dual_residual complementarity rho")):
    """Outcome of a contact solve / step (cdyn_contact_report): status (OK or
    ERR_NOT_CONVERGED), solver iterations, converged (bool), active_contacts, the residuals of
    the returned impulses (primal: m/s, dual: N s, complementarity: m/s; all <= tolerance when
    converged) and the final ADMM penalty rho (0 for PGS)."""
    __slots__ = ()


class StepResult(collections.namedtuple("StepResult", "q v lam report")):
    """One step: the next closed state q (nq,), v (nv,), the impulses lam (m,), the report."""
    __slots__ = ()


class RolloutResult(collections.namedtuple("RolloutResult", "q v lam reports")):
    """N rollouts of T steps: q (N, T, nq) and v (N, T, nv) the state after each step, lam
    (N, T, m) the impulses, reports: a numpy structured array (N, T) with the fields of
    :class:`ContactReport`."""
    __slots__ = ()


def default_contact_settings():
    """The default settings as a dict (cdyn_contact_settings_default); the keys are the keyword
    arguments of :meth:`ContactProblem.stepper` and :meth:`ContactProblem.rollout`."""
    s = _CSettings()
    _check(lib().cdyn_contact_settings_default(C.byref(s)), "cdyn_contact_settings_default")
    out = {name: getattr(s, name) for name, _ in _CSettings._fields_}
    out["solver"] = "pgs" if s.solver == CONTACT_SOLVERS["pgs"] else "admm"
    out["warm_start"] = bool(s.warm_start)
    return out


def _settings(kwargs):
    """keyword arguments -> cdyn_contact_settings (values checked by the library)."""
    s = _CSettings()
    _check(lib().cdyn_contact_settings_default(C.byref(s)), "cdyn_contact_settings_default")
    for key, value in kwargs.items():
        if key not in dict(_CSettings._fields_):
            raise TypeError(f"unknown contact setting {key!r}; known: "
                            f"{[n for n, _ in _CSettings._fields_]}")
        if key == "solver" and isinstance(value, str):
            if value.lower() not in CONTACT_SOLVERS:
                raise ValueError(f"solver must be one of {sorted(CONTACT_SOLVERS)}, got {value!r}")
            value = CONTACT_SOLVERS[value.lower()]
        setattr(s, key, int(value) if dict(_CSettings._fields_)[key] is C.c_int else float(value))
    return s


def _flat(x, name):
    """x as a contiguous float64 array, flattened (its length is checked by the library)."""
    return np.ascontiguousarray(_real(x, name), dtype=np.float64).reshape(-1)


def _ptr(a):
    return a.ctypes.data_as(_D) if a is not None and a.size else None


def _report(r):
    return ContactReport(r.status, r.iterations, bool(r.converged), r.active_contacts,
                         r.primal_residual, r.dual_residual, r.complementarity, r.rho)


class ContactProblem(_Handle):
    """A contact problem of one model (cdyn_contact_problem): bilateral rows (from constraint
    sets) and point contacts (ground feet, caller contacts). Complete it before the first
    :meth:`stepper` / :meth:`rollout`: it is read-only once a workspace exists."""

    _what = "contact problem"

    def __init__(self, model):
        self.model = model
        h = C.c_void_p()
        _check(lib().cdyn_contact_problem_create(model.handle, C.byref(h)),
               "cdyn_contact_problem_create")
        self._h = h
        self._ws = []  # the rollouts' contact workspaces (one per thread), made on first use
        self._ncaller = 0  # caller contacts (add_point): a rollout needs their data every call
        self._steppers = weakref.WeakSet()  # closed by close()

    def close(self):
        """Closes the problem's Steppers (and its rollouts' workspaces), then frees it.
        Idempotent."""
        if self._h is not None:
            for w in list(self._steppers):
                w.close()
            self._ws = []
            _check(lib().cdyn_contact_problem_free(self._h), "cdyn_contact_problem_free",
                   lib().cdyn_last_error().decode(errors="replace"))
            self._h = None

    @property
    def last_error(self):
        return lib().cdyn_contact_problem_last_error(self._h).decode(errors="replace")

    def _call(self, name, *args):
        status = getattr(lib(), name)(self.handle, *args)
        if status != OK:
            raise ClusterdynError(status, self.last_error, name)

    def _body(self, body):
        return _index(body, self.model.body_index, "body")

    def set_ground(self, normal=(0.0, 0.0, 1.0), offset=0.0):
        """The ground plane {x : normal . x = offset} (world; normal out of the ground)."""
        n = _flat(normal, "normal")
        self._call("cdyn_contact_problem_set_ground", _ptr(n), n.size, float(offset))

    def add_foot(self, name, body, centre, radius=0.0, mu=0.5, mu_torsion=0.0, mu_rolling=0.0):
        """A sphere foot (radius >= 0, m) centred at `centre` (body coordinates) of `body`
        (index or name) against the ground, friction mu >= 0; optionally torsional friction
        mu_torsion >= 0 (m, a flat patch resisting spin about the normal) and rolling friction
        mu_rolling >= 0 (m): a patch contact of 6 rows at the sphere's touching point (a
        rolling one when mu_rolling > 0, else a torsional one when mu_torsion > 0; see
        cdyn_contact_problem_add_patch_foot). Returns the contact index."""
        c = _flat(centre, "centre")
        index = C.c_int(-1)
        if mu_torsion == 0.0 and mu_rolling == 0.0:
            self._call("cdyn_contact_problem_add_foot", str(name).encode(), self._body(body),
                       _ptr(c), c.size, float(radius), float(mu), C.byref(index))
        else:
            self._call("cdyn_contact_problem_add_patch_foot", str(name).encode(),
                       self._body(body), _ptr(c), c.size, float(radius), float(mu),
                       float(mu_torsion), float(mu_rolling), C.byref(index))
        return index.value

    _CONES = {"point": 0, "torsional": 3, "rolling": 4}

    def add_point(self, name, body, point, cone="point"):
        """A caller contact at `point` (body coordinates) of `body`: its normal, gap and mu (and
        for cone "torsional" / "rolling", a 6-row patch contact, mu_torsion and mu_rolling) are
        set per Stepper (:meth:`Stepper.set_caller`). Returns the contact index."""
        if cone not in self._CONES:
            raise ValueError(f"cone must be one of {sorted(self._CONES)}, got {cone!r}")
        p = _flat(point, "point")
        index = C.c_int(-1)
        self._call("cdyn_contact_problem_add_patch_point", str(name).encode(), self._body(body),
                   _ptr(p), p.size, self._CONES[cone], C.byref(index))
        self._ncaller += 1
        return index.value

    def add_bilateral(self, constraint_set):
        """Every constraint of a :class:`ConstraintSet` of the model as bilateral rows (copied;
        they come before the contact rows)."""
        self._call("cdyn_contact_problem_add_bilateral", constraint_set.handle)

    def _sizes(self):
        nc, nb, m = C.c_int(), C.c_int(), C.c_int()
        _check(lib().cdyn_contact_problem_sizes(self.handle, C.byref(nc), C.byref(nb),
                                                C.byref(m)), "cdyn_contact_problem_sizes")
        return nc.value, nb.value, m.value

    @property
    def ncontacts(self):
        return self._sizes()[0]

    @property
    def nbilateral_rows(self):
        return self._sizes()[1]

    @property
    def m(self):
        """Rows: bilateral rows + 3 per contact."""
        return self._sizes()[2]

    def stepper(self, on_not_converged="warn", **settings):
        """A :class:`Stepper` (one contact workspace: use one per thread) with these settings
        (keys of :func:`default_contact_settings`)."""
        return Stepper(self, on_not_converged=on_not_converged, **settings)

    def _workspaces(self, n):
        while len(self._ws) < n:
            self._ws.append(Stepper(self))
        return (C.c_void_p * n)(*(w.handle.value for w in self._ws[:n]))

    def rollout(self, Q0, V0, TAU, threads=1, pool=None, caller=None, **settings):
        """N rollouts of T steps from the closed states Q0 (N, nq), V0 (N, nv) with efforts TAU
        (N, T, ny); each bit-identical to T single :meth:`Stepper.step` calls from a reset warm
        start. threads: contact workspaces (threads started per call), or pool: a
        :class:`Pool` of the model (its threads). caller: (normal, gap, mu) of the caller
        contacts (as :meth:`Stepper.set_caller`), required when the problem has caller contacts
        (:meth:`add_point`) and None otherwise; nothing of it outlives the call. A failed state raises ClusterdynError
        with ``state`` its index; steps that did not converge are reported in ``reports``
        (``converged`` False) and do not raise. Returns a :class:`RolloutResult`."""
        q0 = np.ascontiguousarray(_real(Q0, "Q0"), dtype=np.float64)
        v0 = np.ascontiguousarray(_real(V0, "V0"), dtype=np.float64)
        tau = np.ascontiguousarray(_real(TAU, "TAU"), dtype=np.float64)
        fn = "cdyn_pool_contact_rollout" if pool is not None else "cdyn_batch_contact_rollout"
        if q0.ndim != 2 or v0.ndim != 2 or tau.ndim != 3:
            raise ClusterdynError(ERR_INVALID_SIZE, "Q0 and V0 must be (N, n) arrays and TAU "
                                  f"(N, T, ny); got {q0.shape}, {v0.shape}, {tau.shape}", fn)
        N, T = q0.shape[0], tau.shape[1]
        if v0.shape[0] != N or tau.shape[0] != N:
            raise ClusterdynError(ERR_INVALID_SIZE, f"Q0, V0 and TAU hold {N}, {v0.shape[0]} "
                                  f"and {tau.shape[0]} states", fn)
        s = _settings(settings)
        nq, nv, m = self.model.nq, self.model.nv, self.m
        q = np.zeros((N, T, nq))
        v = np.zeros((N, T, nv))
        lam = np.zeros((N, T, m))
        reports = np.zeros((N, T), dtype=_REPORT_DTYPE)
        nthreads = pool.threads if pool is not None else max(1, int(threads))
        ws = self._workspaces(nthreads)
        if (caller is None) != (self._ncaller == 0):
            raise ClusterdynError(
                ERR_INVALID_ARGUMENT,
                f"caller: the problem has {self._ncaller} caller contacts (add_point): pass "
                "caller=(normal, gap, mu)" if caller is None else
                "caller: the problem has no caller contacts (add_point): pass caller=None", fn)
        if caller is not None:
            self._ws[0].set_caller(*caller)
        failed = C.c_int(-1)
        args = (N, T, C.byref(s), _ptr(q0), q0.shape[1], _ptr(v0), v0.shape[1], _ptr(tau),
                tau.shape[2], _ptr(q), nq, _ptr(v), nv, _ptr(lam), m,
                reports.ctypes.data_as(C.POINTER(_CReport)), C.byref(failed))
        if pool is not None:
            if not isinstance(pool, Pool):
                raise TypeError(f"pool must be a clusterdyn.Pool, got {type(pool).__name__}")
            status = lib().cdyn_pool_contact_rollout(self.handle, pool.handle, ws, nthreads, *args)
            message = pool.last_error or self._ws[0].last_error
        else:
            status = lib().cdyn_batch_contact_rollout(self.handle, ws, nthreads, *args)
            message = self._ws[0].last_error
        if status not in (OK, ERR_NOT_CONVERGED):
            raise ClusterdynError(status, message, fn, state=failed.value)
        return RolloutResult(q, v, lam, reports)


class Stepper(_Handle):
    """One contact workspace of a :class:`ContactProblem` (cdyn_contact_workspace) with its
    settings: :meth:`step`, :meth:`solve`, the warm start (:meth:`reset`), the caller contacts'
    data (:meth:`set_caller`) and the last step's frames (:meth:`frames`). One per thread.
    on_not_converged: "warn" (NotConvergedWarning), "raise" (NotConvergedError) or "ignore"
    when the solver stops above its tolerance (the step is still taken)."""

    _what = "contact workspace"

    def __init__(self, problem, on_not_converged="warn", **settings):
        if on_not_converged not in ("warn", "raise", "ignore"):
            raise ValueError("on_not_converged must be 'warn', 'raise' or 'ignore'")
        self.problem = problem
        self.model = problem.model
        self.on_not_converged = on_not_converged
        self.settings = _settings(settings)
        h = C.c_void_p()
        _check(lib().cdyn_contact_workspace_create(problem.handle, C.byref(h)),
               "cdyn_contact_workspace_create")
        self._h = h
        problem._steppers.add(self)

    def close(self):
        """Frees the workspace. Idempotent."""
        if self._h is not None:
            lib().cdyn_contact_workspace_free(self._h)
            self._h = None

    @property
    def last_error(self):
        return lib().cdyn_contact_workspace_last_error(self._h).decode(errors="replace")

    def _call(self, name, *args):
        status = getattr(lib(), name)(self.problem.handle, self.handle, *args)
        if status not in (OK, ERR_NOT_CONVERGED):
            raise ClusterdynError(status, self.last_error, name)
        return status

    def configure(self, **settings):
        """Changes settings (keys of :func:`default_contact_settings`) from now on."""
        current = {name: getattr(self.settings, name) for name, _ in _CSettings._fields_}
        current.update(settings)
        self.settings = _settings(current)

    def reset(self):
        """Zeroes the warm start (the impulses of the last step)."""
        self._call("cdyn_contact_workspace_reset")

    def set_caller(self, normal, gap, mu, mu_torsion=None, mu_rolling=None):
        """The caller contacts' data: normal (nc, 3) world, out of the obstacle; gap (nc,) m,
        negative = penetration; mu (nc,) >= 0 (ground feet's entries are ignored); for patch
        caller contacts mu_torsion, mu_rolling (nc,) m >= 0 (both None: unchanged, initially
        0; one None: zeros; used by patch contacts only)."""
        n, g, u = _flat(normal, "normal"), _flat(gap, "gap"), _flat(mu, "mu")
        if mu_torsion is not None or mu_rolling is not None:
            nc = self.problem._sizes()[0]
            t = _flat(np.zeros(nc) if mu_torsion is None else mu_torsion, "mu_torsion")
            r = _flat(np.zeros(nc) if mu_rolling is None else mu_rolling, "mu_rolling")
            self._call("cdyn_contact_set_caller_patch", _ptr(t), t.size, _ptr(r), r.size)
        self._call("cdyn_contact_set_caller", _ptr(n), n.size, _ptr(g), g.size, _ptr(u), u.size)

    def frames(self):
        """(R, gap, velocity) of the last solve or step: R (nc, 3, 3) the contact frames
        [t1 t2 n] (columns, world), gap (nc,), velocity (m,) the constraint velocities after the
        step J ydot+ (m/s; contact rows in (t1, t2, n))."""
        nc, _, m = self.problem._sizes()
        R, gap, vel = np.zeros(9 * nc), np.zeros(nc), np.zeros(m)
        self._call("cdyn_contact_frames", _ptr(R), R.size, _ptr(gap), gap.size, _ptr(vel), m)
        return R.reshape(nc, 3, 3).transpose(0, 2, 1), gap, vel

    def _state(self, q, v, tau):
        q, v = _flat(q, "q"), _flat(v, "v")
        tau = np.zeros(self.model.ny) if tau is None else _flat(tau, "tau")
        return q, v, tau

    def _converged(self, name, status, result):
        if status == ERR_NOT_CONVERGED:
            if self.on_not_converged == "raise":
                err = NotConvergedError(status, self.last_error, name)
                err.result = result
                raise err
            if self.on_not_converged == "warn":
                warnings.warn(f"{name}: {self.last_error}", NotConvergedWarning, stacklevel=3)
        return result

    def step(self, q, v, tau=None):
        """One step from the closed state (q, v) with efforts tau (ny,; None: zero): a
        :class:`StepResult` (the next closed state, the impulses, the report)."""
        q, v, tau = self._state(q, v, tau)
        qo, vo, lam = np.zeros(self.model.nq), np.zeros(self.model.nv), np.zeros(self.problem.m)
        rep = _CReport()
        status = self._call("cdyn_contact_step", _ptr(q), q.size, _ptr(v), v.size, _ptr(tau),
                            tau.size, C.byref(self.settings), _ptr(qo), qo.size, _ptr(vo),
                            vo.size, _ptr(lam), lam.size, C.byref(rep))
        return self._converged("cdyn_contact_step", status, StepResult(qo, vo, lam, _report(rep)))

    def solve(self, q, v, tau=None):
        """The impulses of a step at (q, v, tau) without taking it: (lam (m,), report)."""
        q, v, tau = self._state(q, v, tau)
        lam = np.zeros(self.problem.m)
        rep = _CReport()
        status = self._call("cdyn_contact_solve", _ptr(q), q.size, _ptr(v), v.size, _ptr(tau),
                            tau.size, C.byref(self.settings), _ptr(lam), lam.size, C.byref(rep))
        return self._converged("cdyn_contact_solve", status, (lam, _report(rep)))
