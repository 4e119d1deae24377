"""The task loop of seed 003: a priority queue of tasks, executed one per iteration, with every guard.

The tasks are the root's children, in the order created; what makes them a queue is on each goal as
data (`Goal.facts`): the model's priority, the effective priority the queue is ordered by, the
insertion sequence that breaks ties (never the text), the task's depth and its creator. One step is
one iteration: the next task (a min-heap: 1 runs first) is executed with the last few results as
context, then it may create new tasks and the queue is re-scored.

Why it ends: creation is capped by an allowance from the space left in the queue (2 at most; zero is
allowed and the prompt says so), nothing is created at the depth limit, duplicates are refused by
their exact words and by embedding similarity (the pairs are journaled so the threshold can be
judged; with the default lexical embedder a pair must also say the same words in order, as the goal
stack's restatement check has it), and iterations, queue length, depth, tokens and time are capped separately. A completeness
check compares the objective with what is done and may clear the queue. What the caps leave in the
queue is skipped with the reason, never dropped.
"""

from __future__ import annotations

import heapq
import re

from .. import prompts_loop as P
from ..lifecycle import Blocked
from ..memory import FindingsMemory
from ..parsing import Unparseable, content_words, degenerate, json_values, near, normalise, yes_no
from ..permissions import Action, Decision
from ..record import Goal, GoalStatus
from .base import BaseStrategy, Context
from .goal_stack import offered_tools, work

MAX_ITERATIONS, MAX_QUEUE, MAX_DEPTH = 15, 20, 2
ALLOWANCE = 2  # new tasks per completed task, at most (seed 003: k below 1 ends the loop)
SIMILARITY = 0.88
CHECK_EVERY = 3  # iterations between completeness checks while the queue is not empty
RECENT = 4  # results an execution sees
VAGUE = ("research", "explore", "consider", "investigate")
ARTEFACT_VERBS = ("draft", "write", "compute", "list", "publish")
# how a result that describes work instead of doing it opens (see `is_artefact`)
_INTENT = re.compile(r"^(?:i|we)(?: will| would|'ll|'d| can| could| need to| should| plan to| am going to)\b|"
                     r"^(?:let me|let's|to (?:do|complete|accomplish) this|the next step|next steps?|"
                     r"here is (?:how|a plan)|here's (?:how|a plan)|you (?:should|could|can|would)|"
                     r"first,? (?:i|we)\b|this task (?:will|would|requires)|steps? to)")


def effective_priority(priority: int, depth: int, text: str, iteration: int, seq: int) -> int:
    """Seed 003's hybrid: the model's number, then deeper later, vague work later, artefact work
    sooner, and anything waiting more than 8 iterations sooner (anti-starvation); 1 to 9."""
    p, words = priority + depth, text.lower()
    if any(w in words for w in VAGUE):
        p += 2
    if any(w in words for w in ARTEFACT_VERBS):
        p -= 1
    if iteration - seq > 8:
        p -= 1
    return max(1, min(9, p))


def is_artefact(result: str) -> bool:
    """Whether a result is the work itself rather than a description of work to be done: at least 40
    characters, and neither its first sentence nor half its sentences open with an intention ("I will",
    "To complete this", "The next step", "You should", "Here is how", ...)."""
    text = result.strip()
    if len(text) < 40:
        return False
    sentences = [s.strip(" -*•\t").lower() for s in re.split(r"(?<=[.!?])\s+|\n+", text) if s.strip(" -*•\t")]
    intents = [bool(_INTENT.match(s)) for s in sentences]
    return not (intents and (intents[0] or sum(intents) * 2 >= len(intents)))


class TaskLoop(BaseStrategy):
    name = "task-loop"

    def __init__(self, context: Context):
        self.ctx = context
        self.current_goal_id: str | None = None
        self.rebuild()

    def outcome(self) -> str:
        """By the tasks, except that a loop whose queue ran dry with the completeness check saying the
        objective is not met did not do it all: partial, whatever the tasks it ran said."""
        outcome = self.ctx.record.compute_outcome()
        if outcome == "done" and self._root().facts.get("covered") is False:
            return "partial"
        return outcome

    def finishing(self) -> None:
        """The root is the objective the queue worked on: done when tasks were done, whatever a cap
        or the completeness check left unrun (the tasks say skipped and why, the outcome partial);
        a root whose tasks all failed stays failed."""
        root = self._root()
        if root.status is GoalStatus.SKIPPED and any(t.status is GoalStatus.DONE for t in self.tasks()):
            left = sum(t.status is GoalStatus.SKIPPED for t in self.tasks())
            self.ctx.set_goal(root, status=GoalStatus.DONE, note=_join(root.note, f"{left} task(s) not run"))

    # -- state, from the record --------------------------------------------------

    def rebuild(self) -> None:
        self.heap = [self._key(t) for t in self.tasks() if t.status is GoalStatus.PENDING]
        heapq.heapify(self.heap)
        self._seen: FindingsMemory | None = None  # the duplicate check's memory, built on first use

    @staticmethod
    def _key(task: Goal) -> tuple[int, int, str]:
        """(effective priority, insertion sequence, id): the sequence is unique, so two tasks are never
        ordered by anything after it, least of all their text."""
        return int(task.facts.get("effective", 5)), int(task.facts.get("seq", 0)), task.id

    @property
    def options(self) -> dict:
        return self.ctx.record.options

    def _root(self) -> Goal:
        return self.ctx.record.goals[self.ctx.record.root_id]

    def tasks(self) -> list[Goal]:
        return self.ctx.record.tasks()

    def queued(self) -> list[Goal]:
        """The pending tasks, next first."""
        goals = self.ctx.record.goals
        return [goals[k[2]] for k in sorted(self.heap) if goals[k[2]].status is GoalStatus.PENDING]

    def iterations(self) -> int:
        return sum(1 for t in self.tasks() if "iteration" in t.facts)

    def _prune(self) -> None:
        goals = self.ctx.record.goals
        while self.heap and goals[self.heap[0][2]].status is not GoalStatus.PENDING:
            heapq.heappop(self.heap)

    def _ungrown(self) -> Goal | None:
        """A task executed before a stop whose new tasks were not made yet: made first on resume."""
        return next((t for t in self.tasks() if t.facts.get("grown") is False), None)

    def has_work(self) -> bool:
        rec = self.ctx.record
        if rec.root_id is None:
            return False
        if not self.tasks():
            return self._root().status is GoalStatus.PENDING
        if self.ctx.decide(Action.EXECUTE) is Decision.HOLD:
            return False
        self._prune()
        if self.heap or self._ungrown() is not None:
            return True
        # the queue is empty: one completeness check says whether the objective was met
        return "covered" not in self._root().facts and rec.done > 0

    def planned(self) -> bool:
        self._prune()
        return self.ctx.decide(Action.EXECUTE) is Decision.HOLD and bool(self.heap)

    # -- one iteration -------------------------------------------------------------

    async def step(self) -> None:
        rec = self.ctx.record
        if not self.tasks():
            self._first_task()
            return
        if (grown := self._ungrown()) is not None:
            self.current_goal_id = grown.id
            try:
                await self._grow(grown)
            finally:
                self.current_goal_id = None
            return
        self._prune()
        cap = int(self.options.get("max_iterations", MAX_ITERATIONS))
        if self.heap and self.iterations() >= cap:
            self._skip_queue(f"not run: the iteration cap ({cap}) was reached")
            return
        if not self.heap:
            await self._check(final=True)
            return
        task = rec.goals[heapq.heappop(self.heap)[2]]
        self.current_goal_id = task.id
        try:
            await self._iterate(task)
        finally:
            self.current_goal_id = None

    def _first_task(self) -> None:
        ctx, root = self.ctx, self._root()
        text = str(self.options.get("first_task") or ctx.record.objective)[:500]
        first = ctx.add_goal(root, text, {"priority": 1, "effective": 1, "seq": 1, "task_depth": 0, "creator": None})
        ctx.set_goal(root, actionable=False, note="task loop: the objective's tasks, run from a priority queue")
        heapq.heappush(self.heap, self._key(first))

    async def _iterate(self, task: Goal) -> None:
        ctx, rec = self.ctx, self.ctx.record
        ctx.begin_turn(task)
        iteration = self.iterations() + 1
        small = ctx.prompts.PROFILE == "small"
        tools = offered_tools(ctx)
        recent = [(t.text, t.result) for t in sorted((t for t in self.tasks() if t.status is GoalStatus.DONE),
                                                     key=lambda t: t.facts.get("iteration", 0))[-RECENT:]]
        messages = P.operator_said(P.execute_task(rec.objective, task.text, recent, rec.converging(), tools=bool(tools),
                                                  small=small), task, small=small)
        result = await work(ctx, task, messages, tools)
        if result.upper().startswith("BLOCKED:"):
            ctx.set_goal(task, result=result)
            raise Blocked(f"blocked by model: {result[8:].strip()[:300]}")
        why = "no result" if not result else degenerate(result, ctx.prompts.EXAMPLES)
        facts = {"iteration": iteration, "grown": False}
        if why is not None:
            ctx.set_goal(task, status=GoalStatus.FAILED, result=result, attempts=task.attempts + 1,
                         note=_join(task.note, f"failed: {why}"), facts=facts)
        else:
            facts["artefact"] = is_artefact(result)
            ctx.set_goal(task, status=GoalStatus.DONE, result=result, attempts=task.attempts + 1, facts=facts)
            ctx.memory.save(task.id, result, task.text)
        await self._grow(task)
        ctx.settle_parents(task)  # after the new tasks exist: the root is not done while they wait
        if self.heap and rec.done >= CHECK_EVERY and iteration % CHECK_EVERY == 0:
            await self._check(final=False)

    async def _grow(self, task: Goal) -> None:
        """New tasks from what `task` found (within the allowance), then the queue re-scored."""
        ctx, rec = self.ctx, self.ctx.record
        created, why = [], ""
        depth, limit = int(task.facts.get("task_depth", 0)), rec.limits.max_depth
        self._prune()
        room = min(int(self.options.get("max_queue", MAX_QUEUE)) - len(self.heap),
                   rec.limits.max_goals - rec.metrics.goals_created)
        allowance = max(0, min(ALLOWANCE, room))
        if task.status is not GoalStatus.DONE:
            why = "nothing created: the task failed"
        elif depth >= limit:
            why = f"nothing created: depth limit {limit}"
        elif allowance == 0:
            why = "nothing created: the queue (or the goal budget) is full"
        else:
            created = await self._create(task, allowance)
        fields: dict = {"facts": {"grown": True, "created": len(created)}}
        if why:
            fields["note"] = _join(task.note, why)
        ctx.set_goal(task, **fields)
        if self.heap and task.status is GoalStatus.DONE:
            await self._reprioritise(task.result)

    async def _create(self, task: Goal, allowance: int) -> list[Goal]:
        ctx, rec = self.ctx, self.ctx.record
        small = ctx.prompts.PROFILE == "small"
        reply = await ctx.call_model("create", P.create(rec.objective, task.text, task.result,
                                                        [q.text for q in self.queued()], allowance, small=small),
                                     task, schema=P.create_schema(allowance, small), max_tokens=90 * allowance + 40)
        # what is not a task (a number, a bare string, an empty text) is not counted against the allowance
        items = [i for i in _items(reply.text, "tasks") if isinstance(i, dict) and isinstance(i.get("description"), str)
                 and i["description"].strip()][:allowance]
        seen = await self._memory([" ".join(i["description"].split())[:500] for i in items])
        created: list[Goal] = []
        for item in items:
            text = " ".join(item["description"].split())[:500]
            priority = _priority(item.get("priority"))
            exact = self._exact(text)
            if exact is not None:
                ctx.log_duplicate(text=text, match_id=exact.id, match_text=exact.text, similarity=1.0, how="exact",
                                  creator_id=task.id)
                continue
            best = seen.search(text, k=1)
            threshold = float(self.options.get("similarity", SIMILARITY))
            if best and best[0].score >= threshold and (seen.semantic or near(content_words(text),
                                                                             content_words(rec.goals[best[0].key].text))):
                # a lexical embedder (the default) scores "write about foam" and "write about tape" under one
                # objective at 0.89: with it, a pair is one only if it also says the same words in order
                match = rec.goals[best[0].key]
                ctx.log_duplicate(text=text, match_id=match.id, match_text=match.text,
                                  similarity=round(best[0].score, 4), how="similar", creator_id=task.id)
                continue
            seq = 1 + max((int(t.facts.get("seq", 0)) for t in self.tasks()), default=0)
            depth = int(task.facts.get("task_depth", 0)) + 1
            facts = {"priority": priority, "seq": seq, "task_depth": depth, "creator": task.id,
                     "effective": effective_priority(priority, depth, text, self.iterations(), seq)}
            if best:
                facts["nearest"] = {"id": best[0].key, "similarity": round(best[0].score, 4)}
            new = ctx.add_goal(self._root(), text, facts)
            seen.save(new.id, text, text)
            heapq.heappush(self.heap, self._key(new))
            created.append(new)
        return created

    def split_by_operator(self, task: Goal, texts: list[str]) -> None:
        """The operator's tasks in place of `task` (an overrule's split): queued at its priority and
        depth, created by it, and it is skipped, saying so."""
        ctx = self.ctx
        priority, depth = int(task.facts.get("priority", 5)), int(task.facts.get("task_depth", 0))
        for text in texts:
            seq = 1 + max((int(t.facts.get("seq", 0)) for t in self.tasks()), default=0)
            ctx.add_goal(self._root(), text, {"priority": priority, "seq": seq, "task_depth": depth, "creator": task.id,
                                              "by": "operator",
                                              "effective": effective_priority(priority, depth, text,
                                                                              self.iterations(), seq)})
        if task.status is not GoalStatus.SKIPPED:
            ctx.set_goal(task, status=GoalStatus.SKIPPED,
                         note=_join(task.note, f"split by the operator into {len(texts)} task(s)"))

    async def _memory(self, texts: list[str]) -> FindingsMemory:
        """Every task's text, in a memory with the findings memory's embedder."""
        if self._seen is None:
            self._seen = FindingsMemory(self.ctx.memory.embedder)
            tasks = self.tasks()
            await self._seen.prepare([t.text for t in tasks])
            for t in tasks:
                self._seen.save(t.id, t.text, t.text)
        await self._seen.prepare(texts)
        return self._seen

    def _exact(self, text: str) -> Goal | None:
        key = normalise(text)
        return next((t for t in self.tasks() if normalise(t.text) == key), None)

    async def _reprioritise(self, learned: str) -> None:
        ctx, rec = self.ctx, self.ctx.record
        queue = self.queued()
        reply = await ctx.call_model(
            "reprioritise", P.reprioritise(rec.objective, learned, [(int(q.facts.get("priority", 5)), q.text)
                                                                    for q in queue], small=ctx.prompts.PROFILE == "small"),
            None, schema=P.REPRIORITISE_SCHEMA, max_tokens=24 * len(queue) + 40)
        model = {}
        for item in _items(reply.text, "priorities"):
            if isinstance(item, dict) and isinstance(item.get("index"), int) and 0 <= item["index"] < len(queue):
                model[queue[item["index"]].id] = _priority(item.get("priority"))
        iteration = self.iterations()
        for q in queue:  # the adjustment runs on every queued task: its age changed too
            priority = model.get(q.id, int(q.facts.get("priority", 5)))
            effective = effective_priority(priority, int(q.facts.get("task_depth", 0)), q.text, iteration,
                                           int(q.facts.get("seq", 0)))
            if (priority, effective) != (q.facts.get("priority"), q.facts.get("effective")):
                ctx.set_goal(q, facts={"priority": priority, "effective": effective})
        self.heap = [self._key(q) for q in queue]
        heapq.heapify(self.heap)

    async def _check(self, *, final: bool) -> None:
        """Is the objective met by what is done? YES clears what is queued (skipped, with the reason)."""
        ctx, rec, root = self.ctx, self.ctx.record, self._root()
        done = [(t.text, t.result) for t in self.tasks() if t.status is GoalStatus.DONE]
        reply = await ctx.call_model("check_complete", P.check_complete(rec.objective, done,
                                                                        small=ctx.prompts.PROFILE == "small"),
                                     root, schema=P.CHECK_SCHEMA, max_tokens=160)
        try:
            met, reason = yes_no(reply.text)
        except Unparseable:
            met, reason = False, "answer unparseable"
        checks = int(root.facts.get("checks", 0)) + 1
        if not met and not final:
            ctx.set_goal(root, facts={"checks": checks})
            return
        said = f"completeness check: {'met' if met else 'not met'}" + (f" ({reason[:200]})" if reason else "")
        ctx.set_goal(root, note=_join(root.note, said), facts={"covered": met, "checks": checks})
        if met and self.heap:
            self._skip_queue("not run: the completeness check judged the objective met")

    def _skip_queue(self, why: str) -> None:
        for task in self.queued():
            self.ctx.set_goal(task, status=GoalStatus.SKIPPED, note=_join(task.note, why))
        self.heap = []
        tasks = self.tasks()
        if tasks:
            self.ctx.settle_parents(tasks[-1])


def _items(text: str, key: str) -> list:
    """The list a create or reprioritise reply holds (`{key: [...]}` or a bare list), or []."""
    for value in json_values(text):
        if isinstance(value, dict) and isinstance(value.get(key), list):
            return value[key]
        if isinstance(value, list):
            return value
    return []


def _priority(value) -> int:
    try:
        return max(1, min(9, int(value)))
    except (TypeError, ValueError):
        return 5


def _join(note: str, extra: str) -> str:
    return f"{note}; {extra}" if note else extra
