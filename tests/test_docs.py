"""The project's text stays honest: the examples marked in README.md and docs/ print what they say
(tests/doc_examples.py; `python -m tests.doc_examples --write` refreshes them), links stay inside
the repository, and no text dates itself by work items or by when it was written."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests import doc_examples

ROOT = doc_examples.ROOT
LINK = re.compile(r"\]\(([^)\s]+)\)")
# words that tie a text to when or in which piece of work it was written, not to the project as it is
DATED = re.compile(r"\b(issue|issues|work items?|tickets?) #?\d+|(?<![\w&])#\d+\b|"
                   r"\b(this|that|last|earlier|previous|next|first|second|third|\w+th) "
                   r"sessions?\b|\b(a|the) sessions? (before|after|later|earlier)\b|\bover \w+ sessions\b|"
                   r"\btoday('s)?\b|\byesterday\b|\btonight\b|"
                   r"\bthis (week|morning|afternoon)\b|\b20\d\d-\d\d-\d\d\b", re.IGNORECASE)
# the places where a date is data, not a date of work (tables written by a tool record when)
DATES_ALLOWED = re.compile(r'"(at|created)": "20\d\d-\d\d-\d\d')


def texts() -> list[Path]:
    """README, every doc, and the source files' docstrings and comments (the code's own words)."""
    code = [p for top in ("solver", "games", "benchmarks", "tests") for p in (ROOT / top).rglob("*")
            if p.suffix in (".py", ".pyx", ".pxd", ".sh") and "__pycache__" not in p.parts]
    return doc_examples.documents() + sorted(code)


@pytest.mark.parametrize("path", texts(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_text_dates_itself(path: Path) -> None:
    hits = [f"{i}: {line.strip()}" for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if DATED.search(line) and not DATES_ALLOWED.search(line) and "DATED" not in line]
    assert not hits, "\n".join(hits[:10])


def test_the_dated_pattern_catches_work_items_and_days_and_spares_the_rest() -> None:
    DATED_SAMPLES = [
        "issue 13's tenth session", "today's walk", "see #12 for it", "work item 3",  # DATED
        "on 2026-11-27", "in the session before", "yesterday", "this week",  # DATED
    ]
    plain = ["a session of its own (setsid)", "&#10;", "the third tier", "solved in 5 minutes", "issues of memory"]
    assert [t for t in DATED_SAMPLES if not DATED.search(t)] == []
    assert [t for t in plain if DATED.search(t)] == []


@pytest.mark.parametrize("path", doc_examples.documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_links_stay_inside_the_repository(path: Path) -> None:
    for target in LINK.findall(path.read_text(encoding="utf-8")):
        assert "://" not in target and not target.startswith("mailto:"), f"{path.name} links outside: {target}"
        file = target.split("#")[0]
        if file:
            assert (path.parent / file).resolve().exists(), f"{path.name} links to a missing file: {target}"


def test_readme_and_the_ur_guide_stay_short() -> None:
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 260
    assert len((ROOT / "docs" / "ur.md").read_text(encoding="utf-8").splitlines()) <= 410


def test_the_marked_examples_print_what_the_docs_say() -> None:
    found = [ex for path in doc_examples.documents() for ex in doc_examples.examples(path)]
    assert len(found) >= 6  # the marker is in use: the check means something
    wrong = doc_examples.check()
    assert not wrong, "\n\n".join(f"{ex.path.name}: $ {ex.command}\n{got}" for ex, got in wrong) + \
        "\n(refresh with: python -m tests.doc_examples --write)"


def test_the_other_examples_run_from_an_empty_cache() -> None:
    """The commands shown without their output (they write files, or their output is cut) run
    too, from an empty cache: an example that needs a table nothing has built fails here."""
    found = [c for path in doc_examples.documents() for c in doc_examples.commands(path)]
    assert len(found) >= 5 and any("--out" in c for c in found)
    failed = doc_examples.runs()
    assert not failed, "\n".join(f"{p.name}: $ {c} -> exit {code}: {last}" for p, c, code, last in failed)



def test_the_readmes_python_runs_and_says_what_its_comments_say(tmp_path, monkeypatch) -> None:
    """The README's Python block, run as written from an empty cache: each line whose comment
    shows a value ('# 'spawn on B6'', '# 0.5154047325..') gives it."""
    import re

    monkeypatch.setenv("SOLVER_CACHE_DIR", str(tmp_path))
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"^```python\n(.*?)^```\n", text, re.MULTILINE | re.DOTALL).group(1)
    scope: dict = {}
    checked = 0
    for line in block.splitlines():
        code, _, comment = line.partition("  #")
        if not code.strip():
            continue
        if "=" in code.split("(")[0] or code.startswith(("from ", "import ")):
            exec(code, scope)
            continue
        got = eval(code, scope)
        shown = comment.strip()
        if shown.startswith(("'", "[", "0.", "-0.")):  # a value, written as Python would, maybe cut by '..'
            want = shown.split("..")[0]
            assert repr(got).startswith(want), (code, got, shown)
            checked += 1
    assert checked >= 3
