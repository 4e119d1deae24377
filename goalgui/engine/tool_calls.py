"""A run's tool calls: checked, decided by the permission table, confirmed, run, journaled.

A mixin of `Run` (it uses the run's record, tools, memory, confirm and emit). Each call the model
asks for becomes one `ToolCalled` event whatever happens to it, and what the model gets back is
always text it can read: the result (cut to the tool's cap), or why it did not run.
"""

from __future__ import annotations

import asyncio
import logging
import time

from . import events as ev
from .confirm import Outcome
from .lifecycle import BudgetExhausted
from .permissions import Action, Decision, PermissionMode, decide
from .record import Goal
from .tools import ToolEnv, ToolError, Toolbox, cap, check_arguments

log = logging.getLogger("goalgui.engine.run")

TOOL_TIMEOUT = 120.0  # seconds a tool may take (run_shell has its own, shorter, timeout)


class ToolCalls:
    async def call_tool(self, goal: Goal | None, call: dict, toolbox: Toolbox | None = None) -> str:
        """Carry out one tool call of the model's reply (`{"id", "name", "arguments"}`) and return
        what the model reads. Refusals, denials and failures are results too; only a pause or a
        cancel (and a confirmation nobody can answer) leave by an exception."""
        box = toolbox if toolbox is not None else self.tools
        name = str(call.get("name") or "")
        arguments = call.get("arguments")
        call_id = str(call.get("id") or "")
        began = time.perf_counter()

        def record(result: str, decision: str, *, ok: bool, effect: str = "") -> str:
            self.emit(ev.ToolCalled, goal_id=goal.id if goal else None, name=name[:200],
                      arguments=arguments if isinstance(arguments, dict) else {"value": str(arguments)[:2000]},
                      result=result, call_id=call_id[:200], effect=effect, decision=decision, ok=ok,
                      seconds=round(time.perf_counter() - began, 4))
            return result

        if call.get("invalid"):  # arguments that did not parse (see model.checked)
            return record(f"error: {name}: {call['invalid']}", "invalid", ok=False)
        tool = box.get(name) if box is not None else None
        if tool is None:
            offered = ", ".join(box.names()) if box is not None else "none"
            return record(f"error: there is no tool {name!r}; the tools are: {offered}", "invalid", ok=False)
        try:
            check_arguments(tool.spec.parameters, arguments)
        except ToolError as exc:
            return record(f"error: {name}: {exc}", "invalid", ok=False)
        effect = tool.effect(arguments)
        tokens = self.record.limits.tokens
        if effect is not Action.READ and tokens is not None and self.record.metrics.tokens >= tokens:
            # the reply that asked for it crossed the token budget: its side effects wait for the
            # raise, so a resume that asks again does not do them twice
            raise BudgetExhausted(self.record.exhausted(self.clock()) or "budget: tokens")
        mode = PermissionMode.of(self.record.permission_mode)
        decision = decide(mode, effect)
        how = "run"
        if decision is Decision.ASK and f"{name}:{effect.value}" in self.record.allowed_tools:
            decision, how = Decision.RUN, "allowed for the run"
        if decision in (Decision.REFUSE, Decision.HOLD):
            return record(f"refused: the run is in {mode.value} mode, where a {effect.value} tool does not run; "
                          "say what you would do instead", "refused", ok=False, effect=effect.value)
        if decision is Decision.ASK:
            answer = await self.confirm("tool", {"tool": name, "effect": effect.value, "arguments": arguments,
                                                 "preview": tool.preview(arguments)}, goal)
            if answer.outcome is not Outcome.APPROVED:
                reason = str(answer.edits.get("reason") or "").strip()
                text = "denied by the operator" + (f": {reason[:500]}" if reason else "")
                return record(text, "denied", ok=False, effect=effect.value)
            how = "allowed for the run" if answer.edits.get("always") else "allowed"
        env = ToolEnv(workspace=box.workspace, memory=self.memory, record=self.record,
                      network=effect.value == "network")
        try:
            async with asyncio.timeout(TOOL_TIMEOUT):
                result = await tool(arguments, env)
        except ToolError as exc:
            return record(f"error: {name}: {exc}", "failed", ok=False, effect=effect.value)
        except TimeoutError:
            return record(f"error: {name} took longer than {TOOL_TIMEOUT:g} s and was stopped", "failed", ok=False,
                          effect=effect.value)
        except asyncio.CancelledError:
            record("cancelled: the run was paused or cancelled", "cancelled", ok=False, effect=effect.value)
            raise
        except Exception as exc:  # a tool's bug is the model's readable error, and the log's traceback
            log.warning("tool %s failed", name, exc_info=True)
            return record(f"error: {name} failed: {type(exc).__name__}: {str(exc)[:300]}", "failed", ok=False,
                          effect=effect.value)
        return record(cap(str(result), tool.spec.result_cap), how, ok=True, effect=effect.value)
