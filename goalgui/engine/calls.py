"""A run's model calls and confirmations: recorded as events, bounded by the budgets.

A mixin of `Run` (it uses the run's record, model, recorder, clock and confirmer): every call is
one `ModelCalled` event whatever happens to it (answered, cut short by a pause or the time
budget, failed, or a reply that breaks the contract), and a model's own exception of any kind
becomes a `BadResponse` that parks the run, so only goalgui's cancellation cancels.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid

from . import events as ev
from . import goal_mode
from .confirm import ConfirmationAnswer, ConfirmationRequest, NeedsConfirmation, Outcome
from .lifecycle import BudgetExhausted, RunState
from .model import (
    BadResponse,
    GoalView,
    ModelReply,
    ModelRequest,
    ProviderError,
    Usage,
    checked,
    estimate_usage,
)
from .record import Goal

log = logging.getLogger("goalgui.engine.run")

NUDGE_AT = 0.75
# the calls that do a turn's work carry the goal injection (the first of them in each turn); a
# verdict (actionable, verify, confirm_plan) and a wrap-up are judged on their own data
INJECTED = frozenset({"execute", "decompose", "work"})


class ModelCalls:
    @property
    def calling(self) -> tuple[str, str | None, float] | None:
        """(purpose, goal id, since) of the latest call in flight, or None."""
        return next(reversed(self._flights.values()), None)

    async def call_model(
        self,
        purpose: str,
        messages: list[dict],
        goal: Goal | None,
        *,
        schema: dict | None = None,
        tools: list[dict] | None = None,
        max_tokens: int | None = None,
        tool_choice: str = "auto",
        after_stop: bool = False,
    ) -> ModelReply:
        """Call the model, record the call, then nudge the budgets. A spent token or time budget
        refuses the call (the one that crossed it kept its result). `after_stop`: the one wrap-up
        granted after the model itself stopped the run (`Run.wrap_up_stopped`)."""
        if self.record.state is not RunState.ACTIVE and not after_stop:
            raise asyncio.CancelledError()
        limit = self.record.limits.seconds
        remaining = None if limit is None else limit - self.record.active_seconds(self.clock())
        if remaining is not None and remaining <= 0:
            raise BudgetExhausted(self.record.exhausted(self.clock()) or "budget: time")
        tokens = self.record.limits.tokens
        if tokens is not None and self.record.metrics.tokens >= tokens:
            # the call that crossed the budget kept its result; this next one is the one refused
            raise BudgetExhausted(self.record.exhausted(self.clock()) or "budget: tokens")
        if self._turn_boundary and purpose in INJECTED:  # seed 001: at turn boundaries only
            self._turn_boundary = False
            messages = goal_mode.inject(messages, self.prompts.goal_injection(goal_mode.view(self.record, self.clock())))
        view = GoalView(goal.id, goal.parent_id, goal.depth, goal.text) if goal else None
        request = ModelRequest(
            purpose=purpose,
            messages=messages,
            goal=view,
            schema=schema,
            tools=tools,
            max_tokens=max_tokens,
            tool_choice=tool_choice if tools else "auto",
            deadline=None if remaining is None else time.monotonic() + remaining,
        )
        started = time.perf_counter()
        flight = id(request)
        self._flights[flight] = (purpose, goal.id if goal else None, time.time())  # what the window shows
        try:
            if remaining is None:
                reply = await self.model.complete(request)
            else:
                async with asyncio.timeout(remaining) as scope:
                    reply = await self.model.complete(request)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling() == 0:  # the model raised it: nobody cancelled
                raise self._model_failed(request, goal, started, "CancelledError", "") from None
            self._record_call(request, goal, None, started, cancelled=True)
            raise
        except TimeoutError:
            if remaining is not None and scope.expired():
                self._record_call(request, goal, None, started, cancelled=True)
                raise BudgetExhausted(self.record.exhausted(self.clock() + 1e-3) or "budget: time")
            self._record_call(request, goal, None, started, error="provider unavailable: timed out")
            raise
        except ProviderError as exc:
            self._record_call(request, goal, None, started, error=f"{exc.kind}: {exc}")
            raise
        except BaseException as exc:  # SystemExit, KeyboardInterrupt, a plugin's bug: none ends goalgui
            log.warning("model %s raised", getattr(self.model, "name", "?"), exc_info=True)
            raise self._model_failed(request, goal, started, type(exc).__name__, str(exc)) from None
        finally:
            self._flights.pop(flight, None)
        try:
            reply = checked(reply)
        except BadResponse as exc:
            self._record_call(request, goal, None, started, error=f"bad response: {exc}")
            raise
        self._record_call(request, goal, reply, started)
        self.check_budgets(stop=False)  # paid for: the reply is used, the next call is refused
        return reply

    def _model_failed(self, request, goal, started, kind: str, message: str) -> BadResponse:
        """What a model raised that is not a provider error, as one: the run parks with it."""
        reason = f"the model raised {kind}" + (f": {message[:300]}" if message else "")
        self._record_call(request, goal, None, started, error=f"bad response: {reason}")
        return BadResponse(reason)

    def _record_call(self, request, goal, reply, started, *, cancelled=False, error=None) -> None:
        usage = reply.usage if reply is not None else Usage()
        if reply is not None and usage.input_tokens == 0 and usage.output_tokens == 0:
            usage = estimate_usage(request, reply.text)
        elif cancelled:  # the prompt was sent; what it cost is not reported, so estimate it
            usage = Usage(estimate_usage(request, "").input_tokens, 0, estimated=True)
        self.emit(
            ev.ModelCalled,
            goal_id=goal.id if goal else None,
            purpose=request.purpose,
            tokens_in=max(0, int(usage.input_tokens)),
            tokens_out=max(0, int(usage.output_tokens)),
            estimated=usage.estimated,
            latency=time.perf_counter() - started,
            model=reply.model if reply is not None else None,
            messages=request.messages,
            reply=reply.text if reply is not None else "",
            tool_calls=list(reply.tool_calls) if reply is not None and reply.tool_calls else None,
            error=error,
            cancelled=cancelled,
        )

    def check_budgets(self, *, stop: bool = True) -> None:
        """Nudge each budget past 75% once; raise `BudgetExhausted` for tokens at 100% (`stop`)."""
        now = self.clock()
        for name, (used, limit) in self.record.usage(now).items():
            if used >= NUDGE_AT * limit and (name, limit) not in self.record.nudged:
                self.emit(ev.BudgetNudged, budget=name, used=float(used), limit=float(limit))
        tokens = self.record.limits.tokens
        if stop and tokens is not None and self.record.metrics.tokens >= tokens:
            raise BudgetExhausted(self.record.exhausted(now) or "budget: tokens")

    async def confirm(self, kind: str, proposal: dict, goal: Goal | None = None) -> ConfirmationAnswer:
        """Ask the confirmer, recording question, the person's edits as they make them, and the answer.
        The same question left unanswered by a stop comes back with those edits. Questions from steps
        running side by side are asked one at a time."""
        async with self._confirm_lock:
            return await self._confirm(kind, proposal, goal)

    async def _confirm(self, kind: str, proposal: dict, goal: Goal | None) -> ConfirmationAnswer:
        mode = self.record.permission_mode
        confirmation_id = uuid.uuid4().hex[:8]
        goal_id = goal.id if goal is not None else None
        self.emit(ev.ConfirmationAsked, confirmation_id=confirmation_id, kind=kind, proposal=proposal, goal_id=goal_id)
        draft = self.record.unanswered.get((kind, goal_id), {}).get("draft")

        def save_draft(fields: dict) -> None:
            if self.record.pending_confirmation is not None \
                    and self.record.pending_confirmation.confirmation_id == confirmation_id:
                self.emit(ev.ConfirmationDrafted, confirmation_id=confirmation_id, draft=dict(fields))
                self.recorder.flush()

        request = ConfirmationRequest(confirmation_id, kind, proposal, mode, draft=draft, save_draft=save_draft,
                                      run_id=self.record.run_id)
        self.recorder.flush()  # whoever answers must see the question now
        try:
            answer = await self.confirmer(request)
        except (asyncio.CancelledError, NeedsConfirmation):
            self.emit(ev.ConfirmationAnswered, confirmation_id=confirmation_id, outcome=Outcome.ABORTED.value)
            raise
        self.emit(
            ev.ConfirmationAnswered,
            confirmation_id=confirmation_id,
            outcome=answer.outcome.value,
            mode=answer.mode,
            edits=dict(answer.edits) or None,
        )
        if answer.outcome is Outcome.APPROVED and answer.mode and answer.mode != mode:
            self.set_permission_mode(answer.mode)
        return answer
