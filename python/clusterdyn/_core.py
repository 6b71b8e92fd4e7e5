"""Model, Workspace and Pool: numpy wrappers of the clusterdyn C API.

Conventions (those of capi/clusterdyn.h): SI units (m, kg, s, rad; N, N m; J); spatial vectors
are 6-vectors with the ANGULAR part first; matrices are returned as numpy arrays (n x m). The
spanning coordinates are q (nq), v / a / tau (nv); the independent coordinates are y (nyq) and
ydot / ydd / tau (ny). Every input is any array-like of real numbers; it is converted to a
contiguous float64 array and its shape is checked here, before the library is called.
"""

import ctypes as C
import os
import threading

import numpy as np

from . import _library

_lib = None
_lib_lock = threading.Lock()

# Status codes (cdyn_status).
OK = 0
ERR_INVALID_SIZE = 1
ERR_NON_FINITE = 2
ERR_NOT_UNIT_QUATERNION = 3
ERR_NOT_POSITIVE_DEFINITE = 4
ERR_INVALID_INDEX = 5
ERR_CONSTRAINT_FAILURE = 6
ERR_WORKSPACE_MISMATCH = 7
ERR_INVALID_ARGUMENT = 8
ERR_NOT_CONVERGED = 9
ERR_NULL_POINTER = 100
ERR_VERSION = 101
ERR_PARSE = 102
ERR_INTERNAL = 103
ERR_NOT_FOUND = 104
ERR_OUT_OF_MEMORY = 105

# Reference frames of frame quantities.
LOCAL = 0
WORLD = 1
LOCAL_WORLD_ALIGNED = 2
_FRAMES = {"local": LOCAL, "world": WORLD, "local_world_aligned": LOCAL_WORLD_ALIGNED}

JOINT_TYPES = ("revolute", "prismatic", "spherical", "planar", "floating", "fixed")
CLUSTER_KINDS = ("unconstrained", "explicit", "implicit")
LOG_LEVELS = ("debug", "info", "warn", "error", "off")

_ROW_MAJOR, _COL_MAJOR = 0, 1
_D = C.POINTER(C.c_double)
_functions = {}  # name -> the library's ctypes function (Workspace._call's cache)


def lib():
    """The loaded ctypes library (loaded on first use; see clusterdyn._library)."""
    global _lib
    if _lib is not None:  # loaded and version-checked: no lock needed to read it
        return _lib
    with _lib_lock:
        if _lib is None:
            loaded = _library.load()
            if loaded.cdyn_check_version(_library.ABI_VERSION) != OK:
                raise OSError(f"{_library.find_library()}: ABI version differs from "
                              f"{_library.ABI_VERSION}")
            _lib = loaded  # published only once checked (read above without the lock)
    return _lib


class ClusterdynError(Exception):
    """A failed library call.

    Attributes: ``status`` (int, a cdyn_status code such as ERR_INVALID_SIZE),
    ``status_name`` (the library's short text for it) and ``message`` (the detailed message:
    the workspace's last error, or the loader's parse error), and ``state``: for a batched
    call, the index (in the batch) of the lowest state that failed, else None.
    """

    def __init__(self, status, message="", function="", state=None):
        self.status = int(status)
        self.state = None if state is None or state < 0 else int(state)
        self.status_name = lib().cdyn_status_string(self.status).decode()
        self.message = message
        self.function = function
        where = f"{function}: " if function else ""
        text = f"{where}{self.status_name}"
        super().__init__(f"{text}: {message}" if message else text)


def version():
    """Version string "MAJOR.MINOR.PATCH" of the loaded library."""
    return lib().cdyn_version_string().decode()


def set_log_level(level):
    """Sets the library logger's level: "debug", "info", "warn", "error" or "off" (or 0..4)."""
    value = LOG_LEVELS.index(level) if isinstance(level, str) else int(level)
    _check(lib().cdyn_set_log_level(value), "cdyn_set_log_level")


def get_log_level():
    """The library logger's level as a string ("warn" by default)."""
    out = C.c_int()
    _check(lib().cdyn_get_log_level(C.byref(out)), "cdyn_get_log_level")
    return LOG_LEVELS[out.value]


def _check(status, function, message=""):
    if status != OK:
        raise ClusterdynError(status, message, function)


# ---- argument conversion ---------------------------------------------------------------------

def _real(x, name):
    a = np.asarray(x)
    if a.dtype == object or a.dtype.kind not in "fiub":
        raise TypeError(f"{name} must be an array of real numbers, got dtype {a.dtype}")
    if a.dtype.kind == "b":
        raise TypeError(f"{name} must be an array of real numbers, got dtype bool")
    return a


_F64 = np.dtype(np.float64)
_ndarray = np.ndarray


def _vec(x, n, name):
    """x as a contiguous float64 vector of n elements (TypeError / ValueError otherwise)."""
    # Fast path (most calls): already what the library reads, so x itself, exactly what
    # np.ascontiguousarray(x, dtype=np.float64) below returns for it.
    if type(x) is _ndarray and x.dtype is _F64 and x.shape == (n,) and x.flags.c_contiguous:
        return x
    a = _real(x, name)
    if a.ndim != 1 or a.shape[0] != n:
        raise ValueError(f"{name} must have shape ({n},), got {a.shape}")
    return np.ascontiguousarray(a, dtype=np.float64)


def _opt_vec(x, n, name):
    return None if x is None else _vec(x, n, name)


_from_buffer = C.c_double.from_buffer


def _ptr(a):
    """a (an ndarray of float64, or None) as an argument of a ctypes POINTER(c_double)
    parameter: the address of its first element (None for None). A writable, C- or
    Fortran-contiguous, non-empty array goes through the buffer protocol: a c_double over its
    first element, which ctypes passes by reference (about 0.3 us; ndarray.ctypes.data_as takes
    about 6 us); any other (read-only, empty or strided) through ndarray.ctypes.data_as. Either
    keeps the array alive for the duration of the call."""
    if a is None:
        return None
    try:
        return _from_buffer(a if a.flags.c_contiguous else a.T)
    except (TypeError, ValueError, BufferError):
        return a.ctypes.data_as(_D)


def _len(a):
    return 0 if a is None else a.size


def _index(value, lookup, what):
    """An index given as int or as a name (looked up in the dict `lookup`)."""
    if isinstance(value, str):
        try:
            return lookup[value]
        except KeyError:
            raise KeyError(f"no {what} named {value!r}") from None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{what} must be an index (int) or a name (str), got {value!r}")
    return int(value)


def _rf(frame):
    if isinstance(frame, str):
        try:
            return _FRAMES[frame.lower()]
        except KeyError:
            raise ValueError(f"reference frame must be one of {sorted(_FRAMES)}, "
                             f"got {frame!r}") from None
    return int(frame)


def _fext(fext, nbodies):
    """External forces: None, or (nbodies, 6) / (6 nbodies,) array, body-frame (moment; force)."""
    if fext is None:
        return None
    a = _real(fext, "fext")
    if a.shape not in ((nbodies, 6), (6 * nbodies,)):
        raise ValueError(f"fext must have shape ({nbodies}, 6) or ({6 * nbodies},), got {a.shape}")
    return np.ascontiguousarray(a.reshape(-1), dtype=np.float64)


# ---- handle lifetime -------------------------------------------------------------------------

class _Handle:
    """Lifetime of one C handle, shared by every class that owns one: ``close()`` frees it
    (each class defines it; idempotent), ``with`` closes it, and garbage collection releases it
    quietly through ``_release()`` (default: ``close()``, errors ignored)."""

    _what = "handle"  # named in the error after close()
    _h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self._release()
        except Exception:
            pass

    def _release(self):
        self.close()

    @property
    def handle(self):
        """The C handle (ctypes c_void_p); ValueError once closed."""
        if self._h is None:
            raise ValueError(f"the {self._what} has been closed")
        return self._h


# ---- the model -------------------------------------------------------------------------------

from ._derivatives import DerivativesMixin  # noqa: E402 (it subclasses _Handle above)


class Model(DerivativesMixin, _Handle):
    """An immutable mechanism loaded from URDF / URDF+ or MJCF (cdyn_model).

    Load with :meth:`load` (file) or :meth:`from_string` (text). Sizes: ``nq``, ``nv`` (spanning
    tree), ``nyq``, ``ny`` (independent coordinates), ``nbodies``, ``nframes``, ``nclusters``,
    ``nloops``, ``nrelations``. Names: ``*_names`` lists, in index order, and ``*_index`` dicts
    name -> index. Computations need a :meth:`workspace` (one per thread). Batched functions
    (``*_batch``) evaluate many states on several threads.
    """

    def __init__(self, handle):
        """Use :meth:`load` or :meth:`from_string`."""
        self._h = C.c_void_p(handle)
        self._pools = {}
        self._batch_ws = []
        self._nforces = 0  # live Forces objects (close() names them before cdyn_model_free)
        L = lib()

        def count(name):
            out = C.c_int()
            _check(getattr(L, "cdyn_model_" + name)(self._h, C.byref(out)), "cdyn_model_" + name)
            return out.value

        for name in ("nbodies", "nq", "nv", "nframes", "nclusters", "ny", "nyq", "nloops",
                     "nrelations"):
            setattr(self, "_" + name, count(name))

        def names(fn, n):
            out, s = [], C.c_char_p()
            for i in range(n):
                _check(getattr(L, fn)(self._h, i, C.byref(s)), fn)
                out.append(s.value.decode())
            return tuple(out)

        self.body_names = names("cdyn_model_body_name", self._nbodies)
        self.joint_names = names("cdyn_model_joint_name", self._nbodies)
        self.position_names = names("cdyn_model_position_name", self._nq)
        self.velocity_names = names("cdyn_model_velocity_name", self._nv)
        self.frame_names = names("cdyn_model_frame_name", self._nframes)
        self.cluster_names = names("cdyn_model_cluster_name", self._nclusters)
        self.independent_position_names = names("cdyn_model_independent_position_name", self._nyq)
        self.independent_velocity_names = names("cdyn_model_independent_velocity_name", self._ny)

        def first_index(seq):
            d = {}
            for i, n in enumerate(seq):
                d.setdefault(n, i)
            return d

        self.body_index = first_index(self.body_names)
        self.joint_index = first_index(self.joint_names)
        self.position_index = first_index(self.position_names)
        self.velocity_index = first_index(self.velocity_names)
        self.frame_index = first_index(self.frame_names)
        self.cluster_index = first_index(self.cluster_names)
        self.independent_position_index = first_index(self.independent_position_names)
        self.independent_velocity_index = first_index(self.independent_velocity_names)

        def ints(fn, n):
            out, x = [], C.c_int()
            for i in range(n):
                _check(getattr(L, fn)(self._h, i, C.byref(x)), fn)
                out.append(x.value)
            return tuple(out)

        self.body_parents = ints("cdyn_model_body_parent", self._nbodies)
        self.joint_types = tuple(JOINT_TYPES[t] for t in ints("cdyn_model_joint_type",
                                                              self._nbodies))
        self.frame_bodies = ints("cdyn_model_frame_body", self._nframes)
        self.body_clusters = ints("cdyn_model_body_cluster", self._nbodies)
        name = C.c_char_p()
        _check(L.cdyn_model_name(self._h, C.byref(name)), "cdyn_model_name")
        self.name = name.value.decode()

    # -- loading

    @classmethod
    def load(cls, path, floating_base=False, ignore_constraints=False, gravity=None,
             cut_loops=False, joint_dynamics=True):
        """Loads a URDF / URDF+ file, or an MJCF file (``*.mjcf`` or a ``<mujoco>`` root: see
        docs/mjcf.md).

        path: file path (str or os.PathLike). floating_base: attach the root link to the world
        with a floating joint (nq += 7, nv += 6). ignore_constraints: drop the URDF+ chords
        (<loop>, <coupling>, <mimic>): the plain spanning tree. cut_loops: cut every <loop>
        instead of embedding it (CDYN_LOAD_CUT_LOOPS): the loops stay open in the cluster tree
        and :meth:`cut_loop_constraints` returns them as constraints; couplings and mimics stay
        embedded. gravity: None for the file's gravity (MJCF <option gravity>) or (0, 0, -9.81),
        else 3 numbers [m/s^2], world coordinates, overriding the file's. joint_dynamics: keep
        the armature, joint springs and dampers of an MJCF file in every algorithm (as MuJoCo;
        False: the rigid-body system only, CDYN_LOAD_NO_JOINT_DYNAMICS). Raises ClusterdynError (ERR_PARSE with the file:line message) when the file is missing
        or invalid, and ERR_INVALID_ARGUMENT when path looks like URDF text (use
        :meth:`from_string` for text).
        """
        text = path.decode(errors="replace") if isinstance(path, bytes) else path
        if isinstance(text, str) and text.lstrip().startswith("<"):
            raise ClusterdynError(
                ERR_INVALID_ARGUMENT, f"path looks like XML text ({len(text)} characters "
                f"starting with {text.lstrip()[:20]!r}), not a file name; use "
                "Model.from_string(text) to load URDF text", "Model.load")
        return cls._load(os.fsencode(os.fspath(path)), None, floating_base, ignore_constraints,
                         gravity, cut_loops, joint_dynamics)

    @classmethod
    def from_string(cls, xml, floating_base=False, ignore_constraints=False, gravity=None,
                    cut_loops=False, joint_dynamics=True, base_dir=None):
        """Loads URDF / URDF+ or MJCF text (str or bytes); arguments as :meth:`load`. Text opens
        files only when given ``base_dir`` (str or path-like): an MJCF ``<include file>`` or
        ``<mesh file>`` name is then resolved against that directory (absolute names as they
        are), as against a loaded file's directory; without it such text raises (load the model
        from its file, or pass its directory)."""
        data = xml.encode() if isinstance(xml, str) else bytes(xml)
        base = None if base_dir is None else os.fsencode(os.fspath(base_dir))
        return cls._load(None, data, floating_base, ignore_constraints, gravity, cut_loops,
                         joint_dynamics, base)

    @classmethod
    def _load(cls, path, xml, floating_base, ignore_constraints, gravity, cut_loops=False,
              joint_dynamics=True, base_dir=None):
        L = lib()
        flags = ((1 if floating_base else 0) | (2 if ignore_constraints else 0)
                 | (4 if cut_loops else 0) | (0 if joint_dynamics else 8))
        g = _opt_vec(gravity, 3, "gravity")
        handle, err = C.c_void_p(), C.create_string_buffer(1024)
        if path is not None:
            s = L.cdyn_model_load(_library.ABI_VERSION, path, flags, _ptr(g), C.byref(handle),
                                  err, len(err))
            fn = "cdyn_model_load"
        else:
            s = L.cdyn_model_load_string_dir(_library.ABI_VERSION, xml, len(xml), base_dir,
                                             flags, _ptr(g), C.byref(handle), err, len(err))
            fn = "cdyn_model_load_string_dir"
        _check(s, fn, err.value.decode(errors="replace"))
        return cls(handle.value)

    def close(self):
        """Frees the pools and the model. Fails (ClusterdynError, ERR_INVALID_ARGUMENT) while
        workspaces, constraint sets or Forces of it are open: close those first. Idempotent."""
        if self._h is None or self._h.value is None:
            return
        if self._nforces:
            raise ClusterdynError(ERR_INVALID_ARGUMENT, f"{self._nforces} Forces object(s) of "
                                  "this model are still open: close them first", "Model.close")
        self._free_batch_resources()
        _check(lib().cdyn_model_free(self._h), "cdyn_model_free",
               lib().cdyn_last_error().decode(errors="replace"))
        self._h = None

    def _free_batch_resources(self):
        self._free_derivative_workspaces()
        for pool in self._pools.values():
            pool.close()
        self._pools.clear()
        for ws in self._batch_ws:
            ws.close()
        self._batch_ws = []

    _what = "model"

    def _release(self):
        if (getattr(self, "_h", None) is not None and self._h.value is not None
                and not self._nforces):
            self._free_batch_resources()
            lib().cdyn_model_free(self._h)

    def __repr__(self):
        return (f"<clusterdyn.Model {self.name!r}: nq={self.nq} nv={self.nv} nyq={self.nyq} "
                f"ny={self.ny} bodies={self.nbodies} clusters={self.nclusters}>")

    # -- sizes

    nq = property(lambda self: self._nq, doc="Size of the spanning configuration q.")
    nv = property(lambda self: self._nv, doc="Size of spanning velocities / efforts (v, tau).")
    ny = property(lambda self: self._ny, doc="Number of independent velocities (ydot, tau).")
    nyq = property(lambda self: self._nyq, doc="Number of independent positions (y).")
    nbodies = property(lambda self: self._nbodies, doc="Moving bodies (== joints).")
    nframes = property(lambda self: self._nframes, doc="Frames (one per URDF link).")
    nclusters = property(lambda self: self._nclusters, doc="Clusters of the cluster tree.")
    nloops = property(lambda self: self._nloops, doc="Implicit loop joints (URDF+ <loop>).")
    nrelations = property(lambda self: self._nrelations, doc="<coupling> and <mimic> chords.")

    @property
    def warnings(self):
        """Load warnings, a tuple of lines "file:line: <tag>: message" in the order the reader met
        them: what the MJCF reader ignored or approximated (visual geoms, materials, cameras,
        actuators, ...; one line per kind, " (N occurrences)" when repeated). Empty for URDF(+) files
        (cdyn_model_nwarnings, cdyn_model_warnings)."""
        n = C.c_int()
        _check(lib().cdyn_model_nwarnings(self.handle, C.byref(n)), "cdyn_model_nwarnings")
        lines = tuple(self._text("cdyn_model_warnings").splitlines())
        if len(lines) != n.value:
            raise RuntimeError(f"cdyn_model_warnings gave {len(lines)} lines for "
                               f"{n.value} warnings")
        return lines

    @property
    def total_mass(self):
        """Total mass [kg] of the moving bodies (fused links included). Links fused to the world
        (the root link of a fixed-base robot and links fixed to it) do not move and are not
        counted, as Pinocchio's computeTotalMass (which leaves out the universe)."""
        out = C.c_double()
        _check(lib().cdyn_model_total_mass(self.handle, C.byref(out)), "cdyn_model_total_mass")
        return out.value

    @property
    def gravity(self):
        """Gravity (3,) [m/s^2], world coordinates."""
        out = np.zeros(3)
        _check(lib().cdyn_model_gravity(self.handle, _ptr(out)), "cdyn_model_gravity")
        return out

    # -- structure queries

    def joint_coordinates(self, joint):
        """(idx_q, nq, idx_v, nv) of a joint (index or name): q[idx_q:idx_q+nq], v[idx_v:...]."""
        j = _index(joint, self.joint_index, "joint")
        out = [C.c_int() for _ in range(4)]
        _check(lib().cdyn_model_joint_coordinates(self.handle, j, *map(C.byref, out)),
               "cdyn_model_joint_coordinates")
        return tuple(x.value for x in out)

    def position_limits(self):
        """(lower, upper): two (nq,) arrays [rad or m]; -inf / +inf when unlimited."""
        lo, hi = np.zeros(self.nq), np.zeros(self.nq)
        _check(lib().cdyn_model_position_limits(self.handle, _ptr(lo), _ptr(hi), self.nq),
               "cdyn_model_position_limits")
        return lo, hi

    def velocity_limits(self):
        """(nv,) velocity limits [rad/s or m/s]; +inf when unlimited."""
        out = np.zeros(self.nv)
        _check(lib().cdyn_model_velocity_limits(self.handle, _ptr(out), self.nv),
               "cdyn_model_velocity_limits")
        return out

    def effort_limits(self):
        """(nv,) effort limits [N m or N]; +inf when unlimited."""
        out = np.zeros(self.nv)
        _check(lib().cdyn_model_effort_limits(self.handle, _ptr(out), self.nv),
               "cdyn_model_effort_limits")
        return out

    def independent_indices(self):
        """(position_index (nyq,), velocity_index (ny,)): spanning indices of y and ydot, so
        y = q[position_index] and ydot = v[velocity_index]."""
        p = np.zeros(self.nyq, dtype=np.intc)
        v = np.zeros(self.ny, dtype=np.intc)
        _check(lib().cdyn_model_independent_indices(
            self.handle, p.ctypes.data_as(C.POINTER(C.c_int)), self.nyq,
            v.ctypes.data_as(C.POINTER(C.c_int)), self.ny), "cdyn_model_independent_indices")
        return p.astype(np.int64), v.astype(np.int64)

    def reference_configuration(self):
        """(nq,) closed spanning configuration found at load time (initial warm start)."""
        out = np.zeros(self.nq)
        _check(lib().cdyn_model_reference_configuration(self.handle, _ptr(out), self.nq),
               "cdyn_model_reference_configuration")
        return out

    def cluster_info(self, cluster):
        """Structure of a cluster (index or name): dict with parent (-1: world), output_body,
        first_body, nbodies, kind ("unconstrained", "explicit" or "implicit")."""
        k = _index(cluster, self.cluster_index, "cluster")
        out = [C.c_int() for _ in range(5)]
        _check(lib().cdyn_model_cluster_info(self.handle, k, *map(C.byref, out)),
               "cdyn_model_cluster_info")
        parent, output_body, first, nb, kind = (x.value for x in out)
        return {"parent": parent, "output_body": output_body, "first_body": first,
                "nbodies": nb, "kind": CLUSTER_KINDS[kind]}

    def cluster_coordinates(self, cluster):
        """Coordinate ranges of a cluster: dict idx_q, nq, idx_v, nv (spanning), idx_yq, nyq,
        idx_y, ny (independent)."""
        k = _index(cluster, self.cluster_index, "cluster")
        out = [C.c_int() for _ in range(8)]
        _check(lib().cdyn_model_cluster_coordinates(self.handle, k, *map(C.byref, out)),
               "cdyn_model_cluster_coordinates")
        keys = ("idx_q", "nq", "idx_v", "nv", "idx_yq", "nyq", "idx_y", "ny")
        return dict(zip(keys, (x.value for x in out)))

    def _text(self, fn):
        needed = C.c_size_t()
        f = getattr(lib(), fn)
        _check(f(self.handle, None, 0, C.byref(needed)), fn)
        buf = C.create_string_buffer(needed.value)
        _check(f(self.handle, buf, needed.value, None), fn)
        return buf.value.decode()

    def describe(self):
        """Readable description of the spanning tree (bodies, joints, masses)."""
        return self._text("cdyn_model_describe")

    def describe_clusters(self):
        """Readable description of the cluster tree."""
        return self._text("cdyn_model_describe_clusters")

    def cluster_tree_dot(self):
        """Graphviz (dot) text of the cluster tree, chords as dashed edges."""
        return self._text("cdyn_model_cluster_tree_dot")

    def workspace(self, caller_memory=False):
        """A new :class:`Workspace` (all the mutable memory of the computations; one per
        thread). caller_memory: build it in a buffer owned by the Python object
        (cdyn_workspace_init_in, no heap allocation by the library) instead of
        cdyn_workspace_create."""
        return Workspace(self, caller_memory)

    # -- constraints and constraint forces (clusterdyn._constraints)

    def constraint_set(self):
        """A new, empty :class:`ConstraintSet` of this model (contacts, welds, two-body
        constraints), solved by the proximal constrained dynamics."""
        from ._constraints import ConstraintSet
        return ConstraintSet(self)

    def cut_loop_constraints(self):
        """The :class:`ConstraintSet` of the model's cut loops (a model loaded with
        ``cut_loops=True`` or with closure="cut" loops): one constraint per loop, named after
        it, between its predecessor and successor bodies. Empty when no loop is cut."""
        from ._constraints import ConstraintSet
        return ConstraintSet(self, cut_loops=True)

    def forces(self):
        """A new :class:`Forces` (results of the constraint-force computations after CE-ABA /
        CE-RNEA; one per thread, like a workspace)."""
        from ._constraints import Forces
        return Forces(self)

    @property
    def loop_names(self):
        """Names of the embedded <loop> joints, in loop index order."""
        if getattr(self, "_loop_names", None) is None:
            self._loop_names = tuple(self.loop_info(i)["name"] for i in range(self.nloops))
        return self._loop_names

    @property
    def relation_names(self):
        """Names of the <coupling> / <mimic> relations, in relation index order."""
        if getattr(self, "_relation_names", None) is None:
            self._relation_names = tuple(self.coupling_info(i)["name"]
                                         for i in range(self.nrelations))
        return self._relation_names

    def _loop(self, loop):
        if isinstance(loop, str):
            return _index(loop, {n: i for i, n in enumerate(self.loop_names)}, "loop")
        k = _index(loop, {}, "loop")
        if not 0 <= k < self.nloops:
            raise IndexError(f"loop index {k} out of range [0, {self.nloops})")
        return k

    def _relation(self, relation):
        if isinstance(relation, str):
            return _index(relation, {n: i for i, n in enumerate(self.relation_names)},
                          "coupling")
        k = _index(relation, {}, "coupling")
        if not 0 <= k < self.nrelations:
            raise IndexError(f"coupling index {k} out of range [0, {self.nrelations})")
        return k

    def loop_info(self, loop):
        """An embedded <loop> (index or name): dict with name, predecessor and successor (body
        indices, -1: world), nrows (its constrained directions) and placement (4 x 4 pose of
        the loop frame P in the predecessor body, [R p; 0 0 0 1])."""
        k = self._loop(loop)
        name, pre, suc, rows = C.c_char_p(), C.c_int(), C.c_int(), C.c_int()
        pose = np.zeros(12)
        _check(lib().cdyn_forces_loop_info(self.handle, k, C.byref(name), C.byref(pre),
                                           C.byref(suc), C.byref(rows), _ptr(pose)),
               "cdyn_forces_loop_info")
        T = np.eye(4)
        T[:3, :3] = pose[:9].reshape(3, 3, order="F")
        T[:3, 3] = pose[9:]
        return {"name": name.value.decode(), "predecessor": pre.value,
                "successor": suc.value, "nrows": rows.value, "placement": T}

    def coupling_info(self, relation):
        """A <coupling> / <mimic> relation (index or name), sum_t coefficients[t] *
        v[velocity_indices[t]] = 0: dict with name, velocity_indices (tuple of spanning
        velocity indices), velocity_names and coefficients ((nterms,) array)."""
        k = self._relation(relation)
        L = lib()
        name, nterms = C.c_char_p(), C.c_int()
        _check(L.cdyn_forces_coupling_info(self.handle, k, C.byref(name), C.byref(nterms)),
               "cdyn_forces_coupling_info")
        idx, coeff = [], np.zeros(nterms.value)
        iv, c = C.c_int(), C.c_double()
        for t in range(nterms.value):
            _check(L.cdyn_forces_coupling_term(self.handle, k, t, C.byref(iv), C.byref(c)),
                   "cdyn_forces_coupling_term")
            idx.append(iv.value)
            coeff[t] = c.value
        return {"name": name.value.decode(), "velocity_indices": tuple(idx),
                "velocity_names": tuple(self.velocity_names[i] for i in idx),
                "coefficients": coeff}

    def workspace_size(self):
        """Bytes a caller-memory workspace of this model needs (cdyn_workspace_size)."""
        out = C.c_size_t()
        _check(lib().cdyn_workspace_size(self.handle, C.byref(out)), "cdyn_workspace_size")
        return out.value

    # -- batched evaluation

    def pool(self, threads=None):
        """The model's :class:`Pool` of `threads` threads (default: os.cpu_count()), created on
        first use and kept until :meth:`close`."""
        n = _threads(threads)
        if n not in self._pools:
            self._pools[n] = Pool(self, n)
        return self._pools[n]

    def _workspaces(self, n):
        while len(self._batch_ws) < n:
            self._batch_ws.append(Workspace(self))
        arr = (C.c_void_p * n)(*(w.handle.value for w in self._batch_ws[:n]))
        return arr

    def _run_batch(self, name, threads, use_pool, fill):
        n = _threads(threads)
        failed = C.c_int(-1)
        if use_pool:
            pool = self.pool(n)
            status = getattr(lib(), "cdyn_pool_" + name)(self.handle, pool.handle, *fill(),
                                                          C.byref(failed))
            message = pool.last_error
        else:
            ws = self._workspaces(n)
            status = getattr(lib(), "cdyn_batch_" + name)(self.handle, ws, n, *fill(),
                                                           C.byref(failed))
            message = self._batch_ws[0].last_error
        if status != OK:
            where = f" (state {failed.value})" if failed.value >= 0 else ""
            raise ClusterdynError(status, message + where, ("cdyn_pool_" if use_pool
                                                            else "cdyn_batch_") + name,
                                  state=failed.value)

    def ce_aba_batch(self, Q, V, TAU, fext=None, threads=None, use_pool=True,
                     return_qdd=False, out=None):
        """CE-ABA on N closed spanning states at once.

        Q (N, nq), V (N, nv): closed spanning states; TAU (N, ny): independent efforts [N m, N];
        fext: None or (N, nbodies, 6) body-frame external forces. threads: number of threads
        (default os.cpu_count()); use_pool: run on the model's persistent pool (True) or on
        threads started for this call (False). Returns YDD (N, ny) [rad/s^2, m/s^2], and QDD
        (N, nv) too when return_qdd. Results are bit-identical to N calls of
        Workspace.ce_aba. out: None, or the array(s) to write the result into instead (YDD, or
        (YDD, QDD) when return_qdd; see :meth:`mass_matrix_batch` for the rules), returned.
        """
        N, (Q, V, TAU), layout = _stack([(Q, self.nq, "Q"), (V, self.nv, "V"),
                                          (TAU, self.ny, "TAU")])
        F = _stack_fext(fext, N, self.nbodies, layout)
        YDD, QDD = _outs(out, N, layout, [self.ny] + ([self.nv] if return_qdd else []))
        self._run_batch("ce_aba", threads, use_pool, lambda: (
            N, layout, _ptr(Q), self.nq, _ptr(V), self.nv, _ptr(TAU), self.ny, _ptr(F),
            0 if F is None else 6 * self.nbodies, _ptr(YDD), self.ny, _ptr(QDD),
            self.nv if return_qdd else 0))
        return (YDD, QDD) if return_qdd else YDD

    def ce_aba_independent_batch(self, Y, YDOT, TAU, fext=None, q_guess=None, threads=None,
                                 use_pool=True, out=None):
        """Forward dynamics of N independent states (loop closure + CE-ABA per state).

        Y (N, nyq), YDOT (N, ny), TAU (N, ny). Every position solve starts from q_guess (nq,)
        or, when None, from the model's reference configuration. Returns (YDD (N, ny),
        Q (N, nq), V (N, nv), QDD (N, nv)): accelerations and the closed spanning states.
        out: None, or those four arrays to write into instead (rules in
        :meth:`mass_matrix_batch`).
        """
        N, (Y, YDOT, TAU), layout = _stack([(Y, self.nyq, "Y"), (YDOT, self.ny, "YDOT"),
                                            (TAU, self.ny, "TAU")])
        F = _stack_fext(fext, N, self.nbodies, layout)
        g = _opt_vec(q_guess, self.nq, "q_guess")
        YDD, Qo, Vo, QDD = _outs(out, N, layout, [self.ny, self.nq, self.nv, self.nv])
        self._run_batch("ce_aba_independent", threads, use_pool, lambda: (
            N, layout, _ptr(Y), self.nyq, _ptr(YDOT), self.ny, _ptr(TAU), self.ny, _ptr(F),
            0 if F is None else 6 * self.nbodies, _ptr(g), _len(g), _ptr(YDD), self.ny,
            _ptr(Qo), self.nq, _ptr(Vo), self.nv, _ptr(QDD), self.nv))
        return YDD, Qo, Vo, QDD

    def ce_rnea_batch(self, Q, V, YDD, fext=None, threads=None, use_pool=True, out=None):
        """CE-RNEA on N closed states: Q (N, nq), V (N, nv), YDD (N, ny) -> TAU (N, ny).
        out: None, or the (N, ny) array to write TAU into (rules in :meth:`mass_matrix_batch`).
        """
        N, (Q, V, YDD), layout = _stack([(Q, self.nq, "Q"), (V, self.nv, "V"),
                                         (YDD, self.ny, "YDD")])
        F = _stack_fext(fext, N, self.nbodies, layout)
        TAU = _outs(out, N, layout, [self.ny])[0]
        self._run_batch("ce_rnea", threads, use_pool, lambda: (
            N, layout, _ptr(Q), self.nq, _ptr(V), self.nv, _ptr(YDD), self.ny, _ptr(F),
            0 if F is None else 6 * self.nbodies, _ptr(TAU), self.ny, None, 0))
        return TAU

    def mass_matrix_batch(self, Q, threads=None, use_pool=True, out=None):
        """Independent mass matrices of N closed configurations: Q (N, nq) -> H (N, ny, ny)
        [kg m^2, kg].

        out: None, or an (N, ny, ny) float64 array to write H into (and return) instead of a
        new one: C-contiguous when Q is row-major (any layout but a Fortran-ordered float64
        array), Fortran-ordered when Q is; a worker of clusterdyn.distributed passes its rows of
        the shared output so that the result is written once. The same `out` rules hold for
        the other *_batch calls.
        """
        N, (Q,), layout = _stack([(Q, self.nq, "Q")])
        ny = self.ny
        if out is None:
            out = np.zeros((N, ny, ny), order="F" if layout == _COL_MAJOR else "C")
        else:
            if isinstance(out, tuple) and len(out) == 1:  # as the other *_batch calls take it
                out = out[0]
            _check_out(out, (N, ny, ny), layout, "out")
        # Each state's H goes out column-major: element (r, c) at r + c * ny of its row. H is
        # exactly symmetric (clusterMassMatrix mirrors its upper triangle), so in a C-ordered
        # (N, ny, ny) array that is H itself; in a Fortran-ordered one, row i's element
        # r + c * ny is out[i, r, c].
        self._run_batch("cluster_mass_matrix", threads, use_pool,
                        lambda: (N, layout, _ptr(Q), self.nq, _ptr(out), ny * ny))
        return out


def _threads(threads):
    n = (os.cpu_count() or 1) if threads is None else threads
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"threads must be a positive integer, got {threads!r}")
    return int(n)


def _stack(arrays):
    """Stacked (N, n) inputs as float64 arrays sharing one layout: all Fortran-ordered ones stay
    so (column-major, no copy); otherwise all are made C-contiguous (row-major)."""
    conv = []
    N = None
    for x, n, name in arrays:
        a = _real(x, name)
        if a.ndim != 2 or a.shape[1] != n:
            raise ValueError(f"{name} must have shape (N, {n}), got {a.shape}")
        if N is None:
            N = a.shape[0]
        elif a.shape[0] != N:
            raise ValueError(f"{name} has {a.shape[0]} rows (states), expected {N} like "
                             f"{arrays[0][2]}")
        conv.append(a)
    if N > 2**31 - 1:
        raise ValueError(f"at most 2**31 - 1 states per batch, got {N}")
    fortran = all(a.flags.f_contiguous and not a.flags.c_contiguous and a.dtype == np.float64
                  for a in conv)
    if fortran:
        return N, conv, _COL_MAJOR
    return N, [np.ascontiguousarray(a, dtype=np.float64) for a in conv], _ROW_MAJOR


def _stack_fext(fext, N, nbodies, layout):
    if fext is None:
        return None
    a = _real(fext, "fext")
    if a.shape not in ((N, nbodies, 6), (N, 6 * nbodies)):
        raise ValueError(f"fext must have shape ({N}, {nbodies}, 6), got {a.shape}")
    a = a.reshape(N, 6 * nbodies)
    order = "F" if layout == _COL_MAJOR else "C"
    return np.require(a, dtype=np.float64, requirements=[order])


def _out(N, n, layout):
    return np.zeros((N, n), order="F" if layout == _COL_MAJOR else "C")


def _check_out(a, shape, layout, name):
    order = "F" if layout == _COL_MAJOR else "C"
    if not isinstance(a, np.ndarray) or a.dtype != np.float64 or a.shape != shape or \
            not a.flags[order + "_CONTIGUOUS"] or not a.flags.writeable:
        got = (f"{a.dtype} {a.shape}" if isinstance(a, np.ndarray) else type(a).__name__)
        raise ValueError(f"{name} must be a writeable {'Fortran' if order == 'F' else 'C'}-"
                         f"ordered float64 array of shape {shape} (the layout of the inputs), "
                         f"got {got}")


def _outs(out, N, layout, widths):
    """The (N, n) output arrays of a batch call, one per width: new ones (zeros, in `layout`)
    when out is None, else the caller's (one array, or a tuple of one per width), checked.
    Padded with None to at least two entries."""
    if out is None:
        arrays = [_out(N, n, layout) for n in widths]
    else:
        given = (out,) if isinstance(out, np.ndarray) else tuple(out)
        if len(given) != len(widths):
            raise ValueError(f"out must hold {len(widths)} array(s), got {len(given)}")
        for k, (a, n) in enumerate(zip(given, widths)):
            _check_out(a, (N, n), layout, "out" if len(widths) == 1 else f"out[{k}]")
        arrays = list(given)
    return arrays + [None] * (2 - len(arrays))


# ---- pools -----------------------------------------------------------------------------------

class Pool(_Handle):
    """A cdyn_pool: `threads` workspaces and threads - 1 persistent worker threads of one model.
    Model.*_batch use one (Model.pool); it is freed with the model."""

    def __init__(self, model, threads):
        self.model = model
        h = C.c_void_p()
        _check(lib().cdyn_pool_create(model.handle, int(threads), C.byref(h)), "cdyn_pool_create")
        self._h = h
        self.threads = int(threads)

    _what = "pool"

    @property
    def last_error(self):
        """Message of the last failed batch call on the pool."""
        return lib().cdyn_pool_last_error(self._h).decode(errors="replace")

    def close(self):
        """Stops the threads and frees the workspaces. Idempotent."""
        if self._h is not None:
            lib().cdyn_pool_free(self._h)
            self._h = None


# ---- workspaces ------------------------------------------------------------------------------

class Workspace(_Handle):
    """All mutable memory of the computations on one model (cdyn_workspace); use one per
    thread. Every method checks its arguments' shapes here and raises ClusterdynError with the
    library's message when the call fails."""

    def __init__(self, model, caller_memory=False):
        self.model = model
        self._h = None
        self._memory = None
        h = C.c_void_p()
        if caller_memory:
            self._memory = C.create_string_buffer(model.workspace_size())
            _check(lib().cdyn_workspace_init_in(model.handle, self._memory,
                                                len(self._memory), C.byref(h)),
                   "cdyn_workspace_init_in")
        else:
            _check(lib().cdyn_workspace_create(model.handle, C.byref(h)),
                   "cdyn_workspace_create")
        self._h = h

    def close(self):
        """Frees the workspace (and then its caller-memory buffer). Idempotent."""
        if self._h is not None:
            lib().cdyn_workspace_free(self._h)
            self._h = None
            self._memory = None

    _what = "workspace"

    @property
    def last_error(self):
        """Message of the last failed call on this workspace ("" after a success)."""
        return lib().cdyn_workspace_last_error(self._h).decode(errors="replace")

    def _call(self, name, *args):
        h, mh = self._h, self.model._h
        if h is None or mh is None:  # closed: the `handle` properties raise ValueError
            mh, h = self.model.handle, self.handle
        fn = _functions.get(name)
        if fn is None:
            fn = _functions[name] = getattr(lib(), name)
        status = fn(mh, h, *args)
        if status != OK:
            raise ClusterdynError(status, self.last_error, name)

    # shorthands for the model's sizes
    def _q(self, q, name="q"):
        return _vec(q, self.model.nq, name)

    def _v(self, v, name="v"):
        return _vec(v, self.model.nv, name)

    def _y(self, y, name="ydot"):
        return _vec(y, self.model.ny, name)

    # calls that return one new output array (the C function's last arguments)
    def _vector_out(self, name, n, *args, length=True):
        """name(*args, out, n) (or name(*args, out) when the length is fixed in C) with a new
        output vector out (n,): returns out."""
        out = np.zeros(n)
        self._call(name, *args, _ptr(out), *((n,) if length else ()))
        return out

    def _matrix_out(self, name, rows, cols, *args):
        """name(*args, M, max(1, rows)) with a new column-major output M (rows, cols): returns M
        (C order)."""
        M = np.zeros((rows, cols), order="F")
        self._call(name, *args, _ptr(M), max(1, rows))
        return np.ascontiguousarray(M)

    def _spanning_dynamics(self, name, q, v, x, fext, nout, return_qdd):
        """The calls (q, v, x, fext) -> (out (nout,), qdd (nv,)) of a closed state: cdyn_ce_aba,
        cdyn_ce_aba_spanning_forces (x = tau), cdyn_ce_rnea (x = ydd). Returns out, or
        (out, qdd) with return_qdd."""
        f = _fext(fext, self.model.nbodies)
        out = np.zeros(nout)
        qdd = np.zeros(self.model.nv) if return_qdd else None
        self._call(name, _ptr(q), q.size, _ptr(v), v.size, _ptr(x), x.size, _ptr(f), _len(f),
                   _ptr(out), out.size, _ptr(qdd), _len(qdd))
        return (out, qdd) if return_qdd else out

    # -- configuration space

    def neutral_configuration(self):
        """(nq,) neutral configuration (0 angles, identity quaternions)."""
        q = np.zeros(self.model.nq)
        self._call("cdyn_neutral_configuration", _ptr(q), q.size)
        return q

    def integrate(self, q, v, dt):
        """q (+) v dt (nq,): configuration after moving with velocity v (nv,) for dt [s]."""
        q, v = self._q(q), self._v(v)
        return self._vector_out("cdyn_integrate", self.model.nq, _ptr(q), q.size, _ptr(v), v.size,
                                float(dt))

    def difference(self, q0, q1):
        """q1 (-) q0 (nv,): the velocity v with integrate(q0, v, 1) == q1 (inverse of
        :meth:`integrate`; body-frame logarithm for quaternion and planar joints)."""
        q0, q1 = self._q(q0, "q0"), self._q(q1, "q1")
        return self._vector_out("cdyn_difference", self.model.nv, _ptr(q0), q0.size, _ptr(q1),
                                q1.size)

    def normalize_configuration(self, q):
        """Copy of q (nq,) with every quaternion normalized."""
        q = self._q(q).copy()
        self._call("cdyn_normalize_configuration", _ptr(q), q.size)
        return q

    # -- kinematics

    def forward_kinematics(self, q, v=None, a=None):
        """Placements (and velocities with v, accelerations with a; gravity not included) for
        the frame_* methods. q (nq,), v (nv,) optional, a (nv,) optional (requires v)."""
        q, v, a = self._q(q), _opt_vec(v, self.model.nv, "v"), _opt_vec(a, self.model.nv, "a")
        if a is not None and v is None:
            raise ValueError("forward_kinematics: a requires v")
        self._call("cdyn_forward_kinematics", _ptr(q), q.size, _ptr(v), _len(v), _ptr(a),
                   _len(a))

    def _frame(self, frame):
        return _index(frame, self.model.frame_index, "frame")

    def frame_placement(self, frame):
        """(R (3, 3), p (3,)) of a frame (index or link name) in the world after
        forward_kinematics: x_world = R x_frame + p [m]."""
        R, p = np.zeros((3, 3), order="F"), np.zeros(3)
        self._call("cdyn_frame_placement", self._frame(frame), _ptr(R), 3, _ptr(p))
        return np.ascontiguousarray(R), p

    def frame_placement_matrix(self, frame):
        """4 x 4 homogeneous transform [R p; 0 0 0 1] of a frame after forward_kinematics."""
        return self._matrix_out("cdyn_frame_placement_matrix", 4, 4, self._frame(frame))

    def frame_velocity(self, frame, reference="local"):
        """Spatial velocity (6,) (angular; linear) [rad/s; m/s] of a frame in `reference`
        ("local", "world" or "local_world_aligned"), after forward_kinematics with v."""
        return self._vector_out("cdyn_frame_velocity", 6, self._frame(frame), _rf(reference),
                                length=False)

    def frame_acceleration(self, frame, reference="local"):
        """Spatial acceleration (6,) [rad/s^2; m/s^2] after forward_kinematics with v and a."""
        return self._vector_out("cdyn_frame_acceleration", 6, self._frame(frame), _rf(reference),
                                length=False)

    def frame_classical_acceleration(self, frame, reference="local"):
        """Classical linear acceleration (3,) [m/s^2] of the frame origin."""
        return self._vector_out("cdyn_frame_classical_acceleration", 3, self._frame(frame),
                                _rf(reference), length=False)

    def frame_jacobian(self, frame, reference="local"):
        """Frame Jacobian (6, nv) (rows angular then linear) at the last forward_kinematics."""
        return self._matrix_out("cdyn_frame_jacobian", 6, self.model.nv, self._frame(frame),
                                _rf(reference))

    def compute_frame_jacobian(self, q, frame, reference="local"):
        """forward_kinematics(q) then frame_jacobian: (6, nv)."""
        q = self._q(q)
        return self._matrix_out("cdyn_compute_frame_jacobian", 6, self.model.nv, _ptr(q), q.size,
                                self._frame(frame), _rf(reference))

    def center_of_mass(self, q):
        """Centre of mass (3,) [m] of the whole model, world coordinates."""
        q = self._q(q)
        return self._vector_out("cdyn_center_of_mass", 3, _ptr(q), q.size, length=False)

    # -- spanning-tree dynamics (loop constraints ignored)

    def rnea(self, q, v, a, fext=None):
        """Inverse dynamics tau (nv,) = M a + C v + g - sum J^T fext; fext: None or
        (nbodies, 6) forces (moment; force) on each body in its frame."""
        q, v, a = self._q(q), self._v(v), self._v(a, "a")
        f = _fext(fext, self.model.nbodies)
        return self._vector_out("cdyn_rnea", self.model.nv, _ptr(q), q.size, _ptr(v), v.size,
                                _ptr(a), a.size, _ptr(f), _len(f))

    def aba(self, q, v, tau, fext=None):
        """Forward dynamics ddq (nv,) of the spanning tree (articulated-body algorithm)."""
        q, v, tau = self._q(q), self._v(v), self._v(tau, "tau")
        f = _fext(fext, self.model.nbodies)
        return self._vector_out("cdyn_aba", self.model.nv, _ptr(q), q.size, _ptr(v), v.size,
                                _ptr(tau), tau.size, _ptr(f), _len(f))

    def crba(self, q):
        """Joint-space mass matrix M(q) (nv, nv) of the spanning tree."""
        q = self._q(q)
        return self._matrix_out("cdyn_crba", self.model.nv, self.model.nv, _ptr(q), q.size)

    def nonlinear_effects(self, q, v):
        """Bias forces C(q, v) v + g(q) (nv,)."""
        q, v = self._q(q), self._v(v)
        return self._vector_out("cdyn_nonlinear_effects", self.model.nv, _ptr(q), q.size, _ptr(v),
                                v.size)

    def generalized_gravity(self, q):
        """Generalized gravity g(q) (nv,)."""
        q = self._q(q)
        return self._vector_out("cdyn_generalized_gravity", self.model.nv, _ptr(q), q.size)

    def kinetic_energy(self, q, v):
        """Kinetic energy 1/2 v^T M v [J]."""
        q, v = self._q(q), self._v(v)
        out = C.c_double()
        self._call("cdyn_kinetic_energy", _ptr(q), q.size, _ptr(v), v.size, C.byref(out))
        return out.value

    def potential_energy(self, q):
        """Potential energy -sum m_i g . c_i [J]."""
        q = self._q(q)
        out = C.c_double()
        self._call("cdyn_potential_energy", _ptr(q), q.size, C.byref(out))
        return out.value

    # -- cluster-tree dynamics in independent coordinates (closed spanning states)

    def ce_aba(self, q, v, tau, fext=None, return_qdd=False):
        """Constraint-embedding ABA: ydd (ny,) from a closed state q (nq,), v (nv,) and
        independent efforts tau (ny,); with return_qdd also the spanning accelerations qdd
        (nv,): returns (ydd, qdd)."""
        q, v, tau = self._q(q), self._v(v), self._y(tau, "tau")
        return self._spanning_dynamics("cdyn_ce_aba", q, v, tau, fext, self.model.ny, return_qdd)

    def ce_aba_spanning_forces(self, q, v, tau, fext=None, return_qdd=False):
        """CE-ABA with efforts on every spanning joint: tau (nv,) acts through G^T tau."""
        q, v, tau = self._q(q), self._v(v), self._v(tau, "tau")
        return self._spanning_dynamics("cdyn_ce_aba_spanning_forces", q, v, tau, fext,
                                       self.model.ny, return_qdd)

    def ce_aba_independent(self, y, ydot, tau, fext=None, q_guess=None):
        """Forward dynamics from independent coordinates: loop closure for y (nyq,), v = G ydot
        (ydot: ny), CE-ABA with tau (ny,). The position solve starts from q_guess (nq,) when
        given (as :meth:`Model.ce_aba_independent_batch`), else from the workspace's warm start.
        Returns (ydd (ny,), q (nq,), v (nv,), qdd (nv,))."""
        y, ydot, tau = (_vec(y, self.model.nyq, "y"), self._y(ydot), self._y(tau, "tau"))
        f = _fext(fext, self.model.nbodies)
        m = self.model
        if q_guess is not None:
            # cdyn_independent_to_spanning(y, ydot, q_guess) + cdyn_ce_aba: what the batch
            # function computes per state (the C single call has no q_guess).
            q, v = self.independent_to_spanning(y, ydot, q_guess)
            ydd, qdd = self.ce_aba(q, v, tau, fext, return_qdd=True)
            return ydd, q, v, qdd
        ydd, q, v, qdd = np.zeros(m.ny), np.zeros(m.nq), np.zeros(m.nv), np.zeros(m.nv)
        self._call("cdyn_ce_aba_independent", _ptr(y), y.size, _ptr(ydot), ydot.size,
                   _ptr(tau), tau.size, _ptr(f), _len(f), _ptr(ydd), ydd.size, _ptr(q), q.size,
                   _ptr(v), v.size, _ptr(qdd), qdd.size)
        return ydd, q, v, qdd

    def ce_rnea(self, q, v, ydd, fext=None, return_qdd=False):
        """Constraint-embedding RNEA: independent efforts tau (ny,) producing ydd (ny,) at the
        closed state (q, v); with return_qdd also qdd (nv,)."""
        q, v, ydd = self._q(q), self._v(v), self._y(ydd, "ydd")
        return self._spanning_dynamics("cdyn_ce_rnea", q, v, ydd, fext, self.model.ny, return_qdd)

    def cluster_mass_matrix(self, q):
        """Independent mass matrix H = G^T M G (ny, ny) at a closed configuration q."""
        q = self._q(q)
        return self._matrix_out("cdyn_cluster_mass_matrix", self.model.ny, self.model.ny, _ptr(q),
                                q.size)

    def cluster_bias(self, q, v):
        """Independent bias C (ny,) at a closed state: H ydd + C = tau."""
        q, v = self._q(q), self._v(v)
        return self._vector_out("cdyn_cluster_bias", self.model.ny, _ptr(q), q.size, _ptr(v),
                                v.size)

    # -- loop closure and coordinate conversions

    def solve_loop_closure(self, y, q_guess=None):
        """Closed spanning configuration q (nq,) with independent positions y (nyq,); Newton
        from q_guess (nq,) or from the workspace's warm start."""
        y = _vec(y, self.model.nyq, "y")
        g = _opt_vec(q_guess, self.model.nq, "q_guess")
        q = np.zeros(self.model.nq)
        self._call("cdyn_solve_loop_closure", _ptr(y), y.size, _ptr(g), _len(g), _ptr(q),
                   q.size)
        return q

    def independent_to_spanning(self, y, ydot, q_guess=None):
        """Closed spanning state (q (nq,), v (nv,)) from y (nyq,), ydot (ny,)."""
        y, ydot = _vec(y, self.model.nyq, "y"), self._y(ydot)
        g = _opt_vec(q_guess, self.model.nq, "q_guess")
        q, v = np.zeros(self.model.nq), np.zeros(self.model.nv)
        self._call("cdyn_independent_to_spanning", _ptr(y), y.size, _ptr(ydot), ydot.size,
                   _ptr(g), _len(g), _ptr(q), q.size, _ptr(v), v.size)
        return q, v

    def spanning_to_independent(self, q, v):
        """Independent coordinates (y (nyq,), ydot (ny,)) of a spanning state (a selection)."""
        q, v = self._q(q), self._v(v)
        y, ydot = np.zeros(self.model.nyq), np.zeros(self.model.ny)
        self._call("cdyn_spanning_to_independent", _ptr(q), q.size, _ptr(v), v.size, _ptr(y),
                   y.size, _ptr(ydot), ydot.size)
        return y, ydot

    def project_to_constraints(self, q, v):
        """Projection of any spanning state onto the loop constraints: (q (nq,), v (nv,)) with
        the independent coordinates kept and the dependent ones solved."""
        q, v = self._q(q), self._v(v)
        qo, vo = np.zeros(self.model.nq), np.zeros(self.model.nv)
        self._call("cdyn_project_to_constraints", _ptr(q), q.size, _ptr(v), v.size, _ptr(qo),
                   qo.size, _ptr(vo), vo.size)
        return qo, vo

    def last_loop_closure(self):
        """(Newton iterations, residual [m or rad]) of the last position solve."""
        it, res = C.c_int(), C.c_double()
        self._call("cdyn_last_loop_closure", C.byref(it), C.byref(res))
        return it.value, res.value

    def constraint_matrices(self, q, v):
        """Explicit constraint (G (nv, ny), g (nv,)): v = G ydot, vdot = G ydd + g."""
        q, v = self._q(q), self._v(v)
        m = self.model
        G = np.zeros((m.nv, m.ny), order="F")
        g = np.zeros(m.nv)
        self._call("cdyn_constraint_matrices", _ptr(q), q.size, _ptr(v), v.size, _ptr(G),
                   max(1, m.nv), _ptr(g), g.size)
        return np.ascontiguousarray(G), g

    def cluster_constraint_matrices(self, cluster, q, v):
        """One cluster's (G_k (nv_k, ny_k), g_k (nv_k,))."""
        k = _index(cluster, self.model.cluster_index, "cluster")
        if not 0 <= k < self.model.nclusters:
            raise IndexError(f"cluster index {k} out of range [0, {self.model.nclusters})")
        c = self.model.cluster_coordinates(k)
        q, v = self._q(q), self._v(v)
        G = np.zeros((c["nv"], c["ny"]), order="F")
        g = np.zeros(c["nv"])
        self._call("cdyn_cluster_constraint_matrices", k, _ptr(q), q.size, _ptr(v), v.size,
                   _ptr(G), max(1, c["nv"]), _ptr(g), g.size)
        return np.ascontiguousarray(G), g
