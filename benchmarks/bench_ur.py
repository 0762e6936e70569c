"""Ur (fort rules): speed of one value-iteration sweep, solve times, memory, and the k = 7 projection.

Run with ``nice -n 19 python benchmarks/bench_ur.py [--solve-k4]`` (``--graph-build K``: only
the stored graph's build, two passes in memory against one into a file). Speeds are per core (one
thread); the reference is the plain Python engine (games.ur.engine) with a Python rank
function, measured on a sample in the same run, and the script prints the ratio. It also times
the policy method's cheap parts against a full sweep, and counts the outcomes a backup generates
per roll (the size of the two-step part that the issue's intermediate-value hint would shrink),
times one pass of the endless check against a sweep, and times the stored graph (build, bytes a
state, a sweep and a check pass over it) against the kernel's sweep that regenerates every action.
``--solve-k4`` also solves k = 4 twice in the same run, with the default walk (three discount
stages, hot-set rounds) and with the walk as it was before them (five stages, 30 policy sweeps of
every state a round), and prints the work in full-sweep equivalents and the time of each (about
half an hour on two cores).
"""
from __future__ import annotations

import argparse
import random
import shutil
import tempfile
import time
from math import comb
from pathlib import Path

import numpy as np

from gamesolver.games.ur import kernel
from gamesolver.games.ur.engine import actions, terminal_value
from gamesolver.solver.stochastic.outcomes import build_graph
from gamesolver.games.ur.rules import UrOptions
from gamesolver.games.ur.solve import solve


def py_rank(n: int, k: int, mine: frozenset[int], theirs: frozenset[int]) -> int:
    """The kernel's rank, written plainly (tiers, then colex of mine, then of theirs squeezed)."""
    a, b = len(mine), len(theirs)
    rm = sum(comb(t, i + 1) for i, t in enumerate(sorted(mine)))
    free = [t for t in range(n) if t not in mine]
    ro = sum(comb(free.index(t), i + 1) for i, t in enumerate(sorted(theirs)))
    off = 0
    for x in range(k + 1):
        for y in range(k + 1):
            if (x, y) == (a, b):
                return off + rm * comb(n - a, b) + ro
            off += comb(n, x) * comb(n - x, y)
    raise ValueError("state outside the encoding")


def py_backup(o: UrOptions, V: np.ndarray, mine: frozenset[int], theirs: frozenset[int]) -> float:
    done = terminal_value(o.board, mine, theirs)
    if done is not None:
        return done
    n, k = o.board.size, o.pieces
    total = 0.0
    for roll in o.dice.rolls:
        best = -2.0
        for act in actions(o, mine, theirs, roll):
            if act.win:
                v = 1.0
            elif act.extra_turn:
                v = float(V[py_rank(n, k, act.mine, act.theirs)])
            else:
                v = -float(V[py_rank(n, k, act.theirs, act.mine)])
            best = max(best, v)
        total += roll.probability * best
    return total


def sweep_speed(k: int, sample: int, py_sample: int) -> dict[str, float]:
    o = UrOptions(pieces=k)
    K = kernel(o)
    n = K.state_count
    rng = np.random.default_rng(k)
    # random values for the small spaces; zeros (lazily mapped pages) for k = 7, whose 4.8 GiB
    # value array would otherwise be written in full just to time a block of it
    V = (rng.random(n, dtype=np.float32) * 2 - 1) if n < 50_000_000 else np.zeros(n, dtype=np.float32)
    # the whole space, or for large k a block of the top tiers (the most expensive states)
    stop = n
    start = max(0, n - sample) if sample else 0
    t = time.perf_counter()
    K.sweep(V, threads=1, start=start, stop=stop)
    fast = (stop - start) / (time.perf_counter() - t)
    ranks = rng.integers(start, stop, py_sample)
    ms, ts = K.unrank(ranks)
    states = [(frozenset(i for i in range(20) if m >> i & 1), frozenset(i for i in range(20) if x >> i & 1))
              for m, x in zip(ms, ts)]
    # the plain engine ranks every state (no mirror): values of its own, of the full space's size
    full = K.full_state_count
    W = (rng.random(full, dtype=np.float32) * 2 - 1) if full < 50_000_000 else np.zeros(full, dtype=np.float32)
    t = time.perf_counter()
    for m, x in states:
        py_backup(o, W, m, x)
    slow = len(states) / (time.perf_counter() - t)
    whole = n / fast  # for a block of the top tiers: an upper estimate
    return {"k": k, "states": n, "cython_per_s": fast, "python_per_s": slow, "ratio": fast / slow,
            "full_sweep_s_est": whole}


def policy_speed(k: int, threads: int) -> dict[str, float]:
    """One full sweep (recording the policy) against one float32 policy sweep and one float64
    policy product, on the whole space."""
    K = kernel(UrOptions(pieces=k))
    n = K.state_count
    V = np.random.default_rng(k).random(n, dtype=np.float32) * 2 - 1
    policy = np.empty((n, K.roll_count), dtype=np.int32)
    t = time.perf_counter()
    K.sweep(V, threads=threads, policy=policy)
    full = time.perf_counter() - t
    t = time.perf_counter()
    K.evaluate(policy, V, threads=threads)
    ev = time.perf_counter() - t
    x = V.astype(np.float64)
    out = np.empty(n)
    t = time.perf_counter()
    K.policy_apply(policy, x, out, minus=True, threads=threads)
    prod = time.perf_counter() - t
    return {"full": full, "evaluate": ev, "product": prod}


def check_pass_speed(k: int, threads: int) -> dict[str, float]:
    """One pass of the endless check against one full sweep, both over every state, on random
    values (the first pass visits every state; later passes only the states still unmarked)."""
    K = kernel(UrOptions(pieces=k))
    n = K.state_count
    V = np.random.default_rng(k).random(n, dtype=np.float32) * 2 - 1
    t = time.perf_counter()
    K.sweep(V.copy(), threads=threads, write=False)
    full = time.perf_counter() - t
    good = np.zeros(n, dtype=np.uint8)
    t = time.perf_counter()
    K.endless_pass(V, good, 1e-4, threads=threads, first=True)
    one = time.perf_counter() - t
    return {"full": full, "pass": one}


def graph_speed(k: int, threads: int) -> dict[str, float]:
    """The stored graph against the kernel: build time, bytes a state, one sweep each (the same
    values) and one endless-check pass each, on random values over the whole space; and, on the
    same graph, its sweeps with the value prefetch against without (``prefetch_speed``)."""
    K = kernel(UrOptions(pieces=k))
    n = K.state_count
    t = time.perf_counter()
    g = build_graph(K, threads)
    build = time.perf_counter() - t
    V = np.random.default_rng(k).random(n, dtype=np.float32) * 2 - 1
    W = V.copy()
    t = time.perf_counter()
    K.sweep(V, threads=threads)
    kernel_sweep = time.perf_counter() - t
    t = time.perf_counter()
    g.sweep(W, threads=threads)
    graph_sweep = time.perf_counter() - t
    good = np.zeros(n, dtype=np.uint8)
    t = time.perf_counter()
    g.endless_pass(V, good, 1e-4, threads=threads, first=True)
    graph_pass = time.perf_counter() - t
    return {"build": build, "bytes_per_state": g.nbytes / n, "outcomes_per_state": g.codes.size / n,
            "kernel_sweep": kernel_sweep, "graph_sweep": graph_sweep, "graph_pass": graph_pass,
            **prefetch_speed(K, g, W, threads)}


def prefetch_speed(K, g, V: np.ndarray, threads: int, reps: int = 5) -> dict[str, float]:
    """Seconds of one sweep over the stored graph ``g`` and one policy sweep, from the values ``V``,
    with the kernels' prefetch of the values a few states ahead against the same sweep without it
    (``ahead=0``), alternating, the median of ``reps`` each; the values are the same either way."""
    from gamesolver.solver.stochastic import _engine as ks

    policy = np.zeros((K.state_count, K.roll_count), dtype=np.int32)
    ks.graph_sweep(K, g.offsets, g.counts, g.codes, V.copy(), threads=threads, policy=policy, discount=0.999)
    times: dict[str, list[float]] = {}
    for _ in range(reps):
        for name, ahead in (("graph_off", 0), ("graph_on", ks.PREFETCH_GRAPH)):
            W = V.copy()
            t = time.perf_counter()
            ks.graph_sweep(K, g.offsets, g.counts, g.codes, W, threads=threads, discount=0.999, ahead=ahead)
            times.setdefault(name, []).append(time.perf_counter() - t)
        for name, ahead in (("policy_off", 0), ("policy_on", ks.PREFETCH_POLICY)):
            W = V.copy()
            t = time.perf_counter()
            ks.evaluate(K, policy, W, threads=threads, discount=0.999, ahead=ahead)
            times.setdefault(name, []).append(time.perf_counter() - t)
    return {name: float(np.median(ts)) for name, ts in times.items()}


def mirror_vs_plain(k: int, threads: int, stored: bool) -> dict[str, float]:
    """The engine with the mirror against the plain generator (every state numbered, ``mirror=False``),
    in this run: seconds for one sweep of the whole state space (regenerating; or over each one's
    stored graph), and the whole space's states swept per second (the mirrored sweep covers both
    members of a pair with one backup)."""
    new = kernel(UrOptions(pieces=k))
    old = kernel(UrOptions(pieces=k, mirror=False))
    full = old.state_count
    rng = np.random.default_rng(k)
    out: dict[str, float] = {"full": full, "stored_states": new.state_count}
    Vo = rng.random(full, dtype=np.float32) * 2 - 1
    Vn = rng.random(new.state_count, dtype=np.float32) * 2 - 1
    for name, K, V in (("old", old, Vo), ("new", new, Vn)):
        t = time.perf_counter()
        K.sweep(V, threads=threads)
        out[f"{name}_sweep"] = time.perf_counter() - t
    if stored:
        for name, K, V in (("old", old, Vo), ("new", new, Vn)):
            t = time.perf_counter()
            g = build_graph(K, threads)
            out[f"{name}_build"] = time.perf_counter() - t
            out[f"{name}_graph_bytes"] = g.nbytes
            t = time.perf_counter()
            g.sweep(V, threads=threads)
            out[f"{name}_graph_sweep"] = time.perf_counter() - t
            del g
    return out


def walk_work(k: int, threads: int) -> dict:
    """The walk solved twice in this run over the stored graph: the default ("hot": three
    discount stages, hot-set rounds) and the walk before them ("plain": the five stages 1e-2 ...
    1e-6, ``WALK_HOT_SWEEPS = 0``, so 30 policy sweeps of every state a round): the work counted in
    full-sweep equivalents (a policy sweep weighted by its time against a full sweep's, measured
    here), the time, and how far apart the two tables are."""
    from gamesolver.solver.stochastic import iteration
    from gamesolver.solver.stochastic import schedule
    from gamesolver.solver.stochastic import walk

    o = UrOptions(pieces=k)
    K = kernel(o)
    g = build_graph(K, threads)
    V = np.random.default_rng(k).random(K.state_count, dtype=np.float32) * 2 - 1
    policy = np.zeros((K.state_count, K.roll_count), dtype=np.int32)
    full = min(_timed(lambda: g.sweep(V, threads=threads, policy=policy)) for _ in range(3))
    cheap = min(_timed(lambda: g.evaluate(policy, V, threads=threads)) for _ in range(5))
    del g
    out: dict = {"policy_cost": cheap / full}
    tables = {}
    saved = walk.WALK_HOT_SWEEPS, schedule.WALK_DISCOUNTS
    with tempfile.TemporaryDirectory() as tmp:
        for name, setting in (("hot", saved), ("plain", (0, schedule.DISCOUNTS))):
            walk.WALK_HOT_SWEEPS, schedule.WALK_DISCOUNTS = setting
            try:
                t = time.perf_counter()
                table = solve(o, f"{tmp}/{name}", threads=threads, graph="store", show_progress=False)
                seconds = time.perf_counter() - t
            finally:
                walk.WALK_HOT_SWEEPS, schedule.WALK_DISCOUNTS = saved
            m = table.meta
            tables[name] = np.asarray(table["value"], dtype=np.float64)
            out[name] = {"seconds": seconds, "sweeps": m["sweeps"], "policy": m["policy_sweep_equivalents"],
                         "equivalents": m["sweeps"] + m["policy_sweep_equivalents"] * out["policy_cost"],
                         "flagged": m["endless_check"]["flagged"],
                         "start": float(tables[name][int(K.rank([0], [0])[0])])}
    diff = np.abs(tables["hot"] - tables["plain"])
    out["largest_difference"], out["mean_difference"] = float(diff.max()), float(diff.mean())
    return out


def _timed(f) -> float:
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


def count_outcomes(k: int, sample: int) -> list[float]:
    """Mean number of outcomes per roll over random states."""
    o = UrOptions(pieces=k)
    K = kernel(o)
    ms, ts = K.unrank(np.random.default_rng(1).integers(0, K.state_count, sample))
    counts = np.zeros(len(o.dice.rolls))
    for m, x in zip(ms, ts):
        for r in range(len(o.dice.rolls)):
            counts[r] += len(K.successors(int(m), int(x), r))
    return list(counts / sample)


def graph_build_ways(k: int, threads: int, repeats: int) -> dict:
    """The stored graph built both ways in this run, alternating: two passes in memory (count,
    then fill: the reference) and one pass into a folder (what a solve maps); medians."""
    K = kernel(UrOptions(pieces=k))
    two, one = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(repeats):
            t = time.perf_counter()
            g = build_graph(K, threads)
            two.append(time.perf_counter() - t)
            size = g.codes.size
            del g
            folder = Path(tmp) / str(i)
            folder.mkdir()
            t = time.perf_counter()
            g = build_graph(K, threads, folder=folder)
            one.append(time.perf_counter() - t)
            assert g.codes.size == size
            del g
            shutil.rmtree(folder)
    return {"two": float(np.median(two)), "one": float(np.median(one)), "codes": size,
            "twos": two, "ones": one}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--solve-k4", action="store_true", help="also solve k = 4 completely (long)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--graph-build", type=int, metavar="K", default=0,
                    help="only time the stored graph's build for K pieces, two passes in memory against one "
                         "pass into a file, 3 times each, alternating")
    args = ap.parse_args()
    if args.graph_build:
        w = graph_build_ways(args.graph_build, args.threads, 3)
        print(f"stored graph, k={args.graph_build}, {args.threads} threads, {w['codes']:,} codes: two passes in "
              f"memory {w['two']:.1f} s (runs {', '.join(f'{x:.1f}' for x in w['twos'])}), one pass into a file "
              f"{w['one']:.1f} s (runs {', '.join(f'{x:.1f}' for x in w['ones'])}): {w['two'] / w['one']:.2f}x")
        return
    random.seed(1)
    print(f"the engine with the mirror (new) against the plain generator (old), one sweep of the whole space, "
          f"{args.threads} threads:")
    for k, stored in ((3, True), (4, True)):
        e = mirror_vs_plain(k, args.threads, stored)
        print(f"  k={k}: {e['full']:,.0f} states ({e['stored_states']:,.0f} stored with the mirror); regenerating: "
              f"old {e['old_sweep']:.2f} s = {e['full'] / e['old_sweep']:,.0f} states/s, new "
              f"{e['new_sweep']:.2f} s = {e['full'] / e['new_sweep']:,.0f} states/s "
              f"({e['old_sweep'] / e['new_sweep']:.2f}x)")
        if stored:
            print(f"        stored graph: old {e['old_graph_bytes'] / 2**30:.2f} GiB, built in {e['old_build']:.1f} s, "
                  f"sweep {e['old_graph_sweep']:.2f} s; new {e['new_graph_bytes'] / 2**30:.2f} GiB, built in "
                  f"{e['new_build']:.1f} s, sweep {e['new_graph_sweep']:.2f} s "
                  f"({e['old_graph_sweep'] / e['new_graph_sweep']:.2f}x faster, "
                  f"{e['old_graph_bytes'] / e['new_graph_bytes']:.2f}x smaller)")
    print("one Gauss-Seidel sweep, one thread (k <= 4: every state; k = 7: a block of the top tier):")
    rows = []
    for k, sample, py in ((2, 0, 300), (3, 0, 200), (4, 0, 100), (7, 200_000, 20)):
        r = sweep_speed(k, sample, py)
        rows.append(r)
        print(f"  k={k}: {r['states']:>13,} states  Cython {r['cython_per_s']:>11,.0f} states/s/core  "
              f"Python {r['python_per_s']:>7,.0f} states/s  ratio {r['ratio']:>6,.0f}x  "
              f"full sweep ~{r['full_sweep_s_est']:,.1f} s/core")
    p = policy_speed(4, args.threads)
    print(f"policy method, k=4, {args.threads} threads: full sweep recording the policy {p['full']:.2f} s; "
          f"float32 policy sweep {p['evaluate']:.3f} s ({p['full'] / p['evaluate']:.0f}x cheaper); "
          f"float64 policy product {p['product']:.3f} s ({p['full'] / p['product']:.0f}x cheaper)")
    c = check_pass_speed(4, args.threads)
    print(f"endless check, k=4, {args.threads} threads: one pass {c['pass']:.2f} s against one full sweep "
          f"{c['full']:.2f} s (ratio {c['pass'] / c['full']:.2f}; random values are the worst case, every "
          f"roll generated apart; a check takes 10-15 passes, later ones over fewer states)")
    for k in (3, 4):
        g = graph_speed(k, args.threads)
        print(f"stored graph, k={k}, {args.threads} threads: built in {g['build']:.1f} s, "
              f"{g['outcomes_per_state']:.1f} distinct outcomes and {g['bytes_per_state']:.0f} bytes a state; "
              f"sweep {g['graph_sweep']:.2f} s against {g['kernel_sweep']:.2f} s regenerating "
              f"({g['kernel_sweep'] / g['graph_sweep']:.1f}x faster); endless-check pass {g['graph_pass']:.2f} s")
        print(f"  prefetching values ahead (medians of 5, alternating): stored-graph sweep {g['graph_on']:.3f} s "
              f"against {g['graph_off']:.3f} s without ({g['graph_off'] / g['graph_on']:.2f}x); policy sweep "
              f"{g['policy_on']:.3f} s against {g['policy_off']:.3f} s ({g['policy_off'] / g['policy_on']:.2f}x)")
    counts = count_outcomes(4, 5000)
    names = [r.name for r in UrOptions().dice.rolls]
    print("outcomes generated per roll, k=4 (mean of 5,000 random states): "
          + ", ".join(f"{a} {c:.1f}" for a, c in zip(names, counts)))
    with tempfile.TemporaryDirectory() as tmp:
        methods = ("walk", "sweeps")
        for k in (3,):
            for method in methods:
                t = time.perf_counter()
                table = solve(UrOptions(pieces=k), f"{tmp}/k{k}{method}", threads=args.threads,
                              show_progress=False, method=method)
                m = table.meta
                print(f"solve k={k} ({method}): {time.perf_counter() - t:,.1f} s with {args.threads} threads, "
                      f"{m['sweeps']} sweeps + {m['policy_sweeps']} "
                      f"policy sweeps, residual {m['residual']:.2g}, endless check "
                      f"{'passed' if m['endless_check']['flagged'] == 0 else 'FAILED'}")
    if args.solve_k4:
        w = walk_work(4, args.threads)
        for name, how in (("plain", "before: 5 stages, plain rounds"), ("hot", "default: 3 stages, hot-set rounds")):
            r = w[name]
            print(f"solve k=4 (walk, {how}): {r['seconds']:,.0f} s "
                  f"with {args.threads} threads; {r['sweeps']} full sweeps + {r['policy']:,.1f} policy-sweep "
                  f"equivalents = {r['equivalents']:,.0f} full-sweep equivalents (a policy sweep costs "
                  f"{w['policy_cost']:.3f} of a full one over the stored graph); start {r['start']:+.6f}; "
                  f"endless check {'passed' if r['flagged'] == 0 else 'FAILED'}")
        ratio = w["plain"]["equivalents"] / w["hot"]["equivalents"]
        print(f"  the default walk against the plain one: {ratio:.2f}x fewer "
              f"full-sweep equivalents, {w['plain']['seconds'] / w['hot']['seconds']:.2f}x less time; the tables "
              f"differ by at most {w['largest_difference']:.1e} (mean {w['mean_difference']:.1e})")
    print("memory: sweeps: 4 bytes per state (one float32 value) and the stored graph when it fits in half "
          "the memory (bytes above; --graph regenerate does without); walk: another "
          "24 bytes per state (an int32 policy code per roll); policy: those and ten float64 vectors "
          "(80 bytes) while evaluating; the endless check: 1 byte per state; the checkpoint is another "
          "4 bytes per state on disk")
    k7 = rows[-1]
    n7 = k7["states"]
    print(f"k=7 projection: {n7:,} states -> {n7 * 4 / 2**30:.1f} GiB of values "
          f"({n7 * 108 / 2**30:.0f} GiB with the policy method, beyond this machine, so sweeps); one sweep "
          f"~{n7 / k7['cython_per_s'] / 3600:.1f} core-hours "
          f"({n7 / k7['cython_per_s'] / 3600 / 2:.1f} h on this 2-core machine) times the number of sweeps")
    print("  (k=7 reads an untouched all-zero value array, which stays in cache: a lower bound on the "
          "time; with 4.8 GiB of real values expect the per-state cost of k=4 or more)")


if __name__ == "__main__":
    main()
