"""Runs compared item by item: ``compare``, ``check`` (verdicts and exit code), ``trend``.

One module per job:

- :mod:`.samples` — per-call times (integer ns) per item per family from the DuckDB tables;
- :mod:`.compare` — ``compare(baseline_con, candidate_con, by=None, families=None,
  baseline_runs=None, candidate_runs=None, statistic="mean") -> DataFrame``;
- :mod:`.policy` — thresholds and TOML per-item overrides, ``load_policy(path=None, **options)``;
- :mod:`.stats` — the significance gate: Wilcoxon signed-rank over paired calls;
- :mod:`.check` — ``check(... , policy=None) -> DataFrame`` with verdicts, ``overall(df)``;
- :mod:`.trend` — ``trend(con, by=None, families=None, last=None, ...) -> DataFrame``;
- :mod:`.sides` — what a side names: ``open_side(spec, db_path) -> (con, label, runs, cleanup)``;
- :mod:`.reports` — one report model, written as terminal text, Markdown, JSON, JUnit or HTML.
"""
