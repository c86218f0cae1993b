"""The GPU profile importers, registered in one place (``importers.IMPORTERS`` adds them)."""
from __future__ import annotations


def gpu_importers() -> list[type]:
    from .ncu import NcuCsvImporter
    from .nsys import NsysSqliteImporter
    from .nsys_stats import NsysStatsImporter
    from .nvprof_sqlite import NvprofSqliteImporter
    from .nvprof_text import NvprofTextImporter
    from .pyprof import PyProfImporter

    return [NsysSqliteImporter, NvprofSqliteImporter, NvprofTextImporter, NsysStatsImporter, NcuCsvImporter,
            PyProfImporter]
