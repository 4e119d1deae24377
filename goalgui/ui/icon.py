"""goalgui's icon, drawn rather than shipped: a target (a goal) in the palette's highlight colour,
with a badge when something waits for the person."""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPen, QPixmap


def app_icon(waiting: bool = False) -> QIcon:
    icon = QIcon()
    for size in (16, 22, 32, 48, 64, 128):
        icon.addPixmap(_draw(size, waiting))
    return icon


def _draw(size: int, waiting: bool) -> QPixmap:
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    p = QPainter(pixmap)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    s = float(size)
    for i, colour in enumerate(("#2980b9", "#ffffff", "#2980b9", "#ffffff")):
        inset = s * (0.04 + 0.12 * i)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(QColor(colour))
        p.drawEllipse(QRectF(inset, inset, s - 2 * inset, s - 2 * inset))
    p.setBrush(QColor("#27ae60"))
    centre = s * 0.5
    p.drawEllipse(QRectF(centre - s * 0.1, centre - s * 0.1, s * 0.2, s * 0.2))
    if waiting:
        p.setBrush(QColor("#e67e22"))
        p.setPen(QPen(QColor("#ffffff"), max(1.0, s / 32)))
        p.drawEllipse(QRectF(s * 0.55, 0, s * 0.45, s * 0.45))
    p.end()
    return pixmap
