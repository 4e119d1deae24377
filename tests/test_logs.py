"""The log holds what happened, never what a run is about (issue 13; seed 001: telemetry excludes
the payload): after a real run against a hostile server that echoes the prompt and the key back in
its errors, no objective, criteria, prompt, result or key is in any file of the log dir, while the
journal holds the run's content as it should."""

import json
import logging
import os
import subprocess

from goalgui.logs import PrivateFormatter

from .conftest import cli_env, goalgui_cmd
from .httpserver import ScriptedServer

OBJECTIVE = "Summarise OBJECTIVE-MARKER-3141 for the team"
CRITERIA = "CRITERIA-MARKER-2718 is named"
KEY = "sk-KEY-MARKER-1618"
RESULT = "RESULT-MARKER-5772"


def test_a_run_leaves_no_objective_prompt_result_or_key_in_the_logs(tmp_path):
    home = tmp_path / "home"
    env = dict(cli_env(home), SRV_KEY=KEY)
    with ScriptedServer() as server:
        def hostile(_path, body):
            """The first two tries of each call fail with the request and its key echoed back."""
            seen = server.requests[-1]
            if len(server.requests) % 3 != 0:
                return ("reply", 503, {"error": {"message": f"overloaded: {json.dumps(body)} "
                                                            f"auth={seen['headers'].get('Authorization')}"}})
            content = json.dumps({"answer": "YES", "reason": RESULT, "subgoals": []})
            return ("reply", 200, {"choices": [{"index": 0, "finish_reason": "stop",
                                                "message": {"role": "assistant", "content": f"{content}"}}],
                                   "usage": {"prompt_tokens": 9, "completion_tokens": 9}})

        server.default = hostile
        add = subprocess.run(goalgui_cmd("profiles", "add", "srv", "--kind", "openai", "--base-url",
                                         server.url + "/v1", "--model", "m", "--key-env", "SRV_KEY"),
                             env=env, capture_output=True, text=True, timeout=60)
        assert add.returncode == 0, add.stderr
        out = subprocess.run(goalgui_cmd("run", OBJECTIVE, "--criteria", CRITERIA, "--model", "openai:srv",
                                         "--max-depth", "0", "--json"),
                             env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout)
    assert RESULT in report["goals"][0]["result"]  # the content is in the journal, where it belongs
    assert any(r["headers"].get("Authorization") == f"Bearer {KEY}" for r in server.requests)
    logs = home / "logs"
    text = "".join(p.read_text(errors="replace") for p in logs.rglob("*") if p.is_file())
    assert "try 2 of" in text  # the failures were logged: the check below has something to look at
    for marker in ("OBJECTIVE-MARKER", "CRITERIA-MARKER", "KEY-MARKER", "RESULT-MARKER"):
        assert marker not in text, marker
    for p in logs.rglob("*"):
        if p.is_file():
            assert oct(p.stat().st_mode & 0o777) == "0o600", p


def test_exception_messages_and_long_arguments_are_withheld(tmp_path):
    """Whatever a caller logs: an exception argument is its type, a traceback its frames and types,
    a long or multi-line argument its length."""
    formatter = PrivateFormatter("%(message)s")
    try:
        try:
            raise KeyError("a prompt: SECRET-A")
        except KeyError as exc:
            raise ValueError("the objective SECRET-B") from exc
    except ValueError as raised:
        exc = raised
        record = logging.LogRecord("goalgui", logging.WARNING, __file__, 1, "failed %s on %s with %s",
                                   (exc, "goal g3", "x" * 500), (type(exc), exc, exc.__traceback__))
    line = formatter.format(record)
    assert "failed ValueError on goal g3 with [500 characters]" in line
    assert "SECRET" not in line and "builtins.ValueError" in line and "builtins.KeyError" in line
    assert "test_logs.py" in line and os.path.expanduser("~") not in line.replace("~", "")
    assert record.args[0] is exc  # the record itself is untouched for other handlers


def test_containers_other_libraries_messages_and_bad_records_are_withheld(tmp_path, capsys):
    """Found by a hostile review: containers were logged as their repr, another library's message
    (asyncio's "Task exception was never retrieved" with the exception's repr) as it was, and a record
    whose arguments did not fit its format string printed them on stderr."""
    from goalgui.logs import PrivateRotatingFileHandler

    handler = PrivateRotatingFileHandler(tmp_path / "goalgui.log", maxBytes=10_000, backupCount=1)
    handler.setFormatter(PrivateFormatter("%(name)s %(message)s"))
    for name, msg, args in (("goalgui.x", "keys %s", ({"api_key": "SECRET-K"},)),
                            ("goalgui.x", "errors %s", ([ValueError("SECRET-E")],)),
                            ("asyncio", "Task exception was never retrieved\nfuture: <Task exception=ValueError('SECRET-A')>", ()),
                            ("goalgui.x", ValueError("SECRET-M"), ()),
                            ("goalgui.x", "two %s %s", ("SECRET-F",))):
        handler.handle(logging.LogRecord(name, logging.ERROR, __file__, 1, msg, args, None))
    handler.close()
    text = (tmp_path / "goalgui.log").read_text()
    assert "SECRET" not in text and "SECRET" not in capsys.readouterr().err
    assert "keys [dict of 1]" in text and "errors [list of 1]" in text and "asyncio [" in text
    assert "goalgui.x ValueError" in text
    group = ExceptionGroup("two", [KeyError("SECRET-1"), OSError("SECRET-2")])
    try:
        raise group
    except ExceptionGroup as raised:
        line = PrivateFormatter("%(message)s").format(logging.LogRecord(
            "goalgui", logging.ERROR, __file__, 1, "failed", (), (type(raised), raised, raised.__traceback__)))
    assert "builtins.KeyError" in line and "builtins.OSError" in line and "SECRET" not in line
