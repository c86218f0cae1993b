"""The query layer: one module per question family, chosen by the ``--by`` keys.

Each family module exposes ``FAMILY`` (a name), ``KEYS`` (the ``--by`` keys it answers),
``DEFAULT_BY``, ``has_data(con) -> bool`` and
``summary(con, by, run=None, top=None, **options) -> (columns, rows)``.
"""
from __future__ import annotations

from . import gpu_summary, onednn_summary, trace_summary

#: every summary family, in the order used to break ties
#: (trace before gpu: trace files also fill gpu_kernels, and their --by op is per operator)
FAMILIES = [onednn_summary, trace_summary, gpu_summary, trace_summary.TABLES]


class QueryError(Exception):
    pass


def family_for(con, keys: list[str], family: str | None = None):
    """The family answering ``keys``: named by ``family``, else the only one knowing every
    key, else (for keys several families know, like ``op``) the first that has data."""
    if family:
        for fam in FAMILIES:
            if fam.FAMILY == family:
                return fam
        raise QueryError(f"unknown --family {family!r}; choose from {', '.join(f.FAMILY for f in FAMILIES)}")
    able = [fam for fam in FAMILIES if all(k in fam.KEYS for k in keys)]
    if not able:
        known = sorted({k for fam in FAMILIES for k in fam.KEYS})
        raise QueryError(f"unknown --by key(s) {', '.join(keys)}; choose from {', '.join(known)}")
    if len(able) == 1:
        return able[0]
    with_data = [fam for fam in able if fam.has_data(con)]
    return (with_data or able)[0]
