"""RoyalUr's `.rgu` keys: the numpy path (``rgu.all_state_keys``, chunks of unranked states through
byte tables) against the per-state Python path (``KeyEncoding.state_key`` of ``Encoding.unrank``),
both measured in this run, the slow one on a sample; then, given a solved table, the whole export
(``rgu.write_values``) and reading it back (``rgu.values_from_table``) timed, with the process's
peak memory.

    python benchmarks/bench_rgu.py --rules finkel [--table DIR]
"""
from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

import numpy as np

from gamesolver.games.ur import rgu, royal
from gamesolver.games.ur.royal_table import royal_game


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rules", default="finkel")
    ap.add_argument("--pieces", type=int, default=None)
    ap.add_argument("--table", type=Path, default=None, help="a solved table of the rule set, to export whole")
    ap.add_argument("--sample", type=int, default=20_000)
    args = ap.parse_args()
    rules = royal.load_ruleset(args.rules, args.pieces)
    enc, ke, game = royal.encoding(rules), rgu.key_encoding(rules), royal_game(rules)
    ranks = np.sort(np.random.default_rng(0).choice(enc.size, min(args.sample, enc.size), replace=False))
    t = time.perf_counter()
    slow = [ke.state_key(enc.unrank(int(r))) for r in ranks]
    slow_us = (time.perf_counter() - t) / ranks.size * 1e6
    block = np.arange(min(enc.size, rgu.CHUNK), dtype=np.int64)
    t = time.perf_counter()
    fast = ke.keys_of(*game.unrank_many(block))
    fast_us = (time.perf_counter() - t) / block.size * 1e6
    assert list(ke.keys_of(*game.unrank_many(ranks))) == slow
    print(f"{rules.name}, {rules.pieces} pieces, {enc.size:,} states: keys {fast_us:.3f} us a state in numpy, "
          f"{slow_us:.1f} us in Python ({slow_us / fast_us:.0f}x); the whole table's keys would take "
          f"{fast_us * enc.size / 1e6:.0f} s against {slow_us * enc.size / 60e6:.0f} minutes")
    del fast
    if args.table is None:
        return
    from gamesolver.games.ur.royal_table import load_royal_table

    values = (1.0 + np.asarray(load_royal_table(rules, args.table, build=False)["value"], dtype=np.float64)) / 2.0
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "t.rgu"
        t = time.perf_counter()
        rgu.write_values(out, rules, values, "percent16")
        write_s = time.perf_counter() - t
        t = time.perf_counter()
        back = rgu.values_from_table(rgu.read_rgu(out), rules)
        read_s = time.perf_counter() - t
        worst = float(np.max(np.abs(back - values)))
        size = out.stat().st_size
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"export of the whole table: {write_s:.1f} s ({size / 2**20:.0f} MiB percent16); reading it back into "
          f"values: {read_s:.1f} s, largest difference {worst:.1e} (one percent16 step is 1.5e-5); peak memory "
          f"{peak:.2f} GiB (the values {values.nbytes / 2**30:.2f} GiB)")


if __name__ == "__main__":
    main()
