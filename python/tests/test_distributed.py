"""clusterdyn.distributed on a local Dask cluster of 2 worker processes (1 library thread
each): every batched call equals the local batch call bit for bit, in the caller's order;
a failing state reports its global index and the library's message; a worker process killed
mid-job loses and duplicates no result; the cluster leaves no process behind."""
import logging
import multiprocessing
import os
import re
import signal
import threading
import time

import numpy as np
import pytest

distributed = pytest.importorskip(
    "distributed", reason="Dask distributed is not installed (pip install \"dask[distributed]\")")

import clusterdyn as cd  # noqa: E402
import clusterdyn.distributed as cdd  # noqa: E402
from conftest import REPO  # noqa: E402

QUADRUPED = REPO / "models" / "cd_quadruped.urdf"
FEET = ("lf_foot", "rf_foot", "lh_foot", "rh_foot")


@pytest.fixture(scope="module")
def client():
    before = set(multiprocessing.active_children())
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", silence_logs=logging.CRITICAL)
    c = distributed.Client(cluster)
    try:
        yield c
    finally:
        c.close()
        cluster.close()
        left = set(multiprocessing.active_children()) - before
        assert not left, f"worker processes left behind: {left}"


def independent_states(model, n, seed, spread=0.1):
    """Random independent states (Y, YDOT, TAU) near the reference configuration, quaternions
    normalized."""
    rng = np.random.default_rng(seed)
    ws = model.workspace()
    y0, _ = ws.spanning_to_independent(model.reference_configuration(), np.zeros(model.nv))
    Y = y0 + spread * rng.uniform(-1, 1, (n, model.nyq))
    names = model.independent_position_names
    for i, name in enumerate(names):
        if name.endswith(":qx"):
            Y[:, i:i + 4] /= np.linalg.norm(Y[:, i:i + 4], axis=1, keepdims=True)
    return Y, rng.uniform(-1, 1, (n, model.ny)), rng.uniform(-1, 1, (n, model.ny)), rng


def equal(a, b):
    if isinstance(a, tuple):
        return type(a) is type(b) and len(a) == len(b) and all(map(equal, a, b))
    return a is None and b is None or np.array_equal(a, b) and a.dtype == b.dtype


@pytest.mark.parametrize("name", ["cd_four_bar", "cd_differential", "cd_quadruped"])
def test_batches_equal_local(client, name):
    """23 states in chunks of 5 (a short last chunk): every batched call equals the local
    one bit for bit; the worker loads the model once and keeps it."""
    dm = cdd.DistributedModel.load(client, REPO / "models" / f"{name}.urdf", threads=1,
                                   chunk_size=5)
    m = dm.model
    Y, YD, T, rng = independent_states(m, 23, 3)
    local = m.ce_aba_independent_batch(Y, YD, T, threads=1)
    assert equal(dm.ce_aba_independent_batch(Y, YD, T), local)
    _, Q, V, _ = local
    F = rng.uniform(-0.3, 0.3, (23, m.nbodies, 6))
    YDD, QDD = m.ce_aba_batch(Q, V, T, fext=F, threads=1, return_qdd=True)
    assert equal(dm.ce_aba_batch(Q, V, T, fext=F, return_qdd=True), (YDD, QDD))
    assert equal(dm.ce_aba_batch(Q, V, T), m.ce_aba_batch(Q, V, T))
    assert equal(dm.ce_rnea_batch(Q, V, YDD, fext=F), m.ce_rnea_batch(Q, V, YDD, fext=F))
    np.testing.assert_allclose(dm.ce_rnea_batch(Q, V, YDD, fext=F), T, atol=1e-9)  # RNEA(ABA)
    assert equal(dm.mass_matrix_batch(np.asfortranarray(Q)), m.mass_matrix_batch(Q))
    # The derivative batches (their own derivative workspaces on the workers, no pool).
    for method, X in (("ce_aba_derivatives_batch", T), ("ce_rnea_derivatives_batch", YDD)):
        assert equal(getattr(dm, method)(Q, V, X, fext=F),
                     getattr(m, method)(Q, V, X, fext=F, threads=1)), method
    QDD_T = rng.uniform(-1, 1, (23, m.nv))
    for method in ("aba_derivatives_batch", "rnea_derivatives_batch"):
        assert equal(getattr(dm, method)(Q, V, QDD_T), getattr(m, method)(Q, V, QDD_T,
                                                                          threads=1)), method
    cached = client.run(lambda: sorted(cdd._cache))
    assert all(keys.count(dm._spec.key) == 1 for keys in cached.values())
    assert sum(dm._spec.key in keys for keys in cached.values()) >= 1


def test_constrained_dynamics(client):
    dm = cdd.DistributedModel.load(client, QUADRUPED, threads=1, chunk_size=4)
    m = dm.model
    contacts, local = dm.constraint_set(), m.constraint_set()
    for foot in FEET:
        assert contacts.add_contact(foot) == local.add_contact(foot)
    assert contacts.nrows == local.nrows == 12
    with pytest.raises(cd.ClusterdynError, match="no_such_link"):  # the library's check, here
        contacts.add_contact("no_such_link")
    assert len(contacts) == 4
    _, Q, V, _ = m.ce_aba_independent_batch(*independent_states(m, 10, 5)[:3])
    TAU = np.random.default_rng(1).uniform(-5, 5, (10, m.ny))
    for solver in ("constrained_aba", "prox_pv", "dense"):
        ref = local.constrained_dynamics_batch(Q, V, TAU, solver=solver, threads=1)
        assert ref.converged.all()
        assert equal(contacts.constrained_dynamics_batch(Q, V, TAU, solver=solver), ref)
    # States above the tolerance: reported as the local call does, with the global index.
    kw = dict(solver="constrained_aba", max_iterations=0, tolerance=1e-14)
    ref = local.constrained_dynamics_batch(Q, V, TAU, threads=1, on_not_converged="ignore",
                                           **kw)
    first = int(np.flatnonzero(~ref.converged)[0])
    with pytest.warns(cd.NotConvergedWarning, match=rf"did not converge; first \(state "
                                                    rf"{first}\)"):
        assert equal(contacts.constrained_dynamics_batch(Q, V, TAU, **kw), ref)
    with pytest.raises(cd.NotConvergedError) as e:
        contacts.constrained_dynamics_batch(Q, V, TAU, on_not_converged="raise", **kw)
    assert equal(e.value.result, ref)
    with pytest.raises(ValueError, match="solver"):
        contacts.constrained_dynamics_batch(Q, V, TAU, solver="pgs")
    with pytest.raises(cd.ClusterdynError, match="add constraints before"):
        contacts.add_contact("lf_foot", name="again")  # read-only after the first call, too


def test_derivatives_write_in_place_on_workers(client):
    """The derivative batches' matrices (per-state column-major views of the library's output)
    travel through the shared output block without a copy on the worker and come back
    bit-identical, in the same layout as the local call's."""
    dm = cdd.DistributedModel.load(client, QUADRUPED, threads=1, chunk_size=4)
    m = dm.model
    _, Q, V, _ = m.ce_aba_independent_batch(*independent_states(m, 11, 21)[:3])
    T = np.random.default_rng(2).uniform(-1, 1, (11, m.ny))
    for transport in ("shared", "inline"):
        dm.transport = transport
        got = dm.ce_aba_derivatives_batch(Q, V, T)
        ref = m.ce_aba_derivatives_batch(Q, V, T, threads=1)
        assert equal(got, ref), transport
        assert all(g.strides == r.strides for g, r in zip(got, ref)), transport
        assert not np.array_equal(got[1], got[1].transpose(0, 2, 1))  # not symmetric


def test_constrained_dynamics_derivatives(client):
    """N states of the constrained-dynamics derivatives (a loop per chunk on the worker): equal
    to the local loop and to single calls bit for bit; a failing state reports its global
    index and the library's message."""
    dm = cdd.DistributedModel.load(client, QUADRUPED, threads=1, chunk_size=4)
    m = dm.model
    contacts, local = dm.constraint_set(), m.constraint_set()
    for foot in FEET[:2]:
        contacts.add_contact(foot)
        local.add_contact(foot)
    _, Q, V, _ = m.ce_aba_independent_batch(*independent_states(m, 11, 17)[:3])
    rng = np.random.default_rng(4)
    TAU, F = rng.uniform(-3, 3, (11, m.ny)), rng.uniform(-1, 1, (11, m.nbodies, 6))
    ref = cdd.constrained_dynamics_derivatives_batch(local, Q, V, TAU, fext=F)
    for transport in ("shared", "inline"):
        dm.transport = transport
        got = contacts.constrained_dynamics_derivatives_batch(Q, V, TAU, fext=F)
        assert equal(got, ref), transport
    single = local.constrained_dynamics_derivatives(Q[6], V[6], TAU[6], fext=F[6])
    assert all(np.array_equal(getattr(got, k)[6], getattr(single, k)) for k in single._fields)
    V[9, 3] = np.nan
    with pytest.raises(cd.ClusterdynError) as e_local:
        cdd.constrained_dynamics_derivatives_batch(local, Q, V, TAU)
    with pytest.raises(cdd.DistributedStateError) as e:
        contacts.constrained_dynamics_derivatives_batch(Q, V, TAU)
    assert e.value.state == 9 and str(e.value) == str(e_local.value)
    assert "(state 9)" in str(e.value)


def test_rollouts(client):
    """Contact rollouts of cd_parallel_walker in chunks of 2 rollouts (a short last one), on
    each worker's pool: the RolloutResult (states, impulses, reports) bit-identical to the
    local call; a failing rollout reports its global index; a problem with bilateral rows
    from a distributed constraint set builds the same on the workers."""
    path = REPO / "models" / "cd_parallel_walker.urdf"
    dm = cdd.DistributedModel.load(client, path, floating_base=True, threads=1, chunk_size=2)
    m = dm.model
    dcp, local = dm.contact_problem(), cd.ContactProblem(m)
    for leg in ("lf", "rf", "lh", "rh"):
        args = (leg + "_foot", leg + "_coupler", (0.03, 0.0, -0.05))
        assert dcp.add_foot(*args, radius=0.02, mu=0.8) == local.add_foot(*args, radius=0.02,
                                                                           mu=0.8)
    assert (dcp.ncontacts, dcp.m) == (4, 12)
    N, T = 5, 30
    Q0, V0 = [], []
    with m.workspace() as ws:
        for i in range(N):
            y, ydot = np.zeros(m.nyq), np.zeros(m.ny)
            y[2], y[3:7], y[7:11] = 0.236 + 0.003 * i, [0.01 * i, 0, 0, 1], [0.2, -0.2, 0.2, -0.2]
            y[3:7] /= np.linalg.norm(y[3:7])
            q, v = ws.independent_to_spanning(y, ydot)
            Q0.append(q)
            V0.append(v)
    Q0, V0 = np.array(Q0), np.array(V0)
    TAU = 0.2 * np.random.default_rng(3).standard_normal((N, T, m.ny))
    ref = local.rollout(Q0, V0, TAU, max_iterations=5000)
    assert (ref.lam[:, :, 2::3] > 0).any()  # feet landed: the contacts are exercised
    for transport in ("shared", "inline"):
        dm.transport = transport
        assert equal(dcp.rollout(Q0, V0, TAU, max_iterations=5000), ref), transport
    good = Q0[3, 3]
    Q0[3, 3] = 2.0  # not a unit quaternion: rollout 3 (chunk 1, its second) fails at step 0
    with pytest.raises(cdd.DistributedStateError, match=r"^.*state 3, step 0") as e:
        dcp.rollout(Q0, V0, TAU)
    assert e.value.state == 3
    with pytest.raises(TypeError, match="unknown contact setting"):
        dcp.rollout(Q0, V0, TAU, dtt=1e-3)
    # Bilateral rows from a distributed constraint set (a weld of the trunk).
    weld = dm.constraint_set()
    weld_local = m.constraint_set()
    weld.add_contact("trunk")
    weld_local.add_contact("trunk")
    dcp2, local2 = dm.contact_problem(), cd.ContactProblem(m)
    dcp2.add_bilateral(weld)
    local2.add_bilateral(weld_local)
    for p in (dcp2, local2):
        p.set_ground((0.0, 0.0, 1.0), -0.002)
    assert dcp2.nbilateral_rows == local2.nbilateral_rows > 0
    Q0[3, 3] = good
    ref2 = local2.rollout(Q0, V0, TAU[:, :5])
    assert equal(dcp2.rollout(Q0, V0, TAU[:, :5]), ref2)
    with pytest.raises(TypeError, match="DistributedConstraintSet"):
        dcp2.add_bilateral(weld_local)


def test_default_chunk_size(client):
    """chunk_size=None (the default): two tasks per task slot, at most DEFAULT_CHUNK_SIZE
    states per task; the result as local."""
    assert cdd._auto_chunk(23, 2) == 6 and cdd._auto_chunk(1, 2) == 1
    assert cdd._auto_chunk(10**7, 64) == cdd.DEFAULT_CHUNK_SIZE
    dm = cdd.DistributedModel.load(client, QUADRUPED, threads=1)
    assert dm.chunk_size is None
    m = dm.model
    Y, YD, T, _ = independent_states(m, 23, 19)
    assert equal(dm.ce_aba_independent_batch(Y, YD, T),
                 m.ce_aba_independent_batch(Y, YD, T, threads=1))
    with pytest.raises(ValueError, match="chunk_size"):
        cdd.DistributedModel.load(client, QUADRUPED, chunk_size=2.5)


def test_failing_state_reports_global_index(client):
    """Non-finite states in chunks 2 and 3 (of 4): the lowest global index and the library's
    message, exactly as the local call; arguments are checked before anything is sent."""
    dm = cdd.DistributedModel.load(client, QUADRUPED, threads=1, chunk_size=4)
    m = dm.model
    _, Q, V, _ = m.ce_aba_independent_batch(*independent_states(m, 16, 7)[:3])
    YDD = np.zeros((16, m.ny))
    V[13, 2] = np.nan
    V[9, 4] = np.inf
    with pytest.raises(cd.ClusterdynError) as local:
        m.ce_rnea_batch(Q, V, YDD, threads=1)
    with pytest.raises(cdd.DistributedStateError) as e:
        dm.ce_rnea_batch(Q, V, YDD)
    assert e.value.state == 9 and e.value.status == cd.ERR_NON_FINITE
    assert str(e.value) == str(local.value)  # "... v[4] is not finite (state 9)"
    with pytest.raises(ValueError, match=r"V must have shape \(N, 30\)"):
        dm.ce_rnea_batch(Q, V[:, :5], YDD)
    with pytest.raises(ValueError, match="same number of rows"):
        dm.ce_rnea_batch(Q, V[:7], YDD)
    with pytest.raises(ValueError, match="batched Model method"):
        dm.map_batch("workspace")
    with pytest.raises(ValueError, match="chunk_size"):
        cdd.DistributedModel.load(client, QUADRUPED, chunk_size=0)
    with pytest.raises(cd.ClusterdynError, match="parse|Parse|XML|xml"):
        cdd.DistributedModel.from_string(client, "<robot name='x'><link")
    empty = dm.mass_matrix_batch(np.zeros((0, m.nq)))
    assert empty.shape == (0, m.ny, m.ny)


def test_killed_worker_loses_and_duplicates_nothing(client):
    """A worker process killed (SIGKILL) while it computes a chunk (its inputs in the caller's
    shared-memory file): the scheduler runs its tasks again elsewhere (or on the nanny's new
    process); the result is complete, in order, and bit-identical to the local batch call."""
    dm = cdd.DistributedModel.load(client, QUADRUPED, threads=1, chunk_size=1000,
                                   max_in_flight=4)
    m = dm.model
    Y, YD, T, _ = independent_states(m, 8000, 11)
    local = m.ce_aba_independent_batch(Y, YD, T, threads=1)
    dm.ce_aba_independent_batch(Y[:2], YD[:2], T[:2])  # workers up, model loaded
    assert dm._seen[1], "the arrays should go through shared memory on a LocalCluster"
    pids = client.run(os.getpid)
    out, error = [], []

    def job():
        try:
            out.append(dm.ce_aba_independent_batch(Y, YD, T))
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            error.append(exc)

    runner = threading.Thread(target=job)
    runner.start()
    victim = key = None
    deadline = time.monotonic() + 60
    while victim is None and runner.is_alive() and time.monotonic() < deadline:
        busy = [(w, k) for w, keys in client.processing().items() for k in keys
                if "ce_aba_independent_batch" in str(k)]
        if busy:
            victim, key = busy[0]
            os.kill(pids[victim], signal.SIGKILL)
        else:
            time.sleep(0.005)
    runner.join(120)
    assert not runner.is_alive()
    assert victim is not None, "the job ended before a worker could be killed"
    assert not error, error
    assert equal(out[0], local)
    # The scheduler's record of the chunk the victim was computing: sent to a worker twice
    # (the second time after the worker's loss), its result stored once.
    story = [t for t in client.story(key) if t[0] == "scheduler"]
    assert sum(t[3] == "processing" for t in story) >= 2, story
    assert sum(t[3] == "memory" for t in story) == 1, story
    client.wait_for_workers(2, timeout=60)  # the nanny restarted the killed process
    assert pids[victim] not in client.run(os.getpid).values()


def test_docs_example_runs(client):
    """The block under "## Use" in docs/distributed.md runs as written (with this client)."""
    doc = (REPO / "docs" / "distributed.md").read_text()
    block = re.search(r"## Use\n.*?```python\n(.*?)```", doc, re.S).group(1)
    cwd = os.getcwd()
    os.chdir(REPO)  # the example loads models/... relative to the repository
    try:
        scope = {"client": client}
        exec(compile(block, "docs/distributed.md", "exec"), scope)
    finally:
        os.chdir(cwd)
    model, Q, V = scope["model"], scope["Q"], scope["V"]
    np.testing.assert_allclose(scope["TAU2"], scope["TAU"], atol=1e-9)
    assert equal(scope["H"], model.mass_matrix_batch(Q, threads=1))
    assert scope["r"].converged.all() and scope["r"].lam.shape == (10000, 12)


def test_release_and_cache_eviction(client):
    """release() frees the workers' models; a full cache frees its oldest model; both load
    again on the next call, with the same results."""
    a = cdd.DistributedModel.load(client, REPO / "models" / "cd_four_bar.urdf", chunk_size=3)
    b = cdd.DistributedModel.load(client, REPO / "models" / "cd_six_bar.urdf", chunk_size=3)
    Qa = a.model.ce_aba_independent_batch(*independent_states(a.model, 7, 1)[:3])[1]
    Qb = b.model.ce_aba_independent_batch(*independent_states(b.model, 7, 2)[:3])[1]
    Ha, Hb = a.model.mass_matrix_batch(Qa), b.model.mass_matrix_batch(Qb)
    assert equal(a.mass_matrix_batch(Qa), Ha)
    assert sum(a.release().values()) >= 1
    assert set(client.run(lambda: len(cdd._cache)).values()) == {0}
    client.run(lambda: setattr(cdd, "_CACHE_SIZE", 1))
    try:
        for _ in range(2):
            assert equal(a.mass_matrix_batch(Qa), Ha) and equal(b.mass_matrix_batch(Qb), Hb)
        assert set(client.run(lambda: len(cdd._cache)).values()) <= {0, 1}
    finally:
        client.run(lambda: setattr(cdd, "_CACHE_SIZE", 8))


def test_transports_and_fallback(client):
    """The arrays through shared memory ("auto" finds this LocalCluster's workers on this
    machine), inside the tasks ("inline"), and through shared memory to workers that do not see
    the caller's file (every chunk comes back and is sent again in its task): bit-identical
    results, also for constrained dynamics above the tolerance; release() removes the shared
    input block kept between calls."""
    m = cd.Model.load(QUADRUPED)
    Y, YD, T, _ = independent_states(m, 37, 13)
    local = m.ce_aba_independent_batch(Y, YD, T, threads=1)
    Q, V = local[1], local[2]
    cs = m.constraint_set()
    for foot in FEET:
        cs.add_contact(foot)
    kw = dict(solver="constrained_aba", max_iterations=0, tolerance=1e-14)
    stalled = cs.constrained_dynamics_batch(Q, V, T, threads=1, on_not_converged="ignore", **kw)
    assert not stalled.converged.all()
    hide = lambda: (setattr(cdd._shm, "_saved", cdd._shm.attach),  # noqa: E731
                    setattr(cdd._shm, "attach", lambda *a: cdd._shm.__dict__.__setitem__(
                        "_hidden", cdd._shm.__dict__.get("_hidden", 0) + 1)))
    for transport, hidden in (("auto", False), ("inline", False), ("shared", True)):
        dm = cdd.DistributedModel.load(client, QUADRUPED, threads=1, chunk_size=6,
                                       transport=transport)
        if hidden:
            client.run(hide)
        try:
            assert equal(dm.ce_aba_independent_batch(Y, YD, T), local), transport
            contacts = dm.constraint_set()
            for foot in FEET:
                contacts.add_contact(foot)
            with pytest.raises(cd.NotConvergedError) as e:
                contacts.constrained_dynamics_batch(Q, V, T, on_not_converged="raise", **kw)
            assert equal(e.value.result, stalled), transport
        finally:
            if hidden:
                client.run(lambda: setattr(cdd._shm, "attach", cdd._shm._saved))
        if hidden:  # 7 + 7 chunks tried through shared memory, then sent in their tasks
            assert sum(client.run(lambda: cdd._shm.__dict__.pop("_hidden", 0)).values()) == 14
        if transport == "auto":
            assert dm._seen[1] is True  # the probe: every worker sees this machine's /dev/shm
            kept = [b.layout.path for b in dm._spare]
            # The next call reuses both blocks (smaller arrays fit), under new tokens.
            assert equal(dm.ce_aba_independent_batch(Y[:20], YD[:20], T[:20]),
                         m.ce_aba_independent_batch(Y[:20], YD[:20], T[:20], threads=1))
            assert [b.layout.path for b in dm._spare] == kept
            assert all(map(os.path.exists, kept))
            dm.release()
            assert not any(map(os.path.exists, kept)) and dm._spare is None
        elif transport == "inline":
            assert dm._spare is None  # nothing in shared memory


def test_derivative_task_writes_in_place(monkeypatch):
    """A shared-memory derivative task (run here, as a worker runs it): the library writes the
    chunk's rows of the shared output block directly (nothing goes through write_rows), the
    matrices stored transposed there, and the caller's views equal the local call."""
    m = cd.Model.load(QUADRUPED)
    _, Q, V, _ = m.ce_aba_independent_batch(*independent_states(m, 9, 23)[:3])
    T = np.random.default_rng(6).uniform(-1, 1, (9, m.ny))
    ref = m.ce_aba_derivatives_batch(Q, V, T, threads=1)
    spec = cdd._ModelSpec("test-in-place", QUADRUPED.read_text(), ())
    flips = (False, True, True, True)
    store = [np.zeros((9, m.ny))] + [np.zeros((9, m.ny, m.ny)) for _ in range(3)]
    monkeypatch.setattr(cdd._shm, "write_rows", lambda *a: pytest.fail("copied"))
    with cdd._shm.Block([(a.shape, a.dtype) for a in (Q, V, T)]) as inp, \
            cdd._shm.Block([(a.shape, a.dtype) for a in store]) as out:
        for k, a in enumerate((Q, V, T)):
            inp.write_rows(k, a, 0)
        for start, stop in ((0, 4), (4, 9)):
            assert cdd._run_shared(spec, None, "ce_aba_derivatives_batch", inp.layout,
                                   out.layout, [], start, stop,
                                   dict(threads=1), flips) is None
        for k, a in enumerate(store):
            out.read_rows(k, a, 0)
    cdd._forget_models()
    got = [cdd._flip(a, f) for a, f in zip(store, flips)]
    assert all(np.array_equal(g, r) for g, r in zip(got, ref))


def test_shared_block_reuse_shuts_out_earlier_tasks():
    """A shared block reused by the next call gets a new token: a task of the earlier call
    still running (cancelled, or on a worker the scheduler gave up) neither reads nor writes
    it through its old layout."""
    block = cdd._shm.Block([((4, 3), np.float64)])
    try:
        old = block.layout
        assert cdd._shm.write_rows(old, [np.ones((2, 3))], 1)
        assert block.reuse([((2, 3), np.float64)])
        assert block.layout.path == old.path and block.layout.token != old.token
        assert not cdd._shm.write_rows(old, [np.full((2, 3), 7.0)], 0)
        assert cdd._shm.attach(old, 0, 2) is None
        assert cdd._shm.write_rows(block.layout, [np.full((2, 3), 5.0)], 0)
        out = np.zeros((2, 3))
        block.read_rows(0, out, 0)
        assert (out == 5.0).all()
        assert not block.reuse([((5, 3), np.float64)])  # does not fit: a new block is made
    finally:
        block.close()
    assert not os.path.exists(block.layout.path)
