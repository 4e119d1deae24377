"""Start, resume, abandon and cancel runs: one sequence shared by the command and the window.

Each takes the journal and returns a `Run` ready to drive (or the record it left). Claiming comes
before reading (`Journal.take`), a claim is let go again if anything after it fails, and a run is
never started in a journal that cannot be written.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

from .engine.confirm import ConfirmerFn, approve_all
from .engine.lifecycle import InputError, Limits, RunState, validate_text
from . import paths
from .engine.run import Run, new_run_id

log = logging.getLogger(__name__)

EXIT = {RunState.COMPLETE: 0, RunState.BLOCKED: 3, RunState.CANCELLED: 4, RunState.PAUSED: 6}
EXIT_BAD_INPUT, EXIT_INTERNAL = 2, 1
CANCEL_ANSWER_SECONDS = 5.0  # how long a live driver has to carry out a cancel


def exit_code(state: RunState | None) -> int:
    """The command's exit code for a run that stopped in `state` (DESIGN.md: the goalgui command)."""
    return EXIT.get(state, EXIT_INTERNAL)


class NoModel:
    """For what needs no model (cancelling, abandoning): it refuses to be called."""

    name = "none"

    async def complete(self, request):
        raise RuntimeError("no model is loaded for this command")


def workspace_for(run_id: str, given: str | os.PathLike | None = None) -> Path:
    """The folder a run's tools act in: the one given, or a new one under the data dir named after the run."""
    if given is not None and str(given).strip():
        folder = Path(given).expanduser()
        if folder.exists() and not folder.is_dir():
            raise InputError(f"the workspace {folder} is a file; name a folder")
        return folder.resolve()
    return paths.data_dir() / "workspaces" / run_id


def toolbox_for(folder: Path):
    """The run's tools in `folder` (created private if missing)."""
    from .tools import default_toolbox

    if not folder.exists():
        paths.private_dir(folder.parent)
    try:
        return default_toolbox(folder)
    except OSError as exc:
        raise InputError(f"the workspace {folder} cannot be made: {exc.strerror or exc}") from None


def start_run(journal, objective: str, *, model: str, strategy: str = "goal-stack", limits: Limits | None = None,
              permission_mode: str = "auto-edit", criteria: str = "", confirmer: ConfirmerFn = approve_all,
              workspace: str | os.PathLike | None = None, options: dict | None = None) -> Run:
    """A new run in `journal`, its root goal the objective, its tools in its workspace; bad input
    raises InputError in one line."""
    from .providers import embedder_for, load_model

    journal.writable()  # before the model loads: a run that cannot be journaled does not start
    run_id = new_run_id()
    tools = toolbox_for(workspace_for(run_id, workspace))
    loaded, spec = load_model(model)
    return Run.create(objective, loaded, model_spec=spec, strategy=strategy, limits=limits,
                      permission_mode=permission_mode, criteria=criteria, sink=journal, confirmer=confirmer,
                      embedder=embedder_for(loaded), tools=tools, run_id=run_id, options=options)


def resume_run(journal, run_id: str, *, model: str | None = None, confirmer: ConfirmerFn = approve_all,
               limits: dict | None = None, permission_mode: str | None = None, message: str | None = None) -> Run:
    """Claim a paused or blocked run and make it active again (with new limits, mode or model,
    and a message the model sees at the next turn boundary)."""
    from .providers import embedder_for, load_model

    if message is not None:
        message = validate_text(message, "message", empty_ok=False)  # before anything is taken or changed
    record = journal.take(run_id)
    try:
        blocking = record.still_blocking(record.limits.merged(**(limits or {})))
        if blocking is not None:  # it would stop again at once: say so, change nothing
            raise BudgetStillSpent(blocking[0], f"{blocking[1]}: raise it to resume")
        loaded, _spec = load_model(model or record.model)
        folder = record.options.get("workspace")  # a run from before tools has none: text only
        tools = toolbox_for(Path(folder)) if folder else None
        run = Run.restore(record, loaded, sink=journal, confirmer=confirmer, embedder=embedder_for(loaded),
                          tools=tools)
        if limits:
            run.set_limits(**limits)
        if permission_mode:
            run.set_permission_mode(permission_mode)
        run.resume()
        if message:
            run.tell(message)
    except BaseException:
        journal.release(run_id)
        raise
    return run


class BudgetStillSpent(InputError):
    """Resuming a budget-blocked run under limits that would block it again at once."""

    def __init__(self, budget: str, message: str):
        super().__init__(message)
        self.budget = budget


def end_run(journal, run_id: str, reason: str, *, doing: str = "cancel") -> Run:
    """Cancel a run that no live process drives (a dead driver's too), journaled at once."""
    record = journal.take(run_id, doing=doing)
    try:
        run = Run.restore(record, NoModel(), sink=journal)
        run.cancel(reason)
        run.close()
    finally:
        journal.release(run_id)
    return run


def abandon_run(journal, run_id: str) -> Run:
    """Give up a run that was interrupted (the window's Abandon): it ends cancelled, with that reason."""
    return end_run(journal, run_id, "abandoned after an interruption", doing="abandon")


def cancel_run(journal, run_id: str, reason: str = "cancelled by user") -> str:
    """Cancel `run_id` wherever it is driven; what happened, in one line. A live driver is asked
    through the journal; if it does not carry the cancel out in time, the request is withdrawn so
    it never takes effect later, and InputError says so."""
    if not journal.owner_alive(run_id):
        end_run(journal, run_id, reason)
        return f"run {run_id} cancelled"
    control = journal.request_control(run_id, "cancel", reason=reason)
    deadline = time.monotonic() + CANCEL_ANSWER_SECONDS
    while time.monotonic() < deadline:
        if journal.runs(run_id)[0]["state"] == RunState.CANCELLED.value:
            return f"run {run_id} cancelled"
        time.sleep(0.1)
    if journal.withdraw_control(control):  # a cancel that failed must not act later
        raise InputError(f"run {run_id} is driven by another process that did not answer; "
                         "the cancel was withdrawn (once that process is gone, cancel it again)")
    raise InputError(f"run {run_id}: its driver took the cancel but has not finished it yet; "
                     "look again with: goalgui runs")


def steer_run(journal, run_id: str, goal_id: str, action: str, *, note: str = "", text: str = "",
              subgoals: list[str] | tuple = ()) -> str:
    """Overrule the model on a goal (`engine.overrule`) wherever the run is: a live driver is asked
    through the journal and carries it out at once; a run nobody drives is changed here. One line."""
    from .engine.overrule import check

    fields = {"goal_id": goal_id, "overrule": action, "note": note, "text": text, "subgoals": list(subgoals)}
    check(journal.view(run_id), goal_id, action, note, text, list(subgoals))  # refused here, in one line
    if journal.owner_alive(run_id):
        control = journal.request_control(run_id, "steer", **fields)
        deadline = time.monotonic() + CANCEL_ANSWER_SECONDS
        while time.monotonic() < deadline:
            if journal.control_taken(control):
                return f"run {run_id}: its driver took the {action} of {goal_id}"
            time.sleep(0.1)
        if journal.withdraw_control(control):
            raise InputError(f"run {run_id} is driven by another process that did not answer; the {action} was "
                             "withdrawn")
        return f"run {run_id}: its driver took the {action} of {goal_id}"
    record = journal.take(run_id, doing="steer")
    try:
        run = Run.restore(record, NoModel(), sink=journal)
        run.overrule(goal_id, action, note=note, text=text, subgoals=subgoals)
        run.close()
    finally:
        journal.release(run_id)
    return f"run {run_id}: {goal_id} {action} by the operator; resume it with: goalgui resume {run_id}"
