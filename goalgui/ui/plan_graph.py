"""A plan (the seed "plan" strategy's DAG of steps) drawn as a graph: boxes in columns, left to right,
an arrow from each dependency to the step that waits on it, every version of the plan one pick away.

A step's column is 1 + the deepest of its dependencies' (longest-path layering), so a column holds
steps that can run side by side once the columns before it are done. Within a column the steps are
ordered by the mean position of their dependencies, then of their dependents, then of their
dependencies again, which removes most crossings of a plan of ten steps. An arrow that skips columns
is routed through the gaps between the boxes it passes, never under one. Fed every batch, the widget
compares the data first: the same plan does nothing, new states only recolour, and only a new shape
(steps, texts, tools, dependencies) is laid out again. Measured in benchmarks/plan_graph_bench.py.
"""

from __future__ import annotations

import html
import math
from bisect import bisect_left
from dataclasses import dataclass

from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import (QColor, QFont, QFontInfo, QFontMetricsF, QPainter, QPainterPath, QPen, QPolygonF,
                           QTextLayout, QTransform)
from PySide6.QtWidgets import QComboBox, QGraphicsItem, QGraphicsScene, QGraphicsView, QVBoxLayout, QWidget

from .. import terminal
from .theme import is_dark
from .tree_model import STATUS_COLOUR, STATUS_MARK


@dataclass(frozen=True)
class GraphStep:
    """One step of one version of the plan, as the graph shows it."""

    step: int  # the step's id in the plan (1-based; dependencies point only backwards)
    text: str  # the step's goal: model text, passed through terminal.shown() before display
    tool: str | None
    dependencies: tuple[int, ...]
    state: str  # "pending", "running", "done", "failed", "skipped", "abandoned"
    goal_id: str = ""  # the goal in the run's tree this step is (for selection)


# narrow boxes, three lines of text: a plan of five columns fits a 500 px pane at the smallest readable scale
BOX_W, COL_GAP, ROW_GAP, MARGIN, PAD, RADIUS, HEAD, LINES = 108.0, 26.0, 16.0, 8.0, 5.0, 7.0, 7.0, 3
MAX_SCALE = 1.25  # a two-step plan is not blown up to fill the pane
READABLE_PX = 9.0  # the step text is never drawn smaller than this: a big plan scrolls instead
PULSE_MS, PULSE_PERIOD_MS = 100, 1200
# fills (light, dark): pale in light, deep in dark, each under text of the theme's contrast
FILLS = {"pending": ("#eceff1", "#3a3f44"), "running": ("#d6eaf8", "#1b4f72"), "done": ("#d5f5e3", "#1d5e3a"),
         "failed": ("#f5b7b1", "#78281f"), "skipped": ("#e8daef", "#4a2a5e"), "abandoned": ("#fdebd0", "#6e4b12")}
BORDERS_DARK = {"pending": "#95a5a6", "running": "#5dade2", "done": "#52be80", "failed": "#ec7063",
                "skipped": "#af7ac5", "abandoned": "#e59866"}  # the tree's colours, lifted to show on dark


def links(steps: list[GraphStep]) -> list[list[int]]:
    """Per step, the indexes of its dependencies, once each. One on a missing step, on itself or on a
    later one (a bad plan) is left out; a repeated id names its first step."""
    first: dict[int, int] = {}
    for i, s in enumerate(steps):
        first.setdefault(s.step, i)
    return [list(dict.fromkeys(first[d] for d in s.dependencies if d in first and d < s.step)) for s in steps]


def layers(steps: list[GraphStep], deps: list[list[int]] | None = None) -> list[int]:
    """Each step's column (0 for a step with no dependency): 1 + the deepest of its dependencies."""
    deps = links(steps) if deps is None else deps
    out = [0] * len(steps)
    for i in sorted(range(len(steps)), key=lambda i: steps[i].step):  # dependencies before their steps
        out[i] = 1 + max(out[d] for d in deps[i]) if deps[i] else 0
    return out


def order(steps: list[GraphStep], layer: list[int], deps: list[list[int]]) -> list[list[int]]:
    """Step indexes per column, top to bottom, by barycenter: of the dependencies, of the dependents,
    of the dependencies again (positions centred, so columns of different heights compare)."""
    users: list[list[int]] = [[] for _ in steps]
    for i, ds in enumerate(deps):
        for d in ds:
            users[d].append(i)
    columns: list[list[int]] = [[] for _ in range(max(layer, default=-1) + 1)]
    for i in sorted(range(len(steps)), key=lambda i: steps[i].step):
        columns[layer[i]].append(i)
    pos = [0.0] * len(steps)

    def place(column: list[int]) -> None:
        for row, i in enumerate(column):
            pos[i] = row - (len(column) - 1) / 2

    def sweep(indexes, near: list[list[int]]) -> None:
        for c in indexes:
            columns[c].sort(key=lambda i: (sum(pos[j] for j in near[i]) / len(near[i]) if near[i] else pos[i], pos[i]))
            place(columns[c])

    for column in columns:
        place(column)
    sweep(range(1, len(columns)), deps)
    sweep(range(len(columns) - 2, -1, -1), users)
    sweep(range(1, len(columns)), deps)
    return columns


def _ports(edges: list[tuple[int, int]], ys: list[float], end: int, h: float) -> list[float]:
    """Where each arrow leaves its source (end 0) or meets its target (end 1), as a height in the box:
    spread along the edge in the order of the boxes at the other end, so arrows do not cross there."""
    by_box: dict[int, list[int]] = {}
    for e, edge in enumerate(edges):
        by_box.setdefault(edge[end], []).append(e)
    out = [h / 2] * len(edges)
    for ids in (ids for ids in by_box.values() if len(ids) > 1):
        ids.sort(key=lambda e: ys[edges[e][1 - end]])
        span = min(h * 0.6, (len(ids) - 1) * 8.0)
        for k, e in enumerate(ids):
            out[e] = h / 2 - span / 2 + k * span / (len(ids) - 1)
    return out


def _route(x0: float, y0: float, x1: float, y1: float, skipped: range, tops: list[list[float]], h: float,
           lanes: dict[tuple[int, int], int]) -> QPainterPath:
    """From (x0, y0) on a right edge to (x1, y1) on a left one. Through each column skipped, straight
    along a free row or a gap next to the box in the way (spread a little when arrows share a gap),
    curving only between columns, so no arrow runs under a box. Plain floats: with many arrows this
    is most of a layout."""
    path = QPainterPath(QPointF(x0, y0))
    x, y, slope = x0, y0, (y1 - y0) / (x1 - x0)
    for c in skipped:
        left = MARGIN + c * (BOX_W + COL_GAP)
        at = y0 + slope * (left + BOX_W / 2 - x0)
        column = tops[c]
        r = bisect_left(column, at + 3) - 1  # the box starting above that height (with room), if any
        if r >= 0 and at < column[r] + h + 3:  # in its way: the gap above or below it, whichever is nearer
            g = r if at < column[r] + h / 2 else r + 1
            n = lanes.get((c, g), 0)
            lanes[(c, g)] = n + 1
            at = column[r] + (-ROW_GAP / 2 if g == r else h + ROW_GAP / 2)
            at += min(ROW_GAP / 2 - 2, 3.0 * ((n + 1) // 2)) * (1 if n % 2 else -1)
        mid = (x + left) / 2
        path.cubicTo(mid, y, mid, at, left, at)
        x, y = left + BOX_W, at
        path.lineTo(x, y)
    mid = (x + x1) / 2
    path.cubicTo(mid, y, mid, y1, x1, y1)
    return path


def _wrapped(text: str, font: QFont, width: float, most: int = LINES) -> tuple[str, ...]:
    """The text wrapped at word breaks into at most `most` lines, the last elided if more is left."""
    layout = QTextLayout(text, font)
    layout.beginLayout()
    lines, start = [], 0
    while len(lines) < most - 1:
        line = layout.createLine()
        if not line.isValid():
            break
        line.setLineWidth(width)
        start = line.textStart() + line.textLength()
        lines.append(text[line.textStart():start].strip())
    layout.endLayout()
    rest = text[start:].strip()
    if rest:
        lines.append(QFontMetricsF(font).elidedText(rest, Qt.TextElideMode.ElideRight, width))
    return tuple(lines)


class _Look:
    """What every box and arrow paints with, for the palette in force: one object, so a theme change
    is one assignment and a repaint."""

    def __init__(self, font: QFont, dark: bool):
        self.font, self.small = QFont(font), QFont(font)
        self.small.setPointSizeF(max(6.5, font.pointSizeF() * 0.85) if font.pointSizeF() > 0 else 8.0)
        self.metrics, self.small_metrics = QFontMetricsF(self.font), QFontMetricsF(self.small)
        self.fill = {k: QColor(v[1] if dark else v[0]) for k, v in FILLS.items()}
        self.border = {k: QColor((BORDERS_DARK if dark else STATUS_COLOUR)[k]) for k in FILLS}
        self.text = QColor("#f2f2f2" if dark else "#1c1c1c")
        self.muted = QColor("#c8ccd0" if dark else "#4d5258")
        self.arrow = QColor("#9aa3ab" if dark else "#6f777f")
        self.pulse = 0.0  # 0..1: how far the running boxes' borders are into their beat
        self.box_h = 2 * PAD + self.small_metrics.height() + 2 + LINES * self.metrics.lineSpacing()


class _Box(QGraphicsItem):
    """One step: its state mark, number and tool small on top, its goal in a few lines below."""

    def __init__(self, step: GraphStep, layer: int, look: _Look):
        super().__init__()
        self.layer, self.look = layer, look
        self.rect = QRectF(0, 0, BOX_W, look.box_h)
        self.setZValue(1)  # over the arrows (which are routed around boxes anyway)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self._lines: tuple[str, ...] | None = None  # wrapped at first paint: a big plan shapes only what shows
        self.set_step(step)

    def set_step(self, step: GraphStep) -> None:
        """A new state (the shape is the same): tooltip and colour, no layout."""
        self.step = step
        tool = f" · {terminal.shown(step.tool)}" if step.tool else " · no tool"
        deps = ", ".join(str(d) for d in step.dependencies) or "none"
        tip = (f"step {step.step}{tool}\nstate: {terminal.shown(step.state)}\ndepends on: {deps}\n\n"
               + terminal.shown(step.text, lines=True))
        self.setToolTip(f"<p style='white-space:pre-wrap'>{html.escape(tip)}</p>" if "<" in tip else tip)
        self.update()

    def lines(self) -> tuple[str, ...]:
        """The header, then the goal in at most LINES lines, elided to the box."""
        if self._lines is None:
            step, width = self.step, BOX_W - 2 * PAD
            head = f"{step.step} · {terminal.shown(step.tool)}" if step.tool else f"{step.step}"
            self._lines = (self.look.small_metrics.elidedText(head, Qt.TextElideMode.ElideRight, width - 14),
                           *_wrapped(terminal.shown(step.text), self.look.font, width))
        return self._lines

    @property
    def state(self) -> str:
        """The state drawn: one this widget does not know is drawn as pending (its word still shows)."""
        return self.step.state if self.step.state in FILLS else "pending"

    def fill(self) -> QColor:
        return self.look.fill[self.state]

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt's name)
        return self.rect.adjusted(-3, -3, 3, 3)

    def paint(self, painter: QPainter, option, widget=None) -> None:
        look, state = self.look, self.state
        running = state == "running"
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        width = 2.0 + 2.5 * look.pulse if running else 1.2
        border = QColor(look.border[state])
        if running:
            border.setAlphaF(0.7 + 0.3 * look.pulse)
        painter.setPen(QPen(border, width))
        painter.setBrush(look.fill[state])
        inset = width / 2 - 0.6
        painter.drawRoundedRect(self.rect.adjusted(inset, inset, -inset, -inset), RADIUS, RADIUS)
        head, *lines = self.lines()
        y = PAD + look.small_metrics.ascent()
        painter.setFont(look.small)
        painter.setPen(look.border[state] if state in ("running", "failed") else look.muted)
        painter.drawText(QPointF(PAD, y), STATUS_MARK.get(self.step.state, "?"))
        painter.setPen(look.muted)
        painter.drawText(QPointF(PAD + 14, y), head)
        painter.setFont(look.font)
        painter.setPen(look.text)
        y = PAD + look.small_metrics.height() + 2 + look.metrics.ascent()
        for line in lines:
            painter.drawText(QPointF(PAD, y), line)
            y += look.metrics.lineSpacing()


class _Arrow(QGraphicsItem):
    """One dependency: a curve from the dependency's right edge to the step's left, and its head."""

    def __init__(self, source: _Box, target: _Box, path: QPainterPath, look: _Look):
        super().__init__()
        self.source, self.target, self.path, self.look = source, target, path, look
        end = path.currentPosition()
        y, back = end.y(), end.x() - HEAD
        self.head = QPolygonF([end, QPointF(back, y - HEAD / 2), QPointF(back, y + HEAD / 2)])
        # the curves' control points lie between their ends: this rect is tight, and cheap
        self._bounds = path.controlPointRect().adjusted(-HEAD, -HEAD, 2, HEAD)

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt's name)
        return self._bounds

    def paint(self, painter: QPainter, option, widget=None) -> None:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(QPen(self.look.arrow, 1.3))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(self.path)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(self.look.arrow)
        painter.drawPolygon(self.head)


class _View(QGraphicsView):
    """The scene fitted to the pane, keeping its aspect and never below readable text; box clicks."""

    boxClicked = Signal(object)

    def __init__(self, scene: QGraphicsScene, parent: QWidget):
        super().__init__(scene, parent)
        self.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        self.min_scale = 0.75
        self._pressed: _Box | None = None

    def fit(self) -> None:
        rect = self.sceneRect()
        if rect.isEmpty():
            return
        room = self.maximumViewportSize()  # as if without scroll bars: no flip-flop as they come and go
        scale = min((room.width() - 2) / rect.width(), (room.height() - 2) / rect.height())
        scale = max(self.min_scale, min(MAX_SCALE, scale))
        if abs(scale - self.transform().m11()) > 1e-3:
            self.setTransform(QTransform.fromScale(scale, scale))

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self.fit()

    def _box_at(self, event) -> _Box | None:
        return next((i for i in self.items(event.position().toPoint()) if isinstance(i, _Box)), None)

    def mousePressEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        self._pressed = self._box_at(event) if event.button() == Qt.MouseButton.LeftButton else None
        super().mousePressEvent(event)

    def mouseReleaseEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        """A click is a press and a release on the same box."""
        box = self._box_at(event)
        if box is not None and box is self._pressed:
            self.boxClicked.emit(box)
        self._pressed = None
        super().mouseReleaseEvent(event)


def _version_names(count: int) -> list[str]:
    if count < 2:
        return ["plan v1"] if count else ["no plan"]
    times = {2: "once", 3: "twice"}.get(count, f"{count - 1} times")
    return [f"plan v{i} of {count} (replanned {times})" for i in range(1, count + 1)]


class PlanGraph(QWidget):
    """Every version of a plan, one of them shown as a graph; a click on a step names its goal."""

    stepChosen = Signal(str)  # the goal_id of the box clicked (a step with no goal_id emits nothing)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.layouts = 0  # times a version was laid out: a state change must not add one
        self.boxes: list[_Box] = []  # in the order of the version's steps
        self.arrows: list[_Arrow] = []
        self._versions: tuple[tuple[GraphStep, ...], ...] = ()
        self._index = -1
        self._picked: int | None = None  # an older version chosen: kept until a new version comes
        self._shape: tuple | None = None
        self._look = _Look(self.font(), is_dark(self.palette()))
        self.scene = QGraphicsScene(self)
        self.view = _View(self.scene, self)
        self.view.boxClicked.connect(self._on_view_box_clicked)
        self.selector = QComboBox()  # disabled while there is one version: it reads "plan v1"
        self.selector.setToolTip("Each replan makes a new version of the plan; look at an older one here")
        self.selector.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.selector.activated.connect(self._on_selector_activated)
        self.selector.addItems(_version_names(0))
        self.selector.setEnabled(False)
        box = QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(2)
        box.addWidget(self.selector, 0, Qt.AlignmentFlag.AlignLeft)
        box.addWidget(self.view, 1)
        self.pulse = QTimer(self)
        self.pulse.setInterval(PULSE_MS)
        self.pulse.timeout.connect(self._on_pulse_timeout)
        self._phase = 0

    def set_versions(self, versions: list[list[GraphStep]], shown: int | None = None) -> None:
        """Every version of the plan, the first first; show version `shown` (an index), or without one
        the latest, unless an older one was picked and no version has come since."""
        data = tuple(tuple(v) for v in versions)
        count = len(data)
        if shown is not None:
            index = max(0, min(count - 1, shown))
            self._picked = index if index != count - 1 else None
        elif self._picked is not None and count == len(self._versions):
            index = self._picked
        else:
            index, self._picked = count - 1, None
        if data == self._versions and index == self._index:
            return
        if count != len(self._versions):
            self.selector.clear()
            self.selector.addItems(_version_names(count))
            self.selector.setEnabled(count > 1)
        self._versions, self._index = data, index
        self.selector.setCurrentIndex(max(0, index))
        self._show(data[index] if count else ())

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        """Room for a plan of five columns, two or three steps high, at the smallest readable scale."""
        return QSize(500, 260)

    def heading(self) -> str:
        """What the line above the graph reads: the version shown."""
        return self.selector.currentText()

    def _show(self, steps: tuple[GraphStep, ...]) -> None:
        shape = tuple((s.step, s.text, s.tool, tuple(s.dependencies), s.goal_id) for s in steps)
        before = self._running()
        if shape == self._shape:
            for box, step in zip(self.boxes, steps):
                if box.step.state != step.state:
                    box.set_step(step)
        else:
            self._shape, before = shape, []
            self._lay_out(list(steps))
        running = self._running()
        if running and running != before:
            self._follow(running)
        self._pace_pulse()

    def _running(self) -> list[_Box]:
        return [b for b in self.boxes if b.step.state == "running"]

    def _follow(self, running: list[_Box]) -> None:
        """A plan wider than the pane scrolls: when a step starts and no running one is in sight, bring
        it into view (and otherwise leave the operator's scrolling alone)."""
        seen = self.view.mapToScene(self.view.viewport().rect()).boundingRect()
        if not any(seen.contains(b.sceneBoundingRect()) for b in running):
            self.view.ensureVisible(running[0].sceneBoundingRect(), 24, 24)

    def _lay_out(self, steps: list[GraphStep]) -> None:
        """Boxes in columns, arrows routed between them, the scene fitted to the pane."""
        self.layouts += 1
        self.scene.clear()
        look, deps = self._look, links(steps)
        layer = layers(steps, deps)
        columns = order(steps, layer, deps)
        h, pitch = look.box_h, look.box_h + ROW_GAP
        height = max((len(c) for c in columns), default=0) * pitch - ROW_GAP
        self.boxes = [_Box(s, layer[i], look) for i, s in enumerate(steps)]
        xs, ys = [0.0] * len(steps), [0.0] * len(steps)
        tops: list[list[float]] = []
        for c, column in enumerate(columns):
            top = MARGIN + (height - (len(column) * pitch - ROW_GAP)) / 2  # each column centred
            tops.append([top + r * pitch for r in range(len(column))])
            for r, i in enumerate(column):
                xs[i], ys[i] = MARGIN + c * (BOX_W + COL_GAP), tops[c][r]
                self.boxes[i].setPos(xs[i], ys[i])
                self.scene.addItem(self.boxes[i])
        edges = [(d, i) for i, ds in enumerate(deps) for d in ds]
        out_ports, in_ports = _ports(edges, ys, 0, h), _ports(edges, ys, 1, h)
        lanes: dict[tuple[int, int], int] = {}
        self.arrows = []
        for e, (d, i) in enumerate(edges):
            path = _route(xs[d] + BOX_W, ys[d] + out_ports[e], xs[i], ys[i] + in_ports[e],
                          range(layer[d] + 1, layer[i]), tops, h, lanes)
            self.arrows.append(_Arrow(self.boxes[d], self.boxes[i], path, look))
            self.scene.addItem(self.arrows[-1])
        width = len(columns) * (BOX_W + COL_GAP) - COL_GAP + 2 * MARGIN
        # room above and below the tallest column for the arrows that pass its end boxes
        self.scene.setSceneRect(QRectF(0, MARGIN - ROW_GAP, max(width, 0), max(height, 0) + 2 * ROW_GAP))
        self.view.min_scale = min(1.0, READABLE_PX / max(1, QFontInfo(look.font).pixelSize()))
        self.view.fit()

    def _pace_pulse(self) -> None:
        """The pulse runs only while a step is running and the graph can be seen."""
        running = self.isVisible() and bool(self._running())
        if running and not self.pulse.isActive():
            self.pulse.start()
        elif not running and self.pulse.isActive():
            self.pulse.stop()
            self._look.pulse = 0.0
            self.scene.update()

    def _on_pulse_timeout(self) -> None:
        self._phase = (self._phase + PULSE_MS) % PULSE_PERIOD_MS
        self._look.pulse = 0.5 - 0.5 * math.cos(2 * math.pi * self._phase / PULSE_PERIOD_MS)
        for box in self._running():
            box.update()

    def showEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        super().showEvent(event)
        self._pace_pulse()

    def hideEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        super().hideEvent(event)
        self._pace_pulse()

    def changeEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        """Light or dark: the same boxes in new colours. Another font: a new layout, boxes fit their text."""
        if event.type() in (QEvent.Type.PaletteChange, QEvent.Type.FontChange):
            look = _Look(self.font(), is_dark(self.palette()))
            look.pulse = self._look.pulse
            refit = look.font != self._look.font
            self._look = look
            for item in (*self.boxes, *self.arrows):
                item.look = look
            if refit and self._shape is not None:
                self._shape = None
                self._show(self._versions[self._index] if self._versions else ())
            self.scene.update()
        super().changeEvent(event)

    def _on_selector_activated(self, index: int) -> None:
        if not 0 <= index < len(self._versions):
            return
        self._picked = index if index != len(self._versions) - 1 else None
        if index != self._index:
            self._index = index
            self._show(self._versions[index])

    def _on_view_box_clicked(self, box: _Box) -> None:
        if box.step.goal_id:
            self.stepChosen.emit(box.step.goal_id)
