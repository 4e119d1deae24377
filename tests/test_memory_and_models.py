"""Findings memory, context bundle, reply parsing, and the scripted and Python-plugin models."""

import json

import numpy as np
import pytest

from goalgui.engine import GoalView, InputError, ModelRequest, RateLimited, Run
from goalgui.engine.memory import FindingsMemory, HashingEmbedder
from goalgui.engine.parsing import Unparseable, string_list, yes_no
from goalgui.providers import ScriptedModel, load_model
from goalgui.providers.scripted import ScriptError

from .models import FunctionModel, well_behaved


def test_reuse_only_above_the_high_threshold():
    memory = FindingsMemory()
    memory.save("g1", "£3.99", "Find HelloFresh per-portion price")
    memory.save("g2", "1.6bn", "Find the UK meal-kit market size")
    assert memory.reusable("Find the UK meal-kit market size.").key == "g2"
    assert memory.reusable("Find the US meal-kit market size") is None
    assert memory.reusable("Find Gousto per-portion price") is None
    top = memory.search("Find Gousto per-portion price", k=2)
    assert top[0].key == "g1" and top[0].score < 0.92


def test_the_word_counting_embedder_reuses_only_the_same_goal_text():
    memory = FindingsMemory()
    production = "Delete the production database backups older than 30 days and keep the staging ones"
    staging = "Delete the staging database backups older than 30 days and keep the production ones"
    memory.save("g1", "deleted staging backups", staging)
    memory.save("g2", "login works", "test login")
    found = memory.search(production, k=1)
    assert found[0].key == "g1" and found[0].score >= 0.92  # the words agree; the meaning does not
    assert memory.reusable(production) is None
    assert memory.reusable("test logout") is None
    assert memory.reusable("Test login.").key == "g2"  # the same text, normalised

    class Semantic:  # a real embeddings model: the seed's threshold applies as it stands
        dimension = 512
        embed = HashingEmbedder().embed

    semantic = FindingsMemory(Semantic())
    semantic.save("g1", "deleted staging backups", staging)
    assert semantic.reusable(production).key == "g1"


async def test_a_near_finding_is_shown_to_the_model_not_taken_as_the_answer(journal):
    texts = ["Delete the staging database backups older than 30 days and keep the production ones",
             "Delete the production database backups older than 30 days and keep the staging ones"]

    def model(request):
        if request.purpose == "decompose":
            return texts
        return well_behaved(request)

    fake = FunctionModel(model)
    run = Run.create("Tidy the database backups of both environments", fake, sink=journal)
    await run.drive()
    second = run.record.goals["g3"]
    assert second.text == texts[1] and second.result == f"result for {texts[1]}"  # executed, not reused
    assert "reused" not in second.note
    executes = [c for c in fake.calls if c.purpose == "execute" and c.goal.id == "g3"]
    # the near finding rides along as a related one, for the model to judge
    assert executes and f"[{texts[0]}] result for {texts[0]}" in executes[0].messages[-1]["content"]


def test_memory_grows_over_blocks_and_finds_what_a_brute_force_search_finds(monkeypatch):
    from goalgui.engine import memory as memory_module

    monkeypatch.setattr(memory_module, "BLOCK", 128)  # 300 findings span three blocks
    memory = FindingsMemory(HashingEmbedder(dimension=64))
    tags = [f"Find fact number {i} about topic {i * 7}" for i in range(300)]
    for i, tag in enumerate(tags):
        memory.save(f"g{i}", f"result {i}", tag)
    assert len(memory) == 300 and len(memory._store.blocks) == 3
    assert memory.reusable("Find fact number 123 about topic 861").key == "g123"
    assert memory.reusable("Find fact number 299 about topic 2093").key == "g299"  # in the last block
    every = HashingEmbedder(64).embed(tags)
    for query in ("fact number 17", "topic 1400", "Find fact number 250 about topic"):
        brute = every @ HashingEmbedder(64).embed([query])[0]
        found = memory.search(query, k=3)
        assert np.allclose([f.score for f in found], np.sort(brute)[::-1][:3], atol=1e-5)  # ties may differ
        assert all(np.isclose(brute[int(f.key[1:])], f.score, atol=1e-5) for f in found)
    vectors = HashingEmbedder(64).embed(["a b", ""])
    assert np.allclose(np.linalg.norm(vectors[0]), 1) and not vectors[1].any()


async def test_reused_finding_skips_execution():
    def same_text(request):
        text = request.goal.text
        if request.purpose == "actionable":
            return "NO" if text in ("Write a report", "Compare market shares") else "YES"
        if request.purpose == "decompose":
            if text == "Write a report":
                return ["Find the market size", "Compare market shares"]
            return ["Find the market size.", "Compute the shares"]
        return well_behaved(request)

    model = FunctionModel(same_text)
    run = Run.create("Write a report", model)
    await run.drive()
    goals = {g.text: g for g in run.record.goals.values()}
    executed = [c.goal.text for c in model.calls if c.purpose == "execute"]
    assert executed == ["Find the market size", "Compute the shares"]
    reused = goals["Find the market size."]
    assert "reused finding of g2" in reused.note and reused.result == goals["Find the market size"].result
    assert reused.status.value == "done"


async def test_context_bundle_has_two_ancestors_and_three_latest_siblings():
    model = FunctionModel(lambda r: well_behaved(r, width=4, leaf_depth=2))
    run = Run.create("Write a report", model)
    await run.drive()
    last_leaf = [c for c in model.calls if c.purpose == "execute"][-1]
    context = last_leaf.messages[-1]["content"]
    assert context.count("[Find part 3 of Write a report]") == 1  # its parent
    assert context.count("[Write a report]") == 1  # its grandparent
    assert "Find part 0 of Find part 3" in context and "Find part 2 of Find part 3" in context
    assert len([c for c in model.calls if c.purpose == "execute"]) == 16


def test_reply_parsers_tolerate_text_around_json():
    assert yes_no("YES, easily") == (True, "easily")
    assert yes_no('Sure: {"answer": "NO", "reason": "too big"} thanks') == (False, "too big")
    assert string_list('Here you go:\n["a", "b"]\nDone') == ["a", "b"]
    assert string_list('{"subgoals": ["x"]}') == ["x"]
    for bad in ("maybe", ""):
        with pytest.raises(Unparseable):
            yes_no(bad)
    for bad in ("no list here", "[1, 2]", "[", '{"other": 1}'):
        with pytest.raises(Unparseable):
            string_list(bad)


def request(purpose, text="Find it", depth=1):
    return ModelRequest(purpose, [{"role": "user", "content": "x" * 40}], GoalView("g1", None, depth, text))


async def test_scripted_rules_cycle_and_count_tokens_deterministically():
    model = ScriptedModel({
        "rules": [
            {"purpose": "execute", "match": "special", "reply": {"k": 1}, "usage": [100, 7]},
            {"purpose": "execute", "replies": ["one", "two"]},
            {"purpose": "verify", "error": "rate_limited", "retry_after": 12, "times": 1},
        ],
        "defaults": {"verify": "YES"},
    })
    assert (await model.complete(request("execute", "A special goal"))).text == json.dumps({"k": 1})
    assert (await model.complete(request("execute", "A special goal"))).usage.input_tokens == 100
    texts = [(await model.complete(request("execute"))).text for _ in range(3)]
    assert texts == ["one", "two", "one"]
    usage = (await model.complete(request("execute"))).usage
    assert (usage.input_tokens, usage.output_tokens) == (10, 1)
    with pytest.raises(RateLimited) as caught:
        await model.complete(request("verify"))
    assert caught.value.retry_after == 12
    assert (await model.complete(request("verify"))).text == "YES"


def test_bad_scripts_are_refused_clearly(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ScriptError, match="cannot read script"):
        load_model(f"scripted:{bad}")
    with pytest.raises(ScriptError, match="unknown keys"):
        ScriptedModel({"rules": [{"purpose": "execute", "answer": "x"}]})
    with pytest.raises(ScriptError, match="no shipped script"):
        load_model("scripted:nope")
    with pytest.raises(InputError, match="unknown model spec"):
        load_model("gpt5")


def test_the_rehearsal_ships_in_the_package():
    model, spec = load_model("scripted:rehearsal")
    assert spec == "scripted:rehearsal" and model.name == "rehearsal"


def test_python_plugins_by_module_and_callable(tmp_path, monkeypatch):
    (tmp_path / "plugmod.py").write_text(
        "from goalgui.engine import ModelReply\n"
        "class M:\n"
        "    def __init__(self): self.name = 'custom'\n"
        "    async def complete(self, request): return ModelReply('x')\n"
        "def make(): return M()\n"
        "instance = M()\n"
        "not_a_model = 3\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    for attr in ("M", "make", "instance"):
        model, spec = load_model(f"python:plugmod:{attr}")
        assert model.name == "custom" and spec == f"python:plugmod:{attr}"
    with pytest.raises(InputError, match="not a model|failed"):
        load_model("python:plugmod:not_a_model")
    with pytest.raises(InputError, match="cannot import"):
        load_model("python:no_such_module_here:M")


def test_a_dense_embedder_is_searched_with_the_whole_matrix():
    class Dense:
        dimension = 3

        def embed(self, texts):
            table = {"a": [1, 0, 0], "b": [0, 1, 0], "ab": [0.6, 0.8, 0]}
            return np.array([table[t] for t in texts], dtype=np.float32)

    memory = FindingsMemory(Dense())
    memory.save("g1", "A", "a")
    memory.save("g2", "B", "b")
    hits = memory.search("ab", k=2)
    assert [h.key for h in hits] == ["g2", "g1"] and hits[0].score == pytest.approx(0.8)
    assert memory.reusable("a").key == "g1" and memory.reusable("ab") is None


def test_a_verdict_cut_short_by_max_tokens_still_parses():
    assert yes_no('{ "answer": "NO", "reason": "the list misses a colo') == (False, "")


def test_a_list_cut_short_keeps_its_complete_items():
    assert string_list('{ "subgoals": [ "Find a venue", "Draft the invitat') == ["Find a venue"]
    with pytest.raises(Unparseable):
        string_list('{ "subgoals": [ "Find a ven')
