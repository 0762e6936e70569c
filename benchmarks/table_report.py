"""The figures of a solved fort-rules table that a GPU session brings back instead of the table
(too large to copy): the solve's own JSON line, the table's solve record, SHA-256 of its values
(the whole value.npy file, as ``sha256sum`` gives it), and the start's analysis (its value and
each roll's best action).

    python benchmarks/table_report.py TABLE_DIR PIECES SOLVE_JSON OUT_JSON
"""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path


def main() -> int:
    table, pieces, solve_json, out = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4])
    h = hashlib.sha256()
    with open(table / "value.npy", "rb") as f:
        while chunk := f.read(1 << 24):
            h.update(chunk)
    header = json.loads((table / "header.json").read_text())
    meta = header.get("meta", {})
    analysis = subprocess.run([sys.executable, "-m", "gamesolver.solver", "ur", "analyze", "start", "--pieces", pieces,
                               "--table", str(table), "--json"], capture_output=True, text=True)
    report = {
        "solve": json.loads(solve_json.read_text().strip().splitlines()[-1]),
        "value_npy_sha256": h.hexdigest(),
        "meta": {k: meta.get(k) for k in ("sweeps", "policy_sweeps", "hot_set_states", "graph", "backend",
                                           "bytes_per_state", "solve_seconds_this_run", "graph_build_seconds",
                                           "resumed_at_sweep", "endless_check", "residual", "tolerance")},
        "created": header.get("created"),
        "analyze_start": json.loads(analysis.stdout) if analysis.returncode == 0 else analysis.stderr[-500:],
    }
    out.write_text(json.dumps(report, indent=1))
    print(json.dumps(report)[:4000])
    return 0


if __name__ == "__main__":
    sys.exit(main())
