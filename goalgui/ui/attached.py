"""A run another process drives, followed live from the journal (issue 14: attach).

`AttachedRun` looks to the window like a `Run` it drives: a record, a state, `subscribe` for the
committed batches, and the controls. The record is the journal's replay, kept current by reading
the events after its last one a few times a second, off the event loop; each read that found
events is handed to the subscribers as one batch, as a live run's commits are. The controls are
requests in the journal that the driving process carries out (`goalgui.remote`): pause, resume,
cancel, skip, budgets, mode, an overrule, a message, and the answer to a confirmation it waits
on, which is asked here too (`attached_confirm`). While it follows the run it says so in the
journal every second: the driver waits for its answers, and holds a paused or blocked run for it
to resume, only while a window watches. When the driver ends without finishing the run (a
`goalgui run` paused with nobody watching, a crash) the window is told, to open the run as its
own. Closing the window never pauses an attached run: the window does not drive it.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Callable

from ..engine.lifecycle import InputError, RunState
from ..journal import JournalError
from ..engine.record import RunRecord

log = logging.getLogger(__name__)
POLL_SECONDS = 0.25  # new events are on screen within this (plus a commit) of being journaled
WATCH_EVERY = 4  # polls between two words to the journal that this window watches (about a second)


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

    def __init__(self, journal, run_id: str, *, confirmer=None, driver_gone: Callable[[str], object] | None = None,
                 say: Callable[[str], object] | None = None):
        self.journal = journal
        self.say = say  # a request that could not be written, in one line (the window's status bar)
        self._writing: asyncio.Future | None = None
        self.record = journal.view(run_id)
        self.strategy = _Strategy(self.record)
        self.calling = None
        self.watcher = uuid.uuid4().hex
        self.driver = (journal.runs(run_id) or [{}])[0].get("driver")  # "pid N on HOST", for the status line
        self.driver_gone = driver_gone  # called with the run id when its driver ended and left it unfinished
        self._subscribers: list[Callable] = []
        self._task: asyncio.Task | None = None
        self.questions = None
        if confirmer is not None:
            from .attached_confirm import AttachedQuestions

            self.questions = AttachedQuestions(self, confirmer)

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
            self.detach()

    def detach(self) -> None:
        """The window stops following: its questions close and the driver stops counting on it."""
        if self.questions is not None:
            self.questions.close()
        try:
            self.journal.unwatch(self.run_id, self.watcher)
        except Exception:  # a closed journal: the word goes stale by itself in seconds
            log.info("could not say the window stopped watching", exc_info=True)

    def _read(self, tick: int) -> tuple[list, bool]:
        """Off the loop: the events after the last one shown, and whether the driver still lives
        (asked when nothing came, every few ticks); this window watches, said every second."""
        if tick % WATCH_EVERY == 0 and not self.record.state.final:
            try:
                self.journal.watch(self.run_id, self.watcher)
            except JournalError:  # a journal opened to read: follow the run all the same
                log.info("could not say this window watches run %s", self.run_id, exc_info=True)
        batch = list(self.journal.events(self.run_id, after=self.record.last_seq))
        alive = True if batch or tick % WATCH_EVERY else self.journal.owner_alive(self.run_id)
        return batch, alive

    async def _poll(self) -> None:
        if self.questions is not None:
            self.questions.update()  # one the driver waits on already
        tick = 0
        while True:
            try:
                batch, alive = await asyncio.to_thread(self._read, tick)
            except Exception:  # a busy or closed journal: the next tick tries again
                log.info("reading an attached run failed", exc_info=True)
                batch, alive = [], True
            tick += 1
            if batch:
                for event in batch:
                    self.record.apply(event)
                for callback in list(self._subscribers):
                    callback(batch)
                if self.questions is not None:
                    self.questions.update()
            if self.record.state.final:
                return
            if not alive:  # ended without finishing it: the window may take it over
                if self.questions is not None:
                    self.questions.close()
                if self.driver_gone is not None:
                    self.driver_gone(self.run_id)
                return
            await asyncio.sleep(POLL_SECONDS)

    # -- the controls: requests the driving process carries out ------------------------

    def _ask(self, action: str, **args) -> None:
        """Leave a request for the driver. It is written off the event loop (the driver may hold the
        journal's write lock for a moment), in the order asked; one that fails is said in one line."""
        if not self.journal.owner_alive(self.run_id):
            raise InputError(f"run {self.run_id} has no live driver any more: open it again to resume it here")
        before = self._writing

        async def write() -> None:
            if before is not None:
                await asyncio.wait([before])
            try:
                await asyncio.to_thread(self.journal.request_control, self.run_id, action, **args)
            except Exception as exc:
                log.warning("the %s request for run %s could not be written", action, self.run_id, exc_info=True)
                if self.say is not None:
                    self.say(f"could not ask the driver of run {self.run_id} to {action}: {exc}")

        self._writing = asyncio.ensure_future(write())

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
        self._ask("resume")

    def tell(self, text: str) -> None:
        self._ask("tell", text=text)

    def start(self) -> None:
        """The driving process drives it again once it takes the resume: nothing to start here."""

    def answer(self, confirmation_id: str, answer) -> None:
        """This window's answer to the question the driver waits on (the first answer wins)."""
        self._ask("answer", confirmation_id=confirmation_id, outcome=answer.outcome.value, mode=answer.mode,
                  edits=dict(answer.edits))

    def save_draft(self, confirmation_id: str, draft: dict) -> None:
        self._ask("draft", confirmation_id=confirmation_id, draft=draft)
