"""Finding input files and reading their bytes: globs, directories, standard input, gzip, hashing.

Nothing here knows any log format; importers get an :class:`InputFile` and read its
decompressed bytes in chunks through :meth:`InputFile.chunks` (the one byte reader), which
also computes the file's sha256 on a second thread (hashlib releases the GIL) while the
importer works.  One policy for damaged compressed input: the bytes before the damage are
read, ``InputFile.damage`` says what happened, and the source is flagged as truncated.
"""
from __future__ import annotations

import glob
import hashlib
import os
import queue
import sys
import tempfile
import threading
import weakref
import zlib
from dataclasses import dataclass
from typing import Callable, Iterator

GZIP_MAGIC = b"\x1f\x8b"
CHUNK = 16 << 20
#: compressed bytes read at a time
READ_BLOCK = 1 << 20
SNIFF_BYTES = 64 << 10
#: our own database files are never inputs when a directory is expanded
DATABASE_SUFFIXES = (".duckdb", ".duckdb.wal")
#: the path that names standard input, and the name its source gets
STDIN = "-"
STDIN_NAME = "<stdin>"


class InputError(Exception):
    """A problem with one input file, worth one line to the user (exit code 2)."""


@dataclass
class Candidate:
    """A path named on the command line, expanded; ``error`` set when it cannot be read."""

    path: str
    error: str | None = None


def expand_paths(args: list[str]) -> list[Candidate]:
    """Files, globs and directories (recursively, hidden files left out) in a stable order;
    ``-`` (standard input) passes through."""
    out: list[Candidate] = []
    seen: set[str] = set()

    def add(p: str) -> None:
        key = os.path.abspath(p)
        if key not in seen:
            seen.add(key)
            out.append(Candidate(p))

    for arg in args:
        if arg == STDIN:
            if arg not in seen:
                seen.add(arg)
                out.append(Candidate(arg))
        elif os.path.isdir(arg):
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
    """One input: size, compression, a sniffed head, and its decompressed bytes in chunks.

    ``path`` is what messages name (``<stdin>`` for standard input), ``local_path`` the file
    that is read (standard input is spooled to a temporary file first, removed by
    :meth:`close`, at garbage collection or at exit), ``source_path`` what the ``sources``
    row records (the absolute path, or ``-``).

    Damaged compressed input (cut off, or corrupt somewhere) is never an error here: the
    bytes decompressed before the damage are handed out, and ``damage`` says what happened
    (``truncated`` is then True); importers keep the complete records they read.
    """

    def __init__(self, path: str):
        self._spool: str | None = None
        self._cleanup = None
        if path == STDIN:
            self._spool = _spool_stdin()
            self._cleanup = weakref.finalize(self, remove_file, self._spool)
            self.path, self.name, self.local_path, self.source_path = STDIN_NAME, STDIN_NAME, self._spool, STDIN
        else:
            self.path, self.name, self.local_path = path, os.path.basename(path), path
            self.source_path = os.path.abspath(path)
        try:
            st = os.stat(self.local_path)
        except OSError as exc:
            raise InputError(f"{path}: cannot read: {exc.strerror}") from None
        if not os.path.isfile(self.local_path):
            raise InputError(f"{path}: not a regular file")
        self.size = st.st_size
        try:
            with open(self.local_path, "rb") as f:
                magic = f.read(2)
        except OSError as exc:
            raise InputError(f"{path}: cannot read: {exc.strerror}") from None
        self.compression = "gzip" if magic == GZIP_MAGIC else None
        self._sha256: str | None = None
        #: what is wrong with the compressed stream, once a read has reached the damage
        self.damage: str | None = None

    @property
    def truncated(self) -> bool:
        """The compressed stream is cut off or corrupt: only the bytes before it were read."""
        return self.damage is not None

    @property
    def sha256(self) -> str:
        """sha256 of the file bytes (computed by the first complete :meth:`chunks` pass, or
        here when none has run)."""
        if self._sha256 is None:
            self._sha256 = self.compute_sha256()
        return self._sha256

    @sha256.setter
    def sha256(self, value: str) -> None:
        self._sha256 = value

    @property
    def has_sha256(self) -> bool:
        """Whether the sha256 is known already (else a reading pass may compute it)."""
        return self._sha256 is not None

    def close(self) -> None:
        """Remove the spooled copy of standard input (nothing for a named file)."""
        if self._cleanup is not None:
            self._cleanup()

    def __enter__(self) -> "InputFile":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ raw access
    def head(self, n: int = SNIFF_BYTES) -> bytes:
        """The first ``n`` decompressed bytes (fewer for a short or damaged file)."""
        data, _ = self.head_and_complete(n)
        return data

    def head_and_complete(self, n: int) -> tuple[bytes, bool]:
        """Up to ``n`` decompressed bytes, and whether they are all the file holds."""
        parts, got = [], 0
        gen = self.chunks(min(n, CHUNK), hash_bytes=False)
        complete = True
        for chunk in gen:
            parts.append(chunk)
            got += len(chunk)
            if got >= n:
                complete = False
                break
        gen.close()
        data = b"".join(parts)
        return (data if complete else data[:n]), complete

    def compute_sha256(self) -> str:
        """sha256 of the file bytes, read once more."""
        h = hashlib.sha256()
        with open(self.local_path, "rb") as f:
            while block := f.read(CHUNK):
                h.update(block)
        self._sha256 = h.hexdigest()
        return self._sha256

    # ------------------------------------------------------------------ streaming
    def chunks(self, size: int = CHUNK, offset: int = 0, progress: Callable[[int], None] | None = None,
               hash_bytes: bool = True) -> Iterator[bytes]:
        """Decompressed bytes from ``offset`` on, in chunks of about ``size`` bytes.

        ``progress`` gets the number of file bytes read so far.  A complete pass stores the
        sha256 of the file bytes (hashed on a helper thread).  A damaged gzip stream ends
        the data where it stops being readable and sets ``damage``; an unreadable file is
        an :class:`InputError`.
        """
        hasher = _BackgroundHasher() if hash_bytes and self._sha256 is None else None
        try:
            raw = open(self.local_path, "rb")
        except OSError as exc:
            raise InputError(f"{self.path}: cannot read: {exc.strerror}") from None
        complete = False
        try:
            blocks = _raw_blocks(raw, self.path, READ_BLOCK if self.compression else size, hasher, progress)
            data = self._gunzip(blocks) if self.compression == "gzip" else blocks
            yield from _rechunk(_skip_to(data, offset), size)
            complete = True
        finally:
            raw.close()
            if hasher:
                digest = hasher.finish()
                if complete and self._sha256 is None:
                    self._sha256 = digest

    def _gunzip(self, blocks: Iterator[bytes]) -> Iterator[bytes]:
        """Decompressed gzip members (concatenated members go on; trailing garbage after the
        last member is ignored, as gzip does); damage ends the output and sets ``damage``."""
        decomp = zlib.decompressobj(zlib.MAX_WBITS | 16)
        fed = False  # has the current member seen data it has not finished?
        out_bytes = 0
        for block in blocks:
            data = block
            while data:
                saved = decomp.copy()
                try:
                    out = decomp.decompress(data)
                except zlib.error as exc:
                    # what decompresses before the damage: the block again, in small steps
                    for out in _decompress_until_error(saved, data):
                        out_bytes += len(out)
                        yield out
                    self.damage = f"corrupt gzip data after {out_bytes} decompressed bytes ({exc})"
                    for _ in blocks:  # the rest is still hashed
                        pass
                    return
                fed = True
                data = b""
                if out:
                    out_bytes += len(out)
                    yield out
                if decomp.eof:
                    data = decomp.unused_data
                    decomp = zlib.decompressobj(zlib.MAX_WBITS | 16)
                    fed = False
                    if data and not data.startswith(GZIP_MAGIC):
                        data = b""
                        for _ in blocks:
                            pass
        tail = decomp.flush()
        if tail:
            out_bytes += len(tail)
            yield tail
        if fed and not decomp.eof:
            self.damage = f"gzip stream is cut off after {out_bytes} decompressed bytes"


def _decompress_until_error(decomp, data: bytes) -> Iterator[bytes]:
    """Everything ``decomp`` gives for ``data`` before the byte where it fails (4 KiB steps,
    then byte by byte through the step that fails, from a copy of the decompressor)."""
    step = 4096
    for i in range(0, len(data), step):
        saved = decomp.copy()
        try:
            out = decomp.decompress(data[i:i + step])
        except zlib.error:
            for j in range(i, min(i + step, len(data))):
                try:
                    out = saved.decompress(data[j:j + 1])
                except zlib.error:
                    return
                if out:
                    yield out
            return
        if out:
            yield out
        if decomp.eof:
            return


def _raw_blocks(raw, path: str, size: int, hasher, progress) -> Iterator[bytes]:
    done = 0
    while True:
        try:
            block = raw.read(size)
        except OSError as exc:
            raise InputError(f"{path}: read error: {exc.strerror}") from None
        if not block:
            return
        done += len(block)
        if hasher:
            hasher.update(block)
        yield block
        if progress:
            progress(done)


def _skip_to(data: Iterator[bytes], offset: int) -> Iterator[bytes]:
    """The bytes of ``data`` from absolute ``offset`` on."""
    pos = 0
    for chunk in data:
        end = pos + len(chunk)
        if end > offset:
            yield chunk[offset - pos:] if pos < offset else chunk
        pos = end


def _rechunk(data: Iterator[bytes], size: int) -> Iterator[bytes]:
    """Pieces joined (or cut) into chunks of ``size`` bytes, or up to twice that when joined
    (the last may be shorter)."""
    pending: list[bytes] = []
    pending_len = 0
    for piece in data:
        if not pending and len(piece) >= size:
            if len(piece) < 2 * size:
                yield piece
                continue
            view = memoryview(piece)
            whole = len(piece) - len(piece) % size
            for i in range(0, whole, size):
                yield bytes(view[i:i + size])
            piece = piece[whole:]
            if not piece:
                continue
        pending.append(piece)
        pending_len += len(piece)
        if pending_len >= size:
            yield b"".join(pending)
            pending, pending_len = [], 0
    if pending:
        yield b"".join(pending)


def _spool_stdin() -> str:
    """Standard input (its bytes, compressed or not) copied to a temporary file."""
    stream = getattr(sys.stdin, "buffer", sys.stdin)
    fd, path = tempfile.mkstemp(prefix="loganalyze-stdin-")
    try:
        with os.fdopen(fd, "wb") as out:
            while block := stream.read(CHUNK):
                out.write(block)
    except BaseException:
        remove_file(path)
        raise
    return path


def remove_file(path: str) -> None:
    """Delete ``path`` if it is there (temporary files on every way out)."""
    try:
        os.unlink(path)
    except OSError:
        pass


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
