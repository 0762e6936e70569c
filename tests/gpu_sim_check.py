"""Run by tests/test_ur_gpu.py in a subprocess, because numba reads NUMBA_ENABLE_CUDASIM once, when
numba.cuda is first imported. Prints one JSON line.

    python tests/gpu_sim_check.py kernels        (simulator) the CUDA kernels against the Cython engine
    python tests/gpu_sim_check.py kernels stored:BOARD  (simulator) the same, and the stored graph built
                                                 on the device and read by the sweeps
    python tests/gpu_sim_check.py kernels hot:BOARD   (simulator) the walk's hot set found on the device
    python tests/gpu_sim_check.py solve BOARD    (simulator) a whole solve's last sweeps and check, BOARD mini4 or real2
    python tests/gpu_sim_check.py ptx            the kernels compiled to PTX for compute capability 9.0
                                                 (an H100) without a GPU; exit 3 when NVVM is missing
"""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gamesolver.games.ur import kernel  # noqa: E402
from gamesolver.games.ur.gpu_fort import device_game  # noqa: E402
from gamesolver.games.ur.rules import UrOptions  # noqa: E402
from gamesolver.solver.stochastic import _engine as cy  # noqa: E402
from gamesolver.solver.backends.gpu.driver import _numpy_for_numba  # noqa: E402
from tests.test_ur_reference import mini_options  # noqa: E402

_numpy_for_numba()

WIN, LOSS = -2**31, -2**31 + 1


def options(board: str, tmp: Path) -> UrOptions:
    """mini2, mini3, mini4: the 8-tile test board with that many pieces (885, 3,237 and 5,407
    states); real2: the real board with two (19,035)."""
    if board.startswith("mini"):
        return mini_options(tmp, int(board[4:]))
    return UrOptions(pieces=2)


def policy_values(game, P: np.ndarray, V: np.ndarray, g: float = 1.0) -> np.ndarray:
    """The float32 backup that the recorded codes give, summed over the rolls in roll order, as
    the Cython kernels sum it (separate products and sums, no fused multiply-add)."""
    g32 = np.float32(g)
    acc = np.zeros(P.shape[0], dtype=np.float32)
    for r, p in enumerate(np.array(game.roll_probabilities, dtype=np.float32)):
        c = P[:, r].astype(np.int64)
        t = np.zeros(c.shape, dtype=np.float32)
        t[c >= 0] = g32 * V[c[c >= 0]]
        t[c == WIN] = 1
        t[c == LOSS] = -1
        other = (c < 0) & (c > LOSS)
        t[other] = -(g32 * V[-c[other] - 1])
        acc = (acc + p * t).astype(np.float32)
    return acc


def small_launches(spec, graph: str = "regenerate"):
    """An engine of small launches and blocks (96 states in blocks of 32), so that the few hundred
    states the simulator can afford still span several of each."""
    from gamesolver.solver.backends.gpu.driver import GpuEngine

    return GpuEngine(spec, threads_per_block=32, launch_states=96, graph=graph)


def kernels_case(board: str, tmp: Path, stored: bool = False) -> dict:
    o = options(board, tmp)
    game = kernel(o)
    spec = device_game(game)
    n, R = spec.total, spec.nrolls
    eng = small_launches(spec)
    rng = np.random.default_rng(11)
    V = rng.uniform(-1, 1, n).astype(np.float32)
    a, b = n - 96, n  # the top tiers: the most outcomes a state
    out = np.zeros(n, dtype=np.float32)
    change = eng.sweep(V, start=a, stop=b, policy=np.empty((0, R)), out=out, discount=0.999)
    P = np.zeros((n, R), dtype=np.int32)
    cy_change = cy.sweep(game, V.copy(), threads=1, start=a, stop=b, write=False, policy=P, discount=0.999)
    ref = policy_values(game, P[a:b], V, 0.999)
    dev_policy = eng.policy.copy_to_host()
    # a policy sweep of the window, whose codes lead only outside it (Jacobi and Gauss-Seidel agree):
    # the mover again, the other side to move, wins and losses
    Q = rng.integers(0, a, size=(n, R)).astype(np.int32)
    Q[:, 1::2] = -Q[:, 1::2] - 1
    Q[a::7, 0], Q[a + 1::7, 2] = WIN, LOSS
    eng.policy = eng._to_device(Q)
    W = V.copy()
    ev_change = eng.evaluate(None, W, discount=0.999, start=a, stop=b)
    eng._sync_host(W)
    ev_ref = policy_values(game, Q[a:b], V, 0.999)
    ev_cy = V.copy()
    cy_ev_change = cy.evaluate(game, Q, ev_cy, threads=1, discount=0.999, start=a, stop=b)
    # endless passes over the window, the marks outside it those of the whole check: a pass's marks
    # depend on the order the states are visited in, so both repeat to the end (a unique set)
    half = np.where(np.abs(V) < 0.3, V * 0.001, V).astype(np.float32)
    marks = np.zeros(n, dtype=np.uint8)
    first = True
    while cy.endless_pass(game, half, marks, 1e-3, threads=1, first=first):
        first = False
    marks[a:b] = 0
    ga, gb = marks.copy(), marks.copy()
    first = True
    while cy.endless_pass(game, half, ga, 1e-3, threads=1, first=first, start=a, stop=b) or first:
        first = False
    first = True
    while eng.endless_pass(half, gb, 1e-3, first=first, start=a, stop=b) or first:
        first = False
    # a hot set and the local repair's subset: ranks spread over the space none of which leads to
    # another (so the order the threads take them in cannot matter), swept alone
    pick = np.unique(rng.integers(0, n, size=80))
    succ = [{abs(c) - (c < 0) for grp in game.outcome_groups(int(r)) for c in grp if c > -2147483646}
            for r in pick.tolist()]
    sub = np.array([r for r, t in zip(pick.tolist(), succ) if not t & set(pick.tolist())], dtype=np.int64)
    tgt = np.where(Q >= 0, Q.astype(np.int64), -Q.astype(np.int64) - 1)
    Qh = np.where(np.isin(tgt, sub) & (Q != WIN) & (Q != LOSS), WIN, Q).astype(np.int32)
    eng.policy = eng._to_device(Qh)
    Hd, Hc = V.copy(), V.copy()
    md, mc = np.zeros(n, dtype=np.uint8), np.zeros(n, dtype=np.uint8)
    hot_change = eng.evaluate(None, Hd, discount=0.999, subset=sub, mark=md, above=0.05)
    eng._sync_host(Hd)
    cy_hot = cy.evaluate(game, Qh, Hc, threads=1, discount=0.999, subset=sub, mark=mc, above=0.05)
    Sd, Sc = V.copy(), V.copy()
    sub_change = eng.sweep(Sd, subset=sub, discount=0.999)
    cy_sub = cy.sweep(game, Sc, threads=1, subset=sub, discount=0.999)
    ranks = rng.integers(0, n, size=60)
    outcomes_equal = eng.outcomes(ranks) == [game.outcome_groups(int(r)) for r in ranks]
    # the stored graph built by the device's kernels, and the same sweeps and passes read from it.
    # Building it runs every state through the simulator twice (to count, then to write): about
    # 55 s for the test board's 5,407 states with four pieces, so the test stores the 885 of two
    # pieces (still ten launches of 96 states in blocks of 32); the real boards' graphs are checked
    # on numba's CPU JIT (tests/test_ur_gpu.py)
    stored_checks = {}
    if stored:
        st = small_launches(spec, graph="store")
        out2 = np.zeros(n, dtype=np.float32)
        change2 = st.sweep(V.copy(), start=a, stop=b, policy=np.empty((0, R)), out=out2, discount=0.999)
        gs = marks.copy()
        first = True
        while st.endless_pass(half, gs, 1e-3, first=first, start=a, stop=b) or first:
            first = False
        Ss = V.copy()
        st_sub = st.sweep(Ss, subset=sub, discount=0.999)
        stored_checks = {
            "stored_graph": st.graph_kind == "stored on the device" and st.nbytes > 0,
            "stored_groups_equal": all(st.stored_groups(int(r)) == [list(dict.fromkeys(g))
                                                                    for g in game.outcome_groups(int(r))]
                                       for r in ranks),
            "stored_sweep_equal": bool(np.array_equal(out2[a:b], out[a:b]) and change2 == change
                                       and np.array_equal(st.policy.copy_to_host()[a:b], dev_policy[a:b])),
            "stored_marks_equal": bool(np.array_equal(gs, gb)),
            "stored_subset_equal": bool(np.array_equal(Ss, Sd) and st_sub == sub_change),
        }
    return {
        **stored_checks,
        "states": n,
        "outcomes_equal": bool(outcomes_equal),
        "policy_equal": bool(np.array_equal(dev_policy[a:b], P[a:b])),
        "jacobi_max_diff": float(np.abs(out[a:b] - ref).max()),
        "change": float(change),
        "change_diff": abs(float(change) - float(cy_change)),
        "evaluate_max_diff": max(float(np.abs(W[a:b] - ev_ref).max()), float(np.abs(W - ev_cy).max())),
        "evaluate_change_diff": abs(float(ev_change) - float(cy_ev_change)),
        "marks_equal": bool(np.array_equal(ga, gb)),
        "marked": int(ga[a:b].sum()),
        "subset": int(sub.size),
        "hot_max_diff": float(np.abs(Hd - Hc).max()),
        "hot_change_diff": abs(float(hot_change) - float(cy_hot)),
        "hot_marks_equal": bool(np.array_equal(md, mc)),
        "hot_marked": int(mc.sum()),
        "subset_max_diff": float(np.abs(Sd - Sc).max()),
        "subset_change_diff": abs(float(sub_change) - float(cy_sub)),
        "subset_moved": int(np.count_nonzero(Sc != V)),
    }


def hot_case(board: str, tmp: Path) -> dict:
    """``hot_set_case`` on an engine of its own, as ``kernels_case`` makes one. The test runs it
    on the three-piece test board (3,237 states in four chunks of 1,024) after the real board's
    kernel check. (Inside the real board's check, where it once ran, it took 135 of that
    subprocess's 142 s; three subprocesses on two cores took 205 s: the simulator runs a block's
    threads as Python threads.)"""
    game = kernel(options(board, tmp))
    eng = small_launches(device_game(game))
    rng = np.random.default_rng(12)
    V = rng.uniform(-1, 1, game.state_count).astype(np.float32)
    return {"states": game.state_count, **hot_set_case(eng, game, V, rng)}


def hot_set_case(eng, game, V: np.ndarray, rng) -> dict:
    """The walk's hot set marked and gathered on the device (``hot_set``). The two kernels that
    gather it on random marks, in chunks of 7 ranks (many chunk edges) and of the engine's 1024;
    then one whole ``hot_set`` (a sweep of every state through the simulator: about 20 s for the
    three-piece test board)
    under a policy of wins and losses alone, so that every new value, and so every mark, is the
    same whatever order the threads take: against the Cython engine's marks, change and values,
    and swept as a subset."""
    n, R, tpb = V.shape[0], eng.R, eng.tpb
    marks = (rng.random(n) < 0.3).astype(np.uint8)
    M = eng._to_device(marks)
    gathered = []
    for chunk in (7, 1024):
        chunks = (n + chunk - 1) // chunk
        counts = eng._to_device(np.zeros(chunks, dtype=np.int64))
        grid = ((chunks + tpb - 1) // tpb, tpb)
        eng.k["count_marks"][grid](M, chunk, counts)
        starts = np.concatenate([[0], np.cumsum(counts.copy_to_host())]).astype(np.int64)
        out = eng._to_device(np.full(int(starts[-1]), -1, dtype=np.int64))
        eng.k["write_marks"][grid](M, chunk, eng._to_device(starts[:-1]), out)
        gathered.append(bool(np.array_equal(out.copy_to_host(), np.flatnonzero(marks))))
    Qt = np.where(rng.random((n, R)) < 0.5, WIN, LOSS).astype(np.int32)
    eng.policy = eng._to_device(Qt)
    mt = np.zeros(n, dtype=np.uint8)
    Tc = V.copy()
    cy_t = cy.evaluate(game, Qt, Tc, threads=1, discount=0.999, mark=mt, above=1.5)
    want = np.flatnonzero(mt)
    Td = V.copy()
    # as if the graph were stored for the first 60% of the ranks (not a whole chunk): the hot set
    # says how many of its ranks lie there (the sweeps over it read nothing of a graph on this engine)
    below = n * 3 // 5
    eng.stored_states = below
    t_change, hs, size = eng.hot_set(None, Td, discount=0.999, above=1.5)
    eng.stored_states = 0
    eng._sync_host(Td)
    gathered.append(hs is not None and np.array_equal(hs.host(), want) and size == want.size
                    and t_change == cy_t and np.array_equal(Td, Tc)
                    and hs.below == int(np.searchsorted(want, below)) > 0)
    Te, Tc2 = V.copy(), V.copy()
    hs_change = eng.evaluate(None, Te, discount=0.999, subset=hs)
    eng._sync_host(Te)
    cy_hs = cy.evaluate(game, Qt, Tc2, threads=1, discount=0.999, subset=want)
    return {"device_hot_sets_equal": gathered, "device_hot_set_size": int(want.size),
            "device_hot_sweep_equal": bool(np.array_equal(Te, Tc2) and hs_change == cy_hs and cy_hs > 0)}


def solve_case(board: str, tmp: Path, last: int = 2) -> dict:
    """A whole solve whose end runs in the simulator: the first sweeps on numba's CPU target (the
    same kernels' logic, fast), stopped ``last`` sweeps before the one-thread Cython solve
    converged; the simulated device then resumes from that checkpoint and runs the last sweeps,
    their policy sweeps and the endless check. (The whole walk in the simulator took about 2.5
    minutes a round on the 8-tile board with four pieces: over an hour.)"""
    from gamesolver.solver.backends.gpu.driver import GpuEngine
    from gamesolver.solver.stochastic.iteration import solve_values

    o = options(board, tmp)
    game = kernel(o)
    one = solve_values(game, tmp / "cpu", o.header(), threads=1, graph="regenerate")
    stop = max(1, one.meta["sweeps"] - last)
    with GpuEngine(device_game(game), target="cpu", graph="regenerate") as first:
        try:
            solve_values(game, tmp / "gpu", o.header(), engine=first, max_sweeps=stop)
        except RuntimeError as e:
            assert "no convergence" in str(e), e
    eng = GpuEngine(device_game(game), threads_per_block=64, graph="regenerate")
    dev = solve_values(game, tmp / "gpu", o.header(), engine=eng)
    return {"flagged": dev.meta["endless_check"]["flagged"], "sweeps": dev.meta["sweeps"],
            "cpu_sweeps": one.meta["sweeps"], "resumed_at_sweep": dev.meta.get("resumed_at_sweep"),
            "stop": stop, "max_diff": float(np.abs(dev.values - one.values).max()),
            "largest": float(np.abs(one.values).max())}


def ptx() -> dict:
    from numba import cuda, typeof, types
    import numba.cuda.dispatcher as dispatcher

    from gamesolver.solver.backends.gpu.cuda_kernels import cuda_kernels

    class H100:  # device functions ask the current device for its compute capability
        compute_capability = (9, 0)

    dispatcher.get_current_device = lambda: H100()
    try:
        from numba.cuda.cudadrv import nvvm
        missing = not nvvm.is_available()
    except Exception:  # noqa: BLE001  (no NVVM binding at all)
        missing = True
    if missing:
        print("NVVM is not installed (the [gpu] extra brings it); nothing to compile PTX with")
        sys.exit(3)
    spec = device_game(kernel(UrOptions(pieces=7, mirror=False)))
    k = cuda_kernels(spec, 128)
    T = typeof(spec.tables)
    f32, i64, b, pol = types.float32[::1], types.int64, types.boolean, types.int32[:, ::1]
    sigs = {
        "sweep": (T, f32, f32, i64, i64, types.float32, f32, types.int64[::1], pol, b, b, types.int64[::1], b, f32,
                  types.int32[::1]),
        "evaluate": (pol, f32, i64, i64, types.float32, f32, types.int64[::1], b, types.uint8[::1], b, types.float32,
                     f32),
        "gather": (f32, types.int64[::1], f32),
        "endless": (T, f32, types.uint8[::1], types.float32, b, i64, i64, types.int64[::1], types.int64[::1],
                    types.int32[::1]),
        "outcomes": (T, types.int64[::1], types.int32[:, ::1], types.int64[:, ::1], types.int64[::1]),
        "graph_rows": (T, i64, i64, b, types.int32[::1], types.int64[::1], types.uint8[:, ::1], types.int32[::1],
                       types.int32[::1]),
        "sweep_stored": (types.int64[::1], types.uint8[:, ::1], types.int32[::1], f32, f32, i64, i64, types.float32,
                         f32, types.int64[::1], pol, b, b, types.int64[::1], b, f32),
        "endless_stored": (types.int64[::1], types.uint8[:, ::1], types.int32[::1], f32, types.uint8[::1],
                           types.float32, b, i64, i64, types.int64[::1], types.int64[::1]),
    }
    out = {}
    for name, sig in sigs.items():
        try:
            code, _ = cuda.compile_ptx(k[name].py_func, sig, cc=(9, 0))
        except Exception as exc:  # noqa: BLE001
            said = f"{type(exc).__name__} {exc}".lower()
            if any(lib in said for lib in ("nvvm", "nvrtc", "dynamiclibnotfound")):
                # numba-cuda without the toolkit's libraries (the [gpu] extra's cu12 wheels bring them)
                print(f"the CUDA toolkit's compiler libraries are not installed ({type(exc).__name__}: "
                      f"{str(exc).splitlines()[0][:120]}); nothing to compile PTX with")
                sys.exit(3)
            raise
        out[name] = len(code)
    return out


def main() -> None:
    mode = sys.argv[1]
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if mode == "kernels":  # BOARD: its kernels' check; stored:BOARD with its stored graph's;
            got = {}  # hot:BOARD: its hot set's (``hot_case``)
            for board in sys.argv[2:] or ("mini4", "real2"):
                kind, _, name = board.rpartition(":")
                got[board] = hot_case(name, tmp) if kind == "hot" else kernels_case(name, tmp, stored=kind == "stored")
        elif mode == "solve":
            got = solve_case(sys.argv[2], tmp)
        else:
            got = ptx()
    print(json.dumps(got))


if __name__ == "__main__":
    main()
