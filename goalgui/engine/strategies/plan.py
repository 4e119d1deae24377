"""The plan of seed 004: the model writes the plan as data, Python validates it, the steps run as a DAG.

The plan is JSON (`{"steps": [{"id", "goal", "tool", "dependencies"}]}`), validated before anything
runs: 1 to 10 steps, known tools (or null), dependencies that exist and point only backwards (which
also excludes cycles). A refusal names the bad step and goes back to the model once; a second one
parks the run with the reason. Each version of the plan is journaled (`PlanMade`) and its steps are
the root's children, with their step id, tool and dependencies as data (`Goal.facts`).

A step runs when its dependencies are done; independent steps run side by side, up to
`max_parallel`, each as its own task so that skip cancels one step and pause or cancel all of them.
A failed step is replanned (the model sees the failure and what is done), at most `max_replans`
times; past that the run gives up (`gave_up`). Done steps keep their results across versions.
"""

from __future__ import annotations

import asyncio
import time

from .. import prompts_loop as P
from ..lifecycle import Blocked
from ..model import BadResponse
from ..parsing import degenerate, json_values, normalise
from ..permissions import Action, Decision
from ..record import SETTLED, Goal, GoalStatus
from .base import BaseStrategy, Context
from .goal_stack import work

MAX_STEPS, MAX_PARALLEL, MAX_REPLANS = 10, 3, 2


class PlanError(ValueError):
    """A plan that cannot run; the message names the step."""


def validate(raw, tools: set[str], most: int = MAX_STEPS, *, kept: frozenset[int] = frozenset(),
             first_id: int = 1) -> list[dict]:
    """The plan's steps as `{"step", "goal", "tool", "dependencies"}`, in id order, or PlanError.
    `kept`: ids of done steps (of an earlier version) new steps may depend on; `first_id`: the lowest
    id a new step may have (a replan numbers on from the last version)."""
    steps = raw.get("steps") if isinstance(raw, dict) else raw if isinstance(raw, list) else None
    if not isinstance(steps, list):
        raise PlanError('the reply holds no plan: expected {"steps": [...]}')
    if not 1 <= len(steps) <= most:
        raise PlanError(f"the plan has {len(steps)} steps (1 to {most} allowed)")
    by_id: dict[int, dict] = {}
    for n, s in enumerate(steps, 1):
        if not isinstance(s, dict):
            raise PlanError(f"step #{n} is not an object with id, goal, tool and dependencies")
        sid = s.get("id")
        if isinstance(sid, bool) or not isinstance(sid, int):
            raise PlanError(f"step #{n} has no whole-number id")
        if sid < first_id or sid in by_id or sid in kept:
            raise PlanError(f"step {sid}: its id is " + ("used twice" if sid in by_id or sid in kept
                                                          else f"below {first_id} (number new steps from {first_id})"))
        by_id[sid] = s
    out = []
    for sid, s in sorted(by_id.items()):
        goal = " ".join(str(s.get("goal") or "").split())
        if not goal:
            raise PlanError(f"step {sid} has no goal")
        tool = s.get("tool")
        if tool is not None and (not isinstance(tool, str) or tool not in tools):
            known = ", ".join(sorted(tools)) or "none in this run"
            raise PlanError(f"step {sid}: unknown tool {str(tool)[:60]!r} (the tools are: {known}; or null)")
        deps = s.get("dependencies", [])
        if not isinstance(deps, list) or any(isinstance(d, bool) or not isinstance(d, int) for d in deps):
            raise PlanError(f"step {sid}: dependencies must be a list of step ids")
        for d in deps:
            if d == sid:
                raise PlanError(f"step {sid} depends on itself (a cycle)")
            if d not in by_id and d not in kept:
                raise PlanError(f"step {sid} depends on step {d}, which does not exist")
            if d > sid:
                back = sid in (by_id[d].get("dependencies") or [])
                raise PlanError(f"step {sid} depends on step {d}, which comes after it" +
                                (f" and depends on step {sid} (a cycle)" if back else
                                 " (dependencies point only backwards)"))
        out.append({"step": sid, "goal": goal[:500], "tool": tool, "dependencies": sorted(set(deps))})
    return out


def repaired(raw, tools: set[str], most: int, first_id: int, kept: frozenset[int]) -> tuple[dict, list[str]]:
    """A small model's plan with its noise taken out, and what was changed: its ids and dependency
    numbers are mostly noise (grammar-bound JSON with numbers in any order), so steps are numbered in
    the order given, dependencies that do not point back are dropped, and unknown tools become null."""
    steps = raw.get("steps") if isinstance(raw, dict) else raw
    if not isinstance(steps, list):
        return raw, []
    notes, fixed, old_to_new, texts = [], [], {}, {}
    for s in [s for s in steps if isinstance(s, dict)]:
        key = normalise(str(s.get("goal", "")))
        if key in texts:  # the same step twice: one step, and what depended on either depends on it
            if isinstance(s.get("id"), int):
                old_to_new.setdefault(s["id"], texts[key])
            notes.append(f"a repeated step was dropped ({str(s.get('goal'))[:60]!r})")
            continue
        if len(fixed) == most:
            break
        n = first_id + len(fixed)
        texts[key] = n
        if isinstance(s.get("id"), int):
            old_to_new.setdefault(s["id"], n)
        fixed.append(dict(s, id=n))
    for s in fixed:
        deps = [old_to_new.get(d, d) if d not in kept else d for d in s.get("dependencies") or []
                if isinstance(d, int) and not isinstance(d, bool)]
        good = sorted({d for d in deps if d < s["id"] and (d in kept or d >= first_id)})
        if good != sorted(set(deps)):
            notes.append(f"step {s['id']}: dependencies that did not point back were dropped")
        s["dependencies"] = good
        if s.get("tool") is not None and s.get("tool") not in tools:
            notes.append(f"step {s['id']}: unknown tool {str(s['tool'])[:40]!r} set to none")
            s["tool"] = None
    return {"steps": fixed}, notes


class Plan(BaseStrategy):
    name = "plan"

    def __init__(self, context: Context):
        self.ctx = context
        self.current_goal_id: str | None = None
        self.running: dict[str, asyncio.Task] = {}
        self.rebuild()

    def rebuild(self) -> None:
        self.running = {gid: t for gid, t in self.running.items() if not t.done()}

    # -- the plan, from the record -------------------------------------------------

    @property
    def options(self) -> dict:
        return self.ctx.record.options

    def _root(self) -> Goal:
        return self.ctx.record.goals[self.ctx.record.root_id]

    def steps(self) -> list[tuple[dict, Goal]]:
        """The latest version's steps with their goals, in id order."""
        rec = self.ctx.record
        if not rec.plans:
            return []
        return [(s, rec.goals[s["goal_id"]]) for s in rec.plans[-1].steps if s.get("goal_id") in rec.goals]

    def replans(self) -> int:
        return max(0, len(self.ctx.record.plans) - 1)

    def _failed(self) -> tuple[dict, Goal] | None:
        return next(((s, g) for s, g in self.steps() if g.status is GoalStatus.FAILED), None)

    def _ready(self) -> list[tuple[dict, Goal]]:
        state = {s["step"]: g.status for s, g in self._known()}
        return [(s, g) for s, g in self.steps() if g.status is GoalStatus.PENDING and g.id not in self.running
                and all(state.get(d) is GoalStatus.DONE for d in s["dependencies"])]

    def _known(self) -> list[tuple[dict, Goal]]:
        """Every step of every version (a new version's steps may depend on an old version's done ones)."""
        rec = self.ctx.record
        return [(s, rec.goals[s["goal_id"]]) for v in rec.plans for s in v.steps if s.get("goal_id") in rec.goals]

    def has_work(self) -> bool:
        rec = self.ctx.record
        if rec.root_id is None:
            return False
        if not rec.plans:
            return self._root().status is GoalStatus.PENDING
        if self.running:
            return True
        if self.ctx.decide(Action.EXECUTE) is Decision.HOLD or self._root().facts.get("gave_up"):
            return False
        return any(g.status not in SETTLED for _s, g in self.steps()) or self._failed() is not None

    def planned(self) -> bool:
        return self.ctx.decide(Action.EXECUTE) is Decision.HOLD and any(
            g.status is GoalStatus.PENDING for _s, g in self.steps())

    def outcome(self) -> str:
        if self._root().facts.get("gave_up"):
            return "gave_up"
        steps = self.steps()
        done = sum(1 for _s, g in steps if g.status is GoalStatus.DONE)
        return "done" if steps and done == len(steps) else "partial" if done else "failed"

    def finishing(self) -> None:
        """The root follows the final version (an earlier version's failed step was replanned)."""
        root, outcome = self._root(), self.outcome()
        statuses = [g.status for _s, g in self.steps()]
        status = (GoalStatus.DONE if outcome == "done" else GoalStatus.FAILED
                  if outcome in ("gave_up", "failed") or GoalStatus.FAILED in statuses else GoalStatus.SKIPPED)
        if root.status is not status:
            self.ctx.set_goal(root, status=status)

    def cancel_goals(self, ids: set[str]) -> bool:
        hit = [t for gid, t in self.running.items() if gid in ids]
        for task in hit:
            task.cancel()
        return bool(hit)

    # -- one step: plan, replan, or start what is ready and take what finishes ------------

    async def step(self) -> None:
        ctx = self.ctx
        if not ctx.record.plans:
            await self._plan(None)
            return
        failed = self._failed()
        if failed is not None and not self.running:
            cap = int(self.options.get("max_replans", MAX_REPLANS))
            if self.replans() >= cap:
                self._give_up(failed, cap)
            else:
                await self._plan(failed)
            return
        self._skip_orphans()
        if failed is None:
            for s, g in self._ready()[:max(0, int(self.options.get("max_parallel", MAX_PARALLEL)) - len(self.running))]:
                self.running[g.id] = asyncio.ensure_future(self._run_step(s, g))
                self.current_goal_id = g.id
        if not self.running:
            return
        try:
            finished, _ = await asyncio.wait(list(self.running.values()), return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # a pause or a cancel: every running step stops with the run
            await self._stop_all()
            raise
        error = None
        for gid, task in list(self.running.items()):
            if task in finished:
                del self.running[gid]
                if not task.cancelled() and task.exception() is not None and error is None:
                    error = task.exception()
        self.current_goal_id = next(reversed(self.running), None)
        if error is not None:  # a stop (a budget, a blocker, a provider error) stops the others too
            await self._stop_all()
            raise error

    async def _stop_all(self) -> None:
        tasks = list(self.running.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self.running.clear()
        self.current_goal_id = None

    async def _run_step(self, step: dict, goal: Goal) -> None:
        ctx, rec = self.ctx, self.ctx.record
        began = time.monotonic()
        ctx.begin_turn(goal)
        known = {s["step"]: g for s, g in self._known()}
        needed = [(known[d].text, known[d].result) for d in step["dependencies"] if d in known]
        small = ctx.prompts.PROFILE == "small"
        tools = None
        if ctx.tools is not None and not small:
            names = ctx.tools.names()
            tools = ctx.tools.offered([step["tool"], *[n for n in names if n != step["tool"]]] if step["tool"] else None)
        messages = P.operator_said(P.execute_step(rec.objective, goal.text, step["tool"], needed, rec.converging(),
                                                  tools=bool(tools), small=small), goal, small=small)
        result = await work(ctx, goal, messages, tools)
        if result.upper().startswith("BLOCKED:"):
            ctx.set_goal(goal, result=result)
            raise Blocked(f"blocked by model: {result[8:].strip()[:300]}")
        why = None
        if result.upper().startswith("FAILED:"):
            why = result[7:].strip()[:300] or "the model said it failed"
        elif not result:
            why = "no result"
        elif (echo := degenerate(result, ctx.prompts.EXAMPLES)) is not None:
            why = echo
        elif step["tool"] and tools:
            calls = [c for c in rec.tool_log.get(goal.id, ()) if c[0] == step["tool"]]
            if calls and not any(ok for _n, _d, ok, _a in calls):
                why = f"every call of its tool {step['tool']} failed"
        facts = {"seconds": round(time.monotonic() - began, 3)}
        if why is None:
            ctx.set_goal(goal, status=GoalStatus.DONE, result=result, attempts=goal.attempts + 1, facts=facts)
            ctx.memory.save(goal.id, result, goal.text)
        else:
            ctx.set_goal(goal, status=GoalStatus.FAILED, result=result, attempts=goal.attempts + 1, facts=facts,
                         note=_join(goal.note, f"failed: {why}"))

    def _skip_orphans(self) -> None:
        """A step whose dependency was skipped can never run: skipped too, saying why."""
        state = {s["step"]: g.status for s, g in self._known()}
        changed = True
        while changed:
            changed = False
            for s, g in self.steps():
                gone = [d for d in s["dependencies"] if state.get(d) in (GoalStatus.SKIPPED, GoalStatus.ABANDONED)]
                if g.status is GoalStatus.PENDING and gone and g.id not in self.running:
                    self.ctx.set_goal(g, status=GoalStatus.SKIPPED,
                                      note=_join(g.note, f"not run: its dependency step {gone[0]} was skipped"))
                    state[s["step"]], changed = GoalStatus.SKIPPED, True

    def _give_up(self, failed: tuple[dict, Goal], cap: int) -> None:
        ctx, root = self.ctx, self._root()
        for _s, g in self.steps():
            if g.status not in SETTLED:
                ctx.set_goal(g, status=GoalStatus.SKIPPED, note=_join(g.note, f"not run: gave up after {cap} replans"))
        ctx.set_goal(root, status=GoalStatus.FAILED, facts={"gave_up": True},
                     note=_join(root.note, f"gave up: step {failed[0]['step']} failed and the replan cap ({cap}) "
                                           "is reached"))

    # -- making a version of the plan ----------------------------------------------

    async def _plan(self, failed: tuple[dict, Goal] | None) -> None:
        ctx, rec, root = self.ctx, self.ctx.record, self._root()
        self.current_goal_id = root.id
        try:
            ctx.begin_turn(root)
            small = ctx.prompts.PROFILE == "small"
            tools = ctx.tools.names() if ctx.tools is not None else []
            most = int(self.options.get("max_steps", MAX_STEPS))
            known = self._known()
            kept = [(s, g) for s, g in self.steps() if g.status is GoalStatus.DONE]
            kept_ids = frozenset(s["step"] for s, _g in kept)
            first_id = 1 + max((s["step"] for s, _g in known), default=0)
            notes: list[str] = []
            asked = ctx.unanswered("plan", root)
            steps = [dict(s) for s in asked["steps"]] if asked and isinstance(asked.get("steps"), list) else None
            if steps is not None:
                notes.append("the plan asked before the stop is asked again, not made again")
            error = None
            for _attempt in range(0 if steps is not None else 2):
                if failed is None:
                    messages = P.plan(rec.objective, [] if small else tools, most, error, small=small)
                else:
                    s, g = failed
                    why = g.note.rsplit("failed: ", 1)[-1] if "failed: " in g.note else g.result[:300]
                    messages = P.replan(rec.objective, tools, [(s["step"], g.text, g.result) for s, g in kept],
                                        (s["step"], g.text, why), first_id, most, error, small=small)
                reply = await ctx.call_model("plan" if failed is None else "replan", messages, root,
                                             schema=P.plan_schema(tools, most, small, 3 if failed is None else 1),
                                             max_tokens=70 * most + 60)
                raw = next(iter(json_values(reply.text)), None)
                if small:
                    raw, fixes = repaired(raw, set(tools), most, first_id, kept_ids)
                    notes.extend(fixes)
                try:
                    steps = validate(raw, set(tools), most, kept=kept_ids, first_id=first_id)
                    break
                except PlanError as exc:
                    error = str(exc)
                    notes.append(f"plan refused: {error}")
            if steps is None:
                ctx.set_goal(root, note=_join(root.note, "; ".join(notes)))
                raise BadResponse(f"the plan was refused twice: {error}")
            steps = await self._review(steps, kept_ids, first_id, notes)
            self._adopt(steps, kept, failed, notes)
        finally:
            self.current_goal_id = None

    async def _review(self, steps: list[dict], kept: frozenset[int], first_id: int, notes: list[str]) -> list[dict]:
        """In ask mode the operator confirms the plan, editing it like sub-goals: a step's text may be
        changed, a step dropped (and the dependencies on it), a step added (it depends on nothing)."""
        ctx, root = self.ctx, self._root()
        if ctx.decide(Action.PLAN) is not Decision.ASK:
            return steps
        answer = await ctx.confirm("plan", {"parent": ctx.record.objective, "subgoals": [s["goal"] for s in steps],
                                            "steps": steps}, root)
        if answer.outcome.value != "approved":
            notes.append(f"plan {answer.outcome.value}: the objective is one step")
            return [{"step": first_id, "goal": ctx.record.objective[:500], "tool": None, "dependencies": []}]
        edited = [" ".join(str(t).split())[:500] for t in answer.edits.get("subgoals", [s["goal"] for s in steps])]
        edited = [t for t in edited if t]
        if edited == [s["goal"] for s in steps]:
            return steps
        notes.append("plan edited on confirmation")
        unmatched = [s for s in steps if s["goal"] not in edited]
        out, next_id = [], max([s["step"] for s in steps] + [first_id - 1]) + 1
        originals = {s["goal"]: s for s in steps}
        for text in edited:
            if text in originals:
                out.append(dict(originals.pop(text)))
            elif unmatched:  # an edited text takes the place of the first original no longer there
                out.append(dict(unmatched.pop(0), goal=text))
            else:
                out.append({"step": next_id, "goal": text, "tool": None, "dependencies": []})
                next_id += 1
        ids = {s["step"] for s in out} | kept
        for s in out:
            s["dependencies"] = [d for d in s["dependencies"] if d in ids and d < s["step"]]
        return sorted(out, key=lambda s: s["step"]) or steps

    def _adopt(self, steps: list[dict], kept: list[tuple[dict, Goal]], failed, notes: list[str]) -> None:
        ctx, root = self.ctx, self._root()
        version = len(ctx.record.plans) + 1
        for _s, g in self.steps():  # what the old version had not done is replaced
            if g.status not in SETTLED:
                ctx.set_goal(g, status=GoalStatus.SKIPPED, note=_join(g.note, f"replaced by plan v{version}"))
        entries = [dict(s, goal_id=g.id) for s, g in kept]
        for s in steps:
            goal = ctx.add_goal(root, s["goal"], {"step": s["step"], "tool": s["tool"],
                                                 "dependencies": s["dependencies"], "version": version})
            entries.append(dict(s, goal_id=goal.id))
        reason = "planned" if failed is None else f"step {failed[0]['step']} failed: replan {version - 1}"
        ctx.log_plan(version, entries, reason)
        said = f"plan v{version}: {len(steps)} step(s)" + ("" if failed is None else f" after step {failed[0]['step']} failed")
        ctx.set_goal(root, actionable=False, note=_join(root.note, "; ".join(notes + [said])),
                     facts={"replans": version - 1})


def _join(note: str, extra: str) -> str:
    return f"{note}; {extra}" if note else extra
