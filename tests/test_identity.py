"""Issue 9, identity of content: the same content in another wrapper is one source, a grown
file extends its source (``--replace`` swaps it in, in one transaction), and a file that
changes while it is read is refused."""
from __future__ import annotations

import gzip
import hashlib
import zlib

import pytest

from loganalyze import ingest as ingest_mod
from loganalyze.identity import HEAD_BYTES
from loganalyze.inputs import _RawReader

HDR = "onednn_verbose,info,oneDNN v3.2.0 (commit abc)"
REORDER = "onednn_verbose,exec,cpu,reorder,simple:any,undef,src_f32::blocked:a::f0 dst_f32::blocked:a::f0,,,8"
CONV = ("onednn_verbose,exec,cpu,convolution,jit:avx2,forward_training,src_f32::blocked:abcd::f0 "
        "wei_f32::blocked:abcd::f0 dst_f32::blocked:abcd::f0,,alg:convolution_direct,mb1_ic3oc8_ih5oh5kh3sh1dh0ph1_iw5ow5kw3sw1dw0pw1")


def log_text(n: int, time: str = "0.5") -> bytes:
    """``n`` timed verbose lines after a header."""
    return ("\n".join([HDR] + [f"{REORDER if i % 2 else CONV},{time}" for i in range(n)]) + "\n").encode()


def totals(query) -> list:
    return query("SELECT count(*), sum(time_ms)::DOUBLE FROM onednn_events")


def gzip_members(data: bytes, parts: int) -> bytes:
    step = len(data) // parts + 1
    return b"".join(gzip.compress(data[i:i + step]) for i in range(0, len(data), step))


# --------------------------------------------------------------------------- same content
@pytest.mark.parametrize("wrap", ["gzip", "gzip -9", "gzip -1", "members"])
def test_same_content_in_another_wrapper_is_already_ingested(tmp_path, ingest_files, query, wrap):
    data = log_text(40)
    plain = tmp_path / "a.log"
    plain.write_bytes(data)
    packed = tmp_path / "a.log.gz"
    packed.write_bytes({"gzip": lambda: gzip.compress(data), "gzip -9": lambda: gzip.compress(data, 9),
                        "gzip -1": lambda: gzip.compress(data, 1),
                        "members": lambda: gzip_members(data, 3)}[wrap]())
    (first,) = ingest_files([plain], run_label="base")
    (again,) = ingest_files([packed], run_label="other")
    assert again.status == "duplicate", again.message
    assert again.message == f"{packed}: already ingested as source {first.source_id} ({plain}) in run 'base'"
    assert query("SELECT count(*) FROM sources")[0][0] == 1


def test_compressed_first_then_plain(tmp_path, ingest_files, query):
    data = log_text(10)
    (tmp_path / "b.log.gz").write_bytes(gzip.compress(data, 9))
    (tmp_path / "b.log").write_bytes(data)
    (first,) = ingest_files([tmp_path / "b.log.gz"])
    (again,) = ingest_files([tmp_path / "b.log"])
    assert first.status == "ingested" and again.status == "duplicate"
    assert "(no run label)" in again.message
    assert query("SELECT sha256, file_sha256, content_bytes FROM sources") == [(
        hashlib.sha256(data).hexdigest(), hashlib.sha256((tmp_path / "b.log.gz").read_bytes()).hexdigest(), len(data))]


def test_rows_of_databases_made_before_content_hashes_still_match(tmp_path, ingest_files, query, tmp_db):
    """Old rows hold a compressed file's own hash in sha256 and no content columns."""
    import duckdb

    gz = tmp_path / "old.log.gz"
    gz.write_bytes(gzip.compress(log_text(5)))
    ingest_files([gz])
    con = duckdb.connect(tmp_db)
    con.execute("UPDATE sources SET sha256 = file_sha256, file_sha256 = NULL, content_bytes = NULL, head_sha256 = NULL")
    con.close()
    (again,) = ingest_files([gz])
    assert again.status == "duplicate", again.message


# --------------------------------------------------------------------------- growth
@pytest.mark.parametrize("lines", [20, 2000])  # shorter and longer than the head hash
@pytest.mark.parametrize("grown_gz", [False, True])
def test_grown_log_extends_its_source_and_replace_swaps_it_in(tmp_path, cli, tmp_db, query, lines, grown_gz):
    old = log_text(lines)
    assert (len(old) > HEAD_BYTES) == (lines > 1000)
    grown = old + (f"{REORDER},2.5\n" * 3).encode()
    path = tmp_path / "train.log"
    path.write_bytes(old)
    r = cli("ingest", "--db", tmp_db, "--run", "nightly", path)
    assert r.exit_code == 0, r.output
    if grown_gz:
        path = tmp_path / "train.log.gz"
        path.write_bytes(gzip.compress(grown))
    else:
        path.write_bytes(grown)
    r = cli("ingest", "--db", tmp_db, "--run", "nightly", path)
    assert r.exit_code == 0, r.output
    assert r.stdout.strip() == (f"skipped: {path}: extends source 1 ({tmp_path / 'train.log'}) in run 'nightly' "
                                "(the same content with more after it); --replace to swap it in")
    assert query("SELECT count(*) FROM sources")[0][0] == 1
    r = cli("ingest", "--db", tmp_db, "--run", "nightly", "--replace", path)
    assert r.exit_code == 0, r.output
    assert f"replaced source 1 ({tmp_path / 'train.log'}) in run 'nightly'" in r.stdout
    assert query("SELECT source_id, content_bytes FROM sources") == [(2, len(grown))]
    clean = tmp_path / "clean.duckdb"
    cli("ingest", "--db", clean, path)
    assert totals(query) == totals(lambda s: query(s, db=str(clean)))
    assert query("SELECT count(*) FROM skipped_lines WHERE source_id = 1")[0][0] == 0
    # the grown file again: already ingested
    r = cli("ingest", "--db", tmp_db, "--replace", path)
    assert r.stdout.startswith("skipped:") and "already ingested as source 2" in r.stdout


def test_other_content_of_the_same_size_is_not_a_duplicate(tmp_path, ingest_files):
    a, b = tmp_path / "a.log", tmp_path / "b.log"
    a.write_bytes(log_text(30, "0.5"))
    b.write_bytes(log_text(30, "0.7"))
    assert [r.status for r in ingest_files([a, b])] == ["ingested", "ingested"]


def test_a_file_that_starts_differently_is_a_new_source(tmp_path, ingest_files):
    a, b = tmp_path / "a.log", tmp_path / "b.log"
    a.write_bytes(log_text(3000))
    b.write_bytes(b"x" + log_text(3000) + b"more\n")
    assert [r.status for r in ingest_files([a, b])] == ["ingested", "ingested"]


def test_replace_is_one_transaction(tmp_path, ingest_files, query, monkeypatch):
    path = tmp_path / "r.log"
    path.write_bytes(log_text(10))
    ingest_files([path])
    before = totals(query)
    path.write_bytes(log_text(10) + f"{REORDER},9\n".encode())

    def broken(head):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(ingest_mod, "head_sha256", broken)  # fails after the old rows were deleted
    (res,) = ingest_files([path], replace=True)
    assert res.status == "error" and "nothing was ingested" in res.message
    assert query("SELECT source_id FROM sources") == [(1,)]
    assert totals(query) == before


# --------------------------------------------------------------------------- change while reading
@pytest.mark.parametrize("compressed", [False, True])
def test_file_that_grows_while_it_is_read_is_refused(tmp_path, ingest_files, query, monkeypatch, compressed):
    path = tmp_path / ("w.log.gz" if compressed else "w.log")
    data = log_text(200)
    # incompressible filler, so the file is read in several blocks
    filler = b"".join(hashlib.sha256(str(i).encode()).hexdigest().encode() + b"\n" for i in range(80_000))
    path.write_bytes(gzip.compress(data + filler) if compressed else data + filler)
    state = {"appended": False}

    def growing(original):
        def read(self):
            for block in original(self):
                yield block
                if not state["appended"]:  # the reader goes on after its first block: the file grows
                    state["appended"] = True
                    with open(path, "ab") as f:
                        f.write(zlib.compress(b"late line\n") if compressed else b"late line\n")
        return read

    for method in ("__iter__", "whole_lines"):  # blocks as read, and the line readers' buffers
        monkeypatch.setattr(_RawReader, method, growing(getattr(_RawReader, method)))
    monkeypatch.setattr("loganalyze.inputs.READ_BLOCK", 1 << 16)
    (res,) = ingest_files([path])
    assert res.status == "error", res.message
    assert res.message.startswith(f"{path}: changed while being read") and res.message.endswith("nothing stored")
    assert query("SELECT count(*) FROM sources")[0][0] == 0
    assert query("SELECT count(*) FROM onednn_events")[0][0] == 0


def test_file_changed_after_reading_before_commit_is_refused(tmp_path, ingest_files, query, monkeypatch):
    path = tmp_path / "c.log"
    path.write_bytes(log_text(5))
    from loganalyze.importers.onednn import OneDNNVerboseImporter

    finish = OneDNNVerboseImporter.ingest

    def ingest_then_append(self, ctx):
        finish(self, ctx)
        with open(path, "ab") as f:
            f.write(b"appended\n")

    monkeypatch.setattr(OneDNNVerboseImporter, "ingest", ingest_then_append)
    (res,) = ingest_files([path])
    assert res.status == "error" and "changed while being read" in res.message
    assert query("SELECT count(*) FROM sources")[0][0] == 0


def test_prefix_hashes_in_one_pass():
    from loganalyze.identity import prefix_hashes

    data = bytes(range(256)) * 1000
    lengths = {1, 255, 256, 1000, 77_777, 256_000, 300_000}
    pieces = [data[i:i + 999] for i in range(0, len(data), 999)]
    assert prefix_hashes(pieces, lengths) == {n: hashlib.sha256(data[:n]).hexdigest() for n in lengths if n <= len(data)}


def test_library_replace_and_max_expand(tmp_path, tmp_db):
    from loganalyze import Database

    path = tmp_path / "lib.log"
    path.write_bytes(log_text(4))
    with Database(tmp_db) as db:
        assert [r.status for r in db.ingest(path)] == ["ingested"]
        path.write_bytes(log_text(4) + f"{REORDER},3\n".encode())
        assert [r.status for r in db.ingest(path, max_expand=0)] == ["extends"]
        (res,) = db.ingest(path, replace=True)
        assert res.status == "ingested" and res.replaced == [f"source 1 ({path}) (no run label)"]
