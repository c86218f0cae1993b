"""Reading a trace-event file up to DuckDB: whether a file is one (:func:`sniff`), where the
event array starts (and which flavour its first categories suggest), and the staging of
exactly that array for ``read_json``, also ahead of the ingest (:func:`stage_ahead`).

Bytes come from the one reader, :meth:`loganalyze.inputs.InputFile.chunks`; a damaged
gzip stream ends where it stops being readable, and the array is closed after the last
complete element.  This module imports nothing heavy: the CLI stages a large trace while it
imports what the ingest needs.
"""
from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass

from . import tempfiles
from .cores import usable_cores
from .grammars import trace_container as tc
from .inputs import STDIN, InputError, InputFile

READ_BLOCK = 4 << 20
#: how far into the file the start of the event array is looked for (metadata members before it)
MAX_HEAD_BYTES = 32 << 20
#: bytes held back at the end of the stream to find where the event array ends
TAIL_WINDOW = 4 << 20
#: an uncompressed event array is cut into parts of at least this size, at most one per core
#: (DuckDB parses one JSON array on one thread; the parts are parsed at the same time)
PART_MIN_BYTES = 32 << 20
MAX_PARTS = 8
#: bytes searched for a boundary between two events where a part should end
BOUNDARY_WINDOW = 1 << 20
_CAT_RE = re.compile(rb'"cat"\s*:\s*"((?:[^"\\]|\\.)*)"')
_PH_RE = re.compile(rb'"ph"\s*:\s*"')
_KINETO_KEY_RE = re.compile(rb'"(?:schemaVersion|deviceProperties|distributedInfo|baseTimeNanoseconds)"\s*:')
#: :func:`sniff`'s score of a file that is surely a trace
SURE = 95


def sniff(head: bytes, name: str) -> int:
    """How surely the file whose first bytes are ``head`` is trace-event JSON (the trace
    importer's sniff): 95 an event array or a Kineto/Chrome trace object, 60 an object with
    trace events, 15 other JSON (the JSON reader of last resort says why it is not a trace),
    5 a ``.json`` name over something else, 0 not JSON."""
    s = head[3:] if head.startswith(b"\xef\xbb\xbf") else head
    s = s.lstrip()
    if s.startswith(b"["):
        return SURE if _PH_RE.search(s[:8192]) else 15
    if s.startswith(b"{"):
        if b'"traceEvents"' in head or _KINETO_KEY_RE.search(head):
            return SURE
        if _PH_RE.search(s[:8192]):
            return 60
        return 15
    if name.lower().endswith((".json", ".json.gz")) and s:
        return 5
    return 0


def find_prefix(file: InputFile) -> tc.Prefix:
    """Where the event array starts (reads more of the head while it cannot tell)."""
    limit = 1 << 16
    while True:
        head, complete = file.head_and_complete(limit)
        try:
            prefix = tc.scan_prefix(head, complete)
        except tc.ContainerError as exc:
            if file.damage and not head:
                raise InputError(f"{file.path}: {file.damage}") from None
            raise InputError(f"{file.path}: {exc}") from None
        if prefix is not None:
            return prefix
        if complete or limit >= MAX_HEAD_BYTES:
            raise InputError(f"{file.path}: no trace-event array found in the first {limit >> 20} MiB")
        limit *= 8


def head_categories(file: InputFile, prefix: tc.Prefix, limit: int = 4 << 20) -> list[str]:
    """The categories named in the first MiBs of the event array (to choose the flavour
    before the events are read; the full set is checked afterwards)."""
    parts, n = [], 0
    gen = file.chunks(min(limit, READ_BLOCK), offset=prefix.events_at, hash_bytes=False)
    for chunk in gen:
        parts.append(chunk)
        n += len(chunk)
        if n >= limit:
            break
    gen.close()
    data = b"".join(parts)[:limit]
    return sorted({m.group(1).decode("utf-8", "replace") for m in _CAT_RE.finditer(data)})


# =========================================================================== staging
@dataclass
class StageResult:
    tail: tc.Tail | None = None
    error: BaseException | None = None
    written: int = 0


class Stage:
    """Hands DuckDB the event array cut from ``[`` to ``]`` (a ``]`` is added when the file
    was cut off).

    - Uncompressed files: the end is found by reading the last bytes, and the array is
      copied into temp files inside the kernel (``copy_file_range``), or taken from
      :func:`stage_ahead` when it made them already.  With ``split``, a large array is cut at
      boundaries between events into several arrays (``paths``), which DuckDB parses at
      the same time; their elements, in order, are the elements of the whole array.
    - gzip files: a writer thread decompresses into a FIFO that DuckDB reads while the
      bytes are produced, holding back the last few MiB until the end is known; with
      ``pipe=False`` (the caller's memory is bounded), when FIFOs are not available, or with
      ``LOGANALYZE_TRACE_STAGING=file``, into a temp file first: DuckDB keeps what it reads
      from a pipe in memory (1.2 GiB for a 500 MB trace; under a 192 MiB limit the read
      took 34 s instead of 4).
    """

    def __init__(self, file: InputFile, prefix: tc.Prefix, progress, directory: str, split: bool = False,
                 pipe: bool = True):
        self.file = file
        self.prefix = prefix
        self.progress = progress
        self.result = StageResult()
        self.path = os.path.join(directory, "events.json")
        self.paths = [self.path]
        self.split = split
        mode = os.environ.get("LOGANALYZE_TRACE_STAGING", "auto")
        self.copy = file.compression is None and mode in ("auto", "copy")
        self.fifo = not self.copy and (mode == "fifo" or (mode == "auto" and pipe)) and hasattr(os, "mkfifo")
        self._thread: threading.Thread | None = None
        self._folder: str | None = None  # the folder of parts staged ahead, removed with them
        if self.fifo:
            try:
                os.mkfifo(self.path)
            except OSError:
                self.fifo = False

    def start(self) -> None:
        if self.copy:
            if not self._take_ahead():
                self._copy()
        elif self.fifo:
            self._thread = threading.Thread(target=self._run, name="loganalyze-trace-stage", daemon=True)
            self._thread.start()
        else:
            self._run()

    def _take_ahead(self) -> bool:
        """Take the parts :func:`stage_ahead` made of this file's array (when it is still the
        same file, and this stage cuts it into parts): True when there are some."""
        ahead = _STAGED_AHEAD.pop(os.path.realpath(self.file.local_path), None) if _STAGED_AHEAD else None
        if ahead is None:
            return False
        ahead.thread.join()
        staged = ahead.stage
        if (staged is None or not self.split or not ahead.file.same_file(self.file)
                or staged.prefix != self.prefix or staged.result.error is not None):
            if staged is not None:
                staged.cleanup()
            tempfiles.remove(ahead.folder)
            return False
        self.paths, self.result, self._folder = staged.paths, staged.result, ahead.folder
        return True

    def _copy(self) -> None:
        file = self.file
        prefix = self.prefix
        try:
            with open(file.local_path, "rb") as src:
                size = os.fstat(src.fileno()).st_size
                tail_at = max(prefix.events_at, size - TAIL_WINDOW)
                src.seek(tail_at)
                tail = tc.scan_tail(src.read(), tail_at, prefix.container, prefix.events_at)
                self.result.tail = tail
                if tail.status not in ("complete", "truncated"):
                    return
                cuts = _cuts(src, prefix.events_at, tail.events_end) if self.split else []
                bounds = [prefix.events_at, *cuts, tail.events_end]
                self.paths = [self.path] + [f"{self.path[:-len('.json')]}.{k}.json" for k in range(1, len(bounds) - 1)]
                for k, path in enumerate(self.paths):
                    start, end = bounds[k], bounds[k + 1]
                    with open(path, "wb") as out:
                        if k:  # a later part: "[" and the events after the comma at its cut
                            out.write(b"[")
                            start += 1
                        _copy_range(src, out, start, end - start)
                        out.write(b"\n]")
                self.result.written = tail.events_end - prefix.events_at
        except OSError as exc:
            self.result.error = InputError(f"{file.path}: cannot read: {exc.strerror or exc}")

    def _run(self) -> None:
        try:
            with open(self.path, "wb") as out:
                self._write(out)
        except BrokenPipeError:
            pass
        except BaseException as exc:  # reported by finish()
            self.result.error = exc

    def _write(self, out) -> None:
        prefix = self.prefix
        held = bytearray()
        held_at = prefix.events_at  # absolute offset of held[0]
        for chunk in self.file.chunks(READ_BLOCK, offset=prefix.events_at, progress=self.progress):
            held += chunk
            if len(held) > 2 * TAIL_WINDOW:
                cut = len(held) - TAIL_WINDOW
                out.write(held[:cut])
                self.result.written += cut
                del held[:cut]
                held_at += cut
        tail = tc.scan_tail(bytes(held), held_at, prefix.container, prefix.events_at)
        self.result.tail = tail
        if tail.status in ("complete", "truncated"):
            keep = tail.events_end - held_at
            out.write(held[:keep])
            self.result.written += keep
        out.write(b"\n]")

    def finish(self) -> StageResult:
        """Wait for the helper thread; when DuckDB stopped reading a FIFO early, drain it."""
        if self._thread is not None:
            while self.fifo and self._thread.is_alive():
                try:
                    fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
                except OSError:
                    break
                try:
                    while self._thread.is_alive():
                        try:
                            if not os.read(fd, 1 << 20):
                                self._thread.join(0.01)
                        except BlockingIOError:
                            self._thread.join(0.01)
                finally:
                    os.close(fd)
            self._thread.join()
        return self.result

    def cleanup(self) -> None:
        for path in self.paths:
            try:
                os.unlink(path)
            except OSError:
                pass
        if self._folder is not None:
            tempfiles.remove(self._folder)


# =========================================================================== ahead
#: smaller files are not staged ahead (from this size an array is cut into two parts)
STAGE_AHEAD_MIN_BYTES = 2 * PART_MIN_BYTES


@dataclass
class _Ahead:
    file: InputFile
    folder: str
    thread: threading.Thread | None = None
    stage: Stage | None = None


#: the arrays :func:`stage_ahead` stages, by the file's real path, until a Stage takes them
_STAGED_AHEAD: dict[str, _Ahead] = {}


def stage_ahead(path: str) -> bool:
    """Start staging the event array of ``path`` now, on a helper thread, when it is an
    uncompressed regular file of at least :data:`STAGE_AHEAD_MIN_BYTES` that :func:`sniff`
    finds surely a trace, for the importer's :class:`Stage` of it, which takes the parts
    when the file is still the same (size, modification time, inode) and its array starts
    at the same place.  The CLI calls this before it imports what an ingest needs: the
    kernel's copy of a 500 MB array (a quarter of a second) is made meanwhile instead of
    after.  True when the staging started; the file's sha256 is then left to the importer,
    after the array is read (a core is free then).  Anything that goes wrong here is left
    for the importer to find and report."""
    if path == STDIN or not os.path.isfile(path):
        return False
    try:
        file = InputFile(path)
        if file.compression or file.size < STAGE_AHEAD_MIN_BYTES or sniff(file.head(), file.name) < SURE:
            return False
    except InputError:
        return False
    ahead = _Ahead(file, tempfiles.new_folder("trace-ahead"))

    def run() -> None:
        try:
            stage = Stage(file, find_prefix(file), None, ahead.folder, split=True)
            stage._copy()
            ahead.stage = stage
        except Exception:  # noqa: BLE001 - the importer stages the file again and says what is wrong
            pass

    ahead.thread = threading.Thread(target=run, name="loganalyze-trace-ahead", daemon=True)
    ahead.thread.start()
    _STAGED_AHEAD[os.path.realpath(path)] = ahead
    return True


def _cuts(src, start: int, end: int) -> list[int]:
    """Offsets of commas between events that cut the array ``[start, end)`` of ``src`` into
    parts of about equal size (see :data:`PART_MIN_BYTES`); fewer where no boundary is found
    near a cut."""
    parts = max(1, min(usable_cores(), MAX_PARTS, (end - start) // PART_MIN_BYTES))
    cuts: list[int] = []
    for k in range(1, parts):
        at = start + (end - start) * k // parts
        src.seek(at)
        comma = tc.element_boundary(src.read(min(BOUNDARY_WINDOW, end - at)), at)
        if comma is not None and (not cuts or comma > cuts[-1]) and comma < end:
            cuts.append(comma)
    return cuts


def _copy_range(src, out, offset: int, count: int) -> None:
    """``count`` bytes of ``src`` from ``offset`` to the end of ``out``, in the kernel when it can."""
    done = 0
    out.flush()  # the kernel copy writes at the descriptor's position
    try:
        while done < count:
            n = os.copy_file_range(src.fileno(), out.fileno(), count - done, offset + done)
            if n == 0:
                break
            done += n
        out.seek(0, os.SEEK_END)
        if done == count:
            return
    except (AttributeError, OSError):
        pass
    src.seek(offset + done)
    out.seek(0, os.SEEK_END)
    left = count - done
    while left > 0:
        block = src.read(min(READ_BLOCK, left))
        if not block:
            break
        out.write(block)
        left -= len(block)
