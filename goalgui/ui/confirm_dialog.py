"""Confirmation dialogs for what the model proposes, and the confirmer that awaits them.

The dialog is non-modal (shown, never `exec()` inside a coroutine): the engine
awaits a future that the dialog's buttons resolve, and the window's controls
stay usable while it waits. A goal the model
wants to start shows its objective, completion criteria and budgets, all
editable, and the permission mode to run it under; proposed sub-goals show as
a checklist to keep, edit or drop. A waiting dialog alerts the window and the
task bar, and a tray notification appears where a tray exists. An optional
timeout declines it. Pausing or cancelling the run aborts it.
"""

from __future__ import annotations

import asyncio

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QPushButton,
    QSystemTrayIcon,
    QVBoxLayout,
    QWidget,
)

from ..engine.confirm import ConfirmationAnswer, ConfirmationRequest, Outcome
from ..engine.lifecycle import InputError, Limits
from ..engine.permissions import PERMISSION_MODES
from .budget_fields import BudgetEdit
from .plain import plain_label


DRAFT_MS = 400  # edits are journaled this long after the last keystroke (and at once on a stop)


class ConfirmDialog(QDialog):
    """One question: approve (with edits and a mode) or decline."""

    answered = Signal(object)  # ConfirmationAnswer

    def __init__(self, request: ConfirmationRequest, parent: QWidget | None = None, timeout_s: float | None = None):
        super().__init__(parent)
        self.request = request
        self._answer: ConfirmationAnswer | None = None
        self.setMinimumSize(640, 360)
        p = request.proposal
        layout = QVBoxLayout(self)
        form = QFormLayout()
        layout.addLayout(form)
        self.objective = self.criteria = None
        self.budgets: dict[str, BudgetEdit] = {}
        self.subgoals: QListWidget | None = None
        self.reason: QLineEdit | None = None
        if request.kind == "tool":  # Allow once, Allow this tool for the run, Deny (with a reason)
            self.setWindowTitle("The model wants to use a tool")
            layout.insertWidget(0, plain_label(f"{p.get('tool', '')}: a {p.get('effect', '')} action"))
            preview = QPlainTextEdit(str(p.get("preview", "")))
            preview.setReadOnly(True)
            preview.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
            preview.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
            form.addRow("It would run", preview)
            self.reason = QLineEdit()
            self.reason.setPlaceholderText("optional: why not (the model reads it)")
            form.addRow("If you deny it", self.reason)
        elif request.kind in ("subgoals", "plan"):
            self.setWindowTitle("Approve the plan" if request.kind == "plan" else "Approve sub-goals")
            layout.insertWidget(0, plain_label(("The plan for:\n" if request.kind == "plan" else
                                                "The model wants to split:\n") + str(p["parent"])))
            self.subgoals = QListWidget()
            self.subgoals.setWordWrap(True)
            for text in p["subgoals"]:
                item = QListWidgetItem(text)
                item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsEditable)
                item.setCheckState(Qt.CheckState.Checked)
                self.subgoals.addItem(item)
            add = QPushButton("Add a sub-goal" if request.kind == "subgoals" else "Add a task")
            add.clicked.connect(lambda: self.add_subgoal())
            self.add_button = add
            form.addRow("Keep, edit (double-click) or drop", self.subgoals)
            form.addRow("", add)
        else:
            self.setWindowTitle("The model wants to start a goal")
            self.objective = QPlainTextEdit(p.get("objective", ""))
            self.criteria = QLineEdit(p.get("criteria", ""))
            form.addRow("Objective", self.objective)
            form.addRow("Completion criteria", self.criteria)
            limits = p.get("limits") or {}
            for name, label in (("tokens", "Token budget"), ("turns", "Turn budget"), ("seconds", "Time budget")):
                self.budgets[name] = BudgetEdit(name, limits.get(name))
                form.addRow(label, self.budgets[name])
        self.mode = QComboBox()
        self.mode.addItems(PERMISSION_MODES)
        self.mode.setCurrentText(request.mode)
        # approving sets the permission mode of the run from then on (the new goal's, for a proposed goal)
        self.mode.setToolTip("Approving sets the run's permission mode to this, from now on")
        form.addRow("Run the goal in mode" if request.kind == "create_goal" else "This run's mode from now on",
                    self.mode)
        buttons = QDialogButtonBox()
        tool = request.kind == "tool"
        self.approve_button = buttons.addButton("Allow once" if tool else "Approve",
                                                QDialogButtonBox.ButtonRole.AcceptRole)
        self.always_button = None
        if tool:
            self.always_button = buttons.addButton(f"Allow {p.get('tool', 'it')} for the rest of the run",
                                                   QDialogButtonBox.ButtonRole.ActionRole)
            self.always_button.clicked.connect(self._on_always_button_clicked)
        # what declining does, on the button: a split declined is the goal done directly, a plan declined
        # is the objective as one task, a proposed goal declined is not started
        decline = {"tool": "Deny", "subgoals": "Don't split: do it directly", "plan": "No plan: one task"}
        self.decline_button = buttons.addButton(decline.get(request.kind, "Decline"),
                                                QDialogButtonBox.ButtonRole.RejectRole)
        buttons.accepted.connect(self._on_buttons_accepted)
        buttons.rejected.connect(self._on_buttons_rejected)
        self.error = plain_label()
        self.error.setStyleSheet("color: #c0392b")
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        self.timer: QTimer | None = None
        if timeout_s:
            self.timer = QTimer(self)
            self.timer.setSingleShot(True)
            self.timer.timeout.connect(self._on_timer_timeout)
            self.timer.start(int(timeout_s * 1000))

    def draft(self) -> dict:
        """The dialog's fields as they stand (journaled as the person edits, shown again after a stop)."""
        out: dict = {"mode": self.mode.currentText()}
        if self.subgoals is not None:
            out["items"] = [[self.subgoals.item(i).text(), self.subgoals.item(i).checkState() == Qt.CheckState.Checked]
                            for i in range(self.subgoals.count())]
        if self.objective is not None:
            out["objective"] = self.objective.toPlainText()
            out["criteria"] = self.criteria.text()
            out["budgets"] = {name: edit.text() for name, edit in self.budgets.items()}
        if self.reason is not None:
            out["reason"] = self.reason.text()
        return out

    def restore(self, draft: dict) -> None:
        """Put back what was being edited when the run stopped (a draft from `draft()`)."""
        if not isinstance(draft, dict):
            return
        if draft.get("mode") in PERMISSION_MODES:
            self.mode.setCurrentText(draft["mode"])
        items = draft.get("items")
        if self.subgoals is not None and isinstance(items, list):
            self.subgoals.clear()
            for entry in items:
                if isinstance(entry, list) and len(entry) == 2:
                    item = self.add_subgoal(edit=False)
                    item.setText(str(entry[0]))
                    item.setCheckState(Qt.CheckState.Checked if entry[1] else Qt.CheckState.Unchecked)
        if self.objective is not None:
            if isinstance(draft.get("objective"), str):
                self.objective.setPlainText(draft["objective"])
            if isinstance(draft.get("criteria"), str):
                self.criteria.setText(draft["criteria"])
            for name, text in (draft.get("budgets") or {}).items():
                if name in self.budgets and isinstance(text, str):
                    self.budgets[name].setText(text)
        if self.reason is not None and isinstance(draft.get("reason"), str):
            self.reason.setText(draft["reason"])

    def watch_edits(self, on_change) -> None:
        """Call `on_change()` whenever a field changes (the confirmer debounces and journals)."""
        self.mode.currentTextChanged.connect(lambda _t: on_change())
        if self.subgoals is not None:
            self.subgoals.itemChanged.connect(lambda _i: on_change())
            self.subgoals.model().rowsInserted.connect(lambda *_a: on_change())
        if self.objective is not None:
            self.objective.textChanged.connect(on_change)
            self.criteria.textChanged.connect(lambda _t: on_change())
            for edit in self.budgets.values():
                edit.textChanged.connect(lambda _t: on_change())
        if self.reason is not None:
            self.reason.textChanged.connect(lambda _t: on_change())

    def add_subgoal(self, edit: bool = True) -> QListWidgetItem:
        """A new row, checked and open for typing; left empty it is dropped."""
        item = QListWidgetItem("")
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsEditable)
        item.setCheckState(Qt.CheckState.Checked)
        self.subgoals.addItem(item)
        if edit:
            self.subgoals.setCurrentItem(item)
            self.subgoals.editItem(item)
        return item

    def answer(self) -> ConfirmationAnswer:
        """What the dialog's fields say now, as an approval."""
        edits: dict = {}
        if self.request.kind == "tool":
            pass
        elif self.subgoals is not None:
            kept = [self.subgoals.item(i).text().strip() for i in range(self.subgoals.count())
                    if self.subgoals.item(i).checkState() == Qt.CheckState.Checked]
            if kept != list(self.request.proposal["subgoals"]):
                edits["subgoals"] = [k for k in kept if k]
        else:
            objective = self.objective.toPlainText().strip()
            if objective != self.request.proposal.get("objective"):
                edits["objective"] = objective
            if self.criteria.text() != self.request.proposal.get("criteria", ""):
                edits["criteria"] = self.criteria.text()
            limits = {name: spin.value() or None for name, spin in self.budgets.items()}
            before = self.request.proposal.get("limits") or {}
            if any((limits[n] or None) != (before.get(n) or None) for n in limits):
                edits["limits"] = limits
        return ConfirmationAnswer.approve(self.mode.currentText(), **edits)

    def _record(self, answer: ConfirmationAnswer) -> None:
        """The first answer counts; the engine's future gets it once."""
        if self._answer is None:
            self._answer = answer
            if self.timer is not None:
                self.timer.stop()
            self.answered.emit(answer)

    def _finish(self, answer: ConfirmationAnswer) -> None:
        self._record(answer)
        approved = answer.outcome is Outcome.APPROVED
        self.done(QDialog.DialogCode.Accepted if approved else QDialog.DialogCode.Rejected)

    def _on_buttons_accepted(self) -> None:
        try:
            answer = self.answer()
            if "limits" in answer.edits:  # checked as the command checks its budget flags
                Limits(**{k: v for k, v in answer.edits["limits"].items()}).validated()
        except InputError as exc:
            self.error.setText(str(exc))
            return
        self._finish(answer)

    def _on_buttons_rejected(self) -> None:
        reason = self.reason.text().strip() if self.reason is not None else ""
        self._finish(ConfirmationAnswer(Outcome.DECLINED, None, {"reason": reason} if reason else {}))

    def _on_always_button_clicked(self) -> None:
        self._finish(ConfirmationAnswer.approve(self.mode.currentText(), always=True))

    def _on_timer_timeout(self) -> None:
        self._finish(ConfirmationAnswer.decline())

    def abort(self) -> None:
        """Nobody will answer: the run was paused or cancelled."""
        self._finish(ConfirmationAnswer.abort())

    def closeEvent(self, event) -> None:  # the window's close button declines
        self._record(ConfirmationAnswer.decline())
        super().closeEvent(event)


class DialogConfirmer:
    """The engine's confirmer in the window: opens a dialog and awaits its answer."""

    def __init__(self, window: QWidget, timeout_s: float | None = None, tray: QSystemTrayIcon | None = None):
        self.window = window
        self.timeout_s = timeout_s
        self.tray = tray
        self.open_dialogs: list[ConfirmDialog] = []

    async def __call__(self, request: ConfirmationRequest) -> ConfirmationAnswer:
        dialog = ConfirmDialog(request, self.window, self.timeout_s)
        if request.draft:
            dialog.restore(request.draft)  # what was typed before the run stopped
        saved = {"draft": dialog.draft()}

        def save_draft() -> None:
            now = dialog.draft()
            if request.save_draft is not None and now != saved["draft"]:
                saved["draft"] = now
                request.save_draft(now)

        debounce = QTimer(dialog)
        debounce.setSingleShot(True)
        debounce.setInterval(DRAFT_MS)
        debounce.timeout.connect(save_draft)
        dialog.watch_edits(debounce.start)
        future: asyncio.Future = asyncio.get_running_loop().create_future()
        dialog.answered.connect(lambda answer: future.done() or future.set_result(answer))
        self.open_dialogs.append(dialog)
        # show(), not exec() (which would nest an event loop inside this coroutine) and not open()
        # (window-modal: it would lock Pause and Cancel while the question waits)
        dialog.setWindowModality(Qt.WindowModality.NonModal)
        # someone typing in the window (the chat bar) keeps the keyboard: their words must not land in
        # the dialog's fields; the dialog shows, flashes, and is clicked when they are ready
        typing = isinstance(QApplication.focusWidget(), (QLineEdit, QPlainTextEdit)) \
            and QApplication.focusWidget().window() is self.window
        dialog.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating, typing)
        dialog.show()
        if not typing:
            dialog.raise_()
            dialog.activateWindow()
        self._alert(request)
        try:
            return await future
        except asyncio.CancelledError:
            save_draft()  # paused or cancelled mid-edit: the last keystrokes are kept too
            dialog.abort()
            raise
        finally:
            self.open_dialogs.remove(dialog)
            dialog.deleteLater()

    def _alert(self, request: ConfirmationRequest) -> None:
        """Impossible to miss: the window and task bar flash, and the tray says so where there is one."""
        QApplication.alert(self.window)
        if self.tray is not None and QSystemTrayIcon.isSystemTrayAvailable() and self.tray.isVisible():
            what = {"create_goal": "start a goal", "tool": f"use {request.proposal.get('tool', 'a tool')}"}.get(
                request.kind, "split a goal")
            self.tray.showMessage("goalgui is waiting", f"The model wants to {what}: approve or decline.")
