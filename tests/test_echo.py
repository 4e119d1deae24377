"""Results that echo the prompt or repeat one line fail verification without asking the model."""

import pytest

from goalgui.engine import Limits, Run, RunState
from goalgui.engine.parsing import degenerate

from .models import FunctionModel, well_behaved


def test_degenerate_recognises_echoes_and_repetition_but_not_ordinary_text():
    assert degenerate('<data name="budget">\n10,000 tokens\n</data>')
    assert degenerate("Budget: " + ", ".join(["10,000 tokens"] * 30))
    assert degenerate("\n".join(["- Buy balloons"] * 5 + ["- Bake a cake"]))
    assert degenerate("<|im_start|>assistant hello")
    ordinary = ("1. Choose a theme: pirates.\n2. Invite eight children by Friday.\n3. Bake a chocolate cake.\n"
                "4. Plan two games: treasure hunt and musical chairs.\n5. Buy balloons, plates and cups.")
    assert degenerate(ordinary) is None
    assert degenerate("YES") is None
    assert degenerate("") == degenerate("  \n ") == "the output is empty"


async def test_an_echoed_result_fails_verification_and_is_retried_once(journal):
    def model(request):
        if request.purpose == "execute":
            return '<data name="goal">\n' + request.goal.text + "\n</data>"
        if request.purpose == "summarize":
            return "\n".join(["Budget: 10,000 tokens"] * 6)
        return well_behaved(request)

    fake = FunctionModel(model)
    run = Run.create("Plan a party", fake, sink=journal, limits=Limits(max_depth=0))
    assert await run.drive() is RunState.COMPLETE
    root = run.record.goals[run.record.root_id]
    assert root.status.value == "failed" and root.attempts == 2
    assert "markup" in root.verdict
    assert "verify" not in fake.purposes()  # no model was asked to approve the echo
    assert run.record.summary.startswith("(no wrap-up:")


def test_reply_parsing_is_bounded_whatever_the_reply(monkeypatch):
    import json

    from goalgui.engine import parsing
    from goalgui.engine.parsing import Unparseable, string_list, yes_no

    calls = []

    class Counting(json.JSONDecoder):
        def raw_decode(self, s, idx=0):
            calls.append(idx)
            return super().raw_decode(s, idx)

    monkeypatch.setattr(parsing, "_DECODER", Counting())
    for hostile in ("{" * 200_000, "[" * 100_000, "[1] " * 50_000, "x" * 1_000_000):
        for parse in (yes_no, string_list):
            calls.clear()
            with pytest.raises(Unparseable):
                parse(hostile)
            assert len(calls) <= parsing.MAX_STARTS  # not one attempt per opener (quadratic)
    assert yes_no("[1] [2] " * 100 + '{"answer": "YES", "reason": "ok"}')[0] is True  # past the tries, still read
    assert string_list("junk { [ " + '["a", "b"]') == ["a", "b"]
