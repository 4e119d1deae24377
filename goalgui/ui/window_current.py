"""Starting work in the window: New Goal, settings, the chat bar; the window's one current goal
(seed 001, "Creation and Replacement") and the model new work uses; asking before closing on a
working run. A mixin of `MainWindow`."""

from __future__ import annotations

import asyncio
import logging

from PySide6.QtWidgets import QMessageBox

from ..engine.lifecycle import InputError, validate_objective
from ..engine.run import Run
from ..runs import start_run
from ..terminal import shown
from .commands import chat_turn, goal_command
from .new_goal import NewGoalDialog

log = logging.getLogger(__name__)


class CurrentGoal:
    @property
    def current(self) -> Run | None:
        """The window's current goal: started or resumed here and not finished. Runs opened from the
        Runs tab for inspection are not current."""
        run = self._current
        return run if run is not None and not run.state.final else None

    def claim(self, what: str, make, go) -> Run | None:
        """One current goal per window (seed 001). `make()` builds the new run (raising InputError or
        JournalError in one line), `go(run)` drives it. With no current goal both happen at once and the
        run is returned; otherwise the operator is asked first, and only once the new run exists is the
        old one cancelled (its record is kept): a new goal that cannot start never costs the current one.
        One question at a time: while it is open, another claim is refused."""
        if self.current is None:
            run = self._make(make)
            if run is not None:
                go(run)
            return run
        box = getattr(self, "replace_box", None)
        if box is not None and box.isVisible():
            self.statusBar().showMessage("answer the open question about the current goal first", 8000)
            box.raise_()
            return None
        current = self.current
        box = QMessageBox(QMessageBox.Icon.Question, "Replace the current goal?",
                          f"A goal is current ({current.state.value}): {shown(current.record.objective)[:100]}\n\n"
                          f"{what} replaces it: the current run is cancelled; its record is kept.",
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, self)
        box.button(QMessageBox.StandardButton.Yes).setText("Cancel it and go on")
        box.button(QMessageBox.StandardButton.No).setText("Keep the current goal")
        box.setDefaultButton(QMessageBox.StandardButton.No)

        def finished(_result: int) -> None:
            if box.standardButton(box.clickedButton()) != QMessageBox.StandardButton.Yes:
                self.statusBar().showMessage("kept the current goal", 6000)
                return
            run = self._make(make)
            if run is None:  # it could not start: the current goal goes on
                return
            old = self.current  # whatever is current now, not what was when the box opened
            if old is not None and old is not run:
                old.cancel("replaced by a new goal")
            go(run)

        box.finished.connect(finished)
        self.replace_box = box
        box.open()
        return None

    def _make(self, make) -> Run | None:
        from ..engine.lifecycle import InputError
        from ..journal import JournalError

        try:
            return make()
        except (InputError, JournalError) as exc:
            self.statusBar().showMessage(str(exc), 10000)
            return None

    def _make_current(self, run: Run) -> None:
        self._current = run
        if self.session is not None:
            self.session.adopt(run)  # the chat sees the goal, and refuses a second one

    def model_for_new(self) -> str:
        """The model a new goal or chat uses: the current run's, else the one the window was started
        with, else the settings' default."""
        current = self.current
        if current is not None and current.record.model:
            return current.record.model
        return self.launch_model or self.settings.default_model or "local"

    def _ask_before_closing(self, active: list[Run]) -> None:
        box = QMessageBox(QMessageBox.Icon.Question, "Close goalgui?",
                          f"{'A run is' if len(active) == 1 else f'{len(active)} runs are'} still working: "
                          f"{shown(active[0].record.objective)[:80]}\n\nClosing pauses "
                          f"{'it' if len(active) == 1 else 'them'}; resume later from the Runs tab or with "
                          "`goalgui resume`.", QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, self)
        box.button(QMessageBox.StandardButton.Yes).setText("Pause and close")
        box.button(QMessageBox.StandardButton.No).setText("Keep running")
        box.setDefaultButton(QMessageBox.StandardButton.No)

        def finished(_result: int) -> None:
            if box.standardButton(box.clickedButton()) == QMessageBox.StandardButton.Yes:
                self._closing_asked = True
                self.close()

        box.finished.connect(finished)
        self.close_box = box
        box.open()

    # -- starting work ---------------------------------------------------------------

    def model_choices(self) -> list[str]:
        return ["local", "scripted:rehearsal"] + [f"{p.kind}:{p.name}" for p in self.settings.profiles.values()]

    def open_new_goal(self) -> NewGoalDialog:
        dialog = NewGoalDialog(self.model_choices(), self.model_for_new(),
                               self.settings.default_permission_mode, self)
        dialog.accepted_goal.connect(self.start_goal)
        dialog.draft_requested.connect(lambda intent, spec: asyncio.ensure_future(self._draft(dialog, intent, spec)))
        self.new_goal_dialog = dialog
        dialog.show()
        return dialog

    def open_settings(self):
        from .settings_dialog import SettingsDialog

        if self.settings_dialog is None:
            self.settings_dialog = SettingsDialog(self.settings, self.model_choices(), self,
                                                  journal_used=getattr(self.journal, "path", None))
            self.settings_dialog.saved.connect(self._on_settings_saved)
        self.settings_dialog.show()
        self.settings_dialog.raise_()
        return self.settings_dialog

    def _on_settings_saved(self, settings) -> None:
        self.settings = settings
        self.confirmer.timeout_s = settings.confirm_timeout
        self.session = None  # the next chat turn uses the new defaults
        self.statusBar().showMessage("settings saved", 4000)

    async def _draft(self, dialog: NewGoalDialog, intent: str, spec: str) -> None:
        from ..engine.session import GoalSession
        from ..providers import load_model

        try:
            model, _ = await asyncio.to_thread(load_model, spec)
            dialog.fill(await GoalSession(model).draft(intent))
        except Exception as exc:  # one line for the person; the detail in the log
            log.info("drafting failed", exc_info=True)
            dialog.error.setText(f"could not draft: {exc}")
        finally:
            dialog.draft_button.setEnabled(True)

    def create_run(self, goal: dict) -> Run:
        """A run for a goal (the New Goal dialog's fields); a bad field raises InputError in one line.
        A local model loads its weights on its own thread at the first call, not here."""
        return start_run(self.journal, goal["objective"], model=goal["model"], strategy=goal["strategy"],
                         limits=goal["limits"], permission_mode=goal["mode"], criteria=goal["criteria"],
                         confirmer=self.engine_confirmer, workspace=goal.get("workspace"),
                         options={**self.settings.cursor_options(), **(goal.get("options") or {})})

    def start_goal(self, goal: dict) -> Run | None:
        """Start the goal; with another one current, ask to replace it first (and return None)."""
        try:
            validate_objective(goal.get("objective", ""))  # refused before any question is asked
        except InputError as exc:
            self.statusBar().showMessage(str(exc), 10000)
            return None
        return self.claim("The new goal", lambda: self.create_run(goal), self.run_goal)

    def run_goal(self, run: Run) -> None:
        """Follow `run` and drive it: it is the window's current goal."""
        self.run = run
        self._make_current(run)
        self.follow(run)
        run.start()
        self.refresh_runs()
        return run

    def _on_command_return_pressed(self) -> None:
        text = self.command.text().strip()
        self.command.clear()
        if not text:
            return
        if not text.startswith("/goal"):
            self.chat_task = asyncio.ensure_future(chat_turn(self, text))
            return
        goal_command(self, text[len("/goal"):].strip())

    def _on_session_run(self, run: Run) -> None:
        self._current = run  # the session made it: it holds it already
        self.follow(run)
        self.refresh_runs()
