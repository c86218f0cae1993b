"""docs/schema.md's column tables are generated from the schema's COMMENT statements and must
not drift from them; every table, view and column has a comment; the page's example queries run."""
from __future__ import annotations

import difflib
import re
from pathlib import Path

import duckdb
import pytest

from loganalyze.schema import docs
from loganalyze.schema.docs import (REGENERATE, Column, Relation, SchemaDocError, SchemaFile, generated_page,
                                    problems, read_schema, render_blocks, splice)
from loganalyze.store import Store, _schema_sql

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"


@pytest.fixture(scope="module")
def schema() -> list[SchemaFile]:
    return read_schema()


def test_every_table_view_and_column_has_a_comment(schema):
    found = problems(schema)
    assert not found, (
        "add a COMMENT ON TABLE/VIEW/COLUMN statement to loganalyze/schema/comments/<the schema file> "
        f"(units in the text; 'see other_table.column' for a column passed through a view), then run {REGENERATE}:\n  "
        + "\n  ".join(found))


def test_docs_schema_md_matches_the_schema():
    page = docs.DOC_PATH.read_text(encoding="utf-8")
    fresh = generated_page(page)
    if fresh != page:
        diff = "".join(list(difflib.unified_diff(page.splitlines(True), fresh.splitlines(True),
                                                 "docs/schema.md", "generated"))[:60])
        pytest.fail(f"docs/schema.md's column tables differ from the schema; run {REGENERATE}\n{diff}")


def test_the_generator_reads_what_the_store_runs(schema):
    assert "\n".join(ddl for _, ddl, _ in docs.schema_files()) == _schema_sql()
    assert [f.name for f in schema] == sorted(f.name for f in schema)
    assert {r.name for f in schema for r in f.relations} >= {"sources", "onednn_events", "gpu_kernels", "trace_events"}


def test_the_comments_apply_to_a_database_the_store_made(tmp_path):
    with Store(tmp_path / "c.duckdb") as store:
        store.con.execute("BEGIN TRANSACTION; " + docs.comments_sql() + "; COMMIT")
        missing = store.con.execute(
            "SELECT table_name || '.' || column_name FROM duckdb_columns() "
            "WHERE NOT internal AND (comment IS NULL OR comment = '')").fetchall()
        assert missing == []


def test_every_importer_format_is_documented(schema):
    from loganalyze.importers import IMPORTERS

    formats = {cls.format for cls in IMPORTERS}
    fmt = docs.meaning(docs.column_comments(schema), "sources", "format")
    assert not [f for f in sorted(formats) if f not in fmt], f"sources.format comment lacks some of {sorted(formats)}"


def _fake(*columns: tuple[str, str, str | None]) -> list[SchemaFile]:
    rels: dict[str, list[Column]] = {}
    for rel, col, comment in columns:
        rels.setdefault(rel, []).append(Column(col, "BIGINT", comment))
    return [SchemaFile("00_x.sql", tuple(Relation(r, "table", f"about {r}", tuple(c)) for r, c in rels.items()))]


def test_see_references_are_followed_and_checked():
    ok = _fake(("t", "a", "start (ns)"), ("v", "a", "see t.a"), ("w", "a", "see v.a"))
    assert problems(ok) == []
    assert docs.meaning(docs.column_comments(ok), "w", "a") == "start (ns)"
    bad = _fake(("t", "a", None), ("t", "b", " "), ("v", "a", "see t.nosuch"), ("v", "b", "see v.c"),
                ("v", "c", "see v.b"))
    found = "\n".join(problems(bad))
    assert "t.a has no comment" in found and "t.b has no comment" in found
    assert "'see t.nosuch' names no column" in found and "circle" in found


def test_a_view_passing_every_column_through_is_one_line():
    schema = _fake(("t", "a", "start (ns)"), ("t", "b", "end (ns)"), ("v", "a", "see t.a"), ("v", "b", "see t.b"))
    block = render_blocks(schema)["00_x.sql"]
    assert "Columns: the same as `t`." in block
    assert "| `a` | BIGINT | start (ns) |" in block


def test_markdown_cells_are_escaped():
    schema = _fake(("t", "a", "memcpy | memset, create:<x>, export.*, the _vNNNN suffix, source_id, \\r\\n"))
    row = next(line for line in render_blocks(schema)["00_x.sql"].splitlines() if line.startswith("| `a`"))
    assert row == "| `a` | BIGINT | memcpy \\| memset, create:\\<x\\>, export.\\*, the \\_vNNNN suffix, source_id, \\\\r\\\\n |"


def test_splice_keeps_the_prose_and_names_missing_blocks():
    schema = _fake(("t", "a", "x"))
    page = "# Title\n\nprose\n\n<!-- schema:begin 00_x.sql -->\nold\n<!-- schema:end 00_x.sql -->\n\nmore prose\n"
    out = splice(page, render_blocks(schema))
    assert out.startswith("# Title\n\nprose\n\n<!-- schema:begin 00_x.sql -->") and out.endswith("\n\nmore prose\n")
    assert "old" not in out and "| `a` | BIGINT | x |" in out
    assert splice(out, render_blocks(schema)) == out
    with pytest.raises(SchemaDocError, match=r"no block for 00_x.sql.*<!-- schema:begin 00_x.sql -->"):
        splice("# Title\n", render_blocks(schema))
    with pytest.raises(SchemaDocError, match="no longer exist: 99_gone.sql"):
        splice(page + "<!-- schema:begin 99_gone.sql -->\n<!-- schema:end 99_gone.sql -->\n", render_blocks(schema))


def test_check_mode_says_which_command_regenerates(tmp_path, capsys):
    page = docs.DOC_PATH.read_text(encoding="utf-8")
    stale = tmp_path / "schema.md"
    stale.write_text(page.replace("| `sha256` | VARCHAR |", "| `sha256` | TEXT |"), encoding="utf-8")
    assert docs.main(["--check", "--doc", str(stale)]) == 1
    assert REGENERATE in capsys.readouterr().err
    assert docs.main(["--doc", str(stale)]) == 0
    assert stale.read_text(encoding="utf-8") == page
    assert docs.main(["--check", "--doc", str(stale)]) == 0
    assert docs.main(["--check", "--doc", str(tmp_path / "nosuch.md")]) == 1
    assert "nosuch.md" in capsys.readouterr().err


# --------------------------------------------------------------------------- example queries
EXAMPLE_SAMPLES = [
    "onednn/torch2.13_onednn_v3_create_exec_timestamps.log",
    "onednn/dnnl_v1_style.log",  # its last line is cut off: a skipped_lines row
    "gpu/nsys_2024_pytorch.sqlite",
    "trace/kineto_gpu_style.pt.trace.json",
    "trace/torch_cuda_style_key_averages.log",
    "trace/mxnet_style_profile.json",
    "trace/mxnet1.5_style_dumps.txt",  # operators of the same names as mxnet_style_profile.json
]


def _example_queries() -> list[str]:
    page = docs.DOC_PATH.read_text(encoding="utf-8")
    section = page.split("\n## Example queries\n", 1)[1]
    sql = "\n".join(re.findall(r"```sql\n(.*?)```", section, re.S))
    return [re.sub(r"(\n\s*--[^\n]*|\s)*$", "", s.query) for s in duckdb.connect().extract_statements(sql)]


def test_the_example_queries_run_on_the_samples(tmp_path):
    from loganalyze.ingest import ingest_paths

    queries = _example_queries()
    assert len(queries) >= 10
    db = tmp_path / "examples.duckdb"
    with Store(db) as store:
        results = list(ingest_paths(store, [str(SAMPLES / p) for p in EXAMPLE_SAMPLES], run_label="examples"))
    assert all(r.source_id for r in results), results
    empty = []
    with Store(db, read_only=True) as store:
        for q in queries:
            try:
                rows = store.con.execute(q).fetchall()
            except duckdb.Error as exc:
                pytest.fail(f"docs/schema.md example query fails: {exc}\n{q}")
            if not rows:
                empty.append(q)
    assert not empty, "example queries with no rows on the samples:\n" + "\n\n".join(empty)
