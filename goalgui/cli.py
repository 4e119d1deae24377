"""The `goalgui` command: run, resume, cancel, list and export runs from a terminal."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import sqlite3
import sys
import time

from . import __version__, logs, paths
from .cli_admin import cmd_journal, cmd_profiles
from .cli_compare import cmd_diff, cmd_fork, cmd_steer
from .engine.confirm import approve_all, refuse_unattended
from .engine.lifecycle import InputError, Limits, RunState, parse_duration, validate_objective
from .engine.permissions import PERMISSION_MODES
from .engine.run import Run
from .engine.health import health, health_line
from .engine.strategies import WHEN, check_strategy, limits_for, strategy_options
from .remote import Remote
from .runs import (EXIT_BAD_INPUT, EXIT_INTERNAL, BudgetStillSpent, cancel_run, exit_code, resume_run,
                   start_run)
from .terminal import shown
DEFAULT_MODEL = "local"

log = logging.getLogger("goalgui")


class _Parser(argparse.ArgumentParser):
    """Bad arguments get one line, not the whole usage."""

    def error(self, message: str):
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: {message} (see '{self.prog} --help')\n")


def _positive(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None


def _duration(text: str) -> float:
    try:
        return parse_duration(text)
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _budget_flags(p: argparse.ArgumentParser, with_depth: bool) -> None:
    if with_depth:
        p.add_argument("--max-depth", type=_positive,
                       help="the root is depth 0 (default 3; task-loop: the depth of a task, default 2)")
    p.add_argument("--max-goals", type=_positive, help="goal count limit (default 25)")
    p.add_argument("--token-budget", type=_positive, help="stop at this many tokens")
    p.add_argument("--turn-budget", type=_positive, help="stop after this many turns")
    p.add_argument("--time-budget", type=_duration, help="active time limit: 90s, 10m, 2h")
    p.add_argument("--permission-mode", choices=list(PERMISSION_MODES))
    p.add_argument("--journal", help="journal file (default: in the user data dir)")
    p.add_argument("--json", action="store_true", help="print the run report as JSON on stdout")
    p.add_argument("--yes", action="store_true", help="approve every confirmation as proposed")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="goalgui", description="Watch and steer LLM goal agents.")
    # the window's journal; every sub-command that reads a journal takes --journal as well
    parser.add_argument("--journal", dest="top_journal", help="journal file (default: in the user data dir)")
    parser.add_argument("--version", action="version", version=f"goalgui {__version__}")
    parser.add_argument("--install-desktop-entry", action="store_true",
                        help="put goalgui in the desktop's menu (entry and icons under ~/.local/share)")
    parser.add_argument("--uninstall-desktop-entry", action="store_true",
                        help="take out what --install-desktop-entry put there")
    sub = parser.add_subparsers(dest="command")
    run = sub.add_parser("run", help="start a run and drive it here")
    run.add_argument("objective")
    run.add_argument("--criteria", default="", metavar="TEXT",
                     help="how completion is judged: shown to the model at each turn and held against each result")
    run.add_argument("--workspace", help="the folder the run's tools act in (default: a new folder for the run "
                                         "in the user data dir)")
    run.add_argument("--strategy", default="goal-stack", metavar="NAME",
                     help="; ".join(f"{name}: {when}" for name, when in WHEN.items()) + " (default goal-stack)")
    run.add_argument("--max-iterations", type=int, metavar="N", help="task-loop: tasks executed at most (default 15)")
    run.add_argument("--max-queue", type=int, metavar="N", help="task-loop: tasks waiting at most (default 20)")
    run.add_argument("--first-task", metavar="TEXT",
                     help="task-loop: the first task (default: the objective itself)")
    run.add_argument("--max-parallel", type=int, metavar="N",
                     help="plan: independent steps run side by side, at most (default 3)")
    run.add_argument("--no-evidence-gate", action="store_const", const=False, dest="evidence_gate",
                     help="cursor: accept task_complete without a check having been run")
    run.add_argument("--evidence-gate", action="store_const", const=True, dest="evidence_gate",
                     help="cursor: a task that used tools settles only after a check ran (the default setting)")
    run.add_argument("--round-budget", type=int, metavar="N",
                     help="cursor: work rounds per task before it fails forward (setting; default 25)")
    run.add_argument("--unproductive-limit", type=int, metavar="N",
                     help="cursor: unproductive rounds in a row before each escalation step (setting; default 3)")
    run.add_argument("--model", default=None, help="local | scripted:NAME|FILE.json | python:FILE.py:ATTR | ...")
    run.add_argument("--window", action="store_true",
                     help="watch and steer it in the window (with no display, it is followed here instead)")
    run.add_argument("--exit-when-done", action="store_true", help="with --window: close it when the run stops")
    _budget_flags(run, with_depth=True)
    resume = sub.add_parser("resume", help="continue a paused or blocked run")
    resume.add_argument("run")
    resume.add_argument("--model", default=None)
    resume.add_argument("--message", metavar="TEXT",
                        help="tell the model something (what a blocked run asked for): it sees it from the next turn on")
    _budget_flags(resume, with_depth=False)
    cancel = sub.add_parser("cancel", help="cancel a paused or blocked run")
    cancel.add_argument("run")
    cancel.add_argument("--journal")
    runs = sub.add_parser("runs", help="list journaled runs, newest first")
    runs.add_argument("--json", action="store_true")
    runs.add_argument("--journal")
    export = sub.add_parser("export", help="print a run's report")
    export.add_argument("run")
    export.add_argument("--format", choices=["json", "md"], default="json")
    export.add_argument("--events", action="store_true", help="include the event log (json)")
    export.add_argument("--health", action="store_true", help="include the strategy's health figures (json)")
    export.add_argument("-o", "--output")
    export.add_argument("--journal")
    journal_cmd = sub.add_parser("journal", help="check a journal, or recover what a damaged one holds")
    journal_cmd.add_argument("action", choices=["check", "recover"])
    journal_cmd.add_argument("--journal")
    journal_cmd.add_argument("-o", "--output", help="recover: the new journal to write")
    fork = sub.add_parser("fork", help="a new run whose history up to a goal or event is another run's")
    fork.add_argument("run")
    where = fork.add_mutually_exclusive_group(required=True)
    where.add_argument("--at", metavar="GOAL", help="the goal to take up again (it and what followed are redone)")
    where.add_argument("--at-event", type=_positive, metavar="N", help="the source's last event the fork keeps")
    fork.add_argument("--model", default=None)
    _budget_flags(fork, with_depth=False)
    steer = sub.add_parser("steer", help="overrule the model on a goal: split, do, accept, redo, edit")
    steer.add_argument("run")
    steer.add_argument("goal")
    steer.add_argument("action", choices=["split", "do", "accept", "redo", "edit"])
    steer.add_argument("--note", default="", metavar="TEXT", help="the operator's word (redo: required)")
    steer.add_argument("--text", default="", help="edit: the goal's new text")
    steer.add_argument("--subgoal", action="append", default=[], metavar="TEXT", help="split: your own sub-goal")
    steer.add_argument("--journal")
    diff = sub.add_parser("diff", help="compare two runs: their trees aligned, where they first diverge")
    diff.add_argument("run_a")
    diff.add_argument("run_b")
    diff.add_argument("--format", choices=["md", "json"], default="md")
    diff.add_argument("--journal")
    open_ = sub.add_parser("open", help="open a run in the window")
    open_.add_argument("run")
    open_.add_argument("--journal")
    profiles = sub.add_parser("profiles", help="manage provider profiles").add_subparsers(dest="action")
    add = profiles.add_parser("add", help="add or replace a profile; its key goes to the keyring")
    add.add_argument("name")
    add.add_argument("--kind", required=True, choices=["openai", "anthropic", "ollama"])
    add.add_argument("--base-url", required=True)
    add.add_argument("--model", required=True)
    add.add_argument("--key-env", help="read the key from this environment variable instead of the keyring")
    add.add_argument("--structured-output", default="auto", choices=["auto", "json_schema", "json_object", "none"])
    add.add_argument("--prompt-profile", default="standard", choices=["standard", "small"],
                     help="small: the model has a few hundred million parameters; use the embedded model's rules")
    add.add_argument("--embeddings-model", help="use this model of the provider for the findings memory")
    add.add_argument("--read-timeout", type=float, default=120.0)
    add.add_argument("--connect-timeout", type=float, default=10.0)
    add.add_argument("--request-timeout", type=float, default=600.0,
                     help="seconds for a whole request, body included (default 600)")
    add.add_argument("--max-reply-mb", type=float, default=16.0,
                     help="refuse a reply larger than this, counted after decompression (default 16)")
    profiles.add_parser("list", help="list profiles")
    profiles.add_parser("remove", help="remove a profile and its key").add_argument("name")
    profiles.add_parser("test", help="make one tiny call and report latency").add_argument("name")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    # `goalgui --journal F runs` and `goalgui runs --journal F` alike; the sub-command's own flag wins
    args.journal = getattr(args, "journal", None) or args.top_journal
    if args.install_desktop_entry or args.uninstall_desktop_entry:
        if args.install_desktop_entry and args.uninstall_desktop_entry or args.command is not None:
            print("goalgui: --install-desktop-entry and --uninstall-desktop-entry go alone", file=sys.stderr)
            return EXIT_BAD_INPUT
        return _desktop_entry(args.install_desktop_entry)
    if args.command in (None, "open"):
        logs.setup()
        from .ui.app import main as window

        try:
            return window(open_run=getattr(args, "run", None), journal_path=args.journal)
        except (InputError,) as exc:
            print(f"goalgui: {shown(exc)}", file=sys.stderr)
            return EXIT_BAD_INPUT
    if args.command == "profiles" and args.action is None:
        print("goalgui: profiles needs an action: add, list, remove or test", file=sys.stderr)
        return EXIT_BAD_INPUT
    logs.setup()
    from .journal import JournalError

    try:
        return COMMANDS[args.command](args)
    except BrokenPipeError:
        return _closed_pipe()
    except sqlite3.DatabaseError as exc:  # read or written past the checks at open: name the file, not its content
        from .journal import guard

        where = paths.journal_path(getattr(args, "journal", None))
        exc = guard.damaged(where, guard.damage_reason(exc)) if guard.is_damage(exc) else guard.unwritable(where, exc)
        print(f"goalgui: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except (InputError, JournalError) as exc:
        print(f"goalgui: {shown(exc)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except Exception as exc:
        log.exception("goalgui %s failed", args.command)
        print(f"goalgui: internal error: {type(exc).__name__}: {shown(exc)} (details in {paths.log_dir()})",
              file=sys.stderr)
        return EXIT_INTERNAL


def window_main() -> int:
    """The window's own launcher (`goalgui-window`, a GUI script where the platform has them)."""
    return main([])


def _desktop_entry(install: bool) -> int:
    from . import desktop

    try:
        files = desktop.install() if install else desktop.uninstall()
    except ValueError as exc:
        print(f"goalgui: the desktop entry could not be installed: {shown(exc)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as exc:
        print(f"goalgui: the desktop entry could not be {'installed' if install else 'removed'}: "
              f"{shown(exc.strerror or exc)}{f' ({shown(exc.filename)})' if exc.filename else ''}", file=sys.stderr)
        return EXIT_BAD_INPUT
    verb = "installed" if install else "removed"
    print(f"goalgui: {verb} {len(files)} file(s) under {desktop.data_home()}" if files else
          "goalgui: no desktop entry of goalgui was installed")
    return 0


def _closed_pipe() -> int:
    """`goalgui runs | head`: the reader left, which is no error. Point stdout at /dev/null so the
    interpreter's own flush at exit does not complain either."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    return 0


def _journal(args):
    from .journal import Journal

    return Journal(paths.journal_path(getattr(args, "journal", None)))


def _confirmer(args):
    if args.yes:
        return approve_all
    if sys.stdin.isatty():
        from .terminal import TerminalConfirmer

        return TerminalConfirmer()
    return refuse_unattended


def cmd_run(args) -> int:
    validate_objective(args.objective)
    check_strategy(args.strategy)
    limits = limits_for(args.strategy, max_depth=args.max_depth, max_goals=args.max_goals, tokens=args.token_budget,
                        turns=args.turn_budget, seconds=args.time_budget)
    from .settings import Settings

    settings = Settings.load()
    if args.window:
        from .ui.app import display_available

        if display_available():
            return _run_in_window(args, limits, settings)
        print("goalgui: no display to open the window on (DISPLAY is not set): following the run here instead",
              file=sys.stderr)
    with _journal(args) as journal:
        remote = Remote(journal)  # attached windows steer it and answer its questions too
        run = start_run(journal, args.objective, model=args.model or settings.default_model or DEFAULT_MODEL,
                        strategy=args.strategy, limits=limits, permission_mode=args.permission_mode or "auto-edit",
                        criteria=args.criteria, confirmer=remote.confirmer(_confirmer(args)),
                        workspace=args.workspace, options=_options(args, settings))
        return _drive(run, journal, args, remote)


def _options(args, settings) -> dict:
    options = settings.cursor_options(evidence_gate=args.evidence_gate, round_budget=args.round_budget,
                                      unproductive_limit=args.unproductive_limit)
    options.update(strategy_options(args.strategy, max_iterations=args.max_iterations, max_queue=args.max_queue,
                                    max_parallel=args.max_parallel, first_task=args.first_task))
    return options


def _run_in_window(args, limits, settings) -> int:
    from .ui.app import main as window

    if args.journal:
        settings.journal = args.journal
    goal = {"objective": args.objective, "criteria": args.criteria, "strategy": args.strategy,
            "model": args.model or settings.default_model or DEFAULT_MODEL, "limits": limits,
            "mode": args.permission_mode or settings.default_permission_mode, "workspace": args.workspace,
            "options": _options(args, settings)}
    return window(journal_path=args.journal, start=goal, exit_when_done=args.exit_when_done)


BUDGET_FLAGS = {"goals": "--max-goals N", "tokens": "--token-budget N", "turns": "--turn-budget N",
                "time": "--time-budget T"}


def cmd_resume(args, run_id: str | None = None) -> int:
    """Resume a run (`run_id`: one just written, a fork) and drive it here."""
    with _journal(args) as journal:
        limits = {"max_goals": args.max_goals, "tokens": args.token_budget, "turns": args.turn_budget,
                  "seconds": args.time_budget}
        label = run_id or args.run  # as the person typed it
        run_id = run_id or journal.resolve(args.run)
        remote = Remote(journal)
        try:
            run = resume_run(journal, run_id, model=args.model, confirmer=remote.confirmer(_confirmer(args)),
                             limits=limits, permission_mode=args.permission_mode,
                             message=getattr(args, "message", None))
        except BudgetStillSpent as exc:
            raise InputError(f"{exc} (goalgui resume {label} {BUDGET_FLAGS[exc.budget]})") from None
        return _drive(run, journal, args, remote)


def _drive(run: Run, journal, args, remote: Remote) -> int:
    from .terminal import TerminalView

    view = TerminalView(run.record, sys.stderr if args.json else sys.stdout)
    run.subscribe(view)
    # at once, even into a pipe: whoever started it (a script, a window to attach) needs the id now
    print(f"run {run.run_id}: {shown(run.record.objective)}", file=view.stream, flush=True)
    try:
        state = asyncio.run(_drive_async(run, remote, view))
    finally:
        run.close()
        view.close()
        journal.release(run.run_id)
    report = run.report()
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    if run.record.strategy != "goal-stack":  # the figures its seed says to watch (stderr: never the report)
        print(f"health: {shown(health_line(health(run.record)))}", file=sys.stderr)
    reason = shown(run.record.stop_reason or "")
    if state is RunState.PAUSED:
        print(f"paused ({reason}); resume with: goalgui resume {run.run_id}", file=sys.stderr)
        if reason.startswith("internal error"):
            return EXIT_INTERNAL
    elif state is RunState.BLOCKED and reason.startswith("budget"):
        flag = BUDGET_FLAGS.get(reason.split(":", 1)[-1].split()[0] if ":" in reason else "",
                                "--max-goals N / --token-budget N / ...")
        print(f"blocked ({reason}); raise the budget and resume with: goalgui resume {run.run_id} {flag}",
              file=sys.stderr)
    elif state is RunState.BLOCKED:  # the model (or a rule) needs something from the operator
        print(f"blocked ({reason}); give it what it needs and resume with: "
              f"goalgui resume {run.run_id} --message TEXT", file=sys.stderr)
    elif state is RunState.COMPLETE and not args.json:
        print(f"complete ({run.record.outcome}); report: goalgui export {run.run_id} --format md")
    return exit_code(state)


STOP_SIGNALS = {signal.SIGINT: "Ctrl+C", signal.SIGTERM: "SIGTERM", signal.SIGHUP: "SIGHUP"}


async def _drive_async(run: Run, remote: Remote, view) -> RunState:
    """Drive the run; Ctrl+C, SIGTERM and SIGHUP pause it with a reason, and a second one ends the
    process at once, even if a model blocks the loop or ignores cancellation: its pause is
    journaled if the first signal got that far, else the journal shows the run interrupted.
    A run that stops paused or blocked while a window is attached to it is held for that window to
    resume (`Remote.hold`); a signal ends the hold."""
    loop = asyncio.get_running_loop()
    signalled: list[str] = []

    def interrupt(why: str) -> None:
        if run.state is RunState.ACTIVE:
            run.pause(f"interrupted: {why}")
            run.recorder.flush()

    def handler(signum, _frame) -> None:
        # a plain signal handler runs between bytecodes of the main thread, so a loop that a
        # model blocks still hears the second signal; the first is handed to the loop
        why = STOP_SIGNALS.get(signum, f"signal {signum}")
        signalled.append(why)
        if len(signalled) > 1:
            os.write(2, f"goalgui: {why} again: stopping now; resume with: goalgui resume {run.run_id}\n".encode())
            os._exit(exit_code(RunState.PAUSED))
        loop.call_soon_threadsafe(interrupt, why)

    previous = {sig: signal.signal(sig, handler) for sig in STOP_SIGNALS}
    poller = loop.create_task(remote.poll(lambda: [run]))
    try:
        while True:
            state = await run.drive()
            if signalled or not state.resumable:
                return state
            held = f"run {state.value}: held for the window attached to it (resume it there; Ctrl+C ends here)"
            if not await remote.hold(run, lambda: bool(signalled), lambda: view.say(held)):
                return run.state
    finally:
        poller.cancel()
        for sig, old in previous.items():
            signal.signal(sig, old)


def cmd_cancel(args) -> int:
    with _journal(args) as journal:
        print(cancel_run(journal, journal.resolve(args.run)))
        return 0


def cmd_runs(args) -> int:
    with _journal(args) as journal:
        rows = journal.runs()
    keys = ("run_id", "objective", "strategy", "state", "stop_reason", "started_at", "updated_at", "tokens", "goals")
    if args.json:
        print(json.dumps([{k: r[k] for k in keys} for r in rows], indent=2, ensure_ascii=False))
        return 0
    if not rows:
        print("no runs yet")
        return 0
    print(f"{'RUN':<13} {'STATE':<10} {'GOALS':>5} {'TOKENS':>9} {'STARTED':<16} OBJECTIVE")
    for r in rows:
        started = time.strftime("%Y-%m-%d %H:%M", time.localtime(r["started_at"]))
        objective = shown(r["objective"])  # a newline in it would forge a row
        objective = objective if len(objective) <= 60 else objective[:57] + "..."
        print(f"{r['run_id']:<13} {r['state']:<10} {r['goals']:>5} {r['tokens']:>9,} {started:<16} {objective}")
        if r["stop_reason"] and r["state"] != "complete":
            print(f"{'':<13} {shown(r['stop_reason'])}")
    return 0


def cmd_export(args) -> int:
    from .report import json_report, markdown_report

    with _journal(args) as journal:
        run_id = journal.resolve(args.run)
        if args.format == "md":
            text = markdown_report(journal.view(run_id))
        else:
            record = journal.view(run_id)
            events = list(journal.events(run_id)) if args.events else None
            text = json.dumps(json_report(record, events, with_health=args.health), indent=2, ensure_ascii=False) + "\n"
    if args.output:
        tmp = f"{args.output}.tmp{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, args.output)
    else:
        sys.stdout.write(text)
    return 0


COMMANDS = {"diff": cmd_diff, "fork": cmd_fork, "steer": cmd_steer, "run": cmd_run, "resume": cmd_resume, "cancel": cmd_cancel, "runs": cmd_runs, "export": cmd_export,
            "profiles": cmd_profiles, "journal": cmd_journal}
