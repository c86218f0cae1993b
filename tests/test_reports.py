"""The four reports (Markdown, JSON, JUnit, HTML) come from one model and agree item by item;
each has the shape its readers expect; the same inputs give byte-identical files."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path

import pytest

from compare_helpers import ROOT, SAMPLES, ingest_run, perturb
from conftest import invoke_cli

LOG = SAMPLES / "onednn" / "torch2.13_onednn_v3_all.log.gz"
TRACE = SAMPLES / "trace" / "torch2.13_cpu_train.pt.trace.json.gz"
NSYS = SAMPLES / "gpu" / "nsys_2024_pytorch.sqlite"


@pytest.fixture(scope="module")
def runs_db(tmp_path_factory) -> str:
    """Three runs: the originals, a noisy copy, and a copy with one item of each family slowed."""
    tmp = tmp_path_factory.mktemp("reports")
    db = str(tmp / "runs.duckdb")
    ingest_run(db, "n1", LOG, TRACE, NSYS)
    noisy = [tmp / f"noise_{p.name}" for p in (LOG, TRACE, NSYS)]
    for src, dst in zip((LOG, TRACE, NSYS), noisy):
        perturb(src, dst, noise=0.03, seed=2)
    ingest_run(db, "n2", *noisy)
    slow = [tmp / f"slow_{p.name}" for p in (LOG, TRACE, NSYS)]
    for src, dst, item in zip((LOG, TRACE, NSYS), slow, ("convolution", "aten::addmm", "gemm_kernel")):
        perturb(src, dst, slow=item, factor=1.3, noise=0.01, seed=3)
    ingest_run(db, "n3", *slow)
    return db


def _write_all(db: str, out: Path, *extra: str) -> int:
    out.mkdir(parents=True, exist_ok=True)
    r = invoke_cli("check", "n1", "n3", "--db", db, "--no-record", *extra,
                   "--markdown", out / "r.md", "--json", out / "r.json", "--junit", out / "r.xml",
                   "--html", out / "r.html")
    assert r.stderr == "", r.stderr
    return r.exit_code


class _Rows(HTMLParser):
    """Cells of the rows of the HTML report's table."""

    def __init__(self):
        super().__init__()
        self.rows, self._row, self._cell = [], None, None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._row.append(self._cell)
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.rows.append(self._row)
            self._row = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


def _markdown_rows(text: str) -> list[dict]:
    rows, headers = [], None
    for line in text.splitlines():
        if not line.startswith("| "):
            continue
        cells = [c.strip().replace("\\|", "|").replace("\\\\", "\\")
                 for c in re.split(r"(?<!\\)\|", line.strip()[1:-1])]
        if cells[0] == "verdict":
            headers = cells
        elif not set(cells[0]) <= set("-: "):
            rows.append(dict(zip(headers, cells)))
    return rows


def _by_item(rows, family_key="family", item_key="item"):
    return {(r[family_key], r[item_key]): r for r in rows}


def test_reports_agree_item_by_item(runs_db, tmp_path):
    assert _write_all(runs_db, tmp_path) == 1
    doc = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    from_json = {(i["family"], i["item"]): i for i in doc["items"]}
    failed = sorted(k for k, i in from_json.items() if i["verdict"] == "fail")
    assert [f for f, _ in failed] == ["kernel", "onednn", "op"]
    assert [i for _, i in failed][1:] == ["convolution", "aten::addmm"]

    md_rows = _by_item(_markdown_rows((tmp_path / "r.md").read_text(encoding="utf-8")))
    parser = _Rows()
    parser.feed((tmp_path / "r.html").read_text(encoding="utf-8"))
    headers, *cells = parser.rows
    html_rows = _by_item([dict(zip(headers, c)) for c in cells])
    root = ET.parse(tmp_path / "r.xml").getroot()
    junit = {(c.get("classname"), c.get("name")): c for c in root.iter("testcase")}

    assert set(from_json) == set(md_rows) == set(html_rows) == set(junit)
    for key, item in from_json.items():
        pct = "" if item["delta_pct"] is None else f"{item['delta_pct']:+.1f}%"
        for rows in (md_rows, html_rows):
            assert rows[key]["verdict"] == item["verdict"], key
            assert rows[key]["delta %"] == pct, key
            assert rows[key]["calls cand"] == str(item["candidate"]["count"])
        assert (junit[key].find("failure") is not None) == (item["verdict"] == "fail"), key
    # the same order everywhere (JUnit: grouped in one suite per family, in order of first appearance)
    assert list(from_json) == list(md_rows) == list(html_rows)
    families = list(dict.fromkeys(f for f, _ in from_json))
    assert list(junit) == sorted(from_json, key=lambda k: families.index(k[0]))


def test_json_matches_its_schema_and_benchmark_action_shape(runs_db, tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "docs" / "report.schema.json").read_text(encoding="utf-8"))
    _write_all(runs_db, tmp_path)
    jsonschema.validate(json.loads((tmp_path / "r.json").read_text(encoding="utf-8")), schema)
    r = invoke_cli("compare", "n1", "n2", "--db", runs_db, "--json", "-")
    jsonschema.validate(r.json(), schema)
    r = invoke_cli("check", "n1", "n3", "--db", runs_db, "--no-record", "--json", "-", "--json-format",
                   "benchmark-action")
    bench = r.json()
    assert isinstance(bench, list) and bench
    for entry in bench:
        assert set(entry) >= {"name", "unit", "value"} and entry["unit"] == "us"
        assert isinstance(entry["value"], (int, float)) and isinstance(entry["name"], str)
    assert len({e["name"] for e in bench}) == len(bench)


def test_junit_has_the_shape_jenkins_and_gitlab_read(runs_db, tmp_path):
    _write_all(runs_db, tmp_path)
    root = ET.parse(tmp_path / "r.xml").getroot()
    assert root.tag == "testsuites"
    total = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for suite in root:
        assert suite.tag == "testsuite" and suite.get("name")
        cases = list(suite)
        assert all(c.tag == "testcase" and c.get("classname") == suite.get("name") and c.get("name") for c in cases)
        counts = {"tests": len(cases), "failures": sum(c.find("failure") is not None for c in cases),
                  "errors": sum(c.find("error") is not None for c in cases),
                  "skipped": sum(c.find("skipped") is not None for c in cases)}
        for key, value in counts.items():
            assert int(suite.get(key)) == value
            total[key] += value
        for case in cases:
            failure = case.find("failure")
            if failure is not None:
                assert failure.get("message") and failure.get("type") == "regression" and failure.text
    for key, value in total.items():
        assert int(root.get(key)) == value
    assert total["failures"] == 3


def test_markdown_verdict_first_regressions_first(runs_db, tmp_path):
    _write_all(runs_db, tmp_path)
    text = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert text.splitlines()[0].startswith(":x: **loganalyze check: FAIL")
    assert text.index("### Regressions") < text.index("<details>") < text.index("</details>")
    head = text[:text.index("<details>")]
    assert "convolution" in head and "aten::addmm" in head and "| pass |" not in head


def test_same_inputs_give_byte_identical_reports(runs_db, tmp_path):
    _write_all(runs_db, tmp_path / "a")
    _write_all(runs_db, tmp_path / "b")
    for name in ("r.md", "r.json", "r.xml", "r.html"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    # files given in another order to a temporary database: the same comparison
    a = invoke_cli("check", f"{LOG},{NSYS}", f"{NSYS},{LOG}", "--json", "-").stdout
    b = invoke_cli("check", f"{NSYS},{LOG}", f"{LOG},{NSYS}", "--json", "-").stdout
    strip = lambda s: re.sub(r'"(label|runs)": [^\n]*', "", s)  # noqa: E731 - the sides' names differ
    assert strip(a) == strip(b)


def test_html_is_self_contained_with_charts(runs_db, tmp_path):
    _write_all(runs_db, tmp_path)
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    for banned in ("http://", "https://", "<script", " src=", "href=", "@import", "url("):
        assert banned not in html, banned
    assert html.count('<svg class="bars"') == 1
    assert html.count('<svg class="trend-line"') >= 3   # n1, n2, n3 trend for the top items
    assert 'id="verdict"' in html and "FAIL" in html


def _chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return path


def test_html_renders_in_headless_chromium(runs_db, tmp_path):
    chromium = _chromium()
    _write_all(runs_db, tmp_path)
    page = (tmp_path / "r.html").resolve().as_uri()
    flags = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0"]
    try:
        dom = subprocess.run(flags + ["--dump-dom", page], capture_output=True, text=True, timeout=120)
        shot = subprocess.run(flags + [f"--screenshot={tmp_path / 'r.png'}", "--window-size=1200,1600", page],
                              capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.skip("chromium did not finish in 120 s on this machine")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert '<svg class="bars"' in dom.stdout and "<rect" in dom.stdout and "<polyline" in dom.stdout
    assert 'id="verdict"' in dom.stdout
    console = [line for line in (dom.stderr + shot.stderr).splitlines()
               if "CONSOLE" in line or "Uncaught" in line or "Failed to load resource" in line]
    assert console == []
    assert shot.returncode == 0 and (tmp_path / "r.png").stat().st_size > 10_000


def test_markdown_collapsed_table_is_capped(monkeypatch):
    import pandas as pd

    from loganalyze.compare import check, compare
    from loganalyze.compare.reports import Report, SideInfo, render
    from loganalyze.compare.reports import markdown

    rows = [{"family": "kernel", "item": f"k{i:04d}", "stratum": f"k{i:04d}", "run": "r", "ns": 1000 + i, "seq": 1}
            for i in range(30)]
    frame = pd.DataFrame(rows)
    table = check.verdicts(compare.build(frame, frame))
    monkeypatch.setattr(markdown, "MAX_DETAIL_ROWS", 10)
    text = render(Report("check", SideInfo("a", "files"), SideInfo("b", "files"), table), "markdown")
    assert text.count("| pass | kernel |") == 10 and "20 more items" in text
