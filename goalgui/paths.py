"""Every location goalgui reads or writes, decided in one place.

platformdirs gives the user's config, data and log dirs; GOALGUI_HOME=DIR moves
all three under DIR; `--journal FILE` names the journal alone and wins over both.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP = "goalgui"


def _home() -> Path | None:
    value = os.environ.get("GOALGUI_HOME")
    return Path(value).expanduser() if value else None


def config_dir() -> Path:
    home = _home()
    return home / "config" if home else Path(platformdirs.user_config_dir(APP))


def data_dir() -> Path:
    home = _home()
    return home / "data" if home else Path(platformdirs.user_data_dir(APP))


def log_dir() -> Path:
    home = _home()
    return home / "logs" if home else Path(platformdirs.user_log_dir(APP))


def journal_path(override: str | os.PathLike | None = None) -> Path:
    return Path(override).expanduser() if override else data_dir() / "journal.sqlite3"


def settings_path() -> Path:
    return config_dir() / "settings.toml"


def private_dir(path: Path, *, own: bool = True) -> Path:
    """`path` and any missing parents created 0700 (the user's alone). `own`: the folder is
    goalgui's (its data, log or config dir), so an existing one is tightened too; a folder the
    user named for a journal (`--journal /tmp/x.sqlite3`) is only created, never changed."""
    path = Path(path)
    missing = []
    walk = path
    while not walk.exists() and walk != walk.parent:
        missing.append(walk)
        walk = walk.parent
    for directory in reversed(missing):
        directory.mkdir(mode=0o700, exist_ok=True)
    if own:
        tighten(path, 0o700)
    return path


def private_file(path: Path, *, own_dir: bool = False) -> Path:
    """`path` created empty if missing, 0600 either way; its folder created 0700 if missing (and
    tightened if `own_dir`)."""
    path = Path(path)
    private_dir(path.parent, own=own_dir)
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))
    tighten(path, 0o600)
    return path


def tighten(path: Path, mode: int = 0o600) -> None:
    """Take away group and other access from a path of the user's own (another's, or a missing one, is
    left alone)."""
    try:
        st = path.stat()
        if st.st_uid == os.getuid() and st.st_mode & 0o077:
            path.chmod(st.st_mode & mode & 0o777)
    except OSError:
        pass

