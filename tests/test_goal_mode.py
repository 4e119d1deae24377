"""Seed 001's goal mode in every strategy (issue 11, items 1 to 5): the operator's contract and
the goal's state reach the model at turn boundaries only, wrap-ups say what the stop needs, an
operator message reaches a resumed run, and a cancelled goal is dropped from the chat."""

import json

from goalgui.engine import Limits, ModelReply, Run, RunState, Usage
from goalgui.engine.session import GoalSession

from .models import FunctionModel, well_behaved

CONTRACT = ("Proof: MARK-PROOF a file lists them\nBoundaries: MARK-BOUNDS no paid sources\n"
            "Loop: MARK-LOOP one source at a time\nStop rule: MARK-STOP halt at three")


def user_text(request) -> str:
    return "\n".join(m["content"] for m in request.messages if m["role"] == "user")


async def test_the_contract_and_the_goal_state_open_each_turn_and_only_each_turn(journal):
    model = FunctionModel(lambda r: well_behaved(r, width=2))
    run = Run.create("Name two rivers of Europe", model, sink=journal, criteria=CONTRACT,
                     limits=Limits(max_depth=1, tokens=100_000))
    assert await run.drive() is RunState.COMPLETE
    turns = [e for e in journal.events(run.run_id) if e.type in ("turn_started", "model_called")]
    # each turn's first work call (decompose, execute): a verdict (actionable, verify) is judged on its own
    opening, waiting = [], False
    for e in turns:
        if e.type == "turn_started":
            waiting = True
        elif waiting and e.purpose in ("execute", "decompose", "work"):
            opening.append(e)
            waiting = False
    assert len(opening) == run.record.metrics.turns == 3
    for i, call in enumerate(opening):
        text = "\n".join(m["content"] for m in call.messages if m["role"] == "user")
        for marker in ("MARK-PROOF", "MARK-BOUNDS", "MARK-LOOP", "MARK-STOP"):
            assert marker in text, (call.purpose, marker)
        assert "Goal mode:" in text and "must not" not in text and "never override" in text
        assert "Status: active" in text and "budgets used: goals " in text and ", tokens " in text
        assert ("Continue working toward the current goal" in text) == (i > 0)  # the continuation
        assert "planning, summarising, a first draft or part of the work is not completion" in text
    for call in [e for e in turns if e.type == "model_called" and e not in opening]:
        assert "Goal mode:" not in json.dumps(call.messages)  # not every step: the prompt cache holds
    # verification holds each result to the criteria
    verifies = [c for c in model.calls if c.purpose == "verify"]
    assert verifies and all("MARK-BOUNDS" in user_text(c) and "breaks a criterion" in user_text(c) for c in verifies)
    # the operator's contract is a data block
    assert '<data name="completion criteria">\nProof: MARK-PROOF' in "\n".join(
        m["content"] for m in opening[0].messages if m["role"] == "user")


async def test_the_criteria_are_checked_for_length_in_one_line(journal):
    import pytest

    from goalgui.engine import InputError

    with pytest.raises(InputError, match="completion criteria is 4001 characters; the limit is 4000"):
        Run.create("x", FunctionModel(well_behaved), sink=journal, criteria="c" * 4001)


def costly(request):
    """600 tokens a call; the objective is never actionable."""
    return ModelReply("NO too big" if request.purpose == "actionable" else "x", usage=Usage(600, 0))


async def test_a_token_stop_writes_no_wrap_up_and_says_so(journal):
    model = FunctionModel(costly)
    run = Run.create("Plan a picnic", model, sink=journal, limits=Limits(tokens=1000))
    assert await run.drive() is RunState.BLOCKED
    assert "summarize" not in model.purposes()
    assert run.record.summary.startswith("(no wrap-up: the tokens budget is spent")


async def test_a_blocked_wrap_up_explains_the_blocker_once_and_carries_no_budget_cheer(journal):
    model = FunctionModel(lambda r: well_behaved(r, width=3))
    run = Run.create("Plan a picnic for six", model, sink=journal, limits=Limits(max_goals=2, max_depth=1))
    assert await run.drive() is RunState.BLOCKED
    wrap = [c for c in model.calls if c.purpose == "summarize"]
    assert len(wrap) == 1
    system = wrap[0].messages[0]["content"]
    assert "the specific blocker" in system and "what input or change" in system
    assert "Budget note" not in user_text(wrap[0]) and "Metrics:" in user_text(wrap[0])
    # a resume that re-blocks at once (nothing raised) pays no second wrap-up
    run.resume()
    assert await run.drive() is RunState.BLOCKED
    assert [c.purpose for c in model.calls].count("summarize") == 1


async def test_an_operator_message_reaches_the_next_turn_of_a_resumed_run(journal):
    def blocker(request):
        if request.purpose == "execute" and "MARK-ANSWER" not in user_text(request):
            return "BLOCKED: which city should the picnic be in?"
        return well_behaved(request, leaf_depth=0)

    model = FunctionModel(blocker)
    run = Run.create("Plan a picnic", model, sink=journal, limits=Limits(max_depth=0))
    assert await run.drive() is RunState.BLOCKED
    assert run.record.stop_reason.startswith("blocked by model")
    run.resume()
    run.tell("MARK-ANSWER: in Lyon")
    assert await run.drive() is RunState.COMPLETE
    last = [c for c in model.calls if c.purpose == "execute"][-1]
    assert '<data name="operator message">\nMARK-ANSWER: in Lyon\n</data>' in user_text(last)
    kinds = [e.type for e in journal.events(run.run_id)]
    assert "operator_message" in kinds  # journaled: a crash after it keeps it


async def test_the_models_own_complete_gets_a_wrap_up_turn(journal):
    calls = []

    def chat(request):
        calls.append(request.purpose)
        said = [m for m in request.messages if m["role"] == "user"][-1]["content"]
        if request.purpose == "chat" and request.messages[-1]["role"] == "user":
            if said == "make a goal":
                return ModelReply("", tool_calls=[{"id": "1", "name": "CreateGoal", "arguments": {"objective": "Say hi"}}],
                                  usage=Usage(5, 5))
            if said == "finish it":
                return ModelReply("", tool_calls=[{"id": "2", "name": "UpdateGoal",
                                                   "arguments": {"status": "complete", "reason": "said"}}],
                                  usage=Usage(5, 5))
        if request.purpose == "summarize":
            return "WRAP-UP: said hi"
        if request.purpose == "actionable":
            return "NO"
        return "ok"

    session = GoalSession(FunctionModel(chat, delay=0.05), sink=journal, permission_mode="auto")
    await session.send("make a goal")
    run = session.run
    assert run.state is RunState.ACTIVE
    await session.send("finish it")
    assert run.state is RunState.COMPLETE
    assert run.record.summary == "WRAP-UP: said hi" and "summarize" in calls


async def test_a_goal_cancelled_from_the_window_is_dropped_from_the_chat(journal):
    seen = []

    def chat(request):
        seen.append(request.messages[0]["content"])
        if len(seen) == 1:
            return ModelReply("", tool_calls=[{"id": "1", "name": "CreateGoal", "arguments": {"objective": "Say hi"}}],
                              usage=Usage(5, 5))
        return "ok"

    session = GoalSession(FunctionModel(chat), sink=journal, permission_mode="auto")
    await session.send("make a goal")
    session.run.pause("held")
    session.run.cancel()  # the window's Cancel acts on the run, not on the session
    await session.send("what now?")
    assert "was cancelled: ignore earlier reminders of it" in seen[-1]
    assert session.run is None


async def test_a_side_effect_asked_for_by_the_call_that_crossed_the_budget_waits(journal, tmp_path):
    """A write asked for by the reply that spent the token budget does not run: the resume that
    asks again would do it twice (found in review)."""
    from goalgui.tools import default_toolbox

    def writer(request):
        if request.purpose == "actionable":
            return ModelReply("YES", usage=Usage(5, 5))
        if request.purpose == "execute":
            return ModelReply("", tool_calls=[{"id": "w", "name": "write_file",
                                               "arguments": {"path": "log.txt", "content": "x\n"}}], usage=Usage(40, 10))
        return "YES"

    space = tmp_path / "ws"
    run = Run.create("Log one line", FunctionModel(writer), sink=journal, tools=default_toolbox(space),
                     limits=Limits(tokens=40))
    assert await run.drive() is RunState.BLOCKED
    assert run.record.stop_reason.startswith("budget: tokens") and not (space / "log.txt").exists()
    assert run.record.goals[run.record.root_id].actionable is True  # the paid verdict is kept


async def test_a_new_stop_gets_its_own_wrap_up_even_with_no_call_between(journal):
    model = FunctionModel(costly)
    run = Run.create("Plan a picnic", model, sink=journal, limits=Limits(tokens=500))
    assert await run.drive() is RunState.BLOCKED
    assert "tokens budget" in run.record.summary
    run.set_limits(tokens=100_000, turns=1)  # the next stop is another budget, with no model call between
    run.resume()
    assert await run.drive() is RunState.BLOCKED
    assert run.record.stop_reason.startswith("budget: turns")
    assert "tokens budget" not in run.record.summary
