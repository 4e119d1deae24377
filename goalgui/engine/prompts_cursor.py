"""Prompts and schemas of the cursor strategy (seed 002): plan, confirm the plan, work a task.

Text from a person or a model is wrapped as data, as in `prompts`; a task is named to the model
by its number in the plan (1-based), never by an internal goal id.
"""

from __future__ import annotations

from .prompts import SYSTEM, data, operator_said  # noqa: F401 (operator_said: for the cursor)

MAX_TASKS = 6

PLAN = (
    "Break the request into its natural steps: one task per distinct action it names or implies, "
    "typically two to six, in the order they must happen. Each task is one imperative sentence that "
    "can be checked when done. Reply as JSON: {\"tasks\": [\"...\", \"...\"]}."
)
AGAIN = "Your plan restated the whole request as one task. Break this into at least two steps."
CONFIRM = (
    "Review a candidate plan against the original request: is every step needed, is one missing, "
    "is the order right? If it is right reply {\"verdict\": \"APPROVE\"}; otherwise reply with the "
    "corrected plan as {\"tasks\": [\"...\", ...]}."
)
WORK = (
    "You work through a plan one task at a time; only the active task is in scope. Act with the "
    "tools, then settle the active task by calling task_complete with its number, a one-sentence "
    "summary and the evidence (what you checked and what it showed), or task_fail with its number "
    "and the reason it cannot be done. Saying it is done in prose does not settle it. Never redo a "
    "settled task."
)
PLAIN = "Do the task below and reply with the result itself."
RE_ANCHOR = ("Your last round produced nothing new. Stay on the active task: {task}. These are settled; "
             "do not redo them: {settled}.")
NARROW = "The tools {tools} keep failing and are no longer offered for this task."
FORCE_CLOSE = ("No more tools for this task. Settle it now with what you have gathered: reply as JSON "
               "{\"status\": \"complete\" or \"failed\", \"summary\": what was done or why not, "
               "\"evidence\": what the tool results showed}.")

CLOSE_SCHEMA = {"type": "object", "properties": {
    "status": {"type": "string", "enum": ["complete", "failed"]},
    "summary": {"type": "string", "maxLength": 200}, "evidence": {"type": "string", "maxLength": 200}},
    "required": ["status", "summary", "evidence"]}
PLAN_SCHEMA = {"type": "object", "properties": {"tasks": {
    "type": "array", "items": {"type": "string", "maxLength": 200}, "minItems": 1, "maxItems": MAX_TASKS}},
    "required": ["tasks"]}
CONFIRM_SCHEMA = {"type": "object", "properties": {
    "verdict": {"type": "string", "enum": ["APPROVE"]},
    "tasks": {"type": "array", "items": {"type": "string", "maxLength": 200}, "maxItems": MAX_TASKS}}}


def _messages(task: str, user: str) -> list[dict]:
    return [{"role": "system", "content": f"{SYSTEM}\n\n{task}"}, {"role": "user", "content": user}]


def plan(objective: str, again: bool = False) -> list[dict]:
    return _messages(PLAN, data("request", objective) + (f"\n\n{AGAIN}" if again else ""))


def confirm_plan(objective: str, tasks: list[str]) -> list[dict]:
    listed = "\n".join(f"{i}. {t}" for i, t in enumerate(tasks, 1))
    return _messages(CONFIRM, f"{data('request', objective)}\n{data('candidate plan', listed)}")


PLAN_MARKS = {"done": "[x]", "failed": "[!]", "skipped": "[-]", "abandoned": "[-]"}


def plan_mark(status: str, active: bool) -> str:
    """A task's mark in a plan printed as text (the model's prompt, /goal, the terminal)."""
    return "[>]" if active else PLAN_MARKS.get(status, "[ ]")


def plan_lines(tasks: list[tuple[str, str]], active: int | None) -> str:
    """The plan as the model sees it: number, status mark, text."""
    return "\n".join(f"{plan_mark(status, i == active)} {i}. {text}" for i, (text, status) in enumerate(tasks, 1))


def work(objective: str, tasks: list[tuple[str, str]], active: int, settled: list[str], note: str = "",
         *, plain: bool = False) -> list[dict]:
    text = tasks[active - 1][0]
    if plain:  # the directive removed: a plain round
        return _messages(PLAIN, f"{data('request', objective)}\n{data('task', text)}")
    body = (f"{data('request', objective)}\n{data('plan', plan_lines(tasks, active))}\n"
            f"{data('settled tasks', chr(10).join(settled) or '(none yet)')}\n\n"
            f"Active task: {active}. Settle it with task_complete or task_fail (id {active}).")
    return _messages(WORK, body + (f"\n\n{note}" if note else ""))
