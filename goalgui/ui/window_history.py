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

    def compare_runs(self, run_a: str, run_b: str) -> asyncio.Future:
        """Open the Compare tab on two runs (read off the loop; a bad run is one line in the status bar)."""
        from ..cli_compare import compare_runs

        async def work() -> None:
            try:
                data, _text = await asyncio.to_thread(compare_runs, self.journal, run_a, run_b)
            except (InputError, JournalError) as exc:
                self.statusBar().showMessage(f"cannot compare: {exc}", 10000)
                return
            view = self._compare_view()
            view.show_comparison(data)
            self.compared = (data["a"]["run_id"], data["b"]["run_id"])
            self.tabs.setCurrentWidget(view)

        self.compare_task = asyncio.ensure_future(work())
        return self.compare_task

    def _compare_view(self):
        from .compare_view import CompareView

        view = getattr(self, "compare_view", None)
        if view is None:
            view = self.compare_view = CompareView()
            view.goalChosen.connect(self._on_compared_goal_chosen)
            self.tabs.addTab(view, "Compare")
        return view

    def _on_compared_goal_chosen(self, side: str, goal_id: str) -> None:
        """A goal double-clicked in the compare view: its run opens in the Run tab with it selected."""
        run_id = self.compared[0 if side == "a" else 1]
        self.tabs.setCurrentIndex(0)
        if self.shown_run_id == run_id:  # on screen already (or driven here): no reload
            self._choose_goal(goal_id)
            return

        def select(_n: int) -> None:
            self.moment_shown.disconnect(select)
            self._choose_goal(goal_id)

        self.moment_shown.connect(select)
        self.show_journaled(run_id)
