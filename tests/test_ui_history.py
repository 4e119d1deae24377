"""Fork from here (issue 14, item 3) in the window: a goal of a finished run, chosen in its tree,
forks the run there and the window drives the fork, its earlier goals kept."""

from goalgui.engine import RunState

from .test_compare import OBJECTIVE, scripted
from .test_ui_controls import until
from .test_ui_window import window  # noqa: F401  (the fixture)


def test_fork_from_a_goal_of_a_finished_run_drives_the_fork_here(window, qloop, journal):
    from goalgui.engine import Limits, Run

    source = Run.create(OBJECTIVE, scripted(["List what goes in", "Choose a bin", "Turn the heap"]), sink=journal,
                        limits=Limits(max_goals=20), model_spec="scripted:rehearsal")
    qloop.run_until_complete(source.drive())
    before = [e.seq for e in journal.events(source.run_id)]
    window.show_journaled(source.run_id)
    until(qloop, lambda: window.shown_run_id == source.run_id and window.tree_model.rowCount() == 1)
    window._choose_goal("g3")
    assert window._selected_goal_id() == "g3"
    window._on_tree_context_menu(window.tree.visualRect(window.tree.currentIndex()).center())
    action = window.tree_menu.actions()[0]
    assert action.text() == "Fork from here" and action.isEnabled()
    action.trigger()
    until(qloop, lambda: window.current is not None and window.current.run_id != source.run_id, timeout=10)
    fork = window.current
    assert fork.record.forked_from == {"run": source.run_id, "goal": "g3", "event": fork.record.forked_from["event"]}
    until(qloop, lambda: fork.state is RunState.COMPLETE, timeout=30)
    kept = fork.record.goals["g2"]
    assert kept.status.value == "done" and kept.result == source.record.goals["g2"].result
    assert [e.seq for e in journal.events(source.run_id)] == before  # the source is only read
    window.tree_menu.close()


def test_fork_from_here_without_a_goal_says_what_to_do(window, qloop):
    assert window.fork_here() is None
    assert "select a goal" in window.statusBar().currentMessage()


def test_two_runs_selected_in_the_runs_tab_compare_and_a_goal_opens_its_run(window, qloop, journal):
    from .test_compare import two_runs

    a, b = qloop.run_until_complete(two_runs(
        journal, scripted(["List what goes in", "Choose a bin", "Turn the heap"]),
        scripted(["List what goes in", "Pick a site", "Turn the heap"])))
    window.refresh_runs()
    view = window.runs_view
    assert not view.compare_button.isEnabled()
    view.table.selectAll()
    assert view.compare_button.isEnabled() and set(view.selected_runs()) == {a.run_id, b.run_id}
    view.compare_button.click()
    until(qloop, lambda: window.tabs.currentWidget() is getattr(window, "compare_view", None), timeout=10)
    compare = window.compare_view
    assert {window.compared[0], window.compared[1]} == {a.run_id, b.run_id}
    kinds = [compare.model.kind(r) for r in range(compare.model.rowCount())]
    assert kinds.count("only in A") == 1 and kinds.count("only in B") == 1
    row = next(r for r in range(compare.model.rowCount()) if compare.model.kind(r) == "only in B")
    side, goal_id = compare.model.goal(row)
    compare.goalChosen.emit(side, goal_id)
    until(qloop, lambda: window.shown_run_id == window.compared[1] and window._selected_goal_id() == goal_id,
          timeout=10)
    assert window.tabs.currentIndex() == 0


def test_overrule_a_goal_from_the_tree_of_a_journaled_run_and_of_the_run_driven_here(window, qloop, journal):
    from goalgui.engine import Limits, Run

    from .test_overrule import model

    blocked = Run.create(OBJECTIVE, model(fail={"Choose a bin"}), sink=journal, limits=Limits(max_goals=20, turns=4),
                         model_spec="scripted:rehearsal")
    assert qloop.run_until_complete(blocked.drive()) is RunState.BLOCKED
    blocked.close()
    journal.release(blocked.run_id)
    window.show_journaled(blocked.run_id)
    until(qloop, lambda: window.shown_run_id == blocked.run_id and window.tree_model.rowCount() == 1)
    window._choose_goal("g3")
    window._on_tree_context_menu(window.tree.visualRect(window.tree.currentIndex()).center())
    labels = [a.text() for a in window.tree_menu.actions() if a.text()]
    assert labels == ["Fork from here", "Split it", "Do it as is", "Accept the result", "Redo with a note…",
                      "Edit the text…"]
    next(a for a in window.tree_menu.actions() if a.text() == "Accept the result").trigger()
    window.tree_menu.close()
    until(qloop, lambda: journal.load(blocked.run_id).goals["g3"].status.value == "done", timeout=10)
    assert "accept by the operator" in journal.load(blocked.run_id).goals["g3"].note
    # the run this window drives is overruled in place; edit offers the goal's text to change
    from .test_ui_controls import Gate

    gate = Gate()
    live = Run.create("Write a report", gate, sink=journal, model_spec="scripted:rehearsal")
    window.run_goal(live)
    until(qloop, gate.entered.is_set)
    until(qloop, lambda: window.shown_run_id == live.run_id and "g4" in live.record.goals)
    window.ask_overrule("g4", "edit")
    assert window.overrule_dialog.textValue() == live.record.goals["g4"].text
    window.overrule_dialog.setTextValue("Find the third part, with figures")
    window.overrule_dialog.accept()
    assert live.record.goals["g4"].text == "Find the third part, with figures"
    assert "g4: edit by the operator" in window.statusBar().currentMessage()
    gate.release.set()
    until(qloop, lambda: live.state is RunState.COMPLETE, timeout=20)
    window.ask_overrule("g2", "redo")  # finished: steered through the journal, refused in one line
    window.overrule_dialog.setTextValue("metric units")
    window.overrule_dialog.accept()
    until(qloop, lambda: "complete: fork it" in window.statusBar().currentMessage(), timeout=10)
