"""nvprof SQLite databases (``nvprof -o prof.nvvp``), the input of PyProf's ``parse`` step.

Read like the Nsight Systems exports (Arrow streams, one DuckDB INSERT per table; mapping
in :mod:`loganalyze.grammars.nvprof_sqlite`).  Differences: kernel names are mangled
``StringTable`` entries (demangled here with ``cxxfilt``); API calls are named from their
CUPTI callback id; a thread is (``processId``, ``threadId``), packed into ``global_tid`` as
``pid << 32 | tid``; kernels and copies get the pid of the API call with their correlation
id (the database has no pid on them); NVTX markers are paired start/end rows.

Rows counted: kernel, copy, set, runtime, driver and marker tables (a range's two marker
rows are both parsed).  Marker rows whose partner is missing are skipped with the reason.
"""
from __future__ import annotations

import pyarrow as pa

from ..grammars import nvprof_sqlite as g
from ..grammars.nsys import quote_ident as q
from ..grammars.cuda_api import base_api_name_sql
from ..grammars.cupti_cbid import api_name
from ..names import name_forms
from .arrow_arrays import arrow_array
from .base import IngestContext, dropped_after, insert_arrow
from .gpu_common import lookup_tables, put_meta
from .nvtx_ranges import insert_nvtx_ranges
from .sqlite_input import NVPROF, SqliteFile, SqliteProfileImporter

GTID = "((b.pid::BIGINT << 32) | (b.tid::BIGINT & 4294967295))"


class NvprofSqliteImporter(SqliteProfileImporter):
    """nvprof databases; the second candidate for an SQLite file whose first bytes do not
    show its tables (after the Nsight Systems importer, which declines an nvprof one)."""

    format, flavour, unsure_score = "nvprof_sqlite", NVPROF, 50

    def read(self, ctx: IngestContext, db: SqliteFile) -> None:
        """Read the open database."""
        _NvprofIngest(ctx, db).run()


class _NvprofIngest:
    def __init__(self, ctx: IngestContext, db: SqliteFile):
        self.ctx, self.db, self.con, self.sid = ctx, db, ctx.con, ctx.source_id
        self.total = self.parsed = self.other = 0

    def _read(self, table: str, cols: list, target: str, select: str, times: str | None = "span") -> None:
        """``cols`` of ``table`` into ``target`` through ``select`` (row numbers: ``_id_``);
        rows with unusable ``times`` are skipped (:meth:`SqliteFile.copy_into`)."""
        rowid = "_id_" if "_id_" in self.db.columns(table) else "rowid"
        self.db.copy_into(self.con, target, table, cols, select, rowid=rowid, times=times)

    def _count(self, table: str) -> int:
        return self.con.execute(f"SELECT count(*) FROM {table} WHERE source_id = ?", [self.sid]).fetchall()[0][0]

    def run(self) -> None:
        ctx, db, con = self.ctx, self.db, self.con
        version = None
        if db.has("Version"):
            row = db.fetchall(f"SELECT * FROM {q('Version')} LIMIT 1")
            version = row[0][0] if row else None
        strings = _first_per_id(db.fetchall(f"SELECT CAST(_id_ AS INTEGER), value FROM {q(g.STRING_TABLE)} "
                                            "ORDER BY rowid")) if db.has(g.STRING_TABLE) else []
        forms = [name_forms(v) if v else (None, None) for _, v in strings]
        names = pa.table({
            "id": arrow_array([s[0] for s in strings], pa.int64()),
            "value": arrow_array([s[1] for s in strings], pa.string()),
            "demangled": arrow_array([f[0] for f in forms], pa.string()),
            "short": arrow_array([f[1] for f in forms], pa.string()),
        })
        with lookup_tables(con, _strings=names):
            self.api_calls()
            self.kernels()
            self.memops()
            self.markers()
            self.devices()
        # kernels and copies: the pid of their API call
        for table in ("gpu_kernels", "gpu_memops"):
            con.execute(f"""
                UPDATE {table} SET pid = c.pid
                FROM (SELECT correlation_id, min(pid) AS pid FROM gpu_api_calls
                      WHERE source_id = $sid GROUP BY correlation_id) c
                WHERE {table}.source_id = $sid AND {table}.correlation_id = c.correlation_id""",
                {"sid": self.sid})
        ctx.finish(self.total, self.parsed, self.other, what="CUDA or NVTX row", unit="row",
                   empty="nvprof database without kernels, copies, API calls or markers")
        ctx.source["dialect"] = f"nvprof-sqlite version {version}" if version is not None else "nvprof-sqlite"
        put_meta(ctx, {"nvprof_db_version": version})

    def api_calls(self) -> None:
        con, db = self.con, self.db
        found = False
        for table, api in g.API_TABLES.items():
            if not db.has(table):
                continue
            found = True
            self.total += db.count(table)
            # the ids as the rows read them (CAST, as the grammar reads an id column: text is
            # 0); a damaged file can still hand back a NULL
            cbids = [c for (c,) in db.fetchall(f"SELECT DISTINCT CAST(cbid AS INTEGER) FROM {q(table)}")
                     if isinstance(c, int)]
            names = pa.table({"cbid": arrow_array(cbids, pa.int64()),
                              "name": arrow_array([api_name(api, c) for c in cbids], pa.string())})
            with lookup_tables(con, _cbid=names):
                self._read(table, g.API, "gpu_api_calls", f"""
                    SELECT {self.sid} AS source_id, b.row_no, '{api}' AS api, n.name,
                           {base_api_name_sql('n.name')} AS base_name,
                           b.start_ns, b.end_ns, b.end_ns - b.start_ns AS duration_ns, b.correlation_id,
                           b.pid, b.tid & 4294967295 AS tid, {GTID} AS global_tid, b.cbid, b.return_value,
                           '{table}' AS origin
                    FROM _arrow b LEFT JOIN _cbid n ON n.cbid = b.cbid WHERE b._d = 0""")
        if not found:
            self.ctx.warnings.append(f"{self.ctx.file.path}: no CUDA runtime/driver API tables")
        self.parsed += self._count("gpu_api_calls")

    def kernels(self) -> None:
        tables = [t for t in g.KERNEL_TABLES if self.db.has(t)]
        for table in tables:
            self.total += self.db.count(table)
            self._read(table, g.KERNEL, "gpu_kernels", f"""
                SELECT {self.sid} AS source_id, b.row_no, s.value AS name, s.demangled, s.short AS short_name,
                       CASE WHEN starts_with(s.value, '_Z') THEN s.value END AS mangled,
                       b.start_ns, b.end_ns, b.end_ns - b.start_ns AS duration_ns, b.device, b.context, b.stream,
                       b.grid_x, b.grid_y, b.grid_z, b.block_x, b.block_y, b.block_z, b.registers,
                       b.static_smem, b.dynamic_smem, b.correlation_id, '{table}' AS origin
                FROM _arrow b LEFT JOIN _strings s ON s.id = b.name_id WHERE b._d = 0""")
        if not tables:
            self.ctx.warnings.append(f"{self.ctx.file.path}: no kernel tables")
        self.parsed += self._count("gpu_kernels")

    def memops(self) -> None:
        con = self.con
        codes = list(g.COPY_KINDS)
        kinds = pa.table({"code": arrow_array(codes, pa.int64()),
                          "short": arrow_array([g.COPY_KINDS[c] for c in codes], pa.string())})
        with lookup_tables(con, _copykinds=kinds):
            for table in (t for t in g.MEMCPY_TABLES if self.db.has(t)):
                self.total += self.db.count(table)
                self._read(table, g.MEMCPY, "gpu_memops", f"""
                    SELECT {self.sid} AS source_id, b.row_no, 'memcpy' AS op, coalesce(k.short, 'kind ' || b.copy_kind) AS kind,
                           '[CUDA memcpy ' || coalesce(k.short, 'kind ' || b.copy_kind) || ']' AS name, b.bytes,
                           b.start_ns, b.end_ns, b.end_ns - b.start_ns AS duration_ns, b.device, b.context, b.stream,
                           b.correlation_id, b.copy_kind, b.src_kind::VARCHAR AS src_kind,
                           b.dst_kind::VARCHAR AS dst_kind, '{table}' AS origin
                    FROM _arrow b LEFT JOIN _copykinds k ON k.code = b.copy_kind WHERE b._d = 0""")
        for table in (t for t in g.MEMSET_TABLES if self.db.has(t)):
            self.total += self.db.count(table)
            self._read(table, g.MEMSET, "gpu_memops", f"""
                SELECT {self.sid} AS source_id, b.row_no, 'memset' AS op, '[CUDA memset]' AS name, b.bytes,
                       b.start_ns, b.end_ns, b.end_ns - b.start_ns AS duration_ns, b.device, b.context, b.stream,
                       b.correlation_id, '{table}' AS origin
                FROM _arrow b WHERE b._d = 0""")
        self.parsed += self._count("gpu_memops")

    def markers(self) -> None:
        """Start/end marker rows paired by id into ranges; instantaneous markers as marks."""
        if not self.db.has(g.MARKER_TABLE):
            return
        con, sid = self.con, self.sid
        n = self.db.count(g.MARKER_TABLE)
        if n == 0:
            return
        self.total += n
        con.execute("CREATE OR REPLACE TEMP TABLE _m (row_no BIGINT, flags BIGINT, ts BIGINT, id BIGINT, "
                    "object_kind BIGINT, object_hex VARCHAR, name_id BIGINT, domain_id BIGINT)")
        before = self.ctx.skipped_count
        self._read(g.MARKER_TABLE, g.MARKER, "_m", "SELECT * EXCLUDE (_d, _bad, _big) FROM _arrow WHERE _d = 0",
                   times="order")
        # objectId: CUpti_ActivityObjectKindId, {uint32 processId; uint32 threadId; ...} little-endian
        def le32(o: int) -> str:
            return (f"try_cast('0x' || substr(object_hex, {o + 6}, 2) || substr(object_hex, {o + 4}, 2) || "
                    f"substr(object_hex, {o + 2}, 2) || substr(object_hex, {o}, 2) AS UBIGINT)")

        con.execute(f"""
            CREATE OR REPLACE TEMP TABLE _nvtx AS
            WITH m AS (
                SELECT *, {le32(1)} AS pid, {le32(9)} AS tid FROM _m
            ), starts AS (
                SELECT * FROM m WHERE flags & {g.MARKER_START} <> 0
            ), ends AS (
                SELECT id, min(ts) AS end_ns, count(*) AS n FROM m WHERE flags & {g.MARKER_END} <> 0 GROUP BY id
            )
            SELECT {sid} AS source_id, s.row_no, st.value AS text, 'push_pop' AS kind, 'push_pop' AS event_type,
                   s.ts AS start_ns, e.end_ns, e.end_ns - s.ts AS duration_ns, s.pid::BIGINT AS pid,
                   s.tid::BIGINT AS tid, (s.pid::BIGINT << 32) | s.tid::BIGINT AS global_tid,
                   s.domain_id, NULL::BIGINT AS category
            FROM starts s JOIN ends e USING (id) LEFT JOIN _strings st ON st.id = s.name_id
            UNION ALL
            SELECT {sid}, i.row_no, st.value, 'mark', 'mark', i.ts, NULL, NULL, i.pid::BIGINT, i.tid::BIGINT,
                   (i.pid::BIGINT << 32) | i.tid::BIGINT, i.domain_id, NULL
            FROM m i LEFT JOIN _strings st ON st.id = i.name_id
            WHERE i.flags & {g.MARKER_INSTANTANEOUS} <> 0
        """)
        ranges = con.execute("SELECT count(*) FILTER (WHERE kind = 'push_pop'), count(*) FROM _nvtx").fetchall()[0]
        paired = ranges[0] * 2 + (ranges[1] - ranges[0])
        for row_no, flags, mid in con.execute(f"""
                SELECT row_no, flags, id FROM _m m
                WHERE NOT (flags & {g.MARKER_INSTANTANEOUS} <> 0)
                  AND (SELECT count(*) FROM _m o WHERE o.id = m.id) <> 2
                ORDER BY row_no""").fetchall():
            self.ctx.skip(row_no, f"NVTX marker {mid}: start or end row missing", f"{g.MARKER_TABLE} row {row_no}")
        self.parsed += paired
        self.other += max(0, n - paired - (self.ctx.skipped_count - before))
        with dropped_after(con, "_nvtx", "_m"):
            insert_nvtx_ranges(con, {}, op_kinds=None)

    def devices(self) -> None:
        if not self.db.has(g.DEVICE_TABLE):
            return
        cols = self.db.columns(g.DEVICE_TABLE)
        want = ["id", "name", "numMultiprocessors", "globalMemorySize", "computeCapabilityMajor",
                "computeCapabilityMinor"]
        sel = ", ".join(q(c) if c in cols else "NULL" for c in want)
        rows = self.db.fetchall(f"SELECT {sel} FROM {q(g.DEVICE_TABLE)}")
        if not rows:
            return
        names = dict(self.con.execute("SELECT id, value FROM _strings").fetchall())
        tbl = pa.table({
            "source_id": arrow_array([self.sid] * len(rows), pa.int32()),
            "device": arrow_array([r[0] for r in rows], pa.int32()),
            "name": arrow_array([names.get(r[1], r[1] if isinstance(r[1], str) else None) for r in rows], pa.string()),
            "sm_count": arrow_array([r[2] for r in rows], pa.int32()),
            "total_memory": arrow_array([r[3] for r in rows], pa.int64()),
            "compute_capability": arrow_array([f"{r[4]}.{r[5]}" if r[4] is not None else None for r in rows], pa.string()),
        })
        insert_arrow(self.con, "gpu_devices", tbl)


def _first_per_id(rows: list[tuple]) -> list[tuple[int, str | None]]:
    """(id, text) of a string table's rows: the first row of each id (a damaged file may
    repeat one), integer ids only (as the id columns read them), text as text."""
    first: dict[int, str | None] = {}
    for i, v in rows:
        if isinstance(i, int) and i not in first:
            first[i] = v if v is None or isinstance(v, str) else str(v)
    return list(first.items())
