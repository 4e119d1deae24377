"""Start-up: a QApplication with qasync's event loop; the engine runs as tasks in the same thread."""

from __future__ import annotations

import asyncio
import logging
import os
import sys


def display_available() -> bool:
    """Whether a window can be shown: a display to connect to, or a Qt platform chosen explicitly."""
    if os.environ.get("QT_QPA_PLATFORM") or sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def main(open_run: str | None = None, journal_path: str | None = None, start: dict | None = None,
         exit_when_done: bool = False) -> int:
    """Open the window (on a run, or starting the goal `start` as MainWindow.start_goal takes it).
    Returns 0, or with `exit_when_done` the run's exit code once it stops."""
    import qasync
    from PySide6.QtWidgets import QApplication

    from .. import assets, paths
    from ..journal import Journal
    from ..settings import Settings
    from .crash import CrashGuard
    from .icon import app_icon
    from .main_window import MainWindow
    from .theme import apply_theme

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setWindowIcon(app_icon())
    app.setApplicationName("goalgui")
    app.setDesktopFileName(assets.APP_ID)  # the desktop entry it belongs to (Wayland: its app id)
    logging.getLogger("goalgui").info("window on Qt's %s platform", app.platformName())
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    settings = Settings.load()
    apply_theme(settings.theme, app)
    journal = Journal(paths.journal_path(journal_path or settings.journal))
    window = MainWindow(journal, settings)
    guard = CrashGuard(window).install(loop)  # an unexpected error: a dialog, and the run paused
    if start is not None:
        window.launch_model = start.get("model")  # New Goal and the chat use it too
    try:  # a bad run id or goal is one line on the terminal, before any window appears
        open_id = journal.resolve(open_run) if open_run else None
        run = window.create_run(start) if start is not None else None
    except BaseException:
        journal.close()
        raise
    window.show()
    if open_id:
        window.show_journaled(open_id)
    if run is not None:
        window.run_goal(run)
    closed = asyncio.Event()
    app.aboutToQuit.connect(closed.set)
    outcome = {"code": 0}

    async def close_when_done() -> None:
        state = await run.start()
        while window.shown_state is not state:  # the last batch on screen, then go
            await asyncio.sleep(0.05)
        from ..runs import exit_code

        outcome["code"] = exit_code(state)
        window.close()
        app.quit()

    with loop:
        if run is not None and exit_when_done:
            done = asyncio.ensure_future(close_when_done())
        loop.run_until_complete(closed.wait())
        if run is not None and exit_when_done and done.done() and done.exception() is not None:
            raise done.exception()
    guard.uninstall(loop)
    journal.close()
    return outcome["code"]

