"""Benchmark: Ünee solved layer by layer, here and on a local Ray cluster, and what that projects
for the variants one machine cannot hold (4 x 5, 4 x 6).

Run: python benchmarks/bench_unee_layers.py [--holes 3 --balls 6] [--rules uncounted,draw,split]
                                            [--workers 2] [--project 4x5,4x6]

For each rule it solves the variant three ways, each checked equal to the first on every state:
the whole graph in this process (the reference), layer by layer in this process, and layer by
layer as Ray tasks on a local cluster of ``--workers`` CPUs, and prints seconds and ratios against
the reference. From the Ray run it takes the rate of one worker (moves solved a second, the layer's
graph built inside the task, over all layers). Two fresh processes measure the peak memory of the
whole-graph and the layered solve of the first rule, which gives bytes a move of the largest layer.

The projection counts each layer of the projected variants exactly (boards) and estimates its
moves from evenly spaced samples of boards (``--sample`` ranges of 1,024), then prices each layer
at the measured rate: the four chains of layers (balls mod 4) are independent, so with four or
more workers the time is the longest chain; memory is the largest layer's moves at the measured
bytes a move. Figures are estimates and are printed as such.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

# the child's own high-water mark (VmHWM: ru_maxrss would start at the parent's peak, inherited at fork)
PEAK = """
import json, sys, time
import numpy as np
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
from gamesolver.games.unee.rules import UneeOptions
o = UneeOptions(holes_per_row={h}, balls_per_hole={b})
base = hwm()
t0 = time.perf_counter()
if {layers}:
    from gamesolver.games.unee.layers import solve_arrays_by_layers
    a = solve_arrays_by_layers(o, {rule!r})
else:
    from gamesolver.games.unee.graph import build_graph
    from gamesolver.games.unee.solution import solve_arrays
    a = solve_arrays(build_graph(o), {rule!r})
print(json.dumps({{"seconds": time.perf_counter() - t0, "base_kib": base,
                  "peak_kib": hwm(),
                  "result_bytes": sum(x.nbytes for x in a.values())}}))
"""


def peak(holes: int, balls: int, rule: str, layers: bool) -> dict:
    code = PEAK.format(h=holes, b=balls, rule=rule, layers=layers)
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def layer_moves(options, tier: int, sample: int) -> tuple[int, float]:
    """(boards, estimated moves) of one layer: all of it when small, else ``sample`` evenly
    spaced ranges of 1,024 boards."""
    from gamesolver.games.unee import _sow
    from gamesolver.games.unee.layers import layer_sizes

    size = int(layer_sizes(options)[tier])
    if size <= sample * 1024:
        indptr = _sow.build_layer_graph(options.holes_per_row, tier, 0, -1, options.skip_origin,
                                        options.capture_both, 4)[0]
        return size, float(indptr[-1])
    moves = boards = 0
    for start in np.linspace(0, size - 1024, sample).astype(np.int64):
        indptr = _sow.build_layer_graph(options.holes_per_row, tier, int(start), int(start) + 1024,
                                        options.skip_origin, options.capture_both, 4)[0]
        moves += int(indptr[-1])
        boards += 1024
    return size, moves / boards * size


def project(options, rate: float, bytes_move: float, bytes_state: float, sample: int) -> dict:
    layers = [layer_moves(options, t, sample) for t in range(options.max_balls + 1)]
    seconds = [m / rate for _, m in layers]
    chains = [sum(seconds[t] for t in range(c, len(layers), 4)) for c in range(4)]
    big = max(range(len(layers)), key=lambda t: layers[t][1])
    boards = sum(b for b, _ in layers)
    return {
        "variant": f"{options.holes_per_row} x {options.balls_per_hole}",
        "boards": boards,
        "moves": sum(m for _, m in layers),
        "largest_layer": big,
        "largest_layer_boards": layers[big][0],
        "largest_layer_moves": layers[big][1],
        "cpu_minutes": sum(seconds) / 60,
        "minutes_4_workers": max(chains) / 60,
        "layer_gib": (layers[big][1] * bytes_move + layers[big][0] * bytes_state) / 2**30,
    }


def main() -> None:
    from gamesolver.games.unee.graph import build_graph
    from gamesolver.games.unee.layers import solve_arrays_by_layers
    from gamesolver.games.unee.rules import UneeOptions
    from gamesolver.games.unee.solution import solve_arrays
    from gamesolver.solver.backends.ray_tiers import TierEngine

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--holes", type=int, default=3)
    ap.add_argument("--balls", type=int, default=6)
    ap.add_argument("--rules", default="uncounted,draw,split")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--project", default="4x5,4x6")
    ap.add_argument("--sample", type=int, default=32)
    args = ap.parse_args()
    options = UneeOptions(holes_per_row=args.holes, balls_per_hole=args.balls)
    rules = args.rules.split(",")
    print(f"variant {args.holes} x {args.balls}; local Ray with {args.workers} CPUs")
    t0 = time.perf_counter()
    graph = build_graph(options)
    graph_seconds = time.perf_counter() - t0
    graph.reverse()
    print(f"whole graph: {graph.n_states:,} boards, {graph.n_edges:,} moves, built in {graph_seconds:.1f} s "
          "(counted in every whole-graph time below)")
    rates = {}
    with TierEngine(workers=args.workers, init_options={"num_cpus": args.workers}) as engine:
        solve_arrays_by_layers(UneeOptions(holes_per_row=2, balls_per_hole=1), "uncounted", engine=engine)  # warm
        for rule in rules:
            t0 = time.perf_counter()
            whole = solve_arrays(graph, rule)
            t_whole = time.perf_counter() - t0 + graph_seconds
            t0 = time.perf_counter()
            here = solve_arrays_by_layers(options, rule)
            t_here = time.perf_counter() - t0
            t0 = time.perf_counter()
            spread = solve_arrays_by_layers(options, rule, engine=engine)
            t_ray = time.perf_counter() - t0
            same = all(np.array_equal(whole[k], here[k]) and np.array_equal(whole[k], spread[k]) for k in whole)
            rates[rule] = engine.rate()
            print(f"{rule:>9}: whole graph {t_whole:6.1f} s | layers here {t_here:6.1f} s "
                  f"({t_whole / t_here:.2f}x) | Ray {args.workers} workers {t_ray:6.1f} s ({t_whole / t_ray:.2f}x) | "
                  f"one worker {rates[rule] / 1e6:.2f}M moves/s | equal on every state: {same}")
            if not same:
                raise SystemExit("the layered arrays differ from the whole-graph solve")
            del whole, here, spread
    rule = rules[0]
    w = peak(args.holes, args.balls, rule, False)
    lay = peak(args.holes, args.balls, rule, True)
    moves = np.diff(graph.indptr[graph.offsets])  # each layer's moves, from the whole graph built above
    sizes = np.diff(graph.offsets)
    big = int(np.argmax(moves))
    grow_w = max(1, w["peak_kib"] - w["base_kib"]) / 2**20
    grow_l = max(1, lay["peak_kib"] - lay["base_kib"]) / 2**20
    extra = max(0.0, grow_l * 2**30 - lay["result_bytes"])
    bytes_move = extra / moves[big]
    bytes_state = lay["result_bytes"] / graph.n_states
    print(f"peak memory ({rule}, fresh processes): whole graph {grow_w:.2f} GiB, layers {grow_l:.2f} GiB "
          f"(ratio {grow_w / grow_l:.2f}x); largest layer "
          f"{big} balls: {int(sizes[big]):,} boards, {int(moves[big]):,} moves -> {bytes_move:.1f} bytes a move "
          f"beyond the results ({bytes_state:.1f} bytes a board)")
    for name in [p for p in args.project.split(",") if p]:
        h, b = (int(x) for x in name.lower().split("x"))
        for rule in rules:
            p = project(UneeOptions(holes_per_row=h, balls_per_hole=b), rates[rule], bytes_move, bytes_state,
                        args.sample)
            print(f"projection {p['variant']} {rule}: {p['boards']:,} boards, ~{p['moves']:.3g} moves; largest layer "
                  f"{p['largest_layer']} balls ({p['largest_layer_boards']:,} boards, ~{p['largest_layer_moves']:.3g} "
                  f"moves, ~{p['layer_gib']:.0f} GiB on its worker); ~{p['cpu_minutes']:.0f} minutes with one "
                  f"worker, ~{p['minutes_4_workers']:.0f} with four (the longest chain)")


if __name__ == "__main__":
    main()
