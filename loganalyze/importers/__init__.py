"""One importer per format family, chosen by sniffing the first bytes of each file."""
from __future__ import annotations

from .base import IngestContext, Importer
from .onednn import OneDNNVerboseImporter

#: every importer, most specific first
IMPORTERS: list[type] = [OneDNNVerboseImporter]


def choose_importer(head: bytes, name: str) -> Importer | None:
    """The importer most sure of reading a file that starts with ``head``."""
    best, best_score = None, 0
    for cls in IMPORTERS:
        imp = cls()
        score = imp.sniff(head, name)
        if score > best_score:
            best, best_score = imp, score
    return best


def fallback_importer() -> Importer:
    """Text whose first block shows no known format: the verbose reader scans it all
    (verbose lines may start after a long stretch of application output)."""
    return OneDNNVerboseImporter()


__all__ = ["IngestContext", "Importer", "IMPORTERS", "choose_importer", "fallback_importer"]
