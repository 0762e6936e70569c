from typing import Any

import numpy as np
import numpy.typing as npt

RANDOM: int
RANDOM_MARKED: int
FIRST_MARKED: int
END_NO_MOVE: int
END_REPETITION: int
END_CAP: int

def optimal_mask(
    indptr: npt.NDArray[np.int64], succ: npt.NDArray[np.int32], captured: npt.NDArray[np.int8],
    value: npt.NDArray[np.int8],
) -> npt.NDArray[np.uint8]: ...
def play_games(
    indptr: npt.NDArray[np.int64], succ: npt.NDArray[np.int32], captured: npt.NDArray[np.int8],
    start: int, start_side: int, games: int, seed: int, south_policy: int, north_policy: int,
    marked: npt.NDArray[np.uint8] | None = ..., max_plies: int = ..., record: bool = ...,
) -> dict[str, Any]: ...
