"""The forward-only task cursor of seed 002.

The objective is planned into tasks (the root's children, two to six), the plan is confirmed by
an independent call and shown before any work, and a cursor walks the tasks in order. A task
settles only through `task_complete{id, summary, evidence}` or `task_fail{id, reason}` with the
id of the active task (or from a plain text answer); a settled task is never worked again.
Evidence-gated completion: a task that used tools must have run a verification-capable one
before `task_complete` is accepted. Rounds that produce nothing new escalate (re-anchor, narrow,
force-close, fail forward), so a task always ends. Tool categories have budgets that follow what
they yield. All durable state is in the record: the plan is the tree, a task's rounds and tool
calls are counted from its events; what a round remembers within a task (its conversation, the
escalation stage) starts again after a resume, which re-anchors the task.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import prompts_cursor as P
from ..lifecycle import BudgetExhausted
from ..parsing import Unparseable, json_values, normalise, string_list
from ..permissions import Action, Decision
from ..record import SETTLED, Goal, GoalStatus
from ..tools import BaseTool, ToolEnv, ToolError, Toolbox, ToolSpec
from .base import BaseStrategy, Context
from . import small
from .goal_stack import plan_first

VERIFYING = ("read_file", "list_files", "md5_file", "tail_file", "search_files", "run_shell", "memory_query")
TASK_TOOLS = ("task_complete", "task_fail")
ROUND_BUDGET = 25
UNPRODUCTIVE_LIMIT = 3
STAGES = ("re-anchor", "narrow", "force-close")
BUDGETS = {"file": 40, "shell": 12, "network": 8}  # calls per run to start with
_CATEGORY = {"read": "file", "write": "file", "shell": "shell", "network": "network"}
WORK_MAX_TOKENS = 800


@dataclass
class _Task:
    """What the rounds of the active task remember (not durable: a resume starts it again)."""

    goal_id: str
    history: list = field(default_factory=list)
    streak: int = 0  # consecutive unproductive rounds
    narrowed: set = field(default_factory=set)
    failing: dict = field(default_factory=dict)  # tool name -> errors in this task
    seen: set = field(default_factory=set)  # results already returned in this task
    plain_retried: bool = False


@dataclass(frozen=True)
class _TaskSpec(ToolSpec):
    """Offered with the active task's number as the only id, so a model whose provider holds
    calls to the schema (a grammar) cannot mistype it; checked without, so a wrong id is refused
    by the cursor in words the model can act on."""

    active: int | None = None

    def offered(self) -> dict:
        offer = super().offered()
        if self.active is not None:
            params = offer["parameters"]
            offer["parameters"] = {**params, "properties": {**params["properties"],
                                                            "id": {"type": "integer", "enum": [self.active]}}}
        return offer


class _TaskTool(BaseTool):
    """task_complete / task_fail: checked and carried out by the cursor."""

    def __init__(self, cursor: Cursor, kind: str, active: int | None = None):
        self.cursor, self.kind = cursor, kind
        if kind == "complete":
            params = {"id": {"type": "integer"}, "summary": {"type": "string", "maxLength": 2000},
                      "evidence": {"type": "string", "maxLength": 2000}}
            required = ["id", "summary", "evidence"]
            text = "The active task's objective is met: settle it and move on (with what shows it)."
        else:
            params = {"id": {"type": "integer"}, "reason": {"type": "string", "maxLength": 2000}}
            required = ["id", "reason"]
            text = "The active task cannot be done: settle it as failed, with the reason, and move on."
        self.spec = _TaskSpec(f"task_{kind}", text, {"type": "object", "properties": params, "required": required,
                                                     "additionalProperties": False}, Action.READ, active=active)

    async def __call__(self, arguments: dict, env: ToolEnv) -> str:
        return self.cursor.settle_by_tool(self.kind, arguments)


class _Budgeted(BaseTool):
    """A tool counted against its category's budget (file, shell, network)."""

    def __init__(self, tool, cursor: Cursor):
        self.tool, self.cursor, self.spec = tool, cursor, tool.spec

    def effect(self, arguments: dict):
        return self.tool.effect(arguments)

    def preview(self, arguments: dict) -> str:
        return self.tool.preview(arguments)

    async def __call__(self, arguments: dict, env: ToolEnv) -> str:
        category = _CATEGORY[self.tool.effect(arguments).value]
        cap, used = self.cursor.budget[category], self.cursor.used[category]
        if used >= cap:
            raise ToolError(f"the {category} budget of {cap} calls is spent for this run")
        self.cursor.used[category] += 1
        return await self.tool(arguments, env)


class Cursor(BaseStrategy):
    name = "cursor"

    def __init__(self, context: Context):
        self.ctx = context
        self.current_goal_id: str | None = None
        self.budget = dict(BUDGETS)
        self.used = {k: 0 for k in BUDGETS}
        self.calls: dict[str, dict] = {k: {"distinct": set(), "new": 0} for k in BUDGETS}
        self.rebuild()

    # -- state, from the record --------------------------------------------------

    def rebuild(self) -> None:
        self.task: _Task | None = None
        self._own_steps = False
        self._settled_now = False
        self._settle: tuple | None = None

    @property
    def options(self) -> dict:
        return self.ctx.record.options

    def tasks(self) -> list[Goal]:
        return self.ctx.record.tasks()

    def active(self) -> tuple[int, Goal] | None:
        return self.ctx.record.active_task()

    def _root(self) -> Goal:
        return self.ctx.record.goals[self.ctx.record.root_id]

    def has_work(self) -> bool:
        rec = self.ctx.record
        if rec.root_id is None:
            return False
        if not self.tasks():
            return self._root().status is GoalStatus.PENDING
        return self.active() is not None and self.ctx.decide(Action.EXECUTE) is not Decision.HOLD

    def planned(self) -> bool:
        return self.ctx.decide(Action.EXECUTE) is Decision.HOLD and bool(self.tasks()) and self.active() is not None

    # -- one step: plan, or one round of the active task ----------------------------

    async def step(self) -> None:
        if not self.tasks():
            await self._plan()
            return
        number, task = self.active()
        self.current_goal_id = task.id
        try:
            await self._round(number, task)
        finally:
            self.current_goal_id = None

    async def _plan(self) -> None:
        ctx, root = self.ctx, self._root()
        self.current_goal_id = root.id
        try:
            ctx.begin_turn(root)
            objective = ctx.record.objective
            notes = []
            room = ctx.record.limits.max_goals - ctx.record.metrics.goals_created
            if room < 1:  # before any call is paid for
                raise BudgetExhausted(f"budget: goals ({ctx.record.metrics.goals_created} of "
                                      f"{ctx.record.limits.max_goals} used; the plan needs at least 1 more)")
            if asked := ctx.asked_before("plan", root):  # a stop left it unanswered: asked again, not made again
                texts, notes = asked, ["the plan asked before the stop is asked again, not made again"]
            elif not plan_first(objective):  # a short remark or question: one task, no planning call
                texts, notes = [objective], ["a short remark or question: one task, not planned"]
            else:
                texts = await self._decompose(objective, notes)
                if len(texts) > 1 and not self._own_steps:  # the request's own steps need no review
                    texts = await self._confirm(objective, texts, notes)
            if len(texts) > room:  # the goal budget caps how many exist: cut before it is shown
                texts = texts[:room] if room >= 2 else [objective]
                notes.append(f"plan cut to {len(texts)} task(s): the goal budget allows {room} more")
            if ctx.decide(Action.PLAN) is Decision.ASK:
                # shown like sub-goals (keep, edit, drop): the plan is the root's children
                answer = await ctx.confirm("plan", {"parent": objective, "subgoals": texts}, root)
                if answer.outcome.value != "approved":
                    texts, notes = [objective], notes + [f"plan {answer.outcome.value}: the objective is one task"]
                else:
                    edited = [str(t).strip()[:500] for t in answer.edits.get("subgoals", texts) if str(t).strip()]
                    if edited and edited != texts:
                        texts, notes = edited[:min(P.MAX_TASKS, room)], notes + ["plan edited on confirmation"]
            for text in texts:
                ctx.add_goal(root, text)
            ctx.set_goal(root, actionable=False, note=_join(root.note, "; ".join(notes + [f"plan: {len(texts)} task(s)"])))
        finally:
            self.current_goal_id = None

    async def _decompose(self, objective: str, notes: list[str]) -> list[str]:
        """Two to six tasks; a plan that restates the request as one task is asked for once more."""
        key = normalise(objective)
        self._own_steps = False
        if self.ctx.prompts.PROFILE == "small" and len(steps := small.sequence_steps(objective)) >= 2:
            # a small model's plan is fragments of the request ("hello.txt", "Hello, World!"): where
            # the request spells out its steps, they are the plan and the model is not asked
            notes.append("the plan is the request's own steps: a small model is not asked to break it down")
            self._own_steps = True
            return steps
        for attempt in range(2):
            reply = await self.ctx.call_model("decompose", P.plan(objective, again=attempt > 0), self._root(),
                                              schema=P.PLAN_SCHEMA, max_tokens=700)
            try:
                texts = _distinct(string_list(reply.text, "tasks"))[:P.MAX_TASKS]
            except Unparseable:
                texts = []
            if len(texts) >= 2:
                return texts
            if attempt == 0:
                notes.append("the plan restated the request: asked for at least two steps")
        if texts and normalise(texts[0]) != key and len(texts[0]) > 20:
            return texts
        notes.append("one task: the plan did not break the request down")
        return [objective]

    async def _confirm(self, objective: str, texts: list[str], notes: list[str]) -> list[str]:
        """An independent review may reorder, add or drop tasks; collapsing to one is ignored and a
        failed or unparsable review keeps the candidate."""
        try:
            reply = await self.ctx.call_model("confirm_plan", P.confirm_plan(objective, texts), self._root(),
                                              schema=P.CONFIRM_SCHEMA, max_tokens=700)
        except Exception as exc:  # a provider error here does not block the turn (seed 002)
            from ..model import ProviderError

            if not isinstance(exc, ProviderError):
                raise
            notes.append(f"plan review failed ({exc.kind}): kept as proposed")
            return texts
        verdict = _review(reply.text)
        if verdict is None:
            notes.append("plan review unparsable: kept as proposed")
            return texts
        if verdict == "approve":
            notes.append("plan approved by review")
            return texts
        corrected = _distinct(verdict)[:P.MAX_TASKS]
        if self.ctx.prompts.PROFILE == "small" and any(len(t.split()) < 2 for t in corrected):
            # "create", "./hello.txt": a small model's review hands back fragments, not tasks
            notes.append("plan review returned fragments: kept as proposed")
            return texts
        if len(corrected) < 2:
            notes.append("plan review collapsed it to one task: ignored")
            return texts
        notes.append("plan corrected by review")
        return corrected

    async def _round(self, number: int, task: Goal) -> None:
        ctx, rec = self.ctx, self.ctx.record
        if self.task is None or self.task.goal_id != task.id:
            self.task = _Task(task.id)
        state = self.task
        ctx.begin_turn(task)
        rounds = rec.rounds.get(task.id, 0)
        budget = int(self.options.get("round_budget", ROUND_BUDGET))
        if rounds >= budget:
            self._fail_forward(task, f"round budget of {budget} spent")
            return
        limit = int(self.options.get("unproductive_limit", UNPRODUCTIVE_LIMIT))
        stage = STAGES[min(state.streak, len(STAGES)) - 1] if state.streak else ""
        note = ""
        if stage == "re-anchor" or (stage and state.history == []):
            note = P.RE_ANCHOR.format(task=task.text, settled="; ".join(self._settled_lines()) or "none")
        if stage == "narrow":
            note = P.NARROW.format(tools=", ".join(sorted(state.narrowed)) or "none")
        if stage == "force-close":
            note = P.FORCE_CLOSE
        view = [(t.text, t.status.value) for t in self.tasks()]
        messages = P.operator_said(P.work(rec.objective, view, number, self._settled_lines(), note), task)
        if stage == "force-close":  # no tools: the model closes the task, complete or failed, now
            await self._force_close(task, messages + state.history, state, limit)
            return
        # a small model settles in words, or at once, before it has done anything: until its task has
        # acted (a tool that ran), it must call one of the working tools
        acted = any(entry[0] not in TASK_TOOLS and entry[2] for entry in rec.tool_log.get(task.id, ()))
        must_act = ctx.prompts.PROFILE == "small" and not acted
        box = self._toolbox(state, settle=not must_act)
        choice = "required" if must_act else "auto"
        if ctx.prompts.PROFILE == "small" and not stage:
            # walked through act, check, settle: the step's tool is chosen here, the model writes
            # its arguments (a small model's own choice is the first function listed, or none)
            where = small.stage(rec.tool_log.get(task.id, ()), VERIFYING, TASK_TOOLS)
            if where == "settle":  # settle it, complete or failed as the check showed: the model says which
                box, choice = Toolbox([t for t in box if t.spec.name in TASK_TOOLS], box.workspace), "required"
            else:
                choice = small.step_tool(box, task.text, where) or choice
        reply = await ctx.call_model("work", messages + state.history, task, tools=box.offered(),
                                     max_tokens=WORK_MAX_TOKENS, tool_choice=choice)
        if not reply.tool_calls:
            text = reply.text.strip()
            if small.copies_directive(text) and not state.plain_retried:  # a small model echoing its orders
                state.plain_retried = True
                ctx.set_goal(task, note=_join(task.note, "the reply copied the task directive: retried as a plain round"))
                reply = await ctx.call_model("work", P.work(rec.objective, view, number, [], plain=True), task,
                                             max_tokens=WORK_MAX_TOKENS)
                text = small.strip_directive(reply.text.strip())
            if text:
                ctx.set_goal(task, status=GoalStatus.DONE, result=text[:4000],
                             note=_join(task.note, "settled from a text answer"))
                self._advance(task)
            else:
                self._unproductive(task, state, limit)
            return
        self._settled_now = False
        state.history.append({"role": "assistant", "content": reply.text, "tool_calls": reply.tool_calls})
        productive = False
        for call in reply.tool_calls[:8]:
            if self._settled_now:
                result = "not run: the task was settled by an earlier call of this round"
            else:
                result = await ctx.call_tool(task, call, box)
                if self._settle is not None:  # settled after its call is journaled, so the log reads in order
                    settled, changes = self._settle
                    self._settle = None
                    ctx.set_goal(settled, **changes)
            state.history.append({"role": "tool", "tool_call_id": str(call.get("id") or ""), "content": result})
            name = str(call.get("name"))
            failed = result.startswith(("error:", "refused", "denied", "not run"))
            repeat = result in state.seen
            state.seen.add(result)
            if failed and name not in TASK_TOOLS:
                state.failing[name] = state.failing.get(name, 0) + 1
            if not failed and not repeat:
                productive = True
            self._measure(call, result, failed or repeat)
        if self._settled_now:
            self._advance(task)
        elif productive:
            state.streak = 0
        else:
            self._unproductive(task, state, limit)

    async def _force_close(self, task: Goal, messages: list[dict], state: _Task, limit: int) -> None:
        reply = await self.ctx.call_model("work", messages, task, schema=P.CLOSE_SCHEMA, max_tokens=300)
        verdict = next((v for v in json_values(reply.text) if isinstance(v, dict) and "status" in v), None)
        if verdict is None:
            text = reply.text.strip()
            if text:
                self.ctx.set_goal(task, status=GoalStatus.DONE, result=text[:4000],
                                  note=_join(task.note, "settled from a text answer at force-close"))
                self._advance(task)
            else:
                self._unproductive(task, state, limit)
            return
        summary, evidence = str(verdict.get("summary", ""))[:4000], str(verdict.get("evidence", ""))[:500]
        if verdict.get("status") == "complete" and self.options.get("evidence_gate", True) \
                and not self._evidence_ok(task):
            self._fail_forward(task, "closed as complete at force-close, but no check of its tools' work had run")
            return
        if verdict.get("status") == "complete":
            self.ctx.set_goal(task, status=GoalStatus.DONE, result=summary,
                              note=_join(task.note, f"closed at force-close; evidence: {evidence or '(none given)'}"))
        else:
            self.ctx.set_goal(task, status=GoalStatus.FAILED, result=summary,
                              note=_join(task.note, f"closed as failed at force-close: {summary[:300]}"))
        self._advance(task)

    # -- settling, escalation, budgets -------------------------------------------------

    def settle_by_tool(self, kind: str, arguments: dict) -> str:
        """task_complete / task_fail, checked against the cursor; the text the model reads."""
        found = self.active()
        if found is None:
            return "refused: there is no active task"
        number, task = found
        claimed = arguments.get("id")
        if claimed != number:
            tasks = self.tasks()
            if isinstance(claimed, int) and 1 <= claimed <= len(tasks) and tasks[claimed - 1].status in SETTLED:
                return f"refused: task {claimed} is already settled and is not worked again; the active task is {number}"
            return f"refused: task {claimed} is not the active task; the active task is {number}"
        if kind == "fail":  # never gated
            self._settle = (task, dict(status=GoalStatus.FAILED, result=str(arguments.get("reason", ""))[:4000],
                                       note=_join(task.note, f"task_fail: {str(arguments.get('reason', ''))[:300]}")))
            self._settled_now = True
            return f"task {number} settled as failed"
        evidence = str(arguments.get("evidence", "")).strip()
        if self.options.get("evidence_gate", True) and not self._evidence_ok(task):
            return ("refused: this task used tools but ran no check of what they did; run one of "
                    f"{', '.join(VERIFYING)} first, then call task_complete with what it showed")
        self._settle = (task, dict(status=GoalStatus.DONE, result=str(arguments.get("summary", ""))[:4000],
                                   note=_join(task.note, f"evidence: {evidence[:500] or '(none given)'}")))
        self._settled_now = True
        return f"task {number} complete"

    def _evidence_ok(self, task: Goal) -> bool:
        """A task with no tool calls is exempt; one with tool calls must have run a verifying tool."""
        log = [entry for entry in self.ctx.record.tool_log.get(task.id, ()) if entry[0] not in TASK_TOOLS]
        return not log or any(name in VERIFYING and ok for name, _decision, ok, _brief in log)

    def _unproductive(self, task: Goal, state: _Task, limit: int) -> None:
        state.streak += 1
        if state.streak > limit:
            self._fail_forward(task, f"{state.streak - 1} unproductive rounds after every escalation")
            return
        stage = STAGES[min(state.streak, len(STAGES)) - 1]
        if stage == "narrow":
            state.narrowed |= {name for name, errors in state.failing.items() if errors}
        self.ctx.set_goal(task, note=_join(task.note, f"escalation {state.streak}: {stage}"))

    def _fail_forward(self, task: Goal, why: str) -> None:
        self.ctx.set_goal(task, status=GoalStatus.FAILED, note=_join(task.note, f"fail forward: {why}"))
        self._advance(task)

    def _advance(self, task: Goal) -> None:
        self.task = None
        self.ctx.settle_parents(task)

    def _toolbox(self, state: _Task, *, settle: bool = True) -> Toolbox:
        tools = self.ctx.tools
        tiny = self.ctx.prompts.PROFILE == "small"  # a small model is offered the few tools it can use
        base = [_Budgeted(t, self) for t in tools if t.spec.name not in state.narrowed
                and (not tiny or t.spec.name in small.TOOLS)] if tools is not None else []
        workspace = tools.workspace if tools is not None else "."
        found = self.active()
        number = found[0] if found is not None else None
        task_tools = [_TaskTool(self, "complete", number), _TaskTool(self, "fail", number)] \
            if settle or not base else []
        offered = [*base, *task_tools]
        if tiny and (goal := self.ctx.record.goals.get(state.goal_id)) is not None:  # see small.step_tool
            where = small.stage(self.ctx.record.tool_log.get(goal.id, ()), VERIFYING, TASK_TOOLS)
            offered = small.ranked(offered, goal.text, where)
        return Toolbox(offered, workspace)

    def _measure(self, call: dict, result: str, wasted: bool) -> None:
        """Adaptive budgets: a category still yielding near its cap is extended (up to 3x), one that
        mostly fails or repeats is cut to just above the calls made; after 4 distinct calls."""
        tools = self.ctx.tools
        tool = tools.get(str(call.get("name"))) if tools is not None else None
        if tool is None or not isinstance(call.get("arguments"), dict):
            return
        category = _CATEGORY[tool.effect(call["arguments"]).value]
        seen = self.calls[category]
        key = (call.get("name"), repr(sorted(call["arguments"].items())))
        if key in seen["distinct"]:
            return
        seen["distinct"].add(key)
        seen["new"] += 0 if wasted else 1
        distinct = len(seen["distinct"])
        if distinct < 4:
            return
        share, cap, used = seen["new"] / distinct, self.budget[category], self.used[category]
        new_cap = cap
        if share >= 0.5 and used >= cap - 2:
            new_cap = min(3 * BUDGETS[category], cap + max(2, BUDGETS[category] // 2))
        elif share < 0.25:  # cut to just above the calls made: never below the work done, never up
            new_cap = min(cap, used + 1)
        if new_cap != cap:
            self.budget[category] = new_cap
            root = self._root()
            self.ctx.set_goal(root, note=_join(root.note, f"{category} budget -> {new_cap}"))

    def _settled_lines(self) -> list[str]:
        return [f"{i}. [{t.status.value}] {t.text}: {t.result[:200]}" for i, t in enumerate(self.tasks(), 1)
                if t.status in SETTLED]


def _distinct(texts: list[str]) -> list[str]:
    out, seen = [], set()
    for text in texts:
        text = str(text).strip()
        key = normalise(text)
        if key and key not in seen:
            seen.add(key)
            out.append(text)
    return out


def _review(text: str):
    """'approve', a corrected list of tasks, or None when the review says neither."""
    if text.strip().upper().startswith("APPROVE"):
        return "approve"
    for value in json_values(text):
        if isinstance(value, dict):
            if str(value.get("verdict", "")).upper() == "APPROVE" and not value.get("tasks"):
                return "approve"
            if isinstance(value.get("tasks"), list) and all(isinstance(t, str) for t in value["tasks"]):
                return value["tasks"]
        if isinstance(value, list) and all(isinstance(t, str) for t in value):
            return value
    return None


def _join(note: str, extra: str) -> str:
    if not extra:
        return note
    return f"{note}; {extra}" if note else extra
