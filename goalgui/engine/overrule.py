"""The operator overrules the model on a goal (issue 14): five actions, each one journaled event.

- split: the goal is not actionable: it is decomposed when next taken up (with the operator's own
  sub-goals, added now, if given);
- do: the goal is executed as it is, without asking whether to split it;
- accept: the goal's result is taken as done, whatever verification said;
- redo: the goal is executed again, the operator's note in its context;
- edit: the text of a goal not worked on yet (pending, or waiting on a budget) is changed.

A settled goal that is split, done or redone is pending again, and so are its settled ancestors
(they are settled again from their children). Each overrule is a `GoalOverruled` event (the action,
the note, an edited text) followed by the ordinary goal changes it makes, so a replay, a restore
after a crash and a resume all see the same tree, and the journal's projections need nothing new
but the text of an edit; what it then costs is spent under the run's budgets like any work.

The goal stack honours all five. The other strategies take a goal that is pending again up in their
own way, and a redo's note reaches the model in each one's prompt (`prompts.operator_said`). A
split is the goal stack's notion: the task loop, whose tasks are one flat queue, takes the
operator's tasks into the queue in place of the one split (`TaskLoop.split_by_operator`); a plan's
step and a cursor's task are not split (edit a pending one, or redo it with a note).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import events as ev
from .lifecycle import InputError, RunState, validate_text
from .record import SETTLED, GoalStatus

if TYPE_CHECKING:
    from .record import RunRecord

ACTIONS = ("split", "do", "accept", "redo", "edit")
OPERATOR = "operator"  # the facts key that records the last overrule on a goal


def check(record: RunRecord, goal_id: str, action: str, note: str, text: str, subgoals: list[str]) -> tuple:
    """The overrule, validated against the run as it is: (goal, note, text, subgoals) or InputError."""
    if action not in ACTIONS:
        raise InputError(f"the action must be one of {', '.join(ACTIONS)}")
    if record.state.final:
        raise InputError(f"run {record.run_id} is {record.state.value}: fork it to work on it again")
    goal = record.goals.get(goal_id)
    if goal is None:
        raise InputError(f"no goal {goal_id!r} in run {record.run_id}")
    note = validate_text(note, "note", empty_ok=action != "redo") if note or action == "redo" else ""
    if action == "edit":
        if goal.status not in (GoalStatus.PENDING, GoalStatus.ABANDONED):  # abandoned: waiting on a budget
            raise InputError(f"goal {goal_id} is {goal.status.value}: only a pending goal's text can be edited")
        text = validate_text(text, "text", empty_ok=False)
    if action in ("split", "do", "redo") and goal.children:
        raise InputError(f"goal {goal_id} has sub-goals already: {action} applies to a goal not split")
    if action == "accept" and not goal.result:
        raise InputError(f"goal {goal_id} has no result to accept")
    if action == "accept" and goal.status is GoalStatus.DONE and goal.verdict.upper().startswith("YES"):
        raise InputError(f"goal {goal_id} is done and verified already")
    subgoals = [validate_text(s, "sub-goal", empty_ok=False) for s in subgoals] if action == "split" else []
    if action == "split" and record.strategy in ("plan", "cursor"):
        what = "a plan's step" if record.strategy == "plan" else "a task of the cursor"
        raise InputError(f"{what} is not split: edit it while it is pending, or redo it with a note")
    if action == "split" and record.strategy == "task-loop" and not subgoals:
        raise InputError("the task loop does not split a task itself: give the tasks to queue in its place "
                         "(--subgoal TEXT, once per task)")
    room = record.limits.max_goals - record.metrics.goals_created
    if len(subgoals) > room:
        raise InputError(f"the goal budget has room for {room} more goal(s), not {len(subgoals)}")
    if record.state is RunState.ACTIVE and goal.status is GoalStatus.RUNNING and action == "edit":
        raise InputError(f"goal {goal_id} is running: pause or wait to edit it")
    return goal, note, text, subgoals


class Overrules:
    """A mixin of `Run`: `overrule` validates, stops the step working on the goal, journals the
    event and its changes, adds the operator's sub-goals and rebuilds the strategy's state."""

    def overrule(self, goal_id: str, action: str, *, note: str = "", text: str = "",
                 subgoals: list[str] | tuple = ()) -> None:
        goal, note, text, subgoals = check(self.record, goal_id, action, note, text, list(subgoals))
        if goal.status is GoalStatus.RUNNING or getattr(self.strategy, "current_goal_id", None) == goal_id:
            self._cancel_step()  # its work is not wanted as it was: the goal is taken up again
            self._settle_running()
        self.emit(ev.GoalOverruled, goal_id=goal_id, action=action, note=note, text=text)
        said = f"{action} by the operator" + (f": {note}" if note else "")
        changes: dict = {"note": f"{goal.note}; {said}" if goal.note else said, "facts": {OPERATOR: action}}
        if action == "accept":
            changes.update(status=GoalStatus.DONE, verdict="accepted by the operator")
        elif action != "edit":
            changes["actionable"] = action != "split"
            if action == "redo":
                changes.update(result="", verdict="", facts={OPERATOR: action, "operator_note": note})
            if goal.status in SETTLED:
                changes["status"] = GoalStatus.PENDING
        self.set_goal(goal, **changes)
        if action == "accept":
            self.settle_parents(goal)
        elif action != "edit" and goal.status is GoalStatus.PENDING:
            parent = self.record.goals.get(goal.parent_id) if goal.parent_id else None
            while parent is not None:  # settled again from their children
                if parent.status in SETTLED:
                    self.set_goal(parent, status=GoalStatus.PENDING)
                parent = self.record.goals.get(parent.parent_id) if parent.parent_id else None
        split_by_operator = getattr(self.strategy, "split_by_operator", None)
        if subgoals and split_by_operator is not None:
            split_by_operator(goal, subgoals)  # the strategy's own way (the task loop's queue)
        else:
            for sub in subgoals:
                self.add_goal(goal, sub)
        self.strategy.rebuild()
        self.recorder.flush()
