"""The examples in README.md and docs/*.md are real: every ``console`` block's commands are
run and their output compared, every ``pycon`` block is run as a doctest.

Each page runs in a fresh working directory holding a link to ``samples/`` (state carries
over from block to block within a page, as a reader would type them).  In ``console``
blocks, lines starting with ``$ `` are commands (``loganalyze ...`` only, run in-process);
the lines after one are its expected output (stdout then stderr); a line ``...`` stands for
any number of lines, and ``...`` inside a line any text (absolute paths, say).  Trailing
spaces are ignored.
"""
from __future__ import annotations

import doctest
import os
import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = ["README.md", "docs/api.md", "docs/compare.md"]
BLOCK_RE = re.compile(r"^```(console|pycon)\n(.*?)^```", re.M | re.S)


def blocks(page: Path) -> list[tuple[str, str, int]]:
    text = page.read_text(encoding="utf-8")
    return [(m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1) for m in BLOCK_RE.finditer(text)]


def matches(expected: list[str], actual: list[str]) -> bool:
    """Line-by-line equality where a ``...`` line matches any run of lines."""
    if not expected:
        return not actual
    if expected[0] == "...":
        return any(matches(expected[1:], actual[i:]) for i in range(len(actual) + 1))
    return bool(actual) and line_matches(expected[0], actual[0]) and matches(expected[1:], actual[1:])


def line_matches(expected: str, actual: str) -> bool:
    if "..." not in expected:
        return expected == actual
    pattern = ".*".join(re.escape(part) for part in expected.split("..."))
    return re.fullmatch(pattern, actual) is not None


def run_console(block: str, where: str, cli) -> None:
    cmd, expected = None, []

    def check():
        if cmd is None:
            return
        args = shlex.split(cmd)
        assert args[0] == "loganalyze", f"{where}: only loganalyze commands run here: {cmd}"
        res = cli(*args[1:])
        actual = [line.rstrip() for line in (res.stdout + res.stderr).rstrip("\n").splitlines()]
        want = [line.rstrip() for line in expected]
        while want and not want[-1]:
            want.pop()
        assert matches(want, actual), (f"{where}: output of `{cmd}` differs from the page:\n--- page\n"
                                       + "\n".join(want) + "\n--- real\n" + "\n".join(actual))

    for line in block.splitlines():
        if line.startswith("$ "):
            check()
            cmd, expected = line[2:], []
        else:
            expected.append(line)
    check()


def run_pycon(block: str, where: str, globs: dict) -> None:
    parser = doctest.DocTestParser()
    test = parser.get_doctest(block, globs, where, where, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out: list[str] = []
    runner.run(test, out=out.append, clear_globs=False)
    globs.update(test.globs)  # the next block of the page goes on from here
    assert runner.failures == 0, "".join(out)


@pytest.mark.parametrize("page", [p for p in PAGES if (ROOT / p).exists()])
def test_page_examples_are_real(page, tmp_path, monkeypatch, cli):
    found = blocks(ROOT / page)
    if not found:
        pytest.skip(f"{page} has no console or pycon examples")
    (tmp_path / "samples").symlink_to(ROOT / "samples")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LOGANALYZE_DB", raising=False)
    globs: dict = {}
    for kind, body, line in found:
        where = f"{page}:{line}"
        if kind == "console":
            run_console(body, where, cli)
        else:
            run_pycon(body, where, globs)
    for db in globs.values():
        if hasattr(db, "close") and type(db).__name__ == "Database":
            db.close()


def test_matcher_handles_ellipsis():
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert matches(["a", "..."], ["a"])
    assert not matches(["a", "...", "d"], ["a", "b", "c"])
    assert not matches(["a"], ["a", "b"])
    assert matches(["x (...) y"], ["x (/tmp/a b) y"]) and not matches(["x (...) y"], ["x (a) z"])
