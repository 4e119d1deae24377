"""The compare view: two real runs with known differences, through the journal and compare_runs, shown
as a table (kinds, totals, the first divergence selected, the filter, double-click to a goal); 20,000
rows at once; tints for a dark palette; and a goal's text kept plain."""

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette

from goalgui.cli_compare import compare_runs
from goalgui.compare import CHANGED_RESULT, KINDS, MATCHED, ONLY_A, ONLY_B
from goalgui.ui.compare_view import COLUMNS, CompareView
from goalgui.ui.theme import dark_palette

from .test_compare import OBJECTIVE, scripted, two_runs


@pytest.fixture
def view(qtbot):
    v = CompareView()
    qtbot.addWidget(v)
    v.resize(900, 500)
    return v


@pytest.fixture
def compared(qloop, journal):
    a, b = qloop.run_until_complete(two_runs(
        journal,
        scripted(["List what goes in", "Choose a bin", "Turn the heap"]),
        scripted(["List what goes in", "Pick a site", "Turn the heap"],
                 results={"List what goes in": "Greens and browns: peel, leaves, card; no meat."})))
    data, _text = compare_runs(journal, a.run_id, b.run_id)
    return a, b, data


def column(view, c: int) -> list[str]:
    m = view.model
    return [m.index(r, c).data() for r in range(m.rowCount())]


def selected_row(view) -> int | None:
    rows = view.table.selectionModel().selectedRows()
    return rows[0].row() if rows else None


def synthetic(n: int) -> dict:
    """n rows in a deep-ish tree, every fifth one differing, as compare.comparison would give them."""
    def side(i):
        return {"id": f"g{i + 1}", "status": "done", "tokens": 1000 + i, "calls": 3, "seconds": 1.25}

    rows = []
    for i in range(n):
        kind = KINDS[1 + (i // 5) % 4] if i % 5 == 4 else MATCHED  # the four kinds that differ, in turn
        rows.append({"kind": kind, "depth": min(i, 1 + i % 6), "text": f"Draft section {i} of the report",
                     "a": None if kind == ONLY_B else side(i), "b": None if kind == ONLY_A else side(i)})
    counts = {k: sum(r["kind"] == k for r in rows) for k in KINDS}
    first = next(r for r in rows if r["kind"] != MATCHED)
    totals = {"state": "complete", "goals": n, "tokens": 1_234_567, "calls": 3 * n, "seconds": 812.5}
    return {"a": {"run_id": "run-a", **totals}, "b": {"run_id": "run-b", **totals}, "counts": counts,
            "first_divergence": {"kind": first["kind"], "text": first["text"], "a": "g5", "b": "g5"}, "rows": rows}


def test_two_runs_are_shown_with_their_kinds_totals_and_first_divergence(view, compared):
    a, b, data = compared
    view.show_comparison(data)
    assert view.model.rowCount() == 5 and view.model.columnCount() == len(COLUMNS)
    assert column(view, 1) == [MATCHED, CHANGED_RESULT, ONLY_A, ONLY_B, MATCHED]
    goals = [text.replace("\u2003", "") for text in column(view, 0)]
    assert goals == [OBJECTIVE, "List what goes in", "Choose a bin", "Pick a site", "Turn the heap"]
    assert column(view, 0)[1].startswith("\u2003\u2003")  # a child is indented, the root is not
    assert not column(view, 0)[0].startswith("\u2003")
    assert view.model.index(2, 6).data() == "—" and view.model.index(3, 2).data() == "—"  # the side missing
    assert view.model.index(2, 2).data() == "done" and view.model.index(3, 6).data() == "done"
    tokens = a.record.goals["g3"].tokens
    assert view.model.index(2, 3).data() == f"{tokens:,}"
    text = view.header.text()
    assert a.run_id in text and b.run_id in text
    assert f"{data['a']['tokens']:,} tokens" in text and f"{data['b']['tokens']:,} tokens" in text
    assert "Goals: 2 matched, 0 changed status, 1 changed result, 1 only in A, 1 only in B" in text
    assert "First divergence (changed result): List what goes in" in text
    assert view.header.textFormat() == Qt.TextFormat.PlainText
    assert view.first_divergence_row() == 1 and selected_row(view) == 1
    assert view.filter_box.currentText() == "all goals"


def test_the_filter_hides_matched_rows_and_keeps_the_selection(view, compared):
    _a, _b, data = compared
    view.show_comparison(data)
    view.table.setCurrentIndex(view.model.index(3, 0))  # "Pick a site"
    view.filter_box.setCurrentIndex(view.filter_box.findText("differences only"))
    assert column(view, 1) == [CHANGED_RESULT, ONLY_A, ONLY_B]
    assert view.first_divergence_row() == 0
    assert selected_row(view) == 2 and view.model.index(2, 0).data().endswith("Pick a site")
    view.set_differences_only(False)
    assert view.model.rowCount() == 5 and selected_row(view) == 3


def test_a_double_click_chooses_the_goal_of_a_or_else_of_b(view, compared, qtbot):
    _a, _b, data = compared
    view.show()
    view.show_comparison(data)
    qtbot.waitExposed(view)
    b_only = data["rows"][3]["b"]["id"]
    for row, expected in ((2, ("a", "g3")), (3, ("b", b_only)), (1, ("a", "g2"))):
        rect = view.table.visualRect(view.model.index(row, 0))
        with qtbot.waitSignal(view.goalChosen, timeout=2000) as blocker:
            qtbot.mouseClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
            qtbot.mouseDClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
        assert tuple(blocker.args) == expected


def test_a_run_against_itself_says_the_trees_are_the_same(view, qloop, journal):
    a, _b = qloop.run_until_complete(two_runs(journal, scripted(["One part", "Another part"]), scripted(["x"])))
    data, _text = compare_runs(journal, a.run_id, a.run_id)
    view.show_comparison(data)
    assert "The trees are the same" in view.header.text()
    assert view.first_divergence_row() is None and selected_row(view) is None
    assert all(view.model.index(r, 0).data(Qt.ItemDataRole.BackgroundRole) is None
               for r in range(view.model.rowCount()))  # matched rows are plain
    view.set_differences_only(True)
    assert view.model.rowCount() == 0


def test_twenty_thousand_rows_load_and_filter(view, qtbot):
    data = synthetic(20_000)
    view.show()
    view.show_comparison(data)
    qtbot.waitExposed(view)
    view.repaint()
    assert view.model.rowCount() == 20_000
    assert view.first_divergence_row() == 4 and selected_row(view) == 4
    differing = sum(n for k, n in data["counts"].items() if k != MATCHED)
    assert differing == 4_000
    view.set_differences_only(True)
    assert view.model.rowCount() == differing
    assert MATCHED not in {view.model.kind(r) for r in range(view.model.rowCount())}
    last = view.model.rowCount() - 1
    assert view.model.source_row(last) == 19_999
    assert view.model.index(last, 0).data().endswith("section 19999 of the report")
    view.set_differences_only(False)
    assert view.model.rowCount() == 20_000


def test_a_dark_palette_gives_other_tints_and_the_text_stays_readable(view, compared):
    _a, _b, data = compared
    view.show_comparison(data)

    def tints():
        return [view.model.index(r, 0).data(Qt.ItemDataRole.BackgroundRole) for r in range(5)]

    light = tints()
    assert light[0] is None and light[4] is None and all(t is not None for t in light[1:4])
    assert len({t.color().name() for t in light[1:4]}) == 3  # one colour per kind
    view.restyle(dark_palette())
    dark = tints()
    assert dark[0] is None and all(d.color() != t.color() for d, t in zip(dark[1:4], light[1:4]))
    text = dark_palette().color(QPalette.ColorRole.Text)
    for d, t in zip(dark[1:4], light[1:4]):
        assert d.color().lightness() < 128 < t.color().lightness()  # deep under light text, pale under dark
        assert abs(d.color().lightness() - text.lightness()) > 100
    view.restyle(view.style().standardPalette())
    view.setPalette(dark_palette())  # the palette-change event restyles too, as the theme switch does
    assert [t.color() for t in tints()[1:4]] == [d.color() for d in dark[1:4]]
    view.restyle(view.style().standardPalette())
    assert [t.color() for t in tints()[1:4]] == [t.color() for t in light[1:4]]


def test_a_goals_text_is_plain_never_markup(view):
    data = synthetic(10)
    hostile = "<b>bold</b> <img src='x'>\n\x1b[31mred"
    data["rows"][4]["text"] = hostile
    data["first_divergence"]["text"] = hostile
    data["a"]["run_id"] = "<i>run</i>"
    view.show_comparison(data)
    cell = view.model.index(4, 0).data()
    assert "<b>bold</b>" in cell and "\n" not in cell and "\x1b" not in cell  # shown as written, controls spelled
    tip = view.model.index(4, 0).data(Qt.ItemDataRole.ToolTipRole)
    assert "<b>" not in tip and "&lt;b&gt;bold&lt;/b&gt;" in tip
    assert "<b>bold</b>" in view.header.text() and "<i>run</i>" in view.header.text()
    assert view.header.textFormat() == Qt.TextFormat.PlainText
