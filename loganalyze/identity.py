"""Which stored source an input already is, or extends.

A source is identified by the sha256 of its *content*, the decompressed bytes
(``sources.sha256``): ``a.log``, ``a.log.gz`` and ``gzip -9 a.log`` are one source.  A file
whose content starts with the whole content of a stored source (a log after more lines were
appended) *extends* that source: found by ``sources.head_sha256`` (the hash of the first
:data:`HEAD_BYTES` of the content) and confirmed by hashing the input's prefix of the stored
source's length.  Databases made before content hashes stored a compressed file's own hash
in ``sha256``; :func:`duplicate_of` matches those rows through the input's file hash.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Iterable

from .inputs import InputFile

#: content bytes behind ``sources.head_sha256``
HEAD_BYTES = 64 << 10
#: the gzip trailer states the size modulo this
_GZIP_SIZE_MOD = 1 << 32


@dataclass
class StoredSource:
    """A source already in the database: its id, absolute path, run label and content size."""

    source_id: int
    path: str
    run_label: str | None
    content_bytes: int | None = None

    def describe(self) -> str:
        """``source N (path) in run 'x'`` for messages."""
        run = f" in run {self.run_label!r}" if self.run_label is not None else " (no run label)"
        return f"source {self.source_id} ({self.path}){run}"


def head_sha256(head: bytes) -> str:
    """``sources.head_sha256`` of content that starts with ``head``."""
    return hashlib.sha256(head[:HEAD_BYTES]).hexdigest()


def duplicate_of(con, file: InputFile) -> StoredSource | None:
    """The stored source with the content of ``file`` (hashes it if needed), or None."""
    hashes = [file.sha256] + ([file.file_sha256] if file.compression else [])
    row = con.execute(
        f"SELECT source_id, path, run_label, content_bytes FROM sources WHERE sha256 IN "
        f"({', '.join('?' * len(hashes))}) ORDER BY source_id LIMIT 1", hashes).fetchone()
    return StoredSource(*row) if row else None


def maybe_duplicate(con, file: InputFile) -> bool:
    """Cheap: whether a stored source may have the content of ``file`` (same content size;
    for gzip, the size its trailer states), so that hashing it before importing pays off."""
    if not file.compression:
        return _exists(con, "content_bytes = ? OR (content_bytes IS NULL AND size_bytes = ?)",
                       [file.size, file.size])
    hint = file.gzip_size_hint()
    return (hint is not None and _exists(con, f"content_bytes % {_GZIP_SIZE_MOD} = ?", [hint])) or \
        _exists(con, "content_bytes IS NULL AND size_bytes = ?", [file.size])


def extended_sources(con, file: InputFile, head: bytes) -> list[StoredSource]:
    """The stored sources whose whole content ``file``'s content starts with (and is longer
    than): the sources it extends.  ``head`` is the first bytes of ``file``'s content (up to
    :data:`HEAD_BYTES` or all of it); ``file`` is read (a prefix) only when a stored source
    of at least :data:`HEAD_BYTES` starts with the same head."""
    known = file.content_bytes  # None for gzip until a complete pass
    shorter = "content_bytes < ?" if known is not None else "TRUE"
    params: list = [known] if known is not None else []
    # stored sources shorter than a head: their content against our head's prefixes
    cands = _rows(con, f"content_bytes < ? AND {shorter}", [min(HEAD_BYTES, len(head)), *params])
    # longer ones: the same first HEAD_BYTES, then our prefix of their length
    if len(head) >= HEAD_BYTES:
        long = _rows(con, f"content_bytes >= ? AND head_sha256 = ? AND {shorter}",
                     [HEAD_BYTES, head_sha256(head), *params])
    else:
        long = []
    wanted = {s.content_bytes for s in cands}
    hashes = prefix_hashes([head], wanted)
    if long:
        gen = file.chunks(hash_bytes=False)
        try:
            hashes.update(prefix_hashes(gen, {s.content_bytes for s in long}))
        finally:
            gen.close()
    stored = dict(con.execute(
        f"SELECT source_id, sha256 FROM sources WHERE source_id IN ({', '.join('?' * len(cands + long)) or 'NULL'})",
        [s.source_id for s in cands + long]).fetchall())
    found = [s for s in cands + long if hashes.get(s.content_bytes) == stored[s.source_id]]
    if found and known is None:  # a gzip file: extends only when longer than the source
        total = _content_bytes(file)
        found = [s for s in found if s.content_bytes < total]
    return sorted(found, key=lambda s: s.source_id)


def prefix_hashes(pieces: Iterable[bytes], lengths: set[int]) -> dict[int, str]:
    """sha256 of the first ``n`` bytes of the concatenated ``pieces`` for every ``n`` in
    ``lengths`` that they reach, in one pass."""
    todo = sorted(n for n in lengths if n > 0)
    out: dict[int, str] = {}
    h = hashlib.sha256()
    done = i = 0
    for piece in pieces:
        view = memoryview(piece)
        while i < len(todo) and done + len(view) >= todo[i]:
            take = todo[i] - done
            h.update(view[:take])
            view, done = view[take:], todo[i]
            out[todo[i]] = h.copy().hexdigest()
            i += 1
        if i == len(todo):
            break
        h.update(view)
        done += len(view)
    return out


def _content_bytes(file: InputFile) -> int:
    if file.content_bytes is None:
        file.compute_sha256()
    return file.content_bytes


def _rows(con, where: str, params: list) -> list[StoredSource]:
    return [StoredSource(*r) for r in con.execute(
        f"SELECT source_id, path, run_label, content_bytes FROM sources WHERE {where} ORDER BY source_id",
        params).fetchall()]


def _exists(con, where: str, params: list) -> bool:
    return con.execute(f"SELECT count(*) FROM sources WHERE {where}", params).fetchone()[0] > 0
