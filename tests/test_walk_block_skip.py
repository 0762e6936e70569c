"""Full sweeps that skip with a bound per block of states (solver/stochastic/skip.py, BlockSkip, and
the carried-lead sweep of solver/stochastic/_engine.pyx): the fort rules' block keys against a
slow reading of the tiles, the blocks each key reaches against every state's outcomes, a sweep
with carried leads against one that generates everything (the same values and policy rows, bit
for bit, on one thread), the walk with and without it, and unsound bounds that make them differ."""
from __future__ import annotations

import math

from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gamesolver.games.ur import kernel
from gamesolver.games.ur.solve import solve
from gamesolver.solver.stochastic import _engine as E
from gamesolver.solver.stochastic import skip
from gamesolver.solver.stochastic import walk
from tests.test_ur_reference import mini_options
from tests.test_walk_skip import mini4, near_fixed_point, real4  # noqa: F401 (the same generators, as fixtures)


@pytest.fixture(scope="module")
def mini_adjacency(mini4):
    return skip.block_adjacency(mini4, threads=2)


def tiles(mask: int) -> list[int]:
    return [t for t in range(32) if mask >> t & 1]


def slow_block(K, side: int, other_count: int, n: int, k: int) -> int:
    """A side's tile set and the other side's count as one number, read slowly: the count, then
    the sets of fewer tiles, then the set's colex rank."""
    sets = sum(comb(n, j) for j in range(k + 1))
    mine = tiles(side)
    return other_count * sets + sum(comb(n, j) for j in range(len(mine))) + sum(comb(t, i + 1) for i, t in enumerate(mine))


@pytest.mark.parametrize("board", ["mini4", "real4"])
def test_block_keys_are_a_side_and_the_other_count(board: str, request) -> None:
    K = request.getfixturevalue(board)
    n_tiles = {"mini4": 8, "real4": 20}[board]
    rng = np.random.default_rng(1)
    ranks = np.sort(rng.choice(K.state_count, 300, replace=False))
    M, O = K.unrank(ranks)
    for r, m, o in zip(ranks.tolist(), M.tolist(), O.tolist()):
        own, other = K.keys_of(r, r + 1)
        a, b = len(tiles(m)), len(tiles(o))
        assert int(own[0]) == slow_block(K, m, b, n_tiles, 4)
        assert int(other[0]) == slow_block(K, o, a, n_tiles, 4)
        assert 0 <= own[0] < K.block_count and 0 <= other[0] < K.block_count
    # the own block of consecutive ranks changes in runs: the blocks are ranges of ranks
    starts, keys = skip.block_runs(K)
    assert starts[0] == 0 and np.all(np.diff(starts) > 0)
    assert len(np.unique(keys)) == len(keys)  # no block in two runs


def test_each_key_reaches_the_blocks_of_its_states_successors(mini4, mini_adjacency) -> None:
    """The test board, every state: the blocks that the successors keeping the turn lie in, by own
    block, and those passing it, by other key, read slowly from the outcome lists."""
    K = mini4
    n = K.state_count
    own, other = K.keys_of(0, n)
    keep: dict[int, set[int]] = {}
    passing: dict[int, set[int]] = {}
    for s in range(n):
        for group in K.outcome_groups(s):
            for c in group:
                if c >= 0:
                    keep.setdefault(int(own[s]), set()).add(int(own[c]))
                elif c not in (E.WIN, E.LOSS, E.NOCODE):
                    passing.setdefault(int(other[s]), set()).add(int(own[-c - 1]))
    keep_ptr, keep_blocks, pass_ptr, pass_blocks = mini_adjacency
    for key in range(K.block_count):
        assert set(keep_blocks[keep_ptr[key]:keep_ptr[key + 1]].tolist()) == keep.get(key, set())
        assert set(pass_blocks[pass_ptr[key]:pass_ptr[key + 1]].tolist()) == passing.get(key, set())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 5000), min_size=0, max_size=300), st.integers(0, 3000), st.integers(0, 2**31))
def test_the_run_index_finds_each_ranks_run(gaps: list[int], tail: int, seed: int) -> None:
    """``_engine.run_index``/``run_at``, which the blocks' finding reads a successor's block by,
    against a search of the runs' starts: random runs (some a rank long), every rank's run."""
    starts = np.concatenate([[0], np.cumsum(gaps)]).astype(np.int64)
    n = int(starts[-1]) + 1 + tail
    first, shift = E.run_index(starts, n)
    assert (first.shape[0] - 1) << shift >= n and (n >> (shift + 1)) < len(starts)
    ranks = np.unique(np.concatenate([starts, np.maximum(starts - 1, 0), [n - 1],
                                      np.random.default_rng(seed).integers(0, n, 500)])).astype(np.int64)
    assert np.array_equal(E.runs_of(starts, first, shift, ranks), np.searchsorted(starts, ranks, side="right") - 1)
    with pytest.raises(ValueError, match="outside"):
        E.runs_of(starts, first, shift, np.array([(first.shape[0] - 1) << shift], np.int64))
    with pytest.raises(ValueError, match="begin at rank 0"):
        E.run_index(starts + 1, n + 1)


@pytest.mark.parametrize("board", ["mini4", "real4"])
def test_a_ranks_block_read_from_the_runs_is_its_own_block(board: str, request) -> None:
    """The runs' index gives every rank the own block ``block_keys`` gives it: the test board's
    every rank, four pieces' 20,000 at random and each run's first and last."""
    K = request.getfixturevalue(board)
    n = K.state_count
    starts, keys = _runs(K)
    first, shift = E.run_index(starts, n)
    ranks = np.arange(n) if n < 100_000 else np.unique(np.concatenate(
        [starts, starts[1:] - 1, [n - 1], np.random.default_rng(4).integers(0, n, 20_000)]))
    want = np.array([K.keys_of(int(r), int(r) + 1)[0][0] for r in ranks])
    assert np.array_equal(keys[E.runs_of(starts, first, shift, ranks.astype(np.int64))], want)
    table = np.full(1 << 16, E.PAIR_EMPTY, dtype=np.uint64)
    with pytest.raises(ValueError, match="do not cover"):
        E.block_pairs(K, table, 100, starts, keys, first[:-1], shift, stop=1)


@settings(max_examples=8, deadline=None)
@given(st.integers(0, 2**31), st.integers(1, 4000), st.sampled_from([1, 2]))
def test_pairs_read_from_the_runs_are_those_read_from_the_tiles(real4, seed: int, length: int, threads: int) -> None:
    """Four pieces, a random range of ranks: the (kind, key, block) words ``block_pairs`` finds
    reading each successor's block from the runs are those it finds unranking every successor."""
    K = real4
    n = K.state_count
    starts, keys = _runs(K)
    first, shift = E.run_index(starts, n)
    a = int(np.random.default_rng(seed).integers(0, n - length))
    words = []
    for runs in ((starts, keys, first, shift), ()):
        table = np.full(1 << 20, E.PAIR_EMPTY, dtype=np.uint64)
        assert E.block_pairs(K, table, table.size // 2, *runs, threads=threads, start=a, stop=a + length) > 0
        words.append(np.sort(table[table != E.PAIR_EMPTY]))
    assert np.array_equal(words[0], words[1])


_RUNS: dict[int, tuple[np.ndarray, np.ndarray]] = {}


def _runs(K) -> tuple[np.ndarray, np.ndarray]:
    """``skip.block_runs`` of four pieces, found once for the tests that read them."""
    if id(K) not in _RUNS:
        _RUNS[id(K)] = skip.block_runs(K)
    return _RUNS[id(K)]


def test_carried_levels_are_rounded_down() -> None:
    scale = E.carry_scale()
    assert scale[0] == 0.0 and scale[E.CARRY_TOP] == 1.0 and np.all(np.diff(scale) > 0)
    probes = np.concatenate([scale[1::97], scale[1::97] * 1.00001, scale[1::97] * 0.99999, [1e-12, 0.0, 1.7]])
    for x in probes:
        q = E.carry_of(float(x))
        assert scale[q] <= x
        assert q == E.CARRY_TOP or x < scale[q + 1]
    # the specials lie above every level that a lead measured afresh is written with
    assert E.CARRY_TOP | E.CARRY_FRESH < E.CARRY_ALONE < E.CARRY_FINISHED < E.CARRY_NEVER


def _block_moves(K, rng, n: int, move: float) -> np.ndarray:
    """A movement for every value: most blocks move by up to ``move`` / 100, a few by up to ``move``."""
    own, _ = K.keys_of(0, n)
    far = rng.random(K.block_count) < 0.1
    size = np.where(far[own], move, move / 100)
    return rng.uniform(-1, 1, n) * size


def _carried_sweep_matches(K, adjacency, seed: int, move: float, slack: float = 2.0, start: np.ndarray | None = None,
                           one_bound: bool = False) -> tuple[bool, int]:
    """From random values (or ``start``) a full sweep that records carried leads, then every value
    moved (some blocks far more than others); a sweep that skips under the blocks' bounds (with
    ``one_bound``, each the largest of them all: one bound for the game) against one that
    generates everything: (same values and policy rows, states generated)."""
    n, R = K.state_count, K.roll_count
    rng = np.random.default_rng(seed)
    V0 = (rng.uniform(-1, 1, n) * rng.uniform(0, 1)).astype(np.float32) if start is None else start.copy()
    V1 = V0.copy()
    pol = np.zeros((n, R), np.int32)
    carry = np.full(n, E.CARRY_NEVER, np.uint16)
    nb = K.block_count
    E.sweep(K, V1, policy=pol, carry=carry, kbounds=np.zeros((4, nb)))
    assert not np.any(carry == E.CARRY_NEVER)  # every state recorded a lead
    W1 = (V1 + _block_moves(K, rng, n, move)).clip(-1, 1).astype(np.float32)
    plain, plain_pol = W1.copy(), pol.copy()
    E.sweep(K, plain, policy=plain_pol)
    starts, keys = skip.block_runs(K)
    full = skip._block_max(V1, V0, starts, keys, nb, update=False)  # the recording sweep's movement
    moved = skip._block_max(W1, V0, starts, keys, nb, update=False)  # from its start to the next's
    keep_ptr, keep, pass_ptr, passing = adjacency
    kb = np.stack([skip._reach_max(keep_ptr, keep, moved), skip._reach_max(keep_ptr, keep, moved + full),
                   skip._reach_max(pass_ptr, passing, moved), skip._reach_max(pass_ptr, passing, moved + full)])
    if one_bound:
        kb[0::2] = moved.max()
        kb[1::2] = (moved + full).max()
    work = np.zeros(2, np.int64)
    skipping = W1.copy()
    E.sweep(K, skipping, policy=pol, carry=carry, kbounds=kb, slack=slack, work=work)
    same = np.array_equal(plain, skipping) and np.array_equal(plain_pol, pol)
    return same, int(work[0])


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), move=st.sampled_from([0.0, 1e-6, 1e-4, 1e-2, 0.3]))
def test_a_sweep_with_carried_leads_gives_the_full_sweeps_values(seed: int, move: float, mini4,
                                                                   mini_adjacency) -> None:
    same, generated = _carried_sweep_matches(mini4, mini_adjacency, seed, move)
    assert same
    assert generated <= mini4.state_count


def test_a_sweep_with_carried_leads_skips_where_blocks_barely_moved(mini4, mini_adjacency) -> None:
    """Not a vacuous equality: near the fixed point, with most blocks still, most states are read
    from their rows, and more of them than one bound for the whole game would let."""
    K = mini4
    n = K.state_count
    V, _ = near_fixed_point(K, 1e-7)  # the recording sweep moves values by little
    same, by_blocks = _carried_sweep_matches(K, mini_adjacency, 11, 1e-3, start=V)
    same_one, by_one = _carried_sweep_matches(K, mini_adjacency, 11, 1e-3, start=V, one_bound=True)
    assert same and same_one
    assert by_blocks < 0.5 * n
    assert by_blocks < by_one


def test_unsound_block_bounds_change_the_values(mini4, mini_adjacency) -> None:
    """The deliberate breaks: a bound a tenth of the proven one, and blocks that forget where the
    successors passing the turn lie (each key's list emptied) both let states keep a choice that
    is no longer the best."""
    assert _carried_sweep_matches(mini4, mini_adjacency, 5, 1e-2)[0]
    assert not _carried_sweep_matches(mini4, mini_adjacency, 5, 1e-2, slack=0.2)[0]
    keep_ptr, keep, pass_ptr, passing = mini_adjacency
    forgetful = (keep_ptr, keep, np.zeros_like(pass_ptr), passing[:0])
    assert not _carried_sweep_matches(mini4, forgetful, 5, 1e-2)[0]


def test_carried_lead_arguments_are_checked(mini4) -> None:
    K = mini4
    n, R = K.state_count, K.roll_count
    V = np.zeros(n, np.float32)
    pol = np.zeros((n, R), np.int32)
    carry = np.full(n, E.CARRY_NEVER, np.uint16)
    kb = np.zeros((4, K.block_count))
    with pytest.raises(ValueError, match="need a policy"):
        E.sweep(K, V, carry=carry, kbounds=kb)
    with pytest.raises(ValueError, match="two bytes a state"):
        E.sweep(K, V, policy=pol, carry=carry[:-1], kbounds=kb)
    with pytest.raises(ValueError, match="two bytes a state"):
        E.sweep(K, V, policy=pol, carry=carry, kbounds=np.zeros((4, K.block_count - 1)))
    with pytest.raises(ValueError, match="at least 0"):
        E.sweep(K, V, policy=pol, carry=carry, kbounds=kb, dg=-1.0)


def test_a_game_without_blocks_has_one() -> None:
    """The engine's default: one block for every state, so the bound per block is the global one."""
    from gamesolver.games.ur import royal  # RoyalUr's generator names no blocks
    from gamesolver.games.ur.royal_table import royal_game
    K = royal_game(royal.load_ruleset("finkel", pieces=2))
    assert K.block_count == 1
    own, other = K.keys_of(0, min(50, K.state_count))
    assert not own.any() and not other.any()


def _walk_values(options, tmp_path, name: str, max_sweeps: int = 100_000) -> tuple[np.ndarray, dict]:
    table = solve(options, tmp_path / name, tolerance=1e-5, threads=1, graph="regenerate", max_sweeps=max_sweeps)
    return np.asarray(table["value"]).copy(), table.header["meta"]


def _broken_walk_differs(options, tmp_path, name: str, plain: np.ndarray, sweeps: int) -> bool:
    """Whether a walk under a broken bound ends elsewhere or does not end (within twice the
    sound walk's full sweeps: a choice kept stale can keep the largest change up for ever)."""
    try:
        values, _ = _walk_values(options, tmp_path, name, max_sweeps=2 * sweeps)
    except RuntimeError as e:
        return "no convergence" in str(e)
    return not np.array_equal(plain, values)


def test_the_walk_gives_the_same_values_with_a_bound_per_block(tmp_path, monkeypatch) -> None:
    """One thread, the test board with four pieces: the whole walk, bit for bit, both where its
    full sweeps record leads only below WALK_RECORD_BELOW (as the walk does) and where they record
    in every sweep; recording in every sweep, it generates fewer codes than one bound for the game
    does recording so (each state's blocks move less than the whole game); then with unsound bounds
    the values differ."""
    o = mini_options(tmp_path, 4)
    monkeypatch.setattr(walk, "WALK_SKIP", False)
    plain, plain_meta = _walk_values(o, tmp_path, "plain")
    monkeypatch.setattr(walk, "WALK_SKIP", True)
    monkeypatch.setattr(walk, "WALK_SKIP_BLOCKS", True)
    blocks, meta = _walk_values(o, tmp_path, "blocks")
    assert np.array_equal(plain, blocks)
    assert meta["sweeps"] == plain_meta["sweeps"]
    monkeypatch.setattr(walk, "WALK_RECORD_BELOW", math.inf)  # every full sweep records
    always, always_meta = _walk_values(o, tmp_path, "blocks-always")
    assert np.array_equal(plain, always)
    monkeypatch.setattr(walk, "WALK_SKIP_BLOCKS", False)
    _, global_meta = _walk_values(o, tmp_path, "global-always")
    assert always_meta["full_sweeps_generated"]["generated_codes"] \
        < 0.95 * global_meta["full_sweeps_generated"]["generated_codes"]
    # the breaks where the skip decides most: every full sweep recording
    monkeypatch.setattr(walk, "WALK_SKIP_BLOCKS", True)
    monkeypatch.setattr(skip, "SLACK", 0.05)
    assert _broken_walk_differs(o, tmp_path, "broken", plain, meta["sweeps"])
    monkeypatch.setattr(skip, "SLACK", 2.0)
    real = skip.block_adjacency

    def forgetful(K, threads=1, runs=None):
        keep_ptr, keep, pass_ptr, passing = real(K, threads, runs)
        return keep_ptr, keep, np.zeros_like(pass_ptr), passing[:0]
    monkeypatch.setattr(skip, "block_adjacency", forgetful)
    assert _broken_walk_differs(o, tmp_path, "forgetful", plain, meta["sweeps"])


def test_two_threads_read_each_states_own_keys(real4) -> None:
    """The keys are each thread's own (``block_keys`` writes through pointers, and a variable that
    a parallel loop assigns only so is shared by its threads): four pieces, a range of 400,000
    ranks swept near its fixed point (given the values around it), the blocks of a random half of
    the keys moved too far for any lead: on two threads every state with such a key is generated
    and most others skip."""
    K = real4
    n, R = K.state_count, K.roll_count
    start, stop = 1_000_000, 1_400_000
    rng = np.random.default_rng(2)
    V = (rng.uniform(-1, 1, n) * 0.2).astype(np.float32)
    pol = np.zeros((n, R), np.int32)
    for _ in range(40):
        if E.sweep(K, V, start=start, stop=stop, threads=2) < 1e-6:
            break
    carry = np.full(n, E.CARRY_NEVER, np.uint16)
    nb = K.block_count
    E.sweep(K, V, policy=pol, carry=carry, kbounds=np.zeros((4, nb)), start=start, stop=stop, threads=2)
    far = rng.random(nb) < 0.5
    kb = np.where(far, 10.0, 0.0)[None, :].repeat(4, axis=0)
    own, other = K.keys_of(start, stop)
    must = far[own] | far[other]
    for _ in range(2):
        E.sweep(K, V, policy=pol, carry=carry, kbounds=kb, start=start, stop=stop, threads=2)
        word = carry[start:stop]
        choice = (word != E.CARRY_ALONE) & (word != E.CARRY_FINISHED)
        fresh = (word & E.CARRY_FRESH) != 0
        assert np.all(fresh[must & choice])  # generated: its lead measured afresh
        assert np.count_nonzero(~fresh[~must & choice]) > 0.5 * np.count_nonzero(~must & choice)  # the others skip


def test_a_resumed_walk_reads_its_blocks_instead_of_finding_them_again(tmp_path, monkeypatch) -> None:
    """Where the walk maps its policy from a file (a large game), the blocks a bound per block needs
    are kept beside the checkpoint (``checkpoint.BLOCKS_FILE``): a resumed walk reads them instead
    of generating every state again (seven pieces: some 40 minutes), and ends on the values of the
    walk that was not stopped, bit for bit on one thread; the table then replaces the file."""
    import json

    from gamesolver.solver.stochastic import checkpoint
    from tests.test_walk_repair import _solve, _stopped

    monkeypatch.setattr(walk, "WALK_SKIP_BLOCKS", True)
    o = mini_options(tmp_path, 4)
    how = {"graph": "regenerate", "policy_place": "disk"}
    whole, meta, said = _solve(o, tmp_path / "whole", **how)
    assert any(s.startswith("the skip's blocks were found and kept in ") for s in said)
    finding = [i for i, s in enumerate(said) if s.startswith("the skip by blocks: finding the blocks")]
    assert len(finding) == 1 and said[finding[0] + 1].startswith("the skip's blocks were found")
    assert not (tmp_path / "whole" / checkpoint.BLOCKS_FILE).exists()
    root = tmp_path / "stopped"
    info = _stopped(o, root, 5, **how)
    kept = root / checkpoint.BLOCKS_FILE
    game_id = json.dumps(info["options"], sort_keys=True)
    K = kernel(o)
    arrays = skip.read_blocks(kept, K.state_count, K.block_count, game_id)
    assert arrays is not None and np.array_equal(arrays[0], skip.block_runs(K)[0])
    # the log says what the blocks hold in memory: the arrays kept, and the per-block movements
    held = sum(a.nbytes for a in arrays) + 5 * K.block_count * 8
    assert held > 0 and skip.BlockSkip(K, np.float32, blocks_file=kept, game_id=game_id).block_bytes == held
    line = next(s for s in said if s.startswith("the skip's blocks were found"))
    assert line.endswith(f"they hold {held / 2**20:,.0f} MiB of memory")
    # --status says they are kept and whether a run with these options reads them
    from gamesolver.games.ur.family import status_reply

    found = checkpoint.report(root, info["options"])
    assert found["blocks"] == {"bytes": kept.stat().st_size, "same_options": True}
    assert any("reads them instead of finding them again" in x for x in status_reply(found).lines)
    other = checkpoint.report(root, {**info["options"], "pieces": 3})["blocks"]
    assert other["same_options"] is False

    def boom(*args, **kw):
        raise AssertionError("a resumed walk found its blocks again")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(skip, "block_adjacency", boom)
        values, rmeta, rsaid = _solve(o, root, **how)
    assert any(s.startswith("the skip's blocks were read from ") for s in rsaid)
    assert not any(s.startswith("the skip by blocks: finding") for s in rsaid)
    assert np.array_equal(values, whole) and rmeta["sweeps"] == meta["sweeps"]
    assert not kept.exists()
    # blocks of another game, other counts or a broken file are not taken up
    skip.write_blocks(kept, K.state_count, K.block_count, game_id, arrays)
    assert skip.read_blocks(kept, K.state_count, K.block_count, game_id) is not None
    assert skip.read_blocks(kept, K.state_count, K.block_count, game_id + " ") is None
    assert skip.read_blocks(kept, K.state_count + 1, K.block_count, game_id) is None
    assert skip.read_blocks(kept, K.state_count, K.block_count + 1, game_id) is None
    kept.write_bytes(b"not a zip")
    assert skip.read_blocks(kept, K.state_count, K.block_count, game_id) is None
    assert skip.blocks_game(kept) is None and not checkpoint.report(root, info["options"])["blocks"]["same_options"]
