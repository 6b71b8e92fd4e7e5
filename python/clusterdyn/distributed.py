"""Batched evaluation on a Dask cluster: the ``*_batch`` calls of :class:`clusterdyn.Model`,
:meth:`clusterdyn.ConstraintSet.constrained_dynamics_batch`, the constrained-dynamics
derivatives of N states and :meth:`clusterdyn.ContactProblem.rollout`, chunked over the workers
of an existing Dask distributed cluster (optional dependency: ``pip install
"dask[distributed]"``).

    from dask.distributed import Client
    import clusterdyn.distributed as cdd
    client = Client("tcp://scheduler:8786")             # or Client(LocalCluster(...))
    dm = cdd.DistributedModel.load(client, "robot.urdf", threads=4)  # chunk_size: per call
    YDD = dm.ce_aba_batch(Q, V, TAU)                     # == model.ce_aba_batch(Q, V, TAU)

How it works: the model travels as its file text (and load options); each worker loads it once
and keeps it (a small per-process cache keyed by a hash of text and options). The inputs are
cut into chunks of ``chunk_size`` states (default: per call, DEFAULT_CHUNK_SIZE); each chunk
is one Dask task that runs the same batched call of this package on the worker, on the model's
thread pool of ``threads`` threads. When
the workers run on the caller's machine (a LocalCluster; found by a probe), the arrays do not
travel through Dask at all: the inputs are written once into a shared-memory file, the task
carries only the file's name and its rows, and the worker reads its rows in place and writes
its results into a second such file (``transport``; the module ``_shm``). Elsewhere a chunk's
arrays are part of its task. Results are put back in the caller's order; every state's result
is bit-identical to the local batch call (the library's batches are bit-identical to single
calls, whatever the split).

Failures: a state the library rejects raises :class:`DistributedStateError` (a
ClusterdynError) with the library's status and message and the state's global index, the
lowest failing one, as the local call. A worker process that dies is handled by the Dask
scheduler: its running tasks, and the results it held, are computed again on the other
workers (a task's inputs are in the task, or in the caller's shared-memory file until the call
returns); each chunk's result is taken once, from its own task. See docs/distributed.md.
"""

import collections
import hashlib
import inspect
import os
import re
import threading
import uuid
import warnings

import numpy as np

try:
    import distributed as _dd
except ImportError as exc:  # pragma: no cover - exercised when Dask is absent
    raise ImportError("clusterdyn.distributed needs Dask distributed: pip install "
                      "\"clusterdyn[distributed]\" (or \"dask[distributed]\")") from exc

from . import _batch_loops, _core, _shm
from ._constraints import NotConvergedError
from ._contact import ContactProblem as _ContactProblem
from ._core import ClusterdynError, Model

__all__ = ["DistributedModel", "DistributedConstraintSet", "DistributedContactProblem",
           "DistributedStateError", "constrained_dynamics_derivatives_batch"]

constrained_dynamics_derivatives_batch = _batch_loops.constrained_dynamics_derivatives_batch
"""The local call that DistributedConstraintSet.constrained_dynamics_derivatives_batch equals
(clusterdyn._batch_loops)."""

DEFAULT_CHUNK_SIZE = 16384
"""The largest chunk of the default chunk_size=None: each call cuts its N states (rollouts) into
chunks of min(DEFAULT_CHUNK_SIZE, ceil(N / (2 x the cluster's task slots))), two tasks per slot
(docs/distributed.md, "Choosing a chunk size": the measurements behind both numbers)."""


class DistributedStateError(ClusterdynError):
    """A state of a distributed batch failed: ``status``, ``message`` (the library's message,
    ending in "(state k)"), ``function`` as :class:`ClusterdynError`, and ``state`` (k, the
    global index in the caller's arrays: the lowest failing state)."""

    def __init__(self, status, message, function, state):
        super().__init__(status, message, function)
        self.state = state


# ---- what travels to the workers -------------------------------------------------------------

_ModelSpec = collections.namedtuple("_ModelSpec", "key text options")
"""A model as it travels: the URDF / URDF+ text, the load options (a dict's sorted items) and
`key`, a hash of both that names it in the workers' caches."""

_Recipe = collections.namedtuple("_Recipe", "key cut_loops steps")
"""A constraint set as it travels: cut_loops (Model.cut_loop_constraints, else
Model.constraint_set) and the steps ((method, args, kwargs), ...) that add its constraints."""

_ContactRecipe = collections.namedtuple("_ContactRecipe", "key steps")
"""A contact problem as it travels: the steps that build it (add_bilateral's argument a
_Recipe)."""

_Failure = collections.namedtuple("_Failure", "status message function state")
"""A chunk's library error, returned (not raised: the state fails again on every retry) with
the failing state's index in the chunk (-1 when the message names none)."""

_NotConverged = collections.namedtuple("_NotConverged", "result message function")
"""A constrained-dynamics chunk with states above the tolerance: its whole result (None when
it went to the shared output) and the library's message on its first such state."""

_NoShared = collections.namedtuple("_NoShared", "reason")
"""A shared-memory chunk's answer from a worker that does not see the caller's files (another
machine) or cannot write there (/dev/shm full): the caller sends the chunk again in its task."""

_STATE = re.compile(r"^(.*) \(state (\d+)\)$", re.S)  # the batch calls' "... (state k)"
_FIRST = re.compile(r"first(?: \(state \d+\))?: (.*)$", re.S)  # NotConvergedError's text

_cache = collections.OrderedDict()  # key -> _Entry, in the worker process
_cache_lock = threading.Lock()
_CACHE_SIZE = 8


class _Entry:
    """A model loaded on a worker, its constraint sets by recipe key, and the lock that gives
    the model's pool and batch workspaces to one task at a time."""

    def __init__(self, model):
        self.model = model
        self.sets = {}
        self.lock = threading.Lock()
        self.closed = False

    def close(self):
        """Frees the sets and the model once the running task (if any) is done."""
        with self.lock:
            self.closed = True
            for cs in self.sets.values():
                cs.close()
            self.sets.clear()
            self.model.close()


def _load_model(spec):
    """The one place where a worker turns the travelling model into a Model."""
    return Model.from_string(spec.text, **dict(spec.options))


def _entry(spec):
    with _cache_lock:
        entry = _cache.get(spec.key)
        if entry is None:
            entry = _cache[spec.key] = _Entry(_load_model(spec))
            while len(_cache) > _CACHE_SIZE:
                _cache.popitem(last=False)[1].close()
        _cache.move_to_end(spec.key)
        return entry


def _constraint_set(entry, recipe):
    cs = entry.sets.get(recipe.key)
    if cs is None:
        model = entry.model
        cs = model.cut_loop_constraints() if recipe.cut_loops else model.constraint_set()
        for method, args, kwargs in recipe.steps:
            getattr(cs, method)(*args, **kwargs)
        entry.sets[recipe.key] = cs
    return cs


def _contact_problem(entry, recipe):
    cp = entry.sets.get(recipe.key)
    if cp is None:
        cp = _ContactProblem(entry.model)
        for method, args, kwargs in recipe.steps:
            args = [_constraint_set(entry, a) if isinstance(a, _Recipe) else a for a in args]
            getattr(cp, method)(*args, **kwargs)
        entry.sets[recipe.key] = cp
    return cp


def _target(entry, recipe):
    """What a task calls: the model, a constraint set or a contact problem."""
    if recipe is None:
        return entry.model
    if isinstance(recipe, _ContactRecipe):
        return _contact_problem(entry, recipe)
    return _constraint_set(entry, recipe)


def _call(spec, recipe, method, arrays, per_state, kwargs):
    """`method` of the worker's cached Model (or its ConstraintSet `recipe`) on one chunk.
    Returns the method's result, a _NotConverged, or a _Failure for a library error."""
    entry = _entry(spec)
    with entry.lock:
        if entry.closed:  # dropped from the cache between _entry and the lock: load again
            return _call(spec, recipe, method, arrays, per_state, kwargs)
        try:
            call = _batch_loops.method(_target(entry, recipe), method)
            return call(*arrays, **per_state, **kwargs)
        except NotConvergedError as e:  # constrained dynamics: the result and the message
            m = _FIRST.search(e.message)
            return _NotConverged(e.result, m.group(1) if m else e.message, e.function)
        except ClusterdynError as e:  # the state: in the message ("... (state k)") or .state
            m = _STATE.match(e.message)
            state = int(m.group(2)) if m else (-1 if e.state is None else e.state)
            return _Failure(e.status, m.group(1) if m else e.message, e.function, state)


def _run_chunk(spec, recipe, method, arrays, per_state, kwargs):
    """One task whose chunk travels with it: the result as _call returns it."""
    return _call(spec, recipe, method, arrays, per_state, kwargs)


def _flip(a, flipped):
    """A result array <-> its storage: the (N, b, a) C-contiguous array of which a per-state
    column-major (N, a, b) result (the derivative matrices) is the transposed view."""
    return a.transpose(0, 2, 1) if flipped else a


def _run_shared(spec, recipe, method, inputs, outputs, keys, start, stop, kwargs, flips):
    """One task on the caller's machine: rows start:stop of the shared input block (the
    positional arrays, then the per-state keyword arrays named `keys`) go to the library call
    as read-only views of the caller's pages (no copy); the result's arrays go into the same
    rows of the shared output block (their storage: `flips`, see _flip). Returns None, a
    _NotConverged without result, a _Failure, or _NoShared."""
    rows = _shm.attach(inputs, start, stop)
    if rows is None:
        return _NoShared(f"{inputs.path} is not visible on this worker")
    npos = len(rows) - len(keys)
    if method in _WRITES_OUT:  # the library writes into the caller's rows
        dst = _shm.attach_writable(outputs, start, stop)
        if dst is None:
            return _NoShared(f"{outputs.path} is not visible on this worker")
        r = _call(spec, recipe, method, rows[:npos], dict(zip(keys, rows[npos:])),
                  dict(kwargs, out=tuple(_flip(d, f) for d, f in zip(dst, flips))))
        del rows, dst  # unmaps both blocks
        return r if isinstance(r, _Failure) else None
    r = _call(spec, recipe, method, rows[:npos], dict(zip(keys, rows[npos:])), kwargs)
    del rows  # unmaps the input block
    if isinstance(r, _Failure):
        return r
    try:
        result = _arrays(r.result if isinstance(r, _NotConverged) else r)
        if not _shm.write_rows(outputs, [_flip(a, f) for a, f in zip(result, flips)], start):
            return _NoShared(f"{outputs.path} is not visible on this worker")
    except OSError as e:  # /dev/shm full
        return _NoShared(str(e))
    return r._replace(result=None) if isinstance(r, _NotConverged) else None


_WRITES_OUT = frozenset(("ce_aba_batch", "ce_aba_independent_batch", "ce_rnea_batch",
                         "mass_matrix_batch", "rnea_derivatives_batch", "aba_derivatives_batch",
                         "ce_rnea_derivatives_batch", "ce_aba_derivatives_batch",
                         "constrained_dynamics_derivatives_batch"))
"""The batch calls with an `out` argument: on a worker that sees the caller's shared output
block, they write their rows of it directly (no copy of the result). The rollouts have none:
a rollout chunk's result is copied into the block once (noise beside its steps)."""


def _sees(layout):
    """Whether this worker process sees the caller's shared-memory file (the probe)."""
    return _shm.attach(layout, 0, 0) is not None


def _forget_models():
    """Empties this process's cache of loaded models (run on the workers by
    DistributedModel.release)."""
    with _cache_lock:
        entries = list(_cache.values())
        _cache.clear()
        for entry in entries:
            entry.close()
    return len(entries)


# ---- the client side -------------------------------------------------------------------------

def _leaves(result):
    """The arrays of a batch result in order (an array, or a tuple / namedtuple of arrays and
    None), None kept."""
    if isinstance(result, np.ndarray) or result is None:
        return [result]
    if isinstance(result, tuple):
        return [leaf for field in result for leaf in _leaves(field)]
    raise TypeError(f"cannot split batch results of type {type(result).__name__}")


def _arrays(result):
    """The arrays of a batch result in order, without the None fields."""
    return [leaf for leaf in _leaves(result) if leaf is not None]


def _rebuild(template, arrays):
    """A result of the structure of `template` from the iterator `arrays` (for its non-None
    leaves)."""
    if template is None:
        return None
    if isinstance(template, np.ndarray):
        return next(arrays)
    fields = [_rebuild(field, arrays) for field in template]
    return type(template)(*fields) if hasattr(template, "_fields") else tuple(fields)


def _auto_chunk(N, slots):
    """The chunk size of chunk_size=None: two tasks per task slot, at most DEFAULT_CHUNK_SIZE."""
    return max(1, min(DEFAULT_CHUNK_SIZE, -(-N // (2 * max(1, slots)))))


def _chunk_size(value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"chunk_size must be a positive integer, got {value!r}")
    return int(value)


def _with_pool(local, method, kwargs, use_pool):
    """kwargs with use_pool set, for the batch calls that take it (the derivative batches run
    on their own derivative workspaces, not on the model's pool), and threads for those that
    take it (not the constrained-dynamics derivatives: one thread per task)."""
    params = inspect.signature(_batch_loops.method(local, method)).parameters
    kwargs = {k: v for k, v in kwargs.items()
              if k not in ("use_pool", "threads") or k in params}
    if "use_pool" in params:
        kwargs["use_pool"] = use_pool
    return kwargs


TRANSPORTS = ("auto", "shared", "inline")


class _Mapper:
    """Shared by DistributedModel and DistributedConstraintSet: chunking, submission,
    ordering and errors."""

    def _map(self, local, method, recipe, arrays, per_state, kwargs):
        """`method` of `local` (a Model or ConstraintSet here) on the cluster. Returns
        (result, stalled): the result in the caller's order (the local result when there is no
        state) and the _NotConverged answers of the chunks with states above the tolerance."""
        client, dm = self._dmodel.client, self._dmodel
        arrays = [np.asarray(a) for a in arrays]
        per_state = {k: np.asarray(v) for k, v in per_state.items() if v is not None}
        rows = {a.shape[0] if a.ndim else None for a in arrays + list(per_state.values())}
        if len(rows) != 1 or None in rows:
            shapes = [a.shape for a in arrays] + [a.shape for a in per_state.values()]
            raise ValueError(f"{method}: every per-state array needs the same number of rows "
                             f"(states), got shapes {shapes}")
        N = rows.pop()
        # The local call on zero states checks every shape and argument with the package's
        # own messages, and gives the result's structure.
        empty = _batch_loops.method(local, method)(*(a[:0] for a in arrays),
                                       **{k: v[:0] for k, v in per_state.items()},
                                       **_with_pool(local, method, self._check_kwargs(kwargs),
                                                    False))
        if N == 0:
            return empty, []
        # The result, preallocated: each chunk's rows are copied in once, as it arrives, into
        # `store` (C-contiguous; the shared output block holds the same), of which `out` are
        # the result's views (per-state column-major matrices: transposed, see _flip).
        column_major = _batch_loops.COLUMN_MAJOR.get(method, ())
        flips = tuple(k in column_major for k in range(len(_arrays(empty))))
        store = [np.empty((N,) + _flip(t[:0], f).shape[1:], t.dtype)
                 for t, f in zip(_arrays(empty), flips)]
        out = [_flip(a, f) for a, f in zip(store, flips)]
        nthreads = client.nthreads()
        size = dm.chunk_size or _auto_chunk(N, sum(nthreads.values()))
        starts = list(range(0, N, size))
        tag = f"clusterdyn-{method}-{uuid.uuid4().hex[:12]}"
        work = _with_pool(local, method, dict(kwargs, threads=dm.threads), True)
        in_flight = dm.max_in_flight or max(2, 2 * sum(nthreads.values()))
        keys = list(per_state)
        inputs = arrays + [per_state[k] for k in keys]
        blocks = dm._shared_blocks(nthreads, inputs, store)

        def submit(i, shared):
            s = slice(starts[i], min(N, starts[i] + size))
            if shared:  # the rows go into the shared block; the task names them
                try:
                    for k, src in enumerate(inputs):
                        blocks[0].write_rows(k, src[s], s.start)
                except OSError:  # /dev/shm full: this chunk travels in its task
                    return submit(i, False)
                return client.submit(_run_shared, dm._spec, recipe, method, blocks[0].layout,
                                     blocks[1].layout, keys, s.start, s.stop, work, flips,
                                     key=f"{tag}-{i}", pure=False, retries=dm.retries)
            # The chunk is part of its task (not scattered), so that the scheduler can run it
            # again when the worker that held it dies; Dask's warning about large tasks is
            # expected here.
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", "Sending large graph", UserWarning)
                return client.submit(_run_chunk, dm._spec, recipe, method,
                                     [a[s] for a in arrays],
                                     {k: v[s] for k, v in per_state.items()}, work,
                                     key=f"{tag}-{i}" + ("" if blocks is None else "-inline"),
                                     pure=False, retries=dm.retries)

        futures, index, stalled = {}, {}, {}
        failure = None  # (chunk, _Failure) of the lowest failing chunk so far
        nxt = 0
        done = _dd.as_completed(with_results=True)  # results fetched as they come

        def add(i, shared):
            f = futures[i] = submit(i, shared)
            index[f.key] = i
            done.add(f)

        try:
            while nxt < min(in_flight, len(starts)):
                add(nxt, blocks is not None)
                nxt += 1
            for f, r in done:  # an exception raised in a task is raised here
                i = index.pop(f.key)
                del futures[i]
                f.release()
                if isinstance(r, _NoShared):  # a worker on another machine: send the arrays
                    add(i, False)
                    continue
                if isinstance(r, _Failure):
                    if failure is None or i < failure[0]:
                        failure = (i, r)
                else:
                    if isinstance(r, _NotConverged):
                        stalled[i], r = r, r.result
                    s = slice(starts[i], min(N, starts[i] + size))
                    if r is None:  # in the shared output block: read into the result
                        for k, dst in enumerate(store):
                            blocks[1].read_rows(k, dst[s], s.start)
                    else:
                        for dst, src in zip(out, _arrays(r)):
                            dst[s] = src
                if nxt < len(starts) and (failure is None or nxt < failure[0]):
                    add(nxt, blocks is not None)
                    nxt += 1
            if blocks is not None and failure is None:
                dm._park(blocks)
                blocks = None
        finally:
            if futures:
                client.cancel(list(futures.values()))
            for block in blocks or ():
                block.close()
        if failure is not None:
            i, e = failure
            state = starts[i] + e.state if e.state >= 0 else starts[i]
            local = re.compile(rf"^state {e.state}\b")  # the rollouts' "state k, step t: ..."
            if e.state >= 0 and local.match(e.message):
                raise DistributedStateError(e.status, local.sub(f"state {state}", e.message),
                                            e.function, state)
            where = f" (state {state})" if e.state >= 0 else \
                f" (states {starts[i]}..{min(N, starts[i] + size) - 1})"
            raise DistributedStateError(e.status, e.message + where, e.function, state)
        return _rebuild(empty, iter(out)), [stalled[i] for i in sorted(stalled)]

    def _check_kwargs(self, kwargs):
        return dict(kwargs, threads=1, use_pool=False)


class DistributedModel(_Mapper):
    """A :class:`clusterdyn.Model` evaluated on the workers of a Dask ``client``.

    Create with :meth:`load` (a file: its text is sent) or :meth:`from_string`. ``model`` is
    the same model loaded here (sizes and names; the shapes are checked against it before any
    task leaves). threads: library threads per task on a worker (the model's pool; default
    os.cpu_count() of the worker: set cores / worker processes per machine). chunk_size:
    states (rollouts) per task, or None (default): per call, see DEFAULT_CHUNK_SIZE. retries:
    Dask retries of a task that raised (a library error is not retried: the state fails
    again; a dead worker's tasks are rescheduled by the scheduler whatever this is).
    max_in_flight: tasks submitted at once (default: twice the cluster's task slots), so that
    the scheduler holds only those chunks' inputs. transport: how the arrays reach the
    workers: "auto" (default) through shared memory when every worker sees the caller's
    /dev/shm (a probe, once per set of workers: a LocalCluster), else inside the tasks;
    "shared": through shared memory without the probe; "inline": inside the tasks. In
    every case a chunk whose worker does not see the shared file is sent again with its arrays.

    The batched methods take the arguments of the Model methods of the same name, and return
    the same values, bit for bit (outputs row-major even for Fortran-ordered inputs).
    """

    def __init__(self, client, text, floating_base=False, ignore_constraints=False,
                 gravity=None, cut_loops=False, threads=None, chunk_size=None,
                 retries=0, max_in_flight=None, transport="auto"):
        """Use :meth:`load` or :meth:`from_string`."""
        if not isinstance(client, _dd.Client):
            raise TypeError(f"client must be a dask.distributed.Client, got {client!r}")
        if not isinstance(text, str):
            text = bytes(text).decode()
        options = (("cut_loops", bool(cut_loops)), ("floating_base", bool(floating_base)),
                   ("gravity", None if gravity is None else tuple(float(g) for g in gravity)),
                   ("ignore_constraints", bool(ignore_constraints)))
        self.model = Model.from_string(text, **dict(options))  # raises on an invalid model
        digest = hashlib.sha256(text.encode() + repr(options).encode()).hexdigest()
        self._spec = _ModelSpec(digest, text, options)
        self._dmodel = self
        self.client = client
        self.threads = None if threads is None else _core._threads(threads)
        self.chunk_size = None if chunk_size is None else _chunk_size(chunk_size)
        if isinstance(retries, bool) or not isinstance(retries, (int, np.integer)) or \
                retries < 0:
            raise ValueError(f"retries must be an integer >= 0, got {retries!r}")
        self.retries = int(retries)
        if max_in_flight is not None:
            max_in_flight = _chunk_size(max_in_flight)
        self.max_in_flight = max_in_flight
        if transport not in TRANSPORTS:
            raise ValueError(f"transport must be one of {TRANSPORTS}, got {transport!r}")
        self.transport = transport
        self._seen = (None, False)  # (worker addresses, whether they all see /dev/shm here)
        self._spare = None  # the (input, output) blocks of the last call (reused)

    def _workers_see(self, nthreads):
        """Whether every worker of `nthreads` ({address: threads}) maps files of this process's
        /dev/shm: the probe (a token in a small shared file), run again when the workers change."""
        workers = frozenset(nthreads)
        if self._seen[0] != workers:
            seen = {}
            try:
                with _shm.Block([]) as probe:
                    seen = self.client.run(_sees, probe.layout, workers=list(workers))
            except Exception:  # noqa: BLE001 - a worker gone meanwhile: decide again next call
                workers = None
            self._seen = (workers, bool(seen) and all(seen.values()))
        return self._seen[1]

    def _shared_blocks(self, nthreads, inputs, outputs):
        """(input block, output block) in shared memory for these arrays when the transport
        uses it, else None (also when /dev/shm has no room: the chunks travel in the tasks)."""
        if self.transport == "inline" or not _shm.available():
            return None
        if self.transport == "auto" and not self._workers_see(nthreads):
            return None
        specs = [[(a.shape, a.dtype) for a in arrays] for arrays in (inputs, outputs)]
        # The blocks of the last call are reused when the arrays fit (their pages exist:
        # writing the rows costs a copy, not a page allocation), each under a new token, so
        # that a task of an earlier call that still runs (cancelled after a failure) cannot
        # write into this call's result. Taken, so that a concurrent call makes its own.
        spare, self._spare = self._spare or (None, None), None
        blocks = []
        for block, sp in zip(spare, specs):
            if block is not None and not block.reuse(sp):
                block.close()
                block = None
            blocks.append(block)
        need = sum(_shm.layout_size(sp) for b, sp in zip(blocks, specs) if b is None)
        try:
            if need > _shm.free_bytes():
                raise OSError("no room in /dev/shm")
            return tuple(_shm.Block(sp) if b is None else b for b, sp in zip(blocks, specs))
        except OSError:
            for b in blocks:
                if b is not None:
                    b.close()
            return None

    def _park(self, blocks):
        """Keeps the blocks of a finished call for the next one (one pair: of two concurrent
        calls' pairs, the later one is kept)."""
        old, self._spare = self._spare, blocks
        for block in old or ():
            block.close()

    @classmethod
    def load(cls, client, path, **kwargs):
        """Reads the URDF / URDF+ file `path` here and sends its text; kwargs: the load options
        of :meth:`Model.load` (floating_base, ignore_constraints, gravity, cut_loops) and
        threads, chunk_size, retries, max_in_flight, transport. A model that references other files
        (meshes are not read by the library) loads the same from its text."""
        with open(os.fspath(path), encoding="utf-8") as f:
            return cls(client, f.read(), **kwargs)

    @classmethod
    def from_string(cls, client, text, **kwargs):
        """The model given as URDF / URDF+ text (str or bytes); kwargs as :meth:`load`."""
        return cls(client, text, **kwargs)

    def __repr__(self):
        return (f"<clusterdyn.distributed.DistributedModel {self.model.name!r}: "
                f"chunk_size={self.chunk_size} threads={self.threads} "
                f"transport={self.transport!r}>")

    def map_batch(self, method, *arrays, per_state=None, **kwargs):
        """Any batched method of Model by name: `arrays` (positional, (N, ...) each) and the
        keyword arrays in `per_state` (a dict, e.g. {"fext": F}) are cut along their first axis;
        the other kwargs go unchanged to every chunk's call. The named wrappers below use it."""
        if not (isinstance(method, str) and method.endswith("_batch")
                and callable(getattr(self.model, method, None))):
            raise ValueError(f"method must name a batched Model method (*_batch), got "
                             f"{method!r}")
        for k in ("threads", "use_pool"):
            if k in kwargs:
                raise ValueError(f"{k} is set on the DistributedModel, not per call")
        return self._map(self.model, method, None, arrays, per_state or {}, kwargs)[0]

    def ce_aba_batch(self, Q, V, TAU, fext=None, return_qdd=False):
        """Model.ce_aba_batch on the cluster: YDD (N, ny), and QDD (N, nv) when return_qdd."""
        return self.map_batch("ce_aba_batch", Q, V, TAU, per_state={"fext": fext},
                              return_qdd=return_qdd)

    def ce_aba_independent_batch(self, Y, YDOT, TAU, fext=None, q_guess=None):
        """Model.ce_aba_independent_batch on the cluster: (YDD, Q, V, QDD)."""
        return self.map_batch("ce_aba_independent_batch", Y, YDOT, TAU,
                              per_state={"fext": fext}, q_guess=q_guess)

    def ce_rnea_batch(self, Q, V, YDD, fext=None):
        """Model.ce_rnea_batch on the cluster: TAU (N, ny)."""
        return self.map_batch("ce_rnea_batch", Q, V, YDD, per_state={"fext": fext})

    def mass_matrix_batch(self, Q):
        """Model.mass_matrix_batch on the cluster: H (N, ny, ny)."""
        return self.map_batch("mass_matrix_batch", Q)

    def rnea_derivatives_batch(self, Q, V, A, fext=None):
        """Model.rnea_derivatives_batch on the cluster: (TAU, DTAU_DQ, DTAU_DV, M)."""
        return self.map_batch("rnea_derivatives_batch", Q, V, A, per_state={"fext": fext})

    def aba_derivatives_batch(self, Q, V, TAU, fext=None):
        """Model.aba_derivatives_batch on the cluster: (DDQ, DDQ_DQ, DDQ_DV, MINV)."""
        return self.map_batch("aba_derivatives_batch", Q, V, TAU, per_state={"fext": fext})

    def ce_rnea_derivatives_batch(self, Q, V, YDD, fext=None):
        """Model.ce_rnea_derivatives_batch on the cluster: (TAU, DTAU_DY, DTAU_DYDOT, H)."""
        return self.map_batch("ce_rnea_derivatives_batch", Q, V, YDD, per_state={"fext": fext})

    def ce_aba_derivatives_batch(self, Q, V, TAU, fext=None):
        """Model.ce_aba_derivatives_batch on the cluster: (YDD, DYDD_DY, DYDD_DYDOT, HINV)."""
        return self.map_batch("ce_aba_derivatives_batch", Q, V, TAU, per_state={"fext": fext})

    def constraint_set(self):
        """A new, empty :class:`DistributedConstraintSet` (Model.constraint_set)."""
        return DistributedConstraintSet(self, cut_loops=False)

    def cut_loop_constraints(self):
        """The :class:`DistributedConstraintSet` of the model's cut loops
        (Model.cut_loop_constraints)."""
        return DistributedConstraintSet(self, cut_loops=True)

    def contact_problem(self):
        """A new, empty :class:`DistributedContactProblem` (ContactProblem(model)): rollouts on
        the cluster."""
        return DistributedContactProblem(self)

    def release(self):
        """Drops the models every worker has cached (all DistributedModels of this client);
        returns {worker address: number of models dropped}. They load again on the next call.
        Also frees this DistributedModel's shared-memory blocks (kept between calls)."""
        spare, self._spare = self._spare, None
        for block in spare or ():
            block.close()
        return self.client.run(_forget_models)


# The constraint sets and contact problems (their own module; they use _Mapper above).
from ._distributed_sets import DistributedConstraintSet, DistributedContactProblem  # noqa: E402
