"""Light and dark: follow the desktop's palette by default, or keep one the person chose.

"system" leaves the palette to the platform (and, on Qt 6.8 and later, to its colour-scheme
hint, so a desktop switching to dark at sunset switches goalgui too). "light" and "dark" set
the Fusion style's palette outright, which works on every platform, X11 without a desktop
theme included. Widgets that draw their own colours (the plots, the interrupted-run bar)
restyle themselves on the palette-change event that follows.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QStyleFactory

from ..settings import THEMES


def is_dark(palette: QPalette | None = None) -> bool:
    palette = palette or QGuiApplication.palette()
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def dark_palette() -> QPalette:
    p = QPalette()
    colours = {
        QPalette.ColorRole.Window: "#2b2b2b", QPalette.ColorRole.WindowText: "#e6e6e6",
        QPalette.ColorRole.Base: "#1f1f1f", QPalette.ColorRole.AlternateBase: "#2a2a2a",
        QPalette.ColorRole.ToolTipBase: "#3a3a3a", QPalette.ColorRole.ToolTipText: "#f0f0f0",
        QPalette.ColorRole.Text: "#e6e6e6", QPalette.ColorRole.Button: "#353535",
        QPalette.ColorRole.ButtonText: "#e6e6e6", QPalette.ColorRole.BrightText: "#ff6b6b",
        QPalette.ColorRole.Highlight: "#2f6ea5", QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.Link: "#6fb3ff", QPalette.ColorRole.PlaceholderText: "#8a8a8a",
    }
    for role, colour in colours.items():
        p.setColor(role, QColor(colour))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText, QPalette.ColorRole.WindowText):
        p.setColor(QPalette.ColorGroup.Disabled, role, QColor("#7a7a7a"))
    return p


def apply_theme(theme: str, app: QApplication | None = None) -> None:
    """Make the whole application light, dark, or whatever the system says."""
    if theme not in THEMES:
        raise ValueError(f"theme must be one of {', '.join(THEMES)}")
    app = app or QApplication.instance()
    if app is None:
        return
    hints = app.styleHints()
    if hasattr(hints, "setColorScheme"):  # Qt 6.8+: tell the platform theme as well
        hints.setColorScheme({"system": Qt.ColorScheme.Unknown, "light": Qt.ColorScheme.Light,
                              "dark": Qt.ColorScheme.Dark}[theme])
    if theme == "system":
        style = app.style()
        app.setPalette(style.standardPalette() if style is not None else QPalette())
        return
    if "Fusion" in QStyleFactory.keys():
        app.setStyle("Fusion")  # its palette is all that colours it, so the choice holds everywhere
    app.setPalette(dark_palette() if theme == "dark" else app.style().standardPalette())
