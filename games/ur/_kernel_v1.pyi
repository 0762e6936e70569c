from typing import Sequence

import numpy as np
import numpy.typing as npt

class UrKernel:
    def __init__(
        self,
        n: int,
        k: int,
        neighbours: Sequence[Sequence[int]],
        forts: int,
        earth: int,
        heaven: int,
        ishtar: int,
        entry: int,
        rolls: Sequence[tuple[float, int, int, int, int]],
    ) -> None: ...
    @property
    def state_count(self) -> int: ...
    @property
    def roll_count(self) -> int: ...
    def tier_offsets(self) -> npt.NDArray[np.int64]: ...
    def rank(self, mine: npt.ArrayLike, theirs: npt.ArrayLike) -> npt.NDArray[np.int64]: ...
    def unrank(self, ranks: npt.ArrayLike) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint32]]: ...
    def successors(self, mine: int, theirs: int, roll: int) -> list[tuple[int, int, int]]: ...
    def sweep(
        self,
        V: npt.NDArray[np.float32],
        threads: int = ...,
        start: int = ...,
        stop: int = ...,
        write: bool = ...,
        backwards: bool = ...,
        policy: npt.NDArray[np.int32] | None = ...,
        discount: float = ...,
    ) -> float: ...
    def roll_values(self, V: npt.NDArray[np.float32], mine: int, theirs: int) -> list[float]: ...
    def evaluate(
        self, policy: npt.NDArray[np.int32], V: npt.NDArray[np.float32], threads: int = ..., discount: float = ...
    ) -> float: ...
    def policy_apply(
        self,
        policy: npt.NDArray[np.int32],
        x: npt.NDArray[np.float64],
        out: npt.NDArray[np.float64],
        constants: bool = ...,
        minus: bool = ...,
        threads: int = ...,
        discount: float = ...,
    ) -> None: ...
    def endless_pass(
        self,
        V: npt.NDArray[np.float32],
        good: npt.NDArray[np.uint8],
        eps: float,
        threads: int = ...,
        first: bool = ...,
    ) -> int: ...
    def roll_moves(self, roll: int) -> tuple[int, int]: ...
    @property
    def graph_groups(self) -> int: ...
    def graph_codes(self, rank: int) -> int: ...
    def graph_build(
        self,
        offsets: npt.NDArray[np.int64],
        counts: npt.NDArray[np.uint8],
        codes: npt.NDArray[np.int32],
        threads: int = ...,
        start: int = ...,
        stop: int = ...,
    ) -> int: ...
    def graph_sweep(
        self,
        offsets: npt.NDArray[np.int64],
        counts: npt.NDArray[np.uint8],
        codes: npt.NDArray[np.int32],
        V: npt.NDArray[np.float32],
        threads: int = ...,
        start: int = ...,
        stop: int = ...,
        write: bool = ...,
        policy: npt.NDArray[np.int32] | None = ...,
        discount: float = ...,
    ) -> float: ...
    def graph_endless_pass(
        self,
        offsets: npt.NDArray[np.int64],
        counts: npt.NDArray[np.uint8],
        codes: npt.NDArray[np.int32],
        V: npt.NDArray[np.float32],
        good: npt.NDArray[np.uint8],
        eps: float,
        threads: int = ...,
        first: bool = ...,
    ) -> int: ...
