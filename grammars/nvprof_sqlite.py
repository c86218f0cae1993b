"""nvprof SQLite databases (``nvprof -o file.nvvp`` / ``.sql``): the schema mapping.

Tables ``CUPTI_ACTIVITY_KIND_<KIND>`` hold CUPTI activity records with an ``_id_`` key;
names are ids into ``StringTable(_id_, value)`` (kernel names mangled); API calls carry only
their CUPTI callback id (``cbid``, named by :mod:`loganalyze.grammars.cupti_cbid`).  With
concurrent-kernel mode on (the default) kernels are in ``..._CONCURRENT_KERNEL`` and
``..._KERNEL`` is empty; both are read.  NVTX markers are ``..._MARKER`` rows (one at the
start and one at the end of a range, paired by ``id``; flags say which) with their payload
in ``..._MARKER_DATA``.
"""
from __future__ import annotations

from .nsys import CUPTI_TABLE_PREFIX, C

STRING_TABLE = "StringTable"
#: all of these in a file's first bytes (the SQLite schema) show an nvprof database
HEAD_MARKERS = (STRING_TABLE, CUPTI_TABLE_PREFIX.rstrip("_"))


def is_database(tables: set[str]) -> bool:
    """Whether a database with ``tables`` is nvprof's: its string table and CUPTI activity."""
    return STRING_TABLE in tables and any(t.startswith(CUPTI_TABLE_PREFIX) for t in tables)
KERNEL_TABLES = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL",
                 "CUPTI_ACTIVITY_KIND_CDP_KERNEL")
KERNEL = [
    C("start_ns", "start"), C("end_ns", "end"), C("device", "deviceId"), C("context", "contextId"),
    C("stream", "streamId"), C("correlation_id", "correlationId"), C("name_id", "name"),
    C("registers", "registersPerThread"), C("grid_x", "gridX"), C("grid_y", "gridY"), C("grid_z", "gridZ"),
    C("block_x", "blockX"), C("block_y", "blockY"), C("block_z", "blockZ"),
    C("static_smem", "staticSharedMemory"), C("dynamic_smem", "dynamicSharedMemory"),
]
MEMCPY_TABLES = ("CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMCPY2")
MEMCPY = [
    C("start_ns", "start"), C("end_ns", "end"), C("device", "deviceId"), C("context", "contextId"),
    C("stream", "streamId"), C("correlation_id", "correlationId"), C("bytes"), C("copy_kind", "copyKind"),
    C("src_kind", "srcKind"), C("dst_kind", "dstKind"),
]
MEMSET_TABLES = ("CUPTI_ACTIVITY_KIND_MEMSET",)
MEMSET = [
    C("start_ns", "start"), C("end_ns", "end"), C("device", "deviceId"), C("context", "contextId"),
    C("stream", "streamId"), C("correlation_id", "correlationId"), C("bytes"),
]
API_TABLES = {"CUPTI_ACTIVITY_KIND_RUNTIME": "runtime", "CUPTI_ACTIVITY_KIND_DRIVER": "driver"}
API = [
    C("start_ns", "start"), C("end_ns", "end"), C("cbid"), C("pid", "processId"), C("tid", "threadId"),
    C("correlation_id", "correlationId"), C("return_value", "returnValue"),
]
MARKER_TABLE = "CUPTI_ACTIVITY_KIND_MARKER"
MARKER = [C("flags"), C("ts", "timestamp"), C("id"), C("object_kind", "objectKind"),
          C("object_hex", "=hex(objectId)", type="TEXT"), C("name_id", "name"), C("domain_id", "domain")]
#: CUpti_ActivityFlag bits of marker records
MARKER_INSTANTANEOUS, MARKER_START, MARKER_END = 1, 2, 4
DEVICE_TABLE = "CUPTI_ACTIVITY_KIND_DEVICE"

#: CUpti_ActivityMemcpyKind -> nvprof's short name, as in ``[CUDA memcpy HtoD]``
COPY_KINDS = {0: "Unknown", 1: "HtoD", 2: "DtoH", 3: "HtoA", 4: "AtoH", 5: "AtoA", 6: "AtoD", 7: "DtoA",
              8: "DtoD", 9: "HtoH", 10: "PtoP"}
