"""The driver's side of attach (issue 14, item 1): `goalgui.remote.Remote` carries out what other
processes leave in the journal, and races its own way of asking against their answers. Real
journal on disk; the other process is a second `Journal` on the same file, as a window would be."""

import asyncio
import logging

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


def test_answers_from_a_window_are_checked(tmp_path):
    journal = Journal(tmp_path / "j.sqlite3")
    remote = Remote(journal)
    loop = asyncio.new_event_loop()
    try:
        future = loop.create_future()
        remote._open["c1"] = (future, None)
        remote.answer({"confirmation_id": "c1", "outcome": "approved", "mode": "ask", "edits": {"always": True}})
        assert future.result() == ConfirmationAnswer.approve("ask", always=True)
    finally:
        loop.close()
    journal.close()
