-- GPU activity shared by the Nsight Systems, nvprof, PyProf, ncu and trace-JSON readers.
-- All times are integer nanoseconds on one clock per source. Documented in docs/schema.md.

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
    tid             BIGINT
);

CREATE TABLE IF NOT EXISTS gpu_memops (
    source_id       INTEGER NOT NULL,
    row_no          BIGINT,
    op              VARCHAR,           -- memcpy | memset
    kind            VARCHAR,           -- HtoD, DtoH, DtoD, HtoH, PtoP, memset, ... (as the tool names it)
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
    tid             BIGINT
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
    global_tid      BIGINT
);

CREATE TABLE IF NOT EXISTS nvtx_ranges (
    source_id       INTEGER NOT NULL,
    row_no          BIGINT,
    text            VARCHAR,
    domain          VARCHAR,
    event_type      VARCHAR,           -- push_pop | start_end | mark
    start_ns        BIGINT,
    end_ns          BIGINT,
    duration_ns     BIGINT,
    pid             BIGINT,
    tid             BIGINT,
    global_tid      BIGINT,
    depth           INTEGER
);
