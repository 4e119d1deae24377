"""An unexpected exception in the window (issue 13): a dialog says what happened and where the log
is, the run the window drives is paused with the reason, and more errors are counted, not stacked."""

import pytest
from PySide6.QtCore import QTimer

from goalgui.engine import Run, RunState
from goalgui.logs import log_file
from goalgui.ui.crash import PAUSED_BY_ERROR, CrashGuard

from .test_ui_controls import Gate, until
from .test_ui_window import window  # noqa: F401  (the fixture)


def boom():
    raise RuntimeError("the objective's text must not be logged: SECRET-9")


@pytest.mark.qt_no_exception_capture
def test_a_slot_that_raises_shows_the_dialog_and_pauses_the_run(window, qloop, journal):
    guard = CrashGuard(window).install(qloop)
    try:
        model = Gate()
        run = Run.create("Write a report", model, sink=journal, model_spec="scripted:rehearsal")
        window.run_goal(run)
        until(qloop, model.entered.is_set)
        QTimer.singleShot(0, boom)  # raised in a Qt slot: PySide6 hands it to sys.excepthook
        until(qloop, lambda: guard.dialog is not None and guard.dialog.isVisible())
        assert run.state is RunState.PAUSED and run.record.stop_reason == PAUSED_BY_ERROR
        text = guard.dialog.text()
        assert "RuntimeError" in text and str(log_file()) in text and run.run_id in text
        qloop.call_soon(boom)  # raised in a loop callback: the loop's exception handler
        until(qloop, lambda: "(2 errors so far.)" in guard.dialog.text())
        assert len([w for w in window.findChildren(type(guard.dialog)) if w.isVisible()]) == 1
        guard.dialog.accept()
        until(qloop, lambda: guard.dialog is None)
        assert journal.runs(run.run_id)[0]["state"] == "paused"
        model.release.set()
    finally:
        guard.uninstall(qloop)


@pytest.mark.qt_no_exception_capture
def test_with_no_run_the_dialog_still_says_what_happened(window, qloop):
    guard = CrashGuard(window).install(qloop)
    try:
        async def failing():
            boom()

        qloop.call_soon(lambda: qloop.create_task(failing()).add_done_callback(lambda t: t.result()))
        until(qloop, lambda: guard.dialog is not None)
        assert "was paused" not in guard.dialog.text() and "RuntimeError" in guard.dialog.text()
        guard.dialog.accept()
    finally:
        guard.uninstall(qloop)
