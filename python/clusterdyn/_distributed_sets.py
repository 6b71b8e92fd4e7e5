"""The constraint sets and contact problems of clusterdyn.distributed: recorded here (the
library's checks, at once, on a local twin), built once on every worker from the record, and
their batched calls mapped over the cluster by distributed._Mapper."""

import hashlib
import pickle
import warnings

import numpy as np

from ._constraints import NotConvergedError, NotConvergedWarning, _on_not_converged
from ._contact import ContactProblem
from .distributed import _ContactRecipe, _Mapper, _Recipe


class DistributedConstraintSet(_Mapper):
    """A constraint set of a :class:`DistributedModel`: :meth:`add` and :meth:`add_contact`
    are applied here at once (``local``, a ConstraintSet: the library's checks and errors) and
    recorded; the workers build the same set once from the record. As the local set, it is
    read-only after the first :meth:`constrained_dynamics_batch`."""

    def __init__(self, dmodel, cut_loops):
        self._dmodel = dmodel
        self._cut_loops = cut_loops
        m = dmodel.model
        self.local = m.cut_loop_constraints() if cut_loops else m.constraint_set()
        self._steps = []
        self._recipe = None

    def _record(self, method, args, kwargs):
        index = getattr(self.local, method)(*args, **kwargs)  # raises as the local set does
        self._steps.append((method, args, kwargs))
        self._recipe = None
        return index

    def add(self, *args, **kwargs):
        """ConstraintSet.add (same arguments); returns the constraint's index."""
        return self._record("add", args, kwargs)

    def add_contact(self, *args, **kwargs):
        """ConstraintSet.add_contact (same arguments); returns the constraint's index."""
        return self._record("add_contact", args, kwargs)

    size = property(lambda self: self.local.size, doc="Number of constraints.")
    nrows = property(lambda self: self.local.nrows, doc="Number of rows m.")
    names = property(lambda self: self.local.names, doc="Constraint names, in index order.")

    def __len__(self):
        return self.local.size

    def _get_recipe(self):
        if self._recipe is None:
            steps = tuple(self._steps)
            digest = hashlib.sha256(self._dmodel._spec.key.encode() + pickle.dumps(
                (self._cut_loops, steps))).hexdigest()
            self._recipe = _Recipe(digest, self._cut_loops, steps)
        return self._recipe

    def constrained_dynamics_batch(self, Q, V, TAU, fext=None, solver="prox_pv", mu=1e-4,
                                   tolerance=1e-10, max_iterations=50,
                                   on_not_converged="warn"):
        """ConstraintSet.constrained_dynamics_batch on the cluster: a BatchProximalResult,
        bit-identical to the local call; states above the tolerance are reported as there
        (on_not_converged "warn", "ignore" or "raise"), naming the first one's global index."""
        _on_not_converged(on_not_converged)
        kwargs = dict(solver=solver, mu=mu, tolerance=tolerance, max_iterations=max_iterations,
                      on_not_converged="raise")
        result, stalled = self._map(self.local, "constrained_dynamics_batch",
                                    self._get_recipe(), (Q, V, TAU), {"fext": fext}, kwargs)
        if stalled and on_not_converged != "ignore":
            bad = np.flatnonzero(~result.converged)
            text = (f"{bad.size} of {result.converged.size} states did not converge; first "
                    f"(state {bad[0]}): {stalled[0].message}")
            if on_not_converged == "raise":
                raise NotConvergedError(text, stalled[0].function, result)
            warnings.warn(f"{stalled[0].function}: {text}", NotConvergedWarning, stacklevel=2)
        return result

    def constrained_dynamics_derivatives_batch(self, Q, V, TAU, fext=None,
                                               rank_tolerance=None):
        """clusterdyn.distributed.constrained_dynamics_derivatives_batch(set, ...) on the
        cluster (the ConstrainedDerivatives of N states, fields with a leading N axis),
        bit-identical to it and to N calls of ConstraintSet.constrained_dynamics_derivatives.
        Each task is a loop over its states on one thread of the worker (the library has no
        batch of them); each state's result is written in place into the shared output. A
        failing state raises DistributedStateError with its global index."""
        return self._map(self.local, "constrained_dynamics_derivatives_batch",
                         self._get_recipe(), (Q, V, TAU), {"fext": fext},
                         dict(rank_tolerance=rank_tolerance))[0]

    def _check_kwargs(self, kwargs):
        if "on_not_converged" not in kwargs:  # the derivatives
            return dict(kwargs, threads=1, use_pool=False)
        return dict(kwargs, threads=1, use_pool=False, on_not_converged="ignore")


class DistributedContactProblem(_Mapper):
    """A contact problem of a :class:`DistributedModel` (ContactProblem): :meth:`set_ground`,
    :meth:`add_foot`, :meth:`add_point` and :meth:`add_bilateral` are applied here at once
    (``local``, a ContactProblem: the library's checks) and recorded; every worker builds the
    same problem once from the record. :meth:`rollout` runs the rollouts on the cluster. As the
    local problem, it is read-only after the first rollout."""

    def __init__(self, dmodel):
        self._dmodel = dmodel
        self.local = ContactProblem(dmodel.model)
        self._steps = []
        self._recipe = None

    def _record(self, method, args, kwargs, sent=None):
        result = getattr(self.local, method)(*args, **kwargs)  # raises as the local problem
        self._steps.append((method, args if sent is None else sent, kwargs))
        self._recipe = None
        return result

    def set_ground(self, normal=(0.0, 0.0, 1.0), offset=0.0):
        """ContactProblem.set_ground."""
        normal = tuple(float(x) for x in np.asarray(normal, dtype=float).reshape(-1))
        self._record("set_ground", (normal, float(offset)), {})

    def add_foot(self, *args, **kwargs):
        """ContactProblem.add_foot (same arguments); returns the contact index."""
        return self._record("add_foot", args, kwargs)

    def add_point(self, *args, **kwargs):
        """ContactProblem.add_point (same arguments); returns the contact index."""
        return self._record("add_point", args, kwargs)

    def add_bilateral(self, constraint_set):
        """ContactProblem.add_bilateral of a :class:`DistributedConstraintSet` (its constraints
        as they are now: copied, as the local call copies them)."""
        if not isinstance(constraint_set, DistributedConstraintSet) or \
                constraint_set._dmodel is not self._dmodel:
            raise TypeError("constraint_set must be a DistributedConstraintSet of the same "
                            f"DistributedModel, got {type(constraint_set).__name__}")
        self._record("add_bilateral", (constraint_set.local,), {},
                     sent=(constraint_set._get_recipe(),))

    ncontacts = property(lambda self: self.local.ncontacts, doc="Number of contacts.")
    nbilateral_rows = property(lambda self: self.local.nbilateral_rows,
                               doc="Bilateral rows.")
    m = property(lambda self: self.local.m, doc="Rows: bilateral rows + 3 per contact.")

    def _get_recipe(self):
        if self._recipe is None:
            steps = tuple(self._steps)
            digest = hashlib.sha256(self._dmodel._spec.key.encode() + b"contact" +
                                    pickle.dumps(steps)).hexdigest()
            self._recipe = _ContactRecipe(digest, steps)
        return self._recipe

    def rollout(self, Q0, V0, TAU, caller=None, **settings):
        """ContactProblem.rollout on the cluster: N rollouts (Q0 (N, nq), V0 (N, nv), TAU
        (N, T, ny)) cut into chunks of rollouts; each chunk runs on its worker's pool of the
        DistributedModel's threads. The RolloutResult is bit-identical to the local call (each
        rollout equals T single steps from a reset warm start, whatever the split). caller and
        settings as the local call (the same for every chunk). Steps that did not converge are
        in ``reports``; a failing rollout raises DistributedStateError with its global index."""
        return self._map(self.local, "rollout_batch", self._get_recipe(), (Q0, V0, TAU), {},
                         dict(settings, caller=caller))[0]

    def _check_kwargs(self, kwargs):
        return dict(kwargs, threads=1, use_pool=False)

