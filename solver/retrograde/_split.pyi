from typing import Callable

import numpy as np
import numpy.typing as npt

def split_tiers(
    indptr: npt.NDArray[np.int64], succ: npt.NDArray[np.int32], reward: npt.NDArray[np.int8],
    rindptr: npt.NDArray[np.int64], pred: npt.NDArray[np.int32], tiers: npt.NDArray[np.int64],
    terminal: npt.NDArray[np.int8], delta: npt.NDArray[np.int8], bound: npt.NDArray[np.int8],
    progress: Callable[[int], None] | None = ...,
    out: tuple[npt.NDArray[np.int8], npt.NDArray[np.int8]] | None = ...,
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int8]]: ...

def tier_wins_with_sinks(
    indptr: npt.NDArray[np.int64], succ: npt.NDArray[np.int32], reward: npt.NDArray[np.int8],
    rindptr: npt.NDArray[np.int64], pred: npt.NDArray[np.int32], lo: int, hi: int,
    terminal: npt.NDArray[np.int8], delta: npt.NDArray[np.int8], s: int,
    lower: npt.NDArray[np.int8], upper: npt.NDArray[np.int8],
    sink_node: npt.NDArray[np.int64], sink_value: npt.NDArray[np.int16], u: int,
) -> npt.NDArray[np.uint8]: ...
