"""The cursor on the embedded model, for real (issue 10): a small task in a temporary workspace,
with the plan, the tool calls and the evidence in the report. SmolLM2-135M decides little by
itself: the plan is the request's own steps, its first round of a task must act, and its tool
calls are held to each tool's schema by a grammar."""

import json

from .test_cli import cli  # noqa: F401  (the fixture)

TASK = "Create a file named hello.txt that contains the word hello, then read hello.txt to prove it exists"


def test_the_cursor_on_the_embedded_model_makes_the_file_and_proves_it(cli, tmp_path):
    space = tmp_path / "ws"
    out = cli("run", TASK, "--strategy", "cursor", "--model", "local", "--workspace", str(space), "--json",
              timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout)
    assert report["state"] == "complete"
    tasks = [g for g in report["goals"] if g["parent_id"] == "g1"]
    assert [t["text"] for t in tasks] == ["Create a file named hello.txt that contains the word hello",
                                         "Read hello.txt to prove it exists"]
    assert (space / "hello.txt").is_file()  # the model acted on the world, inside its workspace
    assert "[goal] plan: 2 task(s)" in out.stderr and "working on task 2/2" in out.stderr
    md = cli("export", report["run_id"], "--format", "md").stdout
    assert "tool write_file(path=hello.txt" in md and "tool read_file(path=hello.txt" in md
    # every task that settled as done did so with a check of its tools' work behind it (the gate)
    events = json.loads(cli("export", report["run_id"], "--events").stdout)["events"]
    for task in tasks:
        if task["status"] == "done":
            checks = [e for e in events if e["type"] == "tool_called" and e["goal_id"] == task["id"]
                      and e["name"] in ("read_file", "list_files", "md5_file", "tail_file") and e["ok"]]
            assert checks or "settled from a text answer" in task["note"], task
    assert all("evidence" in t["note"] or "text answer" in t["note"] for t in tasks if t["status"] == "done")
