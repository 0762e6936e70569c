"""The real game's queries without a table: the missing table's message (what building it takes,
here and on a cluster, and the commands), and games nobody can win (fewer pieces than forts)."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest
from click.testing import CliRunner

from gamesolver.games.ur import fresh_kernel
from gamesolver.games.ur.rules import UrOptions
from gamesolver.games.ur.solve import kernel, stored_state_count
from gamesolver.solver.cli import cli


def run(*args: str):
    return CliRunner().invoke(cli, ["ur", *args])


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_stored_state_count_needs_no_mirror_index(k: int) -> None:
    assert stored_state_count(UrOptions(pieces=k)) == kernel(UrOptions(pieces=k)).state_count
    assert stored_state_count(UrOptions(pieces=k, mirror=False)) == kernel(UrOptions(pieces=k)).full_state_count


def test_missing_table_says_what_building_it_takes(tmp_path) -> None:
    # six pieces, a position far from the start: four to six have shipped opening files, which
    # answer the first turns without a table; the rest needs the table
    r = run("best-move", "X:B7,B8 O:B1,B3,B4,A7 X", "--roll", "gold+gold", "--pieces", "6", "--cache", str(tmp_path))
    assert r.exit_code == 1 and "Traceback" not in r.output
    lines = r.output.strip().splitlines()
    # at most three lines: what the opening file holds, what is missing and how long it takes here
    # with the command, and (a solve of hours here) the cluster and the GPU with theirs
    assert len(lines) == 3 and lines[0].startswith("Error: the opening file")
    assert "holds only the positions within 5 turns of the start, not this one" in lines[0]
    assert lines[1].startswith("no solved table for pieces=6") and "254,927,401 states" in lines[1]
    assert "on this machine" in lines[1] and "'solver ur solve --pieces 6'" in lines[1]
    assert "Ray cluster" in lines[2] and "--backend ray --address" in lines[2]
    assert "'solver ur solve --pieces 6 --backend gpu'" in lines[2] and "NVIDIA H200 GPU" in lines[2]
    assert not any(tmp_path.iterdir())  # a query never starts the solve
    r = run("best-move", "X:B7,B8 O:B1,B3,B4,A7 X", "--roll", "gold+gold", "--pieces", "6", "--json",
            "--cache", str(tmp_path))
    p = json.loads(r.stdout)["projection"]
    # six pieces' stored graph (about 74 GiB) fits in the H200's memory, where they were solved over
    # it: 100-250 rounds of 4.8-6.8 ns a state (the two stored solves on the H200), 2 to 7 minutes
    assert p["gpu_stored_graph"] is True and 120 <= p["gpu_solve_seconds"][0] < p["gpu_solve_seconds"][1] <= 600


def test_missing_table_as_json(tmp_path) -> None:
    where = tmp_path / "none"
    r = run("analyze", "start", "--table", str(where), "--json")  # the real game: seven pieces
    assert r.exit_code == 1
    doc = json.loads(r.stdout)
    assert doc["missing_table"] == str(where) and doc["pieces"] == 7
    assert doc["commands"][0] == f"solver ur solve --pieces 7 --out {where}"
    p = doc["projection"]
    assert p["states"] == 639_358_121 and p["value_bytes"] == 4 * 639_358_121
    here, cluster = p["solve_seconds_here"], p["solve_seconds_on_cluster"]
    assert 0 < here[0] < here[1] and 0 < cluster[0] < here[0]
    # 100-250 rounds of 12.5-13.4 s (K = 7 with the mirror, the rounds measured on an H200)
    gpu = p["gpu_solve_seconds"]
    assert 1200 <= gpu[0] < gpu[1] <= 4000 and p["gpu_measured"] is True and p["gpu_measured_on"] == "NVIDIA H200"
    assert p["gpu_stored_graph"] is False  # about 204 GiB: no single GPU holds it
    assert doc["commands"][2] == f"solver ur solve --pieces 7 --out {where} --backend gpu"
    assert 0 < p["sample_core_share"] <= 1  # how much of a core the timed sample had
    assert not where.exists()


def test_missing_table_timed_on_a_busy_machine_says_so(monkeypatch, tmp_path) -> None:
    # the sample is timed in CPU time, so a core shared with other work still prices free cores;
    # the message then says the machine was busy, and its figures are those of the rate timed
    from gamesolver.games.ur import answers
    from gamesolver.solver.stochastic.planning import SweepRate

    def busy(game, *a, **k):
        return SweepRate(2e-6, 0.35)

    def idle(game, *a, **k):
        return SweepRate(2e-6, 0.97)

    monkeypatch.setattr(answers, "sweep_rate", busy)
    text, fields = answers.missing_table_message(UrOptions(pieces=7), tmp_path / "k7", False)
    first = text.splitlines()[0]
    assert "timed while other work shared the cores: the sample had 35% of one; these times are for free " \
           "cores, and a busy machine takes longer): 'solver ur solve --pieces 7'" in first
    assert fields["projection"]["sample_core_share"] == 0.35
    monkeypatch.setattr(answers, "sweep_rate", idle)
    calm, calm_fields = answers.missing_table_message(UrOptions(pieces=7), tmp_path / "k7", False)
    assert "shared the cores" not in calm and calm_fields["projection"]["sample_core_share"] == 0.97
    # the same rate prices the same solve, busy or not
    assert calm_fields["projection"]["solve_seconds_here"] == fields["projection"]["solve_seconds_here"]


@pytest.mark.parametrize("k", [1, 2, 3])
def test_too_few_pieces_to_win_is_said_plainly(tmp_path, k: int) -> None:
    r = run("best-move", "X:A1 O:C7 X", "--roll", "gold+gold", "--pieces", str(k), "--cache", str(tmp_path))
    assert r.exit_code == 0 and "nobody can win" in r.output and "+0.000000" not in r.output
    r = run("best-move", "start", "--roll", "gold+gold", "--pieces", str(k), "--json", "--cache", str(tmp_path))
    doc = json.loads(r.stdout)
    assert doc["winnable"] is False and doc["value"] == 0.0 and doc["best"] is None
    assert len(doc["actions"]) > 1 and all(a["value"] == 0.0 for a in doc["actions"])
    r = run("analyze", "start", "--pieces", str(k), "--json", "--cache", str(tmp_path))
    doc = json.loads(r.stdout)
    assert doc["winnable"] is False and "nobody can win" in doc["note"] and len(doc["rolls"]) == 6
    assert doc["value"] == 0.0 and all(r["value"] == 0.0 and r["best"] is None for r in doc["rolls"])


def test_four_pieces_can_win_so_the_table_answers(tmp_path) -> None:
    r = run("analyze", "start", "--pieces", "4", "--table", str(tmp_path / "none"), "--json")
    assert r.exit_code == 1 and "winnable" not in r.stdout


# ---- opening a table fast: the mirror index stored with the values, checksums checked once ----

def _forget_kernels() -> None:
    kernel.cache_clear()  # the next kernel(options) is a new generator, with no index yet


@pytest.fixture
def fresh_kernels():
    """These tests hand generators broken indexes on purpose: none may outlive the test in the
    process-wide cache of generators."""
    _forget_kernels()
    yield
    _forget_kernels()


def _positions(options: UrOptions, count: int, seed: int):
    from gamesolver.games.ur.notation import Position

    k = kernel(options)
    ms, ts = k.unrank(np.random.default_rng(seed).integers(0, k.state_count, count))
    for m, t in zip(ms.tolist(), ts.tolist()):
        tiles = [frozenset(i for i in range(options.board.size) if mask >> i & 1) for mask in (m, t)]
        yield Position.from_relative(tiles[0], tiles[1], "X")


def test_answers_from_the_stored_index_equal_a_rebuilt_index(tmp_path, fresh_kernels) -> None:
    from gamesolver.games.ur.solve import attach_index, choices, load_table
    from gamesolver.solver.tables.table import open_table
    from tests.test_engine import symmetric_options
    from tests.test_ur_opening import random_table

    options = symmetric_options(tmp_path, 4, mirror=True)
    where = random_table(options, tmp_path / "t", 5)
    _forget_kernels()
    table = load_table(options, where, build=False, cache=str(tmp_path / "c"))
    assert attach_index(options, table) == "kernel"  # load_table gave it the table's index already
    _forget_kernels()
    assert attach_index(options, table) == "table"
    mapped = kernel(options)
    rebuilt = fresh_kernel(options)  # a generator of its own, which builds its index
    every = np.arange(rebuilt.state_count)
    assert mapped.state_count == rebuilt.state_count == table.state_count
    assert all(np.array_equal(a, b) for a, b in zip(mapped.unrank(every), rebuilt.unrank(every)))
    ms, ts = rebuilt.unrank(every)
    assert np.array_equal(mapped.rank(ms, ts), every) and np.array_equal(mapped.tier_offsets(), rebuilt.tier_offsets())
    positions = list(_positions(options, 40, 1))
    answers = [[choices(options, table, p, r) for r in range(6)] for p in positions]
    _forget_kernels()
    plain = open_table(where)  # as before: the first rank builds the index
    assert [[choices(options, plain, p, r) for r in range(6)] for p in positions] == answers
    assert not (tmp_path / "c").exists()  # the table had its index: nothing cached


def _table_with_index(options: UrOptions, where, words, sample):
    from gamesolver.games.ur.solve import ENCODING, ENCODING_VERSION, GAME, RULE
    from gamesolver.solver.tables.table import write_table

    n = stored_state_count(options)
    return write_table(where, game=GAME, rule=RULE, encoding=ENCODING, encoding_version=ENCODING_VERSION,
                       state_count=n, options=options.header(),
                       arrays={"value": np.zeros(n, dtype=np.float32), "mirror_words": words, "mirror_sample": sample})


def test_a_tampered_or_foreign_index_is_refused_in_one_line(tmp_path, fresh_kernels) -> None:
    from gamesolver.games.ur.solve import index_arrays, load_table
    from gamesolver.solver.errors import CorruptTableError
    from tests.test_engine import symmetric_options

    options = symmetric_options(tmp_path, 4, mirror=True)
    good = index_arrays(options)
    words, sample = good["mirror_words"].copy(), good["mirror_sample"]
    words[0, 0] ^= 1  # consistent checksums: the index itself must be found wrong
    other = index_arrays(symmetric_options(tmp_path, 3, mirror=True))
    cases = {"tampered": (words, sample, "mirror index word 0 differs"),
             "other pieces": (other["mirror_words"], other["mirror_sample"], "mirror index words: expected")}
    for name, (w, s, said) in cases.items():
        where = _table_with_index(options, tmp_path / name, w, s)
        _forget_kernels()
        with pytest.raises(CorruptTableError) as err:
            load_table(options, where, build=False)
        assert said in str(err.value) and "\n" not in str(err.value), name
        _forget_kernels()
        r = run("analyze", "start", "--pieces", "4", "--board", options.board_file, "--table", str(where))
        assert r.exit_code == 1 and "Traceback" not in r.output and len(r.output.strip().splitlines()) == 1
        assert said in r.output
    # a change to the file after it was checked: its checksum is computed again, and fails
    where = _table_with_index(options, tmp_path / "changed", good["mirror_words"], sample)
    _forget_kernels()
    load_table(options, where, build=False)
    mapped = np.load(where / "mirror_words.npy", mmap_mode="r+")
    mapped[len(mapped) // 2, 0] ^= 1 << 5
    mapped.flush()
    del mapped
    _forget_kernels()
    with pytest.raises(CorruptTableError) as err:
        load_table(options, where, build=False)
    assert "mirror_words" in str(err.value) and "checksum" in str(err.value)


def test_checksums_are_recomputed_only_when_the_files_change(tmp_path, monkeypatch) -> None:
    from gamesolver.games.ur.solve import load_table
    from gamesolver.solver.tables import table as tables
    from tests.test_ur_opening import random_table

    options = UrOptions(pieces=2)
    where = random_table(options, tmp_path / "t", 7)
    calls = []
    real = tables.Table.verify
    monkeypatch.setattr(tables.Table, "verify", lambda self: calls.append(self.path) or real(self))
    load_table(options, where, build=False)
    load_table(options, where, build=False)
    assert len(calls) == 1
    value = where / "value.npy"
    os.utime(value, ns=(value.stat().st_atime_ns, value.stat().st_mtime_ns + 10**9))
    load_table(options, where, build=False)
    load_table(options, where, build=False, verify=True)  # 'check' asks for it every time
    assert len(calls) == 3


def test_a_table_from_before_the_stored_index_gets_it_from_the_cache(tmp_path, fresh_kernels) -> None:
    from gamesolver.games.ur.solve import (ENCODING, ENCODING_VERSION, GAME, RULE, attach_index, index_cache_dir,
                                           load_table)
    from gamesolver.solver.tables.table import write_table

    options = UrOptions(pieces=2)
    n = stored_state_count(options)
    where = write_table(tmp_path / "old", game=GAME, rule=RULE, encoding=ENCODING, encoding_version=ENCODING_VERSION,
                        state_count=n, options=options.header(), arrays={"value": np.zeros(n, dtype=np.float32)})
    cache = str(tmp_path / "c")
    _forget_kernels()
    table = load_table(options, where, build=False, cache=cache)
    assert (index_cache_dir(options, cache) / "header.json").is_file()
    _forget_kernels()
    assert attach_index(options, table, cache) == "cache"
    words = index_cache_dir(options, cache) / "mirror_words.npy"
    words.write_bytes(words.read_bytes()[:200])  # a damaged cache entry is built again, never used
    _forget_kernels()
    assert attach_index(options, table, cache) == "built"
    _forget_kernels()
    assert attach_index(options, table, cache) == "cache"
    assert not any(p.name.startswith("mirror") for p in where.iterdir())  # the table is left as it was


def test_check_compares_the_whole_stored_index_with_a_new_one(tmp_path, fresh_kernels) -> None:
    from gamesolver.games.ur.solve import index_arrays

    options = UrOptions(pieces=2)  # every value is 0 here, so a table of zeros passes the check
    good = index_arrays(options)
    words = good["mirror_words"].copy()
    nw = len(words)
    spot = {0, nw - 1} | {(i * 0x9E3779B97F4A7C15) % 2**64 % nw for i in range(2, 2 + 16)}
    w = next(w for w in range(nw // 2, nw) if w not in spot and w + 1 not in spot and words[w, 0])
    words[w, 0] = 0  # a word the open's spot checks do not look at (its count no longer adds up)
    for name, arrays, said, code in (("good", good, "matches", 0), ("bad", {**good, "mirror_words": words}, "differs", 1)):
        where = _table_with_index(options, tmp_path / name, arrays["mirror_words"], arrays["mirror_sample"])
        _forget_kernels()
        r = run("check", "--pieces", "2", "--table", str(where), "--json")
        assert r.exit_code == code, r.output
        assert json.loads(r.stdout)["mirror_index"] == said
    r = run("check", "--pieces", "2", "--table", str(where))
    assert "DIFFERS" in r.output and r.exit_code == 1


@pytest.mark.parametrize("memory", [64 * 2**30, 2**30])
def test_missing_table_prices_the_local_solve_as_it_would_run(tmp_path, monkeypatch, memory: int) -> None:
    # where the stored graph fits (the solve's own rule: with the rest, in half of the memory), the
    # solve's full sweeps read it, about nine times faster than regenerating, while its policy
    # sweeps (POLICY_ROUND_SECONDS a state and thread) take as long: the message says which
    from gamesolver.solver.stochastic import outcomes
    from gamesolver.solver.stochastic.planning import POLICY_ROUND_SECONDS, SKIP_SWEEP_SPEEDUP as skipping
    from gamesolver.solver.stochastic.planning import STORED_SWEEP_SPEEDUP as fast

    monkeypatch.setattr(outcomes, "memory_bytes", lambda: memory)
    r = run("analyze", "X:A1,A2,A3 O:- X", "--pieces", "4", "--table", str(tmp_path / "none"), "--json")
    assert r.exit_code == 1
    p = json.loads(r.stdout)["projection"]
    assert 1.2 * 2**30 < p["stored_graph_bytes"] < 2.2 * 2**30  # K = 4's graph: 1.63 GiB when built
    here = p["solve_seconds_here"]
    if memory > 2**30:
        assert p["stored_graph_fits_here"] is True
        policy = POLICY_ROUND_SECONDS * p["states"] / p["cores_here"]  # a round's policy sweeps
        sweep = p["sweep_seconds_here"]
        # regenerating, the walk's full sweeps skip what cannot change (SKIP_SWEEP_SPEEDUP over a walk)
        assert here == pytest.approx([n * (sweep / skipping + policy) for n in p["typical_sweeps"]])
        assert p["solve_seconds_here_stored"] == pytest.approx([n * (sweep / fast + policy) for n in p["typical_sweeps"]])
    else:
        assert p["stored_graph_fits_here"] is False and p["solve_seconds_here_stored"] is None
    text = run("analyze", "X:A1,A2,A3 O:- X", "--pieces", "4", "--table", str(tmp_path / "none")).output
    assert len(text.strip().splitlines()) == 1 and "solver ur solve --pieces 4" in text


def test_a_missing_table_that_takes_minutes_here_gets_one_line(tmp_path) -> None:
    r = run("analyze", "start", "--pieces", "4", "--table", str(tmp_path / "none"))
    lines = r.output.strip().splitlines()
    assert r.exit_code == 1 and len(lines) == 1 and "on this machine" in lines[0]
    assert "'solver ur solve --pieces 4 --out" in lines[0] and "cluster" not in lines[0] and "GPU" not in lines[0]
    assert not (tmp_path / "none").exists()


def test_a_small_table_solves_on_first_use_with_one_line(tmp_path) -> None:
    r = run("analyze", "start", "--pieces", "2", "--cache", str(tmp_path))
    assert r.exit_code == 0
    said = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(said) == 1 and said[0].startswith("solving Ur (fort rules) with 2 pieces and proving it (first use")
    doc = json.loads(run("analyze", "start", "--pieces", "2", "--cache", str(tmp_path), "--json").stdout)
    assert doc["value"] == 0.0 and doc["proven"] is True

