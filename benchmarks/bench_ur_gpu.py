"""Ur (fort rules) on the GPU backend: states/s of a full sweep and of a policy sweep on the device,
next to the CPU engine's one-thread rate measured in the same run.

Run with ``python benchmarks/bench_ur_gpu.py [--pieces 4 5 6 7] [--repeats 3]`` on a machine with a
CUDA GPU (needs the extra: ``pip install "gamesolver[gpu]"``); without one it says so and exits 0.
For each K: the device's full sweep (regenerating every state's outcomes, writing, with the values'
copies to and from the device that a solve pays), the same sweep reading the stored graph where it
fits in device memory (its size, its build time and the ratio to the regenerating sweep in the
same run), and its policy sweep (the walk's cheap sweeps,
values resident), both timed over the whole state space from the same random values; the CPU
engine's one-thread rate from ``solver.stochastic.planning.seconds_per_state`` (consecutive ranks at random
places: a whole K = 7 sweep on one thread takes hours); the ratio; and the device memory in use at
the peak (free memory before the engine minus the least free memory seen). One JSON line per K
with ``--json``.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from gamesolver.games.ur import kernel
from timing import timed
from gamesolver.games.ur.rules import UrOptions
from gamesolver.solver.stochastic.planning import seconds_per_state




def _stored_words(stored: dict) -> str:
    if "gpu_stored_full_sweep_s" in stored:
        return (f"; stored graph ({stored['stored_graph_bytes'] / 2**30:.1f} GiB, built in "
                f"{stored['stored_graph_build_s']:.1f} s): full sweep {stored['gpu_stored_full_sweep_s']:.3f} s, "
                f"{stored['stored_over_regenerating']}x the regenerating one")
    return f"; stored graph: {stored['stored_graph']}" if stored else ""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pieces", type=int, nargs="+", default=[4, 5, 6, 7])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--no-stored", action="store_true", help="skip the sweeps over the stored graph")
    args = ap.parse_args()
    from gamesolver.solver.backends.gpu.driver import _numpy_for_numba

    _numpy_for_numba()
    try:
        import numba_cuda  # noqa: F401
        from numba import cuda
    except ImportError:
        print('skipped: numba-cuda is not installed (pip install "gamesolver[gpu]")')
        return 0
    if not cuda.is_available():
        print("skipped: no CUDA GPU (numba.cuda.is_available() is False)")
        return 0
    from gamesolver.games.ur.solve import gpu_engine

    ctx = cuda.current_context()
    for k in args.pieces:
        o = UrOptions(pieces=k)
        t0 = time.perf_counter()
        game = kernel(o)
        n, R = game.state_count, game.roll_count  # builds the mirror's index on the host
        index_s = time.perf_counter() - t0
        cpu = seconds_per_state(game)
        free0, total = ctx.get_memory_info()
        least = [free0]

        def note() -> None:
            cuda.synchronize()
            least[0] = min(least[0], ctx.get_memory_info()[0])

        V0 = np.random.default_rng(0).uniform(-0.5, 0.5, n).astype(np.float32)
        g = float(np.float32(0.999))
        with gpu_engine(o, graph="regenerate") as eng:
            t0 = time.perf_counter()
            eng.sweep(V0.copy(), policy=np.empty((0, R)), discount=g)  # compiles, records the policy
            first_s = time.perf_counter() - t0
            note()
            V = V0.copy()
            full = timed(lambda: (eng.sweep(V, discount=g), note()), args.repeats)
            policy = timed(lambda: (eng.evaluate(None, V, discount=g), note()), args.repeats)
        # the two copies of the values every full sweep makes (the engine page-locks the host's
        # array: ``GpuEngine._pin``), timed with an ordinary and with a page-locked host array
        H = V0.copy()
        D = cuda.to_device(H)

        def trip() -> None:
            D.copy_to_device(H)
            D.copy_to_host(H)

        pageable = timed(trip, args.repeats)
        with cuda.pinned(H):
            locked = timed(trip, args.repeats)
        del D
        copies = {"values_round_trip_pageable_s": round(pageable, 4), "values_round_trip_pinned_s": round(locked, 4)}
        stored: dict = {}
        if not args.no_stored:  # the same sweep reading the stored graph, where it fits on the device
            t0 = time.perf_counter()
            with gpu_engine(o) as eng:
                built = time.perf_counter() - t0
                note()
                if eng.CODES is not None:
                    V = V0.copy()
                    eng.sweep(V.copy(), discount=g)  # compiles
                    st = timed(lambda: (eng.sweep(V, discount=g), note()), args.repeats)
                    stored = {"gpu_stored_full_sweep_s": round(st, 4), "gpu_stored_full_states_per_s": round(n / st),
                              "stored_over_regenerating": round(full / st, 2), "stored_graph_bytes": eng.nbytes,
                              "stored_graph_build_s": round(built, 2)}
                else:
                    stored = {"stored_graph": "does not fit on the device"}
        row = {
            "pieces": k, "states": n, "device": eng.device_name(),
            "gpu_full_sweep_s": round(full, 4), "gpu_full_states_per_s": round(n / full),
            "gpu_policy_sweep_s": round(policy, 4), "gpu_policy_states_per_s": round(n / policy),
            "cpu_one_thread_states_per_s": round(1 / cpu),
            "full_sweep_ratio_to_one_cpu_thread": round(cpu * n / full, 1),
            "peak_device_bytes": int(free0 - least[0]), "device_total_bytes": int(total),
            "first_sweep_with_compile_s": round(first_s, 2), "host_index_s": round(index_s, 2), **copies, **stored,
        }
        if args.json:
            print(json.dumps(row))
        else:
            print(f"K={k}: {n:,} states on {row['device']}: full sweep {full:.3f} s "
                  f"({row['gpu_full_states_per_s']:,} states/s, {row['full_sweep_ratio_to_one_cpu_thread']}x one "
                  f"CPU thread at {row['cpu_one_thread_states_per_s']:,} states/s); policy sweep {policy:.4f} s "
                  f"({row['gpu_policy_states_per_s']:,} states/s); peak device memory "
                  f"{row['peak_device_bytes'] / 2**30:.2f} GiB of {total / 2**30:.0f}; first sweep with compiling "
                  f"{first_s:.1f} s; host index {index_s:.1f} s; the values to the device and back {pageable:.3f} s "
                  f"({locked:.3f} s page-locked)"
                  + _stored_words(stored))
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
