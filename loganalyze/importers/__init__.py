"""One importer per format family, chosen by sniffing the first bytes of each file."""
from __future__ import annotations

from .base import IngestContext, Importer
from .onednn import OneDNNVerboseImporter
from .trace_json import TraceJsonImporter
from .mxnet_table import MXNetTableImporter
from .torch_table import TorchTableImporter
from .cntk import CntkImporter
from .gpu import gpu_importers

#: every importer, most specific first
IMPORTERS: list[type] = [OneDNNVerboseImporter]
IMPORTERS += [TraceJsonImporter, MXNetTableImporter, TorchTableImporter, CntkImporter]
IMPORTERS += gpu_importers()


def candidate_importers(head: bytes, name: str) -> list[Importer]:
    """Every importer that claims the file, most sure first."""
    scored = []
    for i, cls in enumerate(IMPORTERS):
        imp = cls()
        score = imp.sniff(head, name)
        if score > 0:
            scored.append((-score, i, imp))
    return [imp for _, _, imp in sorted(scored, key=lambda t: (t[0], t[1]))]


def fallback_importer() -> Importer:
    """Text whose first block shows no known format: the verbose reader scans it all
    (verbose lines may start after a long stretch of application output)."""
    return OneDNNVerboseImporter()


def known_formats() -> list[str]:
    """Every format an importer reads (``sources.format`` values), in detection order."""
    return list(dict.fromkeys(cls.format for cls in IMPORTERS))


__all__ = ["known_formats", "IngestContext", "Importer", "IMPORTERS", "candidate_importers", "fallback_importer"]
