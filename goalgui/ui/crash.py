"""An unexpected exception in the window: said in a dialog, not lost on a terminal nobody reads.

A slot that raises (PySide6 hands it to `sys.excepthook`) or a task on the event loop that fails
with nobody awaiting it (the loop's exception handler) would otherwise print a traceback and carry
on, or take the window with it. Here it is logged (frames and types: `goalgui.logs` withholds
messages), the run the window drives is paused with the reason, so nothing runs on unwatched,
and a dialog says what happened and where the log is. Errors that follow while the dialog is open
are counted in it, not stacked as more dialogs.
"""

from __future__ import annotations

import logging
import sys
import traceback
from pathlib import Path

from PySide6.QtWidgets import QMessageBox

from ..logs import log_file
from ..terminal import shown

log = logging.getLogger(__name__)
PAUSED_BY_ERROR = "paused: an internal error in the window (details in the log)"


class CrashGuard:
    def __init__(self, window):
        self.window = window
        self.dialog: QMessageBox | None = None
        self.count = 0
        self._previous_hook = None

    def install(self, loop=None) -> CrashGuard:
        if sys.excepthook != self._hook:  # installed twice, it must not call itself
            self._previous_hook = sys.excepthook
            sys.excepthook = self._hook
        if loop is not None:
            loop.set_exception_handler(self._loop_handler)
        return self

    def uninstall(self, loop=None) -> None:
        if sys.excepthook == self._hook:
            sys.excepthook = self._previous_hook or sys.__excepthook__
        if loop is not None:
            loop.set_exception_handler(None)

    def _hook(self, kind, exc, tb) -> None:
        if issubclass(kind, (KeyboardInterrupt, SystemExit)):
            (self._previous_hook or sys.__excepthook__)(kind, exc, tb)
            return
        self.report(exc if exc is not None else RuntimeError(kind.__name__))

    def _loop_handler(self, loop, context: dict) -> None:
        exc = context.get("exception")
        if exc is None:  # a warning of the loop's own ("Task was destroyed but it is pending"): log it
            log.warning("event loop: %s", str(context.get("message", ""))[:200])
            return
        self.report(exc)

    def report(self, exc: BaseException) -> None:
        """Log it, pause the run being driven, and say it in the dialog."""
        log.error("unexpected error in the window", exc_info=(type(exc), exc, exc.__traceback__))
        self.count += 1
        paused = self._pause_run()
        where = _where(exc)
        text = f"{type(exc).__name__} in {where}" if where else type(exc).__name__
        detail = [f"goalgui met an error it did not expect: {text}."]
        if paused:
            detail.append(f"Run {paused} was paused so that nothing runs unwatched; resume it when you are ready.")
        detail.append(f"The log has the details: {log_file()}")
        if self.count > 1:
            detail.append(f"({self.count} errors so far.)")
        message = "\n\n".join(detail)
        try:
            if self.dialog is None:
                self.dialog = QMessageBox(QMessageBox.Icon.Critical, "goalgui: unexpected error", message,
                                          QMessageBox.StandardButton.Ok, self.window)
                self.dialog.setDetailedText(f"{shown(type(exc).__name__)}: {shown(str(exc))[:2000]}")
                self.dialog.finished.connect(self._closed)
                self.dialog.open()  # not exec(): no nested event loop inside a handler
            else:
                self.dialog.setText(message)
        except Exception:  # the dialog itself failed: the log and the pause stand
            log.error("the error dialog could not be shown", exc_info=True)

    def _closed(self, _result=None) -> None:
        self.dialog = None
        self.count = 0

    def _pause_run(self) -> str | None:
        run = getattr(self.window, "run", None)
        try:
            if run is not None and run.state.value == "active":
                run.pause(PAUSED_BY_ERROR)
                return run.run_id
        except Exception:
            log.error("the run could not be paused after an error", exc_info=True)
        return None


PACKAGE = str(Path(__file__).resolve().parent.parent)  # goalgui's own files, wherever it is installed


def _where(exc: BaseException) -> str:
    """The innermost frame in goalgui's own package: file:line in function."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if str(Path(f.filename).resolve()).startswith(PACKAGE)]
    if not frames:
        return ""
    f = frames[-1]
    name = "goalgui/" + str(Path(f.filename).resolve())[len(PACKAGE) + 1:]
    return f"{name}:{f.lineno} ({f.name})"
