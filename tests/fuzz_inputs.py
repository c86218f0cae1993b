"""Hypothesis strategies that mutate the real samples (``samples/**``) and the oracle every
mutated file must pass.  Used by tests/test_fuzz.py (a few examples per family, in CI) and
scripts/fuzz.py (the same strategies for minutes, failures saved to files).

Mutations: bytes flipped, the file truncated, lines duplicated, deleted or shuffled, one field
of a line cut out, junk inserted; a ``.gz`` sample is mutated either inside (then compressed
again) or as compressed bytes.  The oracle: ingesting the file into an in-memory database
gives one result, ``ingested`` (whose line counts add up) or a one-line ``error`` naming the
file, never an internal error or a traceback.
"""
from __future__ import annotations

import gzip
import re
import tempfile
import time
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import loganalyze

SAMPLES = Path(__file__).resolve().parents[1] / "samples"


def _family(path: Path) -> str:
    name = path.name.lower()
    if path.parent.name == "onednn":
        return "onednn"
    if name.endswith((".sqlite", ".nvvp")):
        return "gpu_sqlite"
    if path.parent.name == "gpu":
        return "gpu_text"
    if re.search(r"\.json(\.gz)?$", name):
        return "trace_json"
    return "tables"  # PyTorch / MXNet / CNTK / TensorFlow-style text and CSV tables


#: the samples of each format family (README files left out)
FAMILIES: dict[str, list[Path]] = {}
for _p in sorted(SAMPLES.rglob("*")):
    if _p.is_file() and _p.suffix != ".md":
        FAMILIES.setdefault(_family(_p), []).append(_p)

#: CI: a few examples per family and a deadline per example; scripts/fuzz.py registers its own
settings.register_profile("ci", max_examples=30, deadline=20_000, derandomize=True, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

LINE_OPS = ("flip", "truncate", "dup_line", "delete_line", "shuffle", "cut_field", "junk")
BYTE_OPS = ("flip", "truncate", "zero_run")
JUNK = (b"", b"\x00\x01\xff", b"{", b"]", b"null,", b"onednn_verbose,", b"9" * 400, b"\xef\xbb\xbf",
        b"==PROF== x", b"\"Name\",\"Start\"", b",,,,,", b"-1e309", b"NaN")


@st.composite
def mutate_lines(draw, data: bytes) -> bytes:
    """Line-level and byte-level damage to a text file."""
    lines = data.splitlines(keepends=True) or [b""]
    for op in draw(st.lists(st.sampled_from(LINE_OPS), min_size=1, max_size=4)):
        i = draw(st.integers(0, max(0, len(lines) - 1)))
        if op == "dup_line":
            lines.insert(i, lines[i] * draw(st.integers(1, 3)))
        elif op == "delete_line" and len(lines) > 1:
            del lines[i]
        elif op == "shuffle":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == "cut_field":
            fields = re.split(rb"([,\t|]| {2,})", lines[i])
            if len(fields) > 2:
                k = draw(st.integers(0, len(fields) // 2)) * 2
                del fields[k:k + 2]
                lines[i] = b"".join(fields)
        elif op == "junk":
            lines.insert(i, draw(st.sampled_from(JUNK)) + draw(st.sampled_from([b"\n", b"", b"\r\n"])))
        else:
            lines = mutate_bytes_now(draw, b"".join(lines), op).splitlines(keepends=True) or [b""]
    return b"".join(lines)


def mutate_bytes_now(draw, data: bytes, op: str) -> bytes:
    """One byte-level change: flip a few bytes, cut the end off, or zero a run of bytes."""
    if not data:
        return data
    buf = bytearray(data)
    if op == "truncate":
        return bytes(buf[:draw(st.integers(0, len(buf) - 1))])
    if op == "zero_run":
        i = draw(st.integers(0, len(buf) - 1))
        n = draw(st.integers(1, 4096))
        buf[i:i + n] = bytes(len(buf[i:i + n]))
        return bytes(buf)
    for _ in range(draw(st.integers(1, 8))):
        i = draw(st.integers(0, len(buf) - 1))
        buf[i] ^= draw(st.integers(1, 255))
    return bytes(buf)


@st.composite
def mutate_binary(draw, data: bytes) -> bytes:
    for op in draw(st.lists(st.sampled_from(BYTE_OPS), min_size=1, max_size=3)):
        data = mutate_bytes_now(draw, data, op)
    return data


@st.composite
def mutated_samples(draw, family: str) -> tuple[str, bytes]:
    """(file name, mutated bytes) of one sample of ``family``."""
    path = draw(st.sampled_from(FAMILIES[family]))
    data = path.read_bytes()
    if path.name.endswith(".gz"):
        if draw(st.booleans()):
            data = gzip.compress(draw(mutate_lines(gzip.decompress(data))), mtime=0)
        else:
            data = draw(mutate_binary(data))
    elif family == "gpu_sqlite":
        data = draw(mutate_binary(data))
    else:
        data = draw(mutate_lines(data))
    return path.name, data


#: seconds one mutated sample may take to ingest (a few KB each: anything near this is a hang)
MAX_SECONDS = 15.0

_DB: dict[str, loganalyze.Database] = {}


def _database() -> loganalyze.Database:
    """One in-memory database for all examples of a process (opening one per example would
    spend the time on creating the schema); a duplicate of an earlier example is allowed."""
    if "db" not in _DB:
        _DB["db"] = loganalyze.connect(":memory:")
    return _DB["db"]


def check_ingest(name: str, data: bytes) -> None:
    """The oracle: write ``data`` as ``name`` and ingest it; raise AssertionError when the result
    is not a clean ``ingested`` or one-line ``error`` (content an earlier example stored is
    read again in a database of its own)."""
    with tempfile.TemporaryDirectory(prefix="fuzz-") as tmp:
        path = Path(tmp) / name
        path.write_bytes(data)
        db = _database()
        t0 = time.monotonic()
        results = db.ingest([path])
        took = time.monotonic() - t0
        if len(results) == 1 and results[0].status in ("duplicate", "extends"):
            # the shared database's answer depends on the examples before: read this one
            # alone, so that a failing example fails again when Hypothesis replays it
            db = loganalyze.connect(":memory:")
            results = db.ingest([path])
    assert took < MAX_SECONDS, f"{name}: {took:.1f} s for {len(data)} bytes"
    assert len(results) == 1, results
    res = results[0]
    assert res.status in ("ingested", "error"), res
    assert "\n" not in res.message and "Traceback" not in res.message, res.message
    assert "internal error" not in res.message, res.message
    if res.status != "ingested":
        assert res.message.startswith(f"{path}: "), res.message
    if res.status == "ingested":
        src = res.source
        counts = [src.get(k) for k in ("lines_total", "lines_parsed", "lines_non_verbose", "lines_skipped")]
        if None not in counts:
            total, parsed, other, skipped = counts
            assert total == parsed + other + skipped, (name, counts)
            assert min(counts) >= 0, (name, counts)
        stored = db.sql("SELECT count(*) AS n FROM skipped_lines WHERE source_id = ?",
                        [res.source_id], output="rows").rows[0][0]
        assert stored == (src.get("lines_skipped") or 0), (name, stored, src.get("lines_skipped"))
