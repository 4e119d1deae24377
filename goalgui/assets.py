"""goalgui's resources (icons, the desktop entry, the AppStream metainfo, the theme's palettes),
found the one way that works in a checkout, an installed wheel and a PyInstaller bundle alike:
`importlib.resources` on the package's `resources` folder.

They live inside the package rather than in a top-level `resources/` (as the design card first
drew it) because package data is the only place `importlib.resources` finds: a folder beside the
package is in a checkout but in neither a wheel nor a bundle, and a copy step would make two
versions of every file.
"""

from __future__ import annotations

import contextlib
import json
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

APP_ID = "dev.goalgui.goalgui"  # the desktop entry's and the metainfo's id (reverse DNS)
ICON_NAME = "goalgui"
ICON_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)


def root() -> Traversable:
    return resources.files("goalgui") / "resources"


def find(name: str) -> Traversable:
    """A resource by its path under `resources/` ("goalgui.svg", "themes/dark.json"); a missing one
    is an error naming it (a broken install, not a condition to carry on in)."""
    item = root().joinpath(*name.split("/"))
    if not item.is_file():
        raise FileNotFoundError(f"goalgui's resource {name} is missing from {root()} (a broken install?)")
    return item


def read_text(name: str) -> str:
    return find(name).read_text(encoding="utf-8")


def icon_png(size: int) -> str:
    return f"icons/hicolor/{size}x{size}/apps/{ICON_NAME}.png"


def desktop_entry() -> str:
    return f"{APP_ID}.desktop"


def metainfo() -> str:
    return f"{APP_ID}.metainfo.xml"


def palette(name: str) -> dict[str, str]:
    """A theme's colours by Qt palette role name ("Window": "#2b2b2b"); `Disabled` holds the
    disabled group's."""
    colours = json.loads(read_text(f"themes/{name}.json"))
    if not isinstance(colours, dict):
        raise ValueError(f"themes/{name}.json is not a palette")
    return colours


@contextlib.contextmanager
def on_disk(name: str):
    """A real file for a resource (Qt and the desktop need paths): itself in a checkout, a wheel
    or a bundle; a temporary copy if the package is imported from a zip."""
    with resources.as_file(find(name)) as path:
        yield Path(path)
