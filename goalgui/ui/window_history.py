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

from ..engine import events as ev
from ..engine.lifecycle import InputError
from ..forking import fork_run
from ..journal import JournalError

log = logging.getLogger(__name__)


OVERRULES = (("split", "Split it"), ("do", "Do it as is"), ("accept", "Accept the result"),
             ("redo", "Redo with a note…"), ("edit", "Edit the text…"))


class RunHistory:
    def _on_tree_context_menu(self, pos) -> None:
        goal_id = self._selected_goal_id()
        menu = QMenu(self)
        fork = menu.addAction("Fork from here")
        fork.setToolTip("A new run with this run's history up to this goal; the goal and what followed are redone")
        fork.setEnabled(bool(goal_id and self.shown_run_id))
        fork.triggered.connect(lambda: self.fork_here(goal_id))
        menu.addSeparator()
        for action, label in OVERRULES:
            item = menu.addAction(label)
            item.setEnabled(bool(goal_id and self.shown_run_id))
            item.triggered.connect(lambda _checked=False, a=action: self.ask_overrule(goal_id, a))
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

    def ask_overrule(self, goal_id: str, action: str) -> None:
        """Overrule the model on a goal; redo asks for the note and edit for the new text first."""
        if action not in ("redo", "edit"):
            self.overrule_goal(goal_id, action)
            return
        from PySide6.QtWidgets import QInputDialog

        dialog = QInputDialog(self)
        dialog.setWindowTitle("Redo with a note" if action == "redo" else "Edit the goal")
        dialog.setLabelText("What should be done differently?" if action == "redo" else "The goal's new text:")
        if action == "edit":
            dialog.setTextValue(self._goal_text(goal_id))
        dialog.textValueSelected.connect(lambda value: self.overrule_goal(
            goal_id, action, note=value if action == "redo" else "", text=value if action == "edit" else ""))
        self.overrule_dialog = dialog
        dialog.open()

    def _goal_text(self, goal_id: str) -> str:
        """The goal's text as it is now: the live record's, or the journal's (added, then edited)."""
        run = self.current
        if run is not None and run.run_id == self.shown_run_id and goal_id in run.record.goals:
            return run.record.goals[goal_id].text
        text = ""
        for e in self.journal.goal_events(self.shown_run_id, goal_id):
            if isinstance(e, ev.GoalAdded) or (isinstance(e, ev.GoalOverruled) and e.action == "edit"):
                text = e.text
        return text

    def overrule_goal(self, goal_id: str, action: str, *, note: str = "", text: str = "") -> asyncio.Future | None:
        """The run this window drives is overruled at once; another is steered through the journal
        (its driver, or nobody: `runs.steer_run`), off the loop. The outcome is on the status line."""
        run = self.current
        if run is not None and run.run_id == self.shown_run_id:
            try:
                run.overrule(goal_id, action, note=note, text=text)
            except InputError as exc:
                self.statusBar().showMessage(f"cannot {action} {goal_id}: {exc}", 10000)
                return None
            self.statusBar().showMessage(f"{goal_id}: {action} by the operator", 8000)
            return None
        from ..runs import steer_run

        run_id = self.shown_run_id

        async def work() -> None:
            try:
                said = await asyncio.to_thread(steer_run, self.journal, run_id, goal_id, action, note=note, text=text)
            except (InputError, JournalError) as exc:
                self.statusBar().showMessage(f"cannot {action} {goal_id}: {exc}", 10000)
                return
            self.statusBar().showMessage(said, 10000)
            self.show_journaled(run_id)  # what it changed, read back

        self.overrule_task = asyncio.ensure_future(work())
        return self.overrule_task
