"""A run's history in the window: fork from a goal, compare two runs. A mixin of `MainWindow`.

"Fork from here" (the tree's context menu) makes a new run whose history up to the chosen goal is
the shown run's (`goalgui.forking`: the goal and what followed are redone) and drives it in this
window, as resuming would. "Compare" (the Runs tab, two runs selected) opens the compare view on
them. Both read and write the journal off the event loop.
"""

from __future__ import annotations

import asyncio
import logging

from PySide6.QtWidgets import QMenu

from ..engine.lifecycle import InputError
from ..forking import fork_run
from ..journal import JournalError

log = logging.getLogger(__name__)


class RunHistory:
    def _on_tree_context_menu(self, pos) -> None:
        goal_id = self._selected_goal_id()
        menu = QMenu(self)
        fork = menu.addAction("Fork from here")
        fork.setToolTip("A new run with this run's history up to this goal; the goal and what followed are redone")
        fork.setEnabled(bool(goal_id and self.shown_run_id))
        fork.triggered.connect(lambda: self.fork_here(goal_id))
        self.tree_menu = menu
        menu.popup(self.tree.viewport().mapToGlobal(pos))

    def fork_here(self, goal_id: str | None = None) -> asyncio.Future | None:
        """Fork the shown run at `goal_id` (the selected goal) and drive the fork here."""
        goal_id = goal_id or self._selected_goal_id()
        source = self.shown_run_id
        if not goal_id or source is None:
            self.statusBar().showMessage("select a goal of a run to fork from", 8000)
            return None

        async def work() -> None:
            try:
                fork_id = await asyncio.to_thread(fork_run, self.journal, source, goal_id=goal_id)
            except (InputError, JournalError) as exc:
                self.statusBar().showMessage(f"cannot fork: {exc}", 10000)
                return
            except Exception as exc:  # noqa: BLE001 (said in one line, logged; the window goes on)
                log.info("fork failed", exc_info=True)
                self.statusBar().showMessage(f"cannot fork: {type(exc).__name__}", 10000)
                return
            self.refresh_runs()
            self.statusBar().showMessage(f"forked {source} at {goal_id} into {fork_id}", 10000)
            self.resume_journaled(fork_id)

        self.fork_task = asyncio.ensure_future(work())
        return self.fork_task
