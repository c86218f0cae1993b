"""The cores this process may use (its CPU affinity): how many worker processes a parallel
ingest starts and how many parts a large trace is parsed in."""
from __future__ import annotations

import os


def usable_cores() -> int:
    """Cores this process may run on (at least 1)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)
