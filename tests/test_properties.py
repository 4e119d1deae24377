"""Property test: whatever a model does, a run terminates, stays within the goal cap by at most
one decomposition, and loses no goal."""

import asyncio
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from goalgui.engine import Limits, ModelReply, RateLimited, Run, RunRecord, RunState, Usage

REPLIES = {
    "actionable": st.sampled_from(["YES", "NO", "yes!", "maybe", "", '{"answer": "NO", "reason": "x"}', "NO."]),
    "decompose": st.one_of(
        st.lists(st.text(min_size=0, max_size=30), min_size=0, max_size=10).map(json.dumps),
        st.sampled_from(["not json", "[1, 2]", '{"subgoals": ["a", "b"]}', "[", '["same", "same", "same"]']),
    ),
    "execute": st.sampled_from(["ok", "", "BLOCKED: need input", "a result " * 20]),
    "verify": st.sampled_from(["YES", "NO", "garbage"]),
    "summarize": st.just("summary"),
}


@st.composite
def behaviours(draw):
    """A scripted behaviour: a list of replies per purpose, cycled, plus an optional rate limit."""
    script = {p: draw(st.lists(s, min_size=1, max_size=6)) for p, s in REPLIES.items()}
    tokens = draw(st.integers(min_value=0, max_value=50_000))
    rate_limit_at = draw(st.one_of(st.none(), st.integers(min_value=1, max_value=40)))
    limits = Limits(
        max_depth=draw(st.integers(0, 4)),
        max_goals=draw(st.integers(1, 40)),
        tokens=draw(st.one_of(st.none(), st.integers(1_000, 500_000))),
        turns=draw(st.one_of(st.none(), st.integers(1, 60))),
    )
    return script, tokens, rate_limit_at, limits


class Scripted:
    name = "property"

    def __init__(self, script, tokens, rate_limit_at):
        self.script, self.tokens, self.rate_limit_at = script, tokens, rate_limit_at
        self.counts = {p: 0 for p in script}
        self.calls = 0

    async def complete(self, request):
        self.calls += 1
        if self.calls == self.rate_limit_at:
            raise RateLimited("slow down")
        replies = self.script[request.purpose]
        reply = replies[self.counts[request.purpose] % len(replies)]
        self.counts[request.purpose] += 1
        return ModelReply(reply, usage=Usage(self.tokens, 7))


async def run_to_rest(model, limits):
    run = Run.create("Plan a small project", model, limits=limits)
    events = []
    run.subscribe(events.extend)
    for _ in range(5):  # a rate limit pauses; resume a few times
        state = await asyncio.wait_for(run.drive(), 30)
        if state is not RunState.PAUSED:
            break
        run.resume()
    run.recorder.flush()
    return run, events


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(behaviours())
def test_any_behaviour_terminates_within_limits_and_keeps_every_goal(behaviour):
    script, tokens, rate_limit_at, limits = behaviour
    model = Scripted(script, tokens, rate_limit_at)
    run, events = asyncio.run(run_to_rest(model, limits))
    report = run.report()
    assert run.state in (RunState.COMPLETE, RunState.BLOCKED)
    # the goal cap holds, give or take one decomposition (at most four sub-goals)
    assert report["metrics"]["goals_created"] <= max(limits.max_goals, 1) + 4
    assert report["metrics"]["max_depth_reached"] <= limits.max_depth
    # no goal lost: every goal ever added is in the report, in order, with a final status
    added = [e.goal_id for e in events if e.type == "goal_added"]
    assert [g["id"] for g in report["goals"]] == added
    assert all(g["status"] not in ("running",) for g in report["goals"])
    if run.state is RunState.COMPLETE:
        assert all(g["status"] != "pending" for g in report["goals"])
    assert all(g["attempts"] <= 2 for g in report["goals"])
    # the events alone rebuild the same run
    assert RunRecord.from_events(events).report() == run.record.report()
