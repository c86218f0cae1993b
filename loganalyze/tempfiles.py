"""Our temporary files: one folder per process, removed on every exit, swept after a kill.

Every temporary file or folder loganalyze makes lives in ``<root>/loganalyze-tmp-<pid>-<random>``
(``root`` is ``$LOGANALYZE_TMPDIR`` or the system's temporary folder).  The folder goes away
when the process exits (normally, or through SIGINT/SIGTERM, which unwind to ``atexit``);
after a SIGKILL it stays, and :func:`sweep_stale` (run when an ingest starts) removes every
such folder whose process is gone.
"""
from __future__ import annotations

import atexit
import os
import re
import shutil
import tempfile
import threading

#: how our folders are named: the prefix, the pid, a random part
FOLDER_PREFIX = "loganalyze-tmp-"
_FOLDER_RE = re.compile(re.escape(FOLDER_PREFIX) + r"(\d+)-")

_lock = threading.RLock()
_folders: dict[tuple[int, str], str] = {}  # (pid, root) -> this process's folder there
_exit_hooks: set[int] = set()  # pids whose folders are removed at exit


def temp_root() -> str:
    """Where our folders are made: ``$LOGANALYZE_TMPDIR`` or the system's temporary folder."""
    return os.environ.get("LOGANALYZE_TMPDIR") or tempfile.gettempdir()


def process_folder() -> str:
    """This process's private temporary folder (made when needed, removed at exit, and as
    soon as :func:`remove` has emptied it)."""
    key = (os.getpid(), temp_root())
    with _lock:
        folder = _folders.get(key)
        if folder is None or not os.path.isdir(folder):
            os.makedirs(key[1], exist_ok=True)
            folder = tempfile.mkdtemp(prefix=f"{FOLDER_PREFIX}{key[0]}-", dir=key[1])
            if key[0] not in _exit_hooks:
                _exit_hooks.add(key[0])
                atexit.register(_remove_folders, key[0])
            _folders[key] = folder
        return folder


def new_file(kind: str, suffix: str = "") -> tuple[int, str]:
    """A new temporary file in :func:`process_folder`: ``(open descriptor, path)``, as
    :func:`tempfile.mkstemp` gives them; ``kind`` starts its name (stdin, sqlite, ...)."""
    with _lock:
        return tempfile.mkstemp(prefix=f"{kind}-", suffix=suffix, dir=process_folder())


def new_folder(kind: str) -> str:
    """A new temporary folder in :func:`process_folder`."""
    with _lock:
        return tempfile.mkdtemp(prefix=f"{kind}-", dir=process_folder())


def remove(path: str) -> None:
    """Delete the temporary file or folder ``path`` if it is there; our process folder goes
    too once it is empty."""
    with _lock:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            try:
                os.unlink(path)
            except OSError:
                pass
        parent = os.path.dirname(path)
        if parent in _folders.values():
            try:
                os.rmdir(parent)
            except OSError:  # not empty: other files of ours are in use
                pass


def _remove_folders(pid: int) -> None:
    if os.getpid() != pid:  # a forked child does not remove its parent's folders
        return
    with _lock:
        for key in [k for k in _folders if k[0] == pid]:
            shutil.rmtree(_folders.pop(key), ignore_errors=True)


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (one of another user's counts as existing)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def sweep_stale(root: str | None = None) -> list[str]:
    """Remove the temporary folders left by our processes that no longer run (killed with
    SIGKILL, or out of memory); the paths removed."""
    root = root or temp_root()
    try:
        names = os.listdir(root)
    except OSError:
        return []
    removed = []
    for name in names:
        m = _FOLDER_RE.match(name)
        if not m or pid_alive(int(m.group(1))):
            continue
        path = os.path.join(root, name)
        shutil.rmtree(path, ignore_errors=True)
        if not os.path.exists(path):
            removed.append(path)
    return removed
