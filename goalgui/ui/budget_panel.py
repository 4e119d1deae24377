"""The budget panel: share of each budget used over time, against the 75% nudge and the 100% stop.

Numbers arrive with every batch; they go into bounded buffers, and a timer
redraws at most five times a second with one setData per curve. Markers show
where the nudge fired and where the run paused and resumed. Progress bars give
the figures; a budget that is not set shows what was spent.
"""

from __future__ import annotations

from collections import deque
from typing import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QGridLayout, QLabel, QProgressBar, QVBoxLayout, QWidget

from ..engine import events as ev
from ..engine.record import RunRecord

BUDGETS = ("tokens", "turns", "goals", "time")
COLOURS = {"tokens": "#2980b9", "turns": "#8e44ad", "goals": "#27ae60", "time": "#d35400"}
CAPACITY = 20_000  # points per budget; older points are dropped
REDRAW_MS = 200


class BudgetHistory:
    """Bounded (seconds since start, share used) series per budget, plus event markers."""

    def __init__(self, capacity: int = CAPACITY):
        self.series = {name: (deque(maxlen=capacity), deque(maxlen=capacity)) for name in BUDGETS}
        self.nudges: list[tuple[float, str]] = []
        self.pauses: list[float] = []
        self.resumes: list[float] = []
        self.dirty = False

    def clear(self) -> None:
        self.__init__(self.series["tokens"][0].maxlen)

    def sample(self, record: RunRecord, batch: Sequence[ev.Event]) -> None:
        """After `record` has applied `batch`: one point per budget that is set, and the markers."""
        if not batch or not record.started_at:
            return
        start = record.started_at
        for e in batch:
            if type(e) is ev.BudgetNudged:
                self.nudges.append((e.ts - start, e.budget))
            elif type(e) is ev.RunStateChanged:
                if e.state == "paused":
                    self.pauses.append(e.ts - start)
                elif e.state == "active" and e.seq > 2:
                    self.resumes.append(e.ts - start)
        now = batch[-1].ts
        for name, (used, limit) in record.usage(now).items():
            xs, ys = self.series[name]
            xs.append(now - start)
            ys.append(used / limit if limit else 0.0)
        self.dirty = True

    def data(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        xs, ys = self.series[name]
        return np.fromiter(xs, float, len(xs)), np.fromiter(ys, float, len(ys))


class BudgetPanel(QWidget):
    """Plots and progress bars of one run's budgets."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.history = BudgetHistory()
        self.record: RunRecord | None = None
        self.plot = pg.PlotWidget()
        self.plot.setBackground(None)
        self.plot.setLabel("left", "share of budget used")
        self.plot.setLabel("bottom", "seconds since start")
        self.plot.setYRange(0, 1.15, padding=0)
        self.plot.enableAutoRange(axis="y", enable=False)
        self.plot.getAxis("bottom").enableAutoSIPrefix(False)
        self.plot.addLegend(offset=(-10, -40))
        self.plot.setClipToView(True)
        self.plot.setDownsampling(auto=True, mode="peak")
        self.plot.addItem(pg.InfiniteLine(0.75, angle=0, pen=pg.mkPen("#7f8c8d", style=Qt.PenStyle.DashLine),
                                          label="75% nudge", labelOpts={"position": 0.97, "anchors": [(1, 1), (1, 1)]}))
        self.plot.addItem(pg.InfiniteLine(1.0, angle=0, pen=pg.mkPen("#c0392b", width=2),
                                          label="100% stop", labelOpts={"position": 0.97, "anchors": [(1, 1), (1, 1)]}))
        self.curves = {name: self.plot.plot([], [], pen=pg.mkPen(COLOURS[name], width=2), name=name)
                       for name in BUDGETS}
        self.nudge_marks = pg.ScatterPlotItem(symbol="t", size=12, brush=pg.mkBrush("#f39c12"))
        self.plot.addItem(self.nudge_marks)
        self._event_lines: list[pg.InfiniteLine] = []
        self.bars: dict[str, QProgressBar] = {}
        grid = QGridLayout()
        for row, name in enumerate(BUDGETS):
            bar = QProgressBar()
            bar.setRange(0, 1000)
            bar.setTextVisible(True)
            grid.addWidget(QLabel(name), row, 0)
            grid.addWidget(bar, row, 1)
            self.bars[name] = bar
        layout = QVBoxLayout(self)
        layout.addWidget(self.plot, 1)
        layout.addLayout(grid)
        self._timer = QTimer(self)
        self._timer.setInterval(REDRAW_MS)
        self._timer.timeout.connect(self._on_timer_timeout)
        self._timer.start()

    def show_record(self, record: RunRecord) -> None:
        """Follow another run (the caller keeps `record` up to date and calls `on_batch`)."""
        self.record = record
        self.history.clear()
        self.redraw()

    def on_batch(self, batch: Sequence[ev.Event]) -> None:
        if self.record is not None:
            self.history.sample(self.record, batch)

    def _on_timer_timeout(self) -> None:
        if self.history.dirty:
            self.redraw()

    def redraw(self) -> None:
        """One setData per curve, the markers, and the figures."""
        h = self.history
        h.dirty = False
        for name, curve in self.curves.items():
            curve.setData(*h.data(name))
        spots = []
        for x, name in h.nudges:
            xs, ys = h.data(name)
            y = float(np.interp(x, xs, ys)) if len(xs) else 0.75
            spots.append({"pos": (x, y), "data": name})
        self.nudge_marks.setData(spots)
        for line in self._event_lines:
            self.plot.removeItem(line)
        self._event_lines = []
        for x in h.pauses:
            self._event_lines.append(self._mark(x, "#c0392b", "paused"))
        for x in h.resumes:
            self._event_lines.append(self._mark(x, "#27ae60", "resumed"))
        self._update_bars()

    def _mark(self, x: float, colour: str, label: str) -> pg.InfiniteLine:
        line = pg.InfiniteLine(x, angle=90, pen=pg.mkPen(colour, style=Qt.PenStyle.DotLine), label=label,
                               labelOpts={"position": 0.95, "color": colour})
        self.plot.addItem(line)
        return line

    def _update_bars(self) -> None:
        if self.record is None:
            return
        rec = self.record
        m = rec.metrics
        usage = rec.usage(rec.updated_at)
        spent = {"tokens": f"{m.tokens:,} tokens", "turns": f"{m.turns} turns", "goals": f"{m.goals_created} goals",
                 "time": f"{rec.active_seconds(rec.updated_at):.0f} s"}
        for name, bar in self.bars.items():
            if name in usage:
                used, limit = usage[name]
                bar.setValue(int(min(1.0, used / limit) * 1000))
                bar.setFormat(f"{spent[name]} of {limit:,.0f}" if name != "time" else f"{spent[name]} of {limit:,.0f} s")
            else:  # no budget set: show what was spent
                bar.setValue(0)
                bar.setFormat(f"{spent[name]} (no limit)")
