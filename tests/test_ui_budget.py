"""The budget panel's data: read back with getData() and compared with the budget events."""

import asyncio

import numpy as np

from goalgui.engine import Limits, Run
from goalgui.engine.record import RunRecord
from goalgui.ui.budget_panel import BudgetPanel

from .models import FunctionModel, well_behaved


def replay_into(panel, limits, pause_after=None):
    batches = []

    async def go():
        run = Run.create("Write a report", FunctionModel(lambda r: well_behaved(r, width=4, leaf_depth=1)),
                         limits=limits)
        run.subscribe(lambda b: batches.append(list(b)))
        await run.drive()
        if run.state.value == "blocked":
            run.set_limits(tokens=10_000, turns=100)
            run.resume()
            await run.drive()
        return run

    run = asyncio.run(go())
    mirror = RunRecord()
    panel.show_record(mirror)
    for batch in batches:
        for e in batch:
            mirror.apply(e)
        panel.on_batch(batch)
    panel.redraw()
    return run, batches


def test_curves_markers_and_bars_match_the_budget_events(qtbot):
    panel = BudgetPanel()
    qtbot.addWidget(panel)
    run, batches = replay_into(panel, Limits(tokens=200, turns=4))
    events = [e for b in batches for e in b]
    xs, ys = panel.curves["turns"].getData()
    assert len(xs) == len(batches) and np.all(np.diff(xs) >= 0)
    assert ys.max() >= 1.0  # the turn budget stopped the run once
    nudged = {e.budget for e in events if e.type == "budget_nudged"}
    assert nudged >= {"turns", "tokens"}
    marks = panel.nudge_marks.getData()
    assert len(marks[0]) == sum(1 for e in events if e.type == "budget_nudged")
    assert len(panel.history.pauses) == 0 and len(panel.history.resumes) == 1  # resumed after the block
    tokens_x, tokens_y = panel.curves["tokens"].getData()
    final_limit = run.record.limits.tokens
    assert tokens_y[-1] == run.record.metrics.tokens / final_limit
    assert panel.bars["turns"].format().startswith(f"{run.record.metrics.turns} turns of")


def test_a_run_with_no_budget_shows_what_it_spent(qtbot):
    panel = BudgetPanel()
    qtbot.addWidget(panel)
    run, _ = replay_into(panel, Limits())
    xs, _ys = panel.curves["tokens"].getData()
    assert xs is None or len(xs) == 0  # no token budget: no share to plot
    assert panel.bars["tokens"].format() == f"{run.record.metrics.tokens:,} tokens (no limit)"
    assert panel.curves["goals"].getData()[1][-1] == run.record.metrics.goals_created / 25
