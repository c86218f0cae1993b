"""Nsight Systems SQLite exports (``nsys export --type sqlite``, 2021-2025 releases).

Each table is streamed out of SQLite as Arrow batches (:class:`sqlite_input.SqliteFile`) and
transformed by one DuckDB INSERT (names joined from ``StringIds``, pid/tid unpacked from
``globalPid``/``globalTid``).  The schema mapping is :mod:`loganalyze.grammars.nsys`.

Row accounting (``sources.lines_*`` count rows of the tables read): kernels, copies, sets,
runtime/driver calls and NVTX ranges, marks, thread names and domain names are parsed; the
runtime table's other event classes (67 = CUDA backtrace, a second row for calls already
present) and NVTX category/domain-destroy rows are "other"; NVTX rows of an unknown event
type are skipped with their reason.
"""
from __future__ import annotations

from ..grammars import nsys as g
from ..grammars.nsys import quote_ident as q
from ..grammars.cuda_api import base_api_name_sql
from ..inputs import InputError
from ..names import name_forms
from .base import IngestContext, dropped_after
from .gpu_common import insert_values, lookup_tables, put_meta
from .nvtx_ranges import insert_nvtx_ranges
from .sqlite_input import NSYS, SqliteFile, SqliteProfileImporter

#: CUPTI memory kinds (CUpti_ActivityMemoryKind)
MEMORY_KINDS = {0: "Unknown", 1: "Pageable", 2: "Pinned", 3: "Device", 4: "Array", 5: "Managed",
                6: "Device Static", 7: "Managed Static"}


#: the few distinct name id triples of the kernel rows ``_arrow``, named once: a table of
#: its own, whose size DuckDB knows.  (As a subquery of the kernels' SELECT, DuckDB took
#: it for the big side of the join and built its hash table from the kernel rows.)
KERNEL_NAMES_SQL = """CREATE OR REPLACE TEMP TABLE _knames AS
    SELECT t.*, dn.value AS dn, sn.value AS sn, mn.value AS mn
    FROM (SELECT DISTINCT demangled_id, short_id, mangled_id FROM _arrow WHERE _d = 0) t
    LEFT JOIN _strings dn ON dn.id = t.demangled_id
    LEFT JOIN _strings sn ON sn.id = t.short_id
    LEFT JOIN _strings mn ON mn.id = t.mangled_id"""


class NsysSqliteImporter(SqliteProfileImporter):
    """Nsight Systems SQLite exports; tried first for an SQLite file whose first bytes do
    not show its tables (an nvprof one it declines, for the nvprof importer)."""

    format, flavour, unsure_score = "nsys_sqlite", NSYS, 60

    def read(self, ctx: IngestContext, db: SqliteFile) -> None:
        """Read the open export."""
        _NsysIngest(ctx, db).run()


class _NsysIngest:
    def __init__(self, ctx: IngestContext, db: SqliteFile):
        self.ctx, self.db, self.con, self.sid = ctx, db, ctx.con, ctx.source_id
        self.total = self.parsed = self.other = 0
        self.missing: list[str] = []
        self.prefetched = False

    # ------------------------------------------------------------------ driver
    def run(self) -> None:
        ctx, db = self.ctx, self.db
        meta = self.metadata()
        self.load_strings()
        with dropped_after(self.con, "_strings"):
            self.kernels()
            self.prefetch_rest()  # (done already when there are kernels)
            self.memops()
            self.api_calls()
            self.nvtx()
            self.threads()
            self.devices()
        if not any(db.has(t) for t in g.KERNEL_TABLES + g.MEMCPY_TABLES + g.MEMSET_TABLES + g.RUNTIME_TABLES
                   + g.NVTX_TABLES):
            raise InputError(
                f"{ctx.file.path}: Nsight Systems export without CUDA or NVTX data (no CUPTI_ACTIVITY_KIND_KERNEL, "
                "_MEMCPY, _MEMSET, _RUNTIME and no NVTX_EVENTS table)"
            )
        if self.missing:
            ctx.warnings.append(f"{ctx.file.path}: no {', no '.join(self.missing)}")
        ctx.finish(self.total, self.parsed, self.other, what="CUDA or NVTX row", unit="row",
                   empty="Nsight Systems export without CUDA or NVTX rows")
        version = meta.get("EXPORT_PRODUCT_VERSION")
        schema = meta.get("EXPORT_SCHEMA_VERSION")
        ctx.source["library_version"] = f"Nsight Systems {version}" if version else None
        meta_table = db.first(*g.META_TABLES) or "no metadata table"
        ctx.source["dialect"] = f"nsys-sqlite schema {schema or '?'} ({meta_table})"

    # ------------------------------------------------------------------ metadata
    def metadata(self) -> dict:
        db, out = self.db, {}
        table = db.first(*g.META_TABLES)
        if table:
            for name, value in db.fetchall(f"SELECT name, value FROM {q(table)}"):
                out[str(name)] = value
        if db.has("META_DATA_CAPTURE"):
            for name, value in db.fetchall(f"SELECT name, value FROM {q('META_DATA_CAPTURE')}"):
                out.setdefault(f"capture.{name}", value)
        items = {f"export.{k}" if not k.startswith("capture.") else k: v for k, v in out.items()}
        items["metadata_table"] = table
        items["has_enum_tables"] = any(t.startswith("ENUM_") for t in db.tables)
        if db.has(g.SESSION_TABLE):
            cols = db.columns(g.SESSION_TABLE)
            pick = [c for c in ("utcEpochNs", "utcTime", "localTime") if c in cols]
            if pick:
                row = db.fetchall(f'SELECT {", ".join(map(q, pick))} FROM {q(g.SESSION_TABLE)} LIMIT 1')
                if row:
                    for c, v in zip(pick, row[0]):
                        items[f"session_start.{c}"] = v
        put_meta(self.ctx, items)
        return out

    def load_strings(self) -> None:
        self.con.execute("CREATE OR REPLACE TEMP TABLE _strings (id BIGINT, value VARCHAR, base VARCHAR)")
        if not self.db.has(g.STRING_TABLE):
            return
        # one string per id, the first in the table (ids are its key; only a damaged file
        # repeats one, which would repeat every row joined to it)
        self.db.copy_into(self.con, "_strings", g.STRING_TABLE, [g.C("id"), g.C("value", type="TEXT")],
                          f"""SELECT id, value, {base_api_name_sql('value')} AS base FROM _arrow WHERE _d = 0
                              QUALIFY row_number() OVER (PARTITION BY id ORDER BY row_no) = 1""",
                          times=None)

    def prefetch_rest(self) -> None:
        """Start reading the runtime and NVTX tables on helper threads (once): called when the
        kernels are read (on both cores), so that the runtime calls are read on one core while
        DuckDB stores the kernels on the other."""
        if self.prefetched:
            return
        self.prefetched = True
        for table, cols in ((self.db.first(*g.RUNTIME_TABLES), g.RUNTIME), (self.db.first(*g.NVTX_TABLES), g.NVTX)):
            if table:
                self.db.prefetch(table, cols)

    def _count_new(self, table: str) -> int:
        return self.con.execute(f"SELECT count(*) FROM {table} WHERE source_id = ?", [self.sid]).fetchall()[0][0]

    # ------------------------------------------------------------------ kernels
    def kernels(self) -> int:
        tables = [t for t in g.KERNEL_TABLES if self.db.has(t)]
        if not tables:
            self.missing.append("kernel table (CUPTI_ACTIVITY_KIND_KERNEL)")
            return 0
        for table in tables:
            self.total += self.db.count(table)
            self._copy_kernels(table)
        n = self._count_new("gpu_kernels")
        self.parsed += n
        self._fill_names()
        return n

    def _copy_kernels(self, table: str) -> None:
        with dropped_after(self.con, "temp._knames"):
            self.db.copy_into(self.con, "gpu_kernels", table, g.KERNEL, prepare=KERNEL_NAMES_SQL, select=f"""
                SELECT {self.sid} AS source_id, b.row_no,
                       coalesce(n.dn, n.mn, n.sn) AS name, n.dn AS demangled, n.sn AS short_name, n.mn AS mangled,
                       b.start_ns, b.end_ns, b.end_ns - b.start_ns AS duration_ns,
                       b.device, b.context, b.stream, b.grid_x, b.grid_y, b.grid_z,
                       b.block_x, b.block_y, b.block_z, b.registers, b.static_smem, b.dynamic_smem,
                       b.correlation_id, {g.pid_of('b.global_pid')} AS pid, '{table}' AS origin
                FROM _arrow b
                LEFT JOIN _knames n ON n.demangled_id IS NOT DISTINCT FROM b.demangled_id
                   AND n.short_id IS NOT DISTINCT FROM b.short_id
                   AND n.mangled_id IS NOT DISTINCT FROM b.mangled_id
                WHERE b._d = 0""", when_read=self.prefetch_rest)

    def _fill_names(self) -> None:
        """Demangled and short names the export did not give (old exports)."""
        rows = self.con.execute(
            """SELECT DISTINCT name FROM gpu_kernels
               WHERE source_id = ? AND (short_name IS NULL OR demangled IS NULL) AND name IS NOT NULL""",
            [self.sid],
        ).fetchall()
        if not rows:
            return
        names = [r[0] for r in rows]
        forms = [name_forms(n) for n in names]
        tbl = {"name": ("VARCHAR", names), "d": ("VARCHAR", [f[0] for f in forms]),
               "s": ("VARCHAR", [f[1] for f in forms])}
        with lookup_tables(self.con, _nf=tbl):
            self.con.execute(
                """UPDATE gpu_kernels SET demangled = coalesce(demangled, _nf.d),
                          short_name = coalesce(short_name, _nf.s)
                   FROM _nf WHERE gpu_kernels.source_id = ? AND gpu_kernels.name = _nf.name""",
                [self.sid],
            )

    # ------------------------------------------------------------------ copies and sets
    def _enum(self, table: str, column: str | None = None) -> dict[int, str]:
        """An ENUM_ table's labels (``column``, else its label or name) by id; ids as the
        id columns read them (CAST), rows without an id or a label left out."""
        if not self.db.has(table):
            return {}
        cols = self.db.columns(table)
        label = column or ("label" if "label" in cols else "name")
        if label not in cols:
            return {}
        rows = self.db.fetchall(f"SELECT CAST(id AS INTEGER), {q(label)} FROM {q(table)}")
        return {i: str(v) for i, v in rows if isinstance(i, int) and v is not None}

    def memops(self) -> int:
        enum = self._enum("ENUM_CUDA_MEMCPY_OPER")
        codes = sorted(set(g.COPY_KINDS) | set(enum))
        kinds = {
            "code": ("BIGINT", codes),
            "short": ("VARCHAR", [g.COPY_KINDS.get(c, (f"kind {c}", None))[0] for c in codes]),
            "label": ("VARCHAR", [enum.get(c) or g.COPY_KINDS.get(c, (None, f"kind {c}"))[1] for c in codes]),
        }
        mem = {"code": ("BIGINT", list(MEMORY_KINDS)), "label": ("VARCHAR", list(MEMORY_KINDS.values()))}
        with lookup_tables(self.con, _copykinds=kinds, _memkinds=mem):
            for table in (t for t in g.MEMCPY_TABLES if self.db.has(t)):
                self.total += self.db.count(table)
                self.db.copy_into(self.con, "gpu_memops", table, g.MEMCPY, f"""
                    SELECT {self.sid} AS source_id, b.row_no, 'memcpy' AS op, k.short AS kind,
                           '[CUDA memcpy ' || coalesce(k.label, 'kind ' || b.copy_kind) || ']' AS name,
                           b.bytes, b.start_ns, b.end_ns, b.end_ns - b.start_ns AS duration_ns, b.device,
                           b.context, b.stream, b.correlation_id, {g.pid_of('b.global_pid')} AS pid,
                           b.copy_kind, sk.label AS src_kind, dk.label AS dst_kind, '{table}' AS origin
                    FROM _arrow b
                    LEFT JOIN _copykinds k ON k.code = b.copy_kind
                    LEFT JOIN _memkinds sk ON sk.code = b.src_kind
                    LEFT JOIN _memkinds dk ON dk.code = b.dst_kind
                    WHERE b._d = 0""")
            for table in (t for t in g.MEMSET_TABLES if self.db.has(t)):
                self.total += self.db.count(table)
                self.db.copy_into(self.con, "gpu_memops", table, g.MEMSET, f"""
                    SELECT {self.sid} AS source_id, b.row_no, 'memset' AS op, NULL AS kind, '[CUDA memset]' AS name,
                           b.bytes, b.start_ns, b.end_ns, b.end_ns - b.start_ns AS duration_ns, b.device,
                           b.context, b.stream, b.correlation_id, {g.pid_of('b.global_pid')} AS pid,
                           '{table}' AS origin
                    FROM _arrow b WHERE b._d = 0""")
        n = self._count_new("gpu_memops")
        self.parsed += n
        return n

    # ------------------------------------------------------------------ API calls
    def api_calls(self) -> int:
        tables = [t for t in g.RUNTIME_TABLES if self.db.has(t)]
        if not tables:
            self.missing.append("CUDA API table (CUPTI_ACTIVITY_KIND_RUNTIME): kernels cannot be tied to launches")
            return 0
        other: dict[str, int] = {}
        for table in tables:
            self.total += self.db.count(table)
            has_class = "eventClass" in self.db.columns(table)
            default_api = "driver" if table.endswith("DRIVER") else "runtime"
            # a row without an eventClass is a call of the table's own API (as it is stored)
            code = 0 if default_api == "runtime" else 1
            event_class, b_event_class = (f"coalesce({alias}event_class, {code})" for alias in ("", "b."))
            classes = self.db.copy_into(self.con, "gpu_api_calls", table, g.RUNTIME, f"""
                SELECT {self.sid} AS source_id, b.row_no,
                       CASE {b_event_class} WHEN 0 THEN 'runtime' ELSE 'driver' END AS api,
                       coalesce(s.value, b.name_text) AS name,
                       coalesce(s.base, {base_api_name_sql('b.name_text')}) AS base_name,
                       b.start_ns, b.end_ns, b.end_ns - b.start_ns AS duration_ns, b.correlation_id,
                       {g.pid_of('b.global_tid')} AS pid, {g.tid_of('b.global_tid')} AS tid,
                       b.global_tid, b.event_class, b.return_value, '{table}' AS origin
                FROM _arrow b LEFT JOIN _strings s ON s.id = b.name_id
                WHERE b._d = 0 AND {b_event_class} IN (0, 1)""",
                checked=f"{event_class} IN (0, 1)",
                tally=f"SELECT {event_class}, count(*) FROM _arrow WHERE _d = 0 GROUP BY 1" if has_class else None)
            for ec, cnt in classes:
                if ec not in g.EVENT_CLASS_API:
                    key = f"{ec}:{g.EVENT_CLASS_NAMES.get(ec, 'other')}"
                    other[key] = other.get(key, 0) + cnt
        n = self._count_new("gpu_api_calls")
        self.parsed += n
        n_other = sum(other.values())
        self.other += n_other
        if other:
            put_meta(self.ctx, {"runtime_rows_other_eventClass": ", ".join(f"{k}={v}" for k, v in sorted(other.items()))})
        return n

    # ------------------------------------------------------------------ NVTX
    def nvtx(self) -> int:
        table = self.db.first(*g.NVTX_TABLES)
        if not table:
            self.missing.append("NVTX_EVENTS table: no NVTX ranges (nothing for --by op and --by nvtx)")
            return 0
        con = self.con
        n_rows = self.db.count(table)
        self.total += n_rows
        types = dict(g.NVTX_EVENT_TYPES)
        for code, name in self._enum("ENUM_NSYS_EVENT_TYPE", "name").items():
            kind = g.NVTX_ENUM_NAMES.get(name)
            if kind:
                types[code] = kind
        tmap = {"code": ("BIGINT", list(types)), "kind": ("VARCHAR", list(types.values()))}
        with lookup_tables(con, _nvtx_types=tmap):
            con.execute("""CREATE OR REPLACE TEMP TABLE _nvtx (source_id INTEGER, row_no BIGINT, text VARCHAR,
                event_type VARCHAR, kind VARCHAR, code BIGINT, start_ns BIGINT, end_ns BIGINT, duration_ns BIGINT,
                pid BIGINT, tid BIGINT, global_tid BIGINT, domain_id BIGINT, category BIGINT)""")
            self.db.copy_into(self.con, "_nvtx", table, g.NVTX, f"""
                SELECT {self.sid} AS source_id, b.row_no, coalesce(b.text, s.value) AS text, t.kind AS event_type,
                       t.kind, b.event_type AS code, b.start_ns, b.end_ns,
                       b.end_ns - b.start_ns AS duration_ns,
                       {g.pid_of('b.global_tid')} AS pid, {g.tid_of('b.global_tid')} AS tid, b.global_tid,
                       b.domain_id, b.category
                FROM _arrow b LEFT JOIN _strings s ON s.id = b.text_id
                LEFT JOIN _nvtx_types t ON t.code = b.event_type
                WHERE b._d = 0""", times="order")
        # domains and thread names
        domains = con.execute(
            "SELECT domain_id, any_value(text) FROM _nvtx WHERE kind = 'domain_create' GROUP BY 1"
        ).fetchall()
        con.execute(
            """INSERT INTO gpu_threads BY NAME
               SELECT source_id, pid, tid, global_tid, text AS name FROM _nvtx WHERE kind = 'thread_name'"""
        )
        unknown = con.execute(
            "SELECT row_no, code FROM _nvtx WHERE kind IS NULL ORDER BY row_no"
        ).fetchall()
        for row_no, code in unknown:
            self.ctx.skip(row_no, f"NVTX eventType {code} is not a range, mark, thread or domain name",
                          f"{table} row {row_no}")
        counts = dict(con.execute("SELECT coalesce(kind, '?'), count(*) FROM _nvtx GROUP BY 1").fetchall())
        self.parsed += sum(counts.get(k, 0) for k in ("push_pop", "start_end", "mark", "thread_name", "domain_create"))
        self.other += sum(counts.get(k, 0) for k in ("category", "domain_destroy"))
        insert_nvtx_ranges(con, dict(domains))
        con.execute("DROP TABLE IF EXISTS _nvtx")
        put_meta(self.ctx, {f"nvtx_events.{k}": v for k, v in counts.items()})
        return n_rows

    # ------------------------------------------------------------------ threads and devices
    def threads(self) -> None:
        if not self.db.has(g.THREAD_NAMES_TABLE):
            return
        cols = self.db.columns(g.THREAD_NAMES_TABLE)
        if not {"nameId", "globalTid"} <= cols:
            return
        rows = self.db.fetchall(f"SELECT nameId, globalTid FROM {q(g.THREAD_NAMES_TABLE)}")
        tbl = {"name_id": ("BIGINT", [r[0] for r in rows]), "gtid": ("BIGINT", [r[1] for r in rows])}
        with lookup_tables(self.con, _thread_ids=tbl):
            self.con.execute(f"""
                INSERT INTO gpu_threads BY NAME
                SELECT {self.sid} AS source_id, {g.pid_of('gtid')} AS pid, {g.tid_of('gtid')} AS tid,
                       gtid AS global_tid, s.value AS name
                FROM _thread_ids t LEFT JOIN _strings s ON s.id = t.name_id""")

    def devices(self) -> None:
        table = self.db.first(*g.GPU_INFO_TABLES)
        if not table:
            return
        present = self.db.columns(table)
        sel = []
        for c in g.GPU_INFO:
            src = next((s for s in c.sources if s in present), None)
            sel.append(q(src) if src else "NULL")
        rows = self.db.fetchall(f'SELECT {", ".join(sel)} FROM {q(table)}')
        if not rows:
            return
        cc = [f"{r[4]}.{r[5]}" if r[4] is not None else None for r in rows]
        insert_values(self.con, "gpu_devices", {
            "source_id": ("INTEGER", [self.sid] * len(rows)),
            "device": ("INTEGER", [r[0] for r in rows]), "name": ("VARCHAR", [r[1] for r in rows]),
            "sm_count": ("INTEGER", [r[2] for r in rows]), "total_memory": ("BIGINT", [r[3] for r in rows]),
            "compute_capability": ("VARCHAR", cc), "bus": ("VARCHAR", [r[6] for r in rows]),
        })
