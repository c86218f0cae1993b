"""Shared by the reliability tests (SIGKILL loop, concurrent writers, full disk): inputs of every
format generated in the test, and the checks a database must pass after any crash.

``check_consistent`` is what "consistent" means in docs/reliability.md: the database opens,
every table with a ``source_id`` holds rows of known sources only, every source's line counts
add up and match the rows stored for it, and (given a clean reference) each source holds
exactly the rows a clean ingest of the same content stores.
"""
from __future__ import annotations

import gzip
import json
import os
import random
import shutil
import time
from pathlib import Path

import loganalyze

SAMPLES = Path(__file__).resolve().parents[1] / "samples"

ONEDNN_LINE = ("onednn_verbose,v1,primitive,exec,cpu,{kind},jit:avx2,forward_training,src:f32::blocked:abcd::f0 "
               "wei:f32::blocked:abcd::f0 dst:f32::blocked:abcd::f0,,alg:convolution_direct,"
               "mb{mb}_ic16oc16_ih7oh7kh5sh1dh0ph2_iw7ow7kw5sw1dw0pw2,{ms}\n")
KINDS = ("convolution", "reorder", "matmul", "eltwise", "pooling")


def onednn_text(lines: int, seed: int) -> str:
    """A oneDNN verbose log of ``lines`` exec lines (about 230 bytes each), some noise between."""
    rnd = random.Random(seed)
    out = []
    for i in range(lines):
        if i % 500 == 0:
            out.append(f"application output line {seed} {i}\n")
        out.append(ONEDNN_LINE.format(kind=KINDS[i % len(KINDS)], mb=1 + i % 7, ms=f"{rnd.random():.4f}"))
    return "".join(out)


def trace_text(events: int, seed: int) -> str:
    """A Chrome trace (JSON array) of complete events, B/E pairs and counters on a few threads."""
    rnd = random.Random(seed)
    ev = [{"name": "process_name", "ph": "M", "pid": 1, "args": {"name": f"proc{seed}"}}]
    ts = 0.0
    for i in range(events):
        ts += rnd.random() * 10
        tid = i % 4
        if i % 10 == 0:
            ev.append({"name": "step", "ph": "B", "ts": ts, "pid": 1, "tid": tid})
            ev.append({"name": "step", "ph": "E", "ts": ts + 5, "pid": 1, "tid": tid})
        elif i % 17 == 0:
            ev.append({"name": "mem", "ph": "C", "ts": ts, "pid": 1, "args": {"used": i}})
        else:
            ev.append({"name": f"op{i % 23}", "cat": "cpu_op", "ph": "X", "ts": ts, "dur": rnd.random() * 4,
                       "pid": 1, "tid": tid, "args": {"Input Dims": [[i % 9, 3]]}})
    return "[\n" + ",\n".join(json.dumps(e) for e in ev) + "\n]\n"


def write_gz(path: Path, text: str) -> Path:
    with open(path, "wb") as f, gzip.GzipFile(fileobj=f, mode="wb", mtime=0, filename="") as z:
        z.write(text.encode())
    return path


def make_inputs(where: Path, scale: int = 1) -> list[Path]:
    """One file of every kind the SIGKILL loop covers: oneDNN .log and .log.gz, trace .json and
    .json.gz, an nsys .sqlite export and a text report (PyTorch key_averages table)."""
    where.mkdir(parents=True, exist_ok=True)
    log = where / "big.log"
    log.write_text(onednn_text(2500 * scale, 1))
    files = [log, write_gz(where / "big.log.gz", onednn_text(2500 * scale, 2))]
    trace = where / "trace.json"
    trace.write_text(trace_text(1500 * scale, 3))
    files += [trace, write_gz(where / "trace.json.gz", trace_text(1500 * scale, 4))]
    for sample in (SAMPLES / "gpu" / "nsys_2024_pytorch.sqlite", SAMPLES / "trace" / "torch2.13_key_averages.txt"):
        files.append(Path(shutil.copy(sample, where / sample.name)))
    return files


def source_tables(con) -> list[str]:
    """Every base table with a ``source_id`` column (``sources`` included)."""
    return [r[0] for r in con.execute(
        """SELECT DISTINCT c.table_name FROM duckdb_columns() c JOIN duckdb_tables() t
           ON t.table_name = c.table_name AND t.database_name = c.database_name AND t.schema_name = c.schema_name
           WHERE c.column_name = 'source_id' AND c.database_name = current_database()
           ORDER BY 1""").fetchall()]


def fingerprint(con) -> dict:
    """What a clean ingest stores per content (sha256): the sources counters and the number of
    rows of that source in every table (source ids are left out: they depend on order).  Rows
    that belong to no source are counted under the key ``None``."""
    out: dict = {None: {}}
    for sha, name, fmt, total, parsed, other, skipped in con.execute(
            "SELECT sha256, name, format, lines_total, lines_parsed, lines_non_verbose, lines_skipped "
            "FROM sources").fetchall():
        out[sha] = {"name": name, "format": fmt, "lines": (total, parsed, other, skipped)}
    per_table = " UNION ALL ".join(
        f"""SELECT '{table}', s.sha256, count(*) FROM "{table}" t LEFT JOIN sources s USING (source_id) GROUP BY 2"""
        for table in source_tables(con))
    for table, sha, n in con.execute(per_table).fetchall():
        out[sha][table] = n
    return out


def check_consistent(db: str, reference: dict | None = None, read_only: bool = False) -> dict:
    """Open ``db`` (which must open cleanly), assert the invariants, return its fingerprint.

    With ``reference`` (a clean ingest's :func:`fingerprint`), every source present must hold
    exactly the rows the clean ingest stored for the same content."""
    with loganalyze.connect(db, read_only=read_only, wait=30) as d:
        con = d.con
        for name, total, parsed, other, skipped, stored_skips in con.execute(
                """SELECT name, lines_total, lines_parsed, lines_non_verbose, lines_skipped,
                          (SELECT count(*) FROM skipped_lines k WHERE k.source_id = s.source_id)
                   FROM sources s""").fetchall():
            assert total == parsed + other + skipped, (db, name, total, parsed, other, skipped)
            assert stored_skips == skipped, (db, name, stored_skips, skipped)
        got = fingerprint(con)  # reads every row of every table with a source_id
    orphans = got.pop(None)
    assert not orphans, f"{db}: rows that belong to no source: {orphans}"
    if reference is not None:
        for sha, rows in got.items():
            assert sha in reference and rows == reference[sha], (db, sha, rows, reference.get(sha))
    return got


def signal_inside(proc, path: Path, sig: int, settle: float = 0.2, timeout: float = 60.0) -> None:
    """Send ``sig`` to ``proc`` once it is reading ``path`` (it holds the file open, as
    Linux's ``/proc/PID/fd`` shows), ``settle`` seconds later: a fixed delay from an
    earlier event can land after a fast ingest has ended on an idle machine, or before the
    file was reached on a busy one.  Without ``/proc``, after a fixed 0.8 s."""
    fds = Path(f"/proc/{proc.pid}/fd")
    if not Path("/proc/self/fd").is_dir():
        time.sleep(0.8)
        proc.send_signal(sig)
        return
    target = os.path.realpath(path)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            links = [os.readlink(fd) for fd in fds.iterdir()]
        except OSError:  # an fd closed while listed
            links = []
        if target in links:
            break
        time.sleep(0.01)
    time.sleep(settle)
    proc.send_signal(sig)
