"""Exports of a run: the JSON report (DESIGN.md's contract) and a readable Markdown report."""

from __future__ import annotations

import time

from .engine import events as ev
from .engine.health import health as strategy_health
from .engine.health import health_line
from .engine.record import REUSED, RunRecord
from .terminal import shown


def json_report(record: RunRecord, events=None, *, with_health: bool = False) -> dict:
    """The run report (DESIGN.md's keys); `events` adds the event log and `with_health` the strategy's
    health figures (`export --events`, `export --health`), so the report's own keys stay the contract."""
    report = record.report()
    if with_health:
        report["health"] = strategy_health(record)
    if events is not None:
        report["events"] = [{"seq": e.seq, "ts": e.ts, "type": e.type, **ev.payload(e)} for e in events]
    return report


def health(record: RunRecord) -> dict:
    """The numbers that tell a run's health (seed 000): done:failed leaves, depth, fall-throughs, retries."""
    leaves = record.leaves()
    return {
        "leaves_done": sum(1 for g in leaves if g.status.value == "done"),
        "leaves_failed": sum(1 for g in leaves if g.status.value == "failed"),
        "max_depth_reached": record.metrics.max_depth_reached,
        "depth_limit_hit": any("depth limit" in g.note for g in record.goals.values()),
        "fell_through": sum(1 for g in record.goals.values() if "executed directly" in g.note),
        "retries": sum(1 for g in record.goals.values() if g.attempts > 1),
    }


def health_section(record: RunRecord) -> list[str]:
    """The strategy's health figures (`engine.health`) as Markdown lines."""
    figures = strategy_health(record)
    if not figures:
        return []
    lines = ["## Health", "", shown(health_line(figures)), ""]
    if figures["strategy"] == "task-loop":
        hist = ", ".join(f"{p}: {n}" for p, n in figures["histogram"].items()) or "-"
        eff = ", ".join(f"{p}: {n}" for p, n in figures["effective_histogram"].items()) or "-"
        share = figures["artefact_share"]
        lines += [f"- k (tasks created per task completed): {figures['k']:.2f}"
                  + (" — at or above 1, the queue does not shrink" if figures["k_flag"] else ""),
                  f"- the model's priorities: {hist}" + (" — over half share one value" if figures["histogram_flag"]
                                                        else ""),
                  f"- effective priorities: {eff}",
                  f"- artefacts among completed tasks: {'-' if share is None else f'{share:.0%}'} "
                  f"({figures['artefact_rule']})"]
        for d in figures["duplicates"]:
            lines.append(f"- refused as a duplicate ({d['how']}, {d['similarity']:.2f}): {shown(d['text'])} "
                         f"— like {d['match_id']}: {shown(d['match'])}")
        for d in figures["nearest_kept"]:
            lines.append(f"- kept, nearest {d['match_id']} at {d['similarity']:.2f}: {shown(d['text'])}")
        lines += ["", "| task | priority (effective) | depth | creator | state | iteration |", "|---|---|---|---|---|---|"]
        for t in record.tasks():
            f = t.facts
            lines.append(f"| {t.id} {shown(t.text)[:80]} | {f.get('priority', '-')} ({f.get('effective', '-')}) | "
                         f"{f.get('task_depth', '-')} | {f.get('creator') or '-'} | {t.status.value} | "
                         f"{f.get('iteration', '-')} |")
        lines.append("")
    elif figures["strategy"] == "plan":
        for version in record.plans:
            lines += [f"### Plan v{version.version} ({shown(version.reason)})", ""]
            for s in version.steps:
                goal = record.goals.get(s.get("goal_id", ""))
                state = goal.status.value if goal is not None else "?"
                after = ", ".join(str(d) for d in s.get("dependencies", [])) or "-"
                lines.append(f"- step {s['step']} [{state}] {shown(s['goal'])} (tool {shown(str(s.get('tool')))}; "
                             f"after {after})")
            lines.append("")
    return lines


def in_tree_order(goals: list[dict]) -> list[dict]:
    """The report's goals (in the order created) depth first, each under its parent: indented
    in creation order, a grandchild read as a child of the last goal above it."""
    children: dict[str | None, list[dict]] = {}
    for g in goals:
        children.setdefault(g["parent_id"], []).append(g)
    known = {g["id"] for g in goals}
    out: list[dict] = []
    stack = list(reversed([g for g in goals if g["parent_id"] is None or g["parent_id"] not in known]))
    while stack:
        g = stack.pop()
        out.append(g)
        stack.extend(reversed(children.get(g["id"], [])))
    return out


def markdown_report(record: RunRecord) -> str:
    r = record.report()
    m = r["metrics"]
    h = health(record)
    started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(record.started_at)) if record.started_at else "?"
    lines = [
        f"# Run {r['run_id']}",
        "",
        f"**Objective:** {shown(r['objective'])}",
        "",
        *([f"**Completion criteria:** {shown(record.criteria, lines=True)}", ""] if record.criteria else []),
        *[f"**Operator's message:** {shown(text, lines=True)}" for text in record.operator_messages],
        *([""] if record.operator_messages else []),
        "| | |",
        "|---|---|",
        f"| strategy | {r['strategy']} |",
        f"| model | {shown(r['model'])} |",
        f"| state | {r['state']} |",
        f"| outcome | {r['outcome'] or '-'} |",
        f"| stop reason | {shown(r['stop_reason'] or '-')} |",
        f"| started | {started} |",
        *([f"| forked from | run {f['run']} at " + (f"goal {f['goal']}, " if f["goal"] else "") + f"event {f['event']} |"
           for f in [record.forked_from] if f]),
        f"| active time | {m['active_seconds']:.1f} s |",
        f"| tokens | {m['tokens']:,} ({m['tokens_in']:,} in, {m['tokens_out']:,} out"
        + (f", {m['tokens_estimated']:,} estimated" if m["tokens_estimated"] else "") + ") |",
        f"| turns / model calls | {m['turns']} / {m['model_calls']} |",
        # the JSON report's keys are a contract (DESIGN.md): tool calls and the workspace are told here
        f"| tool calls | {record.metrics.tool_calls}"
        + (f" ({record.metrics.tool_errors} not run or failed)" if record.metrics.tool_errors else "") + " |",
        f"| workspace | {shown(record.options.get('workspace') or '-')} |",
        f"| goals | {m['goals_created']}, deepest depth {m['max_depth_reached']} |",
        f"| leaves done : failed | {h['leaves_done']} : {h['leaves_failed']} |",
        f"| decompositions that fell through | {h['fell_through']} |",
        f"| retries | {h['retries']} |",
        "",
        "## Summary",
        "",
        shown(r["summary"], lines=True) or "(none)",
        "",
        *health_section(record),
        "## Tokens by purpose",
        "",
    ]
    for purpose, n in sorted(m["tokens_by_purpose"].items(), key=lambda kv: -kv[1]):
        lines.append(f"- {purpose}: {n:,}")
    lines += ["", "## Goals", ""]
    for g in in_tree_order(r["goals"]):
        indent = "  " * g["depth"]
        # the report's keys are a contract: a reused result is told by its note
        status = f"{g['status']}, reused" if REUSED in g["note"] else g["status"]
        lines.append(f"{indent}- **{g['id']}** [{status}] {shown(g['text'])} ({g['tokens']:,} tokens"
                     + (f", {g['attempts']} attempts" if g["attempts"] > 1 else "") + ")")
        if g["note"]:
            lines.append(f"{indent}  - note: {shown(g['note'])}")
        for name, decision, ok, brief in record.tool_log.get(g["id"], ()):
            lines.append(f"{indent}  - tool {shown(name)}({shown(brief)}): {decision}{'' if ok else ', not done'}")
        if g["result"]:
            result = shown(" ".join(g["result"].split("\n")))
            lines.append(f"{indent}  - result: {result[:600]}{'...' if len(result) > 600 else ''}")
    return "\n".join(lines) + "\n"
