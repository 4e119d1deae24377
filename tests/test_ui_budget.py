"""The budget panel's data: read back with getData() and compared with the budget events."""

import asyncio

import numpy as np

from goalgui.engine import Limits, Run
from goalgui.engine.record import RunRecord, plot_marks
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
    panel.reset()
    for batch in batches:
        for e in batch:
            mirror.apply(e)
        panel.add(mirror.snapshot(), plot_marks(batch))
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


def test_tokens_by_purpose_stack_up_to_the_total(qtbot):
    panel = BudgetPanel()
    qtbot.addWidget(panel)
    run, batches = replay_into(panel, Limits())
    panel.views.setCurrentWidget(panel.purpose_plot)  # drawn when shown
    by_purpose = run.record.metrics.tokens_by_purpose
    assert set(panel.purpose_curves) == set(by_purpose)
    tops = {name: curve.getData()[1][-1] for name, curve in panel.purpose_curves.items()}
    assert max(tops.values()) == run.record.metrics.tokens  # the highest band is the total
    ordered = sorted(tops.values())
    assert sorted(b - a for a, b in zip([0] + ordered, ordered)) == sorted(by_purpose.values())
    assert len(panel.purpose_curves["execute"].getData()[0]) == len(batches)


def test_a_long_run_keeps_its_whole_shape_in_bounded_buffers(qtbot):
    from goalgui.ui.budget_panel import BudgetHistory

    history = BudgetHistory(capacity=100)
    for i in range(10_000):
        history.add({"ts": float(i), "tokens": i, "turns": i, "goals": 1, "active": float(i), "purpose": {"x": i},
                     "limits": {"tokens": 10_000, "max_goals": 25}}, start=0.0)
    xs, ys = history.data("tokens")
    assert len(xs) <= 100 and len(history.purpose_t) <= 100
    assert xs[0] == 0.0 and xs[-1] >= 9_800  # the start and the end are both still there
    assert np.all(np.diff(xs) > 0) and np.allclose(ys, xs / 10_000)
