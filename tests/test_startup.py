"""Start-up (issue 7 item 4, issue 10 item 3): what ``loganalyze --help`` and ``summary`` import,
and a oneDNN summary whose cost does not grow with the events stored.

Times are measured by scripts/bench_startup.py (a shared test machine is too noisy for time
limits); these tests pin the causes instead: no heavy module on the start-up paths, and no
scan of ``onednn_events`` in a compact oneDNN summary once per-shape totals exist.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import loganalyze

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"
#: never imported by ``--help`` or ``summary`` (``duckdb`` is the Python package: a summary runs
#: on DuckDB's compiled engine alone; pydantic came with typer 0.29's option checks)
HEAVY = ("pandas", "pyarrow", "numpy", "polars", "pydantic", "duckdb", "loganalyze.importers")
FAMILIES = [
    ("onednn", SAMPLES / "onednn" / "dnnl_v1_style.log", ["--by", "kind"]),
    ("trace", SAMPLES / "trace" / "kineto_gpu_style.pt.trace.json", ["--by", "op"]),
    ("gpu", SAMPLES / "gpu" / "nsys_2024_pytorch.sqlite", ["--by", "kernel"]),
    ("optable", SAMPLES / "trace" / "mxnet1.6_style_dumps.txt", ["--by", "op", "--family", "optable"]),
]


def _engine_module_exists() -> bool:
    """False on DuckDB releases without the top-level engine module (the package is used)."""
    from loganalyze.store import duckdb_engine

    return duckdb_engine().__name__ == "_duckdb"


def _imported(args: list[str]) -> set[str]:
    """Every module ``python -m loganalyze ARGS`` imports (``-X importtime``)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONWARNINGS"}
    out = subprocess.run([sys.executable, "-X", "importtime", "-m", "loganalyze", *args],
                         capture_output=True, text=True, env=env, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    return {line.split("|")[-1].strip() for line in out.stderr.splitlines() if line.startswith("import time:")}


def _heavy(modules: set[str]) -> list[str]:
    heavy = [m for m in HEAVY if m in modules or any(x.startswith(m + ".") for x in modules)]
    if not _engine_module_exists():
        heavy = [m for m in heavy if m != "duckdb"]
    return heavy


def test_help_imports_neither_duckdb_nor_heavy_modules():
    modules = _imported(["--help"])
    assert not _heavy(modules) and "_duckdb" not in modules


@pytest.mark.parametrize("family,sample,by", FAMILIES, ids=[f[0] for f in FAMILIES])
def test_summary_imports_no_heavy_module(tmp_path, family, sample, by):
    db = str(tmp_path / "s.duckdb")
    with loganalyze.connect(db) as database:
        database.ingest([sample])
    assert _heavy(_imported(["summary", "--db", db, *by])) == []


def test_ingest_imports_no_pandas(tmp_path):
    """The importers build their Arrow data without ``pa.array``, which imports pandas (0.3-0.4 s
    in a process that never uses it: ``importers/arrow_arrays.py``), and without the
    ``from_arrays`` constructors, which import ``pyarrow.compute`` (45 ms).  Every sample but
    the oneDNN logs (their importer loads polars, which builds the columns then, and casts
    with ``pyarrow.compute``) in one process, serially, so that each importer runs here."""
    files = sorted(str(p) for p in SAMPLES.rglob("*") if p.is_file() and p.suffix != ".md"
                   and "onednn" not in p.parts)
    assert len(files) > 20
    modules = _imported(["ingest", "-q", "--jobs", "1", "--db", str(tmp_path / "i.duckdb"), *files])
    assert "loganalyze.importers.trace_tables" in modules and "loganalyze.importers.nvprof_sqlite" in modules
    assert "pandas" not in modules and "polars" not in modules and "pyarrow.compute" not in modules


def test_a_log_of_many_shapes_imports_no_pandas(tmp_path):
    """A log of dynamic batch sizes (thousands of shapes that differ only in their problem
    descriptor: made in columns, and their memory descriptors one shared object, taken again
    by index) builds its shapes' columns without ``pa.array`` too (0.3 s of pandas)."""
    line = ("onednn_verbose,v1,primitive,exec,cpu,convolution,jit:avx2,forward_training,src:f32::blocked:aBcd8b::f0 "
            "wei:f32::blocked:ABcd8b8a::f0 dst:f32::blocked:aBcd8b::f0,,alg:convolution_direct,"
            "mb{}_ic64oc64_ih56oh56kh3sh1dh0ph1_iw56ow56kw3sw1dw0pw1,0.25\n")
    log = tmp_path / "dynamic.log"
    log.write_text("".join(line.format(n) for n in range(1, 6000)))
    modules = _imported(["ingest", "-q", "--db", str(tmp_path / "d.duckdb"), str(log)])
    assert "loganalyze.importers.onednn_variants" in modules and "pandas" not in modules


def test_small_onednn_logs_are_cut_without_loading_numba(tmp_path):
    """numba takes about 0.9 s to load, more than the interpreter needs for a process's first
    lines (importers/onednn_positions.py); a log past INTERPRETED_LINES loads it.  Nor does a
    small log's cut import ``numpy.ma`` or ``pyarrow.compute``."""
    from loganalyze.importers.onednn_positions import INTERPRETED_LINES

    samples = sorted(str(p) for p in (SAMPLES / "onednn").iterdir() if p.suffix != ".md")
    modules = _imported(["ingest", "-q", "--jobs", "1", "--db", str(tmp_path / "s.duckdb"), *samples])
    assert "loganalyze.importers.onednn_positions" in modules and "numba" not in modules
    # nor what polars' numpy constructor (numpy.ma, 60 ms) or its first Arrow cast
    # (pyarrow.compute, 25 ms) would import: columns go through Arrow, short ones through numpy
    assert "numpy.ma" not in modules and "pyarrow.compute" not in modules
    line = b"onednn_verbose,v1,1.5,primitive,exec,cpu,eltwise,jit:avx2,forward_training,src:f32,,alg:relu,2x3,0.25\n"
    big = tmp_path / "big.log"
    big.write_bytes(line * (INTERPRETED_LINES + 1))
    modules = _imported(["ingest", "-q", "--db", str(tmp_path / "b.duckdb"), str(big)])
    # the CLI's numba load imports no SciPy and no yaml (an import refused is still listed
    # by -X importtime, at a few microseconds: what importing them loads is not there)
    assert "numba" in modules and "scipy.version" not in modules and "yaml.reader" not in modules


@pytest.mark.parametrize("collector_on", [True, False], ids=["collector-on", "collector-off"])
def test_numba_loads_without_garbage_collections(collector_on):
    """numba's load (its ~300,000 lasting objects) runs with the cyclic collector off, and what
    is alive then is frozen out of later collections; the caller's collector setting is kept."""
    code = f"""
import gc
from loganalyze.importers import onednn_positions as p
if not {collector_on}:
    gc.disable()
runs = []
gc.callbacks.append(lambda phase, info: runs.append(info["generation"]) if phase == "start" else None)
p.compiled()
print(len(runs), gc.isenabled(), gc.get_freeze_count())
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    runs, enabled, frozen = out.stdout.split()
    assert (runs, enabled) == ("0", str(collector_on))
    assert int(frozen) > 100_000


def test_read_only_database_gives_the_whole_duckdb_api(tmp_path):
    """A read-only database opens on DuckDB's engine alone; ``Database.con`` still has the
    package's Python API (``con.sql``)."""
    db = str(tmp_path / "s.duckdb")
    with loganalyze.connect(db) as database:
        database.ingest([SAMPLES / "onednn" / "dnnl_v1_style.log"])
    code = ("import sys, loganalyze\n"
            f"db = loganalyze.connect({db!r}, read_only=True)\n"
            "rows = db.summary(by='kind', output='rows')\n"
            "print('duckdb' in sys.modules)\n"
            "print(db.con.sql('SELECT 42').fetchall())\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    before, after = out.stdout.splitlines()
    assert after == "[(42,)]"
    if _engine_module_exists():
        assert before == "False"


class _Recorder:
    """A connection that remembers the SQL it ran."""

    def __init__(self, con):
        self.con, self.queries = con, []

    def execute(self, sql, *params):
        self.queries.append(sql)
        return self.con.execute(sql, *params)


def test_compact_onednn_summary_reads_no_event(tmp_path):
    """With per-shape totals the compact summary reads shapes and totals only: its cost does
    not grow with the events stored.  A file without totals is read from its events."""
    from loganalyze.query import onednn_summary

    with loganalyze.connect(str(tmp_path / "d.duckdb")) as db:
        db.ingest([SAMPLES / "onednn"])
        con = _Recorder(db.con)
        expected = onednn_summary.summary(con, ["kind"], wide=False)
        plan = "\n".join(r[-1] for r in db.con.execute("EXPLAIN " + con.queries[-1]).fetchall())
        assert "onednn_shape_totals" in plan and "onednn_events" not in plan
        db.con.execute("DELETE FROM onednn_shape_totals WHERE source_id = 2")
        con = _Recorder(db.con)
        assert onednn_summary.summary(con, ["kind"], wide=False) == expected
        plan = "\n".join(r[-1] for r in db.con.execute("EXPLAIN " + con.queries[-1]).fetchall())
        assert "onednn_events" in plan



#: one call of each Database method, each run in a fresh process on a read-only database
READ_ONLY_CALLS = [
    'len(db.summary(by="kind", output="rows")) and len(db.summary(by="op", family="trace"))',
    'len(db.summary(by="kernel", names="short")) and len(db.summaries(wide=False)) == 4',
    'db.benchdnn(top=2) and len(db.sources()) == 5 and len(db.runs()) == 2 and db.skipped() is not None',
    'len(db.sql("SELECT 1 AS x")) == 1',
    'db.export_chrome_trace(OUT + "/t.json").events > 0',
    'db.export_parquet(OUT + "/ds").added == 5',
    'len(db.compare("a", "b")) > 0',
    'len(db.check("a", "b")) > 0',
    'len(db.trend()) > 0',
    'db.con.sql("SELECT 42").fetchall() == [(42,)]',
]


@pytest.fixture(scope="module")
def all_families_db(tmp_path_factory) -> str:
    db = str(tmp_path_factory.mktemp("ro") / "all.duckdb")
    with loganalyze.connect(db) as database:
        database.ingest([SAMPLES / "onednn" / "dnnl_v1_style.log"], run="a")
        database.ingest([SAMPLES / "onednn" / "dnnl_v2_timestamps_style.log"], run="b")
        database.ingest([sample for _, sample, _ in FAMILIES[1:]], run="b")
    return db


@pytest.mark.parametrize("call", READ_ONLY_CALLS)
def test_database_method_on_a_read_only_database_in_a_fresh_process(all_families_db, tmp_path, call):
    """A read-only database opens on DuckDB's engine alone; a method that needs the duckdb
    package's Python API imports it (a fresh process each: the test process has it imported)."""
    code = (f"import sys, loganalyze\nOUT = {str(tmp_path)!r}\n"
            f"db = loganalyze.connect({all_families_db!r}, read_only=True)\n"
            "assert 'duckdb' not in sys.modules or loganalyze.store.duckdb_engine().__name__ == 'duckdb'\n"
            f"assert {call}\nprint('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-3000:]


@pytest.mark.parametrize("without_blas,numba_config", [(True, False), (True, True), (False, False)],
                         ids=["cli", "cli-numba-config-file", "library"])
def test_numba_loads_without_its_blas_check_in_the_cli(tmp_path, without_blas, numba_config):
    """The CLI's processes say they need no numba linear algebra: numba's load then skips its
    BLAS check, which imports scipy.linalg (80 ms), and its SciPy version check; nor does it
    import yaml (15 ms) unless a ``.numba_config.yaml`` is there to be read (numba reads it:
    its setting shows); elsewhere numba is left as it is."""
    code = """
import sys
from loganalyze.importers import onednn_positions as p
p.compiled()
from numba.np import arraymath
from numba.core import config
print(arraymath._HAVE_BLAS, "scipy" in sys.modules, "scipy.linalg.cython_blas" in sys.modules,
      "yaml" in sys.modules, config.DEBUG_CACHE)
"""
    env = {k: v for k, v in os.environ.items() if k != "LOGANALYZE_NUMBA_WITHOUT_BLAS" and not k.startswith("NUMBA_")}
    env["PYTHONPATH"] = str(ROOT)
    if without_blas:
        from loganalyze.cli import NUMBA_WITHOUT_BLAS

        env[NUMBA_WITHOUT_BLAS] = "1"
    if numba_config:
        (tmp_path / ".numba_config.yaml").write_text("debug_cache: 1\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    want = {"cli": "False False False False 0", "cli-numba-config-file": "False False False True 1",
            "library": "True True True True 0"}
    assert " ".join(out.stdout.split()[-5:]) == want[{(True, False): "cli", (True, True): "cli-numba-config-file",
                                                      (False, False): "library"}[(without_blas, numba_config)]]
