"""Finding input files and reading their bytes: globs, directories, gzip, hashing.

Nothing here knows any log format; importers get an :class:`InputFile` and read its
decompressed bytes in chunks through :meth:`InputFile.chunks`, which also computes the
file's sha256 on a second thread (hashlib releases the GIL) while the importer works.
"""
from __future__ import annotations

import glob
import gzip
import hashlib
import os
import queue
import threading
import zlib
from dataclasses import dataclass
from typing import Iterator

GZIP_MAGIC = b"\x1f\x8b"
CHUNK = 16 << 20
SNIFF_BYTES = 64 << 10
#: our own database files are never inputs when a directory is expanded
DATABASE_SUFFIXES = (".duckdb", ".duckdb.wal")


class InputError(Exception):
    """A problem with one input file, worth one line to the user (exit code 2)."""


@dataclass
class Candidate:
    """A path named on the command line, expanded; ``error`` set when it cannot be read."""

    path: str
    error: str | None = None


def expand_paths(args: list[str]) -> list[Candidate]:
    """Files, globs and directories (recursively, hidden files left out) in a stable order."""
    out: list[Candidate] = []
    seen: set[str] = set()

    def add(p: str) -> None:
        key = os.path.abspath(p)
        if key not in seen:
            seen.add(key)
            out.append(Candidate(p))

    for arg in args:
        if os.path.isdir(arg):
            found = []
            for root, dirs, files in os.walk(arg):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                found.extend(os.path.join(root, f) for f in sorted(files)
                             if not f.startswith(".") and not f.endswith(DATABASE_SUFFIXES))
            if not found:
                out.append(Candidate(arg, f"{arg}: directory holds no files"))
            for f in found:
                add(f)
        elif os.path.exists(arg):
            add(arg)
        elif any(ch in arg for ch in "*?["):
            matches = sorted(glob.glob(arg, recursive=True))
            files = [m for m in matches if os.path.isfile(m)]
            if not files:
                out.append(Candidate(arg, f"{arg}: no file matches this pattern"))
            for f in files:
                add(f)
        else:
            out.append(Candidate(arg, f"{arg}: no such file or directory"))
    return out


class InputFile:
    """One input file: size, compression, a sniffed head and chunked reading."""

    def __init__(self, path: str):
        self.path = path
        self.name = os.path.basename(path)
        try:
            st = os.stat(path)
        except OSError as exc:
            raise InputError(f"{path}: cannot read: {exc.strerror}") from None
        if not os.path.isfile(path):
            raise InputError(f"{path}: not a regular file")
        self.size = st.st_size
        try:
            with open(path, "rb") as f:
                magic = f.read(2)
        except OSError as exc:
            raise InputError(f"{path}: cannot read: {exc.strerror}") from None
        self.compression = "gzip" if magic == GZIP_MAGIC else None
        self.sha256: str | None = None

    # ------------------------------------------------------------------ raw access
    def _open_decompressed(self):
        raw = open(self.path, "rb")
        if self.compression == "gzip":
            return gzip.GzipFile(fileobj=raw, mode="rb"), raw
        return raw, raw

    def head(self, n: int = SNIFF_BYTES) -> bytes:
        """The first ``n`` decompressed bytes (fewer for a short or broken file)."""
        stream, raw = self._open_decompressed()
        try:
            return stream.read(n)
        except (EOFError, OSError, zlib.error):
            return b""
        finally:
            raw.close()

    def compute_sha256(self) -> str:
        h = hashlib.sha256()
        with open(self.path, "rb") as f:
            while block := f.read(CHUNK):
                h.update(block)
        self.sha256 = h.hexdigest()
        return self.sha256

    # ------------------------------------------------------------------ streaming
    def chunks(self, size: int = CHUNK) -> Iterator[bytes]:
        """Decompressed bytes in chunks; the sha256 of the file bytes is set at the end.

        Raises :class:`InputError` for unreadable files and broken gzip streams.
        """
        hasher = _BackgroundHasher() if self.sha256 is None else None
        raw = open(self.path, "rb")
        try:
            if self.compression == "gzip":
                yield from self._gzip_chunks(raw, size, hasher)
            else:
                while True:
                    try:
                        block = raw.read(size)
                    except OSError as exc:
                        raise InputError(f"{self.path}: read error: {exc.strerror}") from None
                    if not block:
                        break
                    if hasher:
                        hasher.update(block)
                    yield block
        finally:
            raw.close()
            if hasher:
                digest = hasher.finish()
                if self.sha256 is None:
                    self.sha256 = digest

    def _gzip_chunks(self, raw, size: int, hasher) -> Iterator[bytes]:
        decomp = zlib.decompressobj(zlib.MAX_WBITS | 16)
        fed = False  # has the current member seen data it has not finished?
        pending: list[bytes] = []
        pending_len = 0
        while True:
            try:
                block = raw.read(1 << 20)
            except OSError as exc:
                raise InputError(f"{self.path}: read error: {exc.strerror}") from None
            if not block:
                break
            if hasher:
                hasher.update(block)
            data = block
            while data:
                try:
                    out = decomp.decompress(data)
                except zlib.error as exc:
                    raise InputError(f"{self.path}: corrupt gzip data ({exc})") from None
                fed = True
                data = b""
                if out:
                    pending.append(out)
                    pending_len += len(out)
                if decomp.eof:  # concatenated members: go on with what follows
                    data = decomp.unused_data
                    decomp = zlib.decompressobj(zlib.MAX_WBITS | 16)
                    fed = False
            if pending_len >= size:
                yield b"".join(pending)
                pending, pending_len = [], 0
        if fed and not decomp.eof:
            raise InputError(f"{self.path}: gzip stream is cut off (truncated or half-written file)")
        if pending:
            yield b"".join(pending)


class _BackgroundHasher:
    """sha256 of a byte stream on a helper thread, fed in order."""

    def __init__(self):
        self._h = hashlib.sha256()
        self._q: queue.Queue = queue.Queue(maxsize=8)
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self) -> None:
        while True:
            block = self._q.get()
            if block is None:
                return
            self._h.update(block)

    def update(self, block: bytes) -> None:
        self._q.put(block)

    def finish(self) -> str:
        self._q.put(None)
        self._t.join()
        return self._h.hexdigest()


def is_probably_binary(head: bytes) -> bool:
    """NUL bytes, or mostly non-text bytes, in the first block."""
    if not head:
        return False
    if b"\x00" in head[:8192]:
        return True
    sample = head[:8192]
    text_chars = bytes(range(32, 127)) + b"\n\r\t\f\b"
    nontext = sum(1 for b in sample if b not in text_chars and b < 128)
    return nontext / len(sample) > 0.10
