"""A run: its record, the driver loop, and the controls that need no model turn.

`Run.drive()` works the strategy step by step while the run is active. Every
step runs as its own task, so pause, cancel and skip take effect at once by
cancelling it, also in the middle of a model call (the call is recorded as
cancelled and its goal runs again on resume). Budgets are checked before each
step and after each model call; a time budget also bounds the call itself.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from typing import Callable

from . import events as ev
from . import prompts
from .calls import ModelCalls
from .confirm import ConfirmerFn, NeedsConfirmation, approve_all
from .health import health
from .lifecycle import InputError, Limits, RunState, StopRun, check_transition, validate_objective, validate_text
from .memory import Embedder, FindingsMemory
from .model import Model, ProviderError, RateLimited
from .overrule import Overrules
from .parsing import degenerate
from .permissions import validate_permission_mode
from .record import SETTLED, Goal, GoalStatus, RunRecord, interruption
from .recorder import EventSink, Recorder
from .tool_calls import ToolCalls
from .tools import Toolbox
from .strategies import Context, check_strategy, strategy_for

log = logging.getLogger(__name__)

PLAN_READY = ("needs confirmation: the plan is ready; review the tree, then choose ask, auto-edit or "
              "auto to execute it")
# Stops after which no wrap-up call is made: the budget it would spend is gone.
_NO_WRAP_UP = ("budget: tokens", "budget: time")


def new_run_id() -> str:
    return uuid.uuid4().hex[:12]


class Run(ModelCalls, ToolCalls, Overrules):
    """One run of one strategy: drive it, watch it (subscribe), steer it (the control methods)."""

    def __init__(
        self,
        record: RunRecord,
        model: Model,
        *,
        sink: EventSink | None = None,
        confirmer: ConfirmerFn = approve_all,
        embedder: Embedder | None = None,
        tools: Toolbox | None = None,
        clock: Callable[[], float] = time.time,
    ):
        self.record = record
        self.model = model
        self.prompts = prompts.for_model(model)
        self._turn_boundary = False  # the next model call opens a turn: it carries the goal injection
        self._flights: dict[int, tuple[str, str | None, float]] = {}  # the calls in flight (the plan runs several)
        self._confirm_lock = asyncio.Lock()  # steps side by side ask their questions one at a time
        self.confirmer = confirmer
        self.clock = clock
        self.recorder = Recorder(record, sink, clock)
        self.memory = FindingsMemory(embedder)
        for goal in record.goals.values():
            if goal.status is GoalStatus.DONE and goal.result:
                self.memory.save(goal.id, goal.result, goal.text)
        self._goal_seq = len(record.goals)
        self._step_task: asyncio.Task | None = None
        self._driving = False
        self._drive_task: asyncio.Task | None = None
        self.tools = tools  # what the model may act with, in the run's workspace (None: text only)
        self.strategy = strategy_for(record.strategy, Context(self))

    # -- creating and restoring ---------------------------------------------

    @classmethod
    def create(
        cls,
        objective: str,
        model: Model,
        *,
        model_spec: str = "",
        strategy: str = "goal-stack",
        limits: Limits | None = None,
        permission_mode: str = "auto-edit",
        criteria: str = "",
        options: dict | None = None,
        run_id: str | None = None,
        **kwargs,
    ) -> Run:
        """Validate everything, then start a run whose root goal is the objective."""
        objective = validate_objective(objective)
        criteria = validate_text(criteria, "completion criteria")
        check_strategy(strategy)
        limits = (limits or Limits()).validated()
        validate_permission_mode(permission_mode)
        record = RunRecord()
        record.run_id = run_id or new_run_id()
        record.strategy = strategy
        options = dict(options or {})
        if kwargs.get("tools") is not None:  # where the run acts, in its record (shown, and found on resume)
            options["workspace"] = str(kwargs["tools"].workspace)
        run = cls(record, model, **kwargs)
        run.emit(
            ev.RunStarted,
            run_id=record.run_id,
            objective=objective,
            strategy=strategy,
            model=model_spec or getattr(model, "name", type(model).__name__),
            limits=limits.to_dict(),
            permission_mode=permission_mode,
            criteria=criteria,
            options=options,
        )
        run.add_goal(None, objective)
        run.strategy.rebuild()
        return run

    @classmethod
    def restore(cls, record: RunRecord, model: Model, **kwargs) -> Run:
        """Continue a journaled run. One that was active (its process died) comes back paused."""
        run = cls(record, model, **kwargs)
        for event_type, fields in interruption(record):
            run.emit(event_type, **fields)
        return run

    # -- events --------------------------------------------------------------

    def emit(self, cls: type[ev.Event], **fields) -> ev.Event:
        return self.recorder.emit(cls, **fields)

    def subscribe(self, callback) -> Callable[[], None]:
        """Call `callback(batch)` with each committed batch of events."""
        return self.recorder.subscribe(callback)

    @property
    def run_id(self) -> str:
        return self.record.run_id

    @property
    def state(self) -> RunState:
        return self.record.state

    def report(self) -> dict:
        return self.record.report(self.clock())

    def close(self) -> None:
        """Write out every pending event, waiting for the journal if another process holds it."""
        self.recorder.flush(wait=True)

    # -- the tree ------------------------------------------------------------

    def add_goal(self, parent: Goal | None, text: str, facts: dict | None = None) -> Goal:
        self._goal_seq += 1
        goal_id = f"g{self._goal_seq}"
        self.emit(
            ev.GoalAdded,
            goal_id=goal_id,
            parent_id=parent.id if parent else None,
            depth=parent.depth + 1 if parent else 0,
            text=text,
            facts=facts or None,
        )
        return self.record.goals[goal_id]

    def set_goal(self, goal: Goal, **changes) -> None:
        status = changes.get("status")
        if isinstance(status, GoalStatus):
            changes["status"] = status.value
        self.emit(ev.GoalChanged, goal_id=goal.id, **changes)

    def settle_parents(self, goal: Goal) -> None:
        """Give each ancestor whose children are all settled its derived status."""
        goals = self.record.goals
        parent_id = goal.parent_id
        while parent_id is not None:
            parent = goals[parent_id]
            kids = [goals[c].status for c in parent.children]
            if any(s not in SETTLED for s in kids):
                return
            if all(s is GoalStatus.DONE for s in kids):
                status = GoalStatus.DONE
            elif GoalStatus.FAILED in kids:
                status = GoalStatus.FAILED
            elif GoalStatus.ABANDONED in kids:
                status = GoalStatus.ABANDONED
            else:
                status = GoalStatus.SKIPPED
            if parent.status is not status:
                changes: dict = {"status": status}
                if status is not GoalStatus.DONE:  # "skipped" over 2 done and 1 skipped child: say what it is
                    counts = ", ".join(f"{kids.count(s)} {s.value}" for s in GoalStatus if s in kids)
                    changes["note"] = _join(parent.note, f"sub-goals: {counts}")
                self.set_goal(parent, **changes)
            parent_id = parent.parent_id

    def begin_turn(self, goal: Goal | None) -> None:
        """Count a turn; the goal it works on (and every ancestor) is running."""
        chain = []
        g = self.record.goals[goal.parent_id] if goal is not None and goal.parent_id else None
        while g is not None and g.status is not GoalStatus.RUNNING:
            chain.append(g)
            g = self.record.goals[g.parent_id] if g.parent_id else None
        for g in reversed(chain):
            self.set_goal(g, status=GoalStatus.RUNNING)
        self.emit(ev.TurnStarted, goal_id=goal.id if goal is not None else None)
        self._turn_boundary = True
        # goals added since the last call count too: the turn's prompts see the nudge at once
        self.check_budgets()

    def _settle_running(self) -> None:
        """After a stop nothing is running: interrupted goals wait to run again."""
        for goal in self.record.goals.values():
            if goal.status is GoalStatus.RUNNING:
                self.set_goal(goal, status=GoalStatus.PENDING)

    def _abandon_unsettled(self, note: str = "") -> None:
        for goal in self.record.goals.values():
            if goal.status not in SETTLED:
                if note:
                    self.set_goal(goal, status=GoalStatus.ABANDONED, note=_join(goal.note, note))
                else:
                    self.set_goal(goal, status=GoalStatus.ABANDONED)

    # -- controls (no model turn needed) --------------------------------------

    def _transition(self, state: RunState, reason: str | None = None, outcome: str | None = None) -> None:
        check_transition(self.record.state, state)
        figures = None if state is RunState.ACTIVE else health(self.record)  # journaled where the run stops
        self.emit(ev.RunStateChanged, state=state.value, reason=reason, outcome=outcome, health=figures)

    def pause(self, reason: str = "paused by user") -> None:
        """Stop working at once; the goal in hand runs again on resume."""
        self._transition(RunState.PAUSED, reason)
        self._settle_running()
        self._cancel_step()
        self.recorder.flush()

    def resume(self) -> None:
        """Continue a paused or blocked run (what a budget stop abandoned is taken up again)."""
        check_transition(self.record.state, RunState.ACTIVE)
        for goal in self.record.goals.values():
            if goal.status is GoalStatus.ABANDONED:
                kept = goal.note.replace(WAITING_ON_BUDGET, "").replace("; ;", ";").strip("; ")
                if TAKEN_UP not in kept:  # said once, however many times a budget stops it
                    kept = _join(kept, TAKEN_UP)
                self.set_goal(goal, status=GoalStatus.PENDING, note=kept)
        self._transition(RunState.ACTIVE)
        self.strategy.rebuild()
        self.recorder.flush()

    def tell(self, text: str) -> None:
        """An operator message for the model, shown at every turn boundary from the next one on
        (seed 001: a blocked run is given what it asked for)."""
        self.emit(ev.OperatorMessage, text=validate_text(text, "message", empty_ok=False))
        self.recorder.flush()

    def cancel(self, reason: str = "cancelled by user") -> None:
        """Clear the run; its record ends cancelled."""
        self._transition(RunState.CANCELLED, reason)
        self._abandon_unsettled()
        self._cancel_step()
        self.recorder.flush()

    def block(self, reason: str) -> None:
        """Stop as blocked at once (a blocker reported outside a step, e.g. from a chat turn)."""
        self._transition(RunState.BLOCKED, reason)
        self._settle_running()
        self._cancel_step()
        self.recorder.flush()

    def complete(self, reason: str = "marked complete") -> None:
        """Close an active run as complete; what was not done yet is skipped with the reason."""
        check_transition(self.record.state, RunState.COMPLETE)
        for goal in self.record.goals.values():
            if goal.status not in SETTLED:
                self.set_goal(goal, status=GoalStatus.SKIPPED, note=_join(goal.note, reason))
        self._cancel_step()
        self._transition(RunState.COMPLETE, outcome=self._outcome())
        self.recorder.flush()

    def skip(self, goal_id: str | None = None) -> Goal:
        """Skip the running goal, or a given unsettled one with everything under it."""
        if self.record.state.final:
            raise InputError(f"a {self.record.state.value} run has nothing to skip")
        goal_id = goal_id or self.strategy.current_goal_id
        if goal_id is None:
            raise InputError("no goal is running: name a pending goal to skip")
        goal = self.record.goals.get(goal_id)
        if goal is None:
            raise InputError(f"no goal {goal_id!r} in this run")
        if goal.status in SETTLED:
            raise InputError(f"goal {goal_id} is already {goal.status.value}")
        subtree, cursor = [], [goal.id]
        while cursor:
            g = self.record.goals[cursor.pop()]
            subtree.append(g)
            cursor.extend(g.children)
        ids = {g.id for g in subtree}
        for g in subtree:
            if g.status not in SETTLED:
                self.set_goal(g, status=GoalStatus.SKIPPED, note=_join(g.note, "skipped by user"))
        cancel_goals = getattr(self.strategy, "cancel_goals", None)  # a plug-in may work one goal at a time
        if not (cancel_goals is not None and cancel_goals(ids)) and self.strategy.current_goal_id in ids:
            self._cancel_step()
        self.settle_parents(goal)
        self.recorder.flush()
        return goal

    def set_limits(self, clear: tuple[str, ...] | list[str] = (), **changes) -> Limits:
        """Raise or lower limits (max_depth, max_goals, tokens, turns, seconds); `clear` removes opt-in
        budgets (tokens, turns, seconds)."""
        if self.record.state.final:
            raise InputError(f"a {self.record.state.value} run has no budget to change")
        limits = self.record.limits.merged(clear, **changes)
        if limits != self.record.limits:
            self.emit(ev.LimitsChanged, limits=limits.to_dict())
            self.recorder.flush()
        return limits

    def set_permission_mode(self, mode: str) -> None:
        validate_permission_mode(mode)
        if mode != self.record.permission_mode:
            self.emit(ev.PermissionModeChanged, mode=mode)
            self.strategy.rebuild()  # leaving plan mode puts the planned goals back to work

    def _cancel_step(self) -> None:
        task = self._step_task
        try:
            current = asyncio.current_task()
        except RuntimeError:  # called from a Qt slot between two turns of the loop
            current = None
        if task is not None and not task.done() and task is not current:
            task.cancel()

    # -- driving -------------------------------------------------------------

    def start(self) -> asyncio.Task:
        """Drive in a task owned by this run (for callers that do not await `drive`)."""
        if self._drive_task is None or self._drive_task.done():
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # a Qt slot between two turns of qasync's loop
                loop = asyncio.get_event_loop_policy().get_event_loop()
            self._drive_task = loop.create_task(self.drive())
        return self._drive_task

    async def drive(self) -> RunState:
        """Work the strategy while the run is active; return the state it stopped in. A run resumed
        while its last batch was still being written (another process held the journal) is driven
        on, not left active with nobody driving it."""
        while True:
            state = await self._drive()
            if state is not RunState.ACTIVE:
                return state

    async def _drive(self) -> RunState:
        if self._driving:
            raise RuntimeError("this run is already being driven")
        self._driving = True
        try:
            while self.record.state is RunState.ACTIVE:
                if self.recorder.error is not None:
                    raise self.recorder.error
                if not self.strategy.has_work():
                    if self.strategy.planned():
                        self.pause(PLAN_READY)
                        break
                    await self._in_step(self._finish())
                    continue
                reason = self.record.exhausted(self.clock())
                if reason:
                    await self._in_step(self._block(reason))
                    continue
                # each step runs as its own task, so the loop (the journal's commits, the window)
                # gets its turn between steps even when the model answers at once
                await self._in_step(self.strategy.step())
        finally:
            if self.record.state is not RunState.ACTIVE:
                self._settle_running()
            try:
                await self.recorder.drain()  # the loop stays live while another process holds the journal
            except asyncio.CancelledError:
                self.recorder.flush(wait=True)
                raise
            finally:
                self._driving = False
        if self.recorder.error is not None:
            raise self.recorder.error
        return self.record.state

    async def _in_step(self, coro) -> None:
        """Run one step as a cancellable task and turn what it raised into a state."""
        self._step_task = asyncio.ensure_future(coro)
        try:
            await self._step_task
        except asyncio.CancelledError:
            if asyncio.current_task().cancelling():
                raise
        except StopRun as stop:
            await self._in_step(self._block(stop.reason))
        except RateLimited as exc:
            when = "" if exc.retry_after is None else f"; retry after {exc.retry_after:g} s"
            self._park(f"rate limited: {exc}{when}")
        except ProviderError as exc:
            self._park(f"{exc.kind}: {exc}")
        except NeedsConfirmation as exc:
            self._park(f"needs confirmation: {exc}")
        except Exception as exc:
            log.exception("a step of run %s failed", self.run_id)
            self._park(f"internal error: {type(exc).__name__}: {exc}")
        finally:
            self._step_task = None

    def _park(self, reason: str) -> None:
        if self.record.state is RunState.ACTIVE:
            self.pause(reason)

    def _outcome(self) -> str:
        """The strategy's outcome (the plan's may be gave_up); by the leaves for one that has none."""
        outcome = getattr(self.strategy, "outcome", None)
        return outcome() if outcome is not None else self.record.compute_outcome()

    async def _finish(self) -> None:
        finishing = getattr(self.strategy, "finishing", None)
        if finishing is not None:
            finishing()
        await self._wrap_up("complete", None)
        if self.record.state is RunState.ACTIVE:
            self._transition(RunState.COMPLETE, outcome=self._outcome())

    async def _block(self, reason: str) -> None:
        if self.record.state is not RunState.ACTIVE:
            return
        if reason.startswith("budget:"):
            # the report's contract (DESIGN.md): a budget stop abandons what was pending; the note says
            # it is taken up again if the budget is raised and the run resumed
            self._abandon_unsettled(WAITING_ON_BUDGET)
        else:  # blocked by the model or a rule: what is unfinished waits for the operator's answer
            self._settle_running()
        await self._wrap_up("blocked", reason)
        if self.record.state is RunState.ACTIVE:
            self._transition(RunState.BLOCKED, reason)

    async def wrap_up_stopped(self, state: str, reason: str | None) -> None:
        """The wrap-up turn after the model settled the goal itself (UpdateGoal complete or
        blocked, seed 001), the run already stopped: this one call is let through."""
        await self._wrap_up(state, reason, after_stop=True)

    async def _wrap_up(self, state: str, reason: str | None, *, after_stop: bool = False) -> None:
        """One summarize call; its failure never changes how the run ends. None where the
        budget it would spend is the one that ran out (seed 001: no wrap-up step past the step
        budget; the summary says so), nor twice for one stop (a resume that re-blocks at once)."""
        rec = self.record
        if rec.summarized_at_calls == rec.metrics.model_calls and rec.summary and rec.summarized_reason == reason:
            return  # nothing happened since the last wrap-up: it still says it
        if reason and reason.startswith(_NO_WRAP_UP):
            spent = reason.split(":", 1)[1].split()[0]
            self.emit(ev.Summarized, reason=reason, text=f"(no wrap-up: the {spent} budget is spent, and a "
                                                         f"wrap-up would spend past it; raise it and resume to go on)")
            return
        lines = [
            f"[{g.status.value}] {'  ' * g.depth}{g.text}: {g.result[:200]}"
            for g in list(rec.goals.values())[:60]
        ]
        m = rec.metrics
        metrics = f"{m.turns} turns, {m.tokens} tokens, {rec.active_seconds(self.clock()):.0f} s"
        try:
            reply = await self.call_model(
                "summarize", self.prompts.summarize(rec.objective, state, reason, lines, metrics), None,
                max_tokens=600, after_stop=after_stop,
            )
            text = reply.text.strip()
            echo = degenerate(text, self.prompts.EXAMPLES)
            if echo is not None:  # a summary that echoes its prompt would read as the run's result
                text = f"(no wrap-up: {echo})"
        except (ProviderError, StopRun, TimeoutError) as exc:
            text = f"(no wrap-up: {exc})"
        self.emit(ev.Summarized, text=text, reason=reason)


WAITING_ON_BUDGET = "waiting on the budget: taken up again if it is raised and the run resumed"
TAKEN_UP = "stopped by a budget, taken up again"


def _join(note: str, extra: str) -> str:
    return f"{note}; {extra}" if note else extra
