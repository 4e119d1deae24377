"""`memory_query`: what the run has found so far, and its settled goals with their evidence."""

from __future__ import annotations

from ..engine.permissions import Action
from ..engine.record import SETTLED
from ..engine.tools import BaseTool, ToolEnv, ToolSpec


class MemoryQuery(BaseTool):
    spec = ToolSpec("memory_query", "Search the run's findings and settled goals (results and verdicts).",
                    {"type": "object", "properties": {"query": {"type": "string", "maxLength": 500},
                                                      "k": {"type": "integer", "minimum": 1, "maximum": 20}},
                     "required": ["query"], "additionalProperties": False}, Action.READ)

    async def __call__(self, arguments: dict, env: ToolEnv) -> str:
        query, k = arguments["query"], int(arguments.get("k", 5))
        lines = []
        if env.memory is not None and query.strip():
            await env.memory.prepare([query])
            for found in env.memory.search(query, k=k):
                lines.append(f"finding of {found.tag} (similarity {found.score:.2f}): {found.text[:500]}")
        if env.record is not None:
            settled = [g for g in env.record.goals.values() if g.status in SETTLED and not g.children]
            words = {w for w in query.lower().split() if len(w) > 2}
            for goal in settled:
                if not words or words & set(goal.text.lower().split()):
                    evidence = f"; verdict {goal.verdict}" if goal.verdict else ""
                    lines.append(f"goal [{goal.status.value}] {goal.text[:200]}: {goal.result[:300]}{evidence}")
                    if len(lines) >= 2 * k:
                        break
        return "\n".join(lines) if lines else "nothing in the run's memory matches"
