"""Attach (issue 14, item 1), the rest of it: a window attached to a headless `goalgui run` pauses and
resumes it (the driver holds the paused run for the window), answers the confirmation the driver
waits on, and two attached windows see one question, the first answer winning. Real subprocess,
real journal, real windows (pytest-qt)."""

import asyncio
import signal
import subprocess
import time

from goalgui.engine import RunState
from goalgui.engine import events as ev
from goalgui.journal import Journal

from .conftest import cli_env, goalgui_cmd
from .models import split_script
from .test_ui_controls import until

PARTS = ["List what goes in", "Choose a bin", "Turn the heap", "Use the compost"]


def start_driver(tmp_path, latency=1.0):
    """`goalgui run` in ask mode on a slow scripted model, with no terminal and no --yes: before
    attach, nobody could have answered its split."""
    spec = split_script(tmp_path / "slow.json", PARTS, latency=latency)
    driver = subprocess.Popen(goalgui_cmd("run", "Write a short guide to composting", "--model", spec,
                                          "--max-goals", "10", "--permission-mode", "ask"),
                              env=cli_env(tmp_path / "home"), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    run_id = driver.stdout.readline().split()[1].rstrip(":")
    return driver, run_id


def journal_of(tmp_path):
    return Journal(tmp_path / "home" / "data" / "journal.sqlite3")


def attached_window(qtbot, qloop, journal, run_id):
    from goalgui.settings import Settings
    from goalgui.ui.main_window import MainWindow

    window = MainWindow(journal, Settings())
    qtbot.addWidget(window)
    window.show()
    until(qloop, lambda: journal.runs(run_id)[0]["state"] == "active", timeout=15)
    window.show_journaled(run_id)
    assert getattr(window.run, "attached", False)
    return window


def stop(driver):
    if driver.poll() is None:
        driver.kill()
        driver.communicate()


def test_an_attached_window_pauses_resumes_and_answers_a_headless_run(qtbot, qloop, tmp_path):
    driver, run_id = start_driver(tmp_path)
    journal = journal_of(tmp_path)
    try:
        window = attached_window(qtbot, qloop, journal, run_id)
        attached = window.run
        window.controls.pause_button.click()  # during the first model call: before any question
        until(qloop, lambda: attached.state is RunState.PAUSED, timeout=20)
        qloop.run_until_complete(asyncio.sleep(1.5))
        assert driver.poll() is None, "a paused run with a window attached is held, not let go"
        window._update_status()
        assert f"attached: driven by pid {driver.pid} on " in window.modeline.text()
        window.refresh_runs()  # held by a live driver: the Runs tab says so, and offers Attach
        assert window.runs_view.table.item(0, 3).text().startswith(f"paused (driven by pid {driver.pid} on ")
        assert window.controls.resume_button.isEnabled()
        window.controls.resume_button.click()  # carried out by the driving process
        until(qloop, lambda: attached.state is RunState.ACTIVE, timeout=20)
        # the split waits for a person; the driver has none, but this window watches: it asks here
        until(qloop, lambda: window.confirmer.open_dialogs, timeout=30)
        dialog = window.confirmer.open_dialogs[0]
        assert [dialog.subgoals.item(i).text() for i in range(dialog.subgoals.count())] == PARTS
        window._update_status()
        assert "WAITING FOR YOUR CONFIRMATION" in window.modeline.text()
        dialog.subgoals.item(3).setText("Spread the compost on the beds")
        dialog.approve_button.click()
        until(qloop, lambda: not window.confirmer.open_dialogs)
        # a budget raised and the mode changed here are carried out by the driver, and shown here
        raise_dialog = window.controls.open_raise_dialog()
        raise_dialog.goals.setValue(12)
        raise_dialog.ok_button.click()
        window.controls.mode.setCurrentText("auto-edit")
        until(qloop, lambda: attached.record.limits.max_goals == 12
              and attached.record.permission_mode == "auto-edit", timeout=20)
        out, err = driver.communicate(timeout=90)
        assert driver.returncode == 0, err[-2000:]
        assert "held for the window attached to it" in out and "confirmation approved" in out
        until(qloop, lambda: attached.state is RunState.COMPLETE, timeout=10)
        answers = [e for e in journal.events(run_id) if isinstance(e, ev.ConfirmationAnswered)]
        assert [a.outcome for a in answers] == ["approved"]
        record = journal.load(run_id)
        assert [g.text for g in record.goals.values()][1:] == PARTS[:3] + ["Spread the compost on the beds"]
        assert (record.limits.max_goals, record.permission_mode) == (12, "auto-edit")
        states = [(e.state, e.reason) for e in journal.events(run_id) if isinstance(e, ev.RunStateChanged)]
        assert ("paused", "paused from an attached window") in states and states[-1][0] == "complete"
        window.close()
    finally:
        stop(driver)
        journal.close()


def test_two_attached_windows_see_one_question_and_the_second_closes(qtbot, qloop, tmp_path):
    driver, run_id = start_driver(tmp_path, latency=1.5)
    first_journal, second_journal = journal_of(tmp_path), journal_of(tmp_path)
    try:
        first = attached_window(qtbot, qloop, first_journal, run_id)
        second = attached_window(qtbot, qloop, second_journal, run_id)
        until(qloop, lambda: first.confirmer.open_dialogs and second.confirmer.open_dialogs, timeout=30)
        assert first_journal.watchers(run_id) == 2
        asked_here = first.confirmer.open_dialogs[0].request.id
        assert second.confirmer.open_dialogs[0].request.id == asked_here
        second.confirmer.open_dialogs[0].decline_button.click()  # the first answer: from the second window
        until(qloop, lambda: not first.confirmer.open_dialogs and not second.confirmer.open_dialogs, timeout=10)
        out, err = driver.communicate(timeout=90)
        assert driver.returncode == 0, err[-2000:]
        answers = [(e.confirmation_id, e.outcome) for e in first_journal.events(run_id)
                   if isinstance(e, ev.ConfirmationAnswered)]
        assert answers == [(asked_here, "declined")]
        record = first_journal.load(run_id)
        assert len(record.goals) == 1 and "sub-goals declined" in record.goals["g1"].note
        first.close()
        second.close()
        assert first_journal.watchers(run_id) == 0
    finally:
        stop(driver)
        first_journal.close()
        second_journal.close()


def test_a_window_takes_over_a_run_whose_driver_ended(qtbot, qloop, tmp_path):
    """Ctrl+C ends the driver's hold: the run stays paused, and the attached window offers to resume it
    here, then drives it (asking in its own dialog)."""
    driver, run_id = start_driver(tmp_path)
    journal = journal_of(tmp_path)
    try:
        window = attached_window(qtbot, qloop, journal, run_id)
        window.controls.pause_button.click()
        until(qloop, lambda: window.run.state is RunState.PAUSED, timeout=20)
        time.sleep(0.5)
        driver.send_signal(signal.SIGINT)
        _out, err = driver.communicate(timeout=30)
        assert driver.returncode == 6, err[-1500:]
        until(qloop, lambda: window.run is None, timeout=10)  # shown from the journal now, as the window's to resume
        assert "has ended: resume it here" in window.statusBar().currentMessage()
        assert window.interrupted_bar.isVisibleTo(window)
        window.interrupted_resume.click()
        run = window.current
        assert run is not None and run.run_id == run_id and not getattr(run, "attached", False)
        until(qloop, lambda: window.confirmer.open_dialogs, timeout=30)
        window.confirmer.open_dialogs[0].approve_button.click()
        until(qloop, lambda: run.state is RunState.COMPLETE, timeout=60)
        assert journal.runs(run_id)[0]["state"] == "complete"
        window.close()
    finally:
        stop(driver)
        journal.close()
