"""What a model of a few hundred million parameters cannot be asked to do, done for it.

The embedded SmolLM2-135M, or a model as small behind a server whose profile says
`prompt_profile = "small"`: it cannot plan a request that names its own steps (its plan is
fragments of the request), it echoes the directive it was given instead of acting, and it takes
the first tool offered far more often than the one the task names. Each rule here is a small
model's failure seen in a run, answered in Python rather than in the prompt.
"""

from __future__ import annotations

import re

from .. import prompts_cursor as P

# the tools a small model is offered: the few it can use, not the whole box (each costs context)
TOOLS = ("list_files", "read_file", "write_file", "md5_file", "run_shell")

# the verbs of a task that name a tool: a small model is offered that tool first
_VERBS = {
    "write_file": ("create", "write", "make", "save", "put", "add", "generate", "draft"),
    "read_file": ("read", "show", "prove", "check", "verify", "open", "print", "confirm"),
    "list_files": ("list", "find", "exists", "present"),
    "md5_file": ("md5", "checksum", "hash", "digest"),
    "run_shell": ("run", "execute", "command", "shell", "install", "compile", "test"),
}
_CHECKS = ("read_file", "list_files", "md5_file", "tail_file", "search_files")
_WORD = re.compile(r"[a-z0-9]+")

_SEQUENCE = re.compile(r"\s*(?:,?\s*(?:and\s+)?then\b|;|\.\s+(?=[A-Z])|,\s*and\s+(?=[a-z]+\s))\s*", re.IGNORECASE)

_DIRECTIVE = ("Active task:", "Settle it with task_complete", "settle the active task by calling")


def sequence_steps(objective: str) -> list[str]:
    """The steps a request names itself ("create X, then prove it exists"): its clauses split at
    'then', 'and then', ';' and sentence ends, at most MAX_TASKS."""
    parts = [p.strip(" ,.") for p in _SEQUENCE.split(objective) if p and p.strip(" ,.")]
    steps = [p[0].upper() + p[1:] for p in parts if len(p.split()) >= 2]
    return steps[:P.MAX_TASKS] if len(steps) >= 2 else []


def stage(log, verifying: tuple[str, ...], settling: tuple[str, ...]) -> str:
    """Where a task stands, from its tool calls: "act" (nothing has run), "check" (its last
    change is not yet looked at) or "settle" (what it did has been checked)."""
    acted = unchecked = False
    for name, _decision, ok, _brief in log:
        if not ok or name in settling:
            continue
        acted = True
        unchecked = name not in verifying
    return "act" if not acted else "check" if unchecked else "settle"


def ranked(tools: list, task: str, where: str = "act") -> list:
    """The tools in the order a small model should meet them, for the step its task is at: to
    act, those whose verbs the task uses first, by where the verb appears (the task's first verb
    is its main one); to check, the reading tools; to settle, task_complete. A 135M model at
    temperature 0 picks the first function a server lists, whatever the task says."""
    words = _WORD.findall(task.lower())

    def place(tool) -> int:
        name = tool.spec.name
        if where == "settle":
            return 0 if name == "task_complete" else 1
        if where == "check":
            return _CHECKS.index(name) if name in _CHECKS else len(_CHECKS)
        verbs = _VERBS.get(name, ())
        return min((i for i, w in enumerate(words) if w in verbs), default=len(words))

    return sorted(tools, key=place)  # stable: ties keep the box's order


def step_tool(box, task: str, where: str) -> str | None:
    """The tool a small model's round must call, or None to let it choose: to act, the tool the
    task's main verb names; to check, the first reading tool offered. To settle it chooses,
    between task_complete and task_fail: what the check showed decides, not this rule."""
    offered = [t["name"] for t in box.offered()]
    if where == "settle":
        return None
    if where == "check":
        return next((n for n in _CHECKS if n in offered), None)
    words = _WORD.findall(task.lower())
    hits = [(i, n) for n in offered for i, w in enumerate(words) if w in _VERBS.get(n, ())]
    return min(hits)[1] if hits else None


def copies_directive(text: str) -> bool:
    return any(d.lower() in text.lower() for d in _DIRECTIVE)


def strip_directive(text: str) -> str:
    lines = [line for line in text.splitlines() if not copies_directive(line)]
    return "\n".join(lines).strip()
