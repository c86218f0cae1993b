-- oneDNN / DNNL / MKL-DNN verbose logs. Documented in docs/schema.md.
CREATE TABLE IF NOT EXISTS onednn_shapes (
    shape_id       UBIGINT PRIMARY KEY,
    key            VARCHAR,
    marker         VARCHAR,
    version_token  VARCHAR,
    component      VARCHAR,
    operation      VARCHAR,
    op_class       VARCHAR,
    layout         VARCHAR,
    engine         VARCHAR,
    kind           VARCHAR,
    impl           VARCHAR,
    prop_kind      VARCHAR,
    mds            VARCHAR,
    attrs          VARCHAR,
    aux            VARCHAR,
    problem        VARCHAR,
    alg            VARCHAR,
    dtype          VARCHAR,
    dims           MAP(VARCHAR, VARCHAR),
    md_list        STRUCT(arg VARCHAR, dt VARCHAR, props VARCHAR, format_kind VARCHAR,
                          tag VARCHAR, strides VARCHAR, flags VARCHAR, extra VARCHAR)[],
    info_kind      VARCHAR,
    detail         VARCHAR,
    timed          BOOLEAN
);

-- Storage methods named where DuckDB's choice is known in advance, so that the insert does not
-- try every method on every segment: source_id is one run per file (RLE), shape_id a 64-bit
-- hash that no method compresses (DuckDB stores it uncompressed anyway).  The 1 GiB log's
-- inserts took 12% less CPU, the database file the same bytes (docs/benchmarks.md).
CREATE TABLE IF NOT EXISTS onednn_events (
    source_id  INTEGER NOT NULL USING COMPRESSION rle,
    line_no    BIGINT NOT NULL,
    shape_id   UBIGINT NOT NULL USING COMPRESSION uncompressed,
    ts_ms      DOUBLE,
    time_ms    DOUBLE
);

-- Per file and shape: counts and exact totals of onednn_events, written when the file is
-- ingested (loganalyze/schema/derived.py) so that summaries never scan every event.
CREATE TABLE IF NOT EXISTS onednn_shape_totals (
    source_id  INTEGER NOT NULL,
    shape_id   UBIGINT NOT NULL,
    n          BIGINT NOT NULL,
    n_timed    BIGINT NOT NULL,
    total_ms   DECIMAL(38,18),
    min_ms     DOUBLE,
    max_ms     DOUBLE
);

CREATE TABLE IF NOT EXISTS onednn_segments (
    source_id        INTEGER NOT NULL,
    segment          INTEGER NOT NULL,
    first_line       BIGINT NOT NULL,
    last_line        BIGINT NOT NULL,
    library_version  VARCHAR,
    isa              VARCHAR,
    runtime          VARCHAR,
    templates        VARCHAR[]
);

CREATE OR REPLACE VIEW onednn AS
SELECT e.source_id, src.run_label, src.name AS source_name, e.line_no, e.ts_ms, e.time_ms,
       s.op_class, s.operation, s.marker, s.version_token,
       coalesce(nullif(s.component, ''), 'primitive') AS component,
       s.layout, s.engine, s.kind, s.impl, s.prop_kind, s.mds, s.attrs, s.aux, s.problem,
       s.alg, s.dtype, s.dims, s.info_kind, s.detail, s.shape_id
FROM onednn_events e
JOIN onednn_shapes s USING (shape_id)
JOIN sources src USING (source_id);

CREATE OR REPLACE VIEW onednn_primitives AS
SELECT * FROM onednn
WHERE component = 'primitive'
  AND op_class IN ('exec', 'create', 'create_nested', 'check', 'dispatch');

CREATE OR REPLACE VIEW onednn_info AS
SELECT source_id, run_label, source_name, line_no, component, info_kind, detail
FROM onednn WHERE op_class = 'info';
