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
