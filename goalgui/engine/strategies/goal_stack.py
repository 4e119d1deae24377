"""The goal-stack strategy of seed 000: depth-first decomposition with every guard in Python.

One step takes one goal off the stack (a turn). The depth limit is checked
before the actionable judgement, so the model cannot talk its way past it.
Decompositions are capped at four sub-goals, restatements are dropped and
counted, a malformed decomposition falls through to execution with a note,
every executed goal is verified with exactly one retry, and a finding is
reused only where the memory says it is safe (`FindingsMemory.reusable`).
"""

from __future__ import annotations

from ..lifecycle import Blocked, BudgetExhausted
from ..parsing import Unparseable, content_words, degenerate, near, normalise, string_list, yes_no
from ..permissions import Action, Decision
from ..prompts import operator_said
from ..record import REUSED, Goal, GoalStatus
from .base import BaseStrategy, Context

MAX_SUBGOALS = 4
MAX_ATTEMPTS = 2
RESULT_CUT = 800
MAX_SUBGOAL_CHARS = 500
_LIST_MARKS = " \t-*•·.,:;)]}>\"'"
TOOL_ROUNDS = 6  # rounds of tool calls one execution may take before it must answer
CALLS_PER_ROUND = 8
EXECUTE_MAX_TOKENS = 800
DEPTH_FORCED = "depth limit"  # the note of a leaf the depth limit made: executed without asking


class GoalStack(BaseStrategy):
    """Depth-first: the next goal is the first pending leaf in pre-order."""

    name = "goal-stack"

    def __init__(self, context: Context):
        self.ctx = context
        self.stack: list[str] = []
        self.current_goal_id: str | None = None
        self.rebuild()

    # -- the stack -------------------------------------------------------------

    def rebuild(self) -> None:
        """Derive the stack from the tree: pending leaves in pre-order, first on top.
        In plan mode, leaves already judged actionable wait: they are the plan."""
        goals = self.ctx.record.goals
        root = self.ctx.record.root_id
        planning = self.ctx.decide(Action.EXECUTE) is Decision.HOLD
        order: list[str] = []
        cursor = [root] if root else []
        while cursor:
            goal = goals[cursor.pop()]
            if goal.children:
                cursor.extend(reversed(goal.children))
            elif goal.status is GoalStatus.PENDING and not (planning and goal.actionable):
                order.append(goal.id)
        self.stack = order[::-1]

    def has_work(self) -> bool:
        goals = self.ctx.record.goals
        while self.stack and goals[self.stack[-1]].status is not GoalStatus.PENDING:
            self.stack.pop()
        return bool(self.stack)

    def planned(self) -> bool:
        """True in plan mode when judged-actionable goals wait to be executed."""
        return self.ctx.decide(Action.EXECUTE) is Decision.HOLD and any(
            g.status is GoalStatus.PENDING and g.actionable and not g.children
            for g in self.ctx.record.goals.values())

    # -- one turn --------------------------------------------------------------

    async def step(self) -> None:
        ctx = self.ctx
        rec = ctx.record
        goal = rec.goals[self.stack.pop()]
        self.current_goal_id = goal.id
        # the judgement and notes ride on the goal's next change: fewer events per goal
        notes: list[str] = []
        actionable: bool | None = None
        try:
            ctx.begin_turn(goal)
            if goal.actionable is not None:
                actionable = goal.actionable
            elif goal.depth >= rec.limits.max_depth:
                actionable = True
                notes.append(f"{DEPTH_FORCED} {rec.limits.max_depth}: executed")
            elif (rule := self._small_model_rule(goal)) is not None:
                actionable, note = rule
                notes.append(note)
            else:
                actionable = await self._judge(goal, notes)
            if actionable and ctx.decide(Action.EXECUTE) is Decision.HOLD:
                notes.append("planned")
                ctx.set_goal(goal, status=GoalStatus.PENDING, **_fold(goal, True, notes))
            elif actionable:
                await self._execute_and_verify(goal, actionable, notes)
            else:
                allowance = rec.limits.max_goals - rec.metrics.goals_created
                if allowance < 2:  # a split of one is no split (seed 000): the budget stops it here
                    ctx.set_goal(goal, status=GoalStatus.PENDING, **_fold(goal, False, notes))  # verdict kept
                    raise BudgetExhausted(f"budget: goals ({rec.metrics.goals_created} of {rec.limits.max_goals} "
                                          f"used; splitting {goal.id} needs at least 2 more)")
                subgoals, note = await self._decompose(goal, allowance)
                if note:
                    notes.append(note)
                if subgoals:
                    children = [ctx.add_goal(goal, text) for text in subgoals]
                    ctx.set_goal(goal, **_fold(goal, False, notes))
                    self.stack.extend(child.id for child in reversed(children))
                else:
                    await self._execute_and_verify(goal, False, notes)
            ctx.settle_parents(goal)
        except BudgetExhausted:
            if goal.actionable is None and actionable is not None:  # the paid verdict is kept for the resume
                ctx.set_goal(goal, **_fold(goal, actionable, notes))
            raise
        finally:
            self.current_goal_id = None

    def _small_model_rule(self, goal: Goal) -> tuple[bool, str] | None:
        """Where a small model's judgement is not asked: (actionable, note), or None to ask.

        A small model's YES/NO is close to a coin flip, so two decisions are taken in Python:
        the root of a long imperative objective is split (seed 002's plan-first rule: a run of
        one goal shows the operator nothing), and once a budget passed 75% goals are executed,
        not split (the convergence nudge, which such a model does not follow, enforced)."""
        ctx = self.ctx
        if ctx.prompts.PROFILE != "small":
            return None
        if goal.depth == 0 and plan_first(ctx.record.objective):
            return False, "plan first: a long imperative objective is split"
        if ctx.record.converging():
            return True, "converging: executed without splitting"
        return None

    async def _judge(self, goal: Goal, notes: list[str]) -> bool:
        ctx = self.ctx
        reply = await ctx.call_model(
            "actionable",
            ctx.prompts.actionable(ctx.record.objective, goal.text, [], ctx.record.converging()),
            goal,
            schema=ctx.prompts.SCHEMAS["actionable"],
            max_tokens=160,
        )
        try:
            answer, _reason = yes_no(reply.text)
        except Unparseable:
            notes.append("actionable judgement unparseable: taken as NO")
            return False
        return answer

    async def _decompose(self, goal: Goal, allowance: int = MAX_SUBGOALS) -> tuple[list[str], str]:
        """(sub-goals, note). An empty list means: execute the goal itself; the note says why.
        At most `allowance` sub-goals (what the goal budget still allows: it is never overshot).

        A split that leaves fewer distinct sub-goals than the schema's minimum once restatements
        are dropped is asked for once more (seed 002), and the new distinct ones are added."""
        ctx = self.ctx
        minimum = ctx.prompts.SCHEMAS["decompose"]["properties"]["subgoals"].get("minItems", 2)
        seen = {normalise(goal.text), normalise(ctx.record.objective)}
        seen.update(normalise(t) for t in ctx.prompts.EXAMPLES)  # the shown example, handed back
        # a sub-goal is strictly narrower than its parent (seed 000): one that says an ancestor,
        # the objective or a kept sibling again in other words is a restatement too
        said = [content_words(ctx.record.objective)] + [content_words(t) for t in self._lineage(goal)]
        subgoals: list[str] = []
        dropped_restated = 0
        notes = []
        if asked := ctx.asked_before("subgoals", goal):  # a stop (pause, closed window, crash) left it open
            subgoals = asked[:allowance]
            notes.append("the split asked before the stop is asked again, not made again")
        for attempt in range(0 if subgoals else 2):
            reply = await ctx.call_model(
                "decompose",
                ctx.prompts.decompose(ctx.record.objective, goal.text, self.context_for(goal),
                                      ctx.record.converging(), again=attempt > 0),
                goal,
                schema=ctx.prompts.SCHEMAS["decompose"],
                max_tokens=600,  # room for four sub-goals at their schema's longest
            )
            try:
                proposed = string_list(reply.text)
            except Unparseable as exc:
                if attempt == 0:
                    return [], f"decomposition malformed ({exc}): executed directly"
                notes.append("second decomposition malformed")
                break
            for text in proposed:
                text = text.lstrip(_LIST_MARKS).strip()  # "] Choose ...", "- Book ...": a small model's list marks
                key, words = normalise(text), content_words(text)
                if not key or key in seen or any(near(words, other) for other in said):
                    dropped_restated += 1
                    continue
                seen.add(key)
                said.append(words)
                subgoals.append(text[:MAX_SUBGOAL_CHARS])
            if len(subgoals) >= minimum or attempt:
                break
            notes.append(f"{len(subgoals)} distinct sub-goal(s): asked again")

        dropped_extra = max(0, len(subgoals) - MAX_SUBGOALS)
        subgoals = subgoals[:MAX_SUBGOALS]
        if dropped_restated:
            notes.append(f"{dropped_restated} sub-goal(s) dropped as restatements")
        if dropped_extra:
            notes.append(f"{dropped_extra} sub-goal(s) dropped past the fourth")
        if len(subgoals) > allowance:
            notes.append(f"cut to {allowance} sub-goal(s): the goal budget allows {allowance} more")
            subgoals = subgoals[:allowance]
        if len(subgoals) == 1:  # seed 000: 2 to 4; one sub-goal is the goal again in other words
            notes.append("one distinct sub-goal is no split: executed directly")
            return [], "; ".join(notes)
        if subgoals and ctx.decide(Action.SUBGOALS) is Decision.ASK:
            answer = await ctx.confirm("subgoals", {"parent": goal.text, "subgoals": subgoals}, goal)
            if answer.outcome.value != "approved":
                return [], _join("; ".join(notes), f"sub-goals {answer.outcome.value}: executed directly")
            edited = answer.edits.get("subgoals", subgoals)
            kept = [str(t).strip()[:MAX_SUBGOAL_CHARS] for t in edited if str(t).strip()][:min(MAX_SUBGOALS, allowance)]
            if len(kept) != len(subgoals) or kept != subgoals:
                notes.append("sub-goals edited on confirmation")
            subgoals = kept
        if not subgoals:
            notes.append("no usable sub-goals: executed directly")
        return subgoals, "; ".join(notes)

    async def _execute_and_verify(self, goal: Goal, actionable: bool, notes: list[str]) -> None:
        ctx = self.ctx
        rec = ctx.record
        await ctx.memory.prepare([goal.text])
        related = ctx.memory.search(goal.text, k=3)
        prior = ctx.memory.reusable(goal.text, related)
        if goal.result and not goal.verdict and not goal.result.upper().startswith("BLOCKED:"):
            # executed and paid for before a stop (a budget, a pause, a crash): verified now, not bought again
            result = goal.result
            notes.append("the result from before the stop is verified, not made again")
        elif prior is not None and prior.key != goal.id:
            result = prior.text
            notes.append(f"{REUSED} {prior.key} (similarity {prior.score:.2f})")
        else:
            findings = [f"[{f.tag}] {f.text[:200]}" for f in related]
            tools = offered_tools(ctx)
            messages = ctx.prompts.execute(rec.objective, goal.text, self.context_for(goal), findings,
                                           rec.converging(), tools=bool(tools))
            # redone at the operator's word: what they said, last (a small model's prompt has no findings)
            messages = operator_said(messages, goal, small=ctx.prompts.PROFILE == "small")
            result = await self._work(goal, messages, tools)
            if result.upper().startswith("BLOCKED:"):
                ctx.set_goal(goal, result=result, **_fold(goal, actionable, notes))
                raise Blocked(f"blocked by model: {result[8:].strip()[:300]}")
        # attempts count judged executions, so one cut short by a pause or a crash is not one; the
        # verdict is cleared until this result has its own
        ctx.set_goal(goal, result=result, verdict="", **_fold(goal, actionable, notes))
        attempts = goal.attempts + 1
        echo = degenerate(result, ctx.prompts.EXAMPLES)
        if echo is not None:  # no model is asked to approve an echo of its own prompt
            ok, reason = False, echo
        else:
            reply = await ctx.call_model(
                "verify", ctx.prompts.verify(goal.text, result, ctx.record.criteria), goal, schema=ctx.prompts.SCHEMAS["verify"],
                max_tokens=160,
            )
            try:
                ok, reason = yes_no(reply.text)
            except Unparseable:
                ok, reason = False, "verdict unparseable"
        verdict = f"{'YES' if ok else 'NO'}: {reason}".rstrip(": ")
        if ok:
            ctx.set_goal(goal, status=GoalStatus.DONE, verdict=verdict, attempts=attempts)
            ctx.memory.save(goal.id, result, goal.text)
        elif attempts < MAX_ATTEMPTS:
            ctx.set_goal(goal, status=GoalStatus.PENDING, verdict=verdict, attempts=attempts,
                         note=_join(goal.note, "verification failed: retrying"))
            self.stack.append(goal.id)
        else:
            ctx.set_goal(goal, status=GoalStatus.FAILED, verdict=verdict, attempts=attempts,
                         note=_join(goal.note, "verification failed twice"))

    async def _work(self, goal: Goal, messages: list[dict], tools: list[dict] | None) -> str:
        return await work(self.ctx, goal, messages, tools)

    def _lineage(self, goal: Goal) -> list[str]:
        """The texts of `goal` and each of its ancestors."""
        goals, texts, current = self.ctx.record.goals, [], goal
        while current is not None:
            texts.append(current.text)
            current = goals[current.parent_id] if current.parent_id else None
        return texts

    def context_for(self, goal: Goal) -> str:
        """At most two ancestors and the three latest done siblings, each result cut short."""
        goals = self.ctx.record.goals
        parts = []
        parent_id, hops = goal.parent_id, 0
        while parent_id is not None and hops < 2:
            a = goals[parent_id]
            parts.append(f"[{a.text}]\n{a.result[:RESULT_CUT]}".rstrip())
            parent_id, hops = a.parent_id, hops + 1
        if goal.parent_id is not None:
            done = [
                goals[c] for c in goals[goal.parent_id].children
                if c != goal.id and goals[c].status is GoalStatus.DONE
            ][-3:]
            parts.extend(f"[{s.text}]\n{self._result_of(s)}" for s in done)
        return "\n\n".join(parts) if parts else "(no prior results)"

    def _result_of(self, goal: Goal) -> str:
        """A done goal's result, cut short; a decomposed one's is what its sub-goals found (its
        own result is empty: without this a later sibling saw its title and nothing under it)."""
        if goal.result or not goal.children:
            return goal.result[:RESULT_CUT]
        goals, lines, stack = self.ctx.record.goals, [], list(reversed(goal.children))
        while stack and sum(len(line) for line in lines) < RESULT_CUT:
            g = goals[stack.pop()]
            if g.children and not g.result:
                stack.extend(reversed(g.children))
            elif g.status is GoalStatus.DONE and g.result:
                lines.append(f"- {g.text}: {' '.join(g.result.split())[:RESULT_CUT // 3]}")
        return "\n".join(lines)[:RESULT_CUT]


async def work(ctx: Context, goal: Goal, messages: list[dict], tools: list[dict] | None,
               purpose: str = "execute") -> str:
    """The goal's result: the model's answer, after the tool calls it asked for have run
    (at most TOOL_ROUNDS rounds; then one last call without tools asks for the answer)."""
    for _round in range(TOOL_ROUNDS if tools else 1):
        reply = await ctx.call_model(purpose, messages, goal, tools=tools, max_tokens=EXECUTE_MAX_TOKENS)
        if not tools or not reply.tool_calls:
            return reply.text.strip()
        messages = [*messages, {"role": "assistant", "content": reply.text, "tool_calls": reply.tool_calls}]
        for call in reply.tool_calls[:CALLS_PER_ROUND]:
            result = await ctx.call_tool(goal, call)
            messages.append({"role": "tool", "tool_call_id": str(call.get("id") or ""), "content": result})
        for call in reply.tool_calls[CALLS_PER_ROUND:]:  # every call gets its answer, as the wire formats want
            messages.append({"role": "tool", "tool_call_id": str(call.get("id") or ""),
                             "content": f"not run: at most {CALLS_PER_ROUND} tool calls at a time"})
    reply = await ctx.call_model(purpose, [*messages, {"role": "user", "content": ctx.prompts.ROUNDS_SPENT}],
                                 goal, max_tokens=EXECUTE_MAX_TOKENS)
    return reply.text.strip()


def offered_tools(ctx: Context) -> list[dict] | None:
    """The tools a goal's execution is offered: none for a small model (it cannot call them, and the
    offer costs its context) or a run without tools."""
    return ctx.tools.offered() if ctx.tools is not None and ctx.prompts.PROFILE != "small" else None


def plan_first(objective: str) -> bool:
    """Seed 002: a short remark (32 characters or fewer) or a question under 120 characters is
    done as one goal; a longer imperative objective is planned."""
    text = objective.strip()
    if len(text) <= 32:
        return False
    return not (text.endswith("?") and len(text) < 120)


def _fold(goal: Goal, actionable: bool, notes: list[str]) -> dict:
    """The judgement and notes of this turn, as fields of the goal's next change."""
    fields: dict = {}
    if goal.actionable is not actionable:
        fields["actionable"] = actionable
    if any(n.startswith(DEPTH_FORCED) for n in notes) and goal.facts.get("forced") != "depth":
        fields["facts"] = {"forced": "depth"}  # the health figures count these leaves
    if notes:
        fields["note"] = _join(goal.note, "; ".join(notes))
        notes.clear()
    return fields


def _join(note: str, extra: str) -> str:
    if not extra:
        return note
    return f"{note}; {extra}" if note else extra
