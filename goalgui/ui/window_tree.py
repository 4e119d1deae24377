"""The main window's goal tree: search and status filter (GoalFilter), sorting that keeps the tree's
shape, following the running goal until the operator scrolls or expands by hand, and the detail
pane for the selected goal. A mixin of `MainWindow`."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt

from ..engine.lifecycle import RunState
from ..engine.record import goal_from_events
from .tree_model import GOAL_ID_ROLE, SORT_ROLE, STATUS_ROLE
FIND_LIMIT = 1_000  # matches brought in from the journal for a search in a closed run


class GoalFilter(QSortFilterProxyModel):
    """Status filter and text search over the tree; matches keep their ancestors, so the shape holds."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.status = ""
        self.setRecursiveFilteringEnabled(True)
        self.setSortRole(SORT_ROLE)  # sorting orders siblings: the tree keeps its shape
        self.sort_column = -1  # not sorted: creation order
        self.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.setFilterKeyColumn(0)

    def set_status(self, status: str) -> None:
        if status == self.status:
            return
        if hasattr(self, "beginFilterChange"):  # Qt 6.10 replaced invalidateFilter()
            self.beginFilterChange()
            self.status = status
            self.endFilterChange()
        else:
            self.status = status
            self.invalidateFilter()

    def filterAcceptsRow(self, row: int, parent) -> bool:
        index = self.sourceModel().index(row, 0, parent)
        if self.status and self.sourceModel().data(index, STATUS_ROLE) != self.status:
            return False
        return super().filterAcceptsRow(row, parent)


class TreeFollowing:
    def _follow_goal(self, goal_id: str) -> None:
        """Keep the running goal in view: expand the path to it and scroll to it. Only that path stays
        expanded by following (what the person expanded stays as they left it): every expanded row
        costs the view's relayout on each insert, so a tree that auto-expands everything cannot keep up."""
        self._followed = goal_id
        index = self._view_index(self.tree_model.index_of(goal_id))
        if not index.isValid():
            return
        path = []
        parent = index.parent()
        while parent.isValid():
            path.append(QPersistentModelIndex(parent))
            parent = parent.parent()
        keep = set(path)
        for old in self._auto_expanded - keep:
            if old.isValid():
                self.tree.collapse(QModelIndex(old))
        self._expanding = True
        try:
            for ancestor in reversed(path):
                if not self.tree.isExpanded(QModelIndex(ancestor)):
                    self.tree.expand(QModelIndex(ancestor))
                    self._auto_expanded.add(ancestor)
        finally:
            self._expanding = False
        self._auto_expanded &= keep
        self.tree.scrollTo(index)


    def _choose_goal(self, goal_id: str) -> None:
        """A task in the queue or a step in the graph was clicked: its goal is selected in the tree."""
        self._follow_goal(goal_id)
        index = self._view_index(self.tree_model.index_of(goal_id))
        if index.isValid():
            self.tree.setCurrentIndex(index)

    def _on_tree_expanded_by_hand(self, index) -> None:
        """The person opened a goal: it stays open, following will not fold it."""
        if not self._expanding:
            self._auto_expanded.discard(QPersistentModelIndex(index))


    def _on_tree_scrolled_by_hand(self, _action) -> None:
        """The person scrolled the tree (wheel, bar, page): stop following until Follow is ticked again."""
        if self.follow_box.isChecked() and self.run is not None and self.run.state is RunState.ACTIVE:
            self.follow_box.setChecked(False)
            self.statusBar().showMessage("Not following the running goal now: tick Follow to catch up", 6000)


    def _on_follow_box_toggled(self, checked: bool) -> None:
        if checked and self._running_goal is not None:
            self._follow_goal(self._running_goal)


    def _on_filters_changed(self, *_args) -> None:
        """Filter through the proxy while a search or status is set; show the model itself otherwise.
        A journaled run read lazily first brings in the matches the journal finds (and their ancestors)."""
        text, status = self.search.text(), self.status_filter.currentData() or ""
        sorting = self.proxy.sort_column >= 0
        if (text or status) and self.tree_model.is_lazy():
            found = self.journal.find_goals(self.shown_run_id, text, status, limit=FIND_LIMIT)
            for goal_id in found:
                self.tree_model.reveal(goal_id)
            if len(found) == FIND_LIMIT:
                self.statusBar().showMessage(f"showing the first {FIND_LIMIT:,} matches", 8000)
        filtering = bool(text or status) or sorting
        if filtering and self.proxy.sourceModel() is None:  # attached only while used: it costs per change
            self.proxy.setSourceModel(self.tree_model)
        self.proxy.setFilterFixedString(text)
        self.proxy.set_status(status)
        if sorting:
            self.proxy.sort(self.proxy.sort_column, self._sort_order)
        else:
            self.proxy.sort(-1)
        wanted = self.proxy if filtering else self.tree_model
        if self.tree.model() is not wanted:
            self._auto_expanded.clear()
            self.tree.setModel(wanted)
            self.tree.selectionModel().currentChanged.connect(self._on_tree_current_changed)
            self.tree.expandToDepth(1)
        if not filtering and self.proxy.sourceModel() is not None:
            self.proxy.setSourceModel(None)


    def _on_tree_header_clicked(self, column: int) -> None:
        """Sort siblings by a column: ascending, then descending, then back to creation order."""
        header = self.tree.header()
        if self.proxy.sort_column != column:
            self.proxy.sort_column, self._sort_order = column, Qt.SortOrder.AscendingOrder
        elif self._sort_order == Qt.SortOrder.AscendingOrder:
            self._sort_order = Qt.SortOrder.DescendingOrder
        else:
            self.proxy.sort_column = -1
        header.setSortIndicatorShown(self.proxy.sort_column >= 0)
        if self.proxy.sort_column >= 0:
            header.setSortIndicator(column, self._sort_order)
        self._on_filters_changed()


    def _view_index(self, source_index):
        return self.proxy.mapFromSource(source_index) if self.tree.model() is self.proxy else source_index


    def _selected_goal_id(self) -> str | None:
        index = self.tree.selectionModel().currentIndex()
        return self.tree.model().data(index.siblingAtColumn(0), GOAL_ID_ROLE) if index.isValid() else None


    def _on_tree_current_changed(self, current, _previous) -> None:
        self._show_selected()
        self.controls.refresh()


    def _show_selected(self) -> None:
        """The detail pane for the selected goal, from the record shown or from the journal."""
        goal_id = self._selected_goal_id()
        summary = self.record.summary if self.record is not None else self.run_summary
        if not goal_id or self.shown_run_id is None:
            self.detail.show_goal(None, summary=summary if self.shown_run_id else "")
            return
        upto = self.shown_seq if self.record is not None and self.run is None else None
        events = self.journal.goal_events(self.shown_run_id, goal_id, upto=upto)
        goal = self.record.goals.get(goal_id) if self.record is not None else goal_from_events(events)
        self.detail.show_goal(goal, events, summary)
