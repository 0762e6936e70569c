"""Export a solved Ur table: every position in the project's notation with its value.

The table stores one state of each mirrored pair; the export writes both (a position and its
mirror image have the same value). Positions are mover-relative: X is the side to move, so each
row is the position with X to move and its value for X; the same position with the colours
swapped and O to move has the same value for O.
"""
from __future__ import annotations

from typing import IO, Iterator

import numpy as np

from gamesolver.games.ur.generator import kernel
from gamesolver.games.ur.rules import UrOptions
from gamesolver.solver.stochastic.outcomes import build_graph
from gamesolver.solver.tables.table import Table

CHUNK = 1 << 16
COLUMNS = ["position", "side", "pieces_x", "pieces_o", "value"]
NPY_DTYPE = np.dtype([("x", "<u4"), ("o", "<u4"), ("value", "<f4")])


def mirror_masks(masks: np.ndarray, twin: tuple[int, ...] | None) -> np.ndarray:
    """Tile masks with every tile moved to its mirror twin (unchanged without a mirror)."""
    if twin is None:
        return masks
    out = np.zeros_like(masks)
    for t, u in enumerate(twin):
        out |= ((masks >> np.uint32(t)) & np.uint32(1)) << np.uint32(u)
    return out


def reachable_states(options: UrOptions, threads: int = 1) -> np.ndarray:
    """A mark per stored state: reachable from the start by some sequence of rolls and actions.

    Breadth first over the stored outcome graph (so it needs the memory the graph needs)."""
    K = kernel(options)
    g = build_graph(K, threads)
    seen = np.zeros(K.state_count, dtype=bool)
    start = int(K.rank([0], [0])[0])
    seen[start] = True
    frontier = np.array([start], dtype=np.int64)
    while frontier.size:
        lo, hi = g.offsets[frontier], g.offsets[frontier + 1]
        lengths = hi - lo
        at = np.repeat(lo - np.cumsum(lengths) + lengths, lengths) + np.arange(int(lengths.sum()))
        codes = g.codes[at].astype(np.int64)
        targets = np.where(codes >= 0, codes, -codes - 1)
        targets = targets[codes > -(2**31 - 2)]  # wins and losses end the game
        new = np.unique(targets[~seen[targets]])
        seen[new] = True
        frontier = new
    return seen


def states(options: UrOptions, table: Table, reachable: bool = False,
           threads: int = 1) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(X's tile masks, O's tile masks, values for X to move), chunk by chunk, every position."""
    K = kernel(options)
    values = table["value"]
    twin = options.board.mirror if options.uses_mirror else None
    keep = reachable_states(options, threads) if reachable else None
    for start in range(0, K.state_count, CHUNK):
        idx = np.arange(start, min(K.state_count, start + CHUNK), dtype=np.int64)
        if keep is not None:
            idx = idx[keep[idx]]
        x, o = K.unrank(idx)
        v = np.asarray(values[idx], dtype=np.float32)
        yield x, o, v
        if twin is not None:
            fx, fo = mirror_masks(x, twin), mirror_masks(o, twin)
            other = (fx != x) | (fo != o)
            yield fx[other], fo[other], v[other]


def write_npy(options: UrOptions, table: Table, out: str, reachable: bool = False, threads: int = 1) -> int:
    """A structured array (x, o: tile masks, bit i = tile i of the board file; value) at ``out``."""
    parts = [np.rec.fromarrays([x, o, v], dtype=NPY_DTYPE) for x, o, v in states(options, table, reachable, threads)]
    array = np.concatenate(parts) if parts else np.zeros(0, dtype=NPY_DTYPE)
    with open(out, "wb") as f:
        np.save(f, array, allow_pickle=False)
    return int(array.shape[0])


def write_csv(options: UrOptions, table: Table, stream: IO[str], reachable: bool = False, threads: int = 1) -> int:
    names = options.board.names
    cache: dict[int, str] = {}

    def tiles(mask: int) -> str:
        text = cache.get(mask)
        if text is None:
            text = ",".join(names[i] for i in range(len(names)) if mask >> i & 1) or "-"
            cache[mask] = text
        return text

    stream.write(",".join(COLUMNS) + "\n")
    count = 0
    for x, o, v in states(options, table, reachable, threads):
        lines = []
        for a, b, val in zip(x.tolist(), o.tolist(), v.tolist()):
            lines.append(f'"X:{tiles(a)} O:{tiles(b)} X",X,{a.bit_count()},{b.bit_count()},{val + 0.0:.7g}\n')
        stream.writelines(lines)
        count += len(lines)
    return count
