"""Shared by the compare/check/report tests: the perturbation helper (scripts/perturb.py)
and a one-call way to ingest files into a database under a run label."""
from __future__ import annotations

import importlib.util
from pathlib import Path

from loganalyze.ingest import ingest_paths
from loganalyze.store import Store

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples"

_spec = importlib.util.spec_from_file_location("perturb", ROOT / "scripts" / "perturb.py")
perturb_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(perturb_mod)
perturb = perturb_mod.perturb


def ingest_run(db: str, run: str, *paths) -> None:
    """Ingest ``paths`` into ``db`` as run ``run``; every file must be ingested."""
    with Store(db) as store:
        results = list(ingest_paths(store, [str(p) for p in paths], run_label=run))
    bad = [r.message for r in results if r.status == "error"]
    assert not bad, bad


def memory_store(*paths) -> Store:
    """A temporary in-memory store holding ``paths``."""
    store = Store(":memory:")
    results = list(ingest_paths(store, [str(p) for p in paths], run_label="x"))
    assert all(r.status != "error" for r in results), [r.message for r in results]
    return store
