"""Two runs side by side in the window: the comparison that goalgui/compare.py makes, shown as a
table of goals.

A line at the top gives each run's totals (state, goals, tokens, model calls, active seconds), how
many goals fall into each kind (matched, changed status, changed result, only in A, only in B) and
the first place where the runs part ways. Below it, one row per aligned goal in tree order, indented
by depth, with the status, tokens, model calls and seconds of the goal in A and in B ("—" where a
run has no such goal). Rows that differ are tinted by kind; matched rows are plain. A filter hides
the matched rows. Double-clicking a row asks the window to show that goal.

The table is one flat model over the comparison's list of rows, so 20,000 goals load at once: cells
are worked out when Qt paints them, and column widths come from the font, not from the rows.
Goal texts come from models and are untrusted: cells are plain text and the tooltips are escaped.
"""

from __future__ import annotations

import html
from bisect import bisect_left

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QPalette
from PySide6.QtWidgets import (QAbstractItemView, QComboBox, QHBoxLayout, QHeaderView, QLabel, QTreeView,
                               QVBoxLayout, QWidget)

from ..compare import CHANGED_RESULT, CHANGED_STATUS, KINDS, MATCHED, ONLY_A, ONLY_B
from ..terminal import shown
from .table_model import ColumnsModel, FollowsStyle
from .theme import is_dark
from .tree_model import GOAL_ID_ROLE

COLUMNS = ("Goal", "Kind", "A status", "A tokens", "A calls", "A s", "B status", "B tokens", "B calls", "B s")
FILTERS = ("all goals", "differences only")
MISSING = "—"
INDENT = "\u2003\u2003"  # two em spaces per level of depth
CELL = 240  # characters of a goal's text in its cell; the tooltip holds more
TIP = 1_500  # characters of a goal's text in its tooltip
TINTS = {  # kind: (light, dark) background; the palette's own text stays readable on either
    CHANGED_STATUS: ("#fde3c6", "#5a3a17"),
    CHANGED_RESULT: ("#fbf1b8", "#4e4516"),
    ONLY_A: ("#f8d4d0", "#5c2824"),
    ONLY_B: ("#d2f0dd", "#1d4a2f"),
}
_DISPLAY = int(Qt.ItemDataRole.DisplayRole)
_TOOLTIP = int(Qt.ItemDataRole.ToolTipRole)
_BACKGROUND = int(Qt.ItemDataRole.BackgroundRole)
_ALIGNMENT = int(Qt.ItemDataRole.TextAlignmentRole)
_GOAL_ID = int(GOAL_ID_ROLE)
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_NUMERIC = frozenset({3, 4, 5, 7, 8, 9})


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _side_cell(side: dict | None, field: str) -> str:
    if side is None:
        return MISSING
    value = side.get(field)
    if field == "status":
        return shown(value)
    if field == "seconds":
        return f"{float(value or 0):,.1f}"
    return f"{int(value or 0):,}"


class CompareModel(ColumnsModel):
    """The comparison's rows, all of them or only those that differ; nothing is computed per row
    until Qt asks for it."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self._rows: list[dict] = []
        self._shown: list[int] = []  # indexes into _rows, in order
        self.differences_only = False
        self.tints: dict[str, QBrush] = {}

    COLUMNS = COLUMNS

    def shown_rows(self) -> int:
        return len(self._shown)

    def cell(self, shown_row: int, column: int, role: int):
        row = self._rows[self._shown[shown_row]]
        if role == _DISPLAY:
            if column == 0:
                return INDENT * int(row["depth"]) + _clip(shown(row["text"]), CELL)
            if column == 1:
                return row["kind"]
            side = row["a"] if column < 6 else row["b"]
            return _side_cell(side, ("status", "tokens", "calls", "seconds")[(column - 2) % 4])
        if role == _BACKGROUND:
            return self.tints.get(row["kind"])
        if role == _ALIGNMENT:
            return _RIGHT if column in _NUMERIC else None
        if role == _TOOLTIP and column == 0:
            text = shown(_clip(str(row["text"]), TIP), lines=True)
            return f"<p style='white-space:pre-wrap'>{html.escape(text)}</p>"  # never read as markup
        if role == _GOAL_ID:
            return self.goal(index.row())[1]
        return None

    def set_rows(self, rows: list[dict]) -> None:
        self.beginResetModel()
        self._rows = rows
        self._shown = self._visible()
        self.endResetModel()

    def set_differences_only(self, on: bool) -> None:
        if on == self.differences_only:
            return
        self.beginResetModel()
        self.differences_only = on
        self._shown = self._visible()
        self.endResetModel()

    def _visible(self) -> list[int]:
        if not self.differences_only:
            return list(range(len(self._rows)))
        return [i for i, r in enumerate(self._rows) if r["kind"] != MATCHED]

    def source_row(self, row: int) -> int:
        """The index in the comparison's rows of the row shown at `row`."""
        return self._shown[row]

    def view_row(self, source: int) -> int | None:
        """Where the comparison's row `source` is shown, or None when the filter hides it."""
        if not self.differences_only:
            return source if 0 <= source < len(self._rows) else None
        at = bisect_left(self._shown, source)
        return at if at < len(self._shown) and self._shown[at] == source else None

    def first_divergence(self) -> int | None:
        """The comparison's first row that is not matched (its source index), or None."""
        return next((i for i, r in enumerate(self._rows) if r["kind"] != MATCHED), None)

    def kind(self, row: int) -> str:
        return self._rows[self._shown[row]]["kind"]

    def goal(self, row: int) -> tuple[str, str]:
        """("a", A's goal id) for the row shown at `row`, or ("b", B's) when A has no such goal."""
        r = self._rows[self._shown[row]]
        return ("a", r["a"]["id"]) if r["a"] is not None else ("b", r["b"]["id"])


class CompareView(FollowsStyle, QWidget):
    """The totals line above, the filter beside it, and the aligned goals below."""

    goalChosen = Signal(str, str)  # noqa: N815 (side "a" or "b", goal id; named by the window's API)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.header = QLabel()
        self.header.setTextFormat(Qt.TextFormat.PlainText)  # it quotes a goal's text
        self.header.setWordWrap(True)
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.filter_box = QComboBox()
        self.filter_box.addItems(FILTERS)
        self.filter_box.setToolTip("Show every goal, or only the goals that differ between the runs")
        self.model = CompareModel(self)
        self.table = QTreeView()
        self.table.setModel(self.model)
        self.table.setRootIsDecorated(False)
        self.table.setItemsExpandable(False)
        self.table.setUniformRowHeights(True)  # one height for all rows: 20,000 lay out in no time
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.setAllColumnsShowFocus(True)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.table.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        top = QHBoxLayout()
        top.addWidget(self.header, 1)
        top.addWidget(self.filter_box, 0, Qt.AlignmentFlag.AlignTop)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(3)
        layout.addLayout(top)
        layout.addWidget(self.table, 1)
        self.filter_box.currentIndexChanged.connect(self._on_filter_changed)
        self.table.doubleClicked.connect(self._on_double_clicked)
        self._data: dict | None = None
        self._size_columns()
        self.restyle(self.palette())
        self.header.setText("No comparison yet")

    def show_comparison(self, data: dict) -> None:
        """Show this comparison (`goalgui.compare.comparison`'s dict), then select its first divergence."""
        self._data = data
        self.header.setText(_header_text(data))
        self.model.set_rows(list(data.get("rows") or []))
        self._select(self.model.first_divergence())

    def first_divergence_row(self) -> int | None:
        """The row, as shown now (after the filter), of the first goal that differs; None if none does."""
        first = self.model.first_divergence()
        return None if first is None else self.model.view_row(first)

    def set_differences_only(self, on: bool) -> None:
        """The same as choosing the filter's entry."""
        self.filter_box.setCurrentIndex(1 if on else 0)

    def _on_filter_changed(self, index: int) -> None:
        rows = self.table.selectionModel().selectedRows()
        selected = self.model.source_row(rows[0].row()) if rows else None
        self.model.set_differences_only(index == 1)
        kept = None if selected is None else self.model.view_row(selected)
        self._select(selected if kept is not None else self.model.first_divergence())

    def _select(self, source: int | None) -> None:
        row = None if source is None else self.model.view_row(source)
        if row is None:
            self.table.clearSelection()
            return
        index = self.model.index(row, 0)
        self.table.setCurrentIndex(index)
        self.table.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)

    def _on_double_clicked(self, index: QModelIndex) -> None:
        if index.isValid():
            self.goalChosen.emit(*self.model.goal(index.row()))

    def _size_columns(self) -> None:
        metrics = self.table.fontMetrics()
        header = self.table.header()
        header.resizeSection(1, metrics.horizontalAdvance("changed status") + 18)
        for column, sample in ((2, "abandoned"), (3, "999,999"), (4, "9,999"), (5, "9,999.9")):
            width = max(metrics.horizontalAdvance(sample), metrics.horizontalAdvance(COLUMNS[column])) + 18
            header.resizeSection(column, width)
            header.resizeSection(column + 4, width)

    def restyle(self, palette: QPalette) -> None:
        """The kinds' tints for this palette: pale on a light one, deep on a dark one."""
        dark = is_dark(palette)
        self.model.tints = {kind: QBrush(QColor(pair[dark])) for kind, pair in TINTS.items()}
        self.table.viewport().update()


def _header_text(data: dict) -> str:
    def totals(name: str, t: dict) -> str:
        return (f"{name}: {shown(t['run_id'])} ({shown(t['state'])}) · {int(t['goals']):,} goals · "
                f"{int(t['tokens']):,} tokens · {int(t['calls']):,} model calls · "
                f"{float(t['seconds']):,.1f} s active")

    counts = data.get("counts") or {}
    lines = [totals("A", data["a"]), totals("B", data["b"]),
             "Goals: " + ", ".join(f"{int(counts.get(k, 0)):,} {k}" for k in KINDS)]
    first = data.get("first_divergence")
    lines.append("The trees are the same" if first is None else
                 f"First divergence ({first['kind']}): {_clip(shown(first['text']), 200)}")
    return "\n".join(lines)
