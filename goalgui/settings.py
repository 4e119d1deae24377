"""Settings (TOML in the user config dir) and API keys (the system keyring, never a file).

A provider profile names a kind (openai, anthropic, ollama), a base URL, a model
and timeouts. Its key is looked up in the keyring under the service `goalgui`
and the profile's name, then in GOALGUI_<PROFILE>_API_KEY, the variable the
profile names (`key_env`), and the provider's usual variable. Where no keyring
backend exists the key is refused with one line saying how to fix it; it is
never written in plain text.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import tomli_w

from . import paths
from .engine.lifecycle import InputError
from .engine.permissions import validate_permission_mode

SERVICE = "goalgui"
KINDS = ("openai", "anthropic", "ollama")
THEMES = ("system", "light", "dark")
PROMPT_PROFILES = ("standard", "small")
USUAL_KEY_ENV = {"openai": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "ollama": None}
NEEDS_KEY = {"openai": True, "anthropic": True, "ollama": False}
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class KeyringUnavailable(InputError):
    """No system keyring: the key cannot be stored safely."""


@dataclass
class Profile:
    """How to reach one provider. Holds no secret."""

    name: str
    kind: str
    base_url: str
    model: str
    key_env: str | None = None
    connect_timeout: float = 10.0
    read_timeout: float = 120.0
    # how an OpenAI-compatible server takes a JSON schema: json_schema (OpenAI, vLLM),
    # json_object (llama.cpp's server), none; auto tries json_schema and falls back once
    structured_output: str = "auto"
    embeddings_model: str | None = None
    # the whole request, body included: a server that sends a byte every few seconds never trips
    # the read timeout; generous, for slow local servers
    request_timeout: float = 600.0
    max_reply_mb: float = 16.0  # counted after decompression, as it streams in
    # the prompts the model behind the server is written for: "standard", or "small" for a model
    # of a few hundred million parameters (the embedded default's rules: plans from the request's
    # own steps, a tool call forced before a task settles, a few tools offered)
    prompt_profile: str = "standard"

    def validated(self) -> Profile:
        if not _NAME.match(self.name or ""):
            raise InputError(f"bad profile name {self.name!r}: letters, digits, '.', '_' and '-' only")
        if self.kind not in KINDS:
            raise InputError(f"unknown provider kind {self.kind!r}: use one of {', '.join(KINDS)}")
        if not re.match(r"^https?://[^\s/]+", self.base_url or ""):
            raise InputError(f"bad base URL {self.base_url!r}: it must start with http:// or https://")
        secret = url_secret(self.base_url)
        if secret:
            raise InputError(f"profile {self.name!r}: the base URL carries {secret}; a key belongs in the keyring "
                             f"(goalgui profiles add asks for it) or in an environment variable (--key-env VAR), "
                             f"never in a URL that is stored and logged")
        if not (self.model or "").strip():
            raise InputError("the profile needs a model name")
        for label, value, most in (("connect timeout", self.connect_timeout, 3600),
                                   ("read timeout", self.read_timeout, 3600),
                                   ("request timeout", self.request_timeout, 86400)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= most:
                raise InputError(f"{label} {value!r} must be between 0 and {most} seconds")
        if isinstance(self.max_reply_mb, bool) or not isinstance(self.max_reply_mb, (int, float)) \
                or not 0.01 <= self.max_reply_mb <= 1024:
            raise InputError(f"max reply size {self.max_reply_mb!r} must be between 0.01 and 1024 MB")
        if self.structured_output not in ("auto", "json_schema", "json_object", "none"):
            raise InputError("structured_output must be auto, json_schema, json_object or none")
        if self.prompt_profile not in PROMPT_PROFILES:
            raise InputError(f"prompt profile {self.prompt_profile!r}: use one of {', '.join(PROMPT_PROFILES)}")
        self.base_url = self.base_url.rstrip("/")
        return self


@dataclass
class Settings:
    """Everything goalgui remembers between runs, except secrets and runs themselves."""

    default_model: str = "local"
    default_permission_mode: str = "auto-edit"
    default_strategy: str = "goal-stack"
    journal: str | None = None
    theme: str = "system"  # system (follow the desktop's light or dark palette), light or dark
    confirm_timeout: float | None = None  # seconds before an unanswered confirmation is declined
    profiles: dict[str, Profile] = field(default_factory=dict)
    # the cursor's guards (seed 002), the [cursor] table; `goalgui run` flags override them per run
    evidence_gate: bool = True  # task_complete after tool calls needs a check to have run
    round_budget: int = 25  # work rounds per task before it fails forward
    unproductive_limit: int = 3  # unproductive rounds in a row before each escalation step

    def cursor_options(self, *, evidence_gate: bool | None = None, round_budget: int | None = None,
                       unproductive_limit: int | None = None) -> dict:
        """The cursor's guards for a new run (kept in its journal, so a resume keeps them): these
        settings, each overridden where a value is given; bad values raise InputError."""
        options = {"evidence_gate": self.evidence_gate if evidence_gate is None else evidence_gate,
                   "round_budget": self.round_budget if round_budget is None else round_budget,
                   "unproductive_limit": self.unproductive_limit if unproductive_limit is None else unproductive_limit}
        check_cursor_options(options)
        return options

    @classmethod
    def load(cls, path: Path | None = None) -> Settings:
        path = path or paths.settings_path()
        if not path.exists():
            return cls()
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise InputError(f"cannot read settings {path}: {exc}") from None
        names = {f.name for f in fields(Profile)}
        profiles = {}
        for name, raw in (data.get("profiles") or {}).items():
            if not isinstance(raw, dict):
                raise InputError(f"settings {path}: profile {name!r} is not a table")
            profiles[name] = Profile(name=name, **{k: v for k, v in raw.items() if k in names and k != "name"})
        general = data.get("general") or {}
        settings = cls(
            default_model=general.get("default_model", "local"),
            default_permission_mode=general.get("default_permission_mode", "auto-edit"),
            default_strategy=general.get("default_strategy", "goal-stack"),
            journal=general.get("journal"),
            theme=general.get("theme", "system"),
            confirm_timeout=general.get("confirm_timeout"),
            profiles=profiles,
        )
        cursor = data.get("cursor") or {}
        if not isinstance(cursor, dict):
            raise InputError(f"settings {path}: [cursor] is not a table")
        for name in ("evidence_gate", "round_budget", "unproductive_limit"):
            if name in cursor:
                setattr(settings, name, cursor[name])
        try:
            check_cursor_options(settings.cursor_options())
        except InputError as exc:
            raise InputError(f"settings {path}: {exc}") from None
        validate_permission_mode(settings.default_permission_mode)
        timeout = settings.confirm_timeout
        if timeout is not None and (not isinstance(timeout, (int, float)) or not 0 < timeout <= 86_400):
            raise InputError(f"settings {path}: confirm_timeout must be between 1 and 86400 seconds")
        if settings.theme not in THEMES:
            raise InputError(f"settings {path}: theme must be one of {', '.join(THEMES)}, not {settings.theme!r}")
        return settings

    def save(self, path: Path | None = None) -> None:
        """Write the settings atomically. No field of a profile is secret."""
        path = path or paths.settings_path()
        paths.private_dir(path.parent, own=path.parent == paths.config_dir())
        general = {k: v for k, v in {
            "default_model": self.default_model,
            "default_permission_mode": self.default_permission_mode,
            "default_strategy": self.default_strategy,
            "journal": self.journal,
            "theme": self.theme,
            "confirm_timeout": self.confirm_timeout,
        }.items() if v is not None}
        profiles = {
            name: {k: v for k, v in asdict(p).items() if k != "name" and v is not None}
            for name, p in sorted(self.profiles.items())
        }
        # 0600 before a byte is in it
        tmp = paths.private_file(path.with_suffix(f".tmp{os.getpid()}"), own_dir=path.parent == paths.config_dir())
        cursor = {"evidence_gate": self.evidence_gate, "round_budget": self.round_budget,
                  "unproductive_limit": self.unproductive_limit}
        tmp.write_text(tomli_w.dumps({"general": general, "cursor": cursor, "profiles": profiles}), encoding="utf-8")
        os.replace(tmp, path)

    def profile(self, name: str, kind: str | None = None) -> Profile:
        profile = self.profiles.get(name)
        if profile is None:
            raise InputError(f"no profile {name!r}: add it with 'goalgui profiles add {name} --kind ...'")
        if kind is not None and profile.kind != kind:
            raise InputError(f"profile {name!r} is a {profile.kind} profile, not {kind}")
        return profile


def check_cursor_options(options: dict) -> None:
    """One line for a guard out of its range."""
    if not isinstance(options.get("evidence_gate"), bool):
        raise InputError("evidence_gate must be true or false")
    for name, most in (("round_budget", 1000), ("unproductive_limit", 50)):
        value = options.get(name)
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= most:
            raise InputError(f"{name.replace('_', ' ')} {value!r} must be a whole number from 1 to {most}")


def _env_name(profile: str) -> str:
    return "GOALGUI_" + re.sub(r"[^A-Za-z0-9]", "_", profile).upper() + "_API_KEY"


def _keyring():
    import keyring
    import keyring.errors

    return keyring, keyring.errors


def keyring_problem() -> str | None:
    """None if a usable keyring backend exists, else one line saying how to get one."""
    keyring, _errors = _keyring()
    backend = keyring.get_keyring()
    priority = getattr(backend, "priority", 1)
    if type(backend).__module__.startswith("keyring.backends.fail") or priority <= 0:
        return ("no system keyring is available (backend: " + type(backend).__name__ + "); start and unlock "
                "one (GNOME Keyring or KWallet, via Secret Service), or give the key in an environment "
                "variable with --key-env VAR")
    return None


def store_key(profile: str, key: str) -> None:
    """Put a profile's key in the system keyring; refuse (one line) where there is none."""
    if not key:
        raise InputError("the key is empty")
    problem = keyring_problem()
    if problem:
        raise KeyringUnavailable(problem)
    keyring, errors = _keyring()
    try:
        keyring.set_password(SERVICE, profile, key)
    except errors.KeyringError as exc:
        raise KeyringUnavailable(f"the keyring refused the key: {exc}") from None


def delete_key(profile: str) -> None:
    keyring, errors = _keyring()
    try:
        keyring.delete_password(SERVICE, profile)
    except errors.PasswordDeleteError:
        pass
    except errors.KeyringError:
        pass


_SECRET_PARAMS = re.compile(r"(^|[-_])(key|token|secret|password|passwd|pwd|auth|signature|sig|credential)s?($|[-_])",
                            re.IGNORECASE)


def url_secret(url: str) -> str | None:
    """What in `url` is a credential ('a user name and password', "the query parameter 'api-key'"), or None."""
    from urllib.parse import parse_qsl, urlsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.username is not None or parts.password is not None:
        return "a user name and password"
    for name, _value in parse_qsl(parts.query, keep_blank_values=True):
        if _SECRET_PARAMS.search(name) or name.lower() in ("key", "apikey", "api_key", "code"):
            return f"the query parameter {name!r}"
    return None


def find_key(profile: Profile) -> str | None:
    """The key for a profile: the keyring, then GOALGUI_<PROFILE>_API_KEY, key_env, the usual variable."""
    return key_source(profile)[0]


def key_source(profile: Profile) -> tuple[str | None, str]:
    """(the key, where it was found) in the order `find_key` looks: what `profiles list` shows."""
    keyring, errors = _keyring()
    try:
        key = keyring.get_password(SERVICE, profile.name)
    except errors.KeyringError:
        key = None
    if key:
        return key, "keyring"
    for var in (_env_name(profile.name), profile.key_env, USUAL_KEY_ENV.get(profile.kind)):
        if var and os.environ.get(var):
            return os.environ[var], f"env {var}"
    return None, "none" + (f" (env {profile.key_env} is not set)" if profile.key_env else "")
