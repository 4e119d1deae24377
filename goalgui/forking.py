"""Fork a run: a new run whose history up to a point is another's, then its own.

The point is an event of the source: given (`--at-event N`), or the one before a goal's work began
(`--at GOAL`: the goals and results before it are kept, the goal and what came after it are
pending again). The fork's journal starts with the source's events 1..N as they were (their times
included, the run id and the model being the fork's), then `RunForked` names the source, the goal
and the event, and what was running at that moment is pending again with the run paused, as after a
crash, so resuming it (with another model, budgets or mode) is the ordinary resume. The source run
is only read.

The tools' workspace is the fork's own: the source's files as they are now are copied into it (the
files as they were at event N are not recorded anywhere), so the fork never changes the source's.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import stat
from pathlib import Path

from .engine import events as ev
from .engine.lifecycle import InputError, RunState
from .engine.record import GoalStatus, RunRecord
from .engine.run import new_run_id
from . import paths

def fork_point(journal, run_id: str, goal_id: str | None, event: int | None) -> tuple[int, str | None]:
    """(the last source event the fork keeps, the goal it was forked at). A bad goal or event is one
    line of InputError."""
    last = journal.runs(run_id)[0]["last_seq"]
    if event is not None:
        first_goal = next((e.seq for e in journal.events(run_id) if isinstance(e, ev.GoalAdded)), None)
        if first_goal is None or not first_goal <= event <= last:
            raise InputError(f"--at-event must be between {first_goal or 1} (the run's first goal) and {last}")
        return event, None
    if goal_id is None:
        raise InputError("fork needs --at GOAL or --at-event N")
    events = journal.goal_events(run_id, goal_id)
    if not any(isinstance(e, ev.GoalAdded) for e in events):
        raise InputError(f"run {run_id} has no goal {goal_id!r}")
    began = next((e.seq for e in events if isinstance(e, ev.TurnStarted)
                  or (isinstance(e, ev.GoalChanged) and e.status is not None)), None)
    return (began - 1 if began is not None else last), goal_id


def fork_run(journal, source: str, *, goal_id: str | None = None, event: int | None = None,
             model: str | None = None) -> str:
    """Write the fork into the journal (paused, ready to resume) and return its run id."""
    upto, goal_id = fork_point(journal, source, goal_id, event)
    record = RunRecord()
    fork_id = new_run_id()
    batch: list[ev.Event] = []

    def add(e: ev.Event) -> None:
        record.apply(e)
        batch.append(e)

    started = None
    for e in journal.events(source, upto=upto):  # one pass over the source: a big run is read once
        if isinstance(e, ev.RunStarted):
            started = len(batch)
            e = dataclasses.replace(e, run_id=fork_id, model=model or e.model, options=dict(e.options or {}))
        add(e)
    if record.state.final:  # refused before anything is written or copied
        raise InputError(f"at event {upto} run {source} had ended ({record.state.value}): fork it earlier")
    workspace = None
    folder = record.options.get("workspace") if started is not None else None
    if folder:
        workspace = _copy_workspace(Path(folder), fork_id)
        record.options["workspace"] = str(workspace)
        batch[started] = dataclasses.replace(batch[started], options=dict(record.options))
    seq, ts = record.last_seq, record.updated_at
    reason = f"forked from {source} at " + (f"goal {goal_id} (event {upto})" if goal_id else f"event {upto}")
    following = [(ev.RunForked, {"source_run": source, "source_goal": goal_id, "source_event": upto})]
    following += [(ev.GoalChanged, {"goal_id": g.id, "status": GoalStatus.PENDING.value})
                  for g in record.goals.values() if g.status is GoalStatus.RUNNING]
    if record.state is RunState.ACTIVE:
        following.append((ev.RunStateChanged, {"state": RunState.PAUSED.value, "reason": reason,
                                               "active_until": record.updated_at}))
    for cls, fields in following:
        seq += 1
        add(cls(seq=seq, ts=ts, **fields))
    try:  # one transaction: a fork is in the journal whole or not at all
        journal.write(fork_id, batch, record.snapshot())
    except BaseException:
        if workspace is not None:
            shutil.rmtree(workspace, ignore_errors=True)
        raise
    journal.release(fork_id)  # written by this process, driven by whoever resumes it
    return fork_id


def _copy_workspace(folder: Path, fork_id: str) -> Path:
    """The source's files, folders and links (not its pipes, sockets or devices: they are not files
    to work on, and copying one would block or fail) in the fork's own folder."""
    target = paths.data_dir() / "workspaces" / fork_id

    def special(where: str, names: list[str]) -> list[str]:
        out = []
        for name in names:
            mode = os.lstat(os.path.join(where, name)).st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
                out.append(name)
        return out

    try:
        if folder.is_dir():
            shutil.copytree(folder, target, symlinks=True, ignore=special, dirs_exist_ok=True)
        paths.private_dir(target)
    except (OSError, shutil.Error) as exc:
        shutil.rmtree(target, ignore_errors=True)
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
        raise InputError(f"the source's workspace {folder} could not be copied for the fork: {reason}") from None
    return target
