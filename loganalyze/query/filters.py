"""The one way a question is restricted to some files: by run label and source ids."""
from __future__ import annotations


def source_filter(run: str | None, source_ids: list[int] | None, prefix: str = "") -> tuple[list[str], list]:
    """SQL conditions and parameters over a table with ``run_label`` and ``source_id``
    columns (``prefix`` names its alias, e.g. ``"s."``)."""
    conds, params = [], []
    if run is not None:
        conds.append(f"{prefix}run_label = ?")
        params.append(run)
    if source_ids:
        conds.append(f"{prefix}source_id IN ({', '.join(str(int(s)) for s in source_ids)})")
    return conds, params
