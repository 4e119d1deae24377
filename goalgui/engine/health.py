"""Health figures of a run, by strategy: the numbers each seed says to watch from the first run.

All are computed from the record's structured data (goal statuses, `Goal.facts`, the journaled
duplicate refusals and plan versions), never read back out of note text, so a live run, a finished
one and a moment of a replay give the same figures.

- task loop (seed 003): k, tasks created per task completed (the loop ends only while k < 1); the
  histogram of the model's priorities (flat when over half share one value: the priorities then do
  nothing); the share of completed tasks whose result is an artefact (`task_loop.is_artefact`);
  the duplicate refusals with their pairs, and the nearest pairs that were kept (to judge the
  threshold by).
- goal stack (seed 000): done and failed leaves, and the share of leaves the depth limit forced.
- plan (seed 004): replans used of the cap, and the critical path of the final version.
- cursor (seed 002): tasks done and failed, and the work rounds they took.
"""

from __future__ import annotations

from .record import GoalStatus, RunRecord

ARTEFACT_RULE = ("a result counts as an artefact when it is at least 40 characters and neither its first "
                 "sentence nor half its sentences open with an intention (I will, to do this, the next step, "
                 "you should, here is how...)")


def health(record: RunRecord) -> dict:
    """The figures for the run's strategy, as plain data ({} before a root exists)."""
    if record.root_id is None:
        return {}
    if record.strategy == "task-loop":
        return _task_loop(record)
    if record.strategy == "plan":
        return _plan(record)
    if record.strategy == "cursor":
        return _cursor(record)
    return _goal_stack(record)


def _task_loop(record: RunRecord) -> dict:
    tasks = record.tasks()
    completed = [t for t in tasks if t.status is GoalStatus.DONE]
    created = [t for t in tasks if t.facts.get("creator")]
    k = len(created) / len(completed) if completed else (float(len(created)) if created else 0.0)
    histogram: dict[str, int] = {}
    effective: dict[str, int] = {}
    for t in created:
        histogram[str(t.facts.get("priority", 5))] = histogram.get(str(t.facts.get("priority", 5)), 0) + 1
        effective[str(t.facts.get("effective", 5))] = effective.get(str(t.facts.get("effective", 5)), 0) + 1
    top = max(histogram.values(), default=0)
    judged = [t for t in completed if "artefact" in t.facts]
    artefacts = sum(1 for t in judged if t.facts["artefact"])
    goals = record.goals
    kept = sorted(((t.facts["nearest"]["similarity"], t) for t in created if isinstance(t.facts.get("nearest"), dict)),
                  key=lambda pair: -pair[0])[:5]
    return {
        "strategy": "task-loop",
        "iterations": sum(1 for t in tasks if "iteration" in t.facts),
        "queued": sum(1 for t in tasks if t.status is GoalStatus.PENDING),
        "completed": len(completed),
        "created": len(created),
        "k": round(k, 3),
        "k_flag": k >= 1,
        "histogram": dict(sorted(histogram.items())),
        "effective_histogram": dict(sorted(effective.items())),
        "histogram_flag": len(created) >= 2 and top * 2 > len(created),
        "artefact_share": round(artefacts / len(judged), 3) if judged else None,
        "artefact_rule": ARTEFACT_RULE,
        "duplicates": [{"text": d.text, "match_id": d.match_id, "match": d.match_text, "similarity": d.similarity,
                        "how": d.how} for d in record.duplicates],
        "nearest_kept": [{"text": t.text, "match_id": t.facts["nearest"]["id"],
                          "match": goals[t.facts["nearest"]["id"]].text if t.facts["nearest"]["id"] in goals else "",
                          "similarity": s} for s, t in kept],
    }


def _goal_stack(record: RunRecord) -> dict:
    leaves = record.leaves()
    done = sum(1 for g in leaves if g.status is GoalStatus.DONE)
    failed = sum(1 for g in leaves if g.status is GoalStatus.FAILED)
    forced = sum(1 for g in leaves if g.facts.get("forced") == "depth")
    return {"strategy": record.strategy, "leaves": len(leaves), "leaves_done": done, "leaves_failed": failed,
            "forced": forced, "forced_share": round(forced / len(leaves), 3) if leaves else None,
            "depth_limit": record.limits.max_depth}


def _plan(record: RunRecord) -> dict:
    if not record.plans:
        return {"strategy": "plan", "versions": 0, "replans": 0, "critical_path": [], "critical_seconds": 0.0}
    goals = record.goals
    latest = record.plans[-1].steps
    by_step = {s["step"]: s for v in record.plans for s in v.steps}
    best: dict[int, tuple[float, list[int]]] = {}  # step -> (seconds along the longest path ending there, path)
    for s in sorted(latest, key=lambda s: s["step"]):
        goal = goals.get(s.get("goal_id", ""))
        own = float(goal.facts.get("seconds", 0.0)) if goal is not None else 0.0
        before = [best[d] if d in best else _chain(d, by_step, goals, best) for d in s.get("dependencies", [])]
        seconds, path = max(before, key=lambda p: (p[0], len(p[1])), default=(0.0, []))
        best[s["step"]] = (seconds + own, [*path, s["step"]])
    seconds, path = max(best.values(), key=lambda p: (p[0], len(p[1])), default=(0.0, []))
    root = goals[record.root_id]
    statuses = [goals[s["goal_id"]].status for s in latest if s.get("goal_id") in goals]
    return {"strategy": "plan", "versions": len(record.plans), "replans": len(record.plans) - 1,
            "replan_cap": int(record.options.get("max_replans", 2)), "gave_up": bool(root.facts.get("gave_up")),
            "steps": len(latest), "steps_done": statuses.count(GoalStatus.DONE),
            "steps_failed": statuses.count(GoalStatus.FAILED),
            "critical_path": path, "critical_seconds": round(seconds, 3)}


def _chain(step: int, by_step: dict, goals: dict, best: dict) -> tuple[float, list[int]]:
    """The longest path ending at a step kept from an earlier version (done before this one)."""
    s = by_step.get(step)
    if s is None:
        return 0.0, []
    goal = goals.get(s.get("goal_id", ""))
    own = float(goal.facts.get("seconds", 0.0)) if goal is not None else 0.0
    before = [best.get(d) or _chain(d, by_step, goals, best) for d in s.get("dependencies", []) if d < step]
    seconds, path = max(before, key=lambda p: (p[0], len(p[1])), default=(0.0, []))
    best[step] = (seconds + own, [*path, step])
    return best[step]


def _cursor(record: RunRecord) -> dict:
    tasks = record.tasks()
    return {"strategy": "cursor", "tasks": len(tasks),
            "tasks_done": sum(1 for t in tasks if t.status is GoalStatus.DONE),
            "tasks_failed": sum(1 for t in tasks if t.status is GoalStatus.FAILED),
            "rounds": sum(record.rounds.get(t.id, 0) for t in tasks)}


def health_line(figures: dict) -> str:
    """One line of the figures for a status bar, a terminal or a report's header."""
    s = figures.get("strategy")
    if not figures:
        return ""
    if s == "task-loop":
        share = figures["artefact_share"]
        parts = [f"k {figures['k']:.2f}" + (" (>= 1: the queue grows)" if figures["k_flag"] else ""),
                 f"{figures['completed']} completed, {figures['created']} created, {figures['queued']} queued",
                 "artefacts " + ("-" if share is None else f"{share:.0%}"),
                 f"{len(figures['duplicates'])} duplicate(s) refused"]
        if figures["histogram_flag"]:
            parts.append("priorities flat (over half share one value)")
        return " · ".join(parts)
    if s == "plan":
        path = " → ".join(str(n) for n in figures["critical_path"]) or "-"
        return (f"plan v{figures['versions']} · replans {figures['replans']} of {figures.get('replan_cap', 2)}"
                + (" (gave up)" if figures.get("gave_up") else "")
                + f" · critical path {path} ({figures['critical_seconds']:.1f} s)")
    if s == "cursor":
        return f"tasks {figures['tasks_done']} done, {figures['tasks_failed']} failed · {figures['rounds']} rounds"
    share = figures["forced_share"]
    return (f"leaves {figures['leaves_done']} done : {figures['leaves_failed']} failed · forced by the depth "
            f"limit {'-' if share is None else f'{share:.0%}'}")
