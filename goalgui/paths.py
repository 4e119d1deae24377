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
