"""Labels for text that did not come from goalgui: shown as it is, never read as markup.

A QLabel guesses whether its text is rich text (Qt::AutoText), so a model's sub-goal or a
server's error that starts with a tag would be rendered as HTML: bold, links, images.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel


def plain_label(text: str = "") -> QLabel:
    label = QLabel(text)
    label.setTextFormat(Qt.TextFormat.PlainText)
    return label
