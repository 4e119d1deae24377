"""The main window and other processes: it carries out what windows attached to its runs ask
(`goalgui.remote`), and it attaches to runs that other processes drive (`AttachedRun`).
A mixin of `MainWindow`."""

from __future__ import annotations

import asyncio
import logging

from ..remote import Remote
from .attached import AttachedRun

log = logging.getLogger(__name__)


class RemoteControls:
    _remote: Remote | None = None
    _remote_task: asyncio.Task | None = None

    @property
    def engine_confirmer(self):
        """The confirmer the runs this window drives ask: its dialogs, raced against the answers
        windows attached to the same run send. Asking for it starts carrying out their requests."""
        if self._remote is None:
            self._remote = Remote(self.journal, restart=lambda run: run.start())
            self._engine_confirmer = self._remote.confirmer(self.confirmer)
        if self._remote_task is None or self._remote_task.done():
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # a Qt slot between two turns of qasync's loop
                loop = asyncio.get_event_loop_policy().get_event_loop()
            self._remote_task = loop.create_task(self._remote.poll(self._served_runs))
        return self._engine_confirmer

    def _served_runs(self) -> list:
        """The runs this window drives and still holds (a paused one too: an attached window may resume it)."""
        return [run for run in self._driven.values() if not run.state.final]

    def attach(self, run_id: str) -> AttachedRun:
        """Follow `run_id`, which another live process drives, and steer it through the journal."""
        attached = AttachedRun(self.journal, run_id, confirmer=self.confirmer, driver_gone=self._on_driver_gone,
                               say=lambda text: self.statusBar().showMessage(text, 10000))
        self.follow(attached, drive=False)
        self.statusBar().showMessage(f"attached to run {run_id}, driven by another process", 8000)
        return attached

    def _on_driver_gone(self, run_id: str) -> None:
        """The process that drove an attached run ended and left it unfinished: it is this window's
        to open (and resume, or abandon) like any other journaled run."""
        if self.run is not None and getattr(self.run, "attached", False) and self.run.run_id == run_id:
            self.show_journaled(run_id)
            self.statusBar().showMessage(f"the process that drove run {run_id} has ended: resume it here", 10000)

    def closeEvent(self, event) -> None:
        """The window is closing (MainWindow asked first): stop serving other processes' requests,
        and stop watching a run it is attached to (its driver stops counting on this window)."""
        if self._remote_task is not None:
            self._remote_task.cancel()
        if getattr(self.run, "attached", False):
            self.bridge.detach()
        super().closeEvent(event)
