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
    assert panel.bars["turns"].format() == f"{run.record.metrics.turns} / {run.record.limits.turns}"
    assert panel.bars["turns"].toolTip().startswith(f"turns: {run.record.metrics.turns} used of")


def test_a_run_with_no_budget_shows_what_it_spent(qtbot):
    panel = BudgetPanel()
    qtbot.addWidget(panel)
    run, _ = replay_into(panel, Limits())
    xs, _ys = panel.curves["tokens"].getData()
    assert xs is None or len(xs) == 0  # no token budget: no share to plot
    assert panel.bars["tokens"].format() == f"{run.record.metrics.tokens:,} / none"
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


def test_use_is_drawn_in_steps_clipped_at_the_top_with_marks_that_do_not_overlap(qtbot):
    """Issue 11, item 14: steps, not slopes; past the top clipped and labelled; pause, block, resume and
    a raised limit each marked, labels on different heights; the legend lists only budgets that are set."""
    from goalgui.ui.budget_panel import CLIP

    panel = BudgetPanel()
    qtbot.addWidget(panel)
    limits = {"tokens": 1000, "max_goals": 25}
    panel.reset(start=100.0)
    for ts, tokens, marks, lim in ((101, 200, [], limits), (102, 900, [("nudge", 102, "tokens")], limits),
                                   (103, 1800, [("blocked", 103, "budget: tokens")], limits),
                                   (150, 1800, [("limits", 150, ""), ("resumed", 150, "")], {**limits, "tokens": 4000}),
                                   (151, 2000, [("paused", 151, "paused by user")], {**limits, "tokens": 4000})):
        panel.add({"ts": ts, "tokens": tokens, "goals": 3, "limits": lim, "purpose": {"execute": tokens}}, marks)
    panel.redraw()
    curve = panel.curves["tokens"]
    assert curve.opts["stepMode"] == "right"  # the wait from 103 s to 150 s is flat at the blocked value
    xs, ys = curve.getData()
    assert list(xs) == [1, 2, 3, 50, 51] and ys.max() == CLIP  # 180% is drawn at the clip line
    assert ys[3] == 1800 / 4000  # the raise is a drop, at the moment it happened
    assert len(panel.overflow_marks.getData()[0]) == 1
    label = panel.overflow_labels.get("tokens")
    assert label is None or not label.isVisible()  # the latest share is back under the top
    labels = {line.label.format: line.label.orthoPos for line in panel._event_lines}
    assert set(labels) == {"blocked", "limit changed", "resumed", "paused"}
    assert labels["limit changed"] != labels["resumed"]  # same moment: different heights
    assert max(labels.values()) < 0.8  # below the "100% stop" label and the legend
    listed = [label.text for _sample, label in panel.legend.items]
    assert listed == ["tokens", "goals"]  # no turn or time budget: not listed
    assert panel.nudge_marks.getData()[1][0] == 0.9


def test_a_share_still_past_the_top_says_how_far(qtbot):
    panel = BudgetPanel()
    qtbot.addWidget(panel)
    panel.reset(start=0.0)
    panel.add({"ts": 1, "tokens": 3000, "goals": 1, "limits": {"tokens": 1000, "max_goals": 25}, "purpose": {}})
    panel.redraw()
    assert panel.overflow_labels["tokens"].isVisible() and panel.overflow_labels["tokens"].toPlainText() == "tokens 300%"


def test_a_cleared_budget_stops_where_it_was_and_leaves_the_legend(qtbot):
    from goalgui.ui.budget_panel import CLIP

    panel = BudgetPanel()
    qtbot.addWidget(panel)
    panel.reset(start=0.0)
    panel.live_clock = lambda: 100.0
    panel.add({"ts": 1, "tokens": 3000, "goals": 1, "limits": {"tokens": 1000, "max_goals": 25}, "purpose": {}})
    panel.add({"ts": 2, "tokens": 1220, "goals": 1, "limits": {"tokens": 1000, "max_goals": 25}, "purpose": {}})
    panel.redraw()
    xs, ys = panel.curves["tokens"].getData()
    assert list(xs) == [1, 2, 100] and ys[1] == CLIP  # 122% is past the clip line too: drawn at it
    panel.add({"ts": 3, "tokens": 3000, "goals": 1, "limits": {"max_goals": 25}, "purpose": {}})  # cleared
    panel.redraw()
    xs, _ys = panel.curves["tokens"].getData()
    assert list(xs) == [1, 2]  # not extended to now
    assert [label.text for _s, label in panel.legend.items] == ["goals"]
    assert not panel.overflow_labels["tokens"].isVisible()
