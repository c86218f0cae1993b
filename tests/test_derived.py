"""Per-shape totals written at ingest: summaries from them equal summaries from the events."""
from __future__ import annotations

from pathlib import Path

from pandas.testing import assert_frame_equal

import loganalyze

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "onednn"


def test_totals_written_and_equal_to_the_events(tmp_path):
    with loganalyze.connect(str(tmp_path / "d.duckdb")) as db:
        db.ingest([SAMPLES], run="r")
        n_files = len(db.sources())
        per_file = db.sql("SELECT count(DISTINCT source_id) AS n FROM onednn_shape_totals")["n"][0]
        assert per_file == n_files
        from_totals = db.summary(by="kind,impl,source")
        counts = db.sql("SELECT sum(n) AS n FROM onednn_shape_totals")["n"][0]
        assert counts == db.sql("SELECT count(*) AS n FROM onednn_events")["n"][0]
        # a database made before the totals existed: the summary reads the events instead
        db.sql("DELETE FROM onednn_shape_totals WHERE source_id IN (1, 3)")
        assert_frame_equal(db.summary(by="kind,impl,source"), from_totals)
        db.sql("DROP TABLE onednn_shape_totals")
        assert_frame_equal(db.summary(by="kind,impl,source"), from_totals)


def test_compact_summary_leaves_the_median_out_and_wide_has_it(tmp_path):
    with loganalyze.connect(str(tmp_path / "d.duckdb")) as db:
        db.ingest([SAMPLES / "dnnl_v1_style.log"])
        narrow = db.summary(by="kind", wide=False)
        wide = db.summary(by="kind")
    assert "exec_median_ms" not in narrow.columns and wide["exec_median_ms"].notna().any()
    assert narrow["exec_ms"].tolist() == wide["exec_ms"].tolist()
