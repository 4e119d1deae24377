"""Start-up: a QApplication with qasync's event loop; the engine runs as tasks in the same thread."""

from __future__ import annotations

import asyncio
import sys


def main(open_run: str | None = None, journal_path: str | None = None) -> int:
    import qasync
    from PySide6.QtWidgets import QApplication

    from .. import paths
    from ..journal import Journal
    from ..settings import Settings
    from .main_window import MainWindow
    from .theme import apply_theme

    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("goalgui")
    app.setDesktopFileName("goalgui")
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    settings = Settings.load()
    apply_theme(settings.theme, app)
    journal = Journal(paths.journal_path(journal_path or settings.journal))
    window = MainWindow(journal, settings)
    window.show()
    if open_run:
        window.show_journaled(journal.resolve(open_run))
    closed = asyncio.Event()
    app.aboutToQuit.connect(closed.set)
    with loop:
        loop.run_until_complete(closed.wait())
    journal.close()
    return 0
