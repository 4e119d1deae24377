"""Prompts for a small model (the embedded 135M default): short, plain, one worked example each.

The full prompts (`prompts`) wrap every text in tagged data blocks and give rules in prose; a
model of this size echoes the tags back and ignores the rules, so its first run was one goal
whose result was the prompt's own markup. These say one thing per call, show one exchange of the
wanted shape, and give only the text the call needs (the goal, and the objective it belongs to).

Nothing here is a safeguard: the depth limit, the sub-goal cap, restatement dropping, the echo
check, permissions and budgets are all enforced in Python whatever the model replies. The same
functions and schemas as `prompts`, so a strategy takes either module as `run.prompts`.
"""

from __future__ import annotations

import json

from .prompts import subgoals_schema, verdict_schema

PROFILE = "small"

SCHEMAS: dict[str, dict] = {
    "actionable": verdict_schema(80),
    "verify": verdict_schema(80),
    # three at least: a small model's two-way split is mostly the parent said twice
    "decompose": subgoals_schema(3, 4, 80),
}

# The one worked example every purpose shows; its texts are also what a copied reply is checked
# against (`EXAMPLES`), so a reply that hands the example back is not taken for work.
_PARENT = "Plan a picnic in the park"
_LEAF = "Choose food for the picnic"
_STEPS = ["Choose a park and a date", "Choose food for the picnic", "Write an invitation to friends",
          "List games to play"]
_ANSWER = ("- Sandwiches: cheese and tomato, cut in halves\n- Fruit: grapes and apple slices\n"
           "- Drinks: lemonade and water, two bottles each\n- A small chocolate cake for dessert")
_WEAK = "We are planning a picnic in the park."
EXAMPLES = (_ANSWER, _WEAK, *_STEPS)

SHORT = "Keep it very short."


def _safe(text: str) -> str:
    """One line of someone else's text: no line breaks to fake a turn with."""
    return " ".join(text.split())


def _task(goal: str, objective: str) -> str:
    line = f"Task: {_safe(goal)}"
    if _safe(objective) != _safe(goal):
        line += f"\n(Part of: {_safe(objective)})"
    return line


def _exchange(system: str, shots: list[tuple[str, str]], user: str) -> list[dict]:
    messages = [{"role": "system", "content": system}]
    for question, answer in shots:
        messages += [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
    messages.append({"role": "user", "content": user})
    return messages


def _verdict(answer: str, reason: str) -> str:
    return json.dumps({"answer": answer, "reason": reason})


def actionable(objective: str, goal: str, tools: list[str], converging: bool) -> list[dict]:
    return _exchange(
        "Say YES if the task is one small, concrete thing to write, NO if it is a big task with several parts.",
        [(f"Task: {_LEAF}", _verdict("YES", "one list")),
         (f"Task: {_PARENT}", _verdict("NO", "place, food, guests and games"))],
        f"Task: {_safe(goal)}",
    )


def decompose(objective: str, goal: str, context: str, converging: bool, again: bool = False) -> list[dict]:
    return _exchange(
        "You split a task into 3 or 4 smaller steps. Each step starts with a verb and is short.",
        [(f"Task: {_PARENT}", json.dumps({"subgoals": _STEPS}))],
        _task(goal, objective) + ("\nGive steps that differ from the task and from each other." if again else ""),
    )


ROUNDS_SPENT = "No more tools. Answer now with the result."


def execute(objective: str, goal: str, context: str, notes: list[str], converging: bool,
            tools: bool = False) -> list[dict]:
    """(`tools`: a small model is offered none; see the goal stack.)"""
    system = "You write short, concrete answers: a list of 3 to 6 items, each with a detail."
    return _exchange(
        f"{system} {SHORT}" if converging else system,
        [(_task(_LEAF, _PARENT), _ANSWER)],
        _task(goal, objective),
    )


def verify(goal: str, output: str, criteria: str = "") -> list[dict]:
    return _exchange(
        "You check work. Reply YES if the answer does the task, NO if it only talks about the task.",
        [(f"Task: {_LEAF}\nAnswer:\n{_ANSWER}", _verdict("YES", "it names the food")),
         (f"Task: {_LEAF}\nAnswer:\n{_WEAK}", _verdict("NO", "it names no food"))],
        f"Task: {_safe(goal)}\nAnswer:\n{output[:1200]}"
        + (f"\nCriteria: {_safe(criteria)[:300]}" if criteria else ""),
    )


def summarize(objective: str, state: str, reason: str | None, lines: list[str], metrics: str) -> list[dict]:
    why = f" ({reason})" if reason else ""
    results = "\n".join(line[:160] for line in lines[:16])
    task = ("You write a short wrap-up of blocked work: what was done, what stops it, and what is needed."
            if state == "blocked" else
            "You write a short wrap-up of finished work: two or three sentences on what was done and what is missing.")
    return _exchange(
        task,
        [],
        f"Objective: {_safe(objective)}\nResults:\n{results}\nThe run is {state}{why}. Write the wrap-up.",
    )


def goal_injection(view: dict) -> str:
    """The operator's contract and messages only: a paragraph of guidance drowns this model's
    few-shot examples (see `goal_mode`)."""
    lines = [f"Criteria: {_safe(view['criteria'])[:400]}"] if view["criteria"] else []
    lines += [f"Operator: {_safe(text)[:300]}" for text in view["messages"][-2:]]
    return "\n".join(lines)
