"""Attach (issue 14, item 1): the window follows a run that `goalgui run` drives in another process,
live from the journal, and steers it through the journal's control requests."""

import subprocess

from goalgui.engine import RunState
from goalgui.journal import Journal

from .conftest import cli_env, goalgui_cmd
from .models import split_script
from .test_ui_controls import until

PARTS = ["List what goes in", "Choose a bin", "Turn the heap", "Use the compost"]


def test_a_window_attaches_to_a_headless_run_follows_it_and_pauses_it(qtbot, qloop, tmp_path):
    from goalgui.settings import Settings
    from goalgui.ui.main_window import MainWindow

    env = cli_env(tmp_path / "home")
    spec = split_script(tmp_path / "slow.json", PARTS, latency=0.5)
    driver = subprocess.Popen(goalgui_cmd("run", "Write a short guide to composting", "--model", spec,
                                          "--max-goals", "10"),
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    journal = Journal(tmp_path / "home" / "data" / "journal.sqlite3")
    try:
        run_id = driver.stdout.readline().split()[1].rstrip(":")
        window = MainWindow(journal, Settings())
        qtbot.addWidget(window)
        window.show()
        until(qloop, lambda: journal.runs(run_id)[0]["state"] == "active", timeout=10)
        window.refresh_runs()  # the Runs tab says who drives it, and offers Attach
        view = window.runs_view
        state = view.table.item(0, 3).text()
        assert state.startswith(f"active (driven by pid {driver.pid} on ")
        view.table.selectRow(0)
        assert view.open_button.text() == "Attach"
        view.open_button.click()
        attached = window.run
        assert getattr(attached, "attached", False) and window.current is None
        assert "attached to run" in window.statusBar().currentMessage()
        # it follows: the split appears, then a goal is done, without reopening anything
        until(qloop, lambda: len(attached.record.goals) == 5, timeout=20)
        until(qloop, lambda: attached.record.goals["g2"].status.value == "done", timeout=20)
        until(qloop, lambda: window.tree_model.rowCount() == 1 and window.shown_seq == attached.record.last_seq)
        assert window.controls.pause_button.isEnabled()
        window.controls.pause_button.click()  # carried out by the driving process
        until(qloop, lambda: attached.state is RunState.PAUSED, timeout=20)
        assert attached.record.stop_reason == "paused from an attached window"
        assert driver.poll() is None  # held for the window watching it
        window.close()  # the window did not drive it: closing asks nothing and changes nothing
        _out, err = driver.communicate(timeout=60)  # with nobody watching, the driver lets it go
        assert driver.returncode == 6, err[-1500:]  # the driver's exit code for a paused run
        assert journal.runs(run_id)[0]["state"] == "paused"
        assert journal.runs(run_id)[0]["stop_reason"] == "paused from an attached window"
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.communicate()
        journal.close()
