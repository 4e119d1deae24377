"""The goal tree model, checked by qtmodeltester while a run adds and changes goals."""

import asyncio

import pytest
from PySide6.QtCore import QModelIndex, Qt

from goalgui.engine import Limits, Run
from goalgui.engine.record import RunRecord
from goalgui.ui.bridge import EventBridge
from goalgui.ui.tree_model import GOAL_ID_ROLE, STATUS_ROLE, GoalTreeModel

from .models import FunctionModel, well_behaved


def recorded_run(width=3, leaf_depth=2, **limits):
    """A finished run and its committed batches, as the journal handed them out."""
    batches = []

    async def go():
        run = Run.create("Write a report", FunctionModel(lambda r: well_behaved(r, width=width, leaf_depth=leaf_depth)),
                         limits=Limits(**limits))
        run.subscribe(lambda batch: batches.append(list(batch)))
        await run.drive()
        return run

    return asyncio.run(go()), batches


def rows_of(model, parent=QModelIndex()):
    while model.canFetchMore(parent):  # a journaled run is read lazily
        model.fetchMore(parent)
    out = []
    for row in range(model.rowCount(parent)):
        index = model.index(row, 0, parent)
        out.append((model.data(index, GOAL_ID_ROLE), model.data(index, STATUS_ROLE),
                    model.data(model.index(row, 4, parent)), rows_of(model, index)))
    return out


def tree_of(report):
    by_parent = {}
    for g in report["goals"]:
        by_parent.setdefault(g["parent_id"], []).append(g)

    def build(parent_id):
        return [(g["id"], g["status"], g["tokens"], build(g["id"])) for g in by_parent.get(parent_id, [])]

    return build(None)


def test_the_model_follows_a_run_event_by_event_under_the_model_tester(qtmodeltester):
    run, batches = recorded_run(max_goals=40)
    model = GoalTreeModel()
    qtmodeltester.check(model)  # empty
    resets = []
    model.modelReset.connect(lambda: resets.append(1))
    inserted = []
    model.rowsInserted.connect(lambda parent, first, last: inserted.append(last - first + 1))
    for batch in batches:
        for event in batch:  # one event at a time: the hardest way to feed it
            model.apply([event])
    qtmodeltester.check(model)
    assert not resets and sum(inserted) == len(run.record.goals)
    assert rows_of(model) == tree_of(run.report())


def test_whole_batches_insert_one_block_per_parent(qtmodeltester):
    run, batches = recorded_run(width=4, leaf_depth=2, max_goals=40)
    model = GoalTreeModel()
    inserted = []
    model.rowsInserted.connect(lambda parent, first, last: inserted.append((parent.data(GOAL_ID_ROLE), last - first + 1)))
    everything = [e for batch in batches for e in batch]
    model.apply(everything)
    qtmodeltester.check(model)
    parents = [p for p, _ in inserted]
    assert len(parents) == len(set(parents))  # never two inserts for the same parent in one batch
    assert rows_of(model) == tree_of(run.report())


def test_status_is_readable_without_colour_and_the_tooltip_is_the_text():
    run, batches = recorded_run(width=2, leaf_depth=1)
    model = GoalTreeModel()
    model.load(e for batch in batches for e in batch)
    root = model.index(0, 3)
    assert model.data(root) == "✔ done"
    assert model.data(root, Qt.ItemDataRole.ForegroundRole).color().name() == "#27ae60"
    assert model.data(model.index(0, 0), Qt.ItemDataRole.ToolTipRole) == "Write a report"
    assert model.headerData(4, Qt.Orientation.Horizontal) == "Tokens"


def test_the_bridge_hands_on_batches_in_ticks(qtbot):
    run, batches = recorded_run(width=2, leaf_depth=1)
    bridge = EventBridge(interval_ms=10)
    model = GoalTreeModel()
    bridge.events_committed.connect(model.apply)

    class FakeRun:
        def subscribe(self, callback):
            self.callback = callback
            return lambda: None

    fake = FakeRun()
    bridge.attach(fake)
    for batch in batches:
        fake.callback(batch)
    with qtbot.waitSignal(bridge.events_committed, timeout=2000):
        pass
    qtbot.waitUntil(lambda: model.goal_count() == len(run.record.goals), timeout=2000)
    bridge.detach()
    assert rows_of(model) == tree_of(run.report())
    rebuilt = RunRecord.from_events(e for batch in batches for e in batch)
    assert rebuilt.report()["goals"] == run.report()["goals"]


def test_a_journaled_run_is_read_a_page_at_a_time_under_the_model_tester(journal, qtmodeltester, monkeypatch):
    from goalgui.ui import tree_model

    monkeypatch.setattr(tree_model, "PAGE", 2)  # pages smaller than a goal's children
    run = Run.create("Write a report", FunctionModel(lambda r: well_behaved(r, width=4, leaf_depth=2)), sink=journal)
    asyncio.run(run.drive())
    model = GoalTreeModel()
    model.open_journaled(journal, run.run_id)
    assert model.goal_count() == 1  # only the top goal until the view asks for more
    top = model.index(0, 0)
    assert model.hasChildren(top) and model.canFetchMore(top) and model.rowCount(top) == 0
    model.fetchMore(top)
    assert model.rowCount(top) == 2 and model.canFetchMore(top)
    qtmodeltester.check(model)  # the tester fetches everything, page by page
    assert rows_of(model) == tree_of(run.report())
    assert model.goal_count() == len(run.record.goals)


def test_revealing_a_deep_goal_fetches_only_its_ancestors_pages(journal, monkeypatch):
    from goalgui.ui import tree_model

    monkeypatch.setattr(tree_model, "PAGE", 2)
    run = Run.create("Write a report", FunctionModel(lambda r: well_behaved(r, width=4, leaf_depth=2)), sink=journal)
    asyncio.run(run.drive())
    last = list(run.record.goals)[-1]  # the last child of the last child of the top goal
    model = GoalTreeModel()
    model.open_journaled(journal, run.run_id)
    index = model.reveal(last)
    assert index.isValid() and model.data(index, GOAL_ID_ROLE) == last
    assert model.goal_count() < len(run.record.goals)


def test_the_view_repaints_for_visible_changes_only(qtbot):
    from PySide6.QtCore import QEvent, QObject

    from goalgui.engine import events as ev
    from goalgui.ui.tree_view import GoalTreeView

    model = GoalTreeModel()
    view = GoalTreeView()
    qtbot.addWidget(view)
    view.setModel(model)
    added = [ev.GoalAdded(seq=1, ts=0, goal_id="g1", parent_id=None, depth=0, text="top"),
             ev.GoalAdded(seq=2, ts=0, goal_id="g2", parent_id="g1", depth=1, text="open"),
             ev.GoalAdded(seq=3, ts=0, goal_id="g3", parent_id="g2", depth=2, text="folded")]
    model.apply(added)
    view.expand(model.index_of("g1"))  # g2 shows; g3, under folded g2, does not
    view.show()
    qtbot.waitExposed(view)
    paints = []

    class Count(QObject):
        def eventFilter(self, obj, event):  # noqa: N802
            if event.type() == QEvent.Type.Paint:
                paints.append(1)
            return False

    from PySide6.QtWidgets import QApplication

    counter = Count()
    view.viewport().installEventFilter(counter)
    QApplication.processEvents()  # the first paint, whatever is pending
    paints.clear()
    model.apply([ev.GoalChanged(seq=4, ts=0, goal_id="g3", status="done")])
    QApplication.processEvents()
    assert paints == []  # nothing on screen changed
    model.apply([ev.GoalChanged(seq=5, ts=0, goal_id="g2", status="running")])
    qtbot.waitUntil(lambda: bool(paints), timeout=2000)


def test_a_reused_result_is_marked_in_the_tree_live_replayed_and_from_the_journal(journal):
    async def go():
        run = Run.create("Write a report", FunctionModel(well_behaved), sink=journal)
        batches = []
        run.subscribe(lambda batch: batches.append(list(batch)))
        root = run.record.goals[run.record.root_id]
        # the same goal twice under one parent (as an operator's edit can make it): the second reuses
        for text in ("Find the market size", "Find the price", "Find the market size."):
            run.add_goal(root, text)
        run.strategy.rebuild()
        await run.drive()
        return run, batches

    run, batches = asyncio.run(go())
    reused = [g for g in run.record.goals.values() if "reused finding of" in g.note]
    assert [g.text for g in reused] == ["Find the market size."]
    statuses = {}
    for label, tree in (("live", GoalTreeModel()), ("replayed", GoalTreeModel()), ("journal", GoalTreeModel())):
        if label == "live":
            for batch in batches:
                tree.apply(batch)
        elif label == "replayed":
            tree.load_record(run.record)
        else:
            tree.open_journaled(journal, run.run_id)
        rows = rows_of(tree)
        root = tree.index(0, 0)
        statuses[label] = [tree.data(tree.index(r, 3, root)) for r in range(tree.rowCount(root))]
        assert rows
    assert all(s[2] == "✔ done (reused)" and s[0] == "✔ done" for s in statuses.values()), statuses
    from goalgui.report import json_report, markdown_report

    goals = json_report(run.record)["goals"]
    assert ["reused finding of g2" in g["note"] for g in goals] == [False, False, False, True]
    assert "[done, reused] Find the market size." in markdown_report(run.record)


def test_control_characters_in_a_goal_are_written_out_in_its_cell_and_markup_is_escaped(journal):
    """A model's goal text never acts on the tree: no raw newline (a row that looks like two goals),
    escape or bidi override in a cell, and a tooltip with a tag is not rendered as markup."""
    hostile = "Tidy\x1b]0;pwned\x07 the\nforged row \u202efiles <img src=x> <b>bold</b>"
    run = Run.create(hostile, FunctionModel(lambda r: well_behaved(r, width=2, leaf_depth=1)), sink=journal)
    asyncio.run(run.drive())
    live, replayed, journaled = GoalTreeModel(), GoalTreeModel(), GoalTreeModel()
    live.load(journal.events(run.run_id))
    replayed.load_record(run.record)
    journaled.open_journaled(journal, run.run_id)
    for model in (live, replayed, journaled):
        cell = model.data(model.index(0, 0))
        assert cell.startswith("g1  Tidy") and "\\x1b" in cell and "\\n" in cell, cell
        assert cell.isprintable(), cell
        tip = model.data(model.index(0, 0), Qt.ItemDataRole.ToolTipRole)
        assert "<b>" not in tip and "&lt;b&gt;" in tip and tip.isprintable(), tip
