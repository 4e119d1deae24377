"""Run controls (pause, resume, cancel, skip, raise budget, permission mode) and the status line.

Every control is a direct call on the run: no model turn, effective at once.
A button is enabled only when its action is legal in the run's state.
"""

from __future__ import annotations

import re
import time
from typing import Callable

from PySide6.QtCore import Signal
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QInputDialog,
    QLabel,
    QMessageBox,
    QPushButton,
    QWidget,
)

from ..engine.lifecycle import InputError, RunState
from ..engine.permissions import PERMISSION_MODES
from ..engine.record import SETTLED
from .budget_fields import BudgetEdit
from .plain import plain_label



def modeline(record, waiting: bool = False) -> str:
    """The run's state in one line, like the seeds' modeline: state, goal N/M, tokens, elapsed."""
    if record is None or not record.run_id:
        return "no run"
    return status_line(record.state.value, record.snapshot(), record.stop_reason, waiting)


def status_line(state: str, totals: dict, stop_reason: str | None = None, waiting: bool = False) -> str:
    """The modeline from a run's totals (`RunRecord.snapshot()`, or the journal's latest for a closed run)."""
    limits = totals.get("limits", {})
    tokens = f"{totals.get('tokens', 0):,}" + (f"/{limits['tokens']:,}" if limits.get("tokens") else "")
    parts = [state, f"goal {totals.get('settled', 0)}/{totals.get('goals', 0)} (cap {limits.get('max_goals', '?')})",
             f"tokens {tokens}", f"{totals.get('active', 0):.0f}s"]
    if totals.get("task"):  # the cursor strategy's place in its plan
        parts.insert(1, f"task {totals['task']}")
    if stop_reason and state != RunState.ACTIVE.value:
        parts.append(stop_reason)
    if waiting:
        parts.append("WAITING FOR YOUR CONFIRMATION")
    return "  ·  ".join(parts)


_RETRY = re.compile(r"retry after ([0-9.]+) s")


def now_doing(run, now: float) -> str:
    """What a live run is doing this moment, for the status line: the model call in flight (purpose,
    goal, how long), or the clock time a rate limit said to retry at and how long is left; for a run
    another process drives, which one."""
    if getattr(run, "attached", False):
        return f"  ·  attached: driven by {run.driver}" if run.driver else "  ·  attached"
    if run.calling is not None and run.state is RunState.ACTIVE:
        purpose, goal_id, since = run.calling
        return f"  ·  calling the model: {purpose}{' for ' + goal_id if goal_id else ''} ({max(0.0, now - since):.0f} s)"
    reason = run.record.stop_reason or ""
    found = _RETRY.search(reason) if run.state is RunState.PAUSED and reason.startswith("rate limited") else None
    if found is None:
        return ""
    at = run.record.state_since + float(found.group(1))
    left = at - now
    clock = time.strftime("%H:%M:%S", time.localtime(at))
    return f"  ·  retry at {clock} (in {left:.0f} s)" if left > 0 else f"  ·  the rate limit allowed a retry at {clock}: resume"


class RaiseBudgetDialog(QDialog):
    """Raise, lower or clear the budgets, each shown with what is used; offered on its own and when a
    budget blocked the run, then named at the top and OK reads "Raise and resume". 0 clears an opt-in
    budget. A change that would block the run again at once is refused in the dialog, in one line."""

    def __init__(self, record, parent: QWidget | None = None):
        super().__init__(parent)
        self.record = record
        limits = record.limits
        usage = record.usage()
        self.blocking = record.still_blocking()
        self.setWindowTitle("Raise and resume" if self.blocking else "Raise budget")
        form = QFormLayout(self)
        self.headline = plain_label(f"Blocked: {self.blocking[1]}. Raise it to resume." if self.blocking else
                                    "Change a budget; 0 removes a token, turn or time budget.")
        self.headline.setWordWrap(True)
        form.addRow(self.headline)
        m = record.metrics
        self.goals = BudgetEdit("max_goals", limits.max_goals)
        self.tokens = BudgetEdit("tokens", limits.tokens)
        self.turns = BudgetEdit("turns", limits.turns)
        self.seconds = BudgetEdit("seconds", limits.seconds)
        self.rows = {"goals": self.goals, "tokens": self.tokens, "turns": self.turns, "time": self.seconds}
        used = {"goals": f"{m.goals_created:,}", "tokens": f"{m.tokens:,}", "turns": f"{m.turns:,}",
                "time": f"{usage['time'][0] if 'time' in usage else record.active_seconds():.0f} s"}
        labels = {"goals": "Max goals", "tokens": "Tokens", "turns": "Turns", "time": "Seconds"}
        for name, spin in self.rows.items():
            label = f"{labels[name]} (used {used[name]})"
            if self.blocking and name == self.blocking[0]:
                label = "▶ " + label
                spin.setFocus()
            form.addRow(label, spin)
        self.error = plain_label()
        self.error.setStyleSheet("color: #c0392b")
        self.error.setWordWrap(True)
        form.addRow(self.error)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.ok_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok_button.setText("Raise and resume" if self.blocking else "Apply")
        buttons.accepted.connect(self._on_buttons_accepted)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def changes(self) -> dict:
        """`Run.set_limits` arguments: the values set, and `clear` for opt-in budgets set to 0 (or left
        empty); raises InputError for a value the command would refuse."""
        out: dict = {"max_goals": self.goals.value(), "clear": []}
        for name, spin in (("tokens", self.tokens), ("turns", self.turns), ("seconds", self.seconds)):
            if spin.value():
                out[name] = spin.value()
            else:
                out["clear"].append(name)
        return out

    def problem(self) -> str | None:
        """Why these values cannot be applied (one line), checked as `goalgui resume` checks its flags."""
        try:
            changes = dict(self.changes())
            limits = self.record.limits.merged(changes.pop("clear"), **changes)
        except InputError as exc:
            return str(exc)
        blocking = self.record.still_blocking(limits)
        return f"{blocking[1]}: the run would stop again at once" if blocking else None

    def _on_buttons_accepted(self) -> None:
        problem = self.problem()
        if problem:
            self.error.setText(problem)
            return
        self.accept()


class ControlBar(QWidget):
    """Buttons and the permission mode for the run being watched."""

    error = Signal(str)  # a refused action, in one line

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.run = None
        self.selected_goal: Callable[[], str | None] = lambda: None
        self.pause_button = self._button("Pause", "Ctrl+P", self._on_pause_clicked)
        self.resume_button = self._button("Resume", "Ctrl+R", self._on_resume_clicked)
        self.cancel_button = self._button("Cancel…", "Ctrl+Shift+X", self._on_cancel_clicked)
        self.skip_button = self._button("Skip", "Ctrl+K", self._on_skip_clicked)
        self.raise_button = self._button("Raise budget…", "Ctrl+B", self._on_raise_clicked)
        self.mode = QComboBox()
        self.mode.addItems(PERMISSION_MODES)
        self.mode.setToolTip("Permission mode: ask confirms every split; auto-edit and auto run on; "
                             "plan builds the tree without executing")
        self.mode.currentTextChanged.connect(self._on_mode_current_text_changed)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        for widget in (self.pause_button, self.resume_button, self.skip_button, self.cancel_button,
                       self.raise_button):
            layout.addWidget(widget)
        layout.addStretch(1)
        layout.addWidget(QLabel("Mode"))
        layout.addWidget(self.mode)
        self._confirm_cancel: QMessageBox | None = None
        self.raise_dialog: RaiseBudgetDialog | None = None
        self.refresh()

    def _button(self, text: str, shortcut: str, slot) -> QPushButton:
        button = QPushButton(text)
        button.setShortcut(QKeySequence(shortcut))
        button.setToolTip(f"{text.rstrip('…')} ({shortcut})")
        button.clicked.connect(slot)
        return button

    def bind(self, run, mode: str | None = None) -> None:
        """Steer `run`; with none (a journaled run shown), the Mode box shows that run's `mode`, disabled."""
        self.run = run
        if run is None and mode in PERMISSION_MODES:
            self.mode.blockSignals(True)
            self.mode.setCurrentText(mode)
            self.mode.blockSignals(False)
        self.refresh()

    def refresh(self) -> None:
        """Enable exactly the actions that are legal now."""
        state = self.run.state if self.run is not None else None
        live = self.run is not None and not state.final and not getattr(self.run, "read_only", False)
        self.pause_button.setEnabled(live and state is RunState.ACTIVE)
        # a run a budget blocked resumes only once that budget leaves room: Raise and resume does both
        blocking = self.run.record.still_blocking() if live and state is RunState.BLOCKED else None
        self.resume_button.setEnabled(live and state is not None and state.resumable and blocking is None)
        self.resume_button.setToolTip(f"{blocking[1]}: raise it first (Raise and resume…)" if blocking
                                      else "Resume (Ctrl+R)")
        self.raise_button.setText("Raise and resume…" if blocking else "Raise budget…")
        self.cancel_button.setEnabled(live)
        skippable = live and (self.run.strategy.current_goal_id is not None or self._selected_pending() is not None)
        self.skip_button.setEnabled(bool(skippable))
        self.raise_button.setEnabled(live)
        self.mode.setEnabled(live)
        if self.run is not None and self.mode.currentText() != self.run.record.permission_mode:
            self.mode.blockSignals(True)
            self.mode.setCurrentText(self.run.record.permission_mode)
            self.mode.blockSignals(False)

    def _selected_pending(self) -> str | None:
        goal_id = self.selected_goal()
        if goal_id and self.run is not None:
            goal = self.run.record.goals.get(goal_id)
            if goal is not None and goal.status not in SETTLED:
                return goal_id
        return None

    def _act(self, action: Callable[[], object]) -> None:
        try:
            action()
        except (InputError, RuntimeError) as exc:
            self.error.emit(str(exc))
        self.refresh()

    def _on_pause_clicked(self) -> None:
        self._act(lambda: self.run.pause())

    def _on_resume_clicked(self) -> None:
        """Resume; a run the model blocked first asks what it needs (seed 001): the answer reaches the
        model from the next turn on, as `goalgui resume --message` does. Empty resumes without one."""
        reason = self.run.record.stop_reason or ""
        if self.run.state is RunState.BLOCKED and not reason.startswith("budget:"):
            self.open_message_dialog(reason)
            return
        self._act(self._resume)

    def _resume(self, message: str = "") -> None:
        self.run.resume()
        if message.strip():
            self.run.tell(message)
        self.run.start()

    def open_message_dialog(self, reason: str) -> QInputDialog:
        dialog = QInputDialog(self)
        dialog.setWindowTitle("Resume with a message")
        dialog.setLabelText(f"{reason[:300]}\n\nWhat does the model need? It reads this from the next turn on "
                            "(leave it empty to resume without a message).")
        dialog.setOption(QInputDialog.InputDialogOption.UsePlainTextEditForTextInput)
        dialog.setOkButtonText("Resume")
        dialog.textValueSelected.connect(lambda text: self._act(lambda: self._resume(text)))
        self.message_dialog = dialog
        dialog.open()
        return dialog

    def _on_skip_clicked(self) -> None:
        target = None if self.run.strategy.current_goal_id else self._selected_pending()
        self._act(lambda: self.run.skip(target))

    def _on_cancel_clicked(self) -> None:
        box = QMessageBox(QMessageBox.Icon.Question, "Cancel run",
                          "Cancel this run? Its record is kept, but it cannot be resumed.",
                          QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No, self)
        box.finished.connect(lambda _result: self._act(lambda: self.run.cancel())
                             if box.standardButton(box.clickedButton()) == QMessageBox.StandardButton.Yes else None)
        self._confirm_cancel = box
        box.open()

    def _on_raise_clicked(self) -> None:
        self.open_raise_dialog()

    def open_raise_dialog(self) -> RaiseBudgetDialog:
        """Non-modal; on OK the limits change and a run blocked by a budget resumes in the same step."""
        dialog = RaiseBudgetDialog(self.run.record, self)

        def apply(result: int) -> None:
            if result != QDialog.DialogCode.Accepted:
                return

            def change():
                self.run.set_limits(**dialog.changes())
                reason = self.run.record.stop_reason or ""
                if self.run.state is RunState.BLOCKED and reason.startswith("budget:"):
                    self.run.resume()
                    self.run.start()

            self._act(change)

        dialog.finished.connect(apply)
        self.raise_dialog = dialog
        dialog.open()
        return dialog

    def _on_mode_current_text_changed(self, mode: str) -> None:
        if self.run is not None and mode != self.run.record.permission_mode:
            self._act(lambda: self.run.set_permission_mode(mode))
