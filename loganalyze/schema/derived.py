"""Tables derived from a file's rows, written in the file's own transaction right after its
importer ran: small aggregates the summaries read instead of scanning every event.

Each entry is one INSERT ... SELECT over the rows of source ``$sid``; a table that does not
concern the file's format simply gets no rows.  Databases made before a derived table existed
are still answered: the summaries fall back to the events for files without derived rows.
"""
from __future__ import annotations

DERIVED = {
    "onednn_shape_totals": """
        INSERT INTO onednn_shape_totals
        SELECT source_id, shape_id, count(*), count(time_ms), sum(time_ms::DECIMAL(38,18)),
               min(time_ms), max(time_ms)
        FROM onednn_events WHERE source_id = $sid GROUP BY ALL""",
}


def derive(con, source_id: int) -> None:
    """Write every derived table's rows for one file (inside the caller's transaction)."""
    for sql in DERIVED.values():
        con.execute(sql, {"sid": int(source_id)})
