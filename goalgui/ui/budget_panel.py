"""The budget panel: share of each budget used over time, against the 75% nudge and the 100% stop,
and the tokens spent by purpose as a stacked view.

Use is drawn in steps, as it happens: flat while the run waits (for the operator, a rate limit), a
drop where a limit was raised, never a slope between two samples that suggests spending or a refund.
A share past the top of the chart is clipped there and marked with its value; pauses, blocks,
resumes and raised limits are marked with labels placed so they do not cover each other, the legend
or the stop line; the legend lists only the budgets that are set.

The panel is fed the run's totals after each committed batch (`RunRecord.snapshot()`
live, the journal's series for a finished run: the same dicts) and the marks of
what the batch did (nudges, pauses, resumes). They go into bounded buffers, and a
timer redraws at most five times a second with one setData per curve. A budget
that is not set shows what was spent.
"""

from __future__ import annotations

from collections import deque

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QGridLayout, QLabel, QProgressBar, QTabWidget, QVBoxLayout, QWidget

BUDGETS = ("tokens", "turns", "goals", "time")
COLOURS = {"tokens": "#2980b9", "turns": "#8e44ad", "goals": "#27ae60", "time": "#d35400"}
# what each budget's share is made of in a snapshot: (spent, limit)
_SHARE = {"tokens": ("tokens", "tokens"), "turns": ("turns", "turns"), "goals": ("goals", "max_goals"),
          "time": ("active", "seconds")}
PURPOSE_COLOURS = ("#2980b9", "#27ae60", "#f39c12", "#8e44ad", "#c0392b", "#16a085", "#7f8c8d", "#d35400")
TOP = 1.25  # the chart's top: room above the stop line
CLIP = 1.2  # a share past the top is drawn here, marked with its value
# vertical marks: colour and label; labels sit low in the chart, staggered, away from the legend
EVENT_MARKS = {"paused": ("#c0392b", "paused"), "blocked": ("#7b241c", "blocked"), "resumed": ("#27ae60", "resumed"),
               "limits": ("#2471a3", "limit changed")}
BARS_IN_ONE_ROW = 620  # px of panel width the four bars need side by side
SHORT = 300  # px of panel height below which the axis titles give their room to the plot
CAPACITY = 20_000  # points kept per series; when full, every other point is dropped and the step doubles
REDRAW_MS = 200


class BudgetHistory:
    """Bounded series of snapshots: (seconds since start, share used) per budget set, cumulative
    tokens per purpose, and the marks. Past CAPACITY points it thins itself evenly (every other
    point, then keeps one in two of the new ones), so a long run keeps its whole shape in bounded
    memory."""

    def __init__(self, capacity: int = CAPACITY):
        self.capacity = capacity
        self.series = {name: (deque(), deque()) for name in BUDGETS}
        self.purpose_t: list[float] = []
        self.purposes: dict[str, list[int]] = {}
        self.nudges: list[tuple[float, str]] = []
        self.events: dict[str, list[float]] = {kind: [] for kind in EVENT_MARKS}
        self.start: float | None = None
        self.latest: dict = {}
        self.stride = 1  # keep one snapshot in `stride`
        self._skipped = 0
        self.dirty = False

    def clear(self) -> None:
        self.__init__(self.capacity)

    def add(self, snapshot: dict, marks=(), start: float | None = None) -> None:
        """One batch: the run's totals after it and what it did. `start`: when the run began."""
        if self.start is None:
            self.start = start if start is not None else snapshot.get("ts", 0.0)
        start = self.start
        for kind, ts, detail in marks:
            if kind == "nudge":
                self.nudges.append((ts - start, detail))
            elif kind in self.events:
                self.events[kind].append(ts - start)
        self.latest = snapshot
        self.dirty = True
        if "ts" not in snapshot:
            return
        self._skipped += 1
        if self._skipped < self.stride:
            return
        self._skipped = 0
        x = snapshot["ts"] - start
        limits = snapshot.get("limits", {})
        for name, (spent_key, limit_key) in _SHARE.items():
            limit = limits.get(limit_key)
            if limit:
                xs, ys = self.series[name]
                xs.append(x)
                ys.append(snapshot.get(spent_key, 0) / limit)
        purpose = snapshot.get("purpose", {})
        n = len(self.purpose_t)
        self.purpose_t.append(x)
        for name in purpose:
            if name not in self.purposes:
                self.purposes[name] = [0] * n
        for name, values in self.purposes.items():
            values.append(purpose.get(name, 0))
        if len(self.purpose_t) >= self.capacity:
            self._thin()

    def _thin(self) -> None:
        """Full: drop every other point of every series, and from now keep one in twice as many."""
        for name, (xs, ys) in self.series.items():
            keep_x, keep_y = list(xs)[::2], list(ys)[::2]
            self.series[name] = (deque(keep_x), deque(keep_y))
        self.purpose_t = self.purpose_t[::2]
        for name in self.purposes:
            self.purposes[name] = self.purposes[name][::2]
        self.stride *= 2

    @property
    def pauses(self) -> list[float]:
        return self.events["paused"]

    @property
    def resumes(self) -> list[float]:
        return self.events["resumed"]

    def data(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        xs, ys = self.series[name]
        return np.fromiter(xs, float, len(xs)), np.fromiter(ys, float, len(ys))

    def stacked(self) -> tuple[np.ndarray, list[tuple[str, np.ndarray]]]:
        """x and, per purpose (largest first), the top of its band in the stack."""
        x = np.asarray(self.purpose_t, float)
        order = sorted(self.purposes, key=lambda p: -self.purposes[p][-1] if self.purposes[p] else 0)
        top = np.zeros(len(x))
        bands = []
        for name in order:
            top = top + np.asarray(self.purposes[name], float)
            bands.append((name, top))
        return x, bands


class BudgetPanel(QWidget):
    """Plots and progress bars of one run's budgets."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.history = BudgetHistory()
        self.plot = pg.PlotWidget()
        self.plot.setBackground(None)
        self.plot.setLabel("left", "share of budget used")
        self.plot.setLabel("bottom", "seconds since start")
        self.plot.setYRange(0, TOP, padding=0)  # room above the stop line for the legend
        self.plot.enableAutoRange(axis="y", enable=False)
        self.plot.getAxis("bottom").enableAutoSIPrefix(False)
        self.plot.addLegend(offset=(4, 2), colCount=4)
        self.plot.setClipToView(True)
        self.plot.setDownsampling(auto=True, mode="peak")
        self.nudge_line = pg.InfiniteLine(0.75, angle=0, pen=pg.mkPen("#7f8c8d", style=Qt.PenStyle.DashLine),
                                          label="75% nudge", labelOpts={"position": 0.97, "anchors": [(1, 1), (1, 1)]})
        self.plot.addItem(self.nudge_line)
        self.stop_line = pg.InfiniteLine(1.0, angle=0, pen=pg.mkPen("#c0392b", width=2), label="100% stop",
                                         labelOpts={"position": 0.97, "anchors": [(1, 1), (1, 1)], "color": "#c0392b"})
        self.plot.addItem(self.stop_line)
        # each sample holds until the next: steps (a raise is a drop, a wait is flat)
        self.curves = {name: self.plot.plot([], [], pen=pg.mkPen(COLOURS[name], width=2), stepMode="right")
                       for name in BUDGETS}
        self.legend = self.plot.plotItem.legend
        self._in_legend: set[str] = set()
        self.nudge_marks = pg.ScatterPlotItem(symbol="t", size=12, brush=pg.mkBrush("#f39c12"))
        self.plot.addItem(self.nudge_marks)
        self.overflow_marks = pg.ScatterPlotItem(symbol="t1", size=11)  # past the top: an arrow up
        self.plot.addItem(self.overflow_marks)
        self.overflow_labels: dict[str, pg.TextItem] = {}
        self._event_lines: list[pg.InfiniteLine] = []
        self._marks_drawn: tuple = ()
        self.live_clock = None  # while a run is live: a clock, so the last step reaches "now"
        self.purpose_plot = pg.PlotWidget()
        self.purpose_plot.setBackground(None)
        self.purpose_plot.setLabel("left", "tokens")
        self.purpose_plot.setLabel("bottom", "seconds since start")
        self.purpose_plot.getAxis("bottom").enableAutoSIPrefix(False)
        self.purpose_plot.addLegend(offset=(4, 2), colCount=3)
        self.purpose_plot.setClipToView(True)
        self.purpose_plot.setDownsampling(auto=True, mode="peak")
        self.purpose_curves: dict[str, pg.PlotDataItem] = {}  # the top edge of each purpose's band
        self._floor = self.purpose_plot.plot([], [], pen=None)
        self.views = QTabWidget()
        self.views.setDocumentMode(True)
        self.views.addTab(self.plot, "Budgets")
        self.views.addTab(self.purpose_plot, "Tokens by purpose")
        self.views.currentChanged.connect(lambda _i: self.redraw())
        self.bars: dict[str, QProgressBar] = {}
        grid = QGridLayout()  # one row where it fits (the plot keeps the height), two in a narrow panel
        grid.setHorizontalSpacing(4)
        self._bar_labels = {}
        for name in BUDGETS:
            bar = QProgressBar()
            bar.setRange(0, 1000)
            bar.setTextVisible(True)
            self.bars[name] = bar
            self._bar_labels[name] = QLabel(name)
        self.grid = grid
        self._bar_columns = 0
        self._place_bars(4)
        self.plot.setMinimumHeight(120)
        self.purpose_plot.setMinimumHeight(120)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.views, 1)
        layout.addLayout(grid)
        self._timer = QTimer(self)
        self._timer.setInterval(REDRAW_MS)
        self._timer.timeout.connect(self._on_timer_timeout)
        self._timer.start()

    def _place_bars(self, per_row: int) -> None:
        if per_row == self._bar_columns:
            return
        self._bar_columns = per_row
        for i, name in enumerate(BUDGETS):
            row, column = divmod(i, per_row)
            self.grid.addWidget(self._bar_labels[name], row, 2 * column)
            self.grid.addWidget(self.bars[name], row, 2 * column + 1)
        for column in range(8):
            self.grid.setColumnStretch(column, 1 if column % 2 and column < 2 * per_row else 0)

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        """A narrow panel puts the bars two by two; a short one drops the axis titles for the plot."""
        super().resizeEvent(event)
        self._place_bars(4 if event.size().width() >= BARS_IN_ONE_ROW else 2)
        short = event.size().height() < SHORT
        for plot, left in ((self.plot, "share of budget used"), (self.purpose_plot, "tokens")):
            plot.setLabel("left", "" if short else left)
            plot.setLabel("bottom", "" if short else "seconds since start")

    def restyle(self, palette) -> None:
        """Background, axes, legend and labels in the palette's colours (light or dark theme), applied
        when the theme changes, not only at start."""
        from PySide6.QtGui import QPalette

        text = palette.color(QPalette.ColorRole.WindowText)
        base = palette.color(QPalette.ColorRole.Base)
        for plot in (self.plot, self.purpose_plot):
            plot.setBackground(base)
            for name in ("left", "bottom"):
                axis = plot.getAxis(name)
                axis.setPen(pg.mkPen(text))
                axis.setTextPen(pg.mkPen(text))
            legend = plot.plotItem.legend
            if legend is not None:
                legend.setLabelTextColor(text)
                for _sample, label in legend.items:  # the ones listed already take the colour too
                    label.setText(label.text, color=text)
        self.nudge_line.label.setColor(text)

    def reset(self, start: float | None = None) -> None:
        """Show another run (or moment); `start` is when it began. Following a live run sets
        `live_clock` again after this."""
        self.live_clock = None
        self.history.clear()
        self.history.start = start
        for curve in self.purpose_curves.values():
            self.purpose_plot.removeItem(curve.band)
            self.purpose_plot.removeItem(curve)
        self.purpose_curves.clear()
        self.redraw()

    def add(self, snapshot: dict, marks=()) -> None:
        self.history.add(snapshot, marks)

    def load_series(self, series, start: float | None = None) -> None:
        """A journaled run's series (`Journal.series`): drawn at once."""
        self.reset(start)
        for _seq, data in series:
            self.history.add(data, data.get("marks", ()))
        self.redraw()

    def _on_timer_timeout(self) -> None:
        """Redraw what arrived; while a run is live, also the last step reaching now (a wait shows)."""
        live = self.live_clock is not None and self.live_clock() is not None
        if (self.history.dirty or live) and self.isVisible():
            self.redraw()

    def redraw(self) -> None:
        """One setData per curve, the markers, and the figures."""
        h = self.history
        h.dirty = False
        now = None
        if self.live_clock is not None and h.start is not None:
            clock = self.live_clock()
            now = None if clock is None else clock - h.start
        limits = h.latest.get("limits", {})
        overflow = []
        for name, curve in self.curves.items():
            xs, ys = h.data(name)
            is_set = bool(limits.get(_SHARE[name][1]))  # a budget cleared since: its line stops where it was
            if len(xs) and is_set and now is not None and now > xs[-1]:  # the last value holds until now
                xs, ys = np.append(xs, now), np.append(ys, ys[-1])
            over = ys > CLIP
            if over.any():
                overflow.extend({"pos": (x, CLIP), "brush": COLOURS[name], "pen": COLOURS[name], "data": name}
                                for x in xs[over & ~np.roll(over, 1)])  # where each overflow began
                ys = np.minimum(ys, CLIP)
            curve.setData(xs, ys)
            self._show_overflow(name, xs, h.data(name)[1] if is_set else ys[:0])
            self._legend(name, len(xs) > 0 and is_set)
        self.overflow_marks.setData(overflow)
        spots = []
        for x, name in h.nudges:
            xs, ys = h.data(name)
            # the share the nudge saw: the batch that carried it is the first sample at or after it
            y = float(ys[min(len(ys) - 1, np.searchsorted(xs, x, side="left"))]) if len(xs) else 0.75
            spots.append({"pos": (x, min(y, CLIP)), "data": name})
        self.nudge_marks.setData(spots)
        drawn = tuple(len(v) for v in h.events.values())
        if self._marks_drawn != drawn:
            for line in self._event_lines:
                self.plot.removeItem(line)
            marks = sorted((x, kind) for kind, xs in h.events.items() for x in xs)
            self._event_lines = [self._mark(x, kind, i) for i, (x, kind) in enumerate(marks)]
            self._marks_drawn = drawn
        if self.views.currentWidget() is self.purpose_plot:  # the hidden view is drawn when it is shown
            self._redraw_purposes()
        self._update_bars()

    def _legend(self, name: str, shown: bool) -> None:
        """Only budgets that are set are listed."""
        if shown and name not in self._in_legend:
            self.legend.addItem(self.curves[name], name)
            self._in_legend.add(name)
        elif not shown and name in self._in_legend:
            self.legend.removeItem(self.curves[name])
            self._in_legend.discard(name)

    def _show_overflow(self, name: str, xs: np.ndarray, ys: np.ndarray) -> None:
        """The share past the top, in words, at the clipped line's end (e.g. "tokens 180%")."""
        label = self.overflow_labels.get(name)
        if len(ys) and ys[-1] > CLIP:
            if label is None:
                label = pg.TextItem(color=COLOURS[name], anchor=(1, 1))
                self.plot.addItem(label)
                self.overflow_labels[name] = label
            label.setText(f"{name} {ys[-1]:.0%}")
            label.setPos(xs[-1], CLIP)
            label.show()
        elif label is not None:
            label.hide()

    def _redraw_purposes(self) -> None:
        x, bands = self.history.stacked()
        self._floor.setData(x, np.zeros(len(x)))
        below = self._floor
        for i, (name, top) in enumerate(bands):
            curve = self.purpose_curves.get(name)
            colour = PURPOSE_COLOURS[len(self.purpose_curves) % len(PURPOSE_COLOURS)]
            if curve is None:
                curve = self.purpose_plot.plot([], [], pen=pg.mkPen(colour, width=1), name=name, stepMode="right")
                self.purpose_curves[name] = curve
                fill = pg.FillBetweenItem(curve, below, brush=pg.mkBrush(colour + "90"))
                curve.band = fill
                self.purpose_plot.addItem(fill)
            curve.setData(x, top)
            below = curve

    def _mark(self, x: float, kind: str, i: int) -> pg.InfiniteLine:
        """A vertical line; its label low in the chart, on one of three heights in turn, so that a pause
        and the resume after it, or marks close together, do not print over each other."""
        colour, label = EVENT_MARKS[kind]
        line = pg.InfiniteLine(x, angle=90, pen=pg.mkPen(colour, style=Qt.PenStyle.DotLine), label=label,
                               labelOpts={"position": 0.06 + 0.09 * (i % 3), "color": colour,
                                          "anchors": [(0, 0.5), (0, 0.5)]})
        self.plot.addItem(line)
        return line

    def _update_bars(self) -> None:
        s = self.history.latest
        limits = s.get("limits", {})
        for name, bar in self.bars.items():
            spent_key, limit_key = _SHARE[name]
            limit = limits.get(limit_key)
            used = s.get(spent_key, 0)
            unit = " s" if name == "time" else ""
            if limit:  # short enough for a narrow bar; the tooltip says it in words
                value = int(min(1.0, used / limit) * 1000)
                text = f"{used:,.0f} / {limit:,.0f}{unit}"
                tip = f"{name}: {used:,.0f}{unit} used of {limit:,.0f}{unit} ({used / limit:.0%})"
            else:  # no budget set: show what was spent
                value, text = 0, f"{used:,.0f}{unit} / none"
                tip = f"{name}: {used:,.0f}{unit} used; no {name} budget is set"
            if bar.toolTip() != tip:
                bar.setToolTip(tip)
            if bar.value() != value:  # QProgressBar repaints at once on every change
                bar.setValue(value)
            if bar.format() != text:
                bar.setFormat(text)


