"""What a hostile review broke (issue 9), through the real command and journal."""

import json
import os
import re
import signal
import stat
import subprocess
import time

import pytest

from goalgui.engine import RunState

from .conftest import cli_env, goalgui_cmd
from .test_cli import FAST, cli  # noqa: F401  (the fixture)

# anything that acts on a terminal: ESC, BEL, CSI in its 8-bit form, a bidi override
ACTING = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
HOSTILE = "Tidy\x1b]0;pwned\x07 the \x1b[2J\x1b[1Afiles\u202e \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"


def test_foreign_text_never_reaches_the_terminal_raw(cli, tmp_path):
    script = tmp_path / "hostile.json"
    script.write_text(json.dumps({
        "rules": [{"purpose": "actionable", "depth": 0, "reply": "NO"},
                  {"purpose": "decompose", "reply": [HOSTILE, "Find\nrun ffffffffffff complete 9 9 forged"]}],
        "defaults": {"actionable": "YES", "execute": "done \x1b[31mred", "verify": "YES",
                     "summarize": "wrap\x1b[2K-up\nsecond line"}}))
    objective = "Clean the disk\nffffffffffff complete    1    1 2026-01-01 00:00  forged row"
    out = cli("run", objective, "--model", f"scripted:{script}")
    assert out.returncode == 0, out.stderr
    run_id = re.search(r"run ([0-9a-f]{12})", out.stdout).group(1)
    listing = cli("runs")
    exported = cli("export", run_id, "--format", "md")
    for shown in (out.stdout, out.stderr, listing.stdout, exported.stdout):
        assert not ACTING.search(shown), repr(ACTING.search(shown))
    assert "\\x1b]0;pwned\\x07" in out.stdout  # made visible, not dropped
    assert not [line for line in listing.stdout.splitlines() if line.startswith("ffffffffffff")]  # no forged row
    assert [line for line in listing.stdout.splitlines() if "Clean the disk\\nffff" in line][0].startswith(run_id)
    assert "wrap\\x1b[2K-up\nsecond line" in exported.stdout  # a summary keeps its lines, not its controls


def test_a_closed_pipe_is_a_quiet_exit(cli):
    for _ in range(3):
        assert cli("run", "Answer the question", "--model", cli.fast).returncode == 0
    proc = subprocess.Popen(goalgui_cmd("runs"), cwd=cli.tmp, env=cli_env(cli.home), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.read(10)
    proc.stdout.close()  # what `goalgui runs | head -c 10` does
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(30) == 0 and err == "", err


def test_sigterm_and_sighup_pause_the_run_with_a_reason(cli):
    for sig in (signal.SIGTERM, signal.SIGHUP):
        with subprocess.Popen(goalgui_cmd("run", "Answer the question", "--model", cli.slow, "--json"), cwd=cli.tmp,
                              env=cli_env(cli.home), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
            time.sleep(3)
            proc.send_signal(sig)
            stdout, stderr = proc.communicate(timeout=30)
        report = json.loads(stdout)
        assert report["state"] == "paused", stderr
        assert report["stop_reason"] == f"interrupted: {sig.name}"
        assert proc.returncode == 6  # paused


def test_files_that_hold_run_content_are_private(cli):
    assert cli("run", "Answer the question", "--model", cli.fast).returncode == 0
    assert cli("profiles", "add", "p1", "--kind", "openai", "--base-url", "http://127.0.0.1:9/v1",
               "--model", "m", "--key-env", "P1_KEY").returncode == 0
    exported = cli.tmp / "report.md"
    run_id = json.loads(cli("runs", "--json").stdout)[0]["run_id"]
    assert cli("export", run_id, "--format", "md", "-o", str(exported)).returncode == 0
    seen = []
    for root, dirs, files in os.walk(cli.home):
        for name in dirs:
            mode = stat.S_IMODE(os.stat(os.path.join(root, name)).st_mode)
            assert mode & 0o077 == 0, (os.path.join(root, name), oct(mode))
        for name in files:
            path = os.path.join(root, name)
            mode = stat.S_IMODE(os.stat(path).st_mode)
            assert mode & 0o077 == 0, (path, oct(mode))
            seen.append(name)
    assert {"journal.sqlite3", "settings.toml", "goalgui.log"} <= set(seen), seen


def test_a_second_ctrl_c_ends_a_run_whose_model_blocks_the_loop(cli, tmp_path):
    plugin = tmp_path / "stuck.py"
    plugin.write_text(
        "import time\n"
        "class Stuck:\n"
        "    name = 'stuck'\n"
        "    async def complete(self, request):\n"
        "        time.sleep(120)  # blocks the event loop: no asyncio signal handler can run\n")
    with subprocess.Popen(goalgui_cmd("run", "Answer the question", "--model", f"python:{plugin}:Stuck"),
                          cwd=cli.tmp, env=cli_env(cli.home), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as proc:
        time.sleep(3)
        proc.send_signal(signal.SIGINT)
        time.sleep(0.5)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=20)
    assert time.monotonic() - t0 < 10
    assert proc.returncode == 6 and "Ctrl+C again: stopping now" in stderr
    run = json.loads(cli("runs", "--json").stdout)[0]
    assert run["state"] == "paused" and run["stop_reason"].startswith("interrupted"), run


async def one_goal_against(journal, body: bytes):
    """A one-goal run on an OpenAI-compatible server on loopback that answers every call with `body`."""
    from goalgui.engine import Limits, Run
    from goalgui.providers.openai import OpenAIModel
    from goalgui.settings import Profile

    from .httpserver import ScriptedServer

    with ScriptedServer() as server:
        server.default = ("reply", 200, body)
        profile = Profile(name="p", kind="openai", base_url=server.url, model="m", read_timeout=5,
                          connect_timeout=1, structured_output="none").validated()
        model = OpenAIModel(profile, "k")
        run = Run.create("Say hello", model, sink=journal, limits=Limits(max_depth=0))
        state = await run.drive()
        await model.aclose()
    return run, state


HOSTILE_BODIES = {
    "usage 1e20": b'{"model": "m", "choices": [{"message": {"content": "hi"}}],'
                  b' "usage": {"prompt_tokens": 1e20, "completion_tokens": 1}}',
    "usage Infinity": b'{"model": "m", "choices": [{"message": {"content": "hi"}}],'
                      b' "usage": {"prompt_tokens": Infinity, "completion_tokens": 1}}',
    "usage negative": b'{"model": "m", "choices": [{"message": {"content": "hi"}}],'
                      b' "usage": {"prompt_tokens": -5, "completion_tokens": 1}}',
    "nested": b"[" * 100_000 + b"]" * 100_000,
}


@pytest.mark.parametrize("body", HOSTILE_BODIES)
async def test_impossible_numbers_and_bodies_from_a_provider_park_the_run(journal, body):
    run, state = await one_goal_against(journal, HOSTILE_BODIES[body])
    assert state is RunState.PAUSED
    assert run.record.stop_reason.startswith("bad response"), run.record.stop_reason
    assert journal.load(run.run_id).state is RunState.PAUSED  # journaled, nothing lost


async def test_a_lone_surrogate_from_a_provider_is_replaced_and_the_run_goes_on(journal):
    body = b'{"model": "m", "choices": [{"message": {"content": "YES bad \\ud800 char"}}], "usage": {}}'
    run, state = await one_goal_against(journal, body)
    assert state is RunState.COMPLETE
    root = journal.load(run.run_id).goals["g1"]
    assert root.result == "YES bad ? char"


PLUGIN_FAILURES = {
    "CancelledError": "raise asyncio.CancelledError()",
    "SystemExit": "raise SystemExit(0)",
    "KeyboardInterrupt": "raise KeyboardInterrupt()",
    "GeneratorExit": "raise GeneratorExit()",
    "text not a string": "return ModelReply(b'bytes')",
    "surrogate in a tool call": "return ModelReply('', [{'name': 'x', 'arguments': {'a': object()}}])",
    "usage a float": "return ModelReply('YES', usage=Usage(float('inf'), 1))",
}


@pytest.mark.parametrize("failure", PLUGIN_FAILURES)
def test_whatever_a_python_model_raises_or_returns_parks_the_run_with_a_reason(cli, tmp_path, failure):
    plugin = tmp_path / "bad.py"
    plugin.write_text(
        "import asyncio\n"
        "from goalgui.engine import ModelReply, Usage\n"
        "class Bad:\n"
        "    name = 'bad'\n"
        "    async def complete(self, request):\n"
        f"        {PLUGIN_FAILURES[failure]}\n")
    out = cli("run", "Answer the question", "--model", f"python:{plugin}:Bad", "--json")
    assert out.returncode == 6, (out.returncode, out.stderr)  # paused: never a false success
    report = json.loads(out.stdout)
    assert report["state"] == "paused" and report["stop_reason"].startswith("bad response"), report["stop_reason"]
    assert "Traceback" not in out.stderr
    assert all(g["status"] == "pending" for g in report["goals"])  # resumable, nothing settled


def test_downtime_of_a_killed_run_is_not_charged_as_active_time(cli):
    with subprocess.Popen(goalgui_cmd("run", "Answer the question", "--model", cli.slow, "--time-budget", "4s"),
                          cwd=cli.tmp, env=cli_env(cli.home), stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        time.sleep(2)
        proc.kill()  # kill -9: no chance to journal a pause
        proc.communicate()
    run_id = json.loads(cli("runs", "--json").stdout)[0]["run_id"]
    time.sleep(3)  # downtime: with it, 2 + 3 s would be past the 4 s budget
    before = json.loads(cli("export", run_id, "--format", "json").stdout)
    assert before["state"] == "paused" and before["stop_reason"].startswith("interrupted")
    assert before["metrics"]["active_seconds"] < 2.5  # up to its last event, not to now
    out = cli("resume", run_id, "--model", cli.fast, "--json")
    report = json.loads(out.stdout)
    assert report["state"] == "complete", report["stop_reason"]  # not "budget: time" at once
    assert report["metrics"]["active_seconds"] < 10


def _digest(path):
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_someone_elses_file_is_refused_and_left_byte_for_byte(cli, tmp_path):
    import sqlite3

    other = tmp_path / "other.db"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE accounts (id INTEGER PRIMARY KEY, name TEXT)")
    db.execute("INSERT INTO accounts (name) VALUES ('alice')")
    db.commit()
    db.close()
    text = tmp_path / "notes.txt"
    text.write_text("my notes\n")
    for path in (other, text):
        before, mode = _digest(path), os.stat(path).st_mode
        for args in (("runs",), ("run", "Answer the question", "--model", cli.fast)):
            out = cli(*args, "--journal", str(path))
            assert out.returncode == 2 and "is not a goalgui journal" in out.stderr, out.stderr
        assert _digest(path) == before and os.stat(path).st_mode == mode
        assert not os.path.exists(f"{path}-wal")
    folder = tmp_path / "a-folder"
    folder.mkdir()
    out = cli("runs", "--journal", str(folder))
    assert out.returncode == 2 and "is a directory" in out.stderr


def test_a_damaged_journal_is_named_never_quoted_never_written_and_can_be_recovered(cli, tmp_path):
    journal = tmp_path / "j.sqlite3"
    for _ in range(2):
        assert cli("run", "Answer the question", "--model", cli.fast, "--journal", str(journal)).returncode == 0
    run_id = json.loads(cli("runs", "--json", "--journal", str(journal)).stdout)[0]["run_id"]
    assert cli("journal", "check", "--journal", str(journal)).returncode == 0
    raw = bytearray(journal.read_bytes())
    at = raw.rfind(b"a concrete result")
    raw[at:at + 64] = b"\xff" * 64  # 64 bytes of garbage inside a stored event
    journal.write_bytes(bytes(raw))
    before = _digest(journal)
    out = cli("export", run_id, "--journal", str(journal))
    assert out.returncode == 2 and f"the journal {journal} is damaged" in out.stderr, out.stderr
    assert "concrete" not in out.stderr and "internal error" not in out.stderr
    check = cli("journal", "check", "--journal", str(journal))
    assert check.returncode == 2 and "cannot be read" in check.stderr
    recovered = tmp_path / "recovered.sqlite3"
    out = cli("journal", "recover", "--journal", str(journal), "-o", str(recovered))
    assert out.returncode == 0, out.stderr
    runs = json.loads(cli("runs", "--json", "--journal", str(recovered)).stdout)
    assert len(runs) == 2  # both runs, the damaged one cut where its damage starts
    assert cli("journal", "check", "--journal", str(recovered)).returncode == 0
    assert _digest(journal) == before  # nothing was written into the damaged file

    truncated = tmp_path / "t.sqlite3"
    truncated.write_bytes(journal.read_bytes()[:6000])
    for args in (("runs",), ("export", run_id), ("run", "Answer the question", "--model", cli.fast)):
        out = cli(*args, "--journal", str(truncated))
        assert out.returncode == 2 and "is damaged" in out.stderr, (args, out.stderr)
    emptied = tmp_path / "e.sqlite3"
    emptied.write_bytes(b"")
    out = cli("runs", "--journal", str(emptied))
    assert out.returncode == 2 and "is damaged (the file is empty" in out.stderr
    assert emptied.stat().st_size == 0


def _killed_run(cli) -> str:
    """A run whose driver was killed mid-call: active in the journal, its owner gone."""
    with subprocess.Popen(goalgui_cmd("run", "Answer the question", "--model", cli.slow), cwd=cli.tmp,
                          env=cli_env(cli.home), stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        time.sleep(2)
        proc.kill()
        proc.communicate()
    return json.loads(cli("runs", "--json").stdout)[0]["run_id"]


def test_a_cancel_that_a_frozen_driver_never_took_is_withdrawn_not_obeyed_later(cli):
    with subprocess.Popen(goalgui_cmd("run", "Answer the question", "--model", cli.slow), cwd=cli.tmp,
                          env=cli_env(cli.home), stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        time.sleep(2)
        proc.send_signal(signal.SIGSTOP)
        run_id = json.loads(cli("runs", "--json").stdout)[0]["run_id"]
        out = cli("cancel", run_id)
        assert out.returncode == 2 and "the cancel was withdrawn" in out.stderr, out.stderr
        proc.send_signal(signal.SIGCONT)
        time.sleep(1)  # it polls its controls every 0.25 s: nothing there for it
        assert json.loads(cli("runs", "--json").stdout)[0]["state"] == "active"
        proc.kill()
        proc.communicate()
    report = json.loads(cli("resume", run_id, "--model", cli.fast, "--json").stdout)
    assert report["state"] == "complete"  # not cancelled by a request reported as failed


def test_a_dead_owner_whose_pid_was_reused_frees_the_run_once_its_lease_expired(cli):
    import sqlite3

    run_id = _killed_run(cli)
    db = sqlite3.connect(cli.home / "data" / "journal.sqlite3")
    db.execute("UPDATE runs SET owner_pid=?, lease_until=? WHERE run_id=?", (os.getppid(), time.time() - 1, run_id))
    db.commit()
    db.close()
    runs = json.loads(cli("runs", "--json").stdout)
    assert runs[0]["state"] == "paused" and runs[0]["stop_reason"].startswith("interrupted")
    out = cli("cancel", run_id)
    assert out.returncode == 0 and f"run {run_id} cancelled" in out.stdout, out.stderr


def test_two_resumes_at_once_one_drives_the_other_is_refused(cli):
    for _ in range(4):
        run_id = _killed_run(cli)
        procs = [subprocess.Popen(goalgui_cmd("resume", run_id, "--model", cli.fast, "--json"), cwd=cli.tmp,
                                  env=cli_env(cli.home), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(2)]
        outs = [p.communicate(timeout=60) for p in procs]
        codes = sorted(p.returncode for p in procs)
        assert codes == [0, 2], (codes, [o[1] for o in outs])
        loser = outs[[p.returncode for p in procs].index(2)][1]
        assert ("is being driven by process" in loser or "is complete: there is nothing to resume" in loser) \
            and "IntegrityError" not in loser, loser
        assert json.loads(cli("export", run_id).stdout)["state"] == "complete"


def test_credentials_in_a_base_url_are_refused_and_never_stored_or_logged(cli):
    for url in ("http://alice:PASSWORD-123@127.0.0.1:9/v1", "http://127.0.0.1:9/v1?api-key=PASSWORD-123",
                "http://127.0.0.1:9/v1?token=PASSWORD-123"):
        out = cli("profiles", "add", "p1", "--kind", "openai", "--base-url", url, "--model", "m",
                  "--key-env", "P1_KEY")
        assert out.returncode == 2 and "belongs in the keyring" in out.stderr, out.stderr
        assert "PASSWORD-123" not in out.stderr
    assert cli("profiles", "add", "p1", "--kind", "openai", "--base-url", "http://127.0.0.1:9/v1?api-version=2",
               "--model", "m", "--key-env", "P1_KEY").returncode == 0  # a harmless parameter is fine
    for root, _dirs, files in os.walk(cli.home):
        for name in files:
            with open(os.path.join(root, name), "rb") as f:
                assert b"PASSWORD-123" not in f.read(), name


def test_profiles_list_says_where_the_key_used_is_found(cli):
    assert cli("profiles", "add", "p1", "--kind", "openai", "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
               "--key-env", "UNUSEDVAR").returncode == 0
    env = dict(cli_env(cli.home), GOALGUI_P1_API_KEY="sk-x")
    env.pop("UNUSEDVAR", None)
    out = subprocess.run(goalgui_cmd("profiles", "list"), cwd=cli.tmp, env=env, capture_output=True, text=True)
    assert "(key: env GOALGUI_P1_API_KEY)" in out.stdout, out.stdout
    env.pop("GOALGUI_P1_API_KEY")
    out = subprocess.run(goalgui_cmd("profiles", "list"), cwd=cli.tmp, env=env, capture_output=True, text=True)
    assert "(key: none (env UNUSEDVAR is not set))" in out.stdout, out.stdout


def _gzip_bomb(megabytes: int) -> bytes:
    """A gzip body of zeros that inflates to `megabytes` MB (about 1,000 : 1), made a MB at a time."""
    import zlib

    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b"\0" * 1_000_000
    return b"".join(packer.compress(block) for _ in range(megabytes)) + packer.flush()


async def test_a_reply_that_inflates_past_the_cap_is_refused_as_it_streams():
    import resource

    from goalgui.engine import BadResponse

    from .httpserver import ScriptedServer
    from .test_providers import make, request

    bomb = _gzip_bomb(400)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with ScriptedServer() as server:
        server.default = ("reply", 200, bomb, {"content-encoding": "gzip"})
        model, _ = make("openai", server.url)
        with pytest.raises(BadResponse, match="over 16 MB"):
            await model.complete(request())
        await model.aclose()
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 100, grown_mb  # 400 MB inflated were never held
    with ScriptedServer() as server:  # an ordinary gzip reply reads as ever
        import gzip

        from .test_providers import openai_reply

        server.default = ("reply", 200, gzip.compress(json.dumps(openai_reply("fine")).encode()),
                          {"content-encoding": "gzip"})
        model, _ = make("openai", server.url)
        assert (await model.complete(request())).text == "fine"
        await model.aclose()


async def test_a_server_that_dribbles_is_cut_off_by_the_whole_request_timeout():
    from goalgui.engine import ProviderUnavailable
    from goalgui.providers.openai import OpenAIModel
    from goalgui.settings import Profile

    from .httpserver import ScriptedServer
    from .test_providers import Sleeps, request

    with ScriptedServer() as server:
        server.default = ("dribble", 1.0, 120)  # a byte a second: the read timeout of 5 s never trips
        profile = Profile(name="p", kind="openai", base_url=server.url, model="m", read_timeout=5,
                          connect_timeout=1, request_timeout=2).validated()
        model = OpenAIModel(profile, "k", sleep=Sleeps())
        t0 = time.monotonic()
        with pytest.raises(ProviderUnavailable, match="no whole reply within 2 s"):
            await model.complete(request())
        assert time.monotonic() - t0 < 15  # three tries of 2 s, not two minutes
        await model.aclose()


def test_the_profile_takes_the_request_timeout_and_reply_cap(cli):
    out = cli("profiles", "add", "p1", "--kind", "openai", "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
              "--key-env", "K", "--request-timeout", "30", "--max-reply-mb", "2")
    assert out.returncode == 0, out.stderr
    text = (cli.home / "config" / "settings.toml").read_text()
    assert "request_timeout = 30.0" in text and "max_reply_mb = 2.0" in text
    bad = cli("profiles", "add", "p2", "--kind", "openai", "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
              "--key-env", "K", "--request-timeout", "0")
    assert bad.returncode == 2 and "request timeout" in bad.stderr


async def test_a_full_disk_is_named_as_such_not_as_a_failed_rollback(tmp_path):
    from goalgui.engine import Limits, Run
    from goalgui.journal import Journal, JournalError

    from .models import FunctionModel, well_behaved

    journal = Journal(tmp_path / "j.sqlite3")
    pages = journal._db.execute("PRAGMA page_count").fetchone()[0]
    journal._db.execute(f"PRAGMA max_page_count={pages + 2}")  # what a full disk looks like to SQLite
    run = Run.create("Write a long report", FunctionModel(lambda r: well_behaved(r, width=4)), sink=journal,
                     limits=Limits(max_goals=200))
    with pytest.raises(JournalError) as caught:
        await run.drive()
    message = str(caught.value)
    assert "cannot be written: the disk is full" in message and "rollback" not in message, message
    journal.close()
