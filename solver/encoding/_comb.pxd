# Shared inline kernels for the combinatorial number system, cimported by every .pyx module.
#
# Binomials live in a flat int64 table ``binom[n * stride + k]`` made by ``_core.binomial_table``.
from libc.stdint cimport int64_t


cdef inline int64_t board_rank(const int64_t* binom, int stride, const int* counts, int holes) noexcept nogil:
    """Rank of a ball distribution over ``holes`` holes (see ``_core.pyx`` for the order)."""
    cdef int i, total = 0, prefix = 0
    cdef int64_t r = 0
    for i in range(holes):
        total += counts[i]
    for i in range(holes - 1):
        prefix += counts[i]
        r += binom[(prefix + i) * stride + i + 1]
    return binom[(total + holes - 1) * stride + holes] + r
