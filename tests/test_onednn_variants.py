"""importers/onednn_variants.py: the shapes that differ from a shape seen only in their
problem descriptor, made in columns, are the grammar's shapes, row for row; and a log of
dynamic batch sizes stores the same tables either way."""
from __future__ import annotations

import re
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa
import pyparsing as pp
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loganalyze.grammars import onednn_verbose as g
from loganalyze.importers import onednn_variants as v
from loganalyze.importers.arrow_arrays import arrow_array
from loganalyze.importers.base import arrow_types
from loganalyze.importers.onednn import SHAPE_COLUMNS
from loganalyze.ingest import ingest_file
from loganalyze.store import Store

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "onednn"


def _sample_lines(paths=None) -> list[str]:
    """The verbose lines of ``paths`` (the shipped samples' logs by default)."""
    paths = sorted(SAMPLES.glob("*.log")) if paths is None else paths
    return [line for path in paths for line in path.read_text(errors="replace").splitlines()
            if g.starts_with_marker(line)]


def _key(head: str) -> str:
    """The key the cut gives a verbose line without its last field ``head`` (its timestamp
    taken out)."""
    lead = g._leading(head)
    if isinstance(lead, pp.ParseException) or not lead.get("timestamp"):
        return head
    return head.replace("," + lead["timestamp"], "", 1)


def _template_keys() -> list[str]:
    """The keys of the samples' complete profiling lines, each text before the descriptor once."""
    out = {}
    for line in _sample_lines():
        key = _key(line.rpartition(",")[0])
        before = g.key_before_problem(g._parse_shape(key, False))
        if before is not None:
            out.setdefault(before, key)
    return sorted(out.values())


_TEMPLATES = _template_keys()
_TYPES = None


def shape_types() -> dict[str, pa.DataType]:
    global _TYPES
    if _TYPES is None:
        with Store(":memory:") as store:
            _TYPES = arrow_types(store.con, "onednn_shapes")
    return _TYPES


def grammar_rows(ids: list[int], keys: list[str]) -> list[dict]:
    """The rows ``parse_shape`` gives (every field read), as the row buffer makes them."""
    shapes = [g._parse_shape(key, False) for key in keys]
    types = shape_types()
    columns = {c: arrow_array([getattr(s, c) for s in shapes], types[c]) for c in SHAPE_COLUMNS
               if c not in ("shape_id", "timed")}
    columns["shape_id"] = arrow_array(ids, types["shape_id"])
    columns["timed"] = arrow_array([s.tail_is_time for s in shapes], types["timed"])
    return pa.table({c: columns[c] for c in SHAPE_COLUMNS}).to_pylist()


_NAMES = st.sampled_from(["mb", "g", "ic", "oc", "ih", "oh", "kh", "sh", "dh", "ph", "id", "ls", "beta", "alpha", "e"])
_VALUES = st.sampled_from(["1", "16", "256", "0", "-3", "0.75", "1e5", "2e-3", "10E5", "007"])
#: descriptors each form's pattern matches whole, names given once: always made in columns
_PLAIN = st.one_of(
    st.lists(st.tuples(_NAMES, _VALUES, st.sampled_from(["", "_"])), min_size=1, max_size=8,
             unique_by=lambda t: t[0]).map(lambda parts: "".join(n + x + sep for n, x, sep in parts).rstrip("_")),
    st.lists(st.lists(st.sampled_from(["1", "7", "256", "*", "?"]), min_size=1, max_size=4).map("x".join),
             min_size=1, max_size=3).map(":".join),
)
#: anything else a last field may be (names twice, whitespace, other digits, junk)
_OTHER = st.one_of(
    st.text(alphabet="mbicodhwgx0123456789:_*?.e- \t١٢\U00011f50", max_size=24),
    st.text(max_size=12),
    _PLAIN.map(lambda t: t + "mb2" if t[:1].isalpha() else t),
    _PLAIN.map(lambda t: " " + t),
    # digits of other scripts: Python's patterns and polars' take different Unicode versions
    _PLAIN.map(lambda t: t.replace("1", "\U00011f51").replace("0", "١")),
).filter(lambda t: "," not in t)


@given(st.lists(st.tuples(st.sampled_from(_TEMPLATES), st.one_of(_PLAIN, _OTHER), st.booleans()),
                min_size=1, max_size=30))
@settings(max_examples=300, deadline=None)
def test_rows_made_in_columns_are_the_grammars(cases):
    """Every row made in columns equals the grammar's shape of its key; every key whose
    descriptor is plain (one form matched whole, each name once) is made in columns when
    a shape with its text before the descriptor is kept."""
    made = v.Variants(SHAPE_COLUMNS, shape_types())
    kept = set()
    for template, _, keep in cases:
        if keep:
            made.add(g._parse_shape(template, False))
            kept.add(template)
    keys = [t.rpartition(",")[0] + "," + last for t, last, _ in cases]
    new = pl.DataFrame({"shape_id": list(range(len(keys))), "key": keys}, schema_overrides={"shape_id": pl.UInt64})
    saved, v.AT_LEAST = v.AT_LEAST, 1  # (a few keys at a time made in columns)
    try:
        rows, rest = made.make(v.split_keys(new))
    finally:
        v.AT_LEAST = saved
    got = [] if rows is None else rows.to_pylist()
    ids = [r["shape_id"] for r in got]
    assert got == grammar_rows(ids, [keys[i] for i in ids])
    plain = {i for i, (t, last, _) in enumerate(cases) if t in kept and _is_plain(last)}
    assert plain <= set(ids)
    assert sorted(ids + rest["shape_id"].to_list()) == list(range(len(keys)))


def _is_plain(last: str) -> bool:
    """A descriptor of :data:`_PLAIN`'s kinds (reference: the grammar's own regexes)."""
    if g.tensor_shapes.re.match(last) and last.isascii():
        return True
    if not (g.named_dims.re.match(last) and last.isascii() and not last.endswith("\n")):
        return False
    names = [n for n, _ in g._named_pairs(last)]
    return len(names) == len(set(names))


def test_a_few_keys_at_a_time_are_left_to_the_grammar():
    made = v.Variants(SHAPE_COLUMNS, shape_types())
    made.add(g._parse_shape(_TEMPLATES[0], False))
    keys = [_TEMPLATES[0].rpartition(",")[0] + f",{n}x3" for n in range(v.AT_LEAST - 1)]
    new = v.split_keys(pl.DataFrame({"shape_id": list(range(len(keys))), "key": keys},
                                    schema_overrides={"shape_id": pl.UInt64}))
    rows, rest = made.make(new)
    assert rows is None and rest.equals(new)
    rows, rest = made.make(pl.concat([new, new.head(1)]))
    assert rows.num_rows == v.AT_LEAST and rest.height == 0


def _dynamic_log(path: Path, copies: int, lines: list[str] | None = None) -> None:
    """``lines`` (the samples' verbose lines by default), each complete profiling line
    ``copies`` times with the first number of its descriptor changed (a log of dynamic batch
    sizes), the others once."""
    out = []
    for line in _sample_lines() if lines is None else lines:
        head, _, time = line.rpartition(",")
        before, _, problem = head.rpartition(",")
        if re.search(r"\d", problem) and g.key_before_problem(g._parse_shape(_key(head), False)):
            out += [f"{before},{re.sub(r'[0-9]+', str(n + 1), problem, count=1)},{time}" for n in range(copies)]
        else:
            out.append(line)
    path.write_text("\n".join(out) + "\n")


def _tables(db: Path) -> dict[str, list]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {t: con.execute(f"SELECT * EXCLUDE (source_id) FROM {t} ORDER BY ALL").fetchall()
                for t in ("onednn_events", "skipped_lines")} | {
                "onednn_shapes": con.execute("SELECT * FROM onednn_shapes ORDER BY shape_id").fetchall()}
    finally:
        con.close()


CORPUS_LOGS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "onednn_verbose"


@pytest.mark.parametrize("source", ["samples", "corpus"])
def test_a_log_of_dynamic_batch_sizes_stores_the_same_tables_either_way(tmp_path, monkeypatch, source):
    """Made from the samples, or from the public corpus's real logs of every dialect (skipped
    without it)."""
    lines = None
    if source == "corpus":
        if not CORPUS_LOGS.is_dir():
            pytest.skip("public corpus ../shared/corpus not present")
        lines = _sample_lines(sorted(p for p in CORPUS_LOGS.iterdir() if p.suffix == ".log"))
    log = tmp_path / "dynamic.log"
    _dynamic_log(log, 40, lines)
    made = []
    make = v.Variants.make

    def counted(self, new):
        rows, rest = make(self, new)
        made.append(0 if rows is None else rows.num_rows)
        return rows, rest

    monkeypatch.setattr(v.Variants, "make", counted)
    stored = {}
    for at_least in (16, 10 ** 9):
        monkeypatch.setattr(v, "AT_LEAST", at_least)
        with Store(str(tmp_path / f"{at_least}.duckdb")) as store:
            assert ingest_file(store, str(log)).status == "ingested"
        stored[at_least] = _tables(tmp_path / f"{at_least}.duckdb")
        made.append(None)
    first, second = made.index(None), len(made) - 1
    assert sum(made[:first]) > 1000 and not any(made[first + 1:second])
    assert stored[16] == stored[10 ** 9]


def test_past_the_shapes_kept_it_starts_again(monkeypatch):
    """At most KEPT shapes are kept to make others from (then the kept ones are let go): a
    key whose shape was let go is left to the grammar, the others are still made."""
    monkeypatch.setattr(v, "KEPT", 2)
    monkeypatch.setattr(v, "AT_LEAST", 1)
    made = v.Variants(SHAPE_COLUMNS, shape_types())
    for template in _TEMPLATES[:3]:
        made.add(g._parse_shape(template, False))
    keys = [t.rpartition(",")[0] + ",7x7" for t in _TEMPLATES[:3]]
    new = v.split_keys(pl.DataFrame({"shape_id": [0, 1, 2], "key": keys}, schema_overrides={"shape_id": pl.UInt64}))
    rows, rest = made.make(new)
    assert rows.to_pylist() == grammar_rows([2], keys[2:]) and rest["shape_id"].to_list() == [0, 1]
