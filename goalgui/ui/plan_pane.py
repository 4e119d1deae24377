"""The cursor's plan beside the tree: each task numbered, the cursor on the active one, its status,
evidence and escalation stage. Hidden for strategies that have no plan."""

from __future__ import annotations

from PySide6.QtWidgets import QListWidget, QListWidgetItem, QWidget

from ..engine.record import SETTLED, RunRecord
from ..terminal import shown
from .tree_model import STATUS_MARK


def _tip(*parts: str) -> str:
    return "\n".join(shown(p, lines=True) for p in parts if p)


MAX_HEIGHT = 170


class PlanPane(QListWidget):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWordWrap(True)
        self.setToolTip("The plan: the cursor (▶) walks it forward, one task at a time")
        self.hide()

    def show_record(self, record: RunRecord | None) -> None:
        """The plan of a run held as a record (live, or a moment of a journaled one)."""
        root = record.goals.get(record.root_id or "") if record is not None else None
        if record is None or record.strategy != "cursor" or root is None:
            self.hide()
            return
        tasks = record.tasks()
        rows = [(t.text, t.status.value, _tip(f"status: {t.status.value}", t.note and f"notes: {t.note}",
                                              t.result and f"result: {t.result[:600]}")) for t in tasks]
        active = record.active_task()
        self._fill(rows, active[0] - 1 if active else None)

    def show_rows(self, strategy: str, rows: list[tuple]) -> None:
        """The plan of a journaled run, from the journal's goals projection (the root's children)."""
        if strategy != "cursor":
            self.hide()
            return
        texts = [(row[2], row[3], f"status: {row[3]}") for row in rows]
        self._fill(texts, next((i for i, row in enumerate(rows) if row[3] not in {s.value for s in SETTLED}), None))

    def _fill(self, rows: list[tuple[str, str, str]], active: int | None) -> None:
        self.clear()
        for i, (text, status, tip) in enumerate(rows):
            mark = "▶" if i == active else STATUS_MARK.get(status, "?")
            item = QListWidgetItem(f"{mark} {i + 1}. {shown(text)}  ({status})")
            item.setToolTip(tip)
            self.addItem(item)
        if rows:  # as tall as its tasks (a plan has 2 to 6), not a fixed block of blank rows
            rows_height = sum(self.sizeHintForRow(i) for i in range(self.count()))
            self.setFixedHeight(min(MAX_HEIGHT, rows_height + 2 * self.frameWidth() + 6))
        self.setVisible(bool(rows))
