-- What each table, view and column of schema/00_core.sql holds.  docs/schema.md's column tables are
-- generated from these comments (python -m loganalyze.schema.docs).  Units go in the text; a column
-- that a view passes through unchanged says 'see table.column'.

COMMENT ON TABLE meta IS 'Settings of the database as key/value pairs';
COMMENT ON COLUMN meta.key IS 'setting name: schema_version';
COMMENT ON COLUMN meta.value IS 'setting value (schema_version: 1)';

COMMENT ON TABLE sources IS 'One row per ingested file; every other table refers to it by source_id. A file is ingested in one transaction: a file that fails leaves no row in any table';
COMMENT ON COLUMN sources.source_id IS 'key of the file, used by every other table';
COMMENT ON COLUMN sources.path IS 'absolute path of the file at ingest time';
COMMENT ON COLUMN sources.name IS 'base name of the file';
COMMENT ON COLUMN sources.size_bytes IS 'size of the file as stored, in bytes (compressed size for gzip)';
COMMENT ON COLUMN sources.sha256 IS 'SHA-256 of the content (hex): the decompressed bytes, so a.log and a.log.gz are one source; a file whose content is already stored is not ingested again (databases made before loganalyze hashed content hold the file hash of compressed files here)';
COMMENT ON COLUMN sources.compression IS 'gzip, or NULL for a plain file';
COMMENT ON COLUMN sources.format IS 'importer that read the file: onednn_verbose, nsys_sqlite, nvprof_sqlite, nvprof_text, nsys_stats, ncu_csv, pyprof, trace_json, cntk, mxnet_table or torch_table';
COMMENT ON COLUMN sources.dialect IS 'variant of the format: oneDNN generations seen (mkldnn-v0, dnnl-v1/v2 +timestamps, onednn-v3.6+ (v1), ...; comma-separated), nsys-sqlite schema 2.9.1 (EXPORT_META_DATA), nvprof-sqlite version 10, nvprof --print-gpu-trace --csv, ncu --csv (raw page), trace flavour (kineto, mxnet, generic; ", cut off" when cut), cntk summary or detail, ...';
COMMENT ON COLUMN sources.library_version IS 'version of the library or tool that wrote the file: oneDNN info lines (oneDNN v3.2.0, Intel(R) MKL-DNN v0.18.0; "; "-joined when runs differ), Nsight Systems version, Kineto schema and CUDA runtime/CUPTI versions';
COMMENT ON COLUMN sources.isa IS 'oneDNN: ISA from info,cpu,isa: / Detected ISA is lines ("; "-joined when runs differ)';
COMMENT ON COLUMN sources.runtime IS 'oneDNN: info,cpu,runtime: lines; CNTK summary: the report time';
COMMENT ON COLUMN sources.run_label IS 'the --run label given at ingest, NULL when none';
COMMENT ON COLUMN sources.lines_total IS 'units read: lines (text inputs), rows of the tables read (SQLite inputs) or elements of the event array (trace JSON); = lines_parsed + lines_non_verbose + lines_skipped';
COMMENT ON COLUMN sources.lines_parsed IS 'units stored as data: verbose lines in onednn_events, activity/call/range rows, trace events';
COMMENT ON COLUMN sources.lines_non_verbose IS 'units that are not data: application output, headers, units rows and blank lines; nsys CUDA backtrace rows (eventClass 67) and NVTX category rows';
COMMENT ON COLUMN sources.lines_skipped IS 'data units that could not be used; each has a row in skipped_lines';
COMMENT ON COLUMN sources.crlf_lines IS 'text inputs: lines ending in \r\n';
COMMENT ON COLUMN sources.ends_with_newline IS 'text inputs: false when the last line was cut off';
COMMENT ON COLUMN sources.segments IS 'oneDNN: runs found in the file, each info version header starts one (see onednn_segments)';
COMMENT ON COLUMN sources.warnings IS 'what ingest warned about for this file';
COMMENT ON COLUMN sources.ingested_at IS 'when the file was ingested';
COMMENT ON COLUMN sources.loganalyze_version IS 'version of loganalyze that ingested the file';

COMMENT ON COLUMN sources.file_sha256 IS 'SHA-256 of the file bytes as stored (hex; the same as sha256 for a plain file; NULL in databases made before the column existed)';
COMMENT ON COLUMN sources.content_bytes IS 'size of the content (decompressed) in bytes; NULL in databases made before the column existed';
COMMENT ON COLUMN sources.head_sha256 IS 'SHA-256 of the first 64 KiB of the content (all of it when shorter): finds the source a grown file extends';
COMMENT ON COLUMN sources.truncated IS 'damaged or cut-off compressed input: only the complete records before the damage were read (a warning says so)';

COMMENT ON TABLE skipped_lines IS 'Input that could not be used, one row per skipped line, row or event, with its reason';
COMMENT ON COLUMN skipped_lines.source_id IS 'file (sources.source_id)';
COMMENT ON COLUMN skipped_lines.line_no IS '1-based line number (text inputs), row id (SQLite inputs) or 0-based position in the event array (trace JSON)';
COMMENT ON COLUMN skipped_lines.reason IS 'why: truncated: 5 fields after the operation, layout v1.1+ needs 8 (+1 time), malformed: ..., invalid UTF-8, line too long (N bytes), ...';
COMMENT ON COLUMN skipped_lines.text IS 'the first 200 characters of the line (oneDNN: timestamp removed)';
