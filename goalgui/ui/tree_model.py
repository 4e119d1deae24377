"""The goal tree as one QAbstractItemModel, fed by engine events or read lazily from the journal.

Live, rows are inserted as goals appear (one beginInsertRows per parent per
batch) and changed in place (one dataChanged per parent per batch, spanning the
rows that changed and every column). A journaled run is read from the journal's
goals projection a page of children at a time, as the view expands a goal or
scrolls to the end of a long list (canFetchMore/fetchMore), so a run of a
million goals opens as fast as one of ten.
The model is reset only when a different run (or moment) is shown. It keeps its
own small node table rather than the engine's record, so a batch applies in one
pass and the view never reads engine state that is ahead of what it was told.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence

from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor

from ..engine import events as ev
from ..engine.record import REUSED
from ..terminal import shown

COLUMNS = ("Goal", "Parent", "Depth", "Status", "Tokens", "Attempts", "Result")
STATUS_MARK = {"pending": "○", "running": "▶", "done": "✔", "failed": "✘", "skipped": "⤼", "abandoned": "—"}
STATUS_COLOUR = {"pending": "#7f8c8d", "running": "#2980b9", "done": "#27ae60", "failed": "#c0392b",
                 "skipped": "#8e44ad", "abandoned": "#b9770e"}
GOAL_ID_ROLE = Qt.ItemDataRole.UserRole + 1
STATUS_ROLE = Qt.ItemDataRole.UserRole + 2
SORT_ROLE = Qt.ItemDataRole.UserRole + 3  # what a column sorts by: numbers, not their text
PAGE = 2_000  # children read from the journal at a time
_DISPLAY = int(Qt.ItemDataRole.DisplayRole)
_TOOLTIP = int(Qt.ItemDataRole.ToolTipRole)
_FOREGROUND = int(Qt.ItemDataRole.ForegroundRole)
_ALIGNMENT = int(Qt.ItemDataRole.TextAlignmentRole)
_ROLES = frozenset({_DISPLAY, _TOOLTIP, _FOREGROUND, _ALIGNMENT, int(GOAL_ID_ROLE), int(STATUS_ROLE),
                    int(SORT_ROLE)})
_STATUS_ORDER = {status: i for i, status in enumerate(("running", "pending", "failed", "skipped", "abandoned", "done"))}
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_BRUSHES = {status: QBrush(QColor(colour)) for status, colour in STATUS_COLOUR.items()}
FIRST_CHANGING = 3  # columns from status on change in place; id, parent and depth never do


def _cell(text: str) -> str:
    """A model's goal text as one harmless line: control characters written out (\\n, \\x1b)."""
    return text if text.isprintable() else shown(text)


def _tooltip(text: str) -> str:
    """A tooltip is read as rich text when it looks like markup: a text with a tag is escaped."""
    if "<" not in text:
        return text
    import html

    return f"<p style='white-space:pre-wrap'>{html.escape(text)}</p>"


@dataclass(slots=True)
class _Node:
    goal_id: str
    parent_id: str | None  # an id, not the node: no reference cycles, so a dropped tree is freed at once
    depth: int
    text: str
    status: str = "pending"
    tokens: int = 0
    attempts: int = 0
    result_chars: int = 0
    row: int = 0
    children: list[_Node] = field(default_factory=list)
    child_count: int = 0  # children the journal holds (lazy source); live, len(children)
    reused: bool = False  # its result is another goal's finding


class GoalTreeModel(QAbstractItemModel):
    """Goals as a tree: id, parent, depth, status (mark, word and colour), tokens, attempts, result size."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self._roots: list[_Node] = []
        self._nodes: dict[str, _Node] = {}
        self._source = None  # (journal, run_id, upto) while showing a journaled run lazily
        self._root_count = 0
        self._fetching = False
        # what a status means while the run is stopped, shown after it: {"abandoned": "waiting on the budget"}
        self.waiting: dict[str, str] = {}
        self.goal_marks: dict[str, str] = {}  # one goal's own mark: the rate limit that hit it

    def set_waiting(self, state: str | None, stop_reason: str | None, hit: str | None = None) -> bool:
        """Say what unfinished goals wait for, from the run's state (and mark the goal `hit` by a rate
        limit); True when that changed (repaint)."""
        reason = stop_reason or ""
        marks = {hit: "rate limited"} if hit and state == "paused" and reason.startswith("rate limited") else {}
        changed = marks != self.goal_marks
        self.goal_marks = marks
        if state == "blocked" and reason.startswith("budget:"):
            waiting = {"abandoned": "waiting on the budget", "pending": "waiting on the budget"}
        elif state == "blocked":
            waiting = {"pending": "waiting on you"}
        elif state == "paused":
            waiting = {"pending": "paused"}
        else:
            waiting = {}
        if waiting == self.waiting:
            return changed
        self.waiting = waiting
        return True

    # -- feeding ---------------------------------------------------------------

    def clear(self) -> None:
        """Show another run: the one reset this model ever does."""
        self.beginResetModel()
        self._roots, self._nodes, self._source, self._root_count = [], {}, None, 0
        self.endResetModel()

    def open_journaled(self, journal, run_id: str, upto: int | None = None) -> None:
        """Show a journaled run from its goals projection: the top goals now, the rest on demand;
        with `upto`, as it was at that event (`Journal.children`)."""
        self.beginResetModel()
        self._roots, self._nodes = [], {}
        self._source = (journal, run_id, upto)
        rows = journal.children(run_id, None, 0, PAGE, upto=upto)
        self._root_count = len(rows) if len(rows) < PAGE else len(rows) + 1  # more are fetched on demand
        self._adopt(None, rows)
        self.endResetModel()

    def load_record(self, record) -> None:
        """Show a run as a record holds it (a moment on the timeline): one reset, one pass."""
        self.beginResetModel()
        self._roots, self._nodes, self._source, self._root_count = [], {}, None, 0
        nodes = self._nodes
        for g in record.goals.values():  # creation order: parents first
            parent = nodes[g.parent_id] if g.parent_id is not None else None
            siblings = parent.children if parent is not None else self._roots
            node = _Node(g.id, g.parent_id, g.depth, _cell(g.text), g.status.value, g.tokens, g.attempts, len(g.result),
                         row=len(siblings), reused=REUSED in g.note)
            siblings.append(node)
            if parent is not None:
                parent.child_count += 1
            nodes[g.id] = node
        self.endResetModel()

    def _adopt(self, parent: _Node | None, rows) -> None:
        siblings = parent.children if parent is not None else self._roots
        for goal_id, depth, text, status, tokens, attempts, result_chars, child_count, reused in rows:
            node = _Node(goal_id, parent.goal_id if parent is not None else None, depth, _cell(text), status, tokens,
                         attempts, result_chars, row=len(siblings), child_count=child_count, reused=bool(reused))
            siblings.append(node)
            self._nodes[goal_id] = node

    def canFetchMore(self, parent: QModelIndex | QPersistentModelIndex) -> bool:
        if self._source is None or self._fetching:  # not again from inside a fetch's own signals
            return False
        if not parent.isValid():
            return len(self._roots) < self._root_count
        node: _Node = parent.internalPointer()
        return len(node.children) < node.child_count

    def fetchMore(self, parent: QModelIndex | QPersistentModelIndex) -> None:
        if self._source is None or self._fetching:
            return
        journal, run_id, upto = self._source
        node: _Node | None = parent.internalPointer() if parent.isValid() else None
        siblings = node.children if node is not None else self._roots
        rows = journal.children(run_id, node.goal_id if node is not None else None, len(siblings), PAGE, upto=upto)
        if node is None:
            self._root_count = len(siblings) + len(rows) + (1 if len(rows) == PAGE else 0)
        elif len(rows) < PAGE:
            node.child_count = len(siblings) + len(rows)
        if not rows:
            return
        first = len(siblings)
        self._fetching = True
        try:
            self.beginInsertRows(parent if node is not None else QModelIndex(), first, first + len(rows) - 1)
            self._adopt(node, rows)
            self.endInsertRows()
        finally:
            self._fetching = False

    def hasChildren(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> bool:
        if not parent.isValid():
            return bool(self._roots)
        if parent.column() != 0:
            return False
        node: _Node = parent.internalPointer()
        return node.child_count > 0 or bool(node.children)

    def is_lazy(self) -> bool:
        return self._source is not None

    def reveal(self, goal_id: str) -> QModelIndex:
        """The index of a goal, fetching its ancestors' children from the journal if needed."""
        if goal_id in self._nodes or self._source is None:
            return self.index_of(goal_id)
        journal, run_id, _upto = self._source
        path = journal.goal_path(run_id, goal_id)
        parent_index = QModelIndex()
        for goal in path:
            while goal not in self._nodes and self.canFetchMore(parent_index):
                self.fetchMore(parent_index)
            if goal not in self._nodes:
                return QModelIndex()
            parent_index = self.index_of(goal)
        return parent_index

    def apply(self, batch: Sequence[ev.Event]) -> None:
        """Insert the goals a batch adds (grouped by parent) and update the rows it changes."""
        added: dict[str | None, list[ev.GoalAdded]] = {}
        changed: dict[str, dict] = {}
        for e in batch:
            t = type(e)
            if t is ev.GoalAdded:
                added.setdefault(e.parent_id, []).append(e)
            elif t is ev.GoalChanged:
                fields = changed.setdefault(e.goal_id, {})
                if e.status is not None:
                    fields["status"] = e.status
                if e.attempts is not None:
                    fields["attempts"] = e.attempts
                if e.result is not None:
                    fields["result_chars"] = len(e.result)
                if e.note is not None:
                    fields["reused"] = REUSED in e.note
            elif t is ev.TurnStarted and e.goal_id is not None:
                changed.setdefault(e.goal_id, {})["status"] = "running"
            elif t is ev.ModelCalled and e.goal_id is not None:
                fields = changed.setdefault(e.goal_id, {})
                fields["tokens"] = fields.get("tokens", 0) + e.tokens_in + e.tokens_out
        # insert in the order goals appeared: a child's parent always exists before it
        pending = list(added.items())
        while pending:
            waiting = []
            for parent_id, goals in pending:
                if parent_id is not None and parent_id not in self._nodes:
                    waiting.append((parent_id, goals))
                    continue
                self._insert(parent_id, goals)
            if len(waiting) == len(pending):
                raise ValueError(f"goals added under unknown parents: {[p for p, _ in waiting]}")
            pending = waiting
        spans: dict[str | None, tuple[_Node | None, int, int]] = {}  # per parent: the rows that changed
        for goal_id, fields in changed.items():
            node = self._nodes.get(goal_id)
            if node is None:
                continue
            node.tokens += fields.pop("tokens", 0)
            for name, value in fields.items():
                setattr(node, name, value)
            key = node.parent_id
            parent, low, high = spans.get(key, (self._nodes.get(key), node.row, node.row))
            spans[key] = (parent, min(low, node.row), max(high, node.row))
        last = len(COLUMNS) - 1
        for parent, low, high in spans.values():  # one update per parent, not one per row
            siblings = parent.children if parent is not None else self._roots
            self.dataChanged.emit(self._index(siblings[low], FIRST_CHANGING), self._index(siblings[high], last))

    def _insert(self, parent_id: str | None, goals: list[ev.GoalAdded]) -> None:
        parent = self._nodes[parent_id] if parent_id is not None else None
        siblings = parent.children if parent is not None else self._roots
        first = len(siblings)
        parent_index = self._index(parent, 0) if parent is not None else QModelIndex()
        self.beginInsertRows(parent_index, first, first + len(goals) - 1)
        for offset, e in enumerate(goals):
            node = _Node(e.goal_id, parent_id, e.depth, _cell(e.text), row=first + offset)
            siblings.append(node)
            self._nodes[e.goal_id] = node
        if parent is not None:
            parent.child_count = len(siblings)
        self.endInsertRows()

    def load(self, events: Iterable[ev.Event]) -> None:
        """Show a run from its events (a reset, then one pass)."""
        self.clear()
        self.apply(list(events))

    # -- reading ---------------------------------------------------------------

    def goal_count(self) -> int:
        return len(self._nodes)

    def index_of(self, goal_id: str, column: int = 0) -> QModelIndex:
        node = self._nodes.get(goal_id)
        return self._index(node, column) if node is not None else QModelIndex()

    def _index(self, node: _Node, column: int) -> QModelIndex:
        return self.createIndex(node.row, column, node)

    # -- QAbstractItemModel ----------------------------------------------------

    def index(self, row: int, column: int, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> QModelIndex:
        if column < 0 or column >= len(COLUMNS) or row < 0:
            return QModelIndex()
        siblings = parent.internalPointer().children if parent.isValid() else self._roots
        if row >= len(siblings):
            return QModelIndex()
        return self.createIndex(row, column, siblings[row])

    def parent(self, child: QModelIndex | QPersistentModelIndex = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        if not child.isValid():
            return QModelIndex()
        node: _Node = child.internalPointer()
        if node.parent_id is None:
            return QModelIndex()
        parent = self._nodes[node.parent_id]
        return self.createIndex(parent.row, 0, parent)

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        if parent.isValid():
            return len(parent.internalPointer().children) if parent.column() == 0 else 0
        return len(self._roots)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole and 0 <= section < len(COLUMNS):
            return COLUMNS[section]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        # Called for every role of every visible cell on each repaint: the common answer (None) first.
        if role not in _ROLES or not index.isValid():
            return None
        node: _Node = index.internalPointer()
        column = index.column()
        if role == _DISPLAY:
            if column == 0:
                return f"{node.goal_id}  {node.text}"
            if column == 3:  # the mark and the word: readable without colour
                mark = f"{STATUS_MARK.get(node.status, '?')} {node.status}"
                waiting = self.goal_marks.get(node.goal_id) if self.goal_marks else None
                waiting = waiting or self.waiting.get(node.status)
                if waiting:
                    mark = f"{mark} · {waiting}"
                return f"{mark} (reused)" if node.reused else mark
            if column == 4:
                return node.tokens
            if column == 1:
                return node.parent_id or ""
            if column == 2:
                return node.depth
            if column == 5:
                return node.attempts
            return node.result_chars
        if role == _FOREGROUND:
            return _BRUSHES.get(node.status) if column == 3 else None
        if role == _ALIGNMENT:
            return _RIGHT if column >= 2 and column != 3 else None
        if role == _TOOLTIP:
            return _tooltip(node.text)
        if role == GOAL_ID_ROLE:
            return node.goal_id
        if role == SORT_ROLE:
            if column == 0:  # creation order
                return _number(node.goal_id)
            if column == 1:
                return _number(node.parent_id) if node.parent_id else -1
            if column == 3:
                return _STATUS_ORDER.get(node.status, 99)
            return {2: node.depth, 4: node.tokens, 5: node.attempts}.get(column, node.result_chars)
        return node.status  # STATUS_ROLE


def _number(goal_id: str) -> int:
    """g12 -> 12 (goal ids are numbered in creation order)."""
    digits = goal_id.lstrip("g")
    return int(digits) if digits.isdigit() else 0
