"""The public corpus (``../shared/corpus``) and its independent answers, for the benchmarks
that grow its real files (bench_onednn_dialects.py, bench_trace_real.py)."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def expected_for(source: Path) -> dict | None:
    """The corpus's independent answers for ``source`` (``expected/<file>.expected.json``;
    None when it has none, or when the file is not the one they were computed from)."""
    index_path = CORPUS / "expected" / "index.json"
    if not index_path.exists():
        return None
    entry = json.loads(index_path.read_text()).get(source.name)
    if entry is None or source.stat().st_size != entry["bytes"]:
        return None
    if hashlib.sha256(source.read_bytes()).hexdigest() != entry["sha256"]:
        return None
    return json.loads((CORPUS / "expected" / entry["expected"]).read_text())
