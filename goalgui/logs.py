"""goalgui's log: what happened and where, never what a run is about.

The log is telemetry (seed 001): an objective's text, a prompt, a model's reply or result, a tool's
output and a key belong in the journal or the keyring, never here. goalgui's own messages name
ids, purposes, counts and exception types; what could carry someone else's text is cut at the
handler, whatever a caller passes:

- an argument that is an exception becomes its type's name (its message may quote a prompt, a
  server's reply or a path in the workspace);
- a traceback keeps its frames (goalgui's files, lines and functions) and each exception's type,
  without the messages;
- an argument longer than 120 characters or spanning lines becomes its length.

The file is 0600 in the log dir (platformdirs), rotated at 2 MB with 3 old files kept.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import sys
import time
import traceback
from pathlib import Path

from . import paths

MAX_BYTES, BACKUPS = 2_000_000, 3
LONGEST = 120  # characters an argument may have before it is shown as its length


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """Created 0600 in a 0700 folder, after each rotation too."""

    def _open(self):
        paths.private_file(Path(self.baseFilename), own_dir=True)
        return super()._open()

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 (logging's name)
        """A record that cannot be written (a format string and its arguments that do not match) is
        said in one line, without the arguments (the stock handler prints them, and a traceback)."""
        sys.stderr.write(f"goalgui: a log record from {record.name} could not be written\n")


def _safe_arg(value):
    if isinstance(value, BaseException):
        return type(value).__name__
    if isinstance(value, (int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple, set, frozenset, dict)):  # what they hold could be anything
        return f"[{type(value).__name__} of {len(value)}]"
    text = str(value)
    if len(text) > LONGEST or "\n" in text or "\r" in text:
        return f"[{len(text)} characters]"
    return text


class PrivateFormatter(logging.Formatter):
    """The handler's formatter: the cuts the module docstring lists."""

    def format(self, record: logging.LogRecord) -> str:
        record = logging.makeLogRecord(record.__dict__)  # other handlers see the record unchanged
        if not isinstance(record.msg, str) or not record.name.startswith("goalgui"):
            # goalgui's messages are its own format strings; another library's (asyncio's "Task
            # exception was never retrieved", with the exception's repr) and a non-string are not
            record.msg, record.args = _safe_arg(record.getMessage() if record.args else record.msg), ()
        if isinstance(record.args, tuple):
            record.args = tuple(_safe_arg(a) for a in record.args)
        elif isinstance(record.args, dict):  # named arguments, or one dict given as the argument
            record.args = ({k: _safe_arg(v) for k, v in record.args.items()} if "%(" in str(record.msg)
                           else (_safe_arg(record.args),))
        record.exc_text = None
        return super().format(record)

    def formatException(self, ei) -> str:
        lines = []
        exc = ei[1]
        seen: set[int] = set()
        while exc is not None and id(exc) not in seen:
            seen.add(id(exc))
            lines.extend(_described(exc, ""))
            exc = exc.__cause__ or (None if exc.__suppress_context__ else exc.__context__)
            if exc is not None:
                lines.append("while handling, or caused by:")
        return "\n".join(lines)

    def formatStack(self, stack_info: str) -> str:
        return "[stack withheld]"


def _described(exc: BaseException, indent: str) -> list[str]:
    """An exception's type and frames, and those of what an exception group holds."""
    lines = [f"{indent}{type(exc).__module__}.{type(exc).__qualname__} (message withheld: it may hold run content)"]
    lines += [f"{indent}  at {_short(f.filename)}:{f.lineno} in {f.name}" for f in traceback.extract_tb(exc.__traceback__)]
    for inner in getattr(exc, "exceptions", ()) if isinstance(exc, BaseExceptionGroup) else ():
        lines += _described(inner, indent + "    ")
    return lines


def _short(filename: str) -> str:
    """A frame's file, from its package folder on (no home directory in the log)."""
    parts = Path(filename).parts
    for anchor in ("goalgui", "site-packages"):
        if anchor in parts:
            return "/".join(parts[len(parts) - 1 - parts[::-1].index(anchor):])
    return Path(filename).name


def log_file() -> Path:
    return paths.log_dir() / "goalgui.log"


def setup() -> None:
    """The log file for this process (once), and faults.log for native crashes."""
    root = logging.getLogger()
    if any(getattr(h, "_goalgui", False) for h in root.handlers):
        return
    try:
        paths.private_dir(paths.log_dir())
        handler: logging.Handler = PrivateRotatingFileHandler(log_file(), maxBytes=MAX_BYTES, backupCount=BACKUPS,
                                                              encoding="utf-8")
    except OSError:
        handler = logging.StreamHandler(sys.stderr)
        handler.setLevel(logging.WARNING)
    handler.setFormatter(PrivateFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler._goalgui = True
    _record_native_crashes()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    # httpx logs every request's URL at INFO; goalgui logs its own calls without query strings
    for noisy in ("httpx", "httpcore"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


_fault_file = None


def _record_native_crashes() -> None:
    """A crash in native code (llama.cpp, Qt) leaves its Python stacks in faults.log in the log dir,
    not only a bare 'Segmentation fault' on a terminal that may not exist."""
    global _fault_file
    import faulthandler

    if _fault_file is not None or faulthandler.is_enabled():
        return  # already on (pytest, python -X faulthandler): where its owner wants the stacks
    try:
        path = paths.private_dir(paths.log_dir()) / "faults.log"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        _fault_file = os.fdopen(fd, "a", encoding="utf-8")
        _fault_file.write(f"--- goalgui pid {os.getpid()} started {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
        _fault_file.flush()
        faulthandler.enable(file=_fault_file, all_threads=True)
    except OSError:
        faulthandler.enable()
