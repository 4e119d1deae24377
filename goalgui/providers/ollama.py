"""Ollama's native /api/chat: `format` for structured replies, its own token counts."""

from __future__ import annotations

import json
from typing import Any

import httpx

from ..engine.model import BadResponse, ModelReply, ModelRequest, Usage
from .http import HttpModel, _Transient
from .openai import tool_spec


class OllamaModel(HttpModel):
    """POST /api/chat with stream false. An error reported inside the body (even with HTTP 200,
    as Ollama does mid-stream) is an error, not a reply."""

    kind = "ollama"
    path = "/api/chat"
    embeddings_path = "/api/embed"

    def embeddings_parse(self, data: Any) -> list[list[float]]:
        return data["embeddings"]

    def body(self, request: ModelRequest) -> dict:
        messages = []
        for m in request.messages:
            out = {"role": m.get("role"), "content": m.get("content") or ""}
            if m.get("tool_calls"):
                out["tool_calls"] = [{"function": {"name": c["name"], "arguments": c.get("arguments", {})}}
                                     for c in m["tool_calls"]]
            messages.append(out)
        body: dict[str, Any] = {"model": self.profile.model, "messages": messages, "stream": False}
        if request.max_tokens:
            body["options"] = {"num_predict": request.max_tokens}
        if request.schema is not None:
            body["format"] = request.schema
        if request.tools:
            body["tools"] = [tool_spec(t) for t in request.tools]
        return body

    def decode(self, response: httpx.Response) -> Any:
        """One JSON object, or NDJSON lines (merged); a line holding only `error` fails the reply."""
        lines = [line for line in response.text.splitlines() if line.strip()]
        if not lines:
            raise BadResponse(f"{self.name}: empty reply")
        merged: dict = {}
        content = []
        for line in lines:
            try:
                part = json.loads(line)
            except json.JSONDecodeError:
                raise BadResponse(f"{self.name}: the reply is not JSON ({line[:80]!r})") from None
            if not isinstance(part, dict):
                raise BadResponse(f"{self.name}: the reply is not a JSON object")
            if "error" in part:
                raise _Transient(f"the server reported: {str(part['error'])[:200]}")
            content.append((part.get("message") or {}).get("content", ""))
            merged.update(part)
        if len(lines) > 1:
            merged.setdefault("message", {})
            merged["message"] = {**merged["message"], "content": "".join(content)}
        return merged

    def parse(self, data: Any, request: ModelRequest) -> ModelReply:
        message = data["message"]
        calls = [{"id": str(i), "name": c["function"]["name"], "arguments": c["function"].get("arguments") or {}}
                 for i, c in enumerate(message.get("tool_calls") or [])]
        return ModelReply(message.get("content") or "", calls,
                          Usage(int(data.get("prompt_eval_count") or 0), int(data.get("eval_count") or 0)),
                          data.get("model"))
