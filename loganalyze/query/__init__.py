"""The query layer: one module per question family, chosen by the ``--by`` keys.

Each family module exposes ``FAMILY`` (a name), ``KEYS`` (the ``--by`` keys it answers),
``DEFAULT_BY``, ``has_data(con) -> bool`` and
``summary(con, by, run=None, top=None, **options) -> (columns, rows)``.
"""
from __future__ import annotations

from . import gpu_summary, onednn_summary, trace_summary
from .errors import NoData, QueryError

#: every summary family, in the order used to break ties
#: (trace before gpu: trace files also fill gpu_kernels, and their --by op is per operator)
FAMILIES = [onednn_summary, trace_summary, gpu_summary, trace_summary.TABLES]




def families_present(con) -> list:
    """The summary families with data in the database, in :data:`FAMILIES` order."""
    return [fam for fam in FAMILIES if fam.has_data(con)]


def no_data(con, fam, keys: list[str], filtered: bool) -> NoData:
    """The error for an empty summary: what is missing and what the database holds instead."""
    if filtered and fam.has_data(con):
        return NoData(f"the chosen run/files hold no {fam.FAMILY} data for --by {','.join(keys)}")
    present = [f for f in families_present(con) if f is not fam]
    if fam.has_data(con):
        return NoData(f"no {fam.FAMILY} data for --by {','.join(keys)}")
    hint = ("; it holds " + ", ".join(f"{f.FAMILY} data (summary --family {f.FAMILY})" for f in present)
            if present else "; the database is empty: run 'loganalyze ingest FILE' first")
    return NoData(f"no {fam.FAMILY} data in the database{hint}")


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
