"""A run another process drives, followed live from the journal (issue 14: attach).

`AttachedRun` looks to the window like a `Run` it drives: a record, a state, `subscribe` for the
committed batches, and the controls. The record is the journal's replay, kept current by reading
the events after its last one a few times a second, off the event loop; each read that found
events is handed to the subscribers as one batch, as a live run's commits are. The controls are
requests in the journal that the driving process carries out (pause, cancel, skip, budgets, mode,
an overrule); resume is not offered while the driver holds the run (a paused `goalgui run` has
ended: resume it from the Runs tab). Closing the window never pauses an attached run: the window
does not drive it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Callable

from ..engine.lifecycle import InputError, RunState
from ..engine.record import RunRecord

log = logging.getLogger(__name__)
POLL_SECONDS = 0.25  # new events are on screen within this (plus a commit) of being journaled


class _Strategy:
    """What the controls read of a strategy: the goal being worked on (from the journal)."""

    def __init__(self, record: RunRecord):
        self.record = record

    @property
    def current_goal_id(self) -> str | None:
        return next((g.id for g in reversed(list(self.record.goals.values()))
                     if g.status.value == "running" and not g.children), None)


class AttachedRun:
    attached = True  # the window follows it, another process drives it

    def __init__(self, journal, run_id: str):
        self.journal = journal
        self.record = journal.view(run_id)
        self.strategy = _Strategy(self.record)
        self.calling = None
        self._subscribers: list[Callable] = []
        self._task: asyncio.Task | None = None

    @property
    def run_id(self) -> str:
        return self.record.run_id

    @property
    def state(self) -> RunState:
        return self.record.state

    def subscribe(self, callback) -> Callable[[], None]:
        self._subscribers.append(callback)
        if self._task is None:
            self._task = asyncio.ensure_future(self._poll())
        return lambda: self._unsubscribe(callback)

    def _unsubscribe(self, callback) -> None:
        if callback in self._subscribers:
            self._subscribers.remove(callback)
        if not self._subscribers and self._task is not None:
            self._task.cancel()
            self._task = None

    async def _poll(self) -> None:
        while True:
            await asyncio.sleep(POLL_SECONDS)
            try:
                batch = await asyncio.to_thread(
                    lambda: list(self.journal.events(self.run_id, after=self.record.last_seq)))
            except Exception:  # a busy or closed journal: the next tick tries again
                log.info("reading an attached run failed", exc_info=True)
                continue
            if batch:
                for event in batch:
                    self.record.apply(event)
                for callback in list(self._subscribers):
                    callback(batch)
            if self.record.state.final:
                return

    # -- the controls: requests the driving process carries out ------------------------

    def _ask(self, action: str, **args) -> None:
        if not self.journal.owner_alive(self.run_id):
            raise InputError(f"run {self.run_id} has no live driver any more: open it again to resume it here")
        self.journal.request_control(self.run_id, action, **args)

    def pause(self, reason: str = "paused from an attached window") -> None:
        self._ask("pause", reason=reason)

    def cancel(self, reason: str = "cancelled from an attached window") -> None:
        self._ask("cancel", reason=reason)

    def skip(self, goal_id: str | None = None) -> None:
        self._ask("skip", goal_id=goal_id or self.strategy.current_goal_id)

    def set_limits(self, clear=(), **changes) -> None:
        self.record.limits.merged(clear, **changes)  # a bad value is refused here, in one line
        self._ask("limits", clear=list(clear), **changes)

    def set_permission_mode(self, mode: str) -> None:
        self._ask("mode", mode=mode)

    def overrule(self, goal_id: str, action: str, *, note: str = "", text: str = "", subgoals=()) -> None:
        self._ask("steer", goal_id=goal_id, overrule=action, note=note, text=text, subgoals=list(subgoals))

    def resume(self) -> None:
        if self.journal.owner_alive(self.run_id):
            raise InputError(f"run {self.run_id} is driven by another process: resume it there")
        raise InputError(f"the process driving run {self.run_id} has ended: open the run again (Runs tab) to "
                         "resume it here")

    def start(self):
        raise InputError(f"run {self.run_id} is driven by another process")

    def tell(self, text: str) -> None:
        raise InputError(f"run {self.run_id} is driven by another process: tell it there")
