"""The journal where the disk or another process is in the way (issue 9, item 6): a folder that
cannot be written, a write lock held elsewhere, files left by an older goalgui."""

import asyncio
import contextlib
import hashlib
import json
import os
import stat
import subprocess
import sys
import time

import pytest

from goalgui.engine import Limits, Run, RunState
from goalgui.engine import recorder as recorder_module
from goalgui.journal import Journal, JournalError

from .conftest import ROOT, cli_env, goalgui_cmd
from .models import FunctionModel, well_behaved
from .test_cli import cli  # noqa: F401  (the fixture)



@contextlib.contextmanager
def lock_held(path, seconds: float):
    """Another process holding the journal's write lock for `seconds` from now."""
    holder_cmd = [sys.executable, str(ROOT / "benchmarks" / "lock_holder.py"), str(path), str(seconds)]
    with subprocess.Popen(holder_cmd, stdout=subprocess.PIPE,
                          text=True) as holder:
        assert holder.stdout.readline().strip() == "held"
        try:
            yield
        finally:
            holder.wait(timeout=30)


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_journal_in_a_read_only_folder_is_read_and_never_written(cli, tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "j.sqlite3"
    made = cli("run", "Answer the question", "--model", cli.fast, "--journal", str(path), "--json")
    assert made.returncode == 0, made.stderr
    run_id = json.loads(made.stdout)["run_id"]
    assert not (folder / "j.sqlite3-wal").exists()  # closed cleanly: SQLite must make -shm to read it
    before = _digest(path)
    # a real read-only mount of the folder (root ignores permission bits; a mount it cannot)
    from goalgui.tools.shell import bwrap_command

    assert bwrap_command(), "bubblewrap must run here (CI installs it)"
    bwrap = [*bwrap_command(), "--bind", "/", "/", "--ro-bind", str(folder), str(folder)]

    def readonly(*args):
        return subprocess.run(bwrap + goalgui_cmd(*args, "--journal", str(path)), cwd=cli.tmp,
                              env=cli_env(cli.home), capture_output=True, text=True, timeout=120)

    listed = readonly("runs", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [r["run_id"] for r in json.loads(listed.stdout)] == [run_id]
    exported = readonly("export", run_id)
    assert exported.returncode == 0 and json.loads(exported.stdout)["state"] == "complete", exported.stderr
    checked = readonly("journal", "check")
    assert checked.returncode == 0 and "sound" in checked.stdout, checked.stderr
    for args in (("run", "Answer again", "--model", cli.fast), ("resume", run_id), ("cancel", run_id)):
        refused = readonly(*args)
        assert refused.returncode == 2, (args, refused.stderr)
        lines = refused.stderr.strip().splitlines()
        assert len(lines) == 1 and "cannot be written: it is read-only" in lines[0] \
            and "internal error" not in lines[0], refused.stderr
    assert _digest(path) == before and sorted(os.listdir(folder)) == ["j.sqlite3"]


async def test_a_write_lock_held_by_another_process_never_freezes_the_loop(tmp_path):
    """Another process holds the write lock for 3 s in the middle of a run: the loop keeps
    turning (before, each commit waited up to 10 s on it), and once the lock is let go every event
    lands, in order, none twice."""
    path = tmp_path / "j.sqlite3"
    journal = Journal(path)
    gaps, stop = [], asyncio.Event()

    async def tick():
        last = time.monotonic()
        while not stop.is_set():
            await asyncio.sleep(0.005)
            now = time.monotonic()
            gaps.append(now - last)
            last = now

    with lock_held(path, 3):
        ticker = asyncio.create_task(tick())
        await asyncio.sleep(0.05)  # turning before the run's first commit
        started = time.monotonic()
        run = Run.create("Write a long report", FunctionModel(lambda r: well_behaved(r, width=3)), sink=journal,
                         limits=Limits(max_goals=60))
        try:
            state = await run.drive()
        finally:
            stop.set()
            await ticker
    assert state is RunState.COMPLETE
    assert time.monotonic() - started >= 2.5  # the run really waited for the lock to end
    # the loop never stood still for anything near the lock's 3 s (a generous bound, not a timing test)
    assert max(gaps) < 1.5, max(gaps)
    seqs = [e.seq for e in journal.events(run.run_id)]
    assert seqs == list(range(1, run.record.last_seq + 1))
    assert journal.load(run.run_id).report(0)["goals"] == run.report()["goals"]
    journal.close()


async def test_a_lock_held_past_the_give_up_time_fails_the_journal_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr(recorder_module, "BUSY_GIVE_UP", 0.5)
    path = tmp_path / "j.sqlite3"
    journal = Journal(path)
    run = Run.create("Write a long report", FunctionModel(lambda r: well_behaved(r, width=3)), sink=journal)
    with lock_held(path, 4), pytest.raises(JournalError) as caught:
        await run.drive()
    message = str(caught.value)
    assert "another process has held its write lock" in message and "\n" not in message, message
    journal.close()


def test_a_control_poll_on_a_busy_journal_waits_on_nothing(tmp_path):
    """What an event loop's thread asks of a busy journal comes back at once, empty."""
    path = tmp_path / "j.sqlite3"
    journal = Journal(path)
    run = Run.create("Say hello", FunctionModel(lambda r: well_behaved(r)), sink=journal, limits=Limits(max_depth=0))
    asyncio.run(run.drive())
    journal.request_control(run.run_id, "skip")  # waiting: taking it writes

    async def poll():
        began = time.monotonic()
        taken = journal.take_controls(run.run_id)
        return taken, time.monotonic() - began

    with lock_held(path, 2):
        taken, took = asyncio.run(poll())
        assert taken == [] and took < 1.0, took
        journal.request_control(run.run_id, "pause")  # off the loop, it waits for the lock, then writes
    assert journal.take_controls(run.run_id) == [("skip", {}), ("pause", {})]
    journal.close()


def test_an_older_journals_side_files_are_made_private(tmp_path):
    path = tmp_path / "j.sqlite3"
    Journal(path).close()
    other = __import__("sqlite3").connect(path)  # another process's connection keeps -wal and -shm
    other.execute("PRAGMA journal_mode=WAL")
    other.execute("INSERT INTO texts (hash, text) VALUES ('a', 'b')")
    other.commit()
    for name in ("j.sqlite3", "j.sqlite3-wal", "j.sqlite3-shm"):
        os.chmod(tmp_path / name, 0o644)  # as a goalgui before issue 9 left them
    journal = Journal(path)
    for name in ("j.sqlite3", "j.sqlite3-wal", "j.sqlite3-shm"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600, name
    journal.close()
    other.close()


def test_processes_opening_a_new_journal_at_once_never_find_it_empty(tmp_path):
    """A journal is made whole beside its name and linked into place: another process opening it
    at that moment used to find a file of 0 bytes, which reads as an emptied (damaged) journal."""
    path = tmp_path / "new.sqlite3"
    code = ("import sys; from goalgui.journal import Journal; j = Journal(sys.argv[1]); j.runs(); j.close(); "
            "print('ok')")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}) for _ in range(6)]
    outs = [p.communicate(timeout=60) for p in procs]
    assert [o[0].strip() for o in outs] == ["ok"] * 6, [o[1][-300:] for o in outs]
    assert sorted(os.listdir(tmp_path)) == ["new.sqlite3"]  # no temporary file left behind
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
