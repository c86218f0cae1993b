-- GPU activity shared by the Nsight Systems, nvprof, PyProf, ncu and trace-JSON readers.
-- All times are integer nanoseconds on one clock per source. Documented in docs/schema.md.
-- Columns added after the first release are at the end of each table: insert BY NAME.

CREATE TABLE IF NOT EXISTS gpu_kernels (
    source_id       INTEGER NOT NULL,
    row_no          BIGINT,            -- line (text inputs) or row/event index in the input
    name            VARCHAR,           -- as stored (mangled where the tool stores mangled names)
    demangled       VARCHAR,
    short_name      VARCHAR,           -- function name without template arguments and parameters
    start_ns        BIGINT,
    end_ns          BIGINT,
    duration_ns     BIGINT,
    device          INTEGER,
    context         BIGINT,
    stream          BIGINT,
    grid_x INTEGER, grid_y INTEGER, grid_z INTEGER,
    block_x INTEGER, block_y INTEGER, block_z INTEGER,
    registers       INTEGER,
    static_smem     BIGINT,
    dynamic_smem    BIGINT,
    correlation_id  BIGINT,
    pid             BIGINT,
    tid             BIGINT,
    mangled         VARCHAR,           -- the mangled name where the input has it
    origin          VARCHAR            -- input table or report the row comes from
);

CREATE TABLE IF NOT EXISTS gpu_memops (
    source_id       INTEGER NOT NULL,
    row_no          BIGINT,
    op              VARCHAR,           -- memcpy | memset
    kind            VARCHAR,           -- HtoD, DtoH, DtoD, HtoH, PtoP, HtoA, ... (memcpy direction)
    name            VARCHAR,           -- the tool's own label, e.g. [CUDA memcpy HtoD]
    bytes           BIGINT,
    start_ns        BIGINT,
    end_ns          BIGINT,
    duration_ns     BIGINT,
    device          INTEGER,
    context         BIGINT,
    stream          BIGINT,
    correlation_id  BIGINT,
    pid             BIGINT,
    tid             BIGINT,
    copy_kind       INTEGER,           -- CUPTI copy kind code (1 HtoD, 2 DtoH, 8 DtoD, ...)
    src_kind        VARCHAR,           -- memory kinds as the tool gives them
    dst_kind        VARCHAR,
    origin          VARCHAR
);

CREATE TABLE IF NOT EXISTS gpu_api_calls (
    source_id       INTEGER NOT NULL,
    row_no          BIGINT,
    api             VARCHAR,           -- runtime | driver
    name            VARCHAR,           -- as stored (cudaMemcpy_v3020)
    base_name       VARCHAR,           -- _vNNNN suffix removed (cudaMemcpy)
    start_ns        BIGINT,
    end_ns          BIGINT,
    duration_ns     BIGINT,
    correlation_id  BIGINT,
    pid             BIGINT,
    tid             BIGINT,
    global_tid      BIGINT,            -- one id per thread of the source (nsys globalTid)
    event_class     INTEGER,           -- nsys eventClass (0 runtime, 1 driver)
    cbid            INTEGER,           -- CUPTI callback id (nvprof)
    return_value    BIGINT,
    origin          VARCHAR
);

CREATE TABLE IF NOT EXISTS nvtx_ranges (
    source_id       INTEGER NOT NULL,
    row_no          BIGINT,
    text            VARCHAR,
    domain          VARCHAR,           -- NULL for the default domain
    event_type      VARCHAR,           -- push_pop | start_end | mark
    start_ns        BIGINT,
    end_ns          BIGINT,
    duration_ns     BIGINT,
    pid             BIGINT,
    tid             BIGINT,
    global_tid      BIGINT,
    depth           INTEGER,           -- push/pop nesting level on its thread, 0 = outermost
    domain_id       BIGINT,
    category        BIGINT,
    parent_row      BIGINT,            -- row_no of the enclosing push/pop range
    op              VARCHAR,           -- operator named by the text (PyTorch emit_nvtx: aten::conv2d)
    seq             BIGINT,            -- emit_nvtx sequence number (forward/backward pairing)
    direction       VARCHAR,           -- fwd | bwd when the text says
    shapes          VARCHAR,           -- emit_nvtx sizes, as printed
    flops           DOUBLE,            -- floating point operations of the op, where shapes allow
    bytes           DOUBLE             -- bytes the op reads and writes, where shapes allow
);

-- Pre-aggregated rows of summary reports (nvprof --print-summary, nsys stats *_sum)
CREATE TABLE IF NOT EXISTS gpu_report_rows (
    source_id       INTEGER NOT NULL,
    row_no          BIGINT,
    report          VARCHAR,           -- nvprof_summary, cuda_gpu_kern_sum, cuda_api_sum, ...
    category        VARCHAR,           -- kernel | memcpy | memset | api | nvtx | other
    name            VARCHAR,
    kind            VARCHAR,           -- memcpy direction (HtoD, ...) for memcpy rows
    style           VARCHAR,           -- nvtx_sum Style (PushPop, StartEnd)
    count           BIGINT,
    total_ns        BIGINT,
    avg_ns          DOUBLE,
    median_ns       DOUBLE,
    min_ns          BIGINT,
    max_ns          BIGINT,
    stddev_ns       DOUBLE,
    time_pct        DOUBLE,            -- as the report printed it
    total_bytes     DOUBLE,
    grid            VARCHAR,
    block           VARCHAR
);

-- Hardware counters and metrics: nvprof --metrics/--events, ncu --csv (details and raw pages)
CREATE TABLE IF NOT EXISTS gpu_metrics (
    source_id       INTEGER NOT NULL,
    row_no          BIGINT,
    tool            VARCHAR,           -- nvprof | ncu
    kernel          VARCHAR,
    launch_id       BIGINT,            -- ncu ID
    device          VARCHAR,
    context         BIGINT,
    stream          BIGINT,
    grid            VARCHAR,
    block           VARCHAR,
    section         VARCHAR,
    metric          VARCHAR,
    description     VARCHAR,
    unit            VARCHAR,
    invocations     BIGINT,
    value           DOUBLE,            -- the value (ncu), or Avg (nvprof)
    min_value       DOUBLE,
    max_value       DOUBLE,
    value_text      VARCHAR,           -- as printed
    value_shape     VARCHAR            -- percent | number | number_with_unit | category | text
);

-- Operator attribution given by the input itself (PyProf), one row per kernel
CREATE TABLE IF NOT EXISTS gpu_kernel_ops (
    source_id       INTEGER NOT NULL,
    row_no          BIGINT,            -- the kernel's row_no in gpu_kernels
    op              VARCHAR,
    module          VARCHAR,
    direction       VARCHAR,           -- fwd | bwd
    seq             BIGINT,
    alt_seq         VARCHAR,
    layer           VARCHAR,
    trace           VARCHAR,
    params          VARCHAR,
    shapes          VARCHAR,
    sub             BIGINT,
    tc              VARCHAR,
    flops           DOUBLE,
    bytes           DOUBLE,
    instance        BIGINT             -- kernels of one op call share it
);

CREATE TABLE IF NOT EXISTS gpu_devices (
    source_id       INTEGER NOT NULL,
    device          INTEGER,
    name            VARCHAR,
    sm_count        INTEGER,
    total_memory    BIGINT,
    compute_capability VARCHAR,
    bus             VARCHAR
);

CREATE TABLE IF NOT EXISTS gpu_threads (
    source_id       INTEGER NOT NULL,
    pid             BIGINT,
    tid             BIGINT,
    global_tid      BIGINT,
    name            VARCHAR
);

CREATE TABLE IF NOT EXISTS gpu_source_meta (
    source_id       INTEGER NOT NULL,
    key             VARCHAR NOT NULL,
    value           VARCHAR
);

-- Kernels, copies and sets in one relation.
CREATE OR REPLACE VIEW gpu_activities AS
SELECT source_id, 'kernel' AS kind, origin, row_no, name, start_ns, end_ns, duration_ns, device, context,
       stream, correlation_id, pid, NULL::BIGINT AS bytes
FROM gpu_kernels
UNION ALL
SELECT source_id, op AS kind, origin, row_no, name, start_ns, end_ns, duration_ns, device, context,
       stream, correlation_id, pid, bytes
FROM gpu_memops;

-- Copies and sets with their bandwidth (bytes per ns = GB/s).
CREATE OR REPLACE VIEW gpu_memops_bw AS
SELECT *, CASE WHEN duration_ns > 0 THEN bytes::DOUBLE / duration_ns END AS gb_per_s
FROM gpu_memops;

-- Each GPU activity with the API call that launched it: the earliest CUDA runtime or driver
-- call with the same correlation id in the same process (never the nsys backtrace rows).
CREATE OR REPLACE VIEW gpu_activity_launches AS
WITH calls AS (
    SELECT source_id, pid, correlation_id,
           arg_min(global_tid, start_ns) AS launch_global_tid,
           min(start_ns) AS launch_start_ns,
           arg_min(end_ns, start_ns) AS launch_end_ns,
           arg_min(row_no, start_ns) AS launch_row
    FROM gpu_api_calls
    WHERE api IN ('runtime', 'driver') AND correlation_id IS NOT NULL
    GROUP BY source_id, pid, correlation_id
)
SELECT a.*, c.launch_global_tid, c.launch_start_ns, c.launch_end_ns, c.launch_row
FROM gpu_activities a
LEFT JOIN calls c
  ON c.source_id = a.source_id AND c.pid = a.pid AND c.correlation_id = a.correlation_id;

-- Each GPU activity with the innermost NVTX push/pop range open on the launching thread at
-- launch time (range.start < launch.start and range.end > launch.end, strictly), as PyProf
-- and nsys projection do.  One interval join: an ASOF join over the ranges' starts and ends
-- finds how many ranges are open at the launch, a second one the latest range at that depth;
-- launches that outlive that range (rare) fall back to a direct search of the enclosing ranges.
CREATE OR REPLACE VIEW gpu_activity_nvtx AS
WITH pp AS (
    SELECT source_id, global_tid, row_no, start_ns, end_ns, depth + 1 AS lvl
    FROM nvtx_ranges
    WHERE event_type = 'push_pop' AND end_ns IS NOT NULL AND global_tid IS NOT NULL AND depth IS NOT NULL
), edges AS (  -- a range is open at t when start < t, i.e. start + 1 <= t, and not end <= t
    SELECT source_id, global_tid, start_ns + 1 AS t, 1 AS d FROM pp WHERE start_ns < 9223372036854775807
    UNION ALL
    SELECT source_id, global_tid, end_ns AS t, -1 AS d FROM pp
), levels AS (  -- ranges open from t on (ties: every edge at t counted)
    SELECT source_id, global_tid, t,
           sum(d) OVER (PARTITION BY source_id, global_tid ORDER BY t
                        RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS n
    FROM edges
), l AS (  -- narrow rows through the joins; the activity's own columns are joined back at the end
    SELECT source_id, kind, origin, row_no, launch_global_tid, launch_start_ns, launch_end_ns, launch_row
    FROM gpu_activity_launches WHERE launch_start_ns IS NOT NULL
), opened AS (
    SELECT l.*, coalesce(v.n, 0) AS open_ranges
    FROM l
    ASOF LEFT JOIN levels v
      ON v.source_id = l.source_id AND v.global_tid = l.launch_global_tid AND l.launch_start_ns >= v.t
), cand AS (
    SELECT o.*, r.row_no AS cand_row, r.end_ns AS cand_end
    FROM opened o
    ASOF LEFT JOIN pp r
      ON r.source_id = o.source_id AND r.global_tid = o.launch_global_tid AND r.lvl = o.open_ranges
     AND o.launch_start_ns > r.start_ns
), resolved AS (
    SELECT * EXCLUDE (cand_row, cand_end, open_ranges),
           CASE WHEN open_ranges > 0 AND cand_end > launch_end_ns THEN cand_row END AS range_row
    FROM cand
    WHERE NOT (open_ranges > 0 AND coalesce(cand_end <= launch_end_ns, true))
), straddling AS (
    SELECT c.* EXCLUDE (cand_row, cand_end, open_ranges), f.row_no AS range_row
    FROM (SELECT * FROM cand WHERE open_ranges > 0 AND coalesce(cand_end <= launch_end_ns, true)) c
    LEFT JOIN LATERAL (
        SELECT r.row_no FROM pp r
        WHERE r.source_id = c.source_id AND r.global_tid = c.launch_global_tid
          AND r.start_ns < c.launch_start_ns AND r.end_ns > c.launch_end_ns
        ORDER BY r.start_ns DESC, r.end_ns ASC LIMIT 1
    ) f ON true
), attributed AS (
    SELECT * FROM resolved UNION ALL SELECT * FROM straddling
)
SELECT a.*, t.launch_global_tid, t.launch_start_ns, t.launch_end_ns, t.launch_row, t.range_row,
       n.text AS range_text, coalesce(n.op, n.text) AS op, n.seq, n.direction, n.shapes,
       n.flops AS op_flops, n.bytes AS op_bytes, n.domain AS range_domain,
       n.start_ns AS range_start_ns, n.end_ns AS range_end_ns, n.depth AS range_depth
FROM gpu_activities a
LEFT JOIN attributed t
  ON t.source_id = a.source_id AND t.kind = a.kind AND t.origin IS NOT DISTINCT FROM a.origin AND t.row_no = a.row_no
LEFT JOIN nvtx_ranges n ON n.source_id = t.source_id AND n.row_no = t.range_row;
