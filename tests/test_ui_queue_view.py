"""The task loop's queue view: the order the loop pops, the next task marked, the model's priority
beside the effective one, the histogram and its verdict, the health line, cheap and stable updates,
and hostile text kept harmless."""

from dataclasses import replace

import pytest
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QPalette

from goalgui.ui.queue_view import QueueTask, QueueView
from goalgui.ui.theme import dark_palette
from goalgui.ui.tree_model import GOAL_ID_ROLE

OUTLINE = "Draft the outline for all five parts"
PART_1 = "Draft part 1: material choices"
SOURCES = "List 6 sources on packaging regulation"


def blog_series() -> list[QueueTask]:
    """Seed 003's blog series at iteration 5: four done, one running, two waiting at the same priority
    (their texts in reverse alphabetical order: insertion order must still decide)."""
    return [
        QueueTask("g1", OUTLINE, 1, 1, 0, 0, "", "done", 1, True),
        QueueTask("g2", PART_1, 2, 2, 1, 1, OUTLINE, "done", 2, True),
        QueueTask("g3", SOURCES, 4, 4, 2, 1, OUTLINE, "done", 4, False),
        QueueTask("g4", "Draft part 2: supply chain impact", 2, 3, 3, 2, PART_1, "done", 3, True),
        QueueTask("g5", "Research consumer attitudes to packaging", 5, 9, 4, 2, PART_1, "pending"),
        QueueTask("g6", "Draft part 3: regulation", 2, 3, 5, 2, SOURCES, "running", 5),
        QueueTask("g7", "Investigate compostable film suppliers", 5, 9, 6, 2, SOURCES, "pending"),
    ]


@pytest.fixture
def view(qtbot):
    v = QueueView()
    qtbot.addWidget(v)
    v.resize(520, 420)
    return v


def ids(view) -> list[str]:
    m = view.model
    return [m.index(r, 0).data(GOAL_ID_ROLE) for r in range(m.rowCount())]


def cell(view, row: int, column: int):
    return view.model.index(row, column).data()


def test_running_first_then_pending_by_effective_priority_and_insertion_then_the_executed_latest_first(view):
    view.set_tasks(blog_series())
    assert ids(view) == ["g6", "g5", "g7", "g3", "g4", "g2", "g1"]
    tie = [QueueTask("a", "Write the summary", 5, 5, 1, 1, "x", "pending"),
           QueueTask("b", "Analyse the market", 5, 5, 2, 1, "x", "pending"),
           QueueTask("c", "Draft the intro", 3, 6, 0, 1, "x", "pending")]
    view.set_tasks(tie)  # "Write" was queued first: it runs first, whatever the alphabet says
    assert ids(view) == ["a", "b", "c"]
    view.set_tasks([*tie, QueueTask("d", "Skipped at the cap", 2, 2, 3, 2, "x", "skipped")])
    assert ids(view) == ["a", "b", "c", "d"]  # never ran: after the executed ones, in queue order


def test_the_next_task_is_marked_and_bold_and_only_it(view):
    view.set_tasks(blog_series())
    states = [cell(view, r, 4) for r in range(7)]
    assert states[:3] == ["▶ running", "○ next", "○ pending"] and states[3] == "✔ done"
    fonts = [view.model.index(r, 1).data(Qt.ItemDataRole.FontRole) for r in range(7)]
    assert fonts[1] is not None and fonts[1].bold() and all(f is None for i, f in enumerate(fonts) if i != 1)
    assert "(next to run)" in view.model.index(1, 1).data(Qt.ItemDataRole.ToolTipRole)
    settled = view.model.index(3, 1).data(Qt.ItemDataRole.ForegroundRole)
    assert settled is not None and view.model.index(0, 1).data(Qt.ItemDataRole.ForegroundRole) is None


def test_the_number_is_the_effective_priority_with_the_models_beside_it_when_they_differ(view):
    view.set_tasks(blog_series())
    assert cell(view, 0, 0) == "3 (2)" and cell(view, 1, 0) == "9 (5)" and cell(view, 3, 0) == "4"
    assert cell(view, 0, 2) == 2 and cell(view, 0, 3) == SOURCES and cell(view, 6, 3) == "—"
    tip = view.model.index(0, 0).data(Qt.ItemDataRole.ToolTipRole)
    assert "priority 3 after the adjustment (the model said 2)" in tip and "iteration 5" in tip
    assert f"created by: {SOURCES}" in tip
    assert "a description of work, not the work" in view.model.index(3, 0).data(Qt.ItemDataRole.ToolTipRole)


def test_the_histogram_counts_model_and_effective_priorities(view):
    view.set_tasks(blog_series())
    model, effective = view.chart.counts
    assert model == (1, 3, 0, 1, 2, 0, 0, 0, 0)
    assert effective == (1, 1, 2, 1, 0, 0, 0, 0, 2)
    bars = view.chart.model_bars.opts
    assert list(bars["x"]) == [1, 2, 4, 5] and list(bars["height"]) == [1, 3, 1, 2]  # empty ones not drawn
    assert "decorative" not in view.chart_note.text()  # 3 of 7 share priority 2: not over half


def test_decorative_priorities_are_called_so_only_past_half(view):
    def tasks(fives, others):
        return [QueueTask(f"t{i}", f"task {i}", 5 if i < fives else 3, 5, i, 1, "x", "pending")
                for i in range(fives + others)]

    view.set_tasks(tasks(2, 2))  # exactly half: not over
    assert "decorative" not in view.chart_note.text() and view.chart_note.styleSheet() == ""
    view.set_tasks(tasks(3, 2))
    assert view.chart_note.text() == "⚠ over half share priority 5: the model's priorities are decorative"
    assert "color" in view.chart_note.styleSheet()


def test_the_health_line_sums_up_and_flags_k_at_one_or_more(view):
    view.set_tasks(blog_series(), {"k": 0.86, "k_flag": False, "histogram_flag": False, "artefact_share": 0.8,
                                   "duplicates": [{"text": "Investigate packaging materials",
                                                   "match": "Research packaging materials", "similarity": 0.91},
                                                  {"text": "b", "match": "a", "similarity": 0.9}]})
    assert view.health_line.text() == "k 0.86 (created per completed) · artefacts 80% · 2 duplicates refused"
    assert view.health_line.styleSheet() == ""
    pair = "“Investigate packaging materials” ≈ “Research packaging materials” (0.91)"
    assert pair in view.health_line.toolTip()
    view.set_tasks(blog_series(), {"k": 1.0})  # the flag from k itself, k_flag missing
    assert view.health_line.text().startswith("⚠ k 1.00 ≥ 1") and "color" in view.health_line.styleSheet()
    view.set_tasks(blog_series(), {"histogram_flag": True, "artefact_share": None, "k": "n/a"})
    assert view.health_line.text() == "⚠ artefacts - · priorities flat"
    view.set_tasks(blog_series(), None)
    assert view.health_line.isHidden()


def test_an_identical_update_does_nothing(view, qtbot, monkeypatch):
    view.set_tasks(blog_series(), {"k": 0.5})
    redrawn = []
    monkeypatch.setattr(view.chart, "set_counts", lambda *a: redrawn.append(a))
    monkeypatch.setattr(view, "_show_health", lambda *a: redrawn.append(a))
    m = view.model
    for signal in (m.dataChanged, m.layoutChanged, m.rowsInserted, m.rowsRemoved, m.modelReset):
        with qtbot.assertNotEmitted(signal):
            view.set_tasks(blog_series(), {"k": 0.5})  # equal, not the same objects
    assert redrawn == []


def test_one_change_in_place_touches_one_row_and_a_move_keeps_the_selection_and_scroll(view, qtbot):
    tasks = [QueueTask(f"t{i:03}", f"task {i}", 5, 1 + i % 9, i, 1, "x", "pending") for i in range(200)]
    view.show()
    view.set_tasks(tasks)
    chosen = view.model.index(150, 0)
    goal = chosen.data(GOAL_ID_ROLE)
    view.table.setCurrentIndex(chosen)
    view.table.scrollTo(chosen)
    scroll = view.table.verticalScrollBar().value()
    assert scroll > 0
    top = ids(view)[0]
    renamed = [replace(t, text="task renamed") if t.goal_id == top else t for t in tasks]
    with qtbot.waitSignal(view.model.dataChanged) as changed, qtbot.assertNotEmitted(view.model.layoutChanged):
        view.set_tasks(renamed)
    assert changed.args[0].row() == changed.args[1].row() == 0
    moved = [replace(t, state="running") if t.goal_id == top else t for t in renamed]
    moved.append(QueueTask("new", "a new task", 1, 1, 200, 2, "x", "pending"))
    view.set_tasks(moved)
    selected = view.table.selectionModel().selectedRows()
    assert [i.data(GOAL_ID_ROLE) for i in selected] == [goal] and view.table.currentIndex().data(GOAL_ID_ROLE) == goal
    assert view.table.verticalScrollBar().value() == scroll
    view.set_tasks([t for t in moved if t.goal_id != "new"])  # a row that leaves
    assert view.table.currentIndex().data(GOAL_ID_ROLE) == goal and view.model.rowCount() == 200


def test_clicking_a_row_says_which_task(view, qtbot):
    view.set_tasks(blog_series())
    view.show()
    rect = view.table.visualRect(view.model.index(2, 1))
    with qtbot.waitSignal(view.taskChosen) as chosen:
        qtbot.mouseClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert chosen.args == ["g7"]


def test_hostile_text_is_written_out_and_does_not_stretch_the_layout(view):
    hostile = "\x1b]0;pwned\x07\x1b[2J" + "clear\nthe\rscreen\u202e" + "W" * 20_000
    view.set_tasks([*blog_series(), QueueTask("evil", hostile, 1, 1, 9, 1, "\x1b[31mred\x1b[0m <b>bold</b>",
                                              "pending")], {"k": 0.5, "duplicates": [
        {"text": "\x1b[2Jdup\n", "match": "<i>orig</i>", "similarity": 0.9}]})
    view.show()
    row = ids(view).index("evil")
    text, creator = cell(view, row, 1), cell(view, row, 3)
    for shown_text in (text, creator, view.model.index(row, 1).data(Qt.ItemDataRole.ToolTipRole),
                       view.health_line.toolTip()):
        assert not any(ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0 or c == "\u202e" for c in shown_text.replace("\n", ""))
    assert text.startswith("\\x1b]0;pwned\\x07\\x1b[2Jclear\\nthe\\rscreen\\u202e") and len(text) <= 240
    assert creator == "\\x1b[31mred\\x1b[0m <b>bold</b>" and "\n" not in text + creator
    tip = view.model.index(row, 3).data(Qt.ItemDataRole.ToolTipRole)
    assert "&lt;b&gt;bold&lt;/b&gt;" in tip and len(tip) < 3_000  # markup stays words; a huge text is cut
    assert "\\x1b[2Jdup\\n" in view.health_line.toolTip() and "&lt;i&gt;orig&lt;/i&gt;" in view.health_line.toolTip()
    heights = {view.table.visualRect(view.model.index(r, 1)).height() for r in range(view.model.rowCount())}
    assert len(heights) == 1  # one line like every other row
    assert view.table.horizontalScrollBar().maximum() == 0 and view.sizeHint().width() < 800


def test_a_dark_palette_restyles_the_plot_and_the_greyed_rows(view):
    view.set_tasks(blog_series())
    light_grey = view.model.grey.color().name()
    view.setPalette(dark_palette())  # the palette-change event restyles, as the theme switch does
    base = dark_palette().color(QPalette.ColorRole.Base).name()
    text = dark_palette().color(QPalette.ColorRole.WindowText).name()
    assert view.chart.backgroundBrush().color().name() == base
    for axis in ("left", "bottom"):
        assert view.chart.getAxis(axis).textPen().color().name() == text
    assert view.model.grey.color().name() not in (light_grey, text)
    assert view.model.index(0, 0).parent() == QModelIndex()


def test_the_model_keeps_qts_rules_through_moves_adds_and_removals(view, qtmodeltester):
    tasks = blog_series()
    view.set_tasks(tasks)
    qtmodeltester.check(view.model, force_py=True)
    tasks[4] = replace(tasks[4], state="running", iteration=6)
    tasks[5] = replace(tasks[5], state="done", artefact=True)
    view.set_tasks([*tasks[1:], QueueTask("g8", "Draft part 4: reuse", 2, 3, 7, 2, PART_1, "pending")])
    qtmodeltester.check(view.model, force_py=True)
    assert ids(view) == ["g5", "g8", "g7", "g6", "g3", "g4", "g2"]
