"""The input layer: standard input, the one byte reader's policy for damaged gzip, and the
one line splitter's rules."""
from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loganalyze.inputs import STDIN, InputFile, expand_paths
from loganalyze.lines import LineStats, iter_line_batches, iter_lines

GOOD = [
    "dnnl_verbose,info,oneDNN v1.7.0 (commit 7aed236906b1f7a05c0917e5257a1af05e9ff683)",
    "dnnl_verbose,exec,cpu,reorder,jit:uni,undef,src_f32::blocked:abcd:f0 dst_f32::blocked:aBcd8b:f0,,,2x16x7x7,0.5",
    "dnnl_verbose,exec,cpu,reorder,jit:uni,undef,src_f32::blocked:abcd:f0 dst_f32::blocked:aBcd8b:f0,,,2x16x7x7,0.25",
]
LOG = ("\n".join(GOOD) + "\n").encode()


@pytest.fixture
def stdin_bytes(monkeypatch, tmp_path):
    """``stdin_bytes(data)`` makes standard input hold ``data``; temporary files go to a
    folder of their own (returned) so that the test can see them go away."""
    spool = tmp_path / "tmp"
    spool.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spool))

    def set_input(data: bytes):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
        return spool

    return set_input


# --------------------------------------------------------------------------- standard input
def test_dash_passes_through_expand_paths(tmp_path):
    (tmp_path / "a.log").write_bytes(LOG)
    assert [c.path for c in expand_paths(["-", str(tmp_path / "a.log"), "-"])] == ["-", str(tmp_path / "a.log")]
    assert expand_paths(["-"])[0].error is None


@pytest.mark.parametrize("compress", [False, True])
def test_stdin_is_ingested_as_a_source_named_stdin(stdin_bytes, ingest_files, query, compress):
    spool = stdin_bytes(gzip.compress(LOG) if compress else LOG)
    (res,) = ingest_files(["-"], run_label="nightly")
    assert res.status == "ingested", res.message
    assert query("SELECT path, name, run_label, lines_parsed, compression FROM sources") == [
        ("-", "<stdin>", "nightly", 3, "gzip" if compress else None)]
    assert query("SELECT count(*) FROM onednn_events")[0][0] == 3
    assert list(spool.iterdir()) == []  # the spooled copy is gone


def test_stdin_spool_is_removed_when_the_input_fails(stdin_bytes, ingest_files, query):
    spool = stdin_bytes(b"nothing of interest\n")
    (res,) = ingest_files(["-"])
    assert res.status == "error" and res.message.startswith("<stdin>: ")
    assert list(spool.iterdir()) == []


def test_empty_stdin(stdin_bytes, ingest_files):
    spool = stdin_bytes(b"")
    (res,) = ingest_files(["-"])
    assert res.status == "error" and "empty" in res.message
    assert list(spool.iterdir()) == []


def test_stdin_twice_is_a_duplicate_of_the_same_bytes(stdin_bytes, ingest_files):
    stdin_bytes(LOG)
    ingest_files(["-"])
    stdin_bytes(LOG)
    (res,) = ingest_files(["-"])
    assert res.status == "duplicate"


def test_input_file_close_removes_the_spool(stdin_bytes):
    spool = stdin_bytes(LOG)
    with InputFile(STDIN) as f:
        assert f.path == "<stdin>" and f.source_path == "-" and b"".join(f.chunks()) == LOG
        assert len(list(spool.iterdir())) == 1
    assert list(spool.iterdir()) == []


# --------------------------------------------------------------------------- damaged gzip
def test_cut_json_gz_keeps_complete_events_and_is_flagged(tmp_path, ingest_files, query):
    events = [{"ph": "X", "cat": "cpu_op", "name": f"op{i % 3}", "pid": 1, "tid": 1, "ts": i * 10, "dur": 5}
              for i in range(20000)]
    data = gzip.compress(json.dumps({"traceEvents": events}).encode(), mtime=0)
    p = tmp_path / "cut.json.gz"
    p.write_bytes(data[: len(data) * 2 // 3])
    (res,) = ingest_files([p])
    assert res.status == "ingested", res.message
    n = query("SELECT count(*) FROM trace_events")[0][0]
    assert 0 < n < len(events)
    assert query("SELECT truncated FROM sources") == [(True,)]
    assert [w for w in res.warnings if "partial data" in w and "gzip stream is cut off" in w
            and f"the {n} complete trace event(s)" in w]


def test_cut_text_table_gz_keeps_complete_lines_and_is_flagged(tmp_path, ingest_files, query):
    rows = "\n".join(f"conv{i}            {i + 1}         {i * 2.5:.4f}          1.0000          "
                     f"2.0000          {i * 2.5 / (i + 1):.4f}" for i in range(3000))
    text = ("Profile Statistics:\n\tNote the difference in units for different entries.\n"
            "Device Storage\n=================\nName                          Total Count        "
            "Time (ms)    Min Time (ms)    Max Time (ms)    Avg Time (ms)\n"
            "----                          -----------        ---------    -------------    "
            "-------------    -------------\n" + rows + "\n")
    data = gzip.compress(text.encode(), mtime=0)
    p = tmp_path / "profile.txt.gz"
    p.write_bytes(data[: len(data) // 2])
    (res,) = ingest_files([p])
    assert res.status == "ingested", res.message
    assert query("SELECT truncated FROM sources") == [(True,)]
    assert any("partial data" in w for w in res.warnings)


# --------------------------------------------------------------------------- the line splitter
def _file(tmp_path, data: bytes) -> InputFile:
    p = tmp_path / "x.log"
    p.write_bytes(data)
    return InputFile(str(p))


def test_line_rules_in_both_forms(tmp_path):
    data = b"\xef\xbb\xbfone\r\ntwo\rstill two\n\nbad \xff\nlast"
    f = _file(tmp_path, data)
    stats = LineStats()
    assert list(iter_lines(f, stats)) == [(1, "one"), (2, "two\rstill two"), (3, ""), (4, "bad \ufffd"), (5, "last")]
    assert (stats.lines, stats.crlf, stats.ends_with_newline) == (5, 1, False)
    stats2 = LineStats()
    batches = list(iter_line_batches(f, stats2))
    values = [v for b in batches for v in b.table.column("line").to_pylist()]
    assert values == ["one\r\n", "two\rstill two\n", "\n", "\n", "last\n"]
    assert [(n, r) for b in batches for n, r, _ in b.rejected] == [(4, "invalid UTF-8")]
    assert (stats2.lines, stats2.crlf, stats2.ends_with_newline) == (5, 1, False)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([b"ab", b"\n", b"\r\n", b"\xef\xbb\xbf", b"\xff", b"x" * 40]), max_size=60).map(b"".join),
       st.sampled_from([1, 2, 3, 7, 64, 4096]))
def test_whole_line_chunks_are_the_file_in_order_and_end_at_newlines(data, size):
    """The chunks the line splitter reads (each read into its own buffer after the partial
    line the one before ended with): every byte once, in order, hashed as read."""
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "x.log"
        path.write_bytes(data)
        whole, plain = InputFile(str(path)), InputFile(str(path))
        chunks = [bytes(c) for c in whole.chunks(size, whole_lines=True)]
        assert b"".join(chunks) == data == b"".join(plain.chunks(size))
        assert all(c.endswith(b"\n") or b"\n" not in c for c in chunks[:-1])
        assert whole.sha256 == plain.sha256 == hashlib.sha256(data).hexdigest()
        assert whole.content_bytes == len(data)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from([b"ab", b"\n", b"\r\n", b"x" * 40]), max_size=60).map(b"".join),
       st.sampled_from([1, 3, 64]), st.sampled_from(["buffer", "memoryview", "numpy", "arrow"]))
def test_whole_line_chunks_held_by_a_reader_are_not_read_into_again(data, size, hold):
    """A chunk something still refers to (the buffer itself, or a view of its bytes) is not
    reused for a later read: every chunk kept keeps its bytes."""
    import numpy as np
    import pyarrow as pa

    keep = {"buffer": lambda c: c, "memoryview": memoryview, "numpy": lambda c: np.frombuffer(c, dtype=np.uint8),
            "arrow": pa.py_buffer}[hold]
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "x.log"
        path.write_bytes(data)
        kept = [keep(c) for c in InputFile(str(path)).chunks(size, whole_lines=True)]
        assert b"".join(bytes(k) for k in kept) == data


@pytest.mark.parametrize("hold", ["memoryview", "numpy", "arrow", "slice view"])
def test_spare_buffers_are_reused_only_once_nothing_refers_to_them(hold):
    import numpy as np
    import pyarrow as pa

    from loganalyze.spare_buffers import SpareBuffers

    keep = {"memoryview": memoryview, "numpy": lambda b: np.frombuffer(b, dtype=np.uint8),
            "arrow": pa.py_buffer, "slice view": lambda b: memoryview(b)[2:4]}[hold]
    spares = SpareBuffers(keep=2)
    first = spares.take(8)
    first_id = id(first)
    view = keep(first)
    del first
    second = spares.take(8)
    assert id(second) != first_id and spares.made == 2  # the view still refers to the first
    del view
    third = spares.take(16)
    assert id(third) == first_id and len(third) == 16 and spares.reused == 1  # free, reused, grown
    del third
    assert len(spares.take(3)) == 3 and spares.made == 2  # reused again, cut to the size asked for


def test_sha256_in_background(tmp_path, monkeypatch):
    """A reader that opens the file itself (SQLite, DuckDB) has its sha256 computed on a
    helper thread: the same digest (a chunks pass meanwhile leaves the hashing to it), and a
    file that changed meanwhile is refused where the sha256 is read."""
    data = b"".join(b"row %d\n" % i for i in range(200_000))
    p = tmp_path / "x.sqlite"
    p.write_bytes(data)
    f = InputFile(str(p))
    f.hash_in_background()
    f.hash_in_background()  # once is enough
    assert not f.has_sha256  # not known until read
    assert b"".join(f.chunks()) == data
    assert not f.has_sha256
    assert f.sha256 == hashlib.sha256(data).hexdigest() and f.has_sha256

    from loganalyze import inputs

    g = InputFile(str(p))
    plain_sha256 = InputFile._plain_sha256

    def append_first(self):
        with open(p, "ab") as out:
            out.write(b"late row\n")
        return plain_sha256(self)

    monkeypatch.setattr(InputFile, "_plain_sha256", append_first)
    g.hash_in_background()
    with pytest.raises(inputs.FileRefused, match="changed while being read"):
        g.sha256


def test_cut_line_of_damaged_gzip_is_rejected(tmp_path):
    data = gzip.compress(b"".join(b"line %d\n" % i for i in range(100000)), mtime=0)
    p = tmp_path / "x.log.gz"
    p.write_bytes(data[: len(data) // 2])
    f = InputFile(str(p))
    cut = []
    lines = list(iter_lines(f, LineStats(), on_cut=lambda n, raw: cut.append((n, raw))))
    assert f.truncated and "cut off" in f.damage
    assert lines[-1][0] + 1 == cut[0][0] and not cut[0][1].endswith(b"\n")
    assert all(text == f"line {n - 1}" for n, text in lines)


def test_hash_ahead_is_taken_over_by_the_file_read_later(tmp_path, monkeypatch):
    """The CLI starts a big file's sha256 before its imports; the InputFile made later for
    the same unchanged file takes that hash over, a changed file is hashed again."""
    from loganalyze import inputs

    monkeypatch.setattr(inputs, "HASH_AHEAD_MIN_BYTES", 1000)
    data = b"".join(b"row %d\n" % i for i in range(10_000))
    p = tmp_path / "big.log"
    p.write_bytes(data)
    small = tmp_path / "small.log"
    small.write_bytes(b"x\n")
    for path in (str(small), str(tmp_path), str(tmp_path / "missing.log"), "-"):
        inputs.hash_ahead(path)
    assert inputs._HASHED_AHEAD == {}
    inputs.hash_ahead(str(tmp_path / "." / "big.log"))
    assert list(inputs._HASHED_AHEAD) == [os.path.realpath(p)]
    f = InputFile(str(p))
    assert inputs._HASHED_AHEAD == {} and f._hashing is not None
    assert f.sha256 == hashlib.sha256(data).hexdigest()

    inputs.hash_ahead(str(p))
    p.write_bytes(data + b"more\n")  # changed after the hash began: not the file read now
    g = InputFile(str(p))
    assert g._hashing is None and inputs._HASHED_AHEAD == {}
    assert g.sha256 == hashlib.sha256(data + b"more\n").hexdigest()


def _in_a_process_of_one_thread(code: str) -> str:
    """What ``code`` prints, run by a fresh interpreter (a process that may fork)."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip()


def test_hash_ahead_runs_in_a_child_process(tmp_path):
    """In a process of one thread (the CLI at its start) the hash ahead runs in a forked
    child, which has a GIL of its own; its answer, and the error of a file it cannot read,
    come back through a pipe."""
    data = b"".join(b"row %d\n" % i for i in range(10_000))
    p = tmp_path / "big.log"
    p.write_bytes(data)
    code = f"""
import os
from loganalyze import inputs
forks = []
real_fork = os.fork
os.fork = lambda: forks.append(1) or real_fork()
inputs.HASH_AHEAD_MIN_BYTES = 1000
inputs.hash_ahead({str(p)!r})
f = inputs.InputFile({str(p)!r})
print(f.sha256, len(forks))
g = inputs.InputFile({str(p)!r})
g.hash_in_background(in_child=True)
print(g.sha256, len(forks))
h = inputs.InputFile({str(p)!r})
os.rename({str(p)!r}, {str(p)!r} + ".gone")  # unreadable when the child opens it
h.hash_in_background(in_child=True)
try:
    h.sha256
except inputs.InputError as exc:
    print(type(exc).__name__, exc)
"""
    want = hashlib.sha256(data).hexdigest()
    assert _in_a_process_of_one_thread(code).splitlines() == [
        f"{want} 1", f"{want} 2", f"InputError {p}: cannot read: No such file or directory"]


def test_a_child_that_cannot_say_leaves_the_hash_to_the_thread(tmp_path, monkeypatch):
    from loganalyze import inputs

    p = tmp_path / "big.log"
    p.write_bytes(b"x\n" * 1000)
    monkeypatch.setattr(inputs, "_sha256_in_child", lambda file: (lambda: {}))
    f = InputFile(str(p))
    f.hash_in_background(in_child=True)
    assert f.sha256 == hashlib.sha256(b"x\n" * 1000).hexdigest()


def test_cli_ingest_of_one_big_file_hashes_it_ahead(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from loganalyze import inputs
    from loganalyze.cli import app

    monkeypatch.setattr(inputs, "HASH_AHEAD_MIN_BYTES", 1000)
    ahead = []
    monkeypatch.setattr(inputs, "hash_ahead", lambda path, real=inputs.hash_ahead: (ahead.append(path), real(path)))
    log = tmp_path / "v.log"
    data = b"".join(b"onednn_verbose,v1,primitive,exec,cpu,reorder,simple:any,undef,src:f32::blocked:ab::f0,,,%dx3,0.5\n"
                    % i for i in range(100))
    log.write_bytes(data)
    db = str(tmp_path / "x.duckdb")
    res = CliRunner().invoke(app, ["ingest", str(log), "--db", db])
    assert res.exit_code == 0, res.output
    assert ahead == [str(log)] and inputs._HASHED_AHEAD == {}
    import duckdb

    with duckdb.connect(db, read_only=True) as con:
        assert con.execute("SELECT sha256 FROM sources").fetchone()[0] == hashlib.sha256(data).hexdigest()


def test_only_file_is_the_one_file_a_path_names(tmp_path):
    """What the CLI reads ahead: a file, or a folder holding one file and no folder (hidden
    files and databases left out, as the walk leaves them); nothing else."""
    from loganalyze.paths import expand_paths, only_file

    trace = tmp_path / "one" / "rank0.pt.trace.json"
    trace.parent.mkdir()
    trace.write_text("[]")
    (trace.parent / ".hidden").write_text("x")
    (trace.parent / "runs.duckdb").write_text("x")
    two = tmp_path / "two"
    two.mkdir()
    (two / "a.log").write_text("x")
    (two / "b.log").write_text("x")
    nested = tmp_path / "nested"
    (nested / "sub").mkdir(parents=True)
    (nested / "a.log").write_text("x")
    assert only_file(str(trace)) == str(trace)
    assert only_file(str(trace.parent)) == str(trace)
    assert [c.path for c in expand_paths([str(trace.parent)])] == [str(trace)]
    for other in (str(two), str(nested), str(tmp_path / "missing"), "-", str(tmp_path / "*.log")):
        assert only_file(other) is None, other
