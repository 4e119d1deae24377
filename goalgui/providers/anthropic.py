"""The Anthropic Messages API: x-api-key, anthropic-version, tool use, usage."""

from __future__ import annotations

import json
from typing import Any

from ..engine.model import BadResponse, ModelReply, ModelRequest, Usage
from .http import HttpModel

API_VERSION = "2023-06-01"
REPLY_TOOL = "reply"  # structured replies: a forced call of a tool whose input is the schema
DEFAULT_MAX_TOKENS = 1024


class AnthropicModel(HttpModel):
    """POST /v1/messages."""

    kind = "anthropic"
    path = "/v1/messages"

    def headers(self) -> dict[str, str]:
        headers = {"anthropic-version": API_VERSION}
        if self._key:
            headers["x-api-key"] = self._key
        return headers

    def body(self, request: ModelRequest) -> dict:
        system = "\n\n".join(m.get("content", "") for m in request.messages if m.get("role") == "system")
        messages: list[dict] = []
        for m in request.messages:
            role = m.get("role")
            if role == "system":
                continue
            if role == "tool":
                block = {"type": "tool_result", "tool_use_id": m.get("tool_call_id", ""), "content": m.get("content", "")}
                messages.append({"role": "user", "content": [block]})
            elif role == "assistant" and m.get("tool_calls"):
                blocks: list[dict] = [{"type": "text", "text": m["content"]}] if m.get("content") else []
                blocks += [{"type": "tool_use", "id": c.get("id", ""), "name": c["name"], "input": c.get("arguments", {})}
                           for c in m["tool_calls"]]
                messages.append({"role": "assistant", "content": blocks})
            else:
                messages.append({"role": role, "content": m.get("content", "")})
        body: dict[str, Any] = {"model": self.profile.model, "max_tokens": request.max_tokens or DEFAULT_MAX_TOKENS,
                                "messages": messages}
        if system:
            body["system"] = system
        tools = [{"name": t["name"], "description": t.get("description", ""),
                  "input_schema": t.get("parameters", {"type": "object", "properties": {}})}
                 for t in request.tools or []]
        if request.schema is not None and not tools:
            tools = [{"name": REPLY_TOOL, "description": "Give the answer.", "input_schema": request.schema}]
            body["tool_choice"] = {"type": "tool", "name": REPLY_TOOL}
        if tools:
            body["tools"] = tools
            if request.tools and request.tool_choice == "required":
                body["tool_choice"] = {"type": "any"}
            elif request.tools and any(t["name"] == request.tool_choice for t in request.tools):
                body["tool_choice"] = {"type": "tool", "name": request.tool_choice}
        return body

    def parse(self, data: Any, request: ModelRequest) -> ModelReply:
        if not isinstance(data, dict) or not isinstance(data.get("content"), list):
            raise BadResponse(f"{self.name}: the reply has no content list")
        texts, calls = [], []
        for block in data["content"]:
            if block.get("type") == "text":
                texts.append(block.get("text", ""))
            elif block.get("type") == "tool_use":
                if block.get("name") == REPLY_TOOL and request.schema is not None and not request.tools:
                    texts.append(json.dumps(block.get("input", {})))
                else:
                    calls.append({"id": block.get("id", ""), "name": block["name"], "arguments": block.get("input", {})})
        usage = data.get("usage") or {}
        return ModelReply("".join(texts), calls,
                          Usage(int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)),
                          data.get("model"))
