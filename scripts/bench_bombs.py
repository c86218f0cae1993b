"""Decompression bombs and over-long lines: write them (streaming, a few KB to MB compressed)
and measure what ingesting each costs (peak RSS of the child process, seconds, exit code,
temporary files left behind).

    python scripts/bench_bombs.py                 # every case at full size (minutes, GBs before the fix)
    python scripts/bench_bombs.py --scale 0.05    # the same cases, 5 % of the size
    python scripts/bench_bombs.py --case newlines --max-rss-mb 1500

tests/test_guard_bombs.py uses the writers below at small sizes.
"""
from __future__ import annotations

import argparse
import glob
import os
import subprocess
import sys
import tempfile
import zlib

MB = 1 << 20
GB = 1 << 30


def write_gzip(path: str, pieces, level: int = 9) -> int:
    """Write the byte pieces of the iterable ``pieces`` gzip-compressed to ``path`` without
    ever holding more than one piece; the compressed size."""
    comp = zlib.compressobj(level, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    with open(path, "wb") as out:
        for piece in pieces:
            out.write(comp.compress(piece))
        out.write(comp.flush())
    return os.path.getsize(path)


def repeated(block: bytes, total: int):
    """``block`` repeated to ``total`` bytes (the last piece cut)."""
    done = 0
    while done < total:
        piece = block if done + len(block) <= total else block[:total - done]
        done += len(piece)
        yield piece


def newlines(path: str, size: int) -> int:
    """A .log.gz holding ``size`` bytes of newlines."""
    return write_gzip(path, repeated(b"\n" * MB, size))


def one_long_line(path: str, size: int) -> int:
    """A .log.gz holding one line of ``size`` bytes ('a' repeated), then a verbose record."""
    record = b"onednn_verbose,exec,cpu,convolution,jit:avx2,forward_training,src_f32::blocked:abcd::f0,,alg:convolution_direct,mb1_ic3oc8_ih5oh5kh3sh1dh0ph1_iw5ow5kw3sw1dw0pw1,0.5\n"
    return write_gzip(path, [*repeated(b"a" * MB, size), b"\n", record])


def sqlite_zeros(path: str, size: int) -> int:
    """A .sqlite.gz: an SQLite header, then ``size`` bytes of zeros."""
    header = b"SQLite format 3\x00" + b"\x10\x00\x01\x01\x00\x40\x20\x20" + b"\x00" * 76
    return write_gzip(path, [header, *repeated(b"\x00" * MB, size)])


CASES = {
    "newlines": (newlines, ".log.gz", 128 * MB),        # the 127 KB .log.gz
    "newlines-1g": (newlines, ".log.gz", GB),
    "long-line": (one_long_line, ".log.gz", GB),
    "sqlite-zeros": (sqlite_zeros, ".sqlite.gz", 2 * GB),
}


#: a small launcher waits for the command itself: a child forked straight from a big process
#: (a test runner) inherits that process's peak RSS in ru_maxrss, a grandchild of the launcher
#: only the launcher's few MB
LAUNCHER = ("import os, subprocess, sys, time; t = time.perf_counter(); "
            "p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL); "
            "_, s, u = os.wait4(p.pid, 0); "
            "print(os.waitstatus_to_exitcode(s), time.perf_counter() - t, u.ru_maxrss)")


def measure(args: list[str], env: dict | None = None) -> tuple[int, float, float, str]:
    """Run ``python -m loganalyze ARGS`` in a child: (exit code, seconds, its peak RSS in MB,
    its stderr)."""
    with tempfile.TemporaryFile() as err:
        out = subprocess.run([sys.executable, "-c", LAUNCHER, sys.executable, "-m", "loganalyze", *args],
                             stdout=subprocess.PIPE, stderr=err, env=env, text=True, check=True).stdout
        code, seconds, peak_kb = out.split()
        err.seek(0)
        return int(code), float(seconds), int(peak_kb) / 1024, err.read().decode(errors="replace").strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", choices=sorted(CASES), action="append")
    ap.add_argument("--scale", type=float, default=1.0, help="fraction of each case's full size")
    ap.add_argument("--extra", default="", help="more ingest arguments, e.g. '--max-expand 100000'")
    args = ap.parse_args()
    for name in args.case or list(CASES):
        write, suffix, size = CASES[name]
        with tempfile.TemporaryDirectory(prefix="bombs-") as work:
            path = os.path.join(work, name + suffix)
            packed = write(path, int(size * args.scale))
            env = dict(os.environ, TMPDIR=work)
            before = set(glob.glob(os.path.join(work, "*")))
            code, seconds, peak, err = measure(
                ["ingest", "--db", os.path.join(work, "b.duckdb"), *args.extra.split(), path], env)
            left = set(glob.glob(os.path.join(work, "*"))) - before - {os.path.join(work, "b.duckdb"),
                                                                       os.path.join(work, "b.duckdb.wal")}
            print(f"{name}: {packed / 1024:.0f} KB -> {size * args.scale / MB:.0f} MB; exit {code}, "
                  f"{seconds:.1f} s, peak RSS {peak:.0f} MB, "
                  f"left behind {sorted(os.path.basename(p) for p in left) or 'nothing'}")
            print(f"    {err.splitlines()[-1] if err else ''}")


if __name__ == "__main__":
    main()
