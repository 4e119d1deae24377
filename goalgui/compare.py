"""Two runs side by side (`goalgui diff`, the window's compare view): their trees aligned by goal text
and position, each pair's tokens, model calls and time, the totals, and where they first diverge.

Alignment is recursive and positional: the roots are paired (the objectives), then under every
paired goal the two lists of children are aligned by their normalised texts in order (difflib's
longest matching blocks, so an inserted or dropped sibling does not shift the rest). A paired goal is
`matched`, or `changed status`, or `changed result` (same status, another result); a goal without a
partner is `only in A` or `only in B`, and so is everything under it. The first divergence is the
first row, in A's order, that is not `matched`. A fork compares against its source naturally: its
history is the source's, so the rows match up to the goal it was forked at.

Work is linear in the goals (each parent's children are aligned once) and reads no events: two
10,000-goal runs compare in tens of milliseconds (benchmarks/diff_bench.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher

from .engine.parsing import normalise
from .engine.record import Goal, RunRecord
from .terminal import shown

MATCHED, CHANGED_STATUS, CHANGED_RESULT, ONLY_A, ONLY_B = (
    "matched", "changed status", "changed result", "only in A", "only in B")
KINDS = (MATCHED, CHANGED_STATUS, CHANGED_RESULT, ONLY_A, ONLY_B)


@dataclass(frozen=True)
class Tree:
    """One side of a comparison: a run's goals and totals, from a record (`of`) or from the journal's
    projection without a replay (`Journal.tree`, which is what `goalgui diff` reads)."""

    run_id: str
    state: str
    root_id: str | None
    goals: dict[str, Goal]
    calls_by_goal: dict[str, int]
    tokens: int
    calls: int
    seconds: float

    @classmethod
    def of(cls, record: RunRecord, calls_by_goal: dict[str, int] | None = None) -> Tree:
        m = record.metrics
        return cls(record.run_id, record.state.value, record.root_id, record.goals, calls_by_goal or {},
                   m.tokens_in + m.tokens_out, m.model_calls, round(record.active_seconds(record.updated_at), 3))


@dataclass(frozen=True)
class Row:
    kind: str
    depth: int
    a: Goal | None
    b: Goal | None


def align(a: Tree | RunRecord, b: Tree | RunRecord) -> list[Row]:
    """Every goal of both runs, once, in a pre-order walk of A (B's unpaired goals where they fall)."""
    if a.root_id is None or b.root_id is None:
        return ([Row(ONLY_A, g.depth, g, None) for g in _walk(a, a.root_id)] +
                [Row(ONLY_B, g.depth, None, g) for g in _walk(b, b.root_id)])
    rows: list[Row] = []
    stack: list = [(a.goals[a.root_id], b.goals[b.root_id])]
    while stack:
        item = stack.pop()
        if isinstance(item, Row):  # an unpaired subtree's row, queued in order
            rows.append(item)
            continue
        ga, gb = item
        rows.append(Row(_kind(ga, gb), ga.depth, ga, gb))
        pending: list = []
        kids_a = [a.goals[c] for c in ga.children]
        kids_b = [b.goals[c] for c in gb.children]
        matcher = SequenceMatcher(None, [normalise(g.text) for g in kids_a], [normalise(g.text) for g in kids_b],
                                  autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag == "equal":
                pending.extend(zip(kids_a[i1:i2], kids_b[j1:j2]))
                continue
            for g in kids_a[i1:i2]:
                pending.extend(Row(ONLY_A, d.depth, d, None) for d in _walk(a, g.id))
            for g in kids_b[j1:j2]:
                pending.extend(Row(ONLY_B, d.depth, None, d) for d in _walk(b, g.id))
        # paired children expand in place: push so that the first comes off the stack first
        stack.extend(reversed(pending))
    return rows


def _kind(ga: Goal, gb: Goal) -> str:
    if ga.status is not gb.status:
        return CHANGED_STATUS
    if ga.result != gb.result:
        return CHANGED_RESULT
    return MATCHED


def _walk(record: Tree | RunRecord, goal_id: str | None) -> list[Goal]:
    if goal_id is None:
        return []
    out, stack = [], [goal_id]
    while stack:
        g = record.goals[stack.pop()]
        out.append(g)
        stack.extend(reversed(g.children))
    return out


def _seconds(g: Goal | None) -> float:
    return max(0.0, g.updated_at - g.created_at) if g is not None else 0.0


def comparison(a: Tree, b: Tree) -> dict:
    """The diff as data (`--format json`): counts by kind, totals, the first divergence, every row."""
    rows = align(a, b)
    counts = {k: 0 for k in KINDS}
    for r in rows:
        counts[r.kind] += 1
    first = next((r for r in rows if r.kind != MATCHED), None)

    def side(g: Goal | None, tree: Tree) -> dict | None:
        if g is None:
            return None
        return {"id": g.id, "status": g.status.value, "tokens": g.tokens, "calls": tree.calls_by_goal.get(g.id, 0),
                "seconds": round(_seconds(g), 3)}

    def total(tree: Tree) -> dict:
        return {"run_id": tree.run_id, "state": tree.state, "goals": len(tree.goals), "tokens": tree.tokens,
                "calls": tree.calls, "seconds": tree.seconds}

    return {
        "a": total(a), "b": total(b), "counts": counts,
        "first_divergence": None if first is None else {
            "kind": first.kind, "text": (first.a or first.b).text, "a": first.a.id if first.a else None,
            "b": first.b.id if first.b else None},
        "rows": [{"kind": r.kind, "depth": r.depth, "text": (r.a or r.b).text, "a": side(r.a, a),
                  "b": side(r.b, b)} for r in rows],
    }


def markdown(data: dict) -> str:
    """The diff for a person (`--format md`): totals, the first divergence, and the rows that differ
    (all rows when `rows="all"` was asked)."""
    a, b, counts = data["a"], data["b"], data["counts"]
    lines = [f"# Compare {a['run_id']} (A) with {b['run_id']} (B)", "",
             "| | A | B |", "|---|---|---|",
             f"| state | {a['state']} | {b['state']} |", f"| goals | {a['goals']:,} | {b['goals']:,} |",
             f"| tokens | {a['tokens']:,} | {b['tokens']:,} |", f"| model calls | {a['calls']:,} | {b['calls']:,} |",
             f"| active seconds | {a['seconds']:,.1f} | {b['seconds']:,.1f} |", "",
             "Goals: " + ", ".join(f"{n:,} {k}" for k, n in counts.items()), ""]
    first = data["first_divergence"]
    if first is None:
        lines += ["The trees are the same: every goal matches, with the same status and result.", ""]
    else:
        where = " / ".join(x for x in (first["a"] and f"A {first['a']}", first["b"] and f"B {first['b']}") if x)
        lines += [f"First divergence ({first['kind']}, {where}): {shown(first['text'])[:200]}", ""]
    differing = [r for r in data["rows"] if r["kind"] != MATCHED]
    if differing:
        lines += ["| goal | kind | A: status, tokens, calls, s | B: status, tokens, calls, s |", "|---|---|---|---|"]
        for r in differing:
            cells = [_cell(r["a"]), _cell(r["b"])]
            # a bar in a goal's text would open a column (and a backslash before it would undo the escape)
            text = shown(r["text"])[:90].replace("\\", "\\\\").replace("|", "\\|")
            lines.append(f"| {'&nbsp;' * 2 * r['depth']}{text} | {r['kind']} | {cells[0]} | {cells[1]} |")
        lines.append("")
    return "\n".join(lines)


def _cell(side: dict | None) -> str:
    if side is None:
        return "-"
    return f"{side['id']} {side['status']}, {side['tokens']:,}, {side['calls']}, {side['seconds']:.1f}"
