"""The New Goal dialog: seed 001's write-goal fields, strategy, model, optional budgets and mode."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from ..engine.lifecycle import InputError, Limits, validate_objective
from ..engine.permissions import PERMISSION_MODES
from ..engine.strategies import OPTIONS, STRATEGIES, WHEN, check_strategy, limits_for, strategy_options
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
            index = self.strategy.count() - 1
            self.strategy.setItemData(index, f"{name}: {WHEN.get(name, '')}", 3)  # tooltip role
            try:
                check_strategy(name)
            except InputError as exc:  # shown, but refused, with the reason
                self.strategy.model().item(index).setEnabled(False)
                self.strategy.setItemData(index, str(exc), 3)
        self.when = plain_label()  # when the chosen strategy fits, from the seeds' own advice
        self.when.setWordWrap(True)
        # the strategy's own options (the command's --max-iterations, --max-queue, --max-parallel)
        self.options: dict[str, QSpinBox] = {}
        options_row = QHBoxLayout()
        for strategy, names in OPTIONS.items():
            for name, (default, lo, hi) in names.items():
                box = QSpinBox()
                box.setRange(lo, hi)
                box.setValue(default)
                box.setPrefix(name.replace("max_", "max ").replace("_", " ") + ": ")
                box.setProperty("strategy", strategy)
                self.options[name] = box
                options_row.addWidget(box)
        options_row.addStretch(1)
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
        form.addRow("", self.when)
        self.options_label = QLabel("Strategy options")
        form.addRow(self.options_label, options_row)
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
        self._defaults = self._limit_values()
        self.strategy.currentTextChanged.connect(self._on_strategy_changed)
        self._on_strategy_changed(self.strategy.currentText())

    def showEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        self.error.clear()  # opened again: last time's refusal is not this time's
        super().showEvent(event)

    def _limit_values(self) -> dict:
        return {"max_depth": self.max_depth.text(), "max_goals": self.max_goals.text(), "tokens": self.tokens.text()}

    def _on_strategy_changed(self, name: str) -> None:
        """Say when it fits, show its options, and take its default limits where the fields still hold
        the last strategy's defaults (what the person typed stays)."""
        self.when.setText(WHEN.get(name, ""))
        shown = False
        for box in self.options.values():
            box.setVisible(box.property("strategy") == name)
            shown |= box.property("strategy") == name
        self.options_label.setVisible(shown)
        defaults = limits_for(name)
        fresh = {"max_depth": str(defaults.max_depth), "max_goals": str(defaults.max_goals),
                 "tokens": "" if defaults.tokens is None else str(defaults.tokens)}
        for field, edit in (("max_depth", self.max_depth), ("max_goals", self.max_goals), ("tokens", self.tokens)):
            if edit.text() == self._defaults.get(field):
                edit.setText(fresh[field])
        self._defaults = fresh

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
        strategy = self.strategy.currentText()
        check_strategy(strategy)
        options = strategy_options(strategy, **{n: b.value() for n, b in self.options.items()
                                                if b.property("strategy") == strategy})
        return {"objective": objective, "criteria": criteria, "strategy": strategy,
                "model": self.model.currentText().strip(), "limits": limits, "mode": self.mode.currentText(),
                "options": options}

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
