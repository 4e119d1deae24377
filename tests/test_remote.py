"""The driver's side of attach (issue 14, item 1): `goalgui.remote.Remote` carries out what other
processes leave in the journal, and races its own way of asking against their answers. Real
journal on disk; the other process is a second `Journal` on the same file, as a window would be."""

import asyncio
import logging
import subprocess

import pytest

from goalgui.engine import Run, RunState
from goalgui.engine import events as ev
from goalgui.engine.confirm import ConfirmationAnswer, refuse_unattended
from goalgui.journal import Journal
from goalgui.remote import Remote

from .models import FunctionModel, well_behaved


def split_in_ask_mode(journal, confirmer, *, delay=0.0):
    """A run whose first split waits for a confirmation (ask mode)."""
    model = FunctionModel(lambda r: well_behaved(r, width=2), delay=delay)
    return Run.create("Write a report", model, sink=journal, permission_mode="ask", confirmer=confirmer)


async def until(predicate, timeout=10.0):
    async def wait():
        while not predicate():
            await asyncio.sleep(0.02)

    await asyncio.wait_for(wait(), timeout)


def asked(journal, run_id):
    return [e for e in journal.events(run_id) if isinstance(e, ev.ConfirmationAsked)]


def answered(journal, run_id):
    return [e for e in journal.events(run_id) if isinstance(e, ev.ConfirmationAnswered)]


async def asked_while_watched(tmp_path, local=refuse_unattended, *, watch=True):
    """A run driven here whose split waits for an answer, a second journal on the same file (the
    window) watching it, and the driver's poller: (journal, window, remote, run, driving, poller)."""
    path = tmp_path / "j.sqlite3"
    journal, window = Journal(path), Journal(path)
    remote = Remote(journal)
    run = split_in_ask_mode(journal, remote.confirmer(local))
    if watch:
        window.watch(run.run_id, "w1")
    poller = asyncio.ensure_future(remote.poll(lambda: [run]))
    driving = asyncio.ensure_future(run.drive())
    await until(lambda: asked(window, run.run_id))
    return journal, window, remote, run, driving, poller


async def test_with_nobody_to_ask_and_no_window_watching_the_run_pauses_at_once(tmp_path):
    journal = Journal(tmp_path / "j.sqlite3")
    remote = Remote(journal)
    run = split_in_ask_mode(journal, remote.confirmer(refuse_unattended))
    state = await asyncio.wait_for(run.drive(), 10)
    assert state is RunState.PAUSED
    assert run.record.stop_reason == "needs confirmation: subgoals needs a person to approve it"
    journal.close()


async def test_a_watching_window_answers_for_a_driver_with_nobody_to_ask(tmp_path):
    journal, window, remote, run, driving, poller = await asked_while_watched(tmp_path)
    await asyncio.sleep(1.5)  # it waits (the window watches), it does not pause
    assert run.state is RunState.ACTIVE and not answered(window, run.run_id)
    question = asked(window, run.run_id)[0]
    window.request_control(run.run_id, "answer", confirmation_id=question.confirmation_id, outcome="approved",
                           mode="auto-edit", edits={"subgoals": ["Gather the figures", "Write it up"]})
    assert await asyncio.wait_for(driving, 20) is RunState.COMPLETE
    poller.cancel()
    answer = answered(journal, run.run_id)[0]
    assert (answer.outcome, answer.mode) == ("approved", "auto-edit")
    texts = [g.text for g in run.record.goals.values()][1:]
    assert texts == ["Gather the figures", "Write it up"]
    assert run.record.permission_mode == "auto-edit"  # the answer's mode, as a dialog's would be
    journal.close()
    window.close()


async def test_when_the_watching_window_goes_away_the_driver_pauses_as_before(tmp_path):
    journal, window, remote, run, driving, poller = await asked_while_watched(tmp_path)
    window.unwatch(run.run_id, "w1")
    assert await asyncio.wait_for(driving, 10) is RunState.PAUSED
    poller.cancel()
    assert run.record.stop_reason.endswith("(the window that was watching went away)")
    assert answered(journal, run.run_id)[0].outcome == "aborted"
    journal.close()
    window.close()


async def test_a_stale_watcher_does_not_count(tmp_path):
    path = tmp_path / "j.sqlite3"
    journal = Journal(path)
    run = split_in_ask_mode(journal, refuse_unattended)
    journal.watch(run.run_id, "crashed")
    assert journal.watchers(run.run_id) == 1
    assert journal.watchers(run.run_id, within=0.0) == 0  # its last word is older than that
    journal.close()


async def test_the_first_answer_wins_and_the_question_here_is_withdrawn(tmp_path, caplog):
    """A driver that can ask here (a dialog, a terminal) still takes a window's answer if it comes
    first: its own question is withdrawn (cancelled), and a second answer is refused."""
    withdrawn = []

    async def never_answers(request):
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            withdrawn.append(request.id)
            raise

    journal, window, remote, run, driving, poller = await asked_while_watched(tmp_path, never_answers, watch=False)
    cid = asked(window, run.run_id)[0].confirmation_id
    window.request_control(run.run_id, "answer", confirmation_id=cid, outcome="declined")
    window.request_control(run.run_id, "answer", confirmation_id=cid, outcome="approved")
    with caplog.at_level(logging.WARNING, logger="goalgui.remote"):
        assert await asyncio.wait_for(driving, 20) is RunState.COMPLETE
    poller.cancel()
    assert withdrawn == [cid]
    assert [(a.confirmation_id, a.outcome) for a in answered(journal, run.run_id)] == [(cid, "declined")]
    assert "no longer open" in caplog.text
    assert "sub-goals declined" in run.record.goals["g1"].note  # declined: the root was executed directly
    journal.close()
    window.close()


async def test_an_answer_that_is_not_one_is_refused_and_the_question_stays_open(tmp_path, caplog):
    journal, window, remote, run, driving, poller = await asked_while_watched(tmp_path)
    cid = asked(window, run.run_id)[0].confirmation_id
    with caplog.at_level(logging.WARNING, logger="goalgui.remote"):
        window.request_control(run.run_id, "answer", confirmation_id=cid, outcome="sure, whatever")
        window.request_control(run.run_id, "answer", confirmation_id=cid, outcome="approved", mode="godmode")
        window.request_control(run.run_id, "answer", confirmation_id=cid, outcome="approved", edits=["x"])
        window.request_control(run.run_id, "draft", confirmation_id=cid, draft={"subgoals": ["Half typed"]})
        await until(lambda: caplog.text.count("refused") >= 3)
    assert run.state is RunState.ACTIVE and not answered(window, run.run_id)
    await until(lambda: any(isinstance(e, ev.ConfirmationDrafted) for e in window.events(run.run_id)))
    assert run.record.unanswered[("subgoals", "g1")]["draft"] == {"subgoals": ["Half typed"]}
    window.request_control(run.run_id, "answer", confirmation_id=cid, outcome="approved")
    assert await asyncio.wait_for(driving, 20) is RunState.COMPLETE
    poller.cancel()
    journal.close()
    window.close()


async def test_a_paused_run_is_held_while_a_window_watches_and_resumed_from_it(tmp_path):
    path = tmp_path / "j.sqlite3"
    journal, window = Journal(path), Journal(path)
    remote = Remote(journal)
    model = FunctionModel(lambda r: well_behaved(r, width=2), delay=0.2)
    run = Run.create("Write a report", model, sink=journal)
    poller = asyncio.ensure_future(remote.poll(lambda: [run]))
    window.watch(run.run_id, "w1")
    driving = asyncio.ensure_future(run.drive())
    await asyncio.sleep(0.3)
    window.request_control(run.run_id, "pause", reason="paused from an attached window")
    assert await asyncio.wait_for(driving, 10) is RunState.PAUSED
    holding = asyncio.ensure_future(remote.hold(run, lambda: False))
    await asyncio.sleep(1.0)
    assert not holding.done()  # held: the window may resume it
    window.request_control(run.run_id, "limits", max_goals=50)
    window.request_control(run.run_id, "tell", text="Keep it short")
    window.request_control(run.run_id, "resume")
    assert await asyncio.wait_for(holding, 10) is True
    assert run.state is RunState.ACTIVE and run.record.limits.max_goals == 50
    assert await asyncio.wait_for(run.drive(), 20) is RunState.COMPLETE
    assert any("Keep it short" in str(m.get("content")) for c in model.calls[-3:] for m in c.messages)
    # paused again with nobody watching: not held
    window.unwatch(run.run_id, "w1")
    poller.cancel()
    journal.close()
    window.close()


async def test_hold_lets_go_when_no_window_watches_or_on_a_signal(tmp_path):
    path = tmp_path / "j.sqlite3"
    journal = Journal(path)
    remote = Remote(journal)
    run = Run.create("Write a report", FunctionModel(lambda r: well_behaved(r)), sink=journal)
    run.pause("paused by user")
    assert await asyncio.wait_for(remote.hold(run, lambda: False), 5) is False
    journal.watch(run.run_id, "w1")
    assert await asyncio.wait_for(remote.hold(run, lambda: True), 5) is False
    told = []
    stop = []
    holding = asyncio.ensure_future(remote.hold(run, lambda: bool(stop), lambda: told.append(1)))
    await asyncio.sleep(0.6)
    stop.append(1)
    assert await asyncio.wait_for(holding, 5) is False and told == [1]
    journal.close()


async def test_a_refused_request_never_stops_the_others(tmp_path, caplog):
    """A request the run refuses (an unknown goal, a question no longer open) is logged in one
    line; the rest are carried out in order."""
    path = tmp_path / "j.sqlite3"
    journal, window = Journal(path), Journal(path)
    remote = Remote(journal)
    run = Run.create("Write a report", FunctionModel(lambda r: well_behaved(r)), sink=journal)
    window.request_control(run.run_id, "skip", goal_id="g99")
    window.request_control(run.run_id, "answer", confirmation_id="nope", outcome="approved")
    window.request_control(run.run_id, "mode", mode="plan")
    poller = asyncio.ensure_future(remote.poll(lambda: [run]))
    with caplog.at_level(logging.WARNING, logger="goalgui.remote"):
        await until(lambda: run.record.permission_mode == "plan")
    poller.cancel()
    assert caplog.text.count("refused") == 2 and "no longer open" in caplog.text
    journal.close()
    window.close()


@pytest.mark.parametrize("kind, answer, refused", [
    ("subgoals", {"outcome": "approved", "edits": {"subgoals": 5}}, "must be a list of texts"),
    ("subgoals", {"outcome": "approved", "edits": {"subgoals": "ab"}}, "must be a list of texts"),
    ("subgoals", {"outcome": "approved", "edits": {"always": True}}, "has no field 'always'"),
    ("tool", {"outcome": "approved", "edits": {"always": "yes"}}, "must be true or false"),
    ("tool", {"outcome": "approved", "edits": {"subgoals": ["x"]}}, "has no field 'subgoals'"),
    ("create_goal", {"outcome": "approved", "edits": {"objective": 7}}, "must be a text"),
    ("subgoals", {"outcome": "aborted"}, "not an answer"),
    ("subgoals", {"outcome": "approved", "mode": "godmode"}, "unknown permission mode"),
])
def test_answers_from_a_window_are_held_to_what_a_dialog_could_answer(tmp_path, kind, answer, refused):
    from goalgui.engine.confirm import ConfirmationRequest
    from goalgui.engine.lifecycle import InputError

    journal = Journal(tmp_path / "j.sqlite3")
    remote = Remote(journal)
    run = Run.create("Write a report", FunctionModel(lambda r: well_behaved(r)), sink=journal)
    other = Run.create("Another report", FunctionModel(lambda r: well_behaved(r)), sink=journal)
    loop = asyncio.new_event_loop()
    try:
        future = loop.create_future()
        remote._open["c1"] = (future, ConfirmationRequest("c1", kind, {}, "ask", run_id=run.run_id))
        with pytest.raises(InputError, match=refused):
            remote.answer({"confirmation_id": "c1", **answer}, run)
        with pytest.raises(InputError, match="no longer open"):  # addressed to another run: not its question
            remote.answer({"confirmation_id": "c1", "outcome": "declined"}, other)
        assert not future.done()  # refused: the question stays open
        good = {"tool": {"always": True}, "subgoals": {"subgoals": ["A part", "Another"]},
                "create_goal": {"objective": "Write it"}}[kind]
        remote.answer({"confirmation_id": "c1", "outcome": "approved", "mode": "ask", "edits": good}, run)
        assert future.result() == ConfirmationAnswer.approve("ask", **good)
    finally:
        loop.close()
    journal.close()


async def test_a_malformed_request_loses_only_itself(tmp_path, caplog):
    """A row that is not JSON (another program's, a torn write) is skipped with one warning; the
    answer beside it is carried out."""
    journal, window, remote, run, driving, poller = await asked_while_watched(tmp_path)
    cid = asked(window, run.run_id)[0].confirmation_id
    with caplog.at_level(logging.WARNING):
        window._db.execute("INSERT INTO controls (run_id, action, args, created_at) VALUES (?,?,?,?)",
                           (run.run_id, "pause", "{not json", 0.0))
        window.request_control(run.run_id, "answer", confirmation_id=cid, outcome="approved")
        assert await asyncio.wait_for(driving, 20) is RunState.COMPLETE
    poller.cancel()
    assert "is not readable (JSONDecodeError): ignored" in caplog.text
    journal.close()
    window.close()


async def test_a_pause_while_a_windows_answer_withdraws_the_question_here_stops_the_step(tmp_path):
    """The step that took a window's answer is paused while the question asked here is being
    withdrawn: the pause reaches the step (nothing more is added), it is not swallowed."""
    withdrawing = asyncio.Event()

    async def slow_to_withdraw(request):
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            withdrawing.set()
            await asyncio.sleep(0.3)  # a dialog closing, a prompt taking its line back
            raise

    journal, window, remote, run, driving, poller = await asked_while_watched(tmp_path, slow_to_withdraw,
                                                                              watch=False)
    cid = asked(window, run.run_id)[0].confirmation_id
    window.request_control(run.run_id, "answer", confirmation_id=cid, outcome="approved")
    await asyncio.wait_for(withdrawing.wait(), 10)
    run.pause("paused by the operator")
    assert await asyncio.wait_for(driving, 10) is RunState.PAUSED
    poller.cancel()
    state_at = max(e.seq for e in journal.events(run.run_id) if e.type == "run_state_changed")
    later = [e.type for e in journal.events(run.run_id) if e.seq > state_at]
    assert "goal_added" not in later and "model_called" not in later, later
    journal.close()
    window.close()


async def test_a_run_resumed_while_its_last_batch_waits_for_the_journal_is_driven_on(tmp_path):
    """Another process holds the journal's write lock as the run pauses; a resume taken meanwhile
    must not leave the run active with nobody driving it."""
    import sqlite3

    path = tmp_path / "j.sqlite3"
    journal = Journal(path)
    remote = Remote(journal)
    model = FunctionModel(lambda r: well_behaved(r, width=2), delay=0.1)
    run = Run.create("Write a report", model, sink=journal)
    driving = asyncio.ensure_future(run.drive())
    await until(lambda: len(model.calls) >= 2)
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # another process writing, for a while
    run.pause("paused by the operator")
    await asyncio.sleep(0.3)  # the drive is waiting to write its last batch
    remote.carry_out(run, "resume", {})
    await asyncio.sleep(0.5)
    blocker.execute("COMMIT")
    blocker.close()
    assert await asyncio.wait_for(driving, 20) is RunState.COMPLETE
    journal.close()


def test_a_watcher_whose_process_died_or_whose_clock_runs_ahead_does_not_count(tmp_path):
    import socket
    import time

    journal = Journal(tmp_path / "j.sqlite3")
    run = Run.create("Write a report", FunctionModel(lambda r: well_behaved(r)), sink=journal)
    dead = subprocess.Popen(["true"])
    dead.wait()
    now = time.time()
    rows = [("killed", socket.gethostname(), dead.pid, now), ("ahead", "elsewhere", 1, now + 120),
            ("old", "elsewhere", 1, now - 600)]
    for watcher, host, pid, seen in rows:
        journal._db.execute("INSERT INTO watchers VALUES (?,?,?,?,?)", (run.run_id, watcher, host, pid, seen))
    assert journal.watchers(run.run_id) == 0
    journal.watch(run.run_id, "live")  # this process: counted; the long-gone word is cleared
    assert journal.watchers(run.run_id) == 1
    left = {w for (w,) in journal._db.execute("SELECT watcher FROM watchers")}
    assert left == {"killed", "ahead", "live"}
    journal.close()
