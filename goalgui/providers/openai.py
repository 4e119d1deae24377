"""OpenAI-compatible chat completions: OpenAI, llama.cpp's server, vLLM, LM Studio, OpenRouter."""

from __future__ import annotations

import json
from typing import Any

import httpx

from ..engine.model import BadResponse, ModelReply, ModelRequest, Usage
from .http import HttpModel
from .schemas import plain_schema


def tool_spec(tool: dict) -> dict:
    """A tool as chat completions name it; its schema without bounds (see `plain_schema`)."""
    return {"type": "function", "function": {
        "name": tool["name"], "description": tool.get("description", ""),
        "parameters": plain_schema(tool.get("parameters") or {"type": "object", "properties": {}},
                                   descriptions=True)}}


def chat_messages(messages: list[dict]) -> list[dict]:
    """The engine's messages in the chat-completions form (tool calls as functions)."""
    out = []
    for m in messages:
        role = m.get("role")
        if role == "assistant" and m.get("tool_calls"):
            # "" rather than null: llama-cpp-python's server refuses a null content (HTTP 500)
            out.append({"role": "assistant", "content": m.get("content") or "", "tool_calls": [
                {"id": c.get("id", ""), "type": "function",
                 "function": {"name": c["name"], "arguments": json.dumps(c.get("arguments", {}))}}
                for c in m["tool_calls"]]})
        elif role == "tool":
            out.append({"role": "tool", "tool_call_id": m.get("tool_call_id", ""), "content": m.get("content", "")})
        else:
            out.append({"role": role, "content": m.get("content", "")})
    return out


def _refuses_required(response: httpx.Response) -> bool:
    """Whether a server refused tool_choice "required" itself, not failed for another cause (a
    transient 500 is retried as it was asked): a 400/422 naming tool_choice, or the bare
    internal_server_error with no message that llama-cpp-python's failed assertion answers."""
    if response.status_code in (400, 422):
        return "tool_choice" in response.text[:4000]
    if response.status_code != 500:
        return False
    try:
        error = response.json().get("error")
    except (ValueError, AttributeError):
        return False
    return isinstance(error, dict) and not error.get("message") and error.get("type") == "internal_server_error"


class OpenAIModel(HttpModel):
    """POST /chat/completions; structured replies through response_format where the server takes it."""

    kind = "openai"
    path = "/chat/completions"
    embeddings_path = "/embeddings"

    def embeddings_parse(self, data: Any) -> list[list[float]]:
        return [item["embedding"] for item in sorted(data["data"], key=lambda item: item.get("index", 0))]

    def __init__(self, profile, key, **kwargs):
        super().__init__(profile, key, **kwargs)
        mode = profile.structured_output
        self._structured = "json_schema" if mode == "auto" else mode
        self._may_fall_back = mode == "auto"
        # "required" forces a tool call (OpenAI, vLLM); llama-cpp-python's function-calling server
        # takes only "auto" or a named function and answers "required" with HTTP 500: asked once,
        # then "auto" from there on
        self._tool_choice_required = True

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._key}"} if self._key else {}

    def body(self, request: ModelRequest) -> dict:
        body: dict[str, Any] = {"model": self.profile.model, "messages": chat_messages(request.messages)}
        if request.max_tokens:
            body["max_tokens"] = request.max_tokens
        if request.tools:
            body["tools"] = [tool_spec(t) for t in request.tools]
            # said outright: llama-cpp-python's server shows the model no tools without it
            choice = request.tool_choice
            if choice not in ("auto", "required") and any(t["name"] == choice for t in request.tools):
                body["tool_choice"] = {"type": "function", "function": {"name": choice}}
            else:
                body["tool_choice"] = "required" if choice == "required" and self._tool_choice_required else "auto"
        if request.schema is not None:
            body.update(self._format(request.schema, self._structured))
        return body

    @staticmethod
    def _format(schema: dict, how: str) -> dict:
        if how == "json_schema":
            return {"response_format": {"type": "json_schema",
                                        "json_schema": {"name": "reply", "schema": schema}}}
        if how == "json_object":  # llama.cpp's server: the schema rides along and becomes a grammar
            return {"response_format": {"type": "json_object", "schema": schema}}
        return {}

    def rejected_format(self, response: httpx.Response, body: dict) -> dict | None:
        """llama.cpp's server answers json_schema and tool_choice=required with HTTP 500; others
        with 400. Fall back once for each, and remember."""
        if body.get("tool_choice") == "required" and _refuses_required(response):
            self._tool_choice_required = False
            return {**body, "tool_choice": "auto"}
        fmt = body.get("response_format") or {}
        if not self._may_fall_back or fmt.get("type") != "json_schema" or response.status_code not in (400, 422, 500):
            return None
        self._may_fall_back = False
        self._structured = "json_object"
        schema = fmt["json_schema"]["schema"]
        return {**{k: v for k, v in body.items() if k != "response_format"}, **self._format(schema, "json_object")}

    def parse(self, data: Any, request: ModelRequest) -> ModelReply:
        if not isinstance(data, dict) or not data.get("choices"):
            raise BadResponse(f"{self.name}: the reply has no choices")
        message = data["choices"][0]["message"]
        calls = []
        for call in message.get("tool_calls") or []:
            fn = call["function"]
            args = fn.get("arguments") or "{}"
            try:
                args = json.loads(args) if isinstance(args, str) else args
            except json.JSONDecodeError:  # the model's mistake, told to it as the call's result
                calls.append({"id": call.get("id", ""), "name": fn.get("name", ""), "arguments": {},
                              "invalid": f"the arguments are not JSON: {str(args)[:200]!r}"})
                continue
            calls.append({"id": call.get("id", ""), "name": fn["name"], "arguments": args})
        usage = data.get("usage") or {}
        return ModelReply(
            text=message.get("content") or "",
            tool_calls=calls,
            usage=Usage(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)),
            model=data.get("model"),
        )
