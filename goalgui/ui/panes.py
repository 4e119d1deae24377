"""The detail pane for one goal and the Runs view of the journal."""

from __future__ import annotations

import html
import time
from typing import Sequence

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from ..engine import events as ev
from ..engine.health import health_line
from ..engine.record import Goal

REPLY_SHOWN = 4000


class GoalDetail(QTextBrowser):
    """Text, status, note, result, verdict, attempts, the context given, and every model call."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setOpenExternalLinks(False)
        self.setPlaceholderText("Select a goal to see what it was asked and what it answered.")

    def show_goal(self, goal: Goal | None, events: Sequence[ev.Event] = (), summary: str = "") -> None:
        """`events`: the goal's own events from the journal (its model and tool calls are shown).
        `summary`: the run's wrap-up, shown with the root goal, and alone when no goal is selected."""
        e = html.escape
        wrap_up = (f"<h3>Run summary</h3><pre style=\"white-space: pre-wrap\">{e(summary)}</pre>"
                   if summary else "")
        if goal is None:
            if wrap_up:
                self.setHtml(wrap_up)
            else:
                self.clear()
            return
        rows = [
            f"<h3>{e(goal.id)}: {e(goal.text)}</h3>",
            f"<p><b>Status</b> {e(goal.status.value)} &nbsp; <b>Depth</b> {goal.depth} &nbsp; "
            f"<b>Attempts</b> {goal.attempts}{_in_progress(goal)} &nbsp; <b>Tokens</b> {goal.tokens:,}</p>",
        ]
        if goal.parent_id is None and wrap_up:
            rows.append(wrap_up)
        if goal.note:
            rows.append(f"<p><b>Note</b> {e(goal.note)}</p>")
        if goal.verdict:
            rows.append(f"<p><b>Verification</b> {e(goal.verdict)}</p>")
        if goal.result:
            rows.append(f"<p><b>Result</b></p><pre style=\"white-space: pre-wrap\">{e(goal.result)}</pre>")
        for call in (e for e in events if type(e) is ev.ModelCalled):
            state = " (cancelled)" if call.cancelled else (f" ({e(call.error)})" if call.error else "")
            rows.append(f"<hr><p><b>{e(call.purpose)}</b>{state}: {call.tokens_in:,} in, {call.tokens_out:,} out"
                        f"{' (estimated)' if call.estimated else ''}, {call.latency * 1000:.0f} ms"
                        f"{', ' + e(call.model) if call.model else ''}</p>")
            user = next((m.get("content", "") for m in call.messages if m.get("role") == "user"), "")
            if user:
                rows.append(f"<p><i>context given</i></p><pre style=\"white-space: pre-wrap\">{e(user[:REPLY_SHOWN])}</pre>")
            rows.append(f"<p><i>reply</i></p><pre style=\"white-space: pre-wrap\">{e(call.reply[:REPLY_SHOWN])}</pre>")
            for tc in call.tool_calls or []:
                rows.append(f"<p>tool call <b>{e(str(tc.get('name')))}</b> {e(str(tc.get('arguments')))}</p>")
        for tool in (e for e in events if type(e) is ev.ToolCalled):
            rows.append(f"<p>tool <b>{e(tool.name)}</b> {e(str(tool.arguments))} → {e(tool.result[:500])}</p>")
        self.setHtml("".join(rows))


def _in_progress(goal: Goal) -> str:
    """Attempts count judged executions: a result being checked is one more, on its way."""
    if goal.status.value != "running" or goal.children:  # a split goal runs through its sub-goals
        return ""
    if goal.result and not goal.verdict:
        return " (+1 being verified)"
    return " (+1 running)"


class _NumberItem(QTableWidgetItem):
    def __lt__(self, other: QTableWidgetItem) -> bool:
        mine, theirs = self.data(Qt.ItemDataRole.UserRole), other.data(Qt.ItemDataRole.UserRole)
        if mine is None or theirs is None:
            return super().__lt__(other)
        return mine < theirs


def _health_text(figures: dict) -> str:
    """A run's health line for its row; "" when none was journaled or the figures are not whole (a
    journal written by another version)."""
    try:
        return health_line(figures) if figures else ""
    except (KeyError, TypeError, ValueError):
        return ""


class RunsView(QWidget):
    """Journaled runs with search; opening one shows it read-only."""

    run_opened = Signal(str)
    compare_requested = Signal(str, str)  # two runs selected, Compare pressed: (A, B) in the table's order
    COLUMNS = ("Run", "Objective", "Strategy", "State", "Stop reason", "Tokens", "Goals", "Started", "Duration",
               "Health")

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search objectives, states, reasons…")
        self.open_button = QPushButton("Open")
        self.compare_button = QPushButton("Compare")
        self.compare_button.setToolTip("Select two runs (Ctrl+click) to compare their trees")
        self.compare_button.setEnabled(False)
        self.refresh_button = QPushButton("Refresh")
        self.table = QTableWidget(0, len(self.COLUMNS))
        self.table.setHorizontalHeaderLabels(self.COLUMNS)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableWidget.SelectionMode.ExtendedSelection)  # two, to compare
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().hide()
        self.table.setWordWrap(False)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(self.COLUMNS.index("Started"), Qt.SortOrder.DescendingOrder)  # newest first
        self._shown: dict[str, dict] = {}  # the runs on screen, by id
        top = QHBoxLayout()
        top.addWidget(self.search, 1)
        top.addWidget(self.refresh_button)
        top.addWidget(self.compare_button)
        top.addWidget(self.open_button)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.table)
        self.search.textChanged.connect(self._on_search_text_changed)
        self.open_button.clicked.connect(self._on_open_clicked)
        self.compare_button.clicked.connect(self._on_compare_clicked)
        self.table.itemSelectionChanged.connect(self._on_selection_changed)
        self.table.cellDoubleClicked.connect(lambda row, _col: self._open_row(row))

    def show_runs(self, runs: list[dict]) -> None:
        """The runs, in the order the header says (newest first until another column is clicked);
        the selected run stays selected. A refresh that changes nothing costs nothing, and one where
        only some runs changed (a live run's tokens) rewrites only their cells."""
        by_id = {r["run_id"]: r for r in runs}
        if by_id.keys() == self._shown.keys() and len(by_id) == len(runs):
            changed = [r for r in runs if r != self._shown[r["run_id"]]]
            if changed:
                self.table.setSortingEnabled(False)
                rows = {self.table.item(row, 0).text(): row for row in range(self.table.rowCount())}
                for r in changed:
                    self._fill_row(rows[r["run_id"]], r)
                self.table.setSortingEnabled(True)
                self._on_search_text_changed(self.search.text())
            self._shown = by_id
            return
        selected = self.selected_run()
        header = self.table.horizontalHeader()
        # sized to contents once after filling: per cell, Qt re-measures the column (seconds for 100 runs)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.setUpdatesEnabled(False)
        self.table.setSortingEnabled(False)
        self.table.setRowCount(len(runs))
        for row, r in enumerate(runs):
            self._fill_row(row, r)
        self.table.setSortingEnabled(True)
        self.table.resizeColumnsToContents()
        health = self.COLUMNS.index("Health")  # a long line: all of it is on hover
        header.resizeSection(health, min(header.sectionSize(health), 360))
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.table.setUpdatesEnabled(True)
        self._shown = by_id
        self._on_search_text_changed(self.search.text())
        if selected is not None:
            for row in range(self.table.rowCount()):
                if self.table.item(row, 0).text() == selected:
                    self.table.selectRow(row)
                    break

    def _fill_row(self, row: int, r: dict) -> None:
        started_column = self.COLUMNS.index("Started")
        duration = max(0.0, (r["updated_at"] or 0) - (r["started_at"] or 0))
        figures = r.get("health") or {}
        state = f"{r['state']} (driven by {r['driver']})" if r.get("driver") else r["state"]
        values = (r["run_id"], r["objective"], r["strategy"], state, r["stop_reason"] or "",
                  r["tokens"], r["goals"], r["started_at"] or 0.0, duration, _health_text(figures))
        for column, value in enumerate(values):
            if column == started_column:  # shown as a date, sorted as the time it is
                item = _NumberItem(time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(value)))
                item.setData(Qt.ItemDataRole.UserRole, value)
            elif isinstance(value, (int, float)):  # shown with separators, sorted as a number
                item = _NumberItem(f"{value:,.0f}" + (" s" if column == 8 else ""))
                item.setData(Qt.ItemDataRole.UserRole, value)
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            else:
                item = QTableWidgetItem(value)
                if column == len(values) - 1 and value:  # the health figures: all of them on hover
                    item.setToolTip(value)
                    if figures.get("k_flag") or figures.get("histogram_flag"):
                        item.setForeground(QColor("#c0392b"))
            self.table.setItem(row, column, item)

    def selected_runs(self) -> list[str]:
        """The selected runs' ids, in the table's order."""
        rows = sorted(r.row() for r in self.table.selectionModel().selectedRows())
        return [self.table.item(r, 0).text() for r in rows if self.table.item(r, 0) is not None]

    def _on_compare_clicked(self) -> None:
        runs = self.selected_runs()
        if len(runs) == 2:
            self.compare_requested.emit(runs[1], runs[0])  # newest first on screen: the older is A

    def selected_run(self) -> str | None:
        rows = self.table.selectionModel().selectedRows()
        item = self.table.item(rows[0].row(), 0) if rows else None
        return item.text() if item is not None else None

    def _on_search_text_changed(self, text: str) -> None:
        needle = text.strip().lower()
        for row in range(self.table.rowCount()):
            haystack = " ".join((self.table.item(row, c).text() if self.table.item(row, c) else "")
                                for c in range(self.table.columnCount())).lower()
            self.table.setRowHidden(row, bool(needle) and needle not in haystack)

    def _on_selection_changed(self) -> None:
        """Compare wants two runs; Open says Attach for a run another process drives (it follows it)."""
        selected = self.selected_runs()
        self.compare_button.setEnabled(len(selected) == 2)
        elsewhere = len(selected) == 1 and bool((self._shown.get(selected[0]) or {}).get("driver"))
        self.open_button.setText("Attach" if elsewhere else "Open")
        self.open_button.setToolTip("Follow it live and steer it through the journal" if elsewhere else "")

    def _on_open_clicked(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        if rows:
            self._open_row(rows[0].row())

    def _open_row(self, row: int) -> None:
        item = self.table.item(row, 0)
        if item is not None:
            self.run_opened.emit(item.text())
