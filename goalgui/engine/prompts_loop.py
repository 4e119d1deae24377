"""Prompts and schemas of the task loop (seed 003) and the plan (seed 004).

Text from a person or a model is wrapped as data, as in `prompts`. A small model (the embedded
default) gets the same calls in its own short form, one thing per call; the guards that matter
(the allowance, the depth limit, the duplicate check, the plan's validation) are in Python.
"""

from __future__ import annotations

import json

from .prompts import SYSTEM, data, operator_said, verdict_schema  # noqa: F401 (operator_said: for the strategies)

RESULT_CUT = 250  # per recent result in an execution's context (seed 003)


def _messages(task: str, user: str, small: bool) -> list[dict]:
    if small:
        return [{"role": "system", "content": task}, {"role": "user", "content": user}]
    return [{"role": "system", "content": f"{SYSTEM}\n\n{task}"}, {"role": "user", "content": user}]


def _one_line(text: str) -> str:
    return " ".join(text.split())


# -- the task loop ---------------------------------------------------------------

EXECUTE = ("Complete this task concretely. Produce the actual artefact (text, list, numbers), not a "
           "description of what you would do. If it cannot be done without outside input, start your reply "
           "with BLOCKED: and say what is needed.")
EXECUTE_SMALL = "You write short, concrete answers: the thing itself, a list of 3 to 6 items, each with a detail."
TOOLS = (" You have tools that act in the run's workspace: use them where the task needs the world, then "
         "answer with the result.")


def execute_task(objective: str, task: str, recent: list[tuple[str, str]], converging: bool, *,
                 tools: bool, small: bool) -> list[dict]:
    if small:
        return _messages(EXECUTE_SMALL, f"Task: {_one_line(task)}\n(Part of: {_one_line(objective)})", True)
    done = "\n".join(f"- {t}: {_one_line(r)[:RESULT_CUT]}" for t, r in recent) or "(nothing yet)"
    note = "\n\nBudget note: more than 75% of a budget is spent; keep it short." if converging else ""
    return _messages(EXECUTE + (TOOLS if tools else ""),
                     f"{data('objective', objective)}\n{data('recently completed', done)}\n{data('task', task)}{note}",
                     False)


# a small model's step or task text is held to a short plain sentence by the grammar: unheld, the 135M
# model wrote empty descriptions, or code fences and half a JSON document inside a step's goal
# (the full stop is allowed: without it the model, wanting to end, ran words together: "homedaynight")
SENTENCE = {"type": "string", "pattern": "^[A-Z][a-z]{1,14}( [A-Za-z0-9',-]{1,14}){2,11}[.]?$"}


def create_schema(allowance: int, small: bool = False) -> dict:
    text = SENTENCE if small else {"type": "string", "maxLength": 160}
    item = {"type": "object", "properties": {"description": text,
                                             "priority": {"type": "integer", "minimum": 1, "maximum": 9}},
            "required": ["description", "priority"]}
    return {"type": "object", "properties": {"tasks": {"type": "array", "items": item, "minItems": 0,
                                                       "maxItems": max(0, allowance)}}, "required": ["tasks"]}


CREATE = ("Create AT MOST {n} new tasks that the objective still needs: fewer is better, and an empty list is "
          "correct if the objective is now adequately covered. Do NOT duplicate anything already queued or "
          "completed. Priority 1 = do first, 9 = do last. Reply as JSON: "
          "{{\"tasks\": [{{\"description\": \"...\", \"priority\": 1-9}}]}}.")
CREATE_SMALL = ("You list at most {n} next tasks for the goal, each a short sentence starting with a verb, "
                "or none if the goal is covered. Priority 1 = first, 9 = last.")
CREATE_EXAMPLE = ("Goal: Plan a picnic in the park\nDone: Choose a park and a date",
                  json.dumps({"tasks": [{"description": "Choose food for the picnic", "priority": 2},
                                        {"description": "Write an invitation to friends", "priority": 3}]}))


def create(objective: str, task: str, result: str, queued: list[str], allowance: int, *, small: bool) -> list[dict]:
    if small:  # one worked exchange: without it the model's tasks were the goal said again
        question, answer = CREATE_EXAMPLE
        return [{"role": "system", "content": CREATE_SMALL.format(n=allowance)},
                {"role": "user", "content": question}, {"role": "assistant", "content": answer},
                {"role": "user", "content": f"Goal: {_one_line(objective)}\nDone: {_one_line(task)}"}]
    waiting = "\n".join(f"- {q}" for q in queued[:8]) or "(none)"
    return _messages(CREATE.format(n=allowance),
                     f"{data('objective', objective)}\n{data('just completed', task)}\n"
                     f"{data('its result', result[:900])}\n{data('still queued', waiting)}", False)


REPRIORITISE = ("Re-score the queued tasks' priorities in the light of the new information: 1 = do next, 9 = do "
                "last. A task made redundant by it should be 9. Reply as JSON: "
                "{\"priorities\": [{\"index\": 0, \"priority\": 3}, ...]}.")
REPRIORITISE_SMALL = "You give each numbered task a priority: 1 = do first, 9 = do last."
REPRIORITISE_SCHEMA = {"type": "object", "properties": {"priorities": {"type": "array", "items": {
    "type": "object", "properties": {"index": {"type": "integer", "minimum": 0},
                                     "priority": {"type": "integer", "minimum": 1, "maximum": 9}},
    "required": ["index", "priority"]}, "maxItems": 20}}, "required": ["priorities"]}


def reprioritise(objective: str, learned: str, queued: list[tuple[int, str]], *, small: bool) -> list[dict]:
    listing = "\n".join(f"{i}. [p{p}] {_one_line(t)}" for i, (p, t) in enumerate(queued))
    if small:
        return _messages(REPRIORITISE_SMALL, f"Goal: {_one_line(objective)}\nTasks:\n{listing}", True)
    return _messages(REPRIORITISE, f"{data('objective', objective)}\n{data('new information', learned[:600])}\n"
                                   f"{data('queued tasks', listing)}", False)


CHECK = ("Compare the objective with what has been completed. Answer YES if it is now sufficiently met (the "
         "queued tasks can be dropped) or NO if not yet, then one clause of justification.")
CHECK_SCHEMA = verdict_schema(120)


def check_complete(objective: str, done: list[tuple[str, str]], *, small: bool) -> list[dict]:
    lines = "\n".join(f"- {t}: {_one_line(r)[:160 if small else 300]}" for t, r in done[-12:])
    if small:
        return _messages("Say YES if the done tasks cover the goal, NO if not yet.",
                         f"Goal: {_one_line(objective)}\nDone:\n{lines}", True)
    return _messages(CHECK, f"{data('objective', objective)}\n{data('completed', lines)}", False)


# -- the plan -------------------------------------------------------------------

PLAN = ("Write a plan for the objective as data: steps, each with an id (1, 2, ...), its goal (one imperative "
        "sentence), the one tool it uses (one of: {tools}; or null for a step that only thinks or writes the "
        "answer) and its dependencies (ids of earlier steps whose results it needs; [] if none). Steps that do "
        "not depend on each other run at the same time. {least} to {most} steps. Reply as JSON: "
        "{{\"steps\": [{{\"id\": 1, \"goal\": \"...\", \"tool\": null, \"dependencies\": []}}]}}.")
PLAN_SMALL = ("You plan a goal as {least} to {most} short steps. Each step has an id, a goal starting with a "
              "verb, a tool (null) and the ids of earlier steps it needs.")
PLAN_EXAMPLE = {"steps": [{"id": 1, "goal": "List the guests", "tool": None, "dependencies": []},
                          {"id": 2, "goal": "Choose the food", "tool": None, "dependencies": []},
                          {"id": 3, "goal": "Write the invitation", "tool": None, "dependencies": [1, 2]}]}
REFUSED = "Your plan was refused: {error}. Write it again, fixing that."


def plan_schema(tools: list[str], most: int, small: bool = False, least: int = 1) -> dict:
    """`small`: 3 or 4 steps of plain sentences (a 135M model's first plan was the objective as one
    step; `least` 1 for a replan, which may need one step only)."""
    tool = {"anyOf": [{"type": "string", "enum": tools}, {"type": "null"}]} if tools else {"type": "null"}
    if small:
        least, most = min(max(least, 1), most), min(most, 4)
    step = {"type": "object", "properties": {"id": {"type": "integer", "minimum": 1},
                                             "goal": SENTENCE if small else {"type": "string", "maxLength": 200},
                                             "tool": tool,
                                             "dependencies": {"type": "array", "items": {"type": "integer"}}},
            "required": ["id", "goal", "tool", "dependencies"]}
    return {"type": "object", "properties": {"steps": {"type": "array", "items": step, "minItems": least,
                                                       "maxItems": most}}, "required": ["steps"]}


def plan(objective: str, tools: list[str], most: int, error: str | None, *, small: bool,
         least: int = 1) -> list[dict]:
    if small:
        messages = [{"role": "system", "content": PLAN_SMALL.format(least=min(3, most), most=min(most, 4))},
                    {"role": "user", "content": "Goal: Plan a party"},
                    {"role": "assistant", "content": json.dumps(PLAN_EXAMPLE)},
                    {"role": "user", "content": f"Goal: {_one_line(objective)}"}]
    else:
        messages = _messages(PLAN.format(tools=", ".join(tools) or "none", least=least, most=most),
                             data("objective", objective), False)
    if error:
        messages.append({"role": "user", "content": REFUSED.format(error=error)})
    return messages


REPLAN = ("A step of the plan failed. Write the steps still needed to reach the objective, in the same JSON "
          "form, numbered from {next_id} on. Done steps keep their results: depend on them by their ids, do not "
          "repeat them. Do not repeat the failed step unchanged; change the approach. At most {most} steps.")


def replan(objective: str, tools: list[str], done: list[tuple[int, str, str]], failed: tuple[int, str, str],
           next_id: int, most: int, error: str | None, *, small: bool) -> list[dict]:
    kept = "\n".join(f"{i}. {g}: {_one_line(r)[:300]}" for i, g, r in done) or "(none)"
    step, goal, why = failed
    if small:
        messages = _messages(PLAN_SMALL.format(least=1, most=min(most, 4)) + f" Number them from {next_id}.",
                             f"Goal: {_one_line(objective)}\nFailed: {_one_line(goal)}", True)
    else:
        messages = _messages(f"{REPLAN.format(next_id=next_id, most=most)} Tools: {', '.join(tools) or 'none'}.",
                             f"{data('objective', objective)}\n{data('done steps', kept)}\n"
                             f"{data('failed step', f'{step}. {goal}: {why}')}", False)
    if error:
        messages.append({"role": "user", "content": REFUSED.format(error=error)})
    return messages


STEP = ("Do this one step of a plan concretely and reply with its result itself (text, list, numbers), not a "
        "description of what you would do. {tool} If the step cannot be done, start your reply with FAILED: "
        "and say why.")


def execute_step(objective: str, goal: str, tool: str | None, needed: list[tuple[str, str]], converging: bool, *,
                 tools: bool, small: bool) -> list[dict]:
    if small:
        return _messages(EXECUTE_SMALL, f"Task: {_one_line(goal)}\n(Part of: {_one_line(objective)})", True)
    use = f"Use the tool {tool} for it, then answer with what it showed." if tool and tools else ""
    inputs = "\n".join(f"- {g}: {_one_line(r)[:600]}" for g, r in needed) or "(none)"
    note = "\n\nBudget note: more than 75% of a budget is spent; keep it short." if converging else ""
    return _messages(STEP.format(tool=use), f"{data('objective', objective)}\n{data('results it needs', inputs)}\n"
                                            f"{data('step', goal)}{note}", False)
