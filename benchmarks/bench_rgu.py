"""RoyalUr's `.rgu` files: writing and reading a whole table, timed, each in a process of its own.

1. Keys, both measured in this run: the per-state Python path (``KeyEncoding.state_key`` of
   ``Encoding.unrank``, the reference) on a sample of ranks, against the numpy path
   (``unrank_many`` and ``keys_of``) on a chunk of a million.
2. The whole export: with ``--table DIR``, ``solver ur export --format rgu`` on that solved table
   (what a user runs); without, ``rgu.write_values`` on random values (the keys, the sort and the
   file are the same work; only the numbers stored differ). Wall time, positions per second, and
   the process's peak memory (the values themselves are 8 bytes a state of it).
3. Reading the file back: ``rgu.read_rgu`` and ``rgu.values_from_table`` over every rank in a
   fresh process; its peak resident memory split into anonymous memory (the values it returns,
   the scratch) and file pages (the memory-mapped file, which the page cache already holds: the
   file is not copied into the process). Then a thousand single look-ups (``percent_at``), whose
   peak shows no map is copied per look-up.

    python benchmarks/bench_rgu.py --rules finkel [--table DIR] [--value-type percent16]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from gamesolver.games.ur import rgu, rgu_keys, royal, royal_encoding
from gamesolver.games.ur.royal_table import royal_game

GIB = 2**30


def _status(field: str) -> int:
    """A field of /proc/self/status in bytes (VmHWM: peak resident; RssAnon, RssFile: now)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


def _values(args: argparse.Namespace, n: int) -> np.ndarray:
    if args.table is None:
        return np.random.default_rng(1).random(n)
    from gamesolver.games.ur.royal_table import load_royal_table

    return (1.0 + np.asarray(load_royal_table(args.rules_set, args.table, build=False)["value"], np.float64)) / 2.0


def phase_write(args: argparse.Namespace) -> dict:
    rules = args.rules_set
    values = _values(args, royal_game(rules).state_count)
    t = time.perf_counter()
    rgu.write_values(args.out, rules, values, args.value_type, {"author": "bench_rgu"})
    return {"seconds": time.perf_counter() - t, "peak": _status("VmHWM"), "values": values.nbytes}


def phase_read(args: argparse.Namespace) -> dict:
    rules = args.rules_set
    t = time.perf_counter()
    table = rgu.read_rgu(args.out)
    opened = time.perf_counter() - t
    back = rgu.values_from_table(table, rules)
    seconds = time.perf_counter() - t
    peak, anon, file_pages = _status("VmHWM"), _status("RssAnon"), _status("RssFile")
    values = _values(args, back.size)
    # half a stored step: percent16's 1/65535, float32's 2**-24 of 100 %, float64's rounding
    step = {"percent16": 0.5 / rgu.PERCENT16_MAX, "f32": 2.0**-24, "f64": 0.0}[rgu.value_type_name(args.value_type)]
    worst = float(np.max(np.abs(back - values)))
    return {"seconds": seconds, "open_seconds": opened, "peak": peak, "anon": anon, "file": file_pages,
            "out": back.nbytes, "worst": worst, "within": worst <= step + 1e-15}


def phase_probe(args: argparse.Namespace) -> dict:
    rules = args.rules_set
    enc, ke = royal_encoding.encoding(rules), rgu_keys.key_encoding(rules)
    table = rgu.read_rgu(args.out)
    base, anon, file_pages = _status("VmHWM"), _status("RssAnon"), _status("RssFile")
    ranks = np.random.default_rng(2).integers(0, enc.size, 1000)
    t = time.perf_counter()
    for r in ranks:
        table.percent_at(ke.state_key(enc.unrank(int(r))))
    seconds = time.perf_counter() - t
    return {"us_per_lookup": seconds / ranks.size * 1e6, "peak_after_open": base, "anon": anon, "file": file_pages,
            "peak": _status("VmHWM"), "anon_end": _status("RssAnon"), "file_end": _status("RssFile")}


def child(args: argparse.Namespace, phase: str) -> tuple[dict, float]:
    """Run a phase in a fresh process; its result and its wall time."""
    cmd = [sys.executable, __file__, "--phase", phase, "--rules", args.rules, "--value-type", args.value_type,
           "--out", str(args.out)]
    if args.pieces is not None:
        cmd += ["--pieces", str(args.pieces)]
    if args.table is not None:
        cmd += ["--table", str(args.table)]
    t = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1]), time.perf_counter() - t


def export_cli(args: argparse.Namespace) -> tuple[float, int]:
    """``solver ur export --format rgu`` as a user runs it: wall time and the process's peak."""
    cmd = [sys.executable, "-m", "gamesolver.solver", "ur", "export", "--format", "rgu", "--rules", args.rules,
           "--table", str(args.table), "--out", str(args.out), "--value-type", args.value_type]
    if args.pieces is not None:
        cmd += ["--pieces", str(args.pieces)]
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"export failed: {' '.join(cmd)}")
    return seconds, usage.ru_maxrss * 1024


def keys_compared(rules: royal.RuleSet, sample: int) -> tuple[float, float]:
    """Microseconds a state: the per-state Python key (on ``sample`` ranks) and numpy (a chunk)."""
    enc, ke, game = royal_encoding.encoding(rules), rgu_keys.key_encoding(rules), royal_game(rules)
    ranks = np.sort(np.random.default_rng(0).choice(enc.size, min(sample, enc.size), replace=False))
    t = time.perf_counter()
    slow = [ke.state_key(enc.unrank(int(r))) for r in ranks]
    slow_us = (time.perf_counter() - t) / ranks.size * 1e6
    block = np.arange(enc.size // 2, min(enc.size // 2 + rgu_keys.CHUNK, enc.size), dtype=np.int64)
    ke.keys_of(*game.unrank_many(block[:1000]))  # tables built outside the timing
    t = time.perf_counter()
    ke.keys_of(*game.unrank_many(block))
    fast_us = (time.perf_counter() - t) / block.size * 1e6
    assert ke.keys_of(*game.unrank_many(ranks)).tolist() == slow
    return slow_us, fast_us


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rules", default="finkel")
    ap.add_argument("--pieces", type=int, default=None)
    ap.add_argument("--table", type=Path, default=None, help="a solved table of the rule set, exported whole")
    ap.add_argument("--value-type", default="percent16")
    ap.add_argument("--sample", type=int, default=20_000, help="ranks the per-state Python path is timed on")
    ap.add_argument("--phase", choices=["write", "read", "probe"], default=None, help=argparse.SUPPRESS)
    ap.add_argument("--out", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    args.rules_set = royal.load_ruleset(args.rules, args.pieces)
    if args.phase is not None:
        print(json.dumps({"write": phase_write, "read": phase_read, "probe": phase_probe}[args.phase](args)))
        return
    rules = args.rules_set
    n = royal_game(rules).state_count
    slow_us, fast_us = keys_compared(rules, args.sample)
    print(f"{rules.name}, {rules.pieces} pieces, {n:,} states, {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f}")
    print(f"keys: {slow_us:.2f} us a state per state in Python ({args.sample:,} sampled ranks), {fast_us:.4f} us in "
          f"numpy (unrank_many + keys_of, a chunk of {rgu_keys.CHUNK:,}): {slow_us / fast_us:.0f}x; the Python path "
          f"would take {slow_us * n / 60e6:.1f} minutes for the keys alone")
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as tmp:
        args.out = Path(tmp) / "t.rgu"
        if args.table is not None:
            write_s, peak = export_cli(args)
            what, extra = f"solver ur export --format rgu --table {args.table}", ""
        else:
            w, write_s = child(args, "write")
            peak = w["peak"]
            what = "rgu.write_values on random values (no --table)"
            extra = f" (writing alone {w['seconds']:.1f} s)"
        size = args.out.stat().st_size
        print(f"export, measured: {what}: {write_s:.1f} s{extra} wall, {n / write_s / 1e6:.2f} M states/s "
              f"({write_s / n * 1e6:.3f} us a state, {slow_us * n / write_s / 1e6:.0f}x the Python keys alone), "
              f"{size / 2**20:.0f} MiB {rgu.value_type_name(args.value_type)}; peak memory {peak / GIB:.2f} GiB, "
              f"the values {8 * n / GIB:.2f} GiB of it")
        r, _ = child(args, "read")
        print(f"read back: read_rgu {r['open_seconds']:.1f} s (order check, fence index), values_from_table of "
              f"every rank {r['seconds']:.1f} s in all, largest difference {r['worst']:.1e} "
              f"({'within' if r['within'] else 'NOT within'} half a stored step); peak resident "
              f"{r['peak'] / GIB:.2f} GiB: at the end {r['anon'] / GIB:.2f} GiB anonymous (the values returned "
              f"{r['out'] / GIB:.2f} GiB) and {r['file'] / GIB:.2f} GiB of the mapped file ({size / GIB:.2f} GiB "
              f"on disk)")
        p, _ = child(args, "probe")
        print(f"single look-ups: {p['us_per_lookup']:.0f} us each (percent_at, key in Python); after opening "
              f"{p['anon'] / GIB:.2f} GiB anonymous and {p['file'] / GIB:.2f} GiB of file pages (the keys the order "
              f"check read), after a thousand look-ups {p['anon_end'] / GIB:.2f} and {p['file_end'] / GIB:.2f} GiB "
              f"(pages read ahead around each look-up); peak {p['peak'] / GIB:.2f} GiB")
    peak_self = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(f"(this process, the key comparison: peak {peak_self / GIB:.2f} GiB)")


if __name__ == "__main__":
    main()
