"""Arrays in one shared-memory file, for clusterdyn.distributed on workers of the caller's
machine. The caller creates a :class:`Block` (a sparse file under /dev/shm: tmpfs, the pages
are the memory) and writes the rows of each chunk into it as it submits the chunk; a task
carries only the block's :class:`Layout` (path, token, offsets: a few hundred bytes) and its
rows. A worker maps the input block read-only (:func:`attach`: the library reads the rows in
place) and writes its result rows into an output block (:func:`write_rows`); the caller reads
them straight into the result arrays (:meth:`Block.read_rows`).

Rows are written and read with pwrite / preadv (one kernel copy, no page faults of a mapping,
no pre-zeroed pages); a full /dev/shm then gives an OSError (the caller sends that chunk in its
task) rather than a SIGBUS. A worker on another machine (or in another container) does not see
the file: :func:`attach` returns None there (no file, or not the block's random token).
"""

import collections
import mmap
import os
import secrets
import tempfile
import weakref

import numpy as np

SHM_DIR = "/dev/shm"
_ALIGN = 64  # each array starts on a cache line
_TOKEN = 16  # bytes of the random token at the start of the file

_POPULATE = getattr(mmap, "MAP_POPULATE", 0)  # Linux

Layout = collections.namedtuple("Layout", "path size token arrays")
"""A block as it travels: its file, size in bytes, token, and ((offset, shape, dtype str), ...)."""


def available():
    """Whether this machine has the shared-memory directory (Linux)."""
    return os.path.isdir(SHM_DIR) and os.access(SHM_DIR, os.W_OK | os.X_OK)


def free_bytes():
    """Bytes free in the shared-memory directory now."""
    st = os.statvfs(SHM_DIR)
    return st.f_bavail * st.f_frsize


def layout_size(specs):
    """Bytes of a block holding arrays of the given (shape, dtype)."""
    return _place(specs)[1]


def _place(specs):
    offset, placed = _TOKEN, []
    for shape, dtype in specs:
        dtype = np.dtype(dtype)
        offset = -(-offset // _ALIGN) * _ALIGN
        # dtype.str names a plain dtype; a structured one (the rollouts' reports, with padding)
        # travels as itself (its str would lose the fields and offsets).
        placed.append((offset, tuple(int(n) for n in shape),
                       dtype.str if dtype.fields is None else dtype))
        offset += int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    return tuple(placed), offset


def _row_bytes(shape, dtype):
    return int(np.prod(shape[1:], dtype=np.int64)) * np.dtype(dtype).itemsize


class Block:
    """Arrays of the given (shape, dtype) in one new sparse file under /dev/shm, kept open
    here. :meth:`close` (or the garbage collector, or the interpreter's exit) closes and
    removes it; workers that still map it keep their pages until they unmap."""

    def __init__(self, specs):
        placed, size = _place(specs)
        token = secrets.token_bytes(_TOKEN)
        fd, path = tempfile.mkstemp(prefix="clusterdyn-", dir=SHM_DIR)
        self._fd = fd
        self._remove = weakref.finalize(self, _remove, fd, path)
        self.layout = Layout(path, size, token, placed)
        try:
            os.ftruncate(fd, size)
            _pwrite(fd, token, 0)
        except BaseException:
            self.close()
            raise

    def reuse(self, specs):
        """Places arrays of the given (shape, dtype) in this file, over the old ones, when
        they fit (the file and its pages are reused: no new page to allocate), under a new
        token: a task of an earlier use that still runs (cancelled, or on a worker the
        scheduler gave up) no longer finds the file as its layout names it, and writes
        nothing. False when they do not fit."""
        placed, size = _place(specs)
        if size > self.layout.size:
            return False
        token = secrets.token_bytes(_TOKEN)
        _pwrite(self._fd, token, 0)
        self.layout = self.layout._replace(token=token, arrays=placed)
        return True

    def write_rows(self, k, rows, start):
        """Writes `rows` (the rows start, start + 1, ... of array k) into the file."""
        off, shape, dt = self.layout.arrays[k]
        rows = np.ascontiguousarray(rows, dtype=np.dtype(dt))
        _pwrite(self._fd, rows, off + start * _row_bytes(shape, dt))

    def read_rows(self, k, out, start):
        """Reads rows start, start + 1, ... of array k into the C-contiguous array `out`."""
        off, shape, dt = self.layout.arrays[k]
        if out.nbytes == 0:
            return
        view = memoryview(out).cast("B")
        done = 0
        while done < view.nbytes:
            n = os.preadv(self._fd, [view[done:]], off + start * _row_bytes(shape, dt) + done)
            if n <= 0:
                raise OSError(f"short read of the shared block {self.layout.path}")
            done += n

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Closes and removes the file (once)."""
        self._remove()


def _remove(fd, path):
    os.close(fd)
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _pwrite(fd, data, offset):
    if not len(data) or getattr(data, "nbytes", 1) == 0:
        return
    view = memoryview(data).cast("B")
    done = 0
    while done < view.nbytes:
        done += os.pwrite(fd, view[done:], offset + done)


def _open(layout, flags):
    """A descriptor of the caller's file when this process sees it (same size and token)."""
    try:
        fd = os.open(layout.path, flags)
    except OSError:
        return -1
    if os.fstat(fd).st_size != layout.size or os.pread(fd, _TOKEN, 0) != layout.token:
        os.close(fd)
        return -1
    return fd


def attach(layout, start, stop):
    """Rows start:stop of every array of the block, mapped read-only in this process (no
    copy: the pages are the caller's), or None when this process does not see the caller's
    file (another machine)."""
    fd = _open(layout, os.O_RDONLY)
    if fd < 0:
        return None
    try:
        mm = mmap.mmap(fd, layout.size, prot=mmap.PROT_READ)
    finally:
        os.close(fd)
    return [np.ndarray(shape, dtype=np.dtype(dt), buffer=mm, offset=off)[start:stop]
            for off, shape, dt in layout.arrays]


def attach_writable(layout, start, stop):
    """Rows start:stop of every array of the block, mapped writeable and shared in this process
    (what is written goes straight into the caller's pages), or None when this process does
    not see the caller's file (another machine). Only those rows' pages are mapped, at once
    (MAP_POPULATE: one fault per page would cost about as much as computing H)."""
    fd = _open(layout, os.O_RDWR)
    if fd < 0:
        return None
    views = []
    try:
        for off, shape, dt in layout.arrays:
            rb = _row_bytes(shape, dt)
            lo, hi = off + start * rb, off + stop * rb
            if hi == lo:
                views.append(np.empty((0,) + tuple(shape[1:]), np.dtype(dt)))
                continue
            base = lo - lo % mmap.ALLOCATIONGRANULARITY
            mm = mmap.mmap(fd, hi - base, flags=mmap.MAP_SHARED | _POPULATE, offset=base)
            views.append(np.ndarray((stop - start,) + tuple(shape[1:]), dtype=np.dtype(dt),
                                    buffer=mm, offset=lo - base))
    finally:
        os.close(fd)
    return views


def write_rows(layout, arrays, start):
    """Writes each array of `arrays` (rows start, start + 1, ... of the block's arrays, in
    order) into the caller's file; False when this process does not see it."""
    fd = _open(layout, os.O_RDWR)
    if fd < 0:
        return False
    try:
        for (off, shape, dt), rows in zip(layout.arrays, arrays):
            rows = np.ascontiguousarray(rows, dtype=np.dtype(dt))
            _pwrite(fd, rows, off + start * _row_bytes(shape, dt))
    finally:
        os.close(fd)
    return True
