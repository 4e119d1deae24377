"""Two goalgui processes on one journal (issue 13): both drive runs side by side while a third reads,
and nothing is lost or corrupted; a second window watches a run another process drives, and cannot
take it over."""

import json
import subprocess
import time

from goalgui.engine import RunState
from goalgui.journal import Journal

from .conftest import cli_env, goalgui_cmd
from .test_ui_controls import until

SLOW = {"rules": [{"purpose": "actionable", "depth": 0, "reply": "NO"},
                  {"purpose": "decompose", "reply": ["Find the first fact", "Find the second fact", "Draft it"]}],
        "defaults": {"actionable": "YES", "execute": "a concrete result with 3 figures", "verify": "YES",
                     "summarize": "all done"},
        "latency": 0.15}


def _script(tmp_path):
    path = tmp_path / "slow.json"
    path.write_text(json.dumps(SLOW))
    return f"scripted:{path}"


def test_two_processes_drive_runs_on_one_journal_and_lose_nothing(tmp_path):
    env = cli_env(tmp_path / "home")
    model = _script(tmp_path)
    drivers = [subprocess.Popen(goalgui_cmd("run", f"Objective {i} for two processes", "--model", model, "--json"),
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
               for i in range(2)]
    reads = 0
    while any(p.poll() is None for p in drivers):  # a third process reads all the while
        out = subprocess.run(goalgui_cmd("runs", "--json"), env=env, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        reads += 1
    outs = [p.communicate(timeout=120) for p in drivers]
    assert [p.returncode for p in drivers] == [0, 0], [o[1][-1500:] for o in outs]
    assert reads >= 2
    reports = [json.loads(o[0]) for o in outs]
    check = subprocess.run(goalgui_cmd("journal", "check"), env=env, capture_output=True, text=True, timeout=60)
    assert check.returncode == 0 and "is sound" in check.stdout, check.stderr
    journal = Journal(tmp_path / "home" / "data" / "journal.sqlite3")
    try:
        for report in reports:
            run_id = report["run_id"]
            seqs = [e.seq for e in journal.events(run_id)]
            assert seqs == list(range(1, len(seqs) + 1))  # every event, in order, none lost
            assert journal.runs(run_id)[0]["last_seq"] == len(seqs)
            assert journal.load(run_id).report() == report  # the journal replays to what the process said
            assert report["state"] == "complete" and len(report["goals"]) == 4
    finally:
        journal.close()


def test_a_second_window_watches_a_run_another_process_drives_and_cannot_take_it(qtbot, qloop, tmp_path):
    from goalgui.settings import Settings
    from goalgui.ui.main_window import MainWindow

    env = cli_env(tmp_path / "home")
    slow = dict(SLOW, latency=0.6)
    script = tmp_path / "slower.json"
    script.write_text(json.dumps(slow))
    driver = subprocess.Popen(goalgui_cmd("run", "Objective driven elsewhere", "--model", f"scripted:{script}"),
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        first = driver.stdout.readline()
        run_id = first.split()[1].rstrip(":")
        journal = Journal(tmp_path / "home" / "data" / "journal.sqlite3")
        window = MainWindow(journal, Settings())
        qtbot.addWidget(window)
        window.show()
        window.show_journaled(run_id)  # watched: read from the journal while the other process writes
        until(qloop, lambda: window.tree_model.rowCount() == 1, timeout=20)
        assert window.current is None
        assert window.resume_journaled(run_id) is None  # driven elsewhere: not taken over
        until(qloop, lambda: "driven by" in window.statusBar().currentMessage() or
              "is active" in window.statusBar().currentMessage(), timeout=10)
        _out, err = driver.communicate(timeout=120)
        assert driver.returncode == 0, err[-1500:]
        deadline = time.monotonic() + 10
        while journal.runs(run_id)[0]["state"] != RunState.COMPLETE.value and time.monotonic() < deadline:
            time.sleep(0.05)
        assert journal.runs(run_id)[0]["state"] == "complete"
        window.close()
        journal.close()
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.communicate()


def test_another_process_opening_the_journal_never_takes_the_wal_from_a_live_writer(tmp_path):
    """Found by a hostile review: a process that opened an existing journal re-created its file to make
    it private, which closed a descriptor and so dropped its own SQLite locks; the next process to close
    then took the WAL for unused and deleted it under the live writer, and runs were lost."""
    env = cli_env(tmp_path / "home")
    model = _script(tmp_path)
    fast = tmp_path / "fast.json"
    fast.write_text(json.dumps({**SLOW, "latency": 0}))
    assert subprocess.run(goalgui_cmd("run", "First, so the journal exists", "--model", f"scripted:{fast}"),
                          env=env, capture_output=True, timeout=120).returncode == 0
    slow = subprocess.Popen(goalgui_cmd("run", "The slow one", "--model", model, "--json"), env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    time.sleep(1.5)  # it is writing
    for _ in range(3):
        assert subprocess.run(goalgui_cmd("runs"), env=env, capture_output=True, timeout=60).returncode == 0
    other = subprocess.run(goalgui_cmd("run", "The quick one", "--model", f"scripted:{fast}", "--json"), env=env,
                           capture_output=True, text=True, timeout=120)
    out, err = slow.communicate(timeout=120)
    assert slow.returncode == 0 and other.returncode == 0, err[-1500:]
    listed = {r["objective"]: r["state"] for r in json.loads(
        subprocess.run(goalgui_cmd("runs", "--json"), env=env, capture_output=True, text=True).stdout)}
    assert listed == {"First, so the journal exists": "complete", "The slow one": "complete",
                      "The quick one": "complete"}
    check = subprocess.run(goalgui_cmd("journal", "check"), env=env, capture_output=True, text=True, timeout=60)
    assert check.returncode == 0 and "is sound" in check.stdout, check.stderr
    assert json.loads(out)["state"] == "complete"
