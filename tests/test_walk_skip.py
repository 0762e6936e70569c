"""Full sweeps that skip what cannot change (solver/stochastic/skip.py and the lead-recording sweep
of solver/stochastic/_engine.pyx): the lead byte against a slow reading of the outcomes, a sweep
that skips against one that does not (the same values and policy rows, bit for bit, on one
thread), the walk with and without skipping, and an unsound bound that makes them differ."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gamesolver.games.ur import kernel
from gamesolver.games.ur.rules import UrOptions
from gamesolver.games.ur.solve import solve
from gamesolver.solver.stochastic import _engine as E
from gamesolver.solver.stochastic import skip
from gamesolver.solver.stochastic import walk
from gamesolver.solver.stochastic.outcomes import StoredGraph
from tests.test_ur_reference import mini_options


@pytest.fixture(scope="module")
def mini4(tmp_path_factory):
    return kernel(mini_options(tmp_path_factory.mktemp("mini"), 4))


@pytest.fixture(scope="module")
def real4():
    return kernel(UrOptions(pieces=4))


def term(c: int, V: np.ndarray, g: np.float32) -> np.float32:
    """An outcome's value for the side that chose it, in float32 as the kernel computes it."""
    if c >= 0:
        return np.float32(g * V[c])
    if c == E.WIN:
        return np.float32(1.0)
    if c == E.LOSS:
        return np.float32(-1.0)
    return np.float32(-(g * V[-c - 1]))


def reference_lead(K, s: int, V: np.ndarray, g: np.float32) -> int:
    """The lead byte of state ``s``, read slowly: each roll's distinct codes (its groups' union, or
    the pass), the best value less the best of the others, the smallest over the rolls."""
    groups = K.outcome_groups(s)
    if all(not x for x in groups[:-1]) and groups[-1] in ([E.WIN], [E.LOSS]):
        return E.LEAD_FINISHED
    least = None
    for r in range(K.roll_count):
        codes = sorted(K.roll_outcomes(s, r))
        if len(codes) < 2:
            continue
        terms = sorted((float(term(c, V, g)) for c in codes), reverse=True)
        gap = terms[0] - terms[1]
        least = gap if least is None else min(least, gap)
    return E.LEAD_ALONE if least is None else E.lead_of(least)


def test_lead_bytes_are_rounded_down() -> None:
    scale = E.lead_scale()
    assert scale[0] == 0.0 and scale[E.LEAD_TOP] == 1.0 and np.all(np.diff(scale) > 0)
    for x in np.concatenate([scale[1:], scale[1:] * 1.0001, scale[1:] * 0.9999, [1e-12, 0.0, 1.7, 2.0]]):
        q = E.lead_of(float(x))
        assert scale[q] <= x
        assert q == E.LEAD_TOP or x < scale[q + 1]


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), board=st.sampled_from(["mini4", "real4"]),
       discount=st.sampled_from([1.0, 0.9999, 0.99]))
def test_the_lead_byte_matches_a_slow_reading(seed: int, board: str, discount: float, request) -> None:
    K = request.getfixturevalue(board)
    n, R = K.state_count, K.roll_count
    rng = np.random.default_rng(seed)
    V = rng.uniform(-1, 1, n).astype(np.float32)
    if rng.random() < 0.5:  # ties: many states worth the same
        V = np.round(V * 4).astype(np.float32) / 4
    g = np.float32(discount)
    for s in rng.integers(0, n, size=12).tolist():
        plain, skipping = V.copy(), V.copy()
        pol_a, pol_b = np.zeros((n, R), np.int32), np.zeros((n, R), np.int32)
        lead, stamp = np.zeros(n, np.uint8), np.full(n, E.STAMP_NEVER, np.uint8)
        E.sweep(K, plain, start=s, stop=s + 1, policy=pol_a, discount=discount)
        E.sweep(K, skipping, start=s, stop=s + 1, policy=pol_b, discount=discount, lead=lead, stamp=stamp,
                bounds=np.full(256, np.inf), now=7)
        assert plain[s] == skipping[s] and np.array_equal(pol_a[s], pol_b[s])
        assert stamp[s] == 7
        assert lead[s] == reference_lead(K, s, V, g)


def _recorded(K, V0: np.ndarray, discount: float = 1.0):
    """A full sweep from V0 that records leads (stamp 0): (values after it, its largest change, policy,
    lead, stamp)."""
    n, R = K.state_count, K.roll_count
    V1 = V0.copy()
    pol = np.zeros((n, R), np.int32)
    lead, stamp = np.zeros(n, np.uint8), np.full(n, E.STAMP_NEVER, np.uint8)
    change = E.sweep(K, V1, policy=pol, discount=discount, lead=lead, stamp=stamp, bounds=np.full(256, np.inf),
                     now=0)
    return V1, change, pol, lead, stamp


def _skipping_sweep_matches(K, seed: int, move: float, slack: float = 2.0) -> tuple[bool, int]:
    """From random values, a recorded sweep, then every value moved by up to ``move``; a sweep that
    skips under the proven bound (times ``slack`` / 2) against one that regenerates everything:
    (same values and policy rows, states generated)."""
    n, R = K.state_count, K.roll_count
    rng = np.random.default_rng(seed)
    V0 = (rng.uniform(-1, 1, n) * rng.uniform(0, 1)).astype(np.float32)
    V1, change, pol, lead, stamp = _recorded(K, V0)
    W1 = (V1 + rng.uniform(-move, move, n)).clip(-1, 1).astype(np.float32)
    plain, plain_pol = W1.copy(), pol.copy()
    E.sweep(K, plain, policy=plain_pol)
    bounds = np.full(256, np.inf)
    bounds[0] = change + float(np.abs(W1.astype(np.float64) - V0).max())
    work = np.zeros(2, np.int64)
    skipping = W1.copy()
    E.sweep(K, skipping, policy=pol, lead=lead, stamp=stamp, bounds=bounds, slack=slack, now=1, work=work)
    same = np.array_equal(plain, skipping) and np.array_equal(plain_pol, pol)
    return same, int(work[0])


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), move=st.sampled_from([0.0, 1e-6, 1e-4, 1e-2, 0.3]))
def test_a_skipping_sweep_gives_the_full_sweeps_values(seed: int, move: float, mini4) -> None:
    same, generated = _skipping_sweep_matches(mini4, seed, move)
    assert same
    assert generated <= mini4.state_count


def near_fixed_point(K, below: float) -> tuple[np.ndarray, np.ndarray]:
    """Values swept from 0 until a sweep changes none by more than ``below`` (at most 300 sweeps),
    and the greedy policy rows of the last sweep."""
    V = np.zeros(K.state_count, np.float32)
    pol = np.zeros((K.state_count, K.roll_count), np.int32)
    for _ in range(300):
        if E.sweep(K, V, policy=pol) < below:
            break
    return V, pol


def test_a_skipping_sweep_skips_when_values_barely_moved(mini4) -> None:
    """Not a vacuous equality: after a sweep that converged, most states are read from their rows."""
    K = mini4
    n = K.state_count
    V, pol = near_fixed_point(K, 1e-6)  # the next sweep moves values by little
    V1, change, pol, lead, stamp = _recorded(K, V)
    bounds = np.full(256, np.inf)
    bounds[0] = change + float(np.abs(V1.astype(np.float64) - V).max())
    work = np.zeros(2, np.int64)
    plain = V1.copy()
    E.sweep(K, plain, policy=pol.copy())
    E.sweep(K, V1, policy=pol, lead=lead, stamp=stamp, bounds=bounds, now=1, work=work)
    assert np.array_equal(plain, V1)
    assert work[0] < 0.2 * n


def test_an_unsound_bound_changes_the_values(mini4) -> None:
    """The deliberate break: a bound a tenth of the proven one lets states keep a choice that is no
    longer the best, and the sweep's values part from the full sweep's."""
    assert _skipping_sweep_matches(mini4, 5, 1e-2)[0]
    assert not _skipping_sweep_matches(mini4, 5, 1e-2, slack=0.2)[0]


def test_a_skipping_sweep_on_four_pieces_matches_on_ranges(real4) -> None:
    """The real board with four pieces: ranges at random places, from values a recorded sweep
    left and then moved (the whole space is recorded once, each range swept both ways)."""
    K = real4
    n, R = K.state_count, K.roll_count
    rng = np.random.default_rng(3)
    V0 = (rng.uniform(-1, 1, n) * 0.3).astype(np.float32)
    V1 = V0.copy()
    pol = np.zeros((n, R), np.int32)
    lead, stamp = np.zeros(n, np.uint8), np.full(n, E.STAMP_NEVER, np.uint8)
    starts = np.sort(rng.integers(0, n - 20_000, size=6))
    for _ in range(15):  # the ranges near their fixed point given the values around them
        for a in starts.tolist():
            E.sweep(K, V0, start=a, stop=a + 20_000)
    V1 = V0.copy()
    changes = [E.sweep(K, V1, start=int(a), stop=int(a) + 20_000, policy=pol, lead=lead, stamp=stamp,
                       bounds=np.full(256, np.inf), now=0) for a in starts]
    for move in (1e-5, 1e-3):
        W1 = (V1 + rng.uniform(-move, move, n)).astype(np.float32)
        bounds = np.full(256, np.inf)
        bounds[0] = max(changes) + float(np.abs(W1.astype(np.float64) - V0).max())
        for a in starts.tolist():
            plain, skipping = W1.copy(), W1.copy()
            pa, pb = pol.copy(), pol.copy()
            la, sa = lead.copy(), stamp.copy()
            work = np.zeros(2, np.int64)
            E.sweep(K, plain, start=a, stop=a + 20_000, policy=pa)
            E.sweep(K, skipping, start=a, stop=a + 20_000, policy=pb, lead=la, stamp=sa, bounds=bounds, now=1,
                    work=work)
            assert np.array_equal(plain, skipping) and np.array_equal(pa, pb)
            assert work[0] < (10_000 if move < 1e-4 else 20_001)  # small moves skip most states


def test_skipping_arguments_are_checked(mini4) -> None:
    K = mini4
    n, R = K.state_count, K.roll_count
    V = np.zeros(n, np.float32)
    lead, stamp = np.zeros(n, np.uint8), np.full(n, E.STAMP_NEVER, np.uint8)
    pol = np.zeros((n, R), np.int32)
    with pytest.raises(ValueError, match="needs a policy"):
        E.sweep(K, V, lead=lead, stamp=stamp, bounds=np.full(256, np.inf))
    with pytest.raises(ValueError, match="infinite bound"):
        E.sweep(K, V, policy=pol, lead=lead, stamp=stamp, bounds=np.zeros(256))
    with pytest.raises(ValueError, match="a stamp is"):
        E.sweep(K, V, policy=pol, lead=lead, stamp=stamp, bounds=np.full(256, np.inf), now=255)
    with pytest.raises(ValueError, match="byte a state"):
        E.sweep(K, V, policy=pol, lead=lead[:-1], stamp=stamp, bounds=np.full(256, np.inf))


def test_stamps_wrap_and_old_ones_prove_nothing() -> None:
    """The bounds a round hands out: finite for the rounds up to AGE_MAX back, by their stamps modulo
    255; infinite for the stamp of this round (a state stamped 255 rounds ago) and for no stamp."""
    sk = skip.Skip(10, np.float32)
    values = np.zeros(10, np.float32)
    for k in range(300):
        sk.begin(values, 1.0)
        now = k % 255
        assert sk.kwargs()["now"] == now
        assert sk.bounds[now] == np.inf and sk.bounds[skip.STAMP_NEVER] == np.inf
        finite = {(now - age) % 255 for age in range(1, min(k, skip.AGE_MAX) + 1)}
        assert set(np.flatnonzero(np.isfinite(sk.bounds)).tolist()) == finite
        values[k % 10] += np.float32(1e-3)  # the round moves one value
        sk.end(values, 1e-4, 0)
    # a state backed up one round ago: that sweep's change, the round's movement, this sweep's own
    assert sk.bounds[(299 - 1) % 255] == pytest.approx(1e-4 + 1e-3, rel=1e-3)


def test_a_changed_discount_widens_the_bounds() -> None:
    sk = skip.Skip(4, np.float32)
    values = np.zeros(4, np.float32)
    sk.begin(values, 0.99)
    sk.end(values, 0.0, 4)
    sk.begin(values, 0.9999)
    assert sk.bounds[0] == pytest.approx(0.0099)


def _walk_values(options, tmp_path, name: str, threads: int = 1, graph: str = "regenerate") -> tuple[np.ndarray, dict]:
    table = solve(options, tmp_path / name, tolerance=1e-5, threads=threads, graph=graph)
    return np.asarray(table["value"]).copy(), table.header["meta"]


def test_the_walk_gives_the_same_values_with_and_without_skipping(tmp_path, monkeypatch) -> None:
    """One thread, the test board with four pieces: the whole walk, bit for bit, with fewer states
    generated; then with an unsound bound the values differ."""
    o = mini_options(tmp_path, 4)
    monkeypatch.setattr(walk, "WALK_SKIP", False)
    plain, plain_meta = _walk_values(o, tmp_path, "plain")
    monkeypatch.setattr(walk, "WALK_SKIP", True)
    skipped, meta = _walk_values(o, tmp_path, "skip")
    assert np.array_equal(plain, skipped)
    assert meta["sweeps"] == plain_meta["sweeps"]
    made, made_plain = meta["full_sweeps_generated"], plain_meta["full_sweeps_generated"]
    assert made_plain["generated_states"] == plain_meta["sweeps"] * kernel(o).state_count  # every state, every sweep
    assert made["generated_codes"] < 0.85 * made_plain["generated_codes"]
    monkeypatch.setattr(skip, "SLACK", 0.05)
    broken, _ = _walk_values(o, tmp_path, "broken")
    assert not np.array_equal(plain, broken)


def test_the_walk_over_a_stored_graph_is_the_same_with_skipping(tmp_path, monkeypatch) -> None:
    """Over a stored graph (where the walk skips only when asked) a proven state is backed up from
    its policy row instead of its stored codes: the same walk, bit for bit, on one thread, reading
    far fewer codes; an unsound bound makes the values differ."""
    o = mini_options(tmp_path, 4)
    assert not StoredGraph.skips  # the walk does not skip over a graph by default (it did not pay)
    monkeypatch.setattr(StoredGraph, "skips", True)
    monkeypatch.setattr(walk, "WALK_SKIP", False)
    plain, plain_meta = _walk_values(o, tmp_path, "plain", graph="store")
    assert plain_meta["graph"] == "stored"
    monkeypatch.setattr(walk, "WALK_SKIP", True)
    skipped, meta = _walk_values(o, tmp_path, "skip", graph="store")
    assert np.array_equal(plain, skipped)
    assert meta["sweeps"] == plain_meta["sweeps"]
    read, read_plain = meta["full_sweeps_generated"], plain_meta["full_sweeps_generated"]
    assert read_plain["generated_states"] == plain_meta["sweeps"] * kernel(o).state_count
    assert read["generated_codes"] < 0.85 * read_plain["generated_codes"]
    monkeypatch.setattr(skip, "SLACK", 0.05)
    broken, _ = _walk_values(o, tmp_path, "broken", graph="store")
    assert not np.array_equal(plain, broken)


@pytest.mark.slow
def test_the_walk_on_four_pieces_is_the_same_with_skipping(tmp_path, monkeypatch) -> None:
    """The real board, four pieces, one thread, regenerating: the same table bit for bit (about 25
    minutes for both walks on a 2-core machine)."""
    o = UrOptions(pieces=4)
    monkeypatch.setattr(walk, "WALK_SKIP", False)
    plain, plain_meta = _walk_values(o, tmp_path, "plain")
    monkeypatch.setattr(walk, "WALK_SKIP", True)
    skipped, meta = _walk_values(o, tmp_path, "skip")
    assert np.array_equal(plain, skipped)
    assert meta["full_sweeps_generated"]["generated_codes"] < plain_meta["full_sweeps_generated"]["generated_codes"] / 2


def test_rounds_after_a_large_change_record_no_leads_and_the_values_stay(tmp_path, monkeypatch) -> None:
    """A full sweep records the leads only where the last one's largest change lay below
    WALK_RECORD_BELOW (above it a skip proves next to nothing, and recording costs 1.13x); the
    one after a plain sweep generates every state. One thread, the test board: the values of the
    walk without skipping, bit for bit, as with every sweep recording. (Forgetting the leads is
    belt and braces: the plain sweep writes every policy row anew at values the bounds account
    for.) The deliberate break: plain sweeps that leave the policy rows as they were make the
    policy sweeps evaluate a stale policy, and the walk no longer settles."""
    o = mini_options(tmp_path, 4)
    n = kernel(o).state_count
    monkeypatch.setattr(walk, "WALK_SKIP", False)
    plain, _ = _walk_values(o, tmp_path, "plain")
    monkeypatch.setattr(walk, "WALK_SKIP", True)
    real, seen = walk.progress_sweep, []

    def spy(K, values, threads, label, show, policy, g, damp=False, extra=None):
        work = extra.get("work") if extra else None
        before = int(work[0]) if work is not None else 0
        change = real(K, values, threads, label, show, policy, g, damp=damp, extra=extra)
        if policy is not None:  # a full sweep of the walk (not the residual check)
            seen.append((extra is not None and "lead" in extra, change, int(work[0]) - before))
        return change

    monkeypatch.setattr(walk, "progress_sweep", spy)
    mixed, meta = _walk_values(o, tmp_path, "mixed")
    assert np.array_equal(plain, mixed) and meta["sweeps"] < 30
    recorded = [r for r, _, _ in seen]
    assert recorded[1:] == [c < walk.WALK_RECORD_BELOW for _, c, _ in seen[:-1]]
    assert True in recorded[1:] and False in recorded
    # a plain sweep generates every state, and a recording one after it every state with a choice (one
    # without is backed up from its row whatever moves)
    assert all(made == n for r, _, made in seen if not r)
    after_plain = {made for (r, _, _), (r2, _, made) in zip(seen, seen[1:]) if r2 and not r}
    assert len(after_plain) == 1 and after_plain.pop() > 0.99 * n
    monkeypatch.setattr(walk, "WALK_RECORD_BELOW", float("inf"))  # every sweep records, as before
    seen.clear()
    always, _ = _walk_values(o, tmp_path, "always")
    assert np.array_equal(plain, always) and all(r for r, _, _ in seen)
    monkeypatch.setattr(walk, "WALK_RECORD_BELOW", 1e-2)
    sound = walk.full_sweep

    def rowless(K, values, threads, label, show, policy, g, damp, skip, counted, record=True):
        if record or skip is None:
            return sound(K, values, threads, label, show, policy, g, damp, skip, counted, record)
        skip.begin(values, g)
        change = real(K, values, threads, label, show, None, g, damp=damp, extra={"work": skip.work})
        skip.end(values, change, n, damped=damp)
        return change

    monkeypatch.setattr(walk, "full_sweep", rowless)
    with pytest.raises(RuntimeError, match="no convergence"):  # the sound walks took 21 full sweeps
        solve(o, tmp_path / "broken", tolerance=1e-5, threads=1, graph="regenerate", max_sweeps=60)
