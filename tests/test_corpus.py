"""End to end on the public corpus (``../shared/corpus/onednn_verbose``), compared with the
independently computed ``expected/<file>.expected.json``.  Skips when the corpus is absent
and, per file, when a file's bytes are not the ones the expected answers were computed from.
The corpus files are read in place, never copied."""
from __future__ import annotations

import os
import hashlib
import json

import pytest

from conftest import CORPUS, invoke_cli

KEY_MAP = {  # expected per_kind key -> summary column
    "exec_count": "exec_count",
    "exec_time_ms": "exec_ms",
    "create_count": "create_count",
    "create_time_ms": "create_ms",
    "cache_hit_count": "cache_hits",
    "cache_miss_count": "cache_misses",
    "exec_untimed_count": "exec_untimed",
    "check_count": "check_count",
    "dispatch_count": "dispatch_count",
    "create_nested_count": "create_nested_count",
    "create_nested_time_ms": "create_nested_ms",
}


def corpus_files() -> list[str]:
    d = CORPUS / "onednn_verbose"
    if not d.is_dir():
        return ["(corpus absent)"]
    return sorted(p.name for p in d.iterdir() if p.is_file())


@pytest.fixture(scope="module")
def corpus_file(request):
    if not CORPUS.is_dir():
        pytest.skip("public corpus ../shared/corpus not present")
    name = request.param
    path = CORPUS / "onednn_verbose" / name
    index = json.loads((CORPUS / "expected" / "index.json").read_text())
    entry = index.get(name)
    if entry is None:
        pytest.skip(f"{name} is not listed in expected/index.json")
    data = path.read_bytes()
    if len(data) != entry["bytes"] or hashlib.sha256(data).hexdigest() != entry["sha256"]:
        pytest.skip(f"{name} has been replaced (hash differs from expected/index.json)")
    expected = json.loads((CORPUS / "expected" / entry["expected"]).read_text())
    return path, expected


@pytest.fixture(scope="module")
def ingested(corpus_file, tmp_path_factory):
    """Each corpus file is ingested once, into a database of its own."""
    path, expected = corpus_file
    db = str(tmp_path_factory.mktemp("corpus") / "corpus.duckdb")
    r = invoke_cli("ingest", "--db", db, path)
    assert r.exit_code == 0, r.output
    return path, expected, db


#: primitive profiling lines (the ones laid out by generation)
PROFILING = "component = 'primitive' AND op_class IN ('exec', 'create', 'create_nested')"


def close(a: float, b: float) -> bool:
    return a == pytest.approx(b, rel=1e-9, abs=1e-12)


pytestmark = pytest.mark.parametrize("corpus_file", corpus_files(), indirect=True, scope="module")


def test_summary_per_kind(ingested):
    path, expected, db = ingested
    r = invoke_cli("summary", "--db", db, "--by", "kind", "--format", "json")
    assert r.exit_code == 0, r.output
    got = {row["kind"]: row for row in r.json()}
    assert set(got) == set(expected["per_kind"]), "kinds differ"
    problems = []
    for kind, exp in expected["per_kind"].items():
        for exp_key, col in KEY_MAP.items():
            if exp_key not in exp:
                continue
            want, have = exp[exp_key], got[kind][col]
            ok = close(have, want) if isinstance(want, float) else have == want
            if not ok:
                problems.append(f"{kind}.{exp_key}: expected {want!r}, got {have!r} ({col})")
    assert not problems, "\n".join(problems)


def test_totals(ingested):
    path, expected, db = ingested
    rows = invoke_cli("summary", "--db", db, "--by", "kind", "--format", "json").json()
    t = expected["totals"]
    assert sum(r["exec_count"] for r in rows) == t["exec_count"]
    assert close(sum(r["exec_ms"] for r in rows), t["exec_time_ms"])
    assert sum(r["create_count"] for r in rows) == t["create_count"]
    assert close(sum(r["create_ms"] for r in rows), t["create_time_ms"])
    assert sum(r["cache_hits"] for r in rows) == t["cache_hit_count"]
    assert sum(r["cache_misses"] for r in rows) == t["cache_miss_count"]


def test_sources_line_counts(ingested):
    path, expected, db = ingested
    (src,) = invoke_cli("sources", "--db", db, "--format", "json").json()
    n_skipped = len(expected["skipped_lines"])
    assert os.path.realpath(src["path"]) == os.path.realpath(path)
    assert src["format"] == "onednn_verbose"
    assert src["lines_total"] == expected["lines_total"]
    assert src["lines_non_verbose"] == expected["non_verbose_lines"]
    assert src["lines_skipped"] == n_skipped
    assert src["lines_parsed"] == expected["verbose_lines"] - n_skipped
    assert src["size_bytes"] == expected["bytes"]
    assert src["sha256"] == expected["sha256"]
    assert src["crlf_lines"] == expected["crlf_lines"]
    assert src["ends_with_newline"] == expected["ends_with_newline"]


def test_library_versions(ingested):
    path, expected, db = ingested
    (src,) = invoke_cli("sources", "--db", db, "--format", "json").json()
    got = src["library_version"].split("; ") if src["library_version"] else []
    assert got == expected["library_versions"]


def test_skipped_and_untimed_line_numbers(ingested):
    path, expected, db = ingested
    skipped = invoke_cli("skipped", "--db", db, "--format", "json", "--limit", "1000").json()
    assert [s["line_no"] for s in skipped] == [s["line"] for s in expected["skipped_lines"]]
    for got, want in zip(skipped, expected["skipped_lines"]):
        assert got["reason"].split(":")[0] == want["reason"].split(":")[0]
        assert got["reason"] == want["reason"]
    untimed = invoke_cli(
        "sql", "--db", db, "--format", "json",
        "SELECT line_no, operation, kind FROM onednn_primitives WHERE op_class IN ('exec', 'create') "
        "AND time_ms IS NULL ORDER BY line_no",
    ).json()
    assert [(u["line_no"], u["operation"], u["kind"]) for u in untimed] == [
        (u["line"], u["op"], u["kind"]) for u in expected["untimed_lines"]]


def test_operations_and_features(ingested):
    path, expected, db = ingested
    sql = lambda q: invoke_cli("sql", "--db", db, "--format", "json", q).json()  # noqa: E731
    ops = {f"{r['component']}/{r['operation']}": r["n"] for r in sql(
        "SELECT component, operation, count(*) AS n FROM onednn GROUP BY ALL")}
    for skipped in expected["skipped_lines"]:  # "operations" counts every verbose line
        key = f"primitive/{skipped['op']}"
        ops[key] = ops.get(key, 0) + 1
    assert ops == expected["operations"]
    info = sql("SELECT count(*) AS n FROM onednn WHERE op_class = 'info'")[0]["n"]
    assert info == expected["info_lines"]
    templates = sql("SELECT line_no, component, detail FROM onednn WHERE info_kind = 'template' ORDER BY line_no")
    assert [(t["line_no"], t["component"], t["detail"]) for t in templates] == [
        (t["line"], t["component"], t["template"]) for t in expected["templates"]]
    engines = {r["engine"]: r["n"] for r in sql(
        f"SELECT engine, count(*) AS n FROM onednn WHERE {PROFILING} AND engine <> '' GROUP BY ALL")}
    assert engines == expected["engines"]
    layouts = {r["layout"]: r["n"] for r in sql(
        f"SELECT layout, count(*) AS n FROM onednn WHERE {PROFILING} GROUP BY ALL")}
    from loganalyze.grammars.onednn_verbose import LAYOUT_NAMES
    assert {LAYOUT_NAMES[k]: v for k, v in layouts.items()} == expected["primitive_layouts"]


def test_timestamps(ingested):
    path, expected, db = ingested
    rows = invoke_cli("sql", "--db", db, "--format", "json",
                      "SELECT count(ts_ms) AS n, min(ts_ms) AS lo, max(ts_ms) AS hi FROM onednn_events").json()[0]
    assert rows["n"] == expected["timestamp_lines"]
    if expected["has_timestamp"]:
        assert close(rows["lo"], float(expected["timestamp_first_ms"]))
        assert close(rows["hi"], float(expected["timestamp_last_ms"]))


def test_exec_by_kind_prop_and_impl(ingested):
    path, expected, db = ingested
    sql = lambda q: invoke_cli("sql", "--db", db, "--format", "json", q).json()  # noqa: E731
    by_prop = {f"{r['kind']}/{r['prop_kind']}": (r["n"], r["ms"]) for r in sql(
        "SELECT kind, prop_kind, count(*) AS n, fsum(time_ms) AS ms FROM onednn_primitives "
        "WHERE op_class = 'exec' AND time_ms IS NOT NULL GROUP BY ALL")}
    assert by_prop.keys() == expected["exec_by_kind_prop"].keys()
    for k, v in expected["exec_by_kind_prop"].items():
        assert by_prop[k][0] == v["count"] and close(by_prop[k][1], v["time_ms"]), k
    impl = {r["impl"]: (r["exec_count"], r["exec_ms"]) for r in invoke_cli(
        "summary", "--db", db, "--by", "impl", "--format", "json").json() if r["exec_count"]}
    assert impl.keys() == expected["exec_by_impl"].keys()
    for k, v in expected["exec_by_impl"].items():
        assert impl[k][0] == v["count"] and close(impl[k][1], v["time_ms"]), k


def test_segments_start_at_version_headers(ingested):
    import re

    path, expected, db = ingested
    text = path.read_bytes().decode("utf-8").splitlines()
    version_re = re.compile(r"^(?:onednn|dnnl|mkldnn)_verbose(?:,v\d+)?,info,(?:Intel\(R\) |Intel )?(?:MKL-DNN|DNNL|oneDNN) v\d")
    headers = [i for i, line in enumerate(text, start=1) if version_re.match(line)]
    segs = invoke_cli("sql", "--db", db, "--format", "json",
                      "SELECT segment, first_line, last_line, library_version FROM onednn_segments ORDER BY segment").json()
    starts = [s["first_line"] for s in segs if s["library_version"]]
    assert starts == headers
    assert segs[0]["first_line"] == 1 and segs[-1]["last_line"] == expected["lines_total"]
    for a, b in zip(segs, segs[1:]):
        assert b["first_line"] == a["last_line"] + 1
    assert {s["library_version"] for s in segs if s["library_version"]} == set(expected["library_versions"])
