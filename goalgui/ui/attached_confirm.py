"""The confirmation a run's driver waits on, asked in every window attached to that run too.

The driver journals the question (`confirmation_asked`) and waits; each attached window that
reads it opens the same dialog it would open for a run of its own (the window's `DialogConfirmer`,
so the same fields, the same alert, the same "waiting" in the status line). An answer given here
goes to the driver as a control request (`goalgui.remote`), which takes the first answer from
anywhere and journals it; when the answer (anyone's) or a stop reaches this window, its dialog
closes. What is typed in the dialog is journaled by the driver as its own drafts are, so a
question asked again after a stop comes back with it, in any window.
"""

from __future__ import annotations

import asyncio
import logging

from ..engine.confirm import ConfirmationRequest, Outcome
from ..engine.lifecycle import InputError, RunState

log = logging.getLogger(__name__)


class AttachedQuestions:
    def __init__(self, run, confirmer):
        self.run = run  # an AttachedRun
        self.confirmer = confirmer  # the window's DialogConfirmer
        self._asking: dict[str, asyncio.Task] = {}
        self._answered: set[str] = set()  # answered here: not asked again while the driver takes it

    def update(self) -> None:
        """Open the dialog for the question the driver waits on now; close any it no longer waits on."""
        record = self.run.record
        asked = record.pending_confirmation if record.state is RunState.ACTIVE else None
        for confirmation_id in [c for c in self._asking if asked is None or asked.confirmation_id != c]:
            self._asking.pop(confirmation_id).cancel()  # answered elsewhere, or the run stopped
        if asked is None or asked.confirmation_id in self._asking or asked.confirmation_id in self._answered:
            return
        confirmation_id = asked.confirmation_id
        draft = record.unanswered.get((asked.kind, asked.goal_id), {}).get("draft")

        def save_draft(fields: dict) -> None:
            if confirmation_id in self._asking:  # not once it closed: the driver has moved on
                self._tell(lambda: self.run.save_draft(confirmation_id, dict(fields)))

        request = ConfirmationRequest(confirmation_id, asked.kind, asked.proposal, record.permission_mode,
                                      draft=draft, save_draft=save_draft, run_id=self.run.run_id)
        self._asking[confirmation_id] = asyncio.ensure_future(self._ask(request))

    async def _ask(self, request: ConfirmationRequest) -> None:
        try:
            answer = await self.confirmer(request)
        except asyncio.CancelledError:
            return
        if self._asking.pop(request.id, None) is None:
            return
        self._answered.add(request.id)
        if answer.outcome is Outcome.ABORTED:  # this dialog timed out: the driver waits for someone else
            return
        self._tell(lambda: self.run.answer(request.id, answer))

    def _tell(self, ask) -> None:
        try:
            ask()
        except InputError as exc:  # the driver is gone: the window opens the run as its own
            log.info("an answer for an attached run was not sent: %s", exc)
            if self.run.say is not None:
                self.run.say(str(exc))

    def close(self) -> None:
        """The window stops following the run: its dialogs close, nothing is answered."""
        for task in self._asking.values():
            task.cancel()
        self._asking.clear()
