"""Goal mode: the model proposes goals through tools, a person confirms, the session drives the run."""

import asyncio
import json

import pytest

from goalgui.engine import ConfirmationAnswer, InputError, ModelReply, RunState, Usage
from goalgui.engine.session import GoalSession

from .models import well_behaved


class ChatModel:
    """Answers chat turns from a queue of replies (text or tool calls); goal work is well behaved."""

    name = "chat"

    def __init__(self, *turns):
        self.turns = list(turns)
        self.requests = []

    async def complete(self, request):
        self.requests.append(request)
        if request.purpose == "chat":
            turn = self.turns.pop(0) if self.turns else "ok"
            if isinstance(turn, dict):
                return ModelReply("", tool_calls=[{"id": "c1", **turn}], usage=Usage(20, 5))
            return ModelReply(turn, usage=Usage(20, 5))
        out = well_behaved(request, width=2)
        return ModelReply(out if isinstance(out, str) else json.dumps(out), usage=Usage(10, 5))


class GatedChatModel(ChatModel):
    """Chat turns (and the wrap-up after the model settles the goal) answer at once; goal work
    waits for the gate, so the goal stays in progress."""

    def __init__(self, gate, *turns):
        super().__init__(*turns)
        self.gate = gate

    async def complete(self, request):
        if request.purpose not in ("chat", "summarize"):
            await self.gate.wait()
        return await super().complete(request)


class Desk:
    def __init__(self, answer):
        self.answer, self.questions = answer, []

    async def __call__(self, request):
        self.questions.append(request)
        return self.answer


def create(objective="Draft the release notes", **extra):
    return {"name": "CreateGoal", "arguments": {"objective": objective, **extra}}


async def test_plain_chat_makes_no_goal_and_hides_update_tools():
    model = ChatModel("Hello! How can I help?")
    session = GoalSession(model)
    reply = await session.send("hi")
    assert reply.text == "Hello! How can I help?" and reply.created is None
    names = [t["name"] for t in model.requests[0].tools]
    assert names == ["CreateGoal", "GetGoal"]


async def test_create_goal_is_confirmed_and_runs_in_the_chosen_mode():
    desk = Desk(ConfirmationAnswer.approve("auto", criteria="notes cover every merged PR"))
    model = ChatModel(create(criteria="all PRs", turn_budget=30), "Started.")
    session = GoalSession(model, confirmer=desk, permission_mode="ask")
    reply = await session.send("please work on the release notes autonomously")
    assert desk.questions[0].kind == "create_goal"
    assert desk.questions[0].proposal["limits"]["turns"] == 30
    run = reply.created
    assert run.record.permission_mode == "auto" and run.record.criteria == "notes cover every merged PR"
    assert await asyncio.wait_for(run._drive_task, 5) is RunState.COMPLETE
    assert [t["name"] for t in session.tools()] == ["CreateGoal", "GetGoal"]  # the goal is finished
    tool_result = json.loads(model.requests[1].messages[-1]["content"])
    assert tool_result["ok"] and "run_id" not in json.dumps(tool_result) and "g1" not in json.dumps(tool_result)
    kinds = [e for e in (run.record.pending_confirmation,)]
    assert kinds == [None]


@pytest.mark.parametrize("answer", [ConfirmationAnswer.decline(), ConfirmationAnswer.abort()])
async def test_declined_or_aborted_means_no_goal(answer):
    model = ChatModel(create(), "Understood, no goal.")
    session = GoalSession(model, confirmer=Desk(answer))
    reply = await session.send("start it")
    assert reply.created is None and session.run is None
    assert answer.outcome.value in reply.tool_results[0]["result"]["error"]


async def test_auto_mode_does_not_ask():
    desk = Desk(ConfirmationAnswer.decline())
    session = GoalSession(ChatModel(create(), "go"), confirmer=desk, permission_mode="auto")
    reply = await session.send("start it")
    assert reply.created is not None and not desk.questions
    reply.created.cancel()


async def test_tools_while_a_goal_exists():
    gate = asyncio.Event()
    model = GatedChatModel(gate, create(), "started", {"name": "GetGoal", "arguments": {}}, "here it is",
                 {"name": "SetGoalBudget", "arguments": {"token_budget": 5000}}, "set",
                 {"name": "UpdateGoal", "arguments": {"status": "paused"}}, "paused",
                 create("Another goal"), "refused")
    session = GoalSession(model, permission_mode="auto")
    run = (await session.send("go")).created
    reply = await session.send("status?")
    assert reply.tool_results[0]["result"]["goal"]["objective"] == "Draft the release notes"
    assert [t["name"] for t in model.requests[-1].tools] == ["CreateGoal", "GetGoal", "UpdateGoal", "SetGoalBudget"]
    await session.send("cap it at 5000 tokens")
    assert run.record.limits.tokens == 5000
    await session.send("pause")
    assert run.state is RunState.PAUSED and run.record.stop_reason == "paused by model"
    reply = await session.send("and another")
    assert "already current" in reply.tool_results[0]["result"]["error"]
    gate.set()
    with pytest.raises(InputError, match="already current"):
        session.create_goal("Something else")
    replaced = session.create_goal("Something else", replace=True)
    assert run.state is RunState.CANCELLED and session.run is replaced
    replaced.cancel()


async def test_bad_objective_from_the_model_is_a_tool_error():
    session = GoalSession(ChatModel(create(""), "sorry"), permission_mode="auto")
    reply = await session.send("go")
    assert "empty" in reply.tool_results[0]["result"]["error"] and session.run is None


async def test_draft_fills_the_write_goal_fields():
    class Author:
        name = "author"

        async def complete(self, request):
            assert request.purpose == "author" and request.schema["required"][0] == "end_state"
            return ModelReply('Here: {"end_state": "notes published", "proof": "page live", '
                              '"boundaries": "docs only", "loop": "one section at a time", '
                              '"stop_rule": "stop if a PR is unclear"}')

    draft = await GoalSession(Author()).draft("write release notes")
    assert draft["end_state"] == "notes published" and draft["stop_rule"].startswith("stop")


@pytest.mark.parametrize("status,state,reason", [
    ("complete", RunState.COMPLETE, None),
    ("blocked", RunState.BLOCKED, "blocked by model: needs the changelog"),
])
async def test_update_goal_completes_or_blocks(status, state, reason):
    gate = asyncio.Event()
    model = GatedChatModel(gate, create(), "started",
                 {"name": "UpdateGoal", "arguments": {"status": status, "reason": "needs the changelog"}}, "done")
    session = GoalSession(model, permission_mode="auto")
    run = (await session.send("go")).created
    await session.send("update")
    assert run.state is state and run.record.stop_reason == reason
    assert all(g.status.value != "running" for g in run.record.goals.values())
    await asyncio.wait_for(run._drive_task, 2)
    assert run.state is state


async def test_an_illegal_status_change_is_a_tool_error_not_a_crash():
    gate = asyncio.Event()
    model = GatedChatModel(gate, create(), "started", {"name": "UpdateGoal", "arguments": {"status": "active"}}, "ok")
    session = GoalSession(model, permission_mode="auto")
    run = (await session.send("go")).created
    reply = await session.send("resume it")
    assert "cannot become active" in reply.tool_results[0]["result"]["error"]
    run.cancel()
    gate.set()


async def test_a_forked_session_keeps_the_conversation_but_not_the_goal():
    """Seed 001: a fork does not inherit the source's goal, and its model is told not to pursue it;
    the source session and its goal go on as they were."""
    gate = asyncio.Event()
    model = GatedChatModel(gate, create(), "started", "Sure, what next?", {"name": "GetGoal", "arguments": {}},
                           "no goal here")
    session = GoalSession(model, permission_mode="auto")
    run = (await session.send("work on the release notes")).created
    assert run.state is RunState.ACTIVE
    fork = session.fork()
    assert fork.history == session.history and fork.history is not session.history
    assert fork.run is None and not fork.has_goal and session.run is run
    await fork.send("something else now")
    system = model.requests[-1].messages[0]["content"]
    assert "forked from another session" in system and "do not pursue it" in system
    assert "Draft the release notes" in system  # named, as data, so the model knows which one
    assert "a goal is active" not in system
    assert [t["name"] for t in model.requests[-1].tools] == ["CreateGoal", "GetGoal"]
    reply = await fork.send("what is the goal?")
    assert reply.tool_results[0]["result"]["goal"] is None
    fork.adopt(run)  # the window offering its current goal: the source's stays with the source
    assert fork.run is None
    assert len(session.history) < len(fork.history)  # the fork's turns are its own
    assert run.state is RunState.ACTIVE  # the source's goal is untouched
    gate.set()
    assert await asyncio.wait_for(run._drive_task, 5) is RunState.COMPLETE


async def test_a_fork_that_continues_the_goal_holds_it():
    gate = asyncio.Event()
    model = GatedChatModel(gate, create(), "started", "carrying on")
    session = GoalSession(model, permission_mode="auto")
    run = (await session.send("work on the release notes")).created
    fork = session.fork(continue_goal=True)
    assert fork.run is run and fork.has_goal and fork.left_behind is None
    await fork.send("how is it going?")
    system = model.requests[-1].messages[0]["content"]
    assert "a goal is active" in system and "forked" not in system
    gate.set()
    assert await asyncio.wait_for(run._drive_task, 5) is RunState.COMPLETE
