"""The task loop's queue beside the goal tree (seed 003): what runs now, what runs next and why, what
ran, and whether the model's priorities order anything at all.

The queue is ordered the way the loop pops it: the running task, then the pending ones by effective
priority and insertion order (never by their text), then what was executed, most recent first. The
"#" column shows the effective priority with the model's own number beside it when the mechanical
adjustment moved it, and the histogram below sets the two side by side: when over half the tasks
share one model priority, the model's numbers order nothing and the adjustment is doing the work.

An update is diffed against what is shown: rows that left are removed, new ones appended, a new
order is one layout change that carries the selection along, and an identical update does nothing,
so a live run can call `set_tasks` after every batch without costing the window a frame.
"""

from __future__ import annotations

import copy
import html
import math
from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QPalette
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QLabel, QTreeView, QVBoxLayout, QWidget

from ..terminal import shown
from .table_model import ColumnsModel, FollowsStyle
from .theme import is_dark
from .tree_model import GOAL_ID_ROLE, STATUS_COLOUR, STATUS_MARK

COLUMNS = ("#", "Task", "Depth", "Creator", "State")
SETTLED = frozenset({"done", "failed", "skipped", "abandoned"})
PRIORITIES = range(1, 10)
CELL = 240  # characters of a text shown in a cell; the tooltip holds more, the rest is in the journal
TIP = 1_500  # characters of a text in a tooltip: a 100 kB "task" must not become a screen-sized tooltip
PAIRS = 12  # duplicate pairs listed in the health line's tooltip
CHART_HEIGHT = 124
MODEL_COLOUR, EFFECTIVE_COLOUR = "#2980b9", "#e67e22"
FLAG_COLOUR = {False: "#c0392b", True: "#ff8a80"}  # light, dark
_DISPLAY = int(Qt.ItemDataRole.DisplayRole)
_TOOLTIP = int(Qt.ItemDataRole.ToolTipRole)
_FOREGROUND = int(Qt.ItemDataRole.ForegroundRole)
_FONT = int(Qt.ItemDataRole.FontRole)
_ALIGNMENT = int(Qt.ItemDataRole.TextAlignmentRole)
_GOAL_ID = int(GOAL_ID_ROLE)
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_CENTRE = int(Qt.AlignmentFlag.AlignCenter)
_STATE_BRUSHES = {state: QBrush(QColor(colour)) for state, colour in STATUS_COLOUR.items()}


@dataclass(frozen=True)
class QueueTask:
    """One task of the loop's queue, as plain data (the strategy's goal facts, or the journal's)."""

    goal_id: str
    text: str  # untrusted model text: pass through goalgui.terminal.shown() before display
    priority: int  # the model's number, 1 = do first .. 9 = do last
    effective: int  # after the mechanical adjustment (what orders the queue)
    seq: int  # insertion order (tie-break)
    depth: int  # task depth (0 = first task)
    creator: str  # the creating task's text ("" for the first task)
    state: str  # "pending", "running", "done", "failed", "skipped", "abandoned"
    iteration: int | None = None  # the iteration that executed it, if executed
    artefact: bool | None = None  # judged an artefact (True) or a description of work (False), once done


def queue_order(tasks: list[QueueTask]) -> list[QueueTask]:
    """Running, then pending by (effective, seq), then executed by iteration (latest first), then the
    settled ones that never ran (skipped by the caps, abandoned) in the queue order they waited in."""
    running = sorted((t for t in tasks if t.state == "running"), key=lambda t: t.seq)
    pending = sorted((t for t in tasks if t.state == "pending"), key=lambda t: (t.effective, t.seq))
    rest = [t for t in tasks if t.state not in ("running", "pending")]
    ran = sorted((t for t in rest if t.iteration is not None), key=lambda t: (-t.iteration, -t.seq))
    never = sorted((t for t in rest if t.iteration is None), key=lambda t: (t.effective, t.seq))
    return running + pending + ran + never


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _rich(lines: list[str]) -> str:
    """Always rich text, escaped: Qt word-wraps a rich tooltip, and a task's '<b>' stays words."""
    body = "\n".join(shown(_clip(line, TIP), lines=True) for line in lines)
    return f"<p style='white-space:pre-wrap'>{html.escape(body)}</p>"


class _Row:
    """A task as shown: its cells worked out once, the tooltip when first asked for."""

    __slots__ = ("task", "is_next", "cells", "_tip")

    def __init__(self, task: QueueTask, is_next: bool):
        self.task, self.is_next, self._tip = task, is_next, None
        t = task
        number = str(t.effective) if t.effective == t.priority else f"{t.effective} ({t.priority})"
        state = "○ next" if is_next else f"{STATUS_MARK.get(t.state, '?')} {shown(t.state)}"
        self.cells = (number, _clip(shown(t.text), CELL), t.depth, _clip(shown(t.creator), CELL) if t.creator
                      else "—", state)

    def same(self, task: QueueTask, is_next: bool) -> bool:
        return self.is_next == is_next and self.task == task

    @property
    def tip(self) -> str:
        if self._tip is None:
            t = self.task
            moved = (f"priority {t.effective} after the adjustment (the model said {t.priority})"
                     if t.effective != t.priority else f"priority {t.priority} (the model's, not moved)")
            judged = {True: "judged: an artefact", False: "judged: a description of work, not the work",
                      None: ""}.get(t.artefact, "")
            self._tip = _rich([t.text, "", f"created by: {t.creator}" if t.creator else "the first task", moved,
                               f"state: {t.state}" + (" (next to run)" if self.is_next else "")
                               + (f", iteration {t.iteration}" if t.iteration is not None else ""),
                               f"depth {t.depth}, inserted {t.seq}", *([judged] if judged else [])])
        return self._tip


class QueueModel(ColumnsModel):
    """The queue as rows, changed by diff: removals and appends as row events, a new order as one
    layout change (persistent indexes, and so the selection, follow their task)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self._rows: list[_Row] = []
        self.grey = QBrush(QColor("#8a8a8a"))  # settled rows; set from the palette by the view
        self.bold = QFont()
        self.bold.setBold(True)

    COLUMNS = COLUMNS

    def shown_rows(self) -> int:
        return len(self._rows)

    def cell(self, shown_row: int, column: int, role: int):
        row = self._rows[shown_row]
        if role == _DISPLAY:
            return row.cells[column]
        if role == _TOOLTIP:
            return row.tip
        if role == _FOREGROUND:
            if column == 4:
                return _STATE_BRUSHES.get(row.task.state)
            return self.grey if row.task.state in SETTLED else None
        if role == _FONT:
            return self.bold if row.is_next else None
        if role == _ALIGNMENT:
            return _RIGHT if column == 0 else _CENTRE if column == 2 else None
        if role == _GOAL_ID:
            return row.task.goal_id
        return None

    def task(self, row: int) -> QueueTask:
        return self._rows[row].task

    def update(self, ordered: list[QueueTask]) -> None:
        """Show these tasks in this order, touching only what differs from what is shown."""
        shown_rows = {r.task.goal_id: r for r in self._rows}
        next_id = next((t.goal_id for t in ordered if t.state == "pending"), None)
        rows, seen = [], set()
        for t in ordered:
            if t.goal_id in seen:  # one row per goal, whatever the caller sent
                continue
            seen.add(t.goal_id)
            old = shown_rows.get(t.goal_id)
            is_next = t.goal_id == next_id
            rows.append(old if old is not None and old.same(t, is_next) else _Row(t, is_next))
        for i in reversed([i for i, r in enumerate(self._rows) if r.task.goal_id not in seen]):  # rare: one by one
            self.beginRemoveRows(QModelIndex(), i, i)
            del self._rows[i]
            self.endRemoveRows()
        fresh = [r for r in rows if r.task.goal_id not in shown_rows]
        if fresh:
            n = len(self._rows)
            self.beginInsertRows(QModelIndex(), n, n + len(fresh) - 1)
            self._rows.extend(fresh)
            self.endInsertRows()
        current = self._rows
        if any(a.task.goal_id != b.task.goal_id for a, b in zip(current, rows)):
            self.layoutAboutToBeChanged.emit()
            where = {r.task.goal_id: i for i, r in enumerate(rows)}
            for index in self.persistentIndexList():
                moved = self.index(where[current[index.row()].task.goal_id], index.column())
                self.changePersistentIndex(index, moved)
            self._rows = rows
            self.layoutChanged.emit()
            return
        changed = [i for i, (a, b) in enumerate(zip(current, rows)) if a is not b]
        self._rows = rows
        if changed:
            self.dataChanged.emit(self.index(changed[0], 0), self.index(changed[-1], len(COLUMNS) - 1))


def _counts(values) -> tuple[int, ...]:
    counts = [0] * len(PRIORITIES)
    for v in values:
        counts[min(9, max(1, int(v))) - 1] += 1  # an out-of-range number is counted at the nearest end
    return tuple(counts)


class PriorityChart(pg.PlotWidget):
    """Bars of how many tasks have each priority, 1 to 9: the model's (filled) and the effective
    ones after the adjustment (thin, outlined), so a spread made by the adjustment shows."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setBackground(None)
        self.setFixedHeight(CHART_HEIGHT)
        item = self.getPlotItem()
        item.setMouseEnabled(False, False)
        item.setMenuEnabled(False)
        item.hideButtons()
        self.setXRange(0.4, 9.6, padding=0)
        self.getAxis("bottom").setTicks([[(p, str(p)) for p in PRIORITIES]])
        self.getAxis("left").setWidth(28)
        self.model_bars = pg.BarGraphItem(x=[], height=[], width=0.72, pen=None,
                                          brush=pg.mkBrush(MODEL_COLOUR + "b0"))
        self.effective_bars = pg.BarGraphItem(x=[], height=[], width=0.28, pen=pg.mkPen(EFFECTIVE_COLOUR, width=1.5),
                                              brush=pg.mkBrush(EFFECTIVE_COLOUR + "40"))
        self.addItem(self.model_bars)
        self.addItem(self.effective_bars)
        self.legend = self.addLegend(offset=(-4, 2), colCount=2, labelTextSize="8pt")
        self.legend.addItem(self.model_bars, "the model's")
        self.legend.addItem(self.effective_bars, "effective")
        self.counts: tuple[tuple[int, ...], tuple[int, ...]] = ((0,) * 9, (0,) * 9)
        self._scale(0)

    def set_counts(self, model: tuple[int, ...], effective: tuple[int, ...]) -> None:
        """New heights; unchanged ones cost nothing."""
        if (model, effective) == self.counts:
            return
        self.counts = (model, effective)
        for bars, counts in ((self.model_bars, model), (self.effective_bars, effective)):
            kept = [(p, n) for p, n in zip(PRIORITIES, counts) if n]  # an empty outline would still draw a line
            bars.setOpts(x=[p for p, _n in kept], height=[n for _p, n in kept])
        self._scale(max(max(model), max(effective)))

    def _scale(self, top: int) -> None:
        """Whole-number ticks, three or four of them, and room above the tallest bar for the legend."""
        step = max(1, math.ceil(top / 3))
        self.getAxis("left").setTickSpacing(step, step)
        self.setYRange(0, max(top, 1) * 1.45, padding=0)

    def restyle(self, palette: QPalette) -> None:
        text, base = palette.color(QPalette.ColorRole.WindowText), palette.color(QPalette.ColorRole.Base)
        self.setBackground(base)
        for name in ("left", "bottom"):
            axis = self.getAxis(name)
            axis.setPen(pg.mkPen(text))
            axis.setTextPen(pg.mkPen(text))
        self.legend.setLabelTextColor(text)
        for _sample, label in self.legend.items:
            label.setText(label.text, color=text)


class QueueView(FollowsStyle, QWidget):
    """The queue table, a health line above it and the priority histogram below."""

    taskChosen = Signal(str)  # noqa: N815 (the goal id of a clicked row; named by the window's API)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.health_line = _label()
        self.health_line.hide()
        self.model = QueueModel(self)
        self.table = QTreeView()
        self.table.setModel(self.model)
        self.table.setRootIsDecorated(False)
        self.table.setUniformRowHeights(True)  # one height for all rows: a long queue lays out in no time
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.setAlternatingRowColors(True)
        self.table.setAllColumnsShowFocus(True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.clicked.connect(self._on_table_clicked)
        header = self.table.header()
        header.setStretchLastSection(False)
        mode = QHeaderView.ResizeMode  # fixed widths from the font: measuring a thousand rows is slow
        for column, how in enumerate((mode.Fixed, mode.Stretch, mode.Fixed, mode.Interactive, mode.Fixed)):
            header.setSectionResizeMode(column, how)
        self.chart = PriorityChart()
        self.chart_note = _label("Seed 003: a model asked for 1-9 puts most tasks on 3 or 5, and the queue becomes "
                                 "first-in-first-out; the effective priority spreads them by depth and by verb")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(3)
        layout.addWidget(self.health_line)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.chart)
        layout.addWidget(self.chart_note)
        self._tasks: tuple[QueueTask, ...] | None = None
        self._health: dict | None = None
        self._health_flagged = self._decorative = False
        self._size_columns()
        self.restyle(self.palette())
        self._show_chart_note((0,) * 9, 0)

    def set_tasks(self, tasks: list[QueueTask], health: dict | None = None) -> None:
        """The queue now, and the run's health figures (`engine.health.health`, or None)."""
        tasks = tuple(tasks)
        if tasks == self._tasks and health == self._health:
            return
        if tasks != self._tasks:
            self._tasks = tasks
            self.model.update(queue_order(list(tasks)))
            model = _counts(t.priority for t in tasks)
            self.chart.set_counts(model, _counts(t.effective for t in tasks))
            self._show_chart_note(model, len(tasks))
        if health != self._health:
            self._health = copy.deepcopy(health)  # a dict the caller changes in place is still news
            self._show_health(self._health)

    def _on_table_clicked(self, index: QModelIndex) -> None:
        self.taskChosen.emit(self.model.task(index.row()).goal_id)

    def _show_chart_note(self, model: tuple[int, ...], n: int) -> None:
        top = max(model)
        self._decorative = n >= 2 and top * 2 > n
        value = model.index(top) + 1
        text = (f"⚠ over half share priority {value}: the model's priorities are decorative" if self._decorative
                else f"the commonest model priority, {value}, holds {top} of {n} tasks" if n else "no tasks yet")
        self.chart_note.setText(text)
        self._colour_flags()

    def _show_health(self, health: dict | None) -> None:
        if not health:
            self.health_line.hide()
            self._health_flagged = False
            return
        parts, k = [], _number(health.get("k"))
        growing = bool(health.get("k_flag")) or (k is not None and k >= 1)
        if k is not None:
            parts.append(f"k {k:.2f}" + (" ≥ 1" if growing else "") + " (created per completed)")
        if "artefact_share" in health:
            share = _number(health.get("artefact_share"))
            parts.append("artefacts " + ("-" if share is None else f"{share:.0%}"))
        duplicates = health.get("duplicates")
        duplicates = duplicates if isinstance(duplicates, list) else []
        if "duplicates" in health:
            parts.append(f"{len(duplicates)} duplicate{'' if len(duplicates) == 1 else 's'} refused")
        flat = bool(health.get("histogram_flag"))
        if flat:
            parts.append("priorities flat")
        self._health_flagged = growing or flat
        self.health_line.setText(("⚠ " if self._health_flagged else "") + (" · ".join(parts) or "no figures yet"))
        self.health_line.setToolTip(_health_tip(duplicates, health.get("nearest_kept"), growing, flat))
        self.health_line.show()
        self._colour_flags()

    def _colour_flags(self) -> None:
        colour = FLAG_COLOUR[is_dark(self.palette())]
        for label, flagged in ((self.health_line, self._health_flagged), (self.chart_note, self._decorative)):
            label.setStyleSheet(f"QLabel {{ color: {colour}; }}" if flagged else "")

    def _size_columns(self) -> None:
        metrics = self.table.fontMetrics()
        header = self.table.header()
        for column, sample in ((0, "9 (9)"), (2, "Depth"), (4, "▶ abandoned")):  # the widest each can be
            header.resizeSection(column, metrics.horizontalAdvance(sample) + 18)
        header.resizeSection(3, metrics.horizontalAdvance("m") * 9)

    def restyle(self, palette: QPalette) -> None:
        """Colours drawn here rather than by the style (the chart, greyed rows, flags), for this palette."""
        text, base = palette.color(QPalette.ColorRole.Text), palette.color(QPalette.ColorRole.Base)
        mixed = ((3 * a + 2 * b) // 5 for a, b in zip(text.getRgb()[:3], base.getRgb()[:3]))  # greyed a little
        self.model.grey = QBrush(QColor(*mixed))
        self.chart.restyle(palette)
        self._colour_flags()
        self.table.viewport().update()


def _label(tip: str = "") -> QLabel:
    label = QLabel()
    label.setTextFormat(Qt.TextFormat.PlainText)  # its text quotes the model's
    label.setWordWrap(True)
    label.setToolTip(tip)
    return label


def _number(value) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _health_tip(duplicates: list, kept, growing: bool, flat: bool) -> str:
    lines = ["k: tasks created per task completed; the loop ends only while k stays below 1"]
    if growing:
        lines.append("k >= 1: the queue grows faster than it is worked off")
    if flat:
        lines.append("over half the created tasks share one model priority: the priorities order nothing")
    for title, pairs in (("refused as duplicates", duplicates), ("kept, nearest to an earlier task", kept)):
        pairs = [p for p in pairs if isinstance(p, dict)] if isinstance(pairs, list) else []
        if not pairs:
            continue
        lines += ["", f"{title}:"]
        for pair in pairs[:PAIRS]:
            similarity = _number(pair.get("similarity"))
            text, match = (_clip(shown(pair.get(key, "")), 160) for key in ("text", "match"))
            score = "" if similarity is None else f" ({similarity:.2f})"
            lines.append(f"  “{text}” ≈ “{match}”{score}")
        if len(pairs) > PAIRS:
            lines.append(f"  … and {len(pairs) - PAIRS} more")
    return _rich(lines)
