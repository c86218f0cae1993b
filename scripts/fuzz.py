#!/usr/bin/env python
"""Run the importer fuzzers of tests/test_fuzz.py for longer.

    python scripts/fuzz.py --minutes 10                       # every family, round robin
    python scripts/fuzz.py --minutes 30 --family trace_json   # one family
    python scripts/fuzz.py --minutes 5 --examples 50 --out /tmp/fuzz-failures

Same strategies (mutated samples/**) and the same oracle (tests/fuzz_inputs.py) as the CI test,
with the hypothesis profile ``long``: random seeds, more examples per round.  Each failing
input (after hypothesis shrank it) is saved under ``--out`` with its sample's name and printed
with the failure; the exit code is 1 when anything failed.  Re-check a saved file with
``loganalyze ingest --db :memory: FILE`` or ``fuzz_inputs.check_ingest(name, data)``.
"""
from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fuzz_inputs import FAMILIES, check_ingest, mutated_samples  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def _register(examples: int) -> None:
    settings.register_profile("long", max_examples=examples, deadline=30_000, derandomize=False, database=None,
                              print_blob=True, suppress_health_check=list(HealthCheck))


def _round(family: str, out: Path) -> list[Path]:
    """One hypothesis run over ``family``; returns the saved failing input(s)."""
    saved: list[Path] = []

    @settings(settings.get_profile("long"))
    @given(data=st.data())
    def run(data):
        name, content = data.draw(mutated_samples(family), label="sample")
        try:
            check_ingest(name, content)
        except Exception:
            digest = hashlib.sha256(content).hexdigest()[:12]
            path = out / f"{family}-{digest}-{name}"
            out.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
            saved.append(path)  # the last one is the shrunk example hypothesis reports
            raise

    try:
        run()
    except Exception as exc:  # hypothesis re-raises the shrunk failure
        first = " ".join(str(exc).split())[:500]
        print(f"FAIL {family}: {type(exc).__name__}: {first}", flush=True)
        print(f"     input saved as {saved[-1] if saved else '(not saved)'}", flush=True)
        return saved[-1:]
    return []


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=5.0, help="how long to fuzz (default 5)")
    ap.add_argument("--family", action="append", choices=sorted(FAMILIES),
                    help="fuzz only this family (repeatable; default: all)")
    ap.add_argument("--examples", type=int, default=200, help="examples per round (default 200)")
    ap.add_argument("--out", type=Path, default=Path("fuzz-failures"), help="where failing inputs are saved")
    args = ap.parse_args(argv)
    _register(args.examples)
    families = args.family or sorted(FAMILIES)
    deadline = time.monotonic() + 60 * args.minutes
    failures: list[Path] = []
    rounds = 0
    while time.monotonic() < deadline:
        family = families[rounds % len(families)]
        t0 = time.monotonic()
        failures += _round(family, args.out)
        rounds += 1
        print(f"round {rounds}: {family}, {args.examples} examples, {time.monotonic() - t0:.0f} s", flush=True)
    print(f"{rounds} round(s), {len(failures)} failure(s)" + (f"; inputs in {args.out}" if failures else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
