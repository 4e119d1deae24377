"""The Runs tab and the timeline as an operator reads them (issue 11, item 15): live, newest first,
what event N was, the run's summary, and a live run's health."""

import time

from goalgui.engine import Limits, Run, RunState

from .test_ui_controls import Gate, until
from .test_ui_window import fast_rehearsal, window  # noqa: F401 (fixture)


def rows(view):
    return [(view.table.item(r, 0).text(), view.table.item(r, 3).text()) for r in range(view.table.rowCount())]


def test_the_runs_tab_is_newest_first_and_follows_a_live_run_without_refresh(window, qloop, journal):
    older = Run.create("An older run", fast_rehearsal(), sink=journal)
    qloop.run_until_complete(older.drive())
    time.sleep(1.1)  # the Started column has whole seconds
    model = Gate()
    run = Run.create("Write a report", model, sink=journal, model_spec="scripted:rehearsal")
    window.run_goal(run)
    until(qloop, model.entered.is_set)
    window.tabs.setCurrentWidget(window.runs_view)
    view = window.runs_view
    until(qloop, lambda: rows(view)[:1] == [(run.run_id, "active")])
    assert rows(view)[1] == (older.run_id, "complete")
    view.table.selectRow(1)
    model.release.set()
    until(qloop, lambda: rows(view)[0] == (run.run_id, "complete"), timeout=20)  # no Refresh pressed
    assert view.table.item(0, 6).text() == str(run.record.metrics.goals_created)
    assert view.selected_run() == older.run_id  # the selection survives the refresh


def test_the_timeline_names_each_event_and_the_status_line_says_it_is_a_replay(window, qloop, journal):
    run = Run.create("Produce a market analysis", fast_rehearsal(), sink=journal)
    qloop.run_until_complete(run.drive())
    shown = []
    window.moment_shown.connect(shown.append)
    window.show_journaled(run.run_id)
    until(qloop, lambda: shown)
    assert "Run summary" in window.detail.toHtml() and run.record.summary[:30] in window.detail.toPlainText()
    shown.clear()
    third_goal = [e.seq for e in journal.events(run.run_id) if e.type == "goal_added"][2]
    window.inspect.slider.setValue(third_goal)
    until(qloop, lambda: shown == [third_goal])
    assert f"event {third_goal} of" in window.inspect.position.text()
    assert ": goal added g3" in window.inspect.position.text()
    assert window.modeline.text().startswith(f"replay at event {third_goal:,} of ")


def test_a_live_run_shows_its_health_and_its_summary_when_done(window, qloop, journal):
    run = window.start_goal({"objective": "Produce a market analysis", "criteria": "", "strategy": "goal-stack",
                             "model": "scripted:rehearsal", "limits": Limits(), "mode": "auto"})
    run.model.latency = 0.0
    until(qloop, lambda: run.state is RunState.COMPLETE, timeout=20)
    until(qloop, lambda: "leaves done:failed 7:0" in window.health_line.text())
    assert window.health_line.isVisibleTo(window)
    window.tree.clearSelection()
    window.tree.setCurrentIndex(window.tree_model.index(0, 0))  # the root goal carries the run's summary
    assert "Run summary" in window.detail.toHtml()


def test_the_status_line_says_which_call_is_in_flight_and_when_a_rate_limit_lifts(window, qloop, journal):
    """Issue 11, item 13."""
    from goalgui.engine import RateLimited

    from .models import FunctionModel, well_behaved

    model = Gate()
    run = Run.create("Write a report", model, sink=journal)
    window.run_goal(run)
    until(qloop, model.entered.is_set)
    window._update_status()
    goal = run.record.goals[run.calling[1]]
    assert f"calling the model: execute for {goal.id} (" in window.modeline.text()
    window.tree.setCurrentIndex(window.tree_model.index(0, 0))
    model.release.set()
    until(qloop, lambda: run.state.final, timeout=20)
    window._update_status()
    assert "calling the model" not in window.modeline.text()

    calls = {"n": 0}

    def limited(request):
        calls["n"] += 1
        if calls["n"] == 4:
            raise RateLimited("too many requests", retry_after=90)
        return well_behaved(request)

    limited_run = Run.create("Write a second report", FunctionModel(limited), sink=journal)
    window.run_goal(limited_run)
    until(qloop, lambda: window.shown_state is RunState.PAUSED, timeout=20)
    window._update_status()
    at = time.strftime("%H:%M:%S", time.localtime(limited_run.record.state_since + 90))
    assert f"retry at {at} (in 9" in window.modeline.text() or f"retry at {at} (in 8" in window.modeline.text()
    hit = limited_run.record.last_call_goal
    assert window.tree_model.goal_marks == {hit: "rate limited"}
    limited_run.cancel()


def test_a_running_goal_with_a_result_says_it_is_being_verified(qtbot):
    from goalgui.engine.record import Goal, GoalStatus
    from goalgui.ui.panes import GoalDetail

    detail = GoalDetail()
    qtbot.addWidget(detail)
    goal = Goal("g2", "g1", 1, "Find the prices", status=GoalStatus.RUNNING, result="three prices")
    detail.show_goal(goal)
    assert "Attempts 0 (+1 being verified)" in detail.toPlainText()
    goal.status = GoalStatus.DONE
    detail.show_goal(goal)
    assert "Attempts 0 " in detail.toPlainText() and "+1" not in detail.toPlainText()


def test_each_finished_run_shows_its_health_in_the_runs_tab(window, qloop, journal):
    """The figures journaled at a run's stop are the row's Health column (a column of the runs table:
    no run's events are read), in red when they flag a growing queue or flat priorities."""
    from goalgui.engine.health import health_line

    from .test_task_loop import loop

    stack = Run.create("A goal-stack run", fast_rehearsal(), sink=journal)
    qloop.run_until_complete(stack.drive())
    grows = Run.create("A task-loop run", loop(lambda r: [(f"Write part {len(r.messages[-1]['content'])}", 5),
                                                         (f"List part {len(r.messages[0]['content'])}", 5)]),
                       strategy="task-loop", sink=journal, limits=Limits(max_depth=1, max_goals=40))
    qloop.run_until_complete(grows.drive())
    window.tabs.setCurrentWidget(window.runs_view)
    view = window.runs_view
    column = view.COLUMNS.index("Health")
    until(qloop, lambda: {view.table.item(r, 0).text() for r in range(view.table.rowCount())} >= {stack.run_id,
                                                                                                   grows.run_id})
    cells = {view.table.item(r, 0).text(): view.table.item(r, column) for r in range(view.table.rowCount())}
    assert cells[stack.run_id].text() == health_line(journal.final_health(stack.run_id)) != ""
    # the depth limit (1) held the queue to 1 + 2 tasks; the model gave every task priority 5
    assert cells[grows.run_id].text().startswith("k 0.67 · 3 completed, 2 created")
    assert "priorities flat" in cells[grows.run_id].text()
    assert cells[grows.run_id].toolTip() == cells[grows.run_id].text()
    assert cells[grows.run_id].foreground().color().name() == "#c0392b"
