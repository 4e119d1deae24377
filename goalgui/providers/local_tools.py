"""Tool calls for the embedded model, which has no tool-calling format of its own.

When a request offers tools, the reply is one JSON action, `{"tool": NAME, "arguments": {...}}`,
NAME a tool or "answer" (with the answer as "text"), made in two steps each held by a grammar:
the name, then the arguments under that tool's own schema. (One grammar for every tool at once
did not hold: llama.cpp's sampler let a `oneOf` of one object per tool through as free text, and
crashed on a larger one.) The
conversation is written the same way (a call as its JSON, a result as a user turn), and the
offered tools are listed, one line each, after the system message.
"""

from __future__ import annotations

import json

from .schemas import plain_schema

def choose_grammar(tools: list[dict], *, answer: bool = True) -> str:
    """GBNF for the start of an action: `{"tool": "NAME"` with NAME an offered tool (or answer)."""
    names = " | ".join(json.dumps(json.dumps(n)) for n in [t["name"] for t in tools] + (["answer"] if answer else []))
    return f'root ::= "{{\\"tool\\": " ({names})'


def chosen_tool(head: str, tools: list[dict]) -> str:
    for name in [t["name"] for t in tools] + ["answer"]:
        if f'"{name}"' in head:
            return name
    return "answer"


def arguments_schema(name: str, tools: list[dict]) -> dict:
    """The arguments the chosen tool takes, its required ones required; the answer's is its text."""
    if name == "answer":
        return {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    tool = next(t for t in tools if t["name"] == name)
    return plain_schema(tool.get("parameters") or {"type": "object", "properties": {}})


def _signature(tool: dict) -> str:
    props = (tool.get("parameters") or {}).get("properties") or {}
    return f"{tool['name']}({', '.join(props)}): {tool.get('description', '')}"


def with_tools(messages: list[dict], tools: list[dict]) -> list[dict]:
    """The conversation as the model reads it: calls as their JSON, results as user turns."""
    listing = ("Reply with one JSON object: {\"tool\": NAME, \"arguments\": {...}} to use a tool, or "
               "{\"tool\": \"answer\", \"arguments\": {\"text\": ...}} when you have the result. Tools:\n"
               + "\n".join(_signature(t) for t in tools))
    out: list[dict] = []
    for m in messages:
        role = m.get("role", "user")
        if role == "assistant" and m.get("tool_calls"):
            calls = [{"tool": c.get("name"), "arguments": c.get("arguments") or {}} for c in m["tool_calls"]]
            out.append({"role": "assistant", "content": json.dumps(calls[0] if len(calls) == 1 else calls)})
        elif role == "tool":
            out.append({"role": "user", "content": f"Tool result:\n{m.get('content') or ''}"})
        else:
            out.append({"role": role, "content": m.get("content") or ""})
    if out and out[0]["role"] == "system":
        out[0] = {"role": "system", "content": f"{out[0]['content']}\n\n{listing}"}
    else:
        out.insert(0, {"role": "system", "content": listing})
    return out


def parse_action(text: str, call_number: int, tools: list[dict]) -> tuple[str, list[dict]]:
    """(answer text, tool calls) from the model's JSON action; text that is no action is the answer.
    Arguments the chosen tool does not take (the grammar allows every tool's) are dropped."""
    try:
        value = json.loads(text)
    except ValueError:
        return text, []
    if not isinstance(value, dict) or not isinstance(value.get("tool"), str):
        return text, []
    arguments = value.get("arguments") if isinstance(value.get("arguments"), dict) else {}
    if value["tool"] == "answer":
        return str(arguments.get("text", "")), []
    known = next((t for t in tools if t["name"] == value["tool"]), None)
    if known is not None:
        taken = (known.get("parameters") or {}).get("properties") or {}
        arguments = {k: v for k, v in arguments.items() if k in taken}
    return "", [{"id": f"local-{call_number}", "name": value["tool"], "arguments": arguments}]
