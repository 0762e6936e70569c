"""The engine's CUDA kernels (``driver`` imports this module only when it builds them, so the
base install never imports numba). ``cuda`` is this module's global on purpose: numba's simulator
(NUMBA_ENABLE_CUDASIM=1) swaps a kernel's global ``cuda`` for its own, and only a global."""
from __future__ import annotations

from typing import Any, Callable

from numba import cuda, float32, int32, int64

from gamesolver.solver.backends.gpu.arithmetic import _F0, graph_functions, state_functions


def device_jit() -> Callable[[Any], Any]:
    """``cuda.jit(device=True)``: plain device functions, which NVVM inlines as it sees fit (numba's
    own inline="always" copies every call's IR before typing, and the generator's nested calls
    then take minutes to compile)."""
    return lambda f: cuda.jit(device=True)(f)


def cuda_kernels(spec: Any, tpb: int) -> Any:
    """The sweep, policy-sweep and endless-pass kernels for ``spec`` with ``tpb`` threads a block."""
    if tpb & (tpb - 1) or not 1 <= tpb <= 1024:
        raise ValueError("threads per block must be a power of two up to 1024")
    dev = device_jit()
    generate = spec.build(dev)
    _, _, _, backup, joins, settle, policy_backup = state_functions(dev, spec.ngroups, spec.nrolls)
    G, MAXOUT, SCR, TPB = spec.ngroups, spec.max_outcomes, spec.scratch_size, tpb

    @dev
    def block_reduce(cache, x, out, add):
        """The block's sum (``add``) or largest of the threads' ``x`` through the shared array
        ``cache``, added or maxed into ``out[0]`` by thread 0."""
        tid = cuda.threadIdx.x
        cache[tid] = x
        cuda.syncthreads()
        h = TPB // 2
        while h > 0:
            if tid < h:
                if add:
                    cache[tid] += cache[tid + h]
                elif cache[tid + h] > cache[tid]:
                    cache[tid] = cache[tid + h]
            cuda.syncthreads()
            h //= 2
        if tid == 0:
            if add:
                cuda.atomic.add(out, 0, cache[0])
            else:
                cuda.atomic.max(out, 0, cache[0])

    @dev
    def block_max(d, worst):
        block_reduce(cuda.shared.array(TPB, float32), d, worst, False)

    @dev
    def block_sum(a, added):
        block_reduce(cuda.shared.array(TPB, int32), a, added, True)

    @cuda.jit
    def sweep(T, V, dst, start, stop, g, RP, RG, policy, record, write, S, indexed, worst, err):
        codes = cuda.local.array(MAXOUT, int32)
        counts = cuda.local.array(G, int64)
        scratch = cuda.local.array(SCR, int64)
        bestv = cuda.local.array(G, float32)
        bestc = cuda.local.array(G, int64)
        i = start + cuda.grid(1)
        d = _F0
        if i < stop:
            s = S[i] if indexed else i
            if generate(T, s, codes, counts, scratch) < 0:
                cuda.atomic.max(err, 0, 1)
            else:
                d = settle(backup(codes, counts, V, g, RP, RG, bestv, bestc, policy, s, record), V, dst, s, write)
        block_max(d, worst)

    @cuda.jit
    def evaluate(policy, V, start, stop, g, RP, S, indexed, mark, marking, above, worst):
        i = start + cuda.grid(1)
        d = _F0
        if i < stop:
            s = S[i] if indexed else i
            acc = policy_backup(policy, V, s, g, RP)
            d = acc - V[s]
            if d < 0:
                d = -d
            if marking and d > above:
                mark[s] = 1
            V[s] = acc
        block_max(d, worst)

    @cuda.jit
    def endless(T, V, good, eps, first, start, stop, RG, added, err):
        codes = cuda.local.array(MAXOUT, int32)
        counts = cuda.local.array(G, int64)
        scratch = cuda.local.array(SCR, int64)
        starts = cuda.local.array(G, int64)
        s = start + cuda.grid(1)
        a = 0
        if s < stop and good[s] == 0:
            if generate(T, s, codes, counts, scratch) < 0:
                cuda.atomic.max(err, 0, 1)
            elif joins(codes, counts, V, V[s], good, eps, first, RG, starts):
                good[s] = 1
                a = 1
        block_sum(a, added)

    distinct = graph_functions(dev, G)

    @cuda.jit
    def graph_rows(T, start, stop, fill, sizes, OFF, CNT, CODES, err, base):
        """Each state's distinct outcome codes: counted into ``sizes`` (the stored graph's row
        lengths), or with ``fill`` written at the state's offset, its group sizes to its row of CNT.
        The rows hold ranks from ``base`` on, the codes from the offset OFF[0] on (a piece of the
        graph: see ``sweep_stored``)."""
        codes = cuda.local.array(MAXOUT, int32)
        counts = cuda.local.array(G, int64)
        scratch = cuda.local.array(SCR, int64)
        s = start + cuda.grid(1)
        if s < stop:
            if generate(T, s, codes, counts, scratch) < 0:
                cuda.atomic.max(err, 0, 1)
            else:
                m = distinct(codes, counts)
                r = s - base
                if not fill:
                    sizes[s] = m
                elif OFF[r] + m != OFF[r + 1]:
                    cuda.atomic.max(err, 0, 2)
                else:
                    at = OFF[r] - OFF[0]
                    for i in range(m):
                        CODES[at + i] = codes[i]
                    for k in range(G):
                        CNT[r, k] = counts[k]

    @cuda.jit
    def sweep_stored(OFF, CNT, CODES, V, dst, start, stop, g, RP, RG, policy, record, write, S, indexed, worst,
                     base):
        """``sweep`` reading each state's codes from the stored graph instead of generating them:
        the graph's rows hold ranks from ``base`` on, its codes start at the offset OFF[0] (the
        device's prefix: 0 and 0; a piece copied in from the host's memory: its first rank and
        that rank's offset)."""
        bestv = cuda.local.array(G, float32)
        bestc = cuda.local.array(G, int64)
        i = start + cuda.grid(1)
        d = _F0
        if i < stop:
            s = S[i] if indexed else i
            r = s - base
            d = settle(backup(CODES[OFF[r] - OFF[0]:OFF[r + 1] - OFF[0]], CNT[r], V, g, RP, RG, bestv, bestc, policy,
                              s, record), V, dst, s, write)
        block_max(d, worst)

    @cuda.jit
    def endless_stored(OFF, CNT, CODES, V, good, eps, first, start, stop, RG, added, base):
        """``endless`` reading each state's codes from the stored graph (rows from ``base`` on, as
        in ``sweep_stored``)."""
        starts = cuda.local.array(G, int64)
        s = start + cuda.grid(1)
        a = 0
        if s < stop and good[s] == 0:
            r = s - base
            if joins(CODES[OFF[r] - OFF[0]:OFF[r + 1] - OFF[0]], CNT[r], V, V[s], good, eps, first, RG, starts):
                good[s] = 1
                a = 1
        block_sum(a, added)

    @cuda.jit
    def gather(V, S, out):
        """``out[i] = V[S[i]]``: the values of a subset, to bring back only those."""
        i = cuda.grid(1)
        if i < out.shape[0]:
            out[i] = V[S[i]]

    @cuda.jit
    def clear(M):
        """Every byte of ``M`` set to 0 (the hot-set marks before a marking sweep)."""
        i = cuda.grid(1)
        if i < M.shape[0]:
            M[i] = 0

    @cuda.jit
    def count_marks(M, chunk, counts):
        """``counts[t]``: how many of ranks t * chunk .. (t + 1) * chunk - 1 are marked."""
        t = cuda.grid(1)
        if t < counts.shape[0]:
            a = t * chunk
            b = min(a + chunk, M.shape[0])
            c = 0
            for s in range(a, b):
                if M[s] != 0:
                    c += 1
            counts[t] = c

    @cuda.jit
    def write_marks(M, chunk, starts, out):
        """The marked ranks of chunk t, in increasing order, written from ``out[starts[t]]`` on
        (``starts``: the chunks' counts summed before each): all of them, in rank order."""
        t = cuda.grid(1)
        if t < starts.shape[0]:
            a = t * chunk
            b = min(a + chunk, M.shape[0])
            j = starts[t]
            for s in range(a, b):
                if M[s] != 0:
                    out[j] = s
                    j += 1

    @cuda.jit
    def outcomes(T, ranks, codes, counts, written):
        """The game's outcome codes of each state in ``ranks`` (row i of ``codes`` and ``counts``):
        the device's generator, for comparison with the host's."""
        scratch = cuda.local.array(SCR, int64)
        i = cuda.grid(1)
        if i < ranks.shape[0]:
            written[i] = generate(T, ranks[i], codes[i], counts[i], scratch)

    return {"outcomes": outcomes, "sweep": sweep, "evaluate": evaluate, "endless": endless, "generate": generate,
            "gather": gather, "graph_rows": graph_rows, "sweep_stored": sweep_stored,
            "endless_stored": endless_stored, "clear": clear, "count_marks": count_marks,
            "write_marks": write_marks}
