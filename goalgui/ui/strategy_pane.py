"""Beside the tree, what a strategy has that a tree does not show: the task loop's queue (with its
priority histogram and health line) and the plan's graph (every version, the running steps marked).
Hidden for the strategies whose tree is the whole story."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QSplitter, QStackedWidget, QWidget

from ..engine.health import health
from ..engine.record import RunRecord
from .plan_graph import GraphStep, PlanGraph
from .queue_view import QueueTask, QueueView

SHOWN = ("task-loop", "plan")


def queue_tasks(record: RunRecord) -> list[QueueTask]:
    """The task loop's tasks as the queue view shows them (from the goals' facts)."""
    goals, out = record.goals, []
    for t in record.tasks():
        f = t.facts
        creator = goals.get(f.get("creator") or "")
        out.append(QueueTask(goal_id=t.id, text=t.text, priority=int(f.get("priority", 5)),
                             effective=int(f.get("effective", f.get("priority", 5))), seq=int(f.get("seq", 0)),
                             depth=int(f.get("task_depth", 0)), creator=creator.text if creator is not None else "",
                             state=t.status.value, iteration=f.get("iteration"), artefact=f.get("artefact")))
    return out


def plan_versions(record: RunRecord) -> list[list[GraphStep]]:
    """Every version of the plan as the graph draws it; a step's state is its goal's status now."""
    goals, versions = record.goals, []
    for version in record.plans:
        steps = []
        for s in version.steps:
            goal = goals.get(s.get("goal_id", ""))
            steps.append(GraphStep(step=int(s["step"]), text=str(s.get("goal", "")), tool=s.get("tool"),
                                   dependencies=tuple(int(d) for d in s.get("dependencies", [])),
                                   state=goal.status.value if goal is not None else "pending",
                                   goal_id=goal.id if goal is not None else ""))
        versions.append(steps)
    return versions


class StrategyPane(QStackedWidget):
    goalChosen = Signal(str)  # a task or step clicked: the window selects its goal in the tree

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.queue = QueueView()
        self.graph = PlanGraph()
        self.addWidget(self.queue)
        self.addWidget(self.graph)
        self.queue.taskChosen.connect(self.goalChosen)
        self.graph.stepChosen.connect(self.goalChosen)
        self.strategy = ""
        self.setMinimumHeight(150)
        self.hide()

    def show_record(self, record: RunRecord | None) -> None:
        """The queue or the graph of a run held as a record (live, journaled, or a moment of one)."""
        strategy = record.strategy if record is not None else ""
        self.strategy = strategy
        if strategy not in SHOWN or record.root_id is None:
            self.hide()
            return
        if strategy == "task-loop":
            self.queue.set_tasks(queue_tasks(record), health(record))
            self.setCurrentWidget(self.queue)
        else:
            self.graph.set_versions(plan_versions(record))
            self.setCurrentWidget(self.graph)
        if self.isHidden():
            self.show()
            self._take_half()

    def _take_half(self) -> None:
        """Appearing in a splitter (above the tree), take a little over half of it: a queue or a plan
        is what the operator reads in these strategies, and their tree is one level deep."""
        split = self.parentWidget()
        if isinstance(split, QSplitter) and split.indexOf(self) == 0 and split.count() == 2:
            total = sum(split.sizes()) or split.height()
            split.setSizes([total * 11 // 20, total - total * 11 // 20])

    def restyle(self, palette) -> None:
        self.queue.restyle(palette)
