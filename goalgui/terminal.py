"""The terminal face of a headless run: the tree growing line by line, a status line, and questions."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from typing import Sequence, TextIO

from .engine import events as ev
from .engine.confirm import ConfirmationAnswer, ConfirmationRequest, Outcome
from .engine.prompts_cursor import plan_mark
from .engine.record import RunRecord

# C0 and C1 controls, DEL, and the Unicode marks that reorder or hide text (bidi overrides and
# isolates, the Arabic letter mark, zero-width and word-joiner marks, the BOM, tag characters, line and
# paragraph separators): what lets foreign text set a title, clear the screen,
# move the cursor, plant a link, or forge a line
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069\ufeff"
                      "\U000e0000-\U000e007f]")


def _visible(match: re.Match) -> str:
    c = match.group()
    named = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(c)
    if named:
        return named
    return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}"


def shown(text: object, *, lines: bool = False) -> str:
    """Text that did not come from goalgui (a model's, a server's, an objective), safe to print on
    one terminal line: every control character is written out (\\x1b, \\n), nothing acts.
    `lines`: keep line breaks (a multi-line summary in a report)."""
    if lines:
        return "\n".join(_CONTROL.sub(_visible, part) for part in str(text).split("\n"))
    return _CONTROL.sub(_visible, str(text))


_MARK = {"pending": " ", "running": ">", "done": "+", "failed": "x", "skipped": "-", "abandoned": "~"}


class TerminalView:
    """Prints one line per goal event, indented by depth, and keeps a status line."""

    def __init__(self, record: RunRecord, stream: TextIO = sys.stdout):
        self.record = record
        self.stream = stream
        self.live = stream.isatty()
        self._status_shown = False
        self._plan_shown = False
        self._cursor_at: str | None = None

    def __call__(self, batch: Sequence[ev.Event]) -> None:
        out = []
        goals = self.record.goals
        for e in batch:
            t = type(e)
            if t is ev.GoalAdded:
                out.append(self._line(e.goal_id, "pending", e.depth, e.text))
            elif t is ev.GoalChanged and e.status is not None and e.status != "running":
                g = goals[e.goal_id]
                out.append(self._line(g.id, e.status, g.depth, g.text, g.tokens))
            elif t is ev.RunStateChanged:
                out.append(f"run {e.state}" + (f": {shown(e.reason)}" if e.reason else "")
                           + (f" (outcome: {e.outcome})" if e.outcome else ""))
            elif t is ev.BudgetNudged:
                out.append(f"budget {e.budget} past 75% ({e.used:,.0f} of {e.limit:,.0f}): converging")
            elif t is ev.ConfirmationAsked:
                out.append(f"waiting for confirmation: {e.kind.replace('_', ' ')}")
            elif t is ev.ConfirmationAnswered and e.outcome != "aborted":
                out.append(f"confirmation {e.outcome}")
            elif t is ev.TurnStarted and self.record.strategy == "cursor":
                out.extend(self._cursor_lines(e.goal_id))
            elif t is ev.ToolCalled:
                depth = goals[e.goal_id].depth + 1 if e.goal_id in goals else 1
                brief = shown(", ".join(f"{k}={str(v)[:40]}" for k, v in list(e.arguments.items())[:2]))
                result = shown(e.result.split("\n", 1)[0][:60])
                out.append(f"{'  ' * depth}  tool {shown(e.name)}({brief[:100]}): {e.decision} -> {result}")
        if not out and not self.live:
            return
        text = "".join(line + "\n" for line in out)
        if self.live:
            text = "\r\x1b[K" + text + self.status()
        self._write(text)

    def _cursor_lines(self, goal_id: str | None) -> list[str]:
        """The cursor's plan once it exists, and a line each time the cursor moves onto a task."""
        rec = self.record
        root = rec.goals.get(rec.root_id or "")
        goal = rec.goals.get(goal_id or "")
        if root is None or goal is None or goal.parent_id != root.id or goal_id == self._cursor_at:
            return []
        lines = []
        tasks = [rec.goals[c] for c in root.children]
        number = root.children.index(goal_id) + 1
        if not self._plan_shown:
            self._plan_shown = True
            lines.append(f"[goal] plan: {len(tasks)} task(s)")
            lines.append(f"goal: {shown(rec.objective)[:100]}")
            for i, task in enumerate(tasks, 1):  # the record may be ahead of this line: tasks after the cursor wait
                mark = plan_mark(task.status.value if i < number else "pending", i == number)
                lines.append(f"  {mark} {i}. {shown(task.text)[:90]}")
        self._cursor_at = goal_id
        lines.append(f"[goal] working on task {number}/{len(tasks)}: {shown(goal.text)[:90]}")
        return lines

    def _write(self, text: str) -> None:
        """A reader that went away (`goalgui run ... | head`) silences the view, not the run."""
        if self.stream is None:
            return
        try:
            self.stream.write(text)
            self.stream.flush()
        except (BrokenPipeError, ValueError):
            self.stream = None

    def _line(self, goal_id: str, status: str, depth: int, text: str, tokens: int | None = None) -> str:
        cost = f"  {tokens:,} tok" if tokens else ""
        text = shown(text)
        short = text if len(text) <= 90 else text[:87] + "..."
        return f"{'  ' * depth}[{_MARK.get(status, '?')}] {goal_id} {status:<9} {short}{cost}"

    def status(self) -> str:
        """state, goals N/M, tokens used / budget: the modeline of a run."""
        rec = self.record
        m = rec.metrics
        tokens = f"{m.tokens:,}" + (f"/{rec.limits.tokens:,}" if rec.limits.tokens else "")
        turns = f"  turns {m.turns}" + (f"/{rec.limits.turns}" if rec.limits.turns else "")
        position = rec.task_position() if rec.strategy == "cursor" else None
        cursor = f"  task:{position}" if position else ""
        return (f"[{rec.state.value}] goals {m.goals_created}/{rec.limits.max_goals}{cursor}  "
                f"tokens {tokens}{turns}  {rec.active_seconds(rec.updated_at):.0f}s")

    def say(self, line: str) -> None:
        """One line of goalgui's own (not foreign text), above the status line."""
        self._write(("\r\x1b[K" if self.live else "") + line + "\n" + (self.status() if self.live else ""))

    def close(self) -> None:
        self._write(("\r\x1b[K" if self.live else "") + self.status() + "\n")


class TerminalConfirmer:
    """Asks on the terminal without blocking the event loop (stdin is read with a loop reader)."""

    def __init__(self, stream: TextIO = sys.stderr, stdin: TextIO = sys.stdin):
        self.stream = stream
        self.stdin = stdin
        self._buffer = b""

    async def _read_line(self) -> str:
        """One line of input, read as the fd becomes readable (never blocking the loop); lines that
        arrived together (a paste) are kept for the next call. '' at end of input."""
        while b"\n" not in self._buffer:
            chunk = await self._readable_chunk()
            if not chunk:
                line, self._buffer = self._buffer, b""
                return line.decode(errors="replace")
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode(errors="replace") + "\n"

    async def _readable_chunk(self) -> bytes:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[bytes] = loop.create_future()
        fd = self.stdin.fileno()

        def ready() -> None:
            if not done.done():
                try:
                    done.set_result(os.read(fd, 4096))
                except OSError:
                    done.set_result(b"")

        loop.add_reader(fd, ready)
        try:
            return await done
        finally:
            loop.remove_reader(fd)

    async def _tool(self, request: ConfirmationRequest) -> ConfirmationAnswer:
        """Allow once [a], allow this tool for the rest of the run [r], deny [d REASON]: nothing by default."""
        p, w = request.proposal, self.stream.write
        w(f"\nThe model wants to use {shown(p.get('tool', ''))} ({shown(p.get('effect', ''))}):\n")
        for line in str(p.get("preview", "")).splitlines()[:40]:
            w(f"  {shown(line)}\n")
        w(f"Allow once [a], allow {shown(p.get('tool', ''))} for the rest of the run [r], or deny [d, then a reason "
          "the model sees]: ")
        self.stream.flush()
        while True:
            line = await self._read_line()
            if line == "":
                return ConfirmationAnswer.abort()
            answer = line.strip()
            word, _, reason = answer.partition(" ")
            if word.lower() in ("a", "allow", "y", "yes"):
                return ConfirmationAnswer.approve(request.mode)
            if word.lower() in ("r", "run", "always"):
                return ConfirmationAnswer.approve(request.mode, always=True)
            if word.lower() in ("d", "n", "no", "deny"):
                return ConfirmationAnswer(Outcome.DECLINED, None, {"reason": reason.strip()} if reason.strip() else {})
            w("Please answer a, r or d: ")
            self.stream.flush()

    async def __call__(self, request: ConfirmationRequest) -> ConfirmationAnswer:
        p = request.proposal
        w = self.stream.write
        if request.kind == "tool":
            return await self._tool(request)
        if request.kind in ("subgoals", "plan"):
            w(f"\nThe model {'plans' if request.kind == 'plan' else 'wants to split'}: {shown(p['parent'])}\n")
            for i, text in enumerate(p["subgoals"], 1):
                w(f"  {i}. {shown(text)}\n")
            w("Approve all [a], decline [d], or the numbers to keep (e.g. '1 3'): ")
        else:
            w(f"\nThe model wants to start a goal: {shown(p.get('objective', ''))}\n")
            if p.get("criteria"):
                w(f"  completion criteria: {shown(p['criteria'])}\n")
            w(f"Approve [a] or decline [d] (mode {request.mode}): ")
        self.stream.flush()
        while True:
            line = await self._read_line()
            if line == "":  # end of input: nobody will answer
                return ConfirmationAnswer.abort()
            answer = line.strip().lower()
            if answer in ("", "a", "y", "yes", "approve"):
                return ConfirmationAnswer.approve(request.mode)
            if answer in ("d", "n", "no", "decline"):
                return ConfirmationAnswer.decline()
            if request.kind in ("subgoals", "plan"):
                try:
                    keep = sorted({int(x) for x in answer.replace(",", " ").split()})
                    if keep and all(1 <= k <= len(p["subgoals"]) for k in keep):
                        return ConfirmationAnswer.approve(request.mode, subgoals=[p["subgoals"][k - 1] for k in keep])
                except ValueError:
                    pass
            w("Please answer a, d" + (" or numbers: " if request.kind in ("subgoals", "plan") else ": "))
            self.stream.flush()
