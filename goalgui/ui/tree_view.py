"""The goal tree's view: a QTreeView that repaints changed rows cheaply.

A live run changes hundreds of rows in place per tick, under dozens of parents. QTreeView
answers each dataChanged by working out the on-screen rectangle of every cell in the range
(a model index() and parent() call per cell, from Python), mostly for rows that are folded
away or scrolled out of sight. With uniform row heights and no editing, one viewport update
per tick repaints the same pixels for a fraction of the cost, and none when every change is
under folded goals. When an accessibility client
is listening, Qt's own handling runs too, so screen readers still hear of each change.
"""

from __future__ import annotations

from PySide6.QtGui import QAccessible
from PySide6.QtWidgets import QTreeView


# columns a narrow tree folds away, least needed first (the detail pane shows them all): parent,
# result size and depth below NARROW px, attempts too below NARROWER; goal and status always stay
NARROW, NARROWER = 640, 500
FOLDABLE = ((NARROW, (1, 6, 2)), (NARROWER, (5,)))
GOAL_MIN = 160


class GoalTreeView(QTreeView):
    def __init__(self, parent=None):
        super().__init__(parent)
        self.setUniformRowHeights(True)  # what makes the cheap repaint correct: a change never moves rows

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self.fit_columns(event.size().width())

    def fit_columns(self, width: int) -> None:
        """Fold the least needed columns in a narrow window, so the status is never pushed off."""
        header = self.header()
        for below, columns in FOLDABLE:
            for column in columns:
                hidden = width < below
                if header.isSectionHidden(column) != hidden:
                    header.setSectionHidden(column, hidden)
        # the goal column takes what the others leave (set here on resize: a Stretch section makes the
        # header re-lay itself out at every row inserted, which a live run pays for many times a second)
        others = sum(header.sectionSize(c) for c in range(1, header.count()) if not header.isSectionHidden(c))
        header.resizeSection(0, max(GOAL_MIN, self.viewport().width() - others))

    def dataChanged(self, top_left, bottom_right, roles=()) -> None:  # noqa: N802 (Qt's name)
        if QAccessible.isActive():
            super().dataChanged(top_left, bottom_right, roles)
            return
        parent = top_left.parent()
        if parent.isValid() and not self.isExpanded(parent):
            return  # folded away: nothing on screen changed (unfolding paints them fresh)
        self.viewport().update()
