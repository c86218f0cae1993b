-- Framework profiler output: trace-event JSON (Kineto, MXNet, any Chrome/Perfetto JSON trace),
-- CNTK detail files, and the aggregate tables MXNet, PyTorch and CNTK print.
-- Times are integer nanoseconds; ts_ns is on the file's own clock (Kineto: relative to
-- trace_files.base_time_ns when the file has baseTimeNanoseconds).  Documented in docs/schema.md.

-- One row per trace file (sources.format = 'trace_json' or 'cntk_detail').
CREATE TABLE IF NOT EXISTS trace_files (
    source_id          INTEGER PRIMARY KEY,
    container          VARCHAR,     -- array | object | csv
    flavour            VARCHAR,     -- kineto | mxnet | generic | cntk
    reader             VARCHAR,     -- duckdb (read_json on the event array) | stream (exact Python reader)
    complete           BOOLEAN,     -- false: cut off (missing "]", cut gzip); the events before the cut are kept
    top_level_keys     VARCHAR[],
    display_time_unit  VARCHAR,
    base_time_ns       HUGEINT,     -- Kineto baseTimeNanoseconds
    schema_version     VARCHAR,
    trace_name         VARCHAR,
    rank               INTEGER,     -- distributedInfo.rank (Kineto) or the CNTK file suffix
    world_size         INTEGER,
    device_properties  JSON,
    metadata           JSON,        -- every top-level member except traceEvents
    events             BIGINT,      -- elements of the event array (= sources.lines_total)
    unmatched_e        BIGINT,      -- E events with no open B of that name on their pid/tid (skipped)
    unclosed_b         BIGINT,      -- B events never closed (kept, dur_ns NULL)
    async_unmatched_e  BIGINT,
    async_unclosed_b   BIGINT,
    improper_nesting   BIGINT,      -- operators that end after their parent
    duplicates         BIGINT,      -- X events identical to an earlier one (skipped)
    negative_durations BIGINT       -- X with dur < 0, or E before its B (skipped)
);

-- Every event of the event array that was read (skipped ones are in skipped_lines with
-- line_no = event_no).  B/E pairs: both rows are kept; the B row carries dur_ns/end_ns and
-- end_event.  Same for async b/e.
CREATE TABLE IF NOT EXISTS trace_events (
    source_id     INTEGER NOT NULL,
    event_no      BIGINT NOT NULL,   -- 0-based position in the event array (file order)
    ph            VARCHAR,
    role          VARCHAR,           -- op | launch | kernel | memcpy | memset | gpu_other | python | trace | span
                                     -- | async | end | async_end | instant | counter | metadata | flow | other
    cat           VARCHAR,
    name          VARCHAR,
    pid           VARCHAR,           -- exact text: integers of any size, or strings ("Spans")
    tid           VARCHAR,
    ts_ns         BIGINT,
    dur_ns        BIGINT,            -- X: dur; B/b: matched end minus begin; NULL when unknown
    end_ns        BIGINT,
    depth         INTEGER,           -- number of enclosing operators on the same pid/tid
    parent        BIGINT,            -- event_no of the innermost enclosing operator (same pid/tid)
    self_ns       BIGINT,            -- operators: dur_ns minus the durations of their direct child operators
    end_event     BIGINT,            -- B/b: event_no of the matching E/e
    id            VARCHAR,           -- async/flow id (id, or id2 as JSON)
    bp            VARCHAR,
    scope         VARCHAR,           -- "s" of instant events
    correlation   BIGINT,            -- args.correlation (Kineto)
    external_id   BIGINT,            -- args."External id" (Kineto)
    launch_event  BIGINT,            -- device events: event_no of the host call that launched them
    op_event      BIGINT,            -- device events: event_no of the operator that launched them
    gpu_self_ns   BIGINT,            -- operators: device time of work launched directly by this operator
    gpu_total_ns  BIGINT,            -- operators: device time of work launched by it or its children
    -- args: ZSTD, not the automatic choice (dict_fsst): on a 500 MB trace the column took
    -- 0.39 s and 26 MiB instead of 1.06 s and 62 MiB to store, and queries read it as fast
    args          JSON USING COMPRESSION zstd
);

CREATE TABLE IF NOT EXISTS trace_counters (
    source_id   INTEGER NOT NULL,
    event_no    BIGINT NOT NULL,
    name        VARCHAR,
    cat         VARCHAR,
    pid         VARCHAR,
    tid         VARCHAR,
    id          VARCHAR,
    ts_ns       BIGINT,
    series      VARCHAR,             -- the args key: one C event may carry several series
    value       DOUBLE,
    value_text  VARCHAR              -- the value as written
);

CREATE TABLE IF NOT EXISTS trace_flows (
    source_id    INTEGER NOT NULL,
    cat          VARCHAR,
    id           VARCHAR,
    name         VARCHAR,
    start_event  BIGINT,             -- the "s" event
    end_event    BIGINT,             -- the last "f" event
    steps        INTEGER,            -- "t" events
    start_ts_ns  BIGINT,
    end_ts_ns    BIGINT,
    from_event   BIGINT,             -- the slice the start binds to (enclosing slice on its pid/tid)
    to_event     BIGINT              -- the slice the end binds to (enclosing, or next with bp != "e")
);

-- Aggregate tables printed by the frameworks: MXNet profiler.dumps(), PyTorch
-- key_averages().table(), CNTK summary files.  One row per table row.
CREATE TABLE IF NOT EXISTS profiler_tables (
    source_id       INTEGER NOT NULL,
    line_no         BIGINT NOT NULL,
    tool            VARCHAR,         -- mxnet_dumps | torch_key_averages | cntk_summary
    table_no        INTEGER,         -- 1-based table number in the file
    section         VARCHAR,         -- MXNet domain (operator, MXNET_C_API, Device Storage, ...); CNTK group
    name            VARCHAR,         -- exactly as printed (may be truncated with "..." by PyTorch)
    name_truncated  BOOLEAN,
    rank            INTEGER,         -- CNTK: MPI rank from the file name
    is_counter      BOOLEAN,         -- value columns are counters/memory, not times
    unit            VARCHAR,         -- unit of the value_* columns: ms, kB, MBps, count
    calls           BIGINT,
    total_ns        BIGINT,          -- inclusive time (MXNet Time, PyTorch CPU total, CNTK Total)
    self_ns         BIGINT,          -- PyTorch Self CPU
    avg_ns          BIGINT,
    min_ns          BIGINT,
    max_ns          BIGINT,
    stddev_ns       BIGINT,          -- CNTK
    gpu_self_ns     BIGINT,          -- PyTorch Self CUDA (or the privateuse1 device)
    gpu_total_ns    BIGINT,
    gpu_avg_ns      BIGINT,
    value_total     DOUBLE,          -- numbers in the table's own unit (counters, memory, throughput)
    value_min       DOUBLE,
    value_max       DOUBLE,
    value_avg       DOUBLE,
    cells           MAP(VARCHAR, VARCHAR),  -- every column as printed, by header
    line            VARCHAR
);

-- Operators with inclusive and self time, their thread and process names, input shapes and
-- the profiler step they ran in.
CREATE OR REPLACE VIEW trace_process_names AS
SELECT source_id, pid, any_value(json_extract_string(args, '$.name')) AS name
FROM trace_events WHERE ph = 'M' AND name = 'process_name' GROUP BY ALL;

CREATE OR REPLACE VIEW trace_thread_names AS
SELECT source_id, pid, tid, any_value(json_extract_string(args, '$.name')) AS name
FROM trace_events WHERE ph = 'M' AND name = 'thread_name' GROUP BY ALL;

CREATE OR REPLACE VIEW trace_steps AS
SELECT source_id, event_no, pid, tid, name AS step, ts_ns, dur_ns, end_ns
FROM trace_events
WHERE role = 'op' AND name LIKE 'ProfilerStep#%' AND dur_ns IS NOT NULL;

CREATE OR REPLACE VIEW trace_ops AS
WITH o AS (
    SELECT e.*, s.run_label, s.name AS source_name
    FROM trace_events e JOIN sources s USING (source_id)
    WHERE e.role = 'op' AND e.dur_ns IS NOT NULL
), st AS (
    SELECT source_id, pid, step, ts_ns AS step_ts, end_ns AS step_end FROM trace_steps
)
SELECT o.source_id, o.run_label, o.source_name, o.event_no, o.name, o.cat, o.ph, o.pid, o.tid,
       tn.name AS thread_name, pn.name AS process_name,
       o.ts_ns, o.dur_ns, o.end_ns, o.self_ns, o.depth, o.parent,
       o.gpu_self_ns, o.gpu_total_ns, o.external_id,
       CAST(json_extract(o.args, '$."Input Dims"') AS VARCHAR) AS input_dims,
       CAST(json_extract(o.args, '$."Input type"') AS VARCHAR) AS input_types,
       CASE WHEN o.ts_ns < st.step_end THEN st.step END AS step,
       o.args
FROM o
LEFT JOIN trace_thread_names tn ON tn.source_id = o.source_id AND tn.pid = o.pid AND tn.tid = o.tid
LEFT JOIN trace_process_names pn ON pn.source_id = o.source_id AND pn.pid = o.pid
ASOF LEFT JOIN st ON st.source_id = o.source_id AND st.pid = o.pid AND o.ts_ns >= st.step_ts;

-- Device work (kernels, memcpy, memset) with the host call and the operator that launched it.
CREATE OR REPLACE VIEW trace_gpu AS
SELECT g.source_id, g.event_no, g.role AS kind, g.name, g.cat, g.pid, g.tid, g.ts_ns, g.dur_ns, g.end_ns,
       g.correlation, g.external_id,
       try_cast(json_extract_string(g.args, '$.device') AS INTEGER) AS device,
       try_cast(json_extract_string(g.args, '$.stream') AS BIGINT) AS stream,
       g.launch_event, l.name AS launch_name, g.op_event, o.name AS op_name,
       CAST(json_extract(o.args, '$."Input Dims"') AS VARCHAR) AS op_input_dims,
       g.args
FROM trace_events g
LEFT JOIN trace_events l ON l.source_id = g.source_id AND l.event_no = g.launch_event
LEFT JOIN trace_events o ON o.source_id = g.source_id AND o.event_no = g.op_event
WHERE g.role IN ('kernel', 'memcpy', 'memset');

-- Per operator name and file: count, inclusive and self time, device time.
CREATE OR REPLACE VIEW trace_op_totals AS
SELECT source_id, name, count(*) AS count, sum(dur_ns) AS total_ns, sum(self_ns) AS self_ns,
       min(dur_ns) AS min_ns, max(dur_ns) AS max_ns,
       sum(gpu_self_ns) AS gpu_self_ns, sum(gpu_total_ns) AS gpu_total_ns
FROM trace_events WHERE role = 'op' AND dur_ns IS NOT NULL GROUP BY ALL;

-- Asynchronous spans (b/e, MXNet tasks) matched by (pid, cat, id, name).
CREATE OR REPLACE VIEW trace_async AS
SELECT source_id, event_no, cat, name, pid, tid, id, ts_ns, dur_ns, end_ns, end_event
FROM trace_events WHERE role = 'async';

-- PyTorch memory events ("[memory]" instants with profile_memory=True).
CREATE OR REPLACE VIEW trace_memory AS
SELECT source_id, event_no, pid, tid, ts_ns,
       try_cast(json_extract_string(args, '$."Bytes"') AS BIGINT) AS bytes,
       try_cast(json_extract_string(args, '$."Total Allocated"') AS BIGINT) AS total_allocated,
       try_cast(json_extract_string(args, '$."Total Reserved"') AS BIGINT) AS total_reserved,
       try_cast(json_extract_string(args, '$."Device Type"') AS INTEGER) AS device_type,
       try_cast(json_extract_string(args, '$."Device Id"') AS INTEGER) AS device_id,
       json_extract_string(args, '$."Addr"') AS addr
FROM trace_events WHERE role = 'instant' AND name = '[memory]';
