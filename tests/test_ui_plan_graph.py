"""The plan graph: columns by longest path, an arrow per dependency, recolouring without relayout,
clicks, versions, bad plans, untrusted text, the pulse, and both themes."""

from dataclasses import replace

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QPainterPathStroker, QPen

from goalgui.ui.plan_graph import BOX_W, COL_GAP, MARGIN, GraphStep, PlanGraph, layers
from goalgui.ui.theme import dark_palette

S = GraphStep


def diamond(**states) -> list[GraphStep]:
    """1 → 2, 3 → 4; 1 → 5; 4, 5 → 6 (5 sits in column 1 though it could wait; 6 in column 3)."""
    deps = {1: (), 2: (1,), 3: (1,), 4: (2, 3), 5: (1,), 6: (4, 5)}
    return [S(n, f"step {n} goal", "read_file" if n % 2 else None, d, states.get(f"s{n}", "pending"), f"g{n}")
            for n, d in deps.items()]


@pytest.fixture
def graph(qtbot):
    g = PlanGraph()
    qtbot.addWidget(g)
    g.resize(600, 320)
    g.show()
    qtbot.waitExposed(g)
    return g


def box(graph, step: int):
    return next(b for b in graph.boxes if b.step.step == step)


def click(qtbot, graph, b):
    point = graph.view.mapFromScene(b.sceneBoundingRect().center())
    qtbot.mouseClick(graph.view.viewport(), Qt.MouseButton.LeftButton, pos=point)


def test_columns_follow_the_longest_path(graph):
    graph.set_versions([diamond()])
    assert layers(diamond()) == [0, 1, 1, 2, 1, 3]
    for step, column in {1: 0, 2: 1, 3: 1, 4: 2, 5: 1, 6: 3}.items():
        b = box(graph, step)
        assert b.layer == column
        assert b.pos().x() == MARGIN + column * (BOX_W + COL_GAP)
    column_1 = sorted((box(graph, n).pos().y(), n) for n in (2, 3, 5))
    assert len({y for y, _ in column_1}) == 3  # stacked, not on top of each other
    assert not any(a.sceneBoundingRect().intersects(b.sceneBoundingRect())
                   for a in graph.boxes for b in graph.boxes if a is not b)


def test_an_arrow_for_every_dependency(graph):
    graph.set_versions([diamond()])
    arrows = sorted((a.source.step.step, a.target.step.step) for a in graph.arrows)
    assert arrows == [(1, 2), (1, 3), (1, 5), (2, 4), (3, 4), (4, 6), (5, 6)]
    for a in graph.arrows:  # from the dependency's right edge to the step's left
        start, end = a.path.elementAt(0), a.path.currentPosition()
        assert start.x == a.source.sceneBoundingRect().right() - 3
        assert end.x() == a.target.pos().x()


def test_a_long_arrow_passes_between_boxes_not_under_them(graph):
    steps = [S(1, "a", None, (), "done"), S(2, "b", None, (1,), "done"), S(3, "c", None, (2,), "done"),
             S(4, "d", None, (3, 1), "pending")]  # 1 → 4 skips the columns of 2 and 3, in its straight way
    graph.set_versions([steps])
    arrow = next(a for a in graph.arrows if (a.source.step.step, a.target.step.step) == (1, 4))
    line = QPainterPathStroker(QPen(Qt.GlobalColor.black, 1.3)).createStroke(arrow.path)  # the line, not its area
    for b in (box(graph, 2), box(graph, 3)):
        assert not line.intersects(b.sceneBoundingRect())


def test_a_new_state_recolours_without_a_new_layout(graph):
    graph.set_versions([diamond(s1="done", s2="running")])
    positions = [b.pos() for b in graph.boxes]
    layouts, items = graph.layouts, list(graph.boxes)
    before = box(graph, 2).fill().name()
    graph.set_versions([diamond(s1="done", s2="done")])
    assert box(graph, 2).fill().name() != before
    assert "state: done" in box(graph, 2).toolTip()
    assert graph.layouts == layouts and graph.boxes == items
    assert [b.pos() for b in graph.boxes] == positions
    graph.set_versions([diamond(s1="done", s2="done")])  # the same data: nothing at all
    assert graph.layouts == layouts
    changed = diamond(s1="done", s2="done")
    changed[3] = replace(changed[3], text="a new goal for step 4")
    graph.set_versions([changed])  # a different shape is laid out again
    assert graph.layouts == layouts + 1


def test_clicking_a_box_names_its_goal(qtbot, graph):
    graph.set_versions([diamond()])
    with qtbot.waitSignal(graph.stepChosen) as chosen:
        click(qtbot, graph, box(graph, 4))
    assert chosen.args == ["g4"]


def test_the_selector_shows_each_version(qtbot, graph):
    v1 = [S(1, "search the web", "web_search", (), "done", "a1"), S(2, "old second step", None, (1,), "failed", "a2")]
    graph.set_versions([v1])
    assert graph.heading() == "plan v1" and not graph.selector.isEnabled()
    v2 = [v1[0], S(3, "new second step", "read_file", (1,), "running", "b3")]
    graph.set_versions([v1, v2])
    assert graph.heading() == "plan v2 of 2 (replanned once)" and graph.selector.isEnabled()
    assert "new second step" in box(graph, 3).toolTip()
    graph.selector.setCurrentIndex(0)
    graph.selector.activated.emit(0)  # as the operator's pick does
    assert graph.heading() == "plan v1 of 2 (replanned once)"
    assert "old second step" in box(graph, 2).toolTip() and len(graph.boxes) == 2
    graph.set_versions([v1, [v2[0], replace(v2[1], state="done")]])  # a live update keeps the pick
    assert graph.heading().startswith("plan v1")
    graph.set_versions([v1, v2, v2])  # a replan shows the newest
    assert graph.heading() == "plan v3 of 3 (replanned twice)"
    graph.set_versions([v1, v2, v2], shown=1)
    assert graph.heading() == "plan v2 of 3 (replanned twice)"


def test_a_bad_dependency_is_left_out(graph):
    steps = [S(1, "a", None, (), "done"), S(2, "b", None, (9, 1), "pending"), S(3, "c", None, (5, 3), "pending"),
             S(4, "d", None, (2, 2), "pending")]
    graph.set_versions([steps])
    assert [b.layer for b in graph.boxes] == [0, 1, 0, 2]  # 9 missing, 5 forward, 3 itself, 2 twice
    assert sorted((a.source.step.step, a.target.step.step) for a in graph.arrows) == [(1, 2), (2, 4)]
    assert "depends on: 9, 1" in box(graph, 2).toolTip()
    graph.set_versions([[]])  # an empty version, and no plan at all
    graph.set_versions([])
    assert graph.boxes == [] and graph.heading() == "no plan"


def test_untrusted_text_is_sanitised(graph):
    evil = "Read \x1b[31mred\x1b[0m\x07 file\u202e<b>bold</b>\nnext line"
    graph.set_versions([[S(1, evil, "read\x1b]0;title\x07", (), "running", "g1")]])
    b = graph.boxes[0]
    tip = b.toolTip()
    assert "\x1b" not in tip and "\x07" not in tip and "\u202e" not in tip
    assert "\\x1b[31mred" in tip and "\\u202e" in tip
    assert "<b>" not in tip and "&lt;b&gt;" in tip  # escaped, not rendered as markup
    graph.grab()  # painted: the box's lines are the sanitised text
    assert not any("\x1b" in line or "\x07" in line for line in b.lines())


def test_the_pulse_runs_only_while_a_step_runs(qtbot, graph):
    graph.set_versions([diamond(s1="done", s2="done")])
    assert not graph.pulse.isActive()
    graph.set_versions([diamond(s1="done", s2="done", s3="running")])
    assert graph.pulse.isActive()
    qtbot.waitUntil(lambda: graph._look.pulse > 0.2)
    graph.hide()
    assert not graph.pulse.isActive()
    graph.show()
    assert graph.pulse.isActive()
    graph.set_versions([diamond(s1="done", s2="done", s3="failed")])
    assert not graph.pulse.isActive()


def test_dark_colours_differ_from_light(graph):
    graph.set_versions([diamond(s1="done", s2="running", s3="failed", s4="skipped", s5="abandoned")])
    states = [box(graph, n) for n in range(1, 7)]
    light = [b.fill().name() for b in states]
    assert len(set(light)) == 6  # one fill per state
    layouts = graph.layouts
    graph.setPalette(dark_palette())
    dark = [b.fill().name() for b in states]
    assert len(set(dark)) == 6 and not set(dark) & set(light)
    assert all(b.fill().lightness() < 128 for b in states) and all(b.look.text.lightness() > 200 for b in states)
    assert graph.layouts == layouts
