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
