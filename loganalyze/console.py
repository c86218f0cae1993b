"""The ``loganalyze`` command's entry point (``[project.scripts]`` and ``python -m
loganalyze``): it imports the command line (:mod:`loganalyze.cli`: typer and the commands'
definitions, the first ~30 ms of a run), so that a Ctrl-C while that loads ends the command
as one later does: ``interrupted``, exit 130, no traceback."""
import os
import sys


def main() -> None:
    try:
        from .cli import main as run
    except KeyboardInterrupt:
        # nothing has started yet (no database open, no helper process): leave at once,
        # without the interpreter's teardown, which would end the process by the signal
        sys.stderr.write("interrupted\n")
        sys.stderr.flush()
        os._exit(130)
    run()
