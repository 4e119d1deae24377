"""The window's one current goal (seed 001, "Creation and Replacement"), the model new work uses,
and asking before closing on a working run. A mixin of `MainWindow`."""

from __future__ import annotations

from PySide6.QtWidgets import QMessageBox

from ..engine.run import Run
from ..terminal import shown


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

