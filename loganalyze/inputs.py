"""Finding input files and reading their bytes: globs, directories, standard input, gzip, hashing.

Nothing here knows any log format; importers get an :class:`InputFile` and read its
decompressed bytes in chunks through :meth:`InputFile.chunks` (the one byte reader), which
also computes the sha256 of the content (the decompressed bytes: the file's identity) and of
the file's own bytes on helper threads (hashlib releases the GIL) while the importer works.

Policies, the same for every importer:

- damaged compressed input: the bytes before the damage are read, ``InputFile.damage`` says
  what happened, and the source is flagged as truncated;
- decompression is bounded: past :data:`EXPAND_FREE_BYTES`, a file may not decompress to
  more than ``max_expand`` times its size (:class:`FileRefused`, naming the ratio reached);
- a file that changes while it is read (size or modification time, or a byte count other
  than its size) is refused: nothing of it is stored.
"""
from __future__ import annotations

import hashlib
import mmap
import os
import queue
import signal
import struct
import sys
import threading
import weakref
from typing import Callable, Iterator

from . import tempfiles
from .gunzip import GZIP_MAGIC, GunzipStream
from .paths import DATABASE_SUFFIXES, STDIN, Candidate, expand_paths  # noqa: F401 - re-exported
from .spare_buffers import SpareBuffers

CHUNK = 16 << 20
#: compressed bytes read at a time
READ_BLOCK = 1 << 20
#: bytes read and hashed at a time by a hash of its own (:meth:`InputFile.hash_in_background`)
HASH_BLOCK = 16 << 20
SNIFF_BYTES = 64 << 10
#: the name standard input's source gets
STDIN_NAME = "<stdin>"
#: decompressed bytes every compressed file may give, whatever its size
EXPAND_FREE_BYTES = 16 << 20
#: past that, the most decompressed bytes per compressed byte (``--max-expand``; 0: no limit)
DEFAULT_MAX_EXPAND = 100
MB = 1 << 20


class InputError(Exception):
    """A problem with one input file, worth one line to the user (exit code 2)."""


class FileRefused(InputError):
    """A problem with the file itself that no other reader gets around (it decompresses to
    too much, or it changed while it was read): the file is given up at once."""


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

    def __init__(self, path: str, max_expand: float = DEFAULT_MAX_EXPAND):
        self.max_expand = max_expand
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
        self._stat = _identity(st)
        try:
            with open(self.local_path, "rb") as f:
                magic = f.read(2)
        except OSError as exc:
            raise InputError(f"{path}: cannot read: {exc.strerror}") from None
        self.compression = "gzip" if magic == GZIP_MAGIC else None
        self._sha256: str | None = None
        self._file_sha256: str | None = None
        #: (thread, box) of :meth:`hash_in_background`, until :attr:`sha256` takes its result
        self._hashing: tuple[threading.Thread, dict] | None = None
        #: decompressed size in bytes, once a complete pass has read it
        self.content_bytes: int | None = None if self.compression else self.size
        #: what is wrong with the compressed stream, once a read has reached the damage
        self.damage: str | None = None
        ahead = _HASHED_AHEAD.pop(os.path.realpath(path), None) if _HASHED_AHEAD and self._spool is None else None
        if ahead is not None and ahead.same_file(self) and self.compression is None:
            self._hashing = ahead._hashing

    @property
    def truncated(self) -> bool:
        """The compressed stream is cut off or corrupt: only the bytes before it were read."""
        return self.damage is not None

    @property
    def sha256(self) -> str:
        """sha256 of the content, the decompressed bytes (computed by the first complete
        :meth:`chunks` pass, or here when none has run): what identifies a source."""
        if self._sha256 is None and self._hashing is not None:
            thread, box = self._hashing
            thread.join()
            self._hashing = None
            if "error" in box:
                raise box["error"]
            self._sha256 = box["sha256"]
        if self._sha256 is None:
            self._sha256 = self.compute_sha256()
        return self._sha256

    def hash_in_background(self, in_child: bool = False) -> None:
        """Start computing the :attr:`sha256` of an uncompressed file on a helper thread
        (hashlib lets go of the GIL), for a reader that does not pass the bytes through
        :meth:`chunks` (SQLite and DuckDB open the file themselves); reading :attr:`sha256`
        waits for it, and raises what it raised (:class:`FileRefused`, InputError).

        ``in_child``: where a process of one thread can fork (Linux), the hash is computed
        by a child process (:func:`_sha256_in_child`) the helper thread waits for: a thread
        takes the GIL twice for each block it reads and hashes, and waits for it while the
        process imports; a child has a GIL of its own."""
        if self.compression or self._sha256 is not None or self._hashing is not None:
            return
        box: dict = {}
        child = _sha256_in_child(self) if in_child else None

        def run() -> None:
            try:
                if child is not None:
                    box.update(child())
                if "sha256" not in box and "error" not in box:  # (the child could not say)
                    box["sha256"] = self._plain_sha256()
            except BaseException as exc:  # noqa: BLE001 - raised where sha256 is read
                box["error"] = exc

        thread = threading.Thread(target=run, name="loganalyze-hash", daemon=True)
        thread.start()
        self._hashing = (thread, box)

    @property
    def file_sha256(self) -> str:
        """sha256 of the file's own bytes (the same as :attr:`sha256` for a plain file)."""
        if not self.compression:
            return self.sha256
        if self._file_sha256 is None:
            h = hashlib.sha256()
            with self._open() as f:
                while block := f.read(CHUNK):
                    h.update(block)
            self._file_sha256 = h.hexdigest()
        return self._file_sha256

    def gzip_size_hint(self) -> int | None:
        """The decompressed size the gzip trailer states (modulo 4 GiB; the last member's
        only when members are concatenated), or None: a hint, never a fact."""
        if self.compression != "gzip" or self.size < 18:
            return None
        try:
            with self._open() as f:
                f.seek(-4, os.SEEK_END)
                return struct.unpack("<I", f.read(4))[0]
        except (OSError, struct.error):
            return None

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
        """sha256 of the content, read once more (a plain file's bytes, or a compressed
        file's decompressed bytes); a file that changed meanwhile is :class:`FileRefused`."""
        self._sha256 = None
        if self.compression:
            for _ in self.chunks():
                pass
            return self._sha256
        self._sha256 = self._plain_sha256()
        return self._sha256

    def _plain_sha256(self) -> str:
        """The sha256 of an uncompressed file's bytes, checked unchanged after the read."""
        h = hashlib.sha256()
        # one buffer, read into again and again, mapped on its own: a freed 16 MiB block
        # from malloc raised glibc's mmap threshold, and a 500 MB trace ingest peaked
        # 60-100 MB higher.  Large, because this thread takes the GIL twice a block while
        # the main thread holds it for up to 5 ms at a time (sys.getswitchinterval): with
        # 1 MiB blocks a hash running beside imports went at a fifth of its speed
        with mmap.mmap(-1, HASH_BLOCK) as buffer, self._open() as f:
            block = memoryview(buffer)
            done = 0
            while n := f.readinto(block):
                h.update(block[:n])
                done += n
            block.release()
            self._check_unchanged(f, done)
        return h.hexdigest()

    def same_file(self, other: "InputFile") -> bool:
        """Whether ``other`` was opened on this file as it is now (size, modification time,
        inode)."""
        return self._stat == other._stat

    def check_unchanged(self) -> None:
        """:class:`FileRefused` when the file's size or modification time is no longer what
        it was when it was opened (it was written to while it was read)."""
        try:
            now = _identity(os.stat(self.local_path))
        except OSError as exc:
            raise FileRefused(f"{self.path}: changed while being read ({exc.strerror}); nothing stored") from None
        if now != self._stat:
            raise FileRefused(f"{self.path}: changed while being read (size {self._stat[0]} -> {now[0]} bytes); "
                              "nothing stored")

    def _check_unchanged(self, f, done: int) -> None:
        """After reading ``done`` bytes from the open file ``f``: the count is the size stat
        gave, and the file is unchanged."""
        if done != self.size:
            raise FileRefused(f"{self.path}: changed while being read (read {done} bytes of "
                              f"{self.size}); nothing stored")
        if _identity(os.fstat(f.fileno())) != self._stat:
            raise FileRefused(f"{self.path}: changed while being read (size {self.size} -> "
                              f"{os.fstat(f.fileno()).st_size} bytes); nothing stored")
        self.check_unchanged()

    def _open(self):
        try:
            return open(self.local_path, "rb")
        except OSError as exc:
            raise InputError(f"{self.path}: cannot read: {exc.strerror}") from None

    # ------------------------------------------------------------------ streaming
    def chunks(self, size: int = CHUNK, offset: int = 0, progress: Callable[[int], None] | None = None,
               hash_bytes: bool = True, whole_lines: bool = False) -> Iterator[bytes]:
        """Decompressed bytes from ``offset`` on, in chunks of about ``size`` bytes.

        With ``whole_lines``, an uncompressed file read from its start comes in ``bytearray``
        chunks that end at a newline (but the last, and a chunk without any newline), each
        read straight into its own buffer after the partial line the one before ended with
        (:meth:`_RawReader.whole_lines`): the caller joins nothing.

        ``progress`` gets the number of file bytes read so far.  A complete pass stores the
        sha256 of the content and of the file bytes (hashed on helper threads) and
        ``content_bytes``.  A damaged gzip stream ends the data where it stops being readable
        and sets ``damage``; an unreadable file is an :class:`InputError`; a file that
        decompresses past its limit, or changes while it is read, is :class:`FileRefused`.
        """
        hashing = hash_bytes and self._sha256 is None and self._hashing is None
        content_hasher = _BackgroundHasher() if hashing else None
        file_hasher = _BackgroundHasher() if hashing and self.compression else None
        raw = self._open()
        complete = False
        try:
            reader = _RawReader(raw, self.path, READ_BLOCK if self.compression else size,
                                file_hasher if self.compression else content_hasher, progress)
            stream = GunzipStream(reader) if self.compression == "gzip" else None
            if stream is None and whole_lines and offset == 0:
                yield from reader.whole_lines()
            else:
                data = self._limited(stream, content_hasher) if stream is not None else iter(reader)
                yield from _rechunk(_skip_to(data, offset), size)
            if stream is not None:
                self.damage = stream.damage
            self._check_unchanged(raw, reader.done)
            self.content_bytes = stream.out_bytes if stream is not None else reader.done
            complete = True
        finally:
            raw.close()
            for hasher in (content_hasher, file_hasher):
                if hasher:
                    digest = hasher.finish()
                    if complete and hasher is content_hasher:
                        self._sha256 = digest
                    elif complete:
                        self._file_sha256 = digest

    def _limited(self, stream: GunzipStream, hasher) -> Iterator[bytes]:
        """The decompressed pieces of ``stream``, hashed, until they pass this file's limit."""
        limit = max(EXPAND_FREE_BYTES, self.max_expand * self.size) if self.max_expand else None
        for piece in stream:
            if limit is not None and stream.out_bytes > limit:
                raise FileRefused(
                    f"{self.path}: decompresses to more than {self.max_expand:g} times its size (ratio "
                    f"{stream.out_bytes / max(self.size, 1):.0f} reached at {stream.out_bytes // MB} MB from "
                    f"{_size_text(self.size)}); stopped as a possible decompression bomb "
                    "(--max-expand RATIO raises the limit)")
            if hasher:
                hasher.update(piece)
            yield piece


def _size_text(n: int) -> str:
    return f"{n / MB:.1f} MB" if n >= MB else f"{n / 1024:.1f} KB" if n >= 1024 else f"{n} bytes"


def _identity(st: os.stat_result) -> tuple[int, int, int]:
    """What says a file is still the one that was opened: size, modification time, inode."""
    return st.st_size, st.st_mtime_ns, st.st_ino


class _RawReader:
    """The file's bytes in blocks of ``size``, fed to ``hasher``, counted in ``done``."""

    def __init__(self, raw, path: str, size: int, hasher, progress):
        self.raw, self.path, self.size, self.hasher, self.progress = raw, path, size, hasher, progress
        self.done = 0

    def _io(self, read, arg):
        """``read(arg)``, an OSError worded as the file's one-line read error."""
        try:
            return read(arg)
        except OSError as exc:
            raise InputError(f"{self.path}: read error: {exc.strerror}") from None

    def __iter__(self) -> Iterator[bytes]:
        while True:
            block = self._io(self.raw.read, self.size)
            if not block:
                return
            self.done += len(block)
            if self.hasher:
                self.hasher.update(block)
            yield block
            if self.progress:
                self.progress(self.done)

    def whole_lines(self) -> Iterator[bytearray]:
        """The file's bytes in buffers of about ``size`` bytes that end at a newline: each
        buffer starts with the partial line the one before ended with and is filled by one
        read (a buffer without a newline goes as it is; the file's last bytes go as they are).
        Every byte read is hashed once, in order: the read bytes up to the last newline, then
        the partial line (a copy of its own), since a buffer shared with the hasher's thread
        cannot be resized.  A buffer is used again for a later read once nothing refers to
        it any more (:mod:`loganalyze.spare_buffers`: fresh pages cost a fault each)."""
        tail = b""
        spares = SpareBuffers()
        while True:
            buf = spares.take(len(tail) + self.size)
            buf[:len(tail)] = tail
            with memoryview(buf) as view:
                n = self._io(self.raw.readinto, view[len(tail):])
            if not n:
                if tail:
                    yield bytearray(tail)
                return
            self.done += n
            end = len(tail) + n
            cut = buf.rfind(b"\n", len(tail), end) + 1  # 0: no newline in what was read
            rest = bytes(buf[cut:end]) if cut else b""
            del buf[cut or end:]
            if self.hasher:
                self.hasher.update(memoryview(buf)[len(tail):])
                if rest:
                    self.hasher.update(rest)
            yield buf
            del buf  # free for the next read once its readers are done with it
            tail = rest
            if self.progress:
                self.progress(self.done)


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
    fd, path = tempfiles.new_file("stdin")
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
    tempfiles.remove(path)


#: files whose sha256 :func:`hash_ahead` started, by real path, until an InputFile of theirs takes it
_HASHED_AHEAD: dict[str, InputFile] = {}
#: smaller files are not hashed ahead (their hash takes less than a thread is worth)
HASH_AHEAD_MIN_BYTES = 16 << 20


def hash_ahead(path: str) -> None:
    """Start the sha256 of the uncompressed regular file ``path`` (of at least
    :data:`HASH_AHEAD_MIN_BYTES`) now, in a child process where this one has no other
    thread yet (else on a helper thread), for the :class:`InputFile` of it that is made
    later, which takes the running hash over when the file is still the same (size,
    modification time, inode); anything else (standard input, a folder, a glob, a gzip
    file, a missing file) is left to the InputFile.  The CLI calls this before it imports
    what an ingest needs: that start-up (half a second with numba's load) keeps one core
    busy holding the GIL, and the hash of a 1 GiB file is 0.7 s of the other's (a thread
    of this process took 1 s, waiting for the GIL twice a block)."""
    if path == STDIN or not os.path.isfile(path):
        return
    try:
        file = InputFile(path)
    except InputError:
        return
    if file.size >= HASH_AHEAD_MIN_BYTES:
        file.hash_in_background(in_child=_can_fork())
        if file._hashing is not None:
            _HASHED_AHEAD[os.path.realpath(path)] = file


def _can_fork() -> bool:
    """Whether this process may fork a child that runs Python: Linux (macOS forbids much
    after a fork), and no other thread running (a lock held by one would stay held in the
    child)."""
    return sys.platform.startswith("linux") and hasattr(os, "fork") and threading.active_count() == 1


def _sha256_in_child(file: InputFile) -> Callable[[], dict] | None:
    """Fork a child that computes ``file``'s :meth:`InputFile._plain_sha256` and writes the
    result to a pipe; the function returned waits for the child and gives ``{"sha256": ...}``
    or ``{"error": InputError}``, or ``{}`` when the child could not tell (the caller then
    hashes the file itself).  None when the fork fails."""
    try:
        read_end, write_end = os.pipe()
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return None
    if pid == 0:  # the child: one answer on the pipe, then out without any teardown
        try:
            os.close(read_end)
            signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C ends it quietly, as its parent
            try:
                answer = "sha256\0" + file._plain_sha256()
            except InputError as exc:
                answer = f"{type(exc).__name__}\0{exc}"
            os.write(write_end, answer.encode("utf-8", "replace"))
        finally:
            os._exit(0)
    os.close(write_end)

    def wait() -> dict:
        with os.fdopen(read_end, "rb") as pipe:
            answer = pipe.read().decode("utf-8", "replace")
        os.waitpid(pid, 0)
        kind, _, text = answer.partition("\0")
        if kind == "sha256":
            return {"sha256": text}
        if kind in ("InputError", "FileRefused"):
            return {"error": (FileRefused if kind == "FileRefused" else InputError)(text)}
        return {}

    return wait


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
