"""Budget fields that take what the command takes and change nothing silently.

A spin box turns 99999 typed into a 0..86400 box into 9999 and drops the sign of -5; a budget typed
here is read as `goalgui run` reads its flags: a whole number (a time also as 90s, 10m or 2h), and
empty, 0 or "none" is no budget where a budget is optional. What the command refuses is refused
with the command's own one-line message when the dialog is accepted.
"""

from __future__ import annotations

from PySide6.QtWidgets import QLineEdit, QWidget

from ..engine.lifecycle import InputError, parse_duration

LABELS = {"max_depth": "max depth", "max_goals": "max goals", "tokens": "token budget", "turns": "turn budget",
          "seconds": "time budget"}


class BudgetEdit(QLineEdit):
    """One budget. `value()` is the number (0: none), or raises InputError in one line."""

    def __init__(self, name: str, value: float | None = 0, parent: QWidget | None = None):
        super().__init__(parent)
        self.name = name
        self.optional = name in ("tokens", "turns", "seconds")
        self.setPlaceholderText(("none · " if self.optional else "") + ("e.g. 90s, 10m, 2h" if name == "seconds"
                                                                       else "a whole number"))
        self.setValue(value)

    def setValue(self, value: float | None) -> None:  # noqa: N802 (QSpinBox's name, kept for callers)
        if not value and self.optional:
            self.setText("")
        else:
            self.setText(f"{value:g}" if isinstance(value, float) else str(value))

    def value(self) -> int | float:
        text = self.text().strip()
        if self.optional and text.lower() in ("", "0", "none"):
            return 0
        if self.name == "seconds":
            return parse_duration(text)
        try:
            return int(text.replace(",", "").replace("_", ""))
        except ValueError:
            raise InputError(f"bad {LABELS[self.name]} {text!r}: it must be a whole number") from None
