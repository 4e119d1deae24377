"""The HTTP providers against a real server on loopback speaking each wire format, and every fault."""

import asyncio
import email.utils
import json
import time

import pytest

from goalgui.engine import (
    AuthenticationFailed,
    BadResponse,
    GoalView,
    Limits,
    ModelRequest,
    ProviderUnavailable,
    RateLimited,
    Run,
    RunState,
)
from goalgui.providers.anthropic import AnthropicModel
from goalgui.providers.http import backoff
from goalgui.providers.ollama import OllamaModel
from goalgui.providers.openai import OpenAIModel
from goalgui.settings import Profile

from .httpserver import ScriptedServer, dead_port_url

KEY = "sk-test-PLANTED-0123456789"


def openai_reply(text="", calls=None, usage=(11, 3)):
    message = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [{"id": f"call_{i}", "type": "function",
                                  "function": {"name": n, "arguments": json.dumps(a)}} for i, (n, a) in enumerate(calls)]
    return {"id": "x", "model": "gpt-test", "choices": [{"index": 0, "message": message}],
            "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1]}}


def anthropic_reply(text="", calls=None, usage=(11, 3)):
    content = [{"type": "text", "text": text}] if text else []
    content += [{"type": "tool_use", "id": f"tu_{i}", "name": n, "input": a} for i, (n, a) in enumerate(calls or [])]
    return {"id": "m", "model": "claude-test", "content": content,
            "usage": {"input_tokens": usage[0], "output_tokens": usage[1]}}


def ollama_reply(text="", calls=None, usage=(11, 3)):
    message = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [{"function": {"name": n, "arguments": a}} for n, a in calls]
    return {"model": "llama-test", "message": message, "done": True,
            "prompt_eval_count": usage[0], "eval_count": usage[1]}


PROVIDERS = {
    "openai": (OpenAIModel, openai_reply, "/chat/completions"),
    "anthropic": (AnthropicModel, anthropic_reply, "/v1/messages"),
    "ollama": (OllamaModel, ollama_reply, "/api/chat"),
}


class Sleeps(list):
    async def __call__(self, delay):
        self.append(delay)


def make(kind, url, *, key=KEY, read_timeout=5.0, structured="auto"):
    cls = PROVIDERS[kind][0]
    profile = Profile(name="test", kind=kind, base_url=url, model="m", read_timeout=read_timeout,
                      connect_timeout=1.0, structured_output=structured).validated()
    sleeps = Sleeps()
    return cls(profile, key, sleep=sleeps, rng=lambda: 0.5), sleeps


def request(purpose="execute", *, schema=None, tools=None, deadline=None):
    return ModelRequest(purpose, [{"role": "system", "content": "sys"}, {"role": "user", "content": "hello"}],
                        GoalView("g1", None, 0, "Say hello"), schema=schema, tools=tools, max_tokens=50,
                        deadline=deadline)


def by_purpose(kind):
    """A server-side model: answers each engine purpose, found from the fixed instructions."""
    reply = PROVIDERS[kind][1]

    def answer(path, body):
        system = body.get("system") or body["messages"][0]["content"]
        if "Judge whether" in system:
            text = "YES"
        elif "Break the parent" in system:
            text = '["Find a", "Find b"]'
        elif "Decide whether" in system:
            text = "YES"
        elif "Complete the goal" in system:
            text = "a result"
        else:
            text = "summary"
        return ("reply", 200, reply(text))

    return answer


@pytest.mark.parametrize("kind", PROVIDERS)
async def test_normal_reply_headers_and_usage(kind):
    with ScriptedServer() as server:
        server.actions.append(("reply", 200, PROVIDERS[kind][1]("Hello there")))
        model, _ = make(kind, server.url)
        reply = await model.complete(request())
        await model.aclose()
    assert reply.text == "Hello there"
    assert (reply.usage.input_tokens, reply.usage.output_tokens, reply.usage.estimated) == (11, 3, False)
    assert reply.model.endswith("-test")
    sent = server.requests[0]
    assert sent["path"] == PROVIDERS[kind][2] and sent["body"]["model"] == "m"
    headers = {k.lower(): v for k, v in sent["headers"].items()}
    if kind == "openai":
        assert headers["authorization"] == f"Bearer {KEY}"
    elif kind == "anthropic":
        assert headers["x-api-key"] == KEY and headers["anthropic-version"] == "2023-06-01"
        assert sent["body"]["system"] == "sys" and sent["body"]["messages"] == [{"role": "user", "content": "hello"}]
    else:
        assert "authorization" not in headers and sent["body"]["stream"] is False
    assert KEY not in repr(model)


TOOLS = [{"name": "CreateGoal", "description": "start a goal",
          "parameters": {"type": "object", "properties": {"objective": {"type": "string"}}}}]


@pytest.mark.parametrize("kind", PROVIDERS)
async def test_tool_calls_both_ways(kind):
    with ScriptedServer() as server:
        server.actions.append(("reply", 200, PROVIDERS[kind][1]("", calls=[("CreateGoal", {"objective": "x"})])))
        model, _ = make(kind, server.url)
        reply = await model.complete(request("chat", tools=TOOLS))
        await model.aclose()
    assert [(c["name"], c["arguments"]) for c in reply.tool_calls] == [("CreateGoal", {"objective": "x"})]
    tools = server.requests[0]["body"]["tools"]
    if kind == "anthropic":
        assert tools[0]["name"] == "CreateGoal" and "input_schema" in tools[0]
    else:
        assert tools[0]["type"] == "function" and tools[0]["function"]["name"] == "CreateGoal"


SCHEMA = {"type": "object", "properties": {"answer": {"type": "string", "enum": ["YES", "NO"]}},
          "required": ["answer"]}


@pytest.mark.parametrize("kind", PROVIDERS)
async def test_structured_output(kind):
    with ScriptedServer() as server:
        if kind == "anthropic":
            server.actions.append(("reply", 200, anthropic_reply(calls=[("reply", {"answer": "NO"})])))
        else:
            server.actions.append(("reply", 200, PROVIDERS[kind][1]('{"answer": "NO"}')))
        model, _ = make(kind, server.url)
        reply = await model.complete(request("verify", schema=SCHEMA))
        await model.aclose()
    assert json.loads(reply.text) == {"answer": "NO"}
    body = server.requests[0]["body"]
    if kind == "openai":
        assert body["response_format"]["type"] == "json_schema"
        assert body["response_format"]["json_schema"]["schema"] == SCHEMA
    elif kind == "anthropic":
        assert body["tool_choice"] == {"type": "tool", "name": "reply"} and body["tools"][0]["input_schema"] == SCHEMA
    else:
        assert body["format"] == SCHEMA


async def test_a_server_that_refuses_json_schema_gets_json_object_from_then_on():
    with ScriptedServer() as server:
        server.actions += [("reply", 500, {"error": {"message": "Unrecognized response_format type"}}),
                           ("reply", 200, openai_reply('{"answer": "YES"}')),
                           ("reply", 200, openai_reply('{"answer": "NO"}'))]
        model, sleeps = make("openai", server.url)
        first = await model.complete(request("verify", schema=SCHEMA))
        second = await model.complete(request("verify", schema=SCHEMA))
        await model.aclose()
    assert json.loads(first.text)["answer"] == "YES" and json.loads(second.text)["answer"] == "NO"
    formats = [r["body"]["response_format"]["type"] for r in server.requests]
    assert formats == ["json_schema", "json_object", "json_object"]
    assert server.requests[1]["body"]["response_format"]["schema"] == SCHEMA and not sleeps


BOUNDED = [{"name": "write_file", "description": "Write a file.", "parameters": {
    "type": "object", "properties": {"path": {"type": "string", "maxLength": 4096, "description": "where"},
                                     "content": {"type": "string", "maxLength": 200_000}},
    "required": ["path", "content"], "additionalProperties": False}},
    {"name": "read_file", "description": "Read a file.", "parameters": {
        "type": "object", "properties": {"path": {"type": "string", "maxLength": 4096}}, "required": ["path"]}}]


def tool_request(choice):
    return ModelRequest("work", [{"role": "user", "content": "make it"},
                                 {"role": "assistant", "content": "", "tool_calls": [
                                     {"id": "c1", "name": "read_file", "arguments": {"path": "a"}}]},
                                 {"role": "tool", "tool_call_id": "c1", "content": "no file"}],
                        GoalView("g2", "g1", 1, "make it"), tools=BOUNDED, max_tokens=50, tool_choice=choice)


@pytest.mark.parametrize("kind", PROVIDERS)
async def test_a_named_tool_choice_reaches_each_wire_format(kind):
    with ScriptedServer() as server:
        server.actions.append(("reply", 200, PROVIDERS[kind][1]("", calls=[("write_file", {"path": "a", "content": "b"})])))
        model, _ = make(kind, server.url)
        reply = await model.complete(tool_request("write_file"))
        await model.aclose()
    assert reply.tool_calls[0]["name"] == "write_file"
    body = server.requests[0]["body"]
    if kind == "openai":
        assert body["tool_choice"] == {"type": "function", "function": {"name": "write_file"}}
        # the prior call's turn carries "" (llama-cpp-python's server refuses a null content)
        assert body["messages"][1]["content"] == "" and body["messages"][1]["tool_calls"][0]["id"] == "c1"
        # bounds left out (llama.cpp's grammar builder overflows on them), descriptions kept
        params = body["tools"][0]["function"]["parameters"]
        assert params["properties"]["path"] == {"type": "string", "description": "where"}
        assert params["required"] == ["path", "content"] and "maxLength" not in json.dumps(body["tools"])
    elif kind == "anthropic":
        assert body["tool_choice"] == {"type": "tool", "name": "write_file"}
    else:  # Ollama has no tool_choice: the offer alone, its schema without bounds too
        assert "tool_choice" not in body and "maxLength" not in json.dumps(body["tools"])


async def twice_required(error: dict):
    """Two requests that require a tool call, against a server whose first answer is a 500 with
    `error`, then tool calls: (replies, the requests it saw, the backoff sleeps)."""
    with ScriptedServer() as server:
        server.actions += [("reply", 500, {"error": error}),
                           ("reply", 200, openai_reply("", calls=[("read_file", {"path": "a"})])),
                           ("reply", 200, openai_reply("", calls=[("read_file", {"path": "b"})]))]
        model, sleeps = make("openai", server.url)
        replies = [await model.complete(tool_request("required")) for _ in range(2)]
        await model.aclose()
    return replies, server.requests, sleeps


async def test_a_server_that_refuses_a_required_tool_call_is_asked_with_auto_from_then_on():
    """llama-cpp-python's function-calling server answers tool_choice "required" with HTTP 500."""
    # its failed assertion, as that server words it: no message at all
    (first, second), requests, sleeps = await twice_required({"message": "", "type": "internal_server_error"})
    assert first.tool_calls[0]["arguments"] == {"path": "a"} and second.tool_calls[0]["arguments"] == {"path": "b"}
    assert [r["body"]["tool_choice"] for r in requests] == ["required", "auto", "auto"] and not sleeps


async def test_a_transient_500_does_not_turn_required_tool_calls_off():
    _replies, requests, sleeps = await twice_required({"message": "upstream overloaded", "type": "server_error"})
    assert [r["body"]["tool_choice"] for r in requests] == ["required"] * 3 and len(sleeps) == 1


def http_date(seconds_from_now):
    return email.utils.formatdate(time.time() + seconds_from_now, usegmt=True)


FAULTS = {
    # name: (actions, error class or None, tries, reason prefix)
    "429 seconds": ([("reply", 429, {"error": "slow down"}, {"retry-after": "7"})], RateLimited, 1, "rate limited"),
    "429 date": (["429 in 30 s"], RateLimited, 1, "rate limited"),
    "500": ([("reply", 500, {"error": "boom"})] * 3, ProviderUnavailable, 3, "provider unavailable"),
    "503 then ok": ([("reply", 503, {"error": "busy"}), "ok"], None, 2, None),
    "read timeout": ([("sleep", 1.0, "ok")] * 3, ProviderUnavailable, 3, "provider unavailable"),
    "refused": ([], ProviderUnavailable, 3, "provider unavailable"),
    "reset mid-body": ([("reset",)] * 3, ProviderUnavailable, 3, "provider unavailable"),
    "200 not JSON": ([("reply", 200, b"<html>gateway</html>")], BadResponse, 1, "bad response"),
    "401": ([("reply", 401, {"error": {"message": "invalid x-api-key"}})], AuthenticationFailed, 1,
            "authentication failed"),
}


def _resolve(actions, kind, ok=None):
    ok = ok or ("reply", 200, PROVIDERS[kind][1]("fine"))
    out = []
    for a in actions:
        if a == "ok":
            out.append(ok)
        elif a == "429 in 30 s":  # the date is made when the test runs, not when it is collected
            out.append(("reply", 429, {"error": "slow down"}, {"retry-after": http_date(30)}))
        elif a[0] == "sleep":
            out.append(("sleep", a[1], ok))
        else:
            out.append(a)
    return out


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("kind", PROVIDERS)
async def test_faults_map_to_the_engine_errors(kind, fault):
    actions, error, tries, _reason = FAULTS[fault]
    with ScriptedServer() as server:
        server.actions += _resolve(actions, kind)
        url = dead_port_url() if fault == "refused" else server.url
        model, sleeps = make(kind, url, read_timeout=0.3)
        if error is None:
            reply = await model.complete(request())
            assert reply.text == "fine"
        else:
            with pytest.raises(error) as caught:
                await model.complete(request())
            message = str(caught.value)
            assert KEY not in message
            if fault == "429 seconds":
                assert caught.value.retry_after == 7
            if fault == "429 date":
                assert 25 <= caught.value.retry_after <= 31
            if fault == "401":
                assert "profile 'test'" in message
        await model.aclose()
    assert model.attempts == tries
    assert sleeps == [backoff(i, lambda: 0.5) for i in range(tries - 1)]


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("kind", PROVIDERS)
async def test_a_fault_parks_the_run_paused_and_it_resumes(kind, fault):
    actions, error, _tries, reason = FAULTS[fault]
    with ScriptedServer() as server:
        server.default = by_purpose(kind)
        server.actions += _resolve(actions, kind, ok=by_purpose(kind))
        url = dead_port_url() if fault == "refused" else server.url
        # a fixed structured-output form, so a fault is not taken for a refused response_format
        model, _ = make(kind, url, read_timeout=0.3, structured="json_schema")
        run = Run.create("Say hello to the team", model, model_spec=f"{kind}:test")
        state = await run.drive()
        if error is None:
            assert state is RunState.COMPLETE
        else:
            assert state is RunState.PAUSED and run.record.stop_reason.startswith(reason)
            assert KEY not in run.record.stop_reason
            if fault == "refused":  # the provider comes back at the same address
                model.profile.base_url = server.url
                await model.aclose()
            run.resume()
            assert await run.drive() is RunState.COMPLETE
        await model.aclose()
    report = run.report()
    assert report["outcome"] == "done"
    assert report["metrics"]["tokens_estimated"] == 0  # every count came from the provider's usage
    assert report["metrics"]["tokens_by_purpose"]["execute"] == 14  # one execution: 11 in + 3 out


async def test_ollama_error_line_mid_stream_with_status_200_is_an_error():
    body = (json.dumps(ollama_reply("par")) + "\n" + json.dumps({"error": "model runner crashed"}) + "\n").encode()
    with ScriptedServer() as server:
        server.actions += [("reply", 200, body)] * 3
        model, _ = make("ollama", server.url)
        with pytest.raises(ProviderUnavailable, match="model runner crashed"):
            await model.complete(request())
        await model.aclose()
    assert model.attempts == 3


async def test_ollama_ndjson_stream_is_merged():
    lines = [{"model": "l", "message": {"role": "assistant", "content": "Hel"}, "done": False},
             {"model": "l", "message": {"role": "assistant", "content": "lo"}, "done": True,
              "prompt_eval_count": 4, "eval_count": 2}]
    with ScriptedServer() as server:
        server.actions.append(("reply", 200, "\n".join(json.dumps(x) for x in lines).encode()))
        model, _ = make("ollama", server.url)
        reply = await model.complete(request())
        await model.aclose()
    assert reply.text == "Hello" and reply.usage.output_tokens == 2


async def test_retries_never_go_past_the_deadline():
    with ScriptedServer() as server:
        server.actions += [("reply", 500, {"error": "boom"})] * 3
        model, sleeps = make("openai", server.url)
        with pytest.raises(ProviderUnavailable):
            await model.complete(request(deadline=time.monotonic() + 0.3))  # the first backoff is 0.44 s
        await model.aclose()
    assert model.attempts == 1 and not sleeps


def test_backoff_matches_the_official_sdks():
    assert [backoff(n, lambda: 0.0) for n in range(6)] == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]
    assert backoff(0, lambda: 1.0) == 0.375  # 25% jitter at most


def embedding_for(text):
    """The server's embeddings: texts about the market size point one way, the rest another."""
    return [1.0, 0.0, 0.0] if "market size" in text.lower() else [0.0, 1.0, 0.1 * len(text) % 1]


@pytest.mark.parametrize("kind", ["openai", "ollama"])
async def test_the_findings_memory_uses_the_providers_embeddings(kind):
    def answer(path, body):
        if path.endswith("embeddings") or path.endswith("/embed"):
            vectors = [embedding_for(t) for t in body["input"]]
            if kind == "openai":
                return ("reply", 200, {"data": [{"index": i, "embedding": v} for i, v in enumerate(vectors)]})
            return ("reply", 200, {"embeddings": vectors})
        system = body["messages"][0]["content"]
        if "Judge whether" in system:
            goal = body["messages"][1]["content"]
            text = "NO" if "Write a report" in goal.split("name=\"goal\"")[1][:40] else "YES"
        elif "Break the parent" in system:
            text = '["Find the UK market size", "Compute the MARKET SIZE in pounds"]'
        elif "Decide whether" in system:
            text = "YES"
        else:
            text = "1.6bn"
        return ("reply", 200, PROVIDERS[kind][1](text))

    with ScriptedServer() as server:
        server.default = answer
        model, _ = make(kind, server.url)
        model.profile.embeddings_model = "embedder-1"
        run = Run.create("Write a report", model, embedder=model.embedder())
        assert await run.drive() is RunState.COMPLETE
        await model.aclose()
    goals = list(run.record.goals.values())
    assert "reused finding of g2" in goals[2].note  # different words, same meaning to the embedder
    executes = [r for r in server.requests if "messages" in r["body"]
                and "Complete the goal" in r["body"]["messages"][0]["content"]]
    assert len(executes) == 1
    embeds = [r for r in server.requests if "embed" in r["path"]]
    assert embeds and all(r["body"]["model"] == "embedder-1" for r in embeds)


async def test_restored_findings_are_embedded_in_one_batch():
    from goalgui.engine.memory import FindingsMemory

    class Counting:
        dimension = None

        def __init__(self):
            self.batches = []

        async def aembed(self, texts):
            self.batches.append(list(texts))
            return [embedding_for(t) for t in texts]

    embedder = Counting()
    memory = FindingsMemory(embedder)
    for i, tag in enumerate(["Find the market size", "List rivals", "Draft a memo"]):
        memory.save(f"g{i}", f"result {i}", tag)
    assert len(memory) == 0
    await memory.prepare(["Compute the market size"])
    assert embedder.batches == [["Find the market size", "List rivals", "Draft a memo", "Compute the market size"]]
    assert len(memory) == 3 and memory.reusable("Compute the market size").key == "g0"
