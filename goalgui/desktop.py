"""goalgui in the desktop's menu: its desktop entry, icons and AppStream metainfo installed under the
user's data dir (`$XDG_DATA_HOME`, by default ~/.local/share), and removed again.

The installed entry runs the goalgui that installed it, by its absolute path: a goalgui in a
virtual environment or a bundle is not on the desktop session's PATH. Only files goalgui wrote
are removed, so an uninstall never touches another program's icons.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from . import assets


def data_home() -> Path:
    value = os.environ.get("XDG_DATA_HOME")
    return Path(value) if value and os.path.isabs(value) else Path.home() / ".local" / "share"


def launcher() -> str:
    """The command that opens this goalgui's window: the bundle's executable, or the `goalgui`
    script beside this interpreter (a venv's), or the one on PATH."""
    if getattr(sys, "frozen", False):
        return str(Path(sys.executable).resolve())
    beside = Path(sys.executable).with_name("goalgui")
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("goalgui")
    if found is None:
        raise FileNotFoundError("no goalgui command to put in the desktop entry (install the package first)")
    return str(Path(found).resolve())


def targets(home: Path | None = None) -> dict[str, Path]:
    """Each installed file's resource name and where it goes."""
    home = home or data_home()
    out = {assets.desktop_entry(): home / "applications" / assets.desktop_entry(),
           assets.metainfo(): home / "metainfo" / assets.metainfo(),
           "goalgui.svg": home / "icons" / "hicolor" / "scalable" / "apps" / f"{assets.ICON_NAME}.svg"}
    for size in assets.ICON_SIZES:
        out[assets.icon_png(size)] = home / "icons" / "hicolor" / f"{size}x{size}" / "apps" / f"{assets.ICON_NAME}.png"
    return out


def _string(value: str) -> str:
    """A desktop entry string value (the spec's escapes: backslash, and no line breaks)."""
    if any(c in value for c in "\n\r\t"):
        raise ValueError("a path with a line break or tab cannot go in a desktop entry")
    return value.replace("\\", "\\\\")


def entry_text(command: str) -> str:
    """The desktop entry with Exec and TryExec naming `command`. Exec is quoted as the spec asks
    (inside double quotes `"`, `` ` ``, `$` and `\\` are escaped with a backslash, `%` is doubled),
    then written as a string value like TryExec (each backslash doubled again)."""
    reserved = set(' \t"\'\\><~|&;$*?#()`%')
    if any(c in reserved for c in command):
        quoted = '"' + "".join("\\" + c if c in '"`$\\' else c for c in command) + '"'
    else:
        quoted = command
    exec_value = _string(quoted.replace("%", "%%"))
    lines = []
    for line in assets.read_text(assets.desktop_entry()).splitlines():
        if line.startswith("Exec="):
            line = f"Exec={exec_value}"
        elif line.startswith("TryExec="):
            line = f"TryExec={_string(command)}"
        lines.append(line)
    return "\n".join(lines) + "\n"


def install(home: Path | None = None) -> list[Path]:
    """Write the entry, the metainfo and the icons; returns what was written."""
    entry = entry_text(launcher())
    written: list[Path] = []
    try:
        for name, target in targets(home).items():
            target.parent.mkdir(parents=True, exist_ok=True)
            temp = target.with_name(f".{target.name}.goalgui-new")
            try:
                if name == assets.desktop_entry():
                    temp.write_text(entry, encoding="utf-8")
                else:
                    temp.write_bytes(assets.find(name).read_bytes())
                os.chmod(temp, 0o644)
                os.replace(temp, target)  # whole or not at all: a menu never reads half an entry
            finally:
                if temp.exists():
                    temp.unlink()
            written.append(target)
    except OSError:
        for target in written:  # all of it or none: no entry without its icons
            target.unlink(missing_ok=True)
        raise
    _refresh(home or data_home())
    return written


def uninstall(home: Path | None = None) -> list[Path]:
    """Remove what `install` wrote (and nothing else); returns what was removed."""
    removed = []
    for target in targets(home).values():
        if target.is_file():
            target.unlink()
            removed.append(target)
    _refresh(home or data_home())
    return removed


def _refresh(home: Path) -> None:
    """Tell the desktop's caches, where the tools exist (a menu without them rescans on its own)."""
    for tool, arg in (("update-desktop-database", home / "applications"),
                      ("gtk-update-icon-cache", home / "icons" / "hicolor")):
        if shutil.which(tool) and arg.is_dir():
            try:  # best effort: a menu without the caches rescans on its own
                subprocess.run([tool, "-q", str(arg)] if tool == "update-desktop-database" else
                               [tool, "-q", "-t", str(arg)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               timeout=30, check=False)
            except (OSError, subprocess.SubprocessError):
                pass
