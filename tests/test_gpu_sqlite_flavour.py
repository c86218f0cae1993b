"""Which importer reads an SQLite profile: decided by the first bytes when they show the
schema, else by the tables once open -- the Nsight Systems importer declines an nvprof
database and the nvprof importer, the next candidate, reads it (no importer poses as
another)."""
from __future__ import annotations

import gzip
import io
import sys
import tempfile
from pathlib import Path

import pytest

from loganalyze.importers import candidate_importers
from loganalyze.importers.nsys import NsysSqliteImporter
from loganalyze.importers.nvprof_sqlite import NvprofSqliteImporter
from loganalyze.importers.sqlite_input import SQLITE_MAGIC, head_flavour
from loganalyze.inputs import InputFile

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "gpu"


def test_head_flavour():
    assert head_flavour(SQLITE_MAGIC + b"CREATE TABLE StringIds") == "nsys"
    assert head_flavour(SQLITE_MAGIC + b"StringTable CUPTI_ACTIVITY_KIND_KERNEL") == "nvprof"
    assert head_flavour(SQLITE_MAGIC + b"\0" * 100) == "sqlite"
    assert head_flavour(b"==PROF== Connected") is None


def test_schema_not_in_head_tries_nsys_then_nvprof():
    head = SQLITE_MAGIC + b"\0" * 100
    assert [type(i) for i in candidate_importers(head, "x.sqlite")] == [NsysSqliteImporter, NvprofSqliteImporter]


@pytest.fixture
def short_heads(monkeypatch):
    """Sniffing sees only the SQLite header, as for a database whose schema lies past the head."""
    original = InputFile.head
    monkeypatch.setattr(InputFile, "head", lambda self, n=100: original(self, 100))


@pytest.mark.parametrize("name, fmt", [("nvprof_markers.nvvp", "nvprof_sqlite"),
                                       ("nsys_2024_pytorch.sqlite", "nsys_sqlite")])
def test_tables_choose_the_importer(short_heads, ingest_files, query, name, fmt):
    res = ingest_files([SAMPLES / name])
    assert res[0].status == "ingested", res[0].message
    assert res[0].format == fmt
    assert query("SELECT format FROM sources") == [(fmt,)]
    assert query("SELECT count(*) FROM gpu_kernels")[0][0] > 0


@pytest.mark.parametrize("compress", [False, True])
def test_profile_database_from_standard_input(monkeypatch, tmp_path, ingest_files, query, compress):
    data = (SAMPLES / "nvprof_markers.nvvp").read_bytes()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(gzip.compress(data) if compress else data)))
    res = ingest_files(["-"])
    assert res[0].status == "ingested" and res[0].format == "nvprof_sqlite", res[0].message
    assert query("SELECT count(*) FROM gpu_kernels")[0][0] == 4


def test_cut_gzipped_database_is_an_error(tmp_path, ingest_files, query):
    packed = gzip.compress((SAMPLES / "nsys_2024_pytorch.sqlite").read_bytes())
    cut = tmp_path / "cut.sqlite.gz"
    cut.write_bytes(packed[: len(packed) // 2])
    res = ingest_files([cut])
    assert res[0].status == "error" and "gzip stream is cut off or corrupt" in res[0].message, res[0].message
    assert query("SELECT count(*) FROM gpu_kernels")[0][0] == 0
