"""The window in a small screen and in the dark theme (issue 11, items 18 and 19), on real widgets."""

from PySide6.QtGui import QPalette

from goalgui.engine import Run

from .test_ui_window import fast_rehearsal, window  # noqa: F401 (fixture)


def test_at_900x600_the_status_column_and_the_plot_keep_their_room(window, qloop, journal, qtbot):
    run = Run.create("Produce a market analysis of UK meal-kit services", fast_rehearsal(), sink=journal)
    qloop.run_until_complete(run.drive())
    window.resize(900, 600)
    window.show_journaled(run.run_id)
    qtbot.waitUntil(lambda: window.width() == 900 and window.height() == 600)
    qtbot.wait(50)
    header = window.tree.header()
    status_right = header.sectionViewportPosition(3) + header.sectionSize(3)
    assert not header.isSectionHidden(3) and status_right <= window.tree.viewport().width()
    assert header.visualIndex(3) == 1  # right after the goal
    assert header.isSectionHidden(1)  # the parent folds away first; the detail pane still shows it
    assert window.budgets.plot.height() >= 110
    assert window.chat_log.height() >= 3 * window.chat_log.fontMetrics().lineSpacing()
    window.resize(1600, 1000)
    qtbot.waitUntil(lambda: window.width() == 1600)
    qtbot.wait(50)
    assert not header.isSectionHidden(1) and header.sectionSize(0) > 330  # the goal column stretches


def test_the_plot_follows_a_switch_to_the_dark_theme_at_once(window, qtbot):
    from goalgui.ui.theme import apply_theme

    try:
        apply_theme("dark")
        qtbot.waitUntil(lambda: window.palette().color(QPalette.ColorRole.Base).lightness() < 100)
        background = window.budgets.plot.backgroundBrush().color()
        axis = window.budgets.plot.getAxis("left").textPen().color()
        assert background.lightness() < 100 and axis.lightness() > 150
        apply_theme("light")
        qtbot.waitUntil(lambda: window.budgets.plot.backgroundBrush().color().lightness() > 150)
    finally:
        apply_theme("light")
