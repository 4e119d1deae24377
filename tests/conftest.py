import os
import sys
from pathlib import Path

import pytest

# GUI tests run offscreen unless told otherwise (scripts/test.sh sets it too; this keeps a bare
# `pytest` run from trying a display that is not there)
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def isolated_home(tmp_path, monkeypatch):
    """Tests never touch the real home: settings, journal and logs live under tmp."""
    home = tmp_path / "home"
    monkeypatch.setenv("GOALGUI_HOME", str(home))
    return home


@pytest.fixture
def journal(tmp_path):
    from goalgui.journal import Journal

    j = Journal(tmp_path / "journal.sqlite3")
    yield j
    j.close()


@pytest.fixture
def qloop(qapp):
    """qasync's loop: the engine's tasks and Qt's events in one thread, as in the window."""
    import asyncio

    import qasync

    qapp.setQuitOnLastWindowClosed(False)  # a closing dialog must not end the loop under test

    class TestLoop(qasync.QEventLoop):
        """Tests start and stop the loop many times (`until`). qasync's run_until_complete ends
        by processing Qt's events once more with no running loop set, and a task whose step runs
        then dies ("no running event loop" from its next sleep or thread hop): an attached
        window's poll stopped for good that way. Here that last pass runs with the loop set."""

        def run_until_complete(self, future):
            future = asyncio.ensure_future(future, loop=self)
            future.add_done_callback(lambda _f: self.stop())
            try:
                self.run_forever()
            finally:
                asyncio.events._set_running_loop(self)
                try:
                    qapp.processEvents()
                finally:
                    asyncio.events._set_running_loop(None)
            if not future.done():
                raise RuntimeError("Event loop stopped before Future completed.")
            return future.result()

    loop = TestLoop(qapp, already_running=False)
    asyncio.set_event_loop(loop)
    yield loop
    loop.run_until_complete(asyncio.sleep(0))
    loop.close()
    asyncio.set_event_loop(None)


def goalgui_cmd(*args):
    return [sys.executable, "-m", "goalgui", *args]


def cli_env(home: Path) -> dict:
    env = dict(os.environ)
    env["GOALGUI_HOME"] = str(home)
    env["PYTHONPATH"] = str(ROOT)
    # as a person's shell has it: output into a pipe is buffered (a bare machine has no
    # PYTHONUNBUFFERED; a test that passes only with it hides a line that arrives late)
    env.pop("PYTHONUNBUFFERED", None)
    return env


def pytest_sessionfinish(session, exitstatus):
    """A skipped test is a failure here: tests that need a server or a display run in CI."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and reporter.stats.get("skipped") and exitstatus == 0:
        session.exitstatus = 1
