"""The examples in README.md and docs/*.md that are checked: fenced blocks marked ``console`` hold
commands (lines starting with ``$ solver ``) each followed by the output it prints. Every such
command is run (with an empty table cache, so only what ships with the package and what solves
in seconds is used) and its output compared with the block, after timings and the cache folder
are normalised.

    python -m tests.doc_examples          # say which examples differ (exit 1 if any)
    python -m tests.doc_examples --write  # rewrite the blocks with what the commands print now
"""
from __future__ import annotations

import argparse
import os
import re
import shlex
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^```console\n(.*?)^```\n", re.MULTILINE | re.DOTALL)
CACHE_SHOWN = "~/.cache/gamesolver"


def documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


@dataclass
class Example:
    path: Path
    command: str
    expected: str


def examples(path: Path) -> list[Example]:
    out = []
    for block in FENCE.finditer(path.read_text(encoding="utf-8")):
        command, lines = None, []
        for line in block.group(1).splitlines():
            if line.startswith("$ "):
                if command is not None:
                    out.append(Example(path, command, "\n".join(lines)))
                command, lines = line[2:], []
            else:
                lines.append(line)
        if command is not None:
            out.append(Example(path, command, "\n".join(lines)))
    return out


def normalise(text: str, cache: str) -> str:
    text = text.replace(cache, CACHE_SHOWN)
    text = re.sub(r"\(\d+(\.\d+)? s\)", "(N s)", text)  # how long it took
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def run(command: str, cache: str) -> str:
    """The command's output (stdout, then stderr) as a user sees it, exit code aside."""
    from click.testing import CliRunner
    from gamesolver.solver.cli import cli

    words = shlex.split(command)
    if words[0] != "solver":
        raise ValueError(f"an example must run 'solver ...', not {command!r}")
    result = CliRunner().invoke(cli, words[1:], env={"SOLVER_CACHE_DIR": cache, "COLUMNS": "100"})
    return normalise(result.output, cache)  # stdout and stderr interleaved, as a terminal shows them


def check(write: bool = False) -> list[tuple[Example, str]]:
    """Run every example; return those whose output differs (after rewriting them with ``write``)."""
    wrong = []
    with tempfile.TemporaryDirectory() as cache:
        os.environ["SOLVER_CACHE_DIR"] = cache
        for path in documents():
            text = path.read_text(encoding="utf-8")
            found = examples(path)
            for ex in found:
                got = run(ex.command, cache)
                if got != normalise(ex.expected, cache):
                    wrong.append((ex, got))
                    if write:
                        old = f"$ {ex.command}\n{ex.expected}".rstrip("\n")
                        text = text.replace(old, f"$ {ex.command}\n{got}", 1)
            if write and found:
                path.write_text(text, encoding="utf-8")
    return wrong


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="rewrite the blocks with the commands' output")
    args = ap.parse_args()
    wrong = check(args.write)
    for ex, got in wrong:
        print(f"{ex.path.relative_to(ROOT)}: $ {ex.command}\n--- the document says\n{ex.expected}\n--- it prints\n{got}\n")
    print(f"{len(wrong)} example(s) {'rewritten' if args.write else 'differ'}")
    sys.exit(1 if wrong and not args.write else 0)


if __name__ == "__main__":
    main()
