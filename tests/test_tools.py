"""Tools on a real temporary workspace, under the permission modes, through the real engine
(issue 10, parts 2 and 3). The shell runs in a real bubblewrap sandbox."""

import asyncio
import json
import os
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from goalgui.engine import ConfirmationAnswer, Limits, ModelReply, Outcome, Run, RunState, Usage
from goalgui.engine.tools import Toolbox
from goalgui.tools import ALL_TOOLS, default_toolbox
from goalgui.tools.calc import evaluate
from goalgui.tools.shell import sandbox_problem

from .models import FunctionModel
from .test_cli import cli  # noqa: F401  (the fixture)


def scripted_tools(*rounds, answer="done: see the workspace"):
    """A model that, executing, asks for each round of tool calls in turn, then answers; it
    judges the root actionable and verifies YES."""
    state = {"round": 0}
    seen: list[list[dict]] = []

    def fn(request):
        if request.purpose == "actionable":
            return "YES"
        if request.purpose == "verify":
            return "YES it is shown"
        if request.purpose == "execute":
            seen.append([m for m in request.messages if m.get("role") == "tool"])
            if request.tools and state["round"] < len(rounds):
                calls = [{"id": f"c{state['round']}-{i}", "name": name, "arguments": args}
                         for i, (name, args) in enumerate(rounds[state["round"]])]
                state["round"] += 1
                return ModelReply("", tool_calls=calls, usage=Usage(10, 5))
            return answer
        return "summary"

    model = FunctionModel(fn)
    model.tool_results = seen
    return model


async def drive(model, workspace, mode="auto", confirmer=None, **kwargs):
    extra = {"confirmer": confirmer} if confirmer is not None else {}
    run = Run.create("Make the file", model, tools=default_toolbox(workspace), permission_mode=mode,
                     limits=Limits(max_depth=0), **extra, **kwargs)
    state = await run.drive()
    return run, state


def calls_of(journal, run):
    return [e for e in journal.events(run.run_id) if e.type == "tool_called"]


async def test_a_goal_is_done_with_tools_and_every_call_is_journaled(journal, tmp_path):
    space = tmp_path / "ws"
    model = scripted_tools([("write_file", {"path": "notes/hello.txt", "content": "hello\n"})],
                           [("read_file", {"path": "notes/hello.txt"}), ("md5_file", {"path": "notes/hello.txt"})])
    run, state = await drive(model, space, sink=journal)
    assert state is RunState.COMPLETE
    assert (space / "notes" / "hello.txt").read_text() == "hello\n"
    calls = calls_of(journal, run)
    assert [(c.name, c.decision, c.ok, c.effect) for c in calls] == [
        ("write_file", "run", True, "write"), ("read_file", "run", True, "read"), ("md5_file", "run", True, "read")]
    assert calls[1].result == "hello\n" and calls[2].result.startswith("b1946ac92492d2347c6235b4d2611184")
    assert all(c.goal_id == "g1" for c in calls)
    assert run.record.metrics.tool_calls == 3 and run.record.options["workspace"] == str(space.resolve())
    # the model saw each result as a tool message answering its call
    assert [m["tool_call_id"] for m in model.tool_results[-1]] == ["c0-0", "c1-0", "c1-1"]


@pytest.mark.parametrize("path", ["../escape.txt", "/etc/goalgui-test", "link/escape.txt", "out.txt"])
async def test_paths_that_leave_the_workspace_are_refused_and_nothing_is_written(tmp_path, path):
    space, outside = tmp_path / "ws", tmp_path / "outside"
    space.mkdir()
    outside.mkdir()
    os.symlink(outside, space / "link")  # a folder link out of the workspace
    os.symlink(outside / "target.txt", space / "out.txt")  # a file link out of it
    model = scripted_tools([("write_file", {"path": path, "content": "pwned"}),
                            ("edit_file", {"path": path, "old": "a", "new": "b"})])
    run, state = await drive(model, space)
    assert state is RunState.COMPLETE
    assert sorted(os.listdir(outside)) == [] and not (tmp_path / "escape.txt").exists()
    assert not os.path.exists("/etc/goalgui-test")
    results = [m["content"] for m in model.tool_results[-1]]
    assert all(r.startswith("error: ") for r in results), results
    assert any(w in results[0] for w in ("leaves the workspace", "outside the workspace", "symbolic link")), results


async def test_bad_calls_are_errors_the_model_reads_never_a_crash(tmp_path):
    model = scripted_tools([("no_such_tool", {}), ("read_file", {"path": 3}), ("read_file", {}),
                            ("read_file", {"path": "x", "extra": 1}), ("read_file", "not an object"),
                            ("read_file", {"path": "missing.txt"}), ("calculate", {"expression": "__import__('os')"})])
    run, state = await drive(model, tmp_path / "ws")
    assert state is RunState.COMPLETE
    results = [m["content"] for m in model.tool_results[-1]]
    assert results[0].startswith("error: there is no tool 'no_such_tool'; the tools are: list_files")
    assert "must be a string" in results[1] and "missing argument 'path'" in results[2]
    assert "unknown argument 'extra'" in results[3] and "must be a JSON object" in results[4]
    assert "no file 'missing.txt'" in results[5] and "only numbers" in results[6]
    assert run.record.metrics.tool_errors == 7


async def test_edit_file_replaces_a_unique_text_and_refuses_an_ambiguous_one(tmp_path):
    space = tmp_path / "ws"
    space.mkdir()
    (space / "a.txt").write_text("one two one\n")
    model = scripted_tools([("edit_file", {"path": "a.txt", "old": "one", "new": "1"})],
                           [("edit_file", {"path": "a.txt", "old": "two", "new": "2"})])
    await drive(model, space)
    results = [m["content"] for m in model.tool_results[-1]]
    assert "occurs 2 times" in results[0] and results[1] == "edited a.txt: 1 replacement"
    assert (space / "a.txt").read_text() == "one 2 one\n"


async def test_plan_mode_refuses_a_write_and_the_model_is_told_why(tmp_path):
    from goalgui.engine.strategies.goal_stack import GoalStack

    # plan mode holds execution in the goal stack; a strategy that executes there still cannot write
    model = scripted_tools([("write_file", {"path": "x.txt", "content": "x"}), ("list_files", {})])
    run = Run.create("Make the file", model, tools=default_toolbox(tmp_path / "ws"), permission_mode="plan")
    goal = run.record.goals["g1"]
    result = await run.call_tool(goal, {"id": "1", "name": "write_file", "arguments": {"path": "x.txt", "content": "x"}})
    assert result.startswith("refused: the run is in plan mode") and not (tmp_path / "ws" / "x.txt").exists()
    listed = await run.call_tool(goal, {"id": "2", "name": "list_files", "arguments": {}})
    assert listed == "(the folder is empty)"  # reads run in every mode
    assert isinstance(run.strategy, GoalStack)


class Answers:
    """A confirmer that answers tool questions from a list and records what it was asked."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.asked = []

    async def __call__(self, request):
        self.asked.append(request)
        return self.answers.pop(0)


async def test_ask_mode_confirms_every_side_effect_and_a_denied_command_never_runs(journal, tmp_path):
    space = tmp_path / "ws"
    model = scripted_tools([("run_shell", {"command": "touch ran.txt"})],
                           [("write_file", {"path": "a.txt", "content": "a"})],
                           [("write_file", {"path": "b.txt", "content": "b"})],
                           [("read_file", {"path": "a.txt"})])
    answers = Answers(ConfirmationAnswer(Outcome.DECLINED, None, {"reason": "no commands today"}),
                      ConfirmationAnswer.approve("ask", always=True))
    run, state = await drive(model, space, mode="ask", confirmer=answers, sink=journal)
    assert state is RunState.COMPLETE
    assert not (space / "ran.txt").exists()  # denied: never ran
    assert (space / "a.txt").exists() and (space / "b.txt").exists()
    # asked for the command and the first write; the second write was allowed for the run; reads never ask
    assert [(r.kind, r.proposal["tool"]) for r in answers.asked] == [("tool", "run_shell"), ("tool", "write_file")]
    assert answers.asked[0].proposal["preview"] == "$ touch ran.txt"
    decisions = [(c.name, c.decision) for c in calls_of(journal, run)]
    assert decisions == [("run_shell", "denied"), ("write_file", "allowed for the run"),
                         ("write_file", "allowed for the run"), ("read_file", "run")]
    assert model.tool_results[1][0]["content"] == "denied by the operator: no commands today"
    # the allowance is in the journal: a restored run keeps it
    assert journal.load(run.run_id).allowed_tools == {"write_file:write"}


async def test_auto_edit_writes_without_asking_and_asks_for_shell_and_network(tmp_path):
    answers = Answers(ConfirmationAnswer.decline(), ConfirmationAnswer.decline())
    model = scripted_tools([("write_file", {"path": "a.txt", "content": "a"}),
                            ("run_shell", {"command": "true"}), ("http_get", {"url": "http://127.0.0.1:9/"})])
    await drive(model, tmp_path / "ws", mode="auto-edit", confirmer=answers)
    assert [r.proposal["tool"] for r in answers.asked] == ["run_shell", "http_get"]
    assert (tmp_path / "ws" / "a.txt").read_text() == "a"


def test_the_sandbox_is_available_here():
    """CI installs bubblewrap; the sandbox tests below must run, not skip."""
    assert sandbox_problem() is None


async def test_the_shell_writes_only_in_the_workspace_and_has_no_network(tmp_path):
    space, outside = tmp_path / "ws", tmp_path / "outside"
    outside.mkdir()
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    try:
        model = scripted_tools([
            ("run_shell", {"command": "echo inside > made.txt && cat made.txt"}),
            ("run_shell", {"command": f"echo x > {outside}/escaped.txt"}),
            ("run_shell", {"command": "echo x > /tmp/t && ls /tmp && echo x > /usr/x"}),
            ("run_shell", {"command": f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 3)\""}),
            ("run_shell", {"command": "sleep 30", "timeout": 1}),
        ])
        run, state = await drive(model, space)
    finally:
        server.close()
    results = [m["content"] for m in model.tool_results[-1]]
    assert results[0] == "exit 0\ninside\n" and (space / "made.txt").read_text() == "inside\n"
    assert results[1].startswith("exit ") and not results[1].startswith("exit 0") and not (outside / "escaped.txt").exists()
    assert "Read-only file system" in results[2] or "Permission denied" in results[2], results[2]
    assert not results[3].startswith("exit 0"), results[3]  # its own network: nothing of the host's
    assert results[4].startswith("stopped after 1 s (timeout)")


async def test_http_get_reads_a_page_with_a_size_cap(tmp_path):
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            body = b"x" * 3_000_000 if self.path == "/big" else b"<p>hello</p>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        model = scripted_tools([("http_get", {"url": f"{base}/page"}), ("http_get", {"url": f"{base}/big"}),
                                ("http_get", {"url": "file:///etc/passwd"}),
                                ("http_get", {"url": f"http://user:pw@127.0.0.1:{server.server_address[1]}/"})])
        await drive(model, tmp_path / "ws")
    finally:
        server.shutdown()
        server.server_close()
    results = [m["content"] for m in model.tool_results[-1]]
    assert results[0] == "HTTP 200 text/html\n<p>hello</p>"
    assert "over 1,000,000 bytes" in results[1] and "http:// or https://" in results[2]
    assert "user name or password" in results[3]


def test_calculate_is_arithmetic_without_eval():
    assert evaluate("(12.5 * 3) / 4") == 9.375 and evaluate("2 ** 10") == 1024
    for bad in ("__import__('os').system('x')", "9 ** 9 ** 9", "1/0", "open('x')", "[1] * 9**9", "1e308 * 10"):
        with pytest.raises(Exception) as caught:
            evaluate(bad)
        assert type(caught.value).__name__ == "ToolError", bad


def test_every_tool_has_a_schema_an_effect_and_a_cap():
    box = Toolbox([cls() for cls in ALL_TOOLS], "/tmp")
    names = box.names()
    assert names == ["list_files", "read_file", "tail_file", "md5_file", "search_files", "write_file", "edit_file",
                     "run_shell", "http_get", "calculate", "memory_query"]
    for spec in box.offered():
        assert spec["parameters"]["type"] == "object" and spec["description"]
        json.dumps(spec)
    assert all(t.spec.result_cap > 0 for t in box)


async def test_tail_search_and_memory_query(tmp_path):
    space = tmp_path / "ws"
    space.mkdir()
    (space / "log.txt").write_text("".join(f"line {i}\n" for i in range(100)))
    (space / "sub").mkdir()
    (space / "sub" / "b.txt").write_text("alpha\nBeta gamma\n")
    model = scripted_tools([("tail_file", {"path": "log.txt", "lines": 3}), ("search_files", {"text": "beta"}),
                            ("list_files", {}), ("memory_query", {"query": "file"})])
    await drive(model, space)
    results = [m["content"] for m in model.tool_results[-1]]
    assert results[0] == "line 97\nline 98\nline 99"
    assert results[1] == "sub/b.txt:2: Beta gamma"
    assert results[2].splitlines() == ["log.txt  (790 bytes)", "sub/", "sub/b.txt  (17 bytes)"]
    assert "goal [" in results[3] or "nothing" in results[3]


WRITER = {"rules": [
    {"purpose": "actionable", "reply": "YES"},
    {"purpose": "execute", "times": 1, "reply": "",
     "tool_calls": [{"id": "1", "name": "write_file", "arguments": {"path": "proof.txt", "content": "made"}}]},
    {"purpose": "execute", "reply": "made proof.txt"},
    {"purpose": "verify", "reply": "YES the file is there"},
    {"purpose": "summarize", "reply": "wrote proof.txt"},
]}


def test_the_command_runs_tools_in_the_workspace_it_is_given_or_its_own(cli, tmp_path):
    script = tmp_path / "writer.json"
    script.write_text(json.dumps(WRITER))
    space = tmp_path / "given"
    out = cli("run", "Make a proof file", "--model", f"scripted:{script}", "--workspace", str(space), "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert (space / "proof.txt").read_text() == "made"
    md = cli("export", report["run_id"], "--format", "md").stdout
    assert f"| workspace | {space.resolve()} |" in md and "| tool calls | 1 |" in md
    out = cli("run", "Make a proof file", "--model", f"scripted:{script}", "--json")
    report = json.loads(out.stdout)
    default = cli.home / "data" / "workspaces" / report["run_id"]
    assert (default / "proof.txt").read_text() == "made"
    assert oct(default.parent.stat().st_mode & 0o777) == "0o700"
    md = cli("export", report["run_id"], "--format", "md").stdout
    assert "tool write_file(path=proof.txt" in md and f"| workspace | {default} |" in md


def test_ask_mode_with_nobody_to_ask_pauses_and_writes_nothing(cli, tmp_path):
    script = tmp_path / "writer.json"
    script.write_text(json.dumps(WRITER))
    space = tmp_path / "ws"
    out = cli("run", "Make a proof file", "--model", f"scripted:{script}", "--workspace", str(space),
              "--permission-mode", "ask", "--json")
    assert out.returncode == 6, out.stderr
    report = json.loads(out.stdout)
    assert report["stop_reason"] == "needs confirmation: tool needs a person to approve it"
    assert not (space / "proof.txt").exists()


async def test_what_a_hostile_review_broke_in_the_tools_holds_now(tmp_path, monkeypatch):
    """A hard link out of the workspace, the sandbox's capabilities as root and its view of
    goalgui's environment, an allowance for a command reused for the network, a slow server
    against the whole-request deadline, non-UTF-8 edits, arithmetic that would block the loop."""
    from goalgui.tools import web

    space, outside = tmp_path / "ws", tmp_path / "outside"
    space.mkdir()
    outside.mkdir()
    (outside / "victim").write_text("precious")
    os.link(outside / "victim", space / "hl")
    (space / "latin1.txt").write_bytes(b"caf\xe9 keep me")
    monkeypatch.setenv("GOALGUI_TEST_SECRET", "sk-SECRET-123")
    model = scripted_tools([
        ("read_file", {"path": "hl"}), ("write_file", {"path": "hl", "content": "OVERWRITTEN"}),
        ("edit_file", {"path": "latin1.txt", "old": "keep", "new": "lose"}),
        ("run_shell", {"command": "tr '\\0' '\\n' </proc/1/environ; env; grep CapEff /proc/self/status"}),
        ("run_shell", {"command": "mount -o remount,bind,rw /usr && echo REMOUNTED"}),
        ("calculate", {"expression": "9" * 490 + "**10000"}),
    ])
    await drive(model, space)
    results = [m["content"] for m in model.tool_results[-1]]
    assert (outside / "victim").read_text() == "precious"  # replaced in the workspace, never written through
    assert "has other hard links" in results[0] and (space / "hl").read_text() == "OVERWRITTEN"
    assert "not UTF-8" in results[2] and (space / "latin1.txt").read_bytes() == b"caf\xe9 keep me"
    assert "sk-SECRET-123" not in results[3] and "CapEff:\t0000000000000000" in results[3], results[3]
    assert "REMOUNTED" not in results[4]
    assert results[5] == "error: calculate: the result is too large"

    answers = Answers(ConfirmationAnswer.approve("ask", always=True), ConfirmationAnswer.decline())
    model = scripted_tools([("run_shell", {"command": "true"})], [("run_shell", {"command": "true", "network": True})])
    await drive(model, tmp_path / "ws2", mode="ask", confirmer=answers)
    assert [(r.proposal["tool"], r.proposal["effect"]) for r in answers.asked] == [("run_shell", "shell"),
                                                                                  ("run_shell", "network")]

    monkeypatch.setattr(web, "TIMEOUT", 1.0)

    class Drip(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            for _ in range(10):
                self.wfile.write(b"x")
                self.wfile.flush()
                import time as _time

                _time.sleep(0.4)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Drip)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        model = scripted_tools([("http_get", {"url": f"http://127.0.0.1:{server.server_address[1]}/"})])
        await drive(model, tmp_path / "ws3")
    finally:
        server.shutdown()
        server.server_close()
    assert "took over 1 s and was stopped" in model.tool_results[-1][0]["content"]
