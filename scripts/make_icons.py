"""Renders goalgui/resources/goalgui.svg to the PNGs of the hicolor icon theme's usual sizes
(goalgui/resources/icons/hicolor/NxN/apps/goalgui.png), which the window, the task bar, the tray and
the desktop entry use. Run after editing the SVG:

    .venv/bin/python scripts/make_icons.py
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtGui import QGuiApplication

    from goalgui.assets import ICON_SIZES
    from goalgui.ui.icon import render_svg

    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])  # noqa: F841 (painting needs one)
    for size in ICON_SIZES:
        out = ROOT / "goalgui" / "resources" / "icons" / "hicolor" / f"{size}x{size}" / "apps" / "goalgui.png"
        out.parent.mkdir(parents=True, exist_ok=True)
        render_svg(size).save(str(out))
        print(f"make_icons: {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
