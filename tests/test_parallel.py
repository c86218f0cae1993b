"""Parallel ingest (``--jobs N``): worker processes parse, one writer inserts; the database holds
what a serial ingest gives, a second run adds nothing, the run ends with a table by format, and
an interrupt leaves no half file."""
from __future__ import annotations

import gzip
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb

import loganalyze
from conftest import invoke_cli
from loganalyze.dataset.layout import schema_tables

SAMPLES = Path(__file__).resolve().parents[1] / "samples"
FAMILIES = ("onednn", "trace", "gpu", "optable")


def contents(db) -> dict:
    """Every table's rows with file names instead of source ids (ids and times are not compared)."""
    out = {}
    for table, cols in schema_tables().items():
        names = [c.name for c in cols if c.name not in ("source_id", "path") and not c.type.startswith("TIMESTAMP")]
        if any(c.name == "source_id" for c in cols):
            sql = (f"SELECT s.name AS _file, {', '.join('t.' + n for n in names)} FROM {table} t "
                   "JOIN sources s USING (source_id)")
        else:
            sql = f"SELECT {', '.join(names)} FROM {table}"
        out[table] = sorted(map(repr, db.sql(sql, output="rows").rows))
    return out


def summaries(db) -> dict:
    out = {}
    for family in FAMILIES:
        try:
            out[family] = db.summary(family=family, output="rows").rows
        except loganalyze.LoganalyzeError as exc:
            out[family] = str(exc)
    return out


def test_parallel_equals_serial(tmp_path):
    inputs = [str(SAMPLES / f) for f in ("onednn", "trace", "gpu")]
    with loganalyze.connect(str(tmp_path / "s.duckdb")) as serial, loganalyze.connect(str(tmp_path / "p.duckdb")) as par:
        rs = serial.ingest(inputs, run="r", jobs=1)
        rp = par.ingest(inputs, run="r", jobs=2)
        assert [(r.path, r.status, r.format, r.warnings) for r in rs] == [(r.path, r.status, r.format, r.warnings)
                                                                           for r in rp]
        assert contents(serial) == contents(par)
        assert summaries(serial) == summaries(par)
        # a second run reads nothing new
        again = par.ingest(inputs, run="r2", jobs=2)
        assert {r.status for r in again} == {"duplicate", "error"}
        assert all(r.format for r in again if r.status == "duplicate")
        after, before = contents(par), contents(serial)
        assert [r[:8] for r in after.pop("runs")] == ["('r', 'v", "('r2', '"]  # the second run is recorded
        before.pop("runs")
        assert after == before


def test_same_content_twice_in_one_run(tmp_path):
    src = SAMPLES / "onednn" / "mkldnn_v0_style.log"
    for i in range(4):
        shutil.copy(src, tmp_path / f"copy{i}.log")
    with loganalyze.connect(":memory:") as db:
        res = db.ingest([str(tmp_path / f"copy{i}.log") for i in range(4)], jobs=2)
        assert [r.status for r in res] == ["ingested", "duplicate", "duplicate", "duplicate"]
        assert res[1].message.startswith(f"{tmp_path / 'copy1.log'}: already ingested as source {res[0].source_id}")
        assert len(db.sources()) == 1


def test_cli_jobs_ends_with_a_table_by_format(tmp_db, tmp_path):
    bad = tmp_path / "bad.log"
    bad.write_text("hello\n")
    res = invoke_cli("ingest", "--db", tmp_db, "--jobs", "2", str(SAMPLES / "onednn"), str(bad))
    assert res.exit_code == 1
    table = res.stderr.splitlines()[-5:]
    assert table[0].split() == ["format", "ingested", "skipped", "rejected", "lines_parsed"]
    assert table[2].split()[:4] == ["onednn_verbose", "9", "0", "0"]
    assert table[3].split() == ["(not", "recognised)", "0", "0", "1", "0"]
    assert table[4].split()[:4] == ["total", "9", "0", "1"]
    again = invoke_cli("ingest", "--db", tmp_db, "-j", "2", str(SAMPLES / "onednn"))
    assert again.exit_code == 0 and again.stdout.count("skipped:") == 9
    assert again.stderr.splitlines()[-1].split()[:4] == ["onednn_verbose", "0", "9", "0"]
    assert invoke_cli("ingest", "--db", tmp_db, "--jobs", "0", str(bad)).exit_code == 2


def make_variants(src_files: list[Path], out: Path, n: int) -> list[Path]:
    """``n`` distinct files (plain and .gz) made from real logs: each gets one line of
    application output on top, so its content (hash) differs and its answers do not."""
    out.mkdir(parents=True, exist_ok=True)
    made = []
    for i in range(n):
        src = src_files[i % len(src_files)]
        opener = gzip.open if src.suffix == ".gz" else open
        with opener(src, "rb") as f:
            data = f"application output {i}\n".encode() + f.read()
        target = out / f"v{i:04d}_{src.name.removesuffix('.gz')}"
        if i % 2:
            target = target.with_name(target.name + ".gz")
            target.write_bytes(gzip.compress(data, mtime=0))
        else:
            target.write_bytes(data)
        made.append((target, src))
    return made


def _kind_totals(db) -> dict:
    return {r["kind"]: (r["exec_count"], r["create_count"])
            for r in db.summary(by="kind", family="onednn", output="rows").records()}


def test_300_real_log_variants(tmp_path, corpus):
    """The acceptance run: 300 variants of real oneDNN logs (plain and .gz) ingest with --jobs 2;
    a second run adds nothing; totals are the sums of the independent answers; the dataset
    export gives the same totals through summary --dataset and through plain DuckDB."""
    real = sorted(p for p in (corpus / "onednn_verbose").iterdir() if p.is_file())
    real += sorted((SAMPLES / "onednn").glob("torch2.13*"))
    made = make_variants(real, tmp_path / "in", 300)
    db_path = str(tmp_path / "v.duckdb")
    res = invoke_cli("ingest", "-q", "--db", db_path, "--jobs", "2", str(tmp_path / "in"))
    assert res.exit_code == 0, res.stderr
    # the independent answer of each original, once per variant made from it
    per_src = {}
    for src in real:
        with loganalyze.connect(":memory:") as d:
            ok = d.ingest(str(src))[0].status == "ingested"
            per_src[src] = _kind_totals(d) if ok and d.sql("SELECT count(*) FROM onednn_events",
                                                           output="rows").rows[0][0] else {}
    want: dict = {}
    for _, src in made:
        for kind, (e, c) in per_src[src].items():
            we, wc = want.get(kind, (0, 0))
            want[kind] = (we + e, wc + c)
    with loganalyze.connect(db_path, read_only=True) as db:
        n_ingested = db.sql("SELECT count(*) FROM sources", output="rows").rows[0][0]
        assert _kind_totals(db) == want
        db.export_parquet(tmp_path / "ds")
    again = invoke_cli("ingest", "--db", db_path, "--jobs", "2", str(tmp_path / "in"))
    assert not [line for line in again.stdout.splitlines() if line.startswith("ingested ")]
    with loganalyze.connect(db_path, read_only=True) as db:
        assert db.sql("SELECT count(*) FROM sources", output="rows").rows[0][0] == n_ingested
    with loganalyze.connect(dataset=tmp_path / "ds") as ds:
        assert _kind_totals(ds) == want
    plain = duckdb.connect().execute(f"""
        SELECT s.kind, count(e.time_ms) FROM read_parquet('{tmp_path}/ds/onednn_events/*/*/*.parquet') e
        JOIN (SELECT DISTINCT ON (shape_id) * FROM read_parquet('{tmp_path}/ds/onednn_shapes/*/*/*.parquet')) s
        USING (shape_id)
        WHERE s.op_class = 'exec' AND coalesce(nullif(s.component, ''), 'primitive') = 'primitive'
        GROUP BY 1""").fetchall()
    assert {k: n for k, n in plain if n} == {k: e for k, (e, _) in want.items() if e}


LINE = ("onednn_verbose,v1,primitive,exec,cpu,convolution,jit:avx2,forward_training,src:f32::blocked:abcd::f0 "
        "wei:f32::blocked:abcd::f0 dst:f32::blocked:abcd::f0,,alg:convolution_direct,"
        "mb2_ic16oc16_ih7oh7kh5sh1dh0ph2_iw7ow7kw5sw1dw0pw2,{}\n")


def test_interrupt_during_parallel_ingest(tmp_path):
    big = tmp_path / "big.log"
    with open(big, "w") as f:
        block = "".join(LINE.format(f"0.{i % 997:03d}") for i in range(10_000))
        for _ in range(40):
            f.write(block)
    first = SAMPLES / "onednn" / "mkldnn_v0_style.log"
    last = SAMPLES / "onednn" / "dnnl_v1_style.log"
    db = tmp_path / "i.duckdb"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-m", "loganalyze", "ingest", "-j", "2", "--db", str(db), str(first),
                             str(big), str(last)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stdout.readline().startswith(f"ingested {first}")
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and err.strip().splitlines()[-1] == (
        f"interrupted: 1 file(s) ingested before it; {big} was rolled back (nothing of it stored); "
        "1 more file(s) not read")
    with loganalyze.connect(str(db), read_only=True) as d:
        assert d.sources()["name"].tolist() == ["mkldnn_v0_style.log"]


def test_a_file_extending_a_stored_one_is_reported_with_jobs(tmp_path):
    """Workers cannot see the database's sources: the writer reads such a file itself."""
    base = SAMPLES / "onednn" / "torch2.13_onednn_v3_exec.log"
    longer = tmp_path / "longer.log"
    longer.write_bytes(base.read_bytes() + base.read_bytes())
    other = tmp_path / "other.log"
    shutil.copy(SAMPLES / "onednn" / "mkldnn_v0_style.log", other)
    with loganalyze.connect(":memory:") as db:
        assert db.ingest(str(base))[0].status == "ingested"
        res = db.ingest([str(longer), str(other)], jobs=2)
        assert [r.status for r in res] == ["extends", "ingested"]
        assert [r.status for r in db.ingest([str(longer)], jobs=2, replace=True)] == ["ingested"]
