"""gzip decompression in bounded steps: no single call turns a small compressed block into
gigabytes, and damage ends the output instead of failing the file.

:class:`GunzipStream` decompresses an iterator of compressed blocks into pieces of at most
:data:`OUT_STEP` bytes.  Concatenated members go on; trailing garbage after the last member
is ignored (as ``gzip -d`` does); a cut-off or corrupt stream ends the output after the last
byte that decompressed and sets ``damage``.
"""
from __future__ import annotations

import zlib
from typing import Iterable, Iterator

GZIP_MAGIC = b"\x1f\x8b"
#: most decompressed bytes one step hands out (a 1 MiB block of a bomb is 1 GiB of output)
OUT_STEP = 4 << 20
#: compressed bytes fed at a time while looking for the byte where damage starts
DAMAGE_STEP = 4096


def _member() -> "zlib._Decompress":
    return zlib.decompressobj(zlib.MAX_WBITS | 16)


class GunzipStream:
    """The decompressed bytes of the gzip data in ``blocks``, ``OUT_STEP`` bytes at most at a
    time; ``damage`` says what was wrong once the output ended early."""

    def __init__(self, blocks: Iterable[bytes]):
        self._blocks = iter(blocks)
        self.damage: str | None = None
        self.out_bytes = 0

    def __iter__(self) -> Iterator[bytes]:
        decomp = _member()
        fed = False  # has the current member seen data it has not finished?
        for block in self._blocks:
            data = block
            while True:
                saved = decomp.copy()
                try:
                    out = decomp.decompress(data, OUT_STEP)
                except zlib.error as exc:
                    # what decompresses before the damage: the data again, in small steps
                    for out in _decompress_until_error(saved, data):
                        self.out_bytes += len(out)
                        yield out
                    self.damage = f"corrupt gzip data after {self.out_bytes} decompressed bytes ({exc})"
                    self._drain()
                    return
                fed = True
                if out:
                    self.out_bytes += len(out)
                    yield out
                if decomp.eof:  # a member ended: another may follow
                    data = decomp.unused_data
                    decomp, fed = _member(), False
                    if not data:
                        break
                    if not data.startswith(GZIP_MAGIC):  # trailing garbage, as gzip -d ignores it
                        self._drain()
                        return
                    continue
                data = decomp.unconsumed_tail
                if not data and len(out) < OUT_STEP:  # input used up, nothing held back
                    break
        tail = decomp.flush()
        if tail:
            self.out_bytes += len(tail)
            yield tail
        if fed and not decomp.eof:
            self.damage = f"gzip stream is cut off after {self.out_bytes} decompressed bytes"

    def _drain(self) -> None:
        """Read the remaining blocks without decompressing them (their reader still hashes
        them and checks the file)."""
        for _ in self._blocks:
            pass


def _decompress_until_error(decomp, data: bytes) -> Iterator[bytes]:
    """Everything ``decomp`` gives for ``data`` before the byte where it fails (small steps,
    then byte by byte through the step that fails, from a copy of the decompressor)."""
    for i in range(0, len(data), DAMAGE_STEP):
        saved = decomp.copy()
        try:
            pieces = list(_bounded(decomp, data[i:i + DAMAGE_STEP]))
        except zlib.error:
            for j in range(i, min(i + DAMAGE_STEP, len(data))):
                try:
                    pieces = list(_bounded(saved, data[j:j + 1]))
                except zlib.error:
                    return
                yield from pieces
                if saved.eof:
                    return
            return
        yield from pieces
        if decomp.eof:
            return


def _bounded(decomp, data: bytes) -> Iterator[bytes]:
    """``decomp``'s output for ``data`` in ``OUT_STEP`` pieces."""
    while True:
        out = decomp.decompress(data, OUT_STEP)
        if out:
            yield out
        data = decomp.unconsumed_tail
        if decomp.eof or (not data and len(out) < OUT_STEP):
            return
