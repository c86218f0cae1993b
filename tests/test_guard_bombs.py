"""Issue 9, bounded resources: decompression bombs, over-long lines, files of newlines.

The hostile inputs are written here with zlib, streaming (scripts/bench_bombs.py's writers:
a few KB compressed); the full-size cases of the issue run with that script.  Peak memory is
measured in a child process (``os.wait4`` gives that child's own maximum RSS)."""
from __future__ import annotations

import gzip
import importlib.util
import os
import sys
from pathlib import Path

import pytest

from loganalyze import lines as lines_mod
from loganalyze.inputs import EXPAND_FREE_BYTES, FileRefused, InputFile
from loganalyze.lines import LONG_LINE_KEEP, MAX_LINE_BYTES, LineStats, iter_line_batches, iter_lines

MB = 1 << 20
#: the issue's bound, and what these small cases must stay far under
ISSUE_BOUND_MB = 1536
PEAK_MB = 600
REORDER = "onednn_verbose,exec,cpu,reorder,simple:any,undef,src_f32::blocked:a::f0 dst_f32::blocked:a::f0,,,8"


def _bombs():
    spec = importlib.util.spec_from_file_location(
        "bench_bombs", Path(__file__).resolve().parents[1] / "scripts" / "bench_bombs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


bombs = _bombs()


def run_child(*args: str, tmp: Path) -> tuple[int, float, str]:
    """``loganalyze ARGS`` in a child process with its temporary folder in ``tmp``:
    (exit code, peak RSS in MB, stderr)."""
    env = dict(os.environ, TMPDIR=str(tmp), LOGANALYZE_TMPDIR=str(tmp))
    code, _seconds, peak_mb, err = bombs.measure(list(args), env)
    return code, peak_mb, err


@pytest.fixture
def scratch(tmp_path) -> Path:
    d = tmp_path / "tmp"
    d.mkdir()
    return d


# --------------------------------------------------------------------------- decompression limit
@pytest.mark.parametrize("case,suffix,size", [
    ("newlines", ".log.gz", 20 * MB),       # the issue's 127 KB .log.gz of newlines, cut short
    ("one_long_line", ".log.gz", 64 * MB),  # one line in a .gz of 64 KB
    ("sqlite_zeros", ".sqlite.gz", 64 * MB),  # an SQLite header, then zeros
])
def test_bomb_is_refused_with_its_ratio_in_bounded_memory(tmp_path, scratch, case, suffix, size):
    path = tmp_path / ("bomb" + suffix)
    packed = getattr(bombs, case)(str(path), size)
    assert packed < 256 * 1024
    code, peak, err = run_child("ingest", "--db", str(tmp_path / "b.duckdb"), str(path), tmp=scratch)
    assert code == 2, err
    (line,) = err.splitlines()
    assert line.startswith(f"error: {path}: decompresses to more than 100 times its size (ratio ")
    assert "--max-expand" in line and "Traceback" not in err
    assert peak < PEAK_MB <= ISSUE_BOUND_MB, f"peak RSS {peak:.0f} MB"
    assert list(scratch.iterdir()) == []  # no temporary file left (the SQLite spool included)


def spaces(n_mb: int) -> str:
    """``n_mb`` lines of 1 MiB of spaces: compresses 1000 times, costs little to read."""
    return (" " * (MB - 1) + "\n") * n_mb


def test_max_expand_raises_the_limit_and_zero_lifts_it(tmp_path, ingest_files, query):
    body = spaces(EXPAND_FREE_BYTES // MB + 1) + REORDER + ",0.5\n"
    path = tmp_path / "sparse.log.gz"
    path.write_bytes(gzip.compress(body.encode(), 9))
    (res,) = ingest_files([path])
    assert res.status == "error" and "decompresses to more than 100 times" in res.message
    (res,) = ingest_files([path], max_expand=5)
    assert res.status == "error" and "more than 5 times" in res.message
    (res,) = ingest_files([path], max_expand=0)
    assert res.status == "ingested", res.message
    assert query("SELECT count(*) FROM onednn_events")[0][0] == 1


def test_ordinary_compression_passes(tmp_path, ingest_files):
    """A log that compresses 20-50 times, and a small file that compresses far more than
    100 times, are read: the limit starts past the first MBs."""
    path = tmp_path / "small.log.gz"
    body = ((REORDER + ",0.5\n") * 50_000).encode()
    path.write_bytes(gzip.compress(body, 9))
    assert len(body) > 100 * os.path.getsize(path) and len(body) < EXPAND_FREE_BYTES
    (res,) = ingest_files([path])
    assert res.status == "ingested", res.message


def test_limit_is_checked_by_the_one_reader(tmp_path):
    path = tmp_path / "z.gz"
    bombs.newlines(str(path), EXPAND_FREE_BYTES + 8 * MB)
    file = InputFile(str(path))
    with pytest.raises(FileRefused, match=r"z.gz: decompresses to more than 100 times its size \(ratio \d+"):
        for _ in file.chunks():
            pass
    assert file.head(10) == b"\n" * 10  # the head is read before any limit


def test_cli_max_expand_option(tmp_path, cli):
    path = tmp_path / "sp.log.gz"
    path.write_bytes(gzip.compress(spaces(EXPAND_FREE_BYTES // MB + 4).encode(), 9))
    db = str(tmp_path / "c.duckdb")
    r = cli("ingest", "--db", db, path)
    assert r.exit_code == 2 and "decompression bomb" in r.stderr and "(--max-expand RATIO" in r.stderr
    r = cli("ingest", "--db", db, "--max-expand", "100000", path)
    assert r.exit_code == 2 and "not a recognised format" in r.stderr  # read to the end: only spaces


# --------------------------------------------------------------------------- long lines, many lines
def test_long_line_is_never_held_and_is_reported_with_its_length(tmp_path, scratch):
    path = tmp_path / "long.log.gz"
    size = 160 * MB
    bombs.one_long_line(str(path), size)
    db = tmp_path / "l.duckdb"
    code, peak, err = run_child("ingest", "--db", str(db), "--max-expand", "0", str(path), tmp=scratch)
    assert code == 0, err
    assert peak < PEAK_MB, f"peak RSS {peak:.0f} MB for a {size // MB} MB line"
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT lines_total, lines_parsed, lines_non_verbose FROM sources").fetchall() == [(2, 1, 1)]
    con.close()
    assert list(scratch.iterdir()) == []


@pytest.mark.parametrize("chunk", [7, 1000, 1 << 20])
def test_long_lines_across_chunks(tmp_path, monkeypatch, chunk):
    """Lines longer than the limit, starting and ending anywhere in the chunks, are rejected
    with their length and first bytes; the others come through whole."""
    monkeypatch.setattr(lines_mod, "MAX_LINE_BYTES", 100)
    long_a = "a" * 250
    long_b = "b" * 101 + "\r"
    text = f"one\n{long_a}\ntwo\r\n{long_b}\n" + "x" * 100 + "\n" + "c" * 300
    path = tmp_path / "l.log"
    path.write_text(text)
    file = InputFile(str(path))
    monkeypatch.setattr(InputFile, "chunks", lambda self, *a, **k: iter(
        [text.encode()[i:i + chunk] for i in range(0, len(text), chunk)]))
    stats = LineStats()
    rejected, rows = [], []
    for batch in iter_line_batches(file, stats):
        rejected += [(n, r, raw[:3]) for n, r, raw in batch.rejected]
        rows += batch.table.column("line").to_pylist()
    assert rejected == [(2, "line too long (250 bytes)", b"aaa"), (4, "line too long (102 bytes)", b"bbb"),
                        (5, "line too long (100 bytes)", b"xxx"), (6, "line too long (300 bytes)", b"ccc")]
    assert rows == ["one\n", "\n", "two\r\n", "\n", "\n", "\n"]
    assert (stats.lines, stats.crlf, stats.ends_with_newline) == (6, 2, False)


def test_rejected_long_line_keeps_only_its_head(tmp_path):
    path = tmp_path / "l.log"
    path.write_bytes(b"z" * (MAX_LINE_BYTES * 3) + b"\nok\n")
    got = list(iter_lines(InputFile(str(path)), LineStats()))
    assert [n for n, _ in got] == [1, 2]
    assert len(got[0][1]) == LONG_LINE_KEEP and got[1] == (2, "ok")


def test_many_short_lines_come_in_bounded_batches(tmp_path, monkeypatch):
    monkeypatch.setattr(lines_mod, "MAX_LINES_PER_BATCH", 1000)
    monkeypatch.setattr(lines_mod, "_SPLIT_WINDOW", 777)
    path = tmp_path / "n.log"
    path.write_bytes(b"\n" * 10_500 + b"a\n" * 10 + b"tail")
    stats = LineStats()
    batches = list(iter_line_batches(InputFile(str(path)), stats))
    assert max(b.count for b in batches) <= 1000
    assert sum(b.count for b in batches) == stats.lines == 10_511
    firsts = [b.first_line for b in batches]
    assert firsts == sorted(firsts) and firsts[0] == 1
    assert batches[-1].table.column("line").to_pylist()[-1] == "tail\n"


def test_file_of_newlines_in_bounded_memory(tmp_path, scratch):
    path = tmp_path / "nl.log"
    with open(path, "wb") as f:
        for _ in range(16):  # before issue 9: 700 MB peak
            f.write(b"\n" * MB)
    code, peak, err = run_child("ingest", "--db", str(tmp_path / "n.duckdb"), str(path), tmp=scratch)
    assert code == 2 and "not a recognised format" in err
    assert peak < PEAK_MB, f"peak RSS {peak:.0f} MB"


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss in KB is Linux's unit")
def test_measure_reports_the_childs_own_peak(tmp_path):
    code, _s, peak, _err = bombs.measure(["--version"])
    assert code == 0 and 10 < peak < PEAK_MB
