"""Seed 001's goal injection: what the model is told of the goal at each turn boundary.

A turn is one unit of a strategy's work (`Run.begin_turn`: a goal taken off the stack, a cursor
round). Its first model call carries the goal's state: that the session is in goal mode, the
objective and the operator's contract (completion criteria, proof, boundaries, loop, stop rule)
as data that cannot override the instructions, status and progress, and how to work a turn:
one coherent slice, when to mark the goal complete or blocked and when not. From the second
turn on it is also the continuation prompt ("continue working toward the current goal"). The
calls inside a turn (a verdict, a tool round) are not given it again: the instructions stay
the same from call to call, so a provider's prompt cache keeps them.

The words are the prompt module's (`goal_injection`): the full prompts say all of the above, a
small model's only the contract and the operator's messages (a paragraph of guidance drowns a
135M model's few-shot examples).
"""

from __future__ import annotations

from .record import RunRecord


def view(record: RunRecord, now: float | None = None) -> dict:
    """The goal's state as the injection shows it: no ids, no secrets."""
    m = record.metrics
    budgets = []
    for name, (used, limit) in record.usage(now).items():
        shown = f"{used:,.0f} of {limit:,.0f}" if name != "time" else f"{used:.0f} s of {limit:.0f} s"
        budgets.append(f"{name} {shown} ({100 * used / limit:.0f}%)" if limit else f"{name} {shown}")
    return {
        "objective": record.objective,
        "criteria": record.criteria,
        "status": record.state.value,
        "turn": m.turns,
        "goals": len(record.goals),
        # counted by the record as events apply: this runs every turn, and a pass over 10,000 goals
        # per turn would make a run quadratic
        "settled": record.settled,
        "done": record.done,
        "failed": record.failed,
        "budgets": budgets,
        "messages": record.operator_messages[-3:],
    }


def inject(messages: list[dict], text: str) -> list[dict]:
    """`messages` with the injection at the head of the last user message (the system message,
    the same on every call of a purpose, stays as it was)."""
    if not text:
        return messages
    out = [dict(m) for m in messages]
    for m in reversed(out):
        if m.get("role") == "user":
            m["content"] = f"{text}\n\n{m.get('content') or ''}"
            return out
    return [*out, {"role": "user", "content": text}]
