"""CUDA runtime/driver API call names as the profilers record them.

CUPTI, nvprof and Nsight Systems name an API entry point with the version of its ABI
appended (``cudaMemcpy_v3020``, ``cuLaunchKernel_ptsz_v7000``... but ``cuInit``): the
*base* name is the name without that ``_vNNNN`` suffix.  The rule is written once, here,
for Python (:data:`API_VERSION_SUFFIX_RE`, :func:`base_api_name`) and for DuckDB SQL
(:data:`API_VERSION_SUFFIX_SQL`, :func:`base_api_name_sql`).
"""
from __future__ import annotations

import re

#: the version suffix of an API name, as a regular expression both Python's ``re`` and
#: DuckDB's ``regexp_replace`` (RE2) read the same way
API_VERSION_SUFFIX_SQL = "_v[0-9]+$"
API_VERSION_SUFFIX_RE = re.compile(API_VERSION_SUFFIX_SQL)


def base_api_name(name: str | None) -> str | None:
    """``cudaMemcpy_v3020`` -> ``cudaMemcpy``; names without the suffix (and None) unchanged."""
    return API_VERSION_SUFFIX_RE.sub("", name) if name else name


def base_api_name_sql(expr: str) -> str:
    """The SQL expression giving the base name of the API name in SQL expression ``expr``."""
    return f"regexp_replace({expr}, '{API_VERSION_SUFFIX_SQL}', '')"
