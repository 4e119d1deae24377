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

from .. import assets
from ..settings import THEMES


def is_dark(palette: QPalette | None = None) -> bool:
    palette = palette or QGuiApplication.palette()
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def dark_palette() -> QPalette:
    """The dark theme: the colours of resources/themes/dark.json, by palette role."""
    p = QPalette()
    colours = dict(assets.palette("dark"))
    disabled = colours.pop("Disabled", {})
    for name, colour in colours.items():
        p.setColor(getattr(QPalette.ColorRole, name), QColor(colour))
    for name, colour in disabled.items():
        p.setColor(QPalette.ColorGroup.Disabled, getattr(QPalette.ColorRole, name), QColor(colour))
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
