#!/usr/bin/env python3
"""Make a perturbed copy of a real log to test ``loganalyze check``: one item slowed by a
factor, and/or every timed record changed by random noise (fixed seed: same output each run).

    python scripts/perturb.py in.log out.log --slow convolution --factor 1.3
    python scripts/perturb.py in.log out.log --noise 0.03 --seed 7
    python scripts/perturb.py trace.json.gz out.json --slow aten::addmm        # operator
    python scripts/perturb.py nsys.sqlite out.sqlite --slow gemm_kernel        # kernel

Formats: oneDNN verbose logs (``--slow`` names a primitive kind; the exec time, the last
field, is scaled), trace-event JSON (``--slow`` names an operator; ``dur`` of its complete
events is scaled, nothing else moves), Nsight Systems / nvprof SQLite exports (``--slow`` names a kernel:
the short, demangled or mangled name).
Gzip input is written back gzipped when the output name ends in ``.gz``.
"""
from __future__ import annotations

import argparse
import gzip
import json
import random
import shutil
import sqlite3
from pathlib import Path

from loganalyze.grammars.onednn_verbose import MARKERS  # noqa: E402  (the one definition)


def _read_text(path: Path) -> str:
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return raw.decode("utf-8")


def _write_text(path: Path, text: str) -> None:
    data = text.encode("utf-8")
    path.write_bytes(gzip.compress(data, mtime=0) if path.name.endswith(".gz") else data)


def _factor(rng: random.Random, noise: float) -> float:
    return 1.0 + rng.uniform(-noise, noise) if noise else 1.0


def perturb_onednn(src: Path, dst: Path, slow: str | None = None, factor: float = 1.3,
                   noise: float = 0.0, seed: int = 1) -> int:
    """Scale the exec time of every ``slow``-kind exec line; noise on every exec line.
    Returns the number of lines slowed."""
    rng, slowed, out = random.Random(seed), 0, []
    for line in _read_text(src).splitlines(keepends=True):
        body = line.rstrip("\r\n")
        fields = body.split(",")
        if fields[0] in MARKERS and "exec" in fields[1:5]:
            try:
                time_ms = float(fields[-1])
            except ValueError:
                out.append(line)
                continue
            scale = _factor(rng, noise)
            if slow is not None and slow in fields[2:7]:
                scale *= factor
                slowed += 1
            fields[-1] = format(time_ms * scale, ".9g")
            line = ",".join(fields) + line[len(body):]
        out.append(line)
    _write_text(dst, "".join(out))
    return slowed


def perturb_trace(src: Path, dst: Path, slow: str | None = None, factor: float = 1.3,
                  noise: float = 0.0, seed: int = 1) -> int:
    """Scale the duration of every complete event (or B/E pair) named ``slow``; noise on the
    duration of every one.  Nothing moves: a scaled event may end after its next sibling
    starts (as when a profiler's clocks jitter).  Returns the number of events slowed."""
    doc = json.loads(_read_text(src))
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    rng, slowed = random.Random(seed), 0
    open_begins: dict[tuple, list[dict]] = {}
    for ev in events:
        if not isinstance(ev, dict):
            continue
        ph, key = ev.get("ph"), (str(ev.get("pid")), str(ev.get("tid")))
        if ph == "B":
            open_begins.setdefault(key, []).append(ev)
            continue
        if ph == "X" and isinstance(ev.get("dur"), (int, float)):
            begin, length = None, ev["dur"]
        elif ph == "E" and open_begins.get(key) and isinstance(ev.get("ts"), (int, float)):
            begin = open_begins[key].pop()
            length = ev["ts"] - begin["ts"]
        else:
            continue
        scale = _factor(rng, noise)
        if slow is not None and (begin or ev).get("name") == slow:
            scale *= factor
            slowed += 1
        if begin is None:
            ev["dur"] = round(length * scale, 3)
        else:  # B/E pair: the E moves
            ev["ts"] = round(begin["ts"] + length * scale, 3)
    _write_text(dst, json.dumps(doc))
    return slowed


def perturb_sqlite(src: Path, dst: Path, slow: str | None = None, factor: float = 1.3,
                   noise: float = 0.0, seed: int = 1) -> int:
    """Scale the duration of every kernel named ``slow`` (any of its names) in an Nsight
    Systems or nvprof export; noise on every kernel.  Returns the number of kernels slowed."""
    shutil.copyfile(src, dst)
    con = sqlite3.connect(dst)
    try:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        strings = "StringIds" if "StringIds" in tables else "StringTable"
        id_col = "id" if strings == "StringIds" else "_id_"
        names = dict(con.execute(f"SELECT {id_col}, value FROM {strings}"))
        rng, slowed = random.Random(seed), 0
        for table in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL"):
            if table not in tables:
                continue
            cols = [r[1] for r in con.execute(f"PRAGMA table_info({table})")]
            name_cols = [c for c in ("shortName", "demangledName", "mangledName", "name") if c in cols]
            rows = con.execute(f"SELECT rowid, start, end, {', '.join(name_cols)} FROM {table} ORDER BY rowid")
            for rowid, start, end, *ids in rows.fetchall():
                scale = _factor(rng, noise)
                if slow is not None and slow in {names.get(i) for i in ids}:
                    scale *= factor
                    slowed += 1
                con.execute(f"UPDATE {table} SET end = ? WHERE rowid = ?",
                            [start + round((end - start) * scale), rowid])
        con.commit()
    finally:
        con.close()
    return slowed


def perturb(src: str | Path, dst: str | Path, slow: str | None = None, factor: float = 1.3,
            noise: float = 0.0, seed: int = 1) -> int:
    """Perturb ``src`` into ``dst`` by its format (see the module docstring)."""
    src, dst = Path(src), Path(dst)
    if src.read_bytes()[:16].startswith(b"SQLite format 3"):
        return perturb_sqlite(src, dst, slow, factor, noise, seed)
    head = _read_text(src).lstrip()[:1]
    if head in ("{", "["):
        return perturb_trace(src, dst, slow, factor, noise, seed)
    return perturb_onednn(src, dst, slow, factor, noise, seed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("src")
    parser.add_argument("dst")
    parser.add_argument("--slow", help="primitive kind, operator or kernel to slow down")
    parser.add_argument("--factor", type=float, default=1.3, help="slow-down factor (default 1.3)")
    parser.add_argument("--noise", type=float, default=0.0, help="relative noise on every record, e.g. 0.03")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    n = perturb(args.src, args.dst, args.slow, args.factor, args.noise, args.seed)
    print(f"{args.dst}: {n} records slowed")


if __name__ == "__main__":
    main()
