"""The goalgui command, run as a user would: a real process, a real journal, exit codes."""

import json
import signal
import subprocess
import sys
import time

import pytest

from .conftest import ROOT, cli_env, goalgui_cmd

FAST = {
    "rules": [
        {"purpose": "actionable", "depth": 0, "reply": "NO"},
        {"purpose": "decompose", "reply": ["Find the first fact", "Find the second fact", "Draft the answer"]},
    ],
    "defaults": {"actionable": "YES", "execute": "a concrete result", "verify": "YES", "summarize": "all done"},
}


@pytest.fixture
def cli(tmp_path):
    home = tmp_path / "home"
    script = tmp_path / "fast.json"
    script.write_text(json.dumps(FAST))
    slow = tmp_path / "slow.json"
    slow.write_text(json.dumps({**FAST, "latency": 30}))

    def run(*args, timeout=120, input=None):
        return subprocess.run(goalgui_cmd(*args), cwd=tmp_path, env=cli_env(home), capture_output=True,
                              text=True, timeout=timeout, input=input)

    run.fast, run.slow, run.home, run.tmp = f"scripted:{script}", f"scripted:{slow}", home, tmp_path
    return run


REPORT_KEYS = {"run_id", "objective", "strategy", "model", "state", "outcome", "stop_reason", "summary", "metrics", "goals"}
METRIC_KEYS = {"tokens_in", "tokens_out", "tokens", "tokens_by_purpose", "tokens_estimated", "turns",
               "model_calls", "active_seconds", "goals_created", "max_depth_reached"}
GOAL_KEYS = {"id", "parent_id", "depth", "text", "status", "tokens", "attempts", "result", "note"}


def test_rehearsal_reproduces_the_meal_kit_run(cli):
    out = cli("run", "Produce a market analysis of UK meal-kit services with a pricing recommendation",
              "--model", "scripted:rehearsal", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert set(report) == REPORT_KEYS and set(report["metrics"]) == METRIC_KEYS
    assert all(set(g) == GOAL_KEYS for g in report["goals"])
    assert report["state"] == "complete" and report["outcome"] == "done" and report["stop_reason"] is None
    texts = [g["text"] for g in report["goals"]]
    assert "List the top 5 UK meal-kit services by market share" in texts
    assert "Find Mindful Chef per-portion price" in texts
    compare = next(g for g in report["goals"] if g["text"].startswith("Compare"))
    assert "4.386" in compare["result"] and "1.54x" in compare["result"]
    assert report["metrics"]["max_depth_reached"] == 2
    assert "g1" in out.stderr and "[+]" in out.stderr  # the live tree went to stderr


def test_bad_input_is_one_clear_line_and_exit_2(cli):
    cases = [
        (("run", ""), "objective is empty"),
        (("run", "x" * 5000), "limit is 4000"),
        (("run", "ok", "--time-budget", "0s"), "between 1 s and 24 h"),
        (("run", "ok", "--time-budget", "soon"), "bad time budget"),
        (("run", "ok", "--token-budget", "0"), "token budget 0 is out of range"),
        (("run", "ok", "--strategy", "plan", "--max-parallel", "0"), "bad --max-parallel 0"),
        (("run", "ok", "--strategy", "task-loop", "--max-queue", "-1"), "bad --max-queue -1"),
        (("run", "ok", "--strategy", "dag"), "unknown strategy 'dag'"),
        (("run", "ok", "--model", "openai:nope"), "no profile 'nope'"),
        (("run", "ok", "--model", "anthropic:"), "name a profile"),
        (("run", "ok", "--model", "scripted:/nope.json"), "no script file"),
        (("run", "ok", "--permission-mode", "yolo"), "invalid choice"),
        (("resume", "nosuchrun"), "no run matches"),
    ]
    for args, message in cases:
        out = cli(*args)
        assert out.returncode == 2, (args, out.stderr)
        assert message in out.stderr, (args, out.stderr)
        assert len(out.stderr.strip().splitlines()) == 1, out.stderr


def test_blocked_run_exits_3_and_resume_with_a_raised_budget_completes(cli):
    out = cli("run", "Answer the question", "--model", cli.fast, "--max-goals", "2", "--json")
    assert out.returncode == 3, out.stderr
    report = json.loads(out.stdout)
    assert report["state"] == "blocked" and report["stop_reason"].startswith("budget: goals")
    # resuming with a budget that still leaves no room would block again at once: refused, nothing changed
    short = cli("resume", report["run_id"][:6])
    assert short.returncode == 2 and len(short.stderr.strip().splitlines()) == 1
    assert "the goal budget is still too small (1 of 2 used; 2 more needed)" in short.stderr
    assert f"goalgui resume {report['run_id'][:6]} --max-goals N" in short.stderr
    assert json.loads(cli("runs", "--json").stdout)[0]["state"] == "blocked"
    out = cli("resume", report["run_id"][:6], "--max-goals", "10", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["outcome"] == "done"


def test_ctrl_c_pauses_within_a_second_and_resume_finishes(cli):
    with subprocess.Popen(goalgui_cmd("run", "Answer the question", "--model", cli.slow), cwd=cli.tmp,
                          env=cli_env(cli.home), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as proc:
        first = proc.stdout.readline()
        assert first.startswith("run "), first
        run_id = first.split()[1].rstrip(":")
        time.sleep(0.3)  # let the first model call begin
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=10)
        elapsed = time.monotonic() - t0
        stderr = proc.stderr.read()
    assert elapsed < 3  # the contract is one second; a loose bound keeps a loaded CI machine from flaking
    assert proc.returncode == 6, stderr
    assert f"goalgui resume {run_id}" in stderr
    listed = json.loads(cli("runs", "--json").stdout)
    assert listed[0]["state"] == "paused" and listed[0]["stop_reason"] == "interrupted: Ctrl+C"
    out = cli("resume", run_id, "--model", cli.fast, "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["state"] == "complete"


def test_runs_export_and_cancel(cli):
    done = json.loads(cli("run", "Answer the question", "--model", cli.fast, "--json").stdout)
    blocked = json.loads(cli("run", "Another question", "--model", cli.fast, "--turn-budget", "1", "--json").stdout)
    listed = json.loads(cli("runs", "--json").stdout)
    assert [r["run_id"] for r in listed] == [blocked["run_id"], done["run_id"]]
    assert set(listed[0]) == {"run_id", "objective", "strategy", "state", "stop_reason", "started_at",
                              "updated_at", "tokens", "goals"}
    text = cli("runs").stdout
    assert done["run_id"] in text and "budget: turns" in text

    exported = json.loads(cli("export", done["run_id"]).stdout)
    assert exported["goals"] == done["goals"] and exported["metrics"]["tokens"] == done["metrics"]["tokens"]
    with_events = json.loads(cli("export", done["run_id"], "--events").stdout)
    assert with_events["events"][0]["type"] == "run_started"
    md = cli("export", done["run_id"], "--format", "md", "-o", "report.md")
    assert md.returncode == 0 and md.stdout == ""
    assert "## Goals" in (cli.tmp / "report.md").read_text()

    out = cli("cancel", blocked["run_id"])
    assert out.returncode == 0, out.stderr
    assert json.loads(cli("runs", "--json").stdout)[0]["state"] == "cancelled"
    out = cli("resume", blocked["run_id"])
    assert out.returncode == 2 and "cancelled" in out.stderr
    assert cli("cancel", done["run_id"]).returncode == 2


def test_ask_mode_without_a_terminal_pauses_instead_of_hanging(cli):
    out = cli("run", "Answer the question", "--model", cli.fast, "--permission-mode", "ask", "--json", input="")
    assert out.returncode == 6, out.stderr
    report = json.loads(out.stdout)
    assert report["stop_reason"].startswith("needs confirmation")
    out = cli("resume", report["run_id"], "--yes", "--json")
    assert out.returncode == 0, out.stderr


def test_python_plugin_model(cli):
    plugin = cli.tmp / "mymodel.py"
    plugin.write_text(
        "from goalgui.engine import ModelReply, Usage\n"
        "class Echo:\n"
        "    async def complete(self, request):\n"
        "        if request.purpose in ('actionable', 'verify'):\n"
        "            return ModelReply('YES', usage=Usage(3, 1))\n"
        "        return ModelReply('did it', usage=Usage(3, 2))\n"
    )
    out = cli("run", "Answer the question", "--model", "python:mymodel.py:Echo", "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["model"] == f"python:{plugin}:Echo"  # stored absolute so resume can load it
    assert report["metrics"]["tokens_estimated"] == 0
    out = cli("run", "Answer", "--model", "python:mymodel.py:Nope")
    assert out.returncode == 2 and "has no attribute Nope" in out.stderr


def test_cancel_from_another_process_ends_the_driving_run_with_exit_4(cli):
    with subprocess.Popen(goalgui_cmd("run", "Answer the question", "--model", cli.slow, "--json"), cwd=cli.tmp,
                          env=cli_env(cli.home), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as proc:
        first = proc.stderr.readline()
        run_id = first.split()[1].rstrip(":")
        listed = json.loads(cli("runs", "--json").stdout)
        assert listed[0]["state"] == "active"  # its owner is alive
        out = cli("cancel", run_id)
        assert out.returncode == 0, out.stderr
        stdout, _ = proc.communicate(timeout=10)
    assert proc.returncode == 4
    assert json.loads(stdout)["state"] == "cancelled"


async def test_the_terminal_confirmer_shows_the_subgoals_and_keeps_the_chosen_ones():
    """Read through the event loop (no thread blocked on input), here from a pipe; no pty is needed,
    so the test also runs in a bare chroot without /dev/pts."""
    import io
    import os

    from goalgui.engine import ConfirmationRequest, Outcome
    from goalgui.terminal import TerminalConfirmer

    read_end, write_end = os.pipe()
    stdin = os.fdopen(read_end, "r")
    prompts = io.StringIO()
    confirmer = TerminalConfirmer(stream=prompts, stdin=stdin)
    request = ConfirmationRequest("c1", "subgoals", {"parent": "Answer the question", "subgoals": [
        "Find the first fact", "Find the second fact", "Draft the answer"]}, "ask")
    os.write(write_end, b"9\n1 3\n")  # a bad answer is asked again
    answer = await confirmer(request)
    os.close(write_end)
    stdin.close()
    shown = prompts.getvalue()
    assert "1. Find the first fact" in shown and "3. Draft the answer" in shown and "Please answer" in shown
    assert answer.outcome is Outcome.APPROVED
    assert answer.edits == {"subgoals": ["Find the first fact", "Draft the answer"]}


def test_a_terminal_gets_the_terminal_confirmer(monkeypatch):
    import argparse

    from goalgui import cli
    from goalgui.engine.confirm import approve_all, refuse_unattended
    from goalgui.terminal import TerminalConfirmer

    assert cli._confirmer(argparse.Namespace(yes=True)) is approve_all
    monkeypatch.setattr("sys.stdin.isatty", lambda: False)
    assert cli._confirmer(argparse.Namespace(yes=False)) is refuse_unattended
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    assert isinstance(cli._confirmer(argparse.Namespace(yes=False)), TerminalConfirmer)


def test_every_command_that_reads_a_journal_takes_journal(cli):
    journal = cli.tmp / "elsewhere.sqlite3"
    out = cli("run", "Explain the journal flag", "--model", cli.fast, "--journal", str(journal))
    assert out.returncode == 0, out.stderr
    listed = cli("--journal", str(journal), "runs", "--json")
    assert listed.returncode == 0, listed.stderr
    [row] = json.loads(listed.stdout)
    assert row["objective"] == "Explain the journal flag"
    assert json.loads(cli("runs", "--json").stdout) == []  # the default journal never saw it
    # `open` reads the named journal: an unknown run there is refused in one line, before any window
    refused = cli("open", "nosuchrun", "--journal", str(journal))
    assert refused.returncode == 2 and "unrecognized" not in refused.stderr, refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    shown = cli("--journal", str(journal), "open", row["run_id"][:6], "--help")
    assert shown.returncode == 0 and "--journal" in shown.stdout


def test_a_native_crash_leaves_its_stacks_in_the_log_and_the_run_comes_back_paused(cli):
    plugin = cli.tmp / "crashing.py"
    plugin.write_text(
        "import ctypes\n"
        "from goalgui.engine import ModelReply, Usage\n"
        "class Crash:\n"
        "    async def complete(self, request):\n"
        "        if request.purpose == 'execute':\n"
        "            ctypes.string_at(0)  # a native library reading address 0: SIGSEGV\n"
        "        return ModelReply('YES', usage=Usage(3, 1))\n"
    )
    out = cli("run", "Answer the question", "--model", "python:crashing.py:Crash", "--max-depth", "0")
    assert out.returncode == -signal.SIGSEGV, (out.returncode, out.stderr)
    faults = (cli.home / "logs" / "faults.log").read_text()
    assert "Segmentation fault" in faults and "crashing.py" in faults
    assert (cli.home / "logs" / "faults.log").stat().st_mode & 0o077 == 0
    [row] = json.loads(cli("runs", "--json").stdout)
    assert row["state"] == "paused" and row["stop_reason"].startswith("interrupted"), row


def test_the_cursor_guards_come_from_the_settings_and_the_flags(cli):
    """The round budget, the unproductive limit and the evidence gate: settings, overridden per run
    by flags, kept in the journal with the run (so a resume keeps them); out of range, one line."""
    cli.home.mkdir(parents=True, exist_ok=True)
    settings = cli("run", "x", "--strategy", "cursor", "--model", cli.fast, "--round-budget", "0")
    assert settings.returncode == 2 and settings.stderr.strip().count("\n") == 0
    assert "round budget 0 must be a whole number from 1 to 1000" in settings.stderr
    out = cli("run", "Find the first fact, then draft the answer", "--strategy", "cursor", "--model", cli.fast,
              "--round-budget", "9", "--no-evidence-gate", "--json")
    assert out.returncode == 6, out.stderr  # this script has no `work` replies: paused, its options kept
    run_id = json.loads(out.stdout)["run_id"]
    events = json.loads(cli("export", run_id, "--events").stdout)["events"]
    options = events[0]["options"]
    assert (options["round_budget"], options["unproductive_limit"], options["evidence_gate"]) == (9, 3, False)


def test_criteria_and_an_operator_message_reach_the_model_and_the_report(cli):
    """Issue 11, items 1 and 4: `run --criteria` and `resume --message`, through the journal."""
    script = cli.tmp / "blocks.json"
    script.write_text(json.dumps({"rules": [{"purpose": "execute", "reply": "BLOCKED: which city?"}],
                                  "defaults": {"actionable": "YES", "verify": "YES", "summarize": "needs a city"}}))
    out = cli("run", "Plan a picnic", "--model", f"scripted:{script}", "--max-depth", "0",
              "--criteria", "MARK-CRITERIA: in a park", "--json")
    assert out.returncode == 3, out.stderr
    run_id = json.loads(out.stdout)["run_id"]
    assert f"goalgui resume {run_id} --message TEXT" in out.stderr and "raise the budget" not in out.stderr
    again = cli("resume", run_id, "--message", "MARK-MESSAGE: Lyon", "--json")
    assert again.returncode == 3
    events = json.loads(cli("export", run_id, "--events").stdout)["events"]
    calls = [e for e in events if e["type"] == "model_called" and e["purpose"] == "execute"]
    last = json.dumps(calls[-1]["messages"])
    assert "MARK-CRITERIA" in last and "MARK-MESSAGE: Lyon" in last and "MARK-MESSAGE" not in json.dumps(calls[0])
    md = cli("export", run_id, "--format", "md").stdout
    assert "**Completion criteria:** MARK-CRITERIA: in a park" in md
    assert "**Operator's message:** MARK-MESSAGE: Lyon" in md
    empty = cli("resume", run_id, "--message", "   ")
    assert empty.returncode == 2 and "the message is empty" in empty.stderr
    runs = json.loads(cli("runs", "--json").stdout)
    assert [r["state"] for r in runs if r["run_id"] == run_id] == ["blocked"]  # refused before it was taken


def test_the_markdown_report_nests_each_goal_under_its_parent(cli):
    """Issue 11, item 16: grandchildren under their own parent, not the last top-level goal."""
    script = cli.tmp / "deep.json"
    script.write_text(json.dumps({"rules": [
        {"purpose": "actionable", "depth": 0, "reply": "NO"},
        {"purpose": "actionable", "match": "Gather", "reply": "NO"},
        {"purpose": "decompose", "depth": 0, "reply": ["Gather the facts", "Draft the answer"]},
        {"purpose": "decompose", "reply": ["Find fact one", "Find fact two"]}],
        "defaults": {"actionable": "YES", "execute": "done", "verify": "YES", "summarize": "ok"}}))
    out = cli("run", "Answer the question", "--model", f"scripted:{script}", "--json")
    assert out.returncode == 0, out.stderr
    md = cli("export", json.loads(out.stdout)["run_id"], "--format", "md").stdout
    order = [line.strip().split("] ", 1)[1].split(" (")[0] for line in md.splitlines() if line.strip().startswith("- **g")]
    assert order == ["Answer the question", "Gather the facts", "Find fact one", "Find fact two", "Draft the answer"]


def test_an_objective_whose_bytes_are_not_utf8_is_one_line_and_exit_2(cli):
    """Found by a hostile review: an objective typed with bytes that are not UTF-8 (Python's lone
    surrogates) ended in an internal UnicodeEncodeError when the journal wrote it."""
    out = cli("run", "bad \udcff byte objective", "--model", cli.fast)
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and "not UTF-8" in out.stderr
    out = cli("run", "A fine objective", "--criteria", "c \udcfe", "--model", cli.fast)
    assert out.returncode == 2 and "criteria holds bytes" in out.stderr
    assert json.loads(cli("runs", "--json").stdout) == []
