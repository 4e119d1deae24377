"""goalgui's icon: the PNGs in resources (rendered from its SVG), with a badge drawn on when
something waits for the person (the task bar and the tray show it)."""

from __future__ import annotations

from functools import lru_cache

from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QIcon, QImage, QPainter, QPen, QPixmap

from .. import assets


def app_icon(waiting: bool = False) -> QIcon:
    icon = QIcon()
    for size in assets.ICON_SIZES:
        pixmap = QPixmap()
        pixmap.loadFromData(_png(size), "PNG")
        if waiting:
            _badge(pixmap)
        icon.addPixmap(pixmap)
    return icon


@lru_cache(maxsize=None)
def _png(size: int) -> bytes:
    return assets.find(assets.icon_png(size)).read_bytes()


def _badge(pixmap: QPixmap) -> None:
    s = float(pixmap.width())
    p = QPainter(pixmap)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.setBrush(QColor("#e67e22"))
    p.setPen(QPen(QColor("#ffffff"), max(1.0, s / 32)))
    p.drawEllipse(QRectF(s * 0.55, 0, s * 0.45, s * 0.45))
    p.end()


def render_svg(size: int) -> QImage:
    """The icon's SVG drawn at `size` (what scripts/make_icons.py saves as each PNG)."""
    from PySide6.QtCore import Qt
    from PySide6.QtSvg import QSvgRenderer

    with assets.on_disk("goalgui.svg") as path:
        renderer = QSvgRenderer(str(path))
    if not renderer.isValid():
        raise ValueError("goalgui.svg is not a valid SVG")
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter)
    painter.end()
    return image
