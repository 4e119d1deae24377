"""The goal-stack strategy of seed 000: depth-first decomposition with every guard in Python.

One step takes one goal off the stack (a turn). The depth limit is checked
before the actionable judgement, so the model cannot talk its way past it.
Decompositions are capped at four sub-goals, restatements are dropped and
counted, a malformed decomposition falls through to execution with a note,
every executed goal is verified with exactly one retry, and a finding is
reused only where the memory says it is safe (`FindingsMemory.reusable`).
"""

from __future__ import annotations

from .parsing import Unparseable, content_words, degenerate, near, normalise, string_list, yes_no
from .record import REUSED, Goal, GoalStatus

MAX_SUBGOALS = 4
MAX_ATTEMPTS = 2
RESULT_CUT = 800
MAX_SUBGOAL_CHARS = 500
_LIST_MARKS = " \t-*•·.,:;)]}>\"'"
EXECUTE_MAX_TOKENS = 800  # a result is cut to RESULT_CUT characters in later contexts anyway


class GoalStack:
    """Depth-first: the next goal is the first pending leaf in pre-order."""

    name = "goal-stack"

    def __init__(self, run):
        self.run = run
        self.stack: list[str] = []
        self.current_goal_id: str | None = None
        self.rebuild()

    # -- the stack -------------------------------------------------------------

    def rebuild(self) -> None:
        """Derive the stack from the tree: pending leaves in pre-order, first on top.
        In plan mode, leaves already judged actionable wait: they are the plan."""
        goals = self.run.record.goals
        root = self.run.record.root_id
        planning = self.run.record.permission_mode == "plan"
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
        goals = self.run.record.goals
        while self.stack and goals[self.stack[-1]].status is not GoalStatus.PENDING:
            self.stack.pop()
        return bool(self.stack)

    def planned(self) -> bool:
        """True in plan mode when judged-actionable goals wait to be executed."""
        return self.run.record.permission_mode == "plan" and any(
            g.status is GoalStatus.PENDING and g.actionable and not g.children
            for g in self.run.record.goals.values())

    # -- one turn --------------------------------------------------------------

    async def step(self) -> None:
        run = self.run
        rec = run.record
        goal = rec.goals[self.stack.pop()]
        self.current_goal_id = goal.id
        # the judgement and notes ride on the goal's next change: fewer events per goal
        notes: list[str] = []
        try:
            run.begin_turn(goal)
            if goal.actionable is not None:
                actionable = goal.actionable
            elif goal.depth >= rec.limits.max_depth:
                actionable = True
                notes.append(f"depth limit {rec.limits.max_depth}: executed")
            elif (rule := self._small_model_rule(goal)) is not None:
                actionable, note = rule
                notes.append(note)
            else:
                actionable = await self._judge(goal, notes)
            if actionable and rec.permission_mode == "plan":
                notes.append("planned")
                run.set_goal(goal, status=GoalStatus.PENDING, **_fold(goal, True, notes))
            elif actionable:
                await self._execute_and_verify(goal, actionable, notes)
            else:
                subgoals, note = await self._decompose(goal)
                if note:
                    notes.append(note)
                if subgoals:
                    children = [run.add_goal(goal, text) for text in subgoals]
                    run.set_goal(goal, **_fold(goal, False, notes))
                    self.stack.extend(child.id for child in reversed(children))
                else:
                    await self._execute_and_verify(goal, False, notes)
            run.settle_parents(goal)
        finally:
            self.current_goal_id = None

    def _small_model_rule(self, goal: Goal) -> tuple[bool, str] | None:
        """Where a small model's judgement is not asked: (actionable, note), or None to ask.

        A small model's YES/NO is close to a coin flip, so two decisions are taken in Python:
        the root of a long imperative objective is split (seed 002's plan-first rule: a run of
        one goal shows the operator nothing), and once a budget passed 75% goals are executed,
        not split (the convergence nudge, which such a model does not follow, enforced)."""
        run = self.run
        if run.prompts.PROFILE != "small":
            return None
        if goal.depth == 0 and plan_first(run.record.objective):
            return False, "plan first: a long imperative objective is split"
        if run.record.converging():
            return True, "converging: executed without splitting"
        return None

    async def _judge(self, goal: Goal, notes: list[str]) -> bool:
        run = self.run
        reply = await run.call_model(
            "actionable",
            run.prompts.actionable(run.record.objective, goal.text, [], run.record.converging()),
            goal,
            schema=run.prompts.SCHEMAS["actionable"],
            max_tokens=160,
        )
        try:
            answer, _reason = yes_no(reply.text)
        except Unparseable:
            notes.append("actionable judgement unparseable: taken as NO")
            return False
        return answer

    async def _decompose(self, goal: Goal) -> tuple[list[str], str]:
        """(sub-goals, note). An empty list means: execute the goal itself; the note says why.

        A split that leaves fewer distinct sub-goals than the schema's minimum once restatements
        are dropped is asked for once more (seed 002), and the new distinct ones are added."""
        run = self.run
        minimum = run.prompts.SCHEMAS["decompose"]["properties"]["subgoals"].get("minItems", 2)
        seen = {normalise(goal.text), normalise(run.record.objective)}
        seen.update(normalise(t) for t in run.prompts.EXAMPLES)  # the shown example, handed back
        # a sub-goal is strictly narrower than its parent (seed 000): one that says an ancestor,
        # the objective or a kept sibling again in other words is a restatement too
        said = [content_words(run.record.objective)] + [content_words(t) for t in self._lineage(goal)]
        subgoals: list[str] = []
        dropped_restated = 0
        notes = []
        for attempt in range(2):
            reply = await run.call_model(
                "decompose",
                run.prompts.decompose(run.record.objective, goal.text, self.context_for(goal),
                                      run.record.converging(), again=attempt > 0),
                goal,
                schema=run.prompts.SCHEMAS["decompose"],
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
        if subgoals and run.record.permission_mode == "ask":
            answer = await run.confirm("subgoals", {"parent": goal.text, "subgoals": subgoals})
            if answer.outcome.value != "approved":
                return [], _join("; ".join(notes), f"sub-goals {answer.outcome.value}: executed directly")
            edited = answer.edits.get("subgoals", subgoals)
            kept = [str(t).strip()[:MAX_SUBGOAL_CHARS] for t in edited if str(t).strip()][:MAX_SUBGOALS]
            if len(kept) != len(subgoals) or kept != subgoals:
                notes.append("sub-goals edited on confirmation")
            subgoals = kept
        if not subgoals:
            notes.append("no usable sub-goals: executed directly")
        return subgoals, "; ".join(notes)

    async def _execute_and_verify(self, goal: Goal, actionable: bool, notes: list[str]) -> None:
        run = self.run
        rec = run.record
        await run.memory.prepare([goal.text])
        related = run.memory.search(goal.text, k=3)
        prior = run.memory.reusable(goal.text, related)
        if prior is not None and prior.key != goal.id:
            result = prior.text
            notes.append(f"{REUSED} {prior.key} (similarity {prior.score:.2f})")
        else:
            findings = [f"[{f.tag}] {f.text[:200]}" for f in related]
            reply = await run.call_model(
                "execute",
                run.prompts.execute(rec.objective, goal.text, self.context_for(goal), findings, rec.converging()),
                goal,
                max_tokens=EXECUTE_MAX_TOKENS,
            )
            result = reply.text.strip()
            if result.upper().startswith("BLOCKED:"):
                from .run import Blocked

                run.set_goal(goal, result=result, **_fold(goal, actionable, notes))
                raise Blocked(f"blocked by model: {result[8:].strip()[:300]}")
        # attempts count judged executions, so one cut short by a pause or a crash is not one
        run.set_goal(goal, result=result, **_fold(goal, actionable, notes))
        attempts = goal.attempts + 1
        echo = degenerate(result, run.prompts.EXAMPLES)
        if echo is not None:  # no model is asked to approve an echo of its own prompt
            ok, reason = False, echo
        else:
            reply = await run.call_model(
                "verify", run.prompts.verify(goal.text, result), goal, schema=run.prompts.SCHEMAS["verify"],
                max_tokens=160,
            )
            try:
                ok, reason = yes_no(reply.text)
            except Unparseable:
                ok, reason = False, "verdict unparseable"
        verdict = f"{'YES' if ok else 'NO'}: {reason}".rstrip(": ")
        if ok:
            run.set_goal(goal, status=GoalStatus.DONE, verdict=verdict, attempts=attempts)
            run.memory.save(goal.id, result, goal.text)
        elif attempts < MAX_ATTEMPTS:
            run.set_goal(goal, status=GoalStatus.PENDING, verdict=verdict, attempts=attempts,
                         note=_join(goal.note, "verification failed: retrying"))
            self.stack.append(goal.id)
        else:
            run.set_goal(goal, status=GoalStatus.FAILED, verdict=verdict, attempts=attempts,
                         note=_join(goal.note, "verification failed twice"))

    def _lineage(self, goal: Goal) -> list[str]:
        """The texts of `goal` and each of its ancestors."""
        goals, texts, current = self.run.record.goals, [], goal
        while current is not None:
            texts.append(current.text)
            current = goals[current.parent_id] if current.parent_id else None
        return texts

    def context_for(self, goal: Goal) -> str:
        """At most two ancestors and the three latest done siblings, each result cut short."""
        goals = self.run.record.goals
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
            parts.extend(f"[{s.text}]\n{s.result[:RESULT_CUT]}" for s in done)
        return "\n\n".join(parts) if parts else "(no prior results)"


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
    if notes:
        fields["note"] = _join(goal.note, "; ".join(notes))
        notes.clear()
    return fields


def _join(note: str, extra: str) -> str:
    if not extra:
        return note
    return f"{note}; {extra}" if note else extra
