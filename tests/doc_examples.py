"""The examples in README.md and docs/*.md that are checked: fenced blocks marked ``console`` hold
commands (lines starting with ``$ solver ``) each followed by the output it prints; a command may
end in ``| head -N`` or ``| tail -N`` to show part of its output. Every such command is run, in
the order the documents list them (README.md, then docs/ by name), with one table cache that
starts empty, so only what ships with the package and what solves in seconds is used; its output
is compared with the block after timings ("(0.5 s)", "in 2.48 s") and the cache folder are
normalised. Blocks that are not marked ``console`` (commands that write files, outputs shortened
with "...") are not compared; their ``$ solver`` commands are run too (``runs``), in a folder of
their own and from a second empty cache, and must succeed (exit 0), so that an example that
needs a table no command built first fails.

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


def shown(text: str, cache: str) -> str:
    """The output as a document shows it: the cache folder as the default one, no trailing blanks."""
    text = text.replace(cache, CACHE_SHOWN)
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def normalise(text: str, cache: str) -> str:
    """What is compared: ``shown``, with how long things took left out."""
    return re.sub(r"(?<=\()\d+(\.\d+)? s\b|(?<=\bin )\d+(\.\d+)? s\b", "N s", shown(text, cache))


def run(command: str, cache: str) -> str:
    """The command's output (stdout, then stderr) as a user sees it, exit code aside."""
    from click.testing import CliRunner
    from gamesolver.solver.cli import cli

    command, _, part = command.partition(" | ")
    words = shlex.split(command)
    if words[0] != "solver":
        raise ValueError(f"an example must run 'solver ...', not {command!r}")
    result = CliRunner().invoke(cli, words[1:], env={"SOLVER_CACHE_DIR": cache, "COLUMNS": "100"})
    lines = result.output.strip("\n").splitlines()  # stdout and stderr interleaved, as a terminal shows them
    if part:
        m = re.fullmatch(r"(head|tail) -(\d+)", part.strip())
        if m is None:
            raise ValueError(f"an example may end in '| head -N' or '| tail -N', not '| {part}'")
        n = int(m.group(2))
        lines = lines[:n] if m.group(1) == "head" else lines[-n:]
    return shown("\n".join(lines), cache)


def commands(path: Path) -> list[str]:
    """The ``$ solver ...`` commands of the fenced blocks not marked ``console`` (a line that also
    runs something else, as ``pip install ... && solver serve`` does, is not one)."""
    out, fence = [], None  # fence: the open block's language ("" unmarked), None outside blocks
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fence = line[3:].strip() if fence is None else None
        elif fence not in (None, "console") and line.startswith("$ solver ") and "&&" not in line:
            out.append(line[2:])
    return out


def runs() -> list[tuple[Path, str, int, str]]:
    """Run the unmarked blocks' commands in a temporary folder, with a cache that starts empty;
    return those that failed: (document, command, exit code, last line said)."""
    from click.testing import CliRunner
    from gamesolver.solver.cli import cli

    failed = []
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as here:
        before = os.getcwd()
        os.chdir(here)
        try:
            for path in documents():
                for command in commands(path):
                    words = shlex.split(command.partition(" | ")[0])
                    result = CliRunner().invoke(cli, words[1:], env={"SOLVER_CACHE_DIR": cache, "COLUMNS": "100"})
                    if result.exit_code != 0:
                        last = (result.output.strip().splitlines() or [repr(result.exception)])[-1]
                        failed.append((path, command, result.exit_code, last))
        finally:
            os.chdir(before)
    return failed


def check(write: bool = False) -> list[tuple[Example, str]]:
    """Run every example; return those whose output differs, each with what it printed (and with
    ``write``, put that in the document, timings as they came out this time)."""
    wrong = []
    with tempfile.TemporaryDirectory() as cache:
        os.environ["SOLVER_CACHE_DIR"] = cache
        for path in documents():
            text = path.read_text(encoding="utf-8")
            found = examples(path)
            for ex in found:
                got = run(ex.command, cache)
                if normalise(got, cache) != normalise(ex.expected, cache):
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
