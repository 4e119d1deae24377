"""The task loop's queue and the plan's graph beside the tree, live and journaled; choosing a strategy."""

import json

from goalgui.engine import Limits, RunState
from goalgui.ui.new_goal import NewGoalDialog

from .test_ui_controls import until
from .test_ui_window import window  # noqa: F401  (the fixture)

LOOP_SCRIPT = {"rules": [
    {"purpose": "execute", "reply": "Part written: three paragraphs, 2 figures and a list of 4 sources."},
    {"purpose": "create", "depth": 1, "replies": [
        {"tasks": [{"description": "Draft part 1: material choices", "priority": 2},
                   {"description": "Research packaging regulations", "priority": 5}]},
        {"tasks": []}]},
    {"purpose": "reprioritise", "reply": {"priorities": []}},
    {"purpose": "check_complete", "reply": {"answer": "YES", "reason": "the parts exist"}},
    {"purpose": "summarize", "reply": "wrap-up"},
]}
PLAN_SCRIPT = {"rules": [
    {"purpose": "plan", "reply": {"steps": [
        {"id": 1, "goal": "List the guests", "tool": None, "dependencies": []},
        {"id": 2, "goal": "Choose a cake", "tool": None, "dependencies": []},
        {"id": 3, "goal": "Write the invitation", "tool": None, "dependencies": [1, 2]}]}},
    {"purpose": "execute", "reply": "Done: 12 guests, a chocolate cake for 15, invitations for Saturday 3pm."},
    {"purpose": "summarize", "reply": "wrap-up"},
]}


def start(window, tmp_path, script, strategy, objective="Write a five-part blog series on sustainable packaging"):
    path = tmp_path / f"{strategy}.json"
    path.write_text(json.dumps(script))
    return window.start_goal({"objective": objective, "criteria": "", "strategy": strategy,
                              "model": f"scripted:{path}", "limits": Limits(max_depth=2, max_goals=40),
                              "mode": "auto", "workspace": str(tmp_path / "ws")})


def test_a_task_loop_run_shows_its_queue_and_health_beside_the_tree(window, qloop, tmp_path):
    assert not window.strategy_pane.isVisible()
    run = start(window, tmp_path, LOOP_SCRIPT, "task-loop")
    until(qloop, lambda: run.state is RunState.COMPLETE, timeout=20)
    until(qloop, lambda: window.shown_state is RunState.COMPLETE)
    pane = window.strategy_pane
    assert pane.isVisible() and pane.currentWidget() is pane.queue
    above, below = window.left_split.sizes()  # appearing, it took a little over half the left side
    assert above > below > 0
    texts = [pane.queue.model.task(r).text for r in range(pane.queue.model.rowCount())]
    assert "Draft part 1: material choices" in texts and "Research packaging regulations" in texts
    assert "k " in pane.queue.health_line.text()
    chosen = next(t for t in run.record.tasks() if t.text == "Research packaging regulations")
    pane.goalChosen.emit(chosen.id)
    assert window._selected_goal_id() == chosen.id
    window.show_journaled(run.run_id)  # the finished run, opened: its queue from the journal
    until(qloop, lambda: window.strategy_pane.isVisible() and "k " in window.inspect.health.text(), timeout=10)
    assert window.strategy_pane.queue.model.rowCount() == len(run.record.tasks())


def test_a_plan_run_shows_its_graph_and_a_moment_shows_it_as_it_was(window, qloop, tmp_path):
    run = start(window, tmp_path, PLAN_SCRIPT, "plan", "Plan a small birthday party for a child")
    until(qloop, lambda: run.state is RunState.COMPLETE, timeout=20)
    until(qloop, lambda: window.shown_state is RunState.COMPLETE)
    graph = window.strategy_pane.graph
    assert window.strategy_pane.isVisible() and window.strategy_pane.currentWidget() is graph
    assert len(graph.boxes) == 3 and len(graph.arrows) == 2 and graph.heading() == "plan v1"
    assert all(box.state == "done" for box in graph.boxes)
    window.show_journaled(run.run_id)
    until(qloop, lambda: "critical path" in window.inspect.health.text(), timeout=10)
    planned = next(e.seq for e in window.journal.events(run.run_id) if e.type == "plan_made")
    window._on_inspect_moment_chosen(planned)
    until(qloop, lambda: window.shown_seq == planned, timeout=10)
    assert [box.state for box in window.strategy_pane.graph.boxes] == ["pending"] * 3


def test_a_moment_of_a_task_loop_run_shows_its_queue_as_it_was_past_the_replay_limit(window, qloop, tmp_path,
                                                                                     monkeypatch):
    """Its queue is drawn from the record: a moment of one is replayed at any size (its caps bound it),
    never read without the queue."""
    from goalgui.ui import window_journaled

    monkeypatch.setattr(window_journaled, "REPLAY_LIMIT", 5)
    run = start(window, tmp_path, LOOP_SCRIPT, "task-loop")
    until(qloop, lambda: run.state is RunState.COMPLETE, timeout=20)
    window.show_journaled(run.run_id)
    until(qloop, lambda: window.strategy_pane.isVisible() and "k " in window.inspect.health.text(), timeout=10)
    grown = next(e.seq for e in window.journal.events(run.run_id)
                 if e.type == "goal_added" and e.text == "Research packaging regulations")
    window._on_inspect_moment_chosen(grown)
    until(qloop, lambda: window.shown_seq == grown and window.record is not None, timeout=10)
    model = window.strategy_pane.queue.model
    rows = {model.task(r).text: model.task(r).state for r in range(model.rowCount())}
    assert rows["Research packaging regulations"] == "pending"  # queued then, done by the end
    assert run.record.goals[next(t.id for t in run.record.tasks() if t.text == "Research packaging regulations")
                            ].status.value == "done"


def test_choosing_a_strategy_says_when_it_fits_and_takes_its_defaults(qtbot):
    dialog = NewGoalDialog(["scripted:rehearsal"], "scripted:rehearsal", "auto-edit")
    qtbot.addWidget(dialog)
    dialog.show()
    assert "cannot be drawn in advance" in dialog.when.text()
    assert not dialog.options["max_iterations"].isVisible()
    dialog.strategy.setCurrentText("task-loop")
    assert "discovered as you go" in dialog.when.text()
    assert dialog.max_depth.value() == 2 and dialog.tokens.value() == 300_000
    assert dialog.options["max_iterations"].isVisible() and not dialog.options["max_parallel"].isVisible()
    dialog.options["max_queue"].setValue(7)
    dialog.intent.setText("Write a five-part blog series")
    goal = dialog.goal()
    assert goal["strategy"] == "task-loop" and goal["options"] == {"max_iterations": 15, "max_queue": 7}
    dialog.max_depth.setText("4")  # typed by the person: kept across a change of strategy
    dialog.strategy.setCurrentText("plan")
    assert "steps and their tools are known" in dialog.when.text()
    assert dialog.max_depth.value() == 4 and dialog.tokens.value() == 0
    assert dialog.goal()["options"]["max_parallel"] == 3
    for i in range(dialog.strategy.count()):
        assert dialog.strategy.itemData(i, 3)  # each has its one line as a tooltip

