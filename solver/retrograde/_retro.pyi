from typing import Callable, Literal, overload

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]
I32 = npt.NDArray[np.int32]
I8 = npt.NDArray[np.int8]

@overload
def solve_tiers(
    indptr: I64, succ: I32, reward: I8, rindptr: I64, pred: I32, tiers: I64, terminal: I8,
    mode: Literal["value"], progress: Callable[[int], None] | None = ..., out: I8 | None = ...,
) -> I8: ...
@overload
def solve_tiers(
    indptr: I64, succ: I32, reward: I8, rindptr: I64, pred: I32, tiers: I64, terminal: I8,
    mode: Literal["termination"], progress: Callable[[int], None] | None = ...,
    out: tuple[I8, I8] | None = ...,
) -> tuple[I8, I8]: ...
def remoteness_tiers(
    indptr: I64, succ: I32, reward: I8, rindptr: I64, pred: I32, pedge: I64, tiers: I64, value: I8,
    progress: Callable[[int], None] | None = ...,
    out: tuple[I32, npt.NDArray[np.uint8], I8] | None = ...,
) -> tuple[I32, npt.NDArray[np.uint8], I8]: ...
