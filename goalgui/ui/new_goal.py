"""The New Goal dialog: seed 001's write-goal fields, strategy, model, optional budgets and mode."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QWidget,
)

from ..engine.lifecycle import InputError, Limits, validate_objective
from ..engine.permissions import PERMISSION_MODES
from ..engine.strategies import STRATEGIES, check_strategy
from ..engine.session import AUTHOR_FIELDS
from .budget_fields import BudgetEdit
from .plain import plain_label

LABELS = {"end_state": "End state", "proof": "Proof", "boundaries": "Boundaries", "loop": "Loop",
          "stop_rule": "Stop rule"}


class NewGoalDialog(QDialog):
    """Collects a goal; `accepted_goal` carries (objective, criteria, strategy, model, limits, mode)."""

    draft_requested = Signal(str, str)  # intent, model spec
    accepted_goal = Signal(dict)

    def __init__(self, models: list[str], default_model: str, default_mode: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("New goal")
        self.setMinimumWidth(620)
        form = QFormLayout(self)
        self.intent = QLineEdit()
        self.intent.setPlaceholderText("One line: what do you want done?")
        self.draft_button = QPushButton("Draft with the model")
        row = QHBoxLayout()
        row.addWidget(self.intent, 1)
        row.addWidget(self.draft_button)
        form.addRow("Intent", row)
        self.fields: dict[str, QPlainTextEdit] = {}
        for name in AUTHOR_FIELDS:
            edit = QPlainTextEdit()
            edit.setFixedHeight(52 if name != "end_state" else 70)
            self.fields[name] = edit
            form.addRow(LABELS[name], edit)
        self.strategy = QComboBox()
        for name in STRATEGIES:
            self.strategy.addItem(name)
            try:
                check_strategy(name)
            except InputError as exc:  # shown, but refused, with the reason
                index = self.strategy.count() - 1
                self.strategy.model().item(index).setEnabled(False)
                self.strategy.setItemData(index, str(exc), 3)  # tooltip role
        self.model = QComboBox()
        self.model.setEditable(True)
        self.model.addItems(models)
        self.model.setCurrentText(default_model)
        self.mode = QComboBox()
        self.mode.addItems(PERMISSION_MODES)
        self.mode.setCurrentText(default_mode)
        self.max_depth = BudgetEdit("max_depth", 3)
        self.max_goals = BudgetEdit("max_goals", 25)
        self.tokens = BudgetEdit("tokens")
        self.turns = BudgetEdit("turns")
        self.seconds = BudgetEdit("seconds")
        form.addRow("Strategy", self.strategy)
        form.addRow("Model", self.model)
        form.addRow("Permission mode", self.mode)
        form.addRow("Max depth", self.max_depth)
        form.addRow("Max goals", self.max_goals)
        form.addRow("Token budget", self.tokens)
        form.addRow("Turn budget", self.turns)
        form.addRow("Time budget (s)", self.seconds)
        self.error = plain_label()
        self.error.setStyleSheet("color: #c0392b")
        form.addRow(self.error)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Start")
        buttons.accepted.connect(self._on_buttons_accepted)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self.draft_button.clicked.connect(self._on_draft_clicked)

    def showEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        self.error.clear()  # opened again: last time's refusal is not this time's
        super().showEvent(event)

    def fill(self, draft: dict) -> None:
        for name, edit in self.fields.items():
            edit.setPlainText(draft.get(name, ""))

    def goal(self) -> dict:
        """The goal as the engine takes it; raises InputError with one line."""
        objective = validate_objective(self.fields["end_state"].toPlainText() or self.intent.text())
        criteria = "\n".join(f"{LABELS[n]}: {self.fields[n].toPlainText().strip()}"
                             for n in AUTHOR_FIELDS[1:] if self.fields[n].toPlainText().strip())
        limits = Limits(max_depth=self.max_depth.value(), max_goals=self.max_goals.value(),
                        tokens=self.tokens.value() or None, turns=self.turns.value() or None,
                        seconds=self.seconds.value() or None).validated()
        check_strategy(self.strategy.currentText())
        return {"objective": objective, "criteria": criteria, "strategy": self.strategy.currentText(),
                "model": self.model.currentText().strip(), "limits": limits, "mode": self.mode.currentText()}

    def _on_buttons_accepted(self) -> None:
        try:
            goal = self.goal()
        except InputError as exc:
            self.error.setText(str(exc))
            return
        self.accepted_goal.emit(goal)
        self.accept()

    def _on_draft_clicked(self) -> None:
        if self.intent.text().strip():
            self.draft_button.setEnabled(False)
            self.draft_requested.emit(self.intent.text().strip(), self.model.currentText().strip())
