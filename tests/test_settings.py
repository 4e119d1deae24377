"""Profiles in TOML, keys in the keyring (never in a file goalgui writes), and the profiles command."""

import json
import os
import subprocess

import keyring
import keyring.backends.fail
import pytest

from goalgui import paths
from goalgui.engine.lifecycle import InputError
from goalgui.settings import KeyringUnavailable, Profile, Settings, find_key, store_key

from .conftest import cli_env, goalgui_cmd
from .httpserver import ScriptedServer
from .keyring_backend import FileKeyring
from .test_providers import by_purpose, openai_reply

KEY = "sk-live-PLANTED-9f8e7d6c5b4a3928"


@pytest.fixture
def test_keyring(tmp_path, monkeypatch):
    monkeypatch.setenv("TEST_KEYRING_FILE", str(tmp_path / "keyring.json"))
    previous = keyring.get_keyring()
    keyring.set_keyring(FileKeyring())
    yield
    keyring.set_keyring(previous)


def test_settings_round_trip_without_secrets(isolated_home, test_keyring):
    settings = Settings()
    settings.profiles["work"] = Profile("work", "openai", "https://api.example.test/v1/", "gpt-x").validated()
    settings.save()
    store_key("work", KEY)
    loaded = Settings.load()
    assert loaded.profile("work", "openai").base_url == "https://api.example.test/v1"
    assert KEY not in paths.settings_path().read_text()
    assert find_key(loaded.profile("work")) == KEY


def test_key_lookup_order(isolated_home, test_keyring, monkeypatch):
    profile = Profile("team-a", "anthropic", "https://x.test", "m", key_env="MY_KEY").validated()
    monkeypatch.setenv("ANTHROPIC_API_KEY", "usual")
    assert find_key(profile) == "usual"
    monkeypatch.setenv("MY_KEY", "named")
    assert find_key(profile) == "named"
    monkeypatch.setenv("GOALGUI_TEAM_A_API_KEY", "goalgui")
    assert find_key(profile) == "goalgui"
    store_key("team-a", "keyring")
    assert find_key(profile) == "keyring"


def test_no_keyring_backend_is_refused_in_one_line(isolated_home):
    previous = keyring.get_keyring()
    keyring.set_keyring(keyring.backends.fail.Keyring())
    try:
        with pytest.raises(KeyringUnavailable) as caught:
            store_key("work", KEY)
        assert "no system keyring" in str(caught.value) and "--key-env" in str(caught.value)
        assert "\n" not in str(caught.value)
        assert find_key(Profile("work", "openai", "https://x.test", "m")) is None
    finally:
        keyring.set_keyring(previous)


@pytest.mark.parametrize("change,message", [
    ({"name": "bad name!"}, "bad profile name"),
    ({"kind": "gemini"}, "unknown provider kind"),
    ({"base_url": "ftp://x"}, "bad base URL"),
    ({"model": " "}, "needs a model"),
    ({"read_timeout": 0}, "read timeout"),
])
def test_bad_profiles_are_refused(change, message):
    fields = {"name": "p", "kind": "openai", "base_url": "http://x.test", "model": "m", **change}
    with pytest.raises(InputError, match=message):
        Profile(**fields).validated()


def test_a_broken_settings_file_is_one_clear_error(isolated_home):
    paths.settings_path().parent.mkdir(parents=True)
    paths.settings_path().write_text("[profiles\nnope")
    with pytest.raises(InputError, match="cannot read settings"):
        Settings.load()


@pytest.mark.parametrize("prompt_profile", ["tiny", ""])
def test_a_prompt_profile_is_standard_or_small(prompt_profile):
    assert Profile("p", "openai", "http://x.test", "m", prompt_profile="small").validated().prompt_profile == "small"
    with pytest.raises(InputError, match="prompt profile"):
        Profile("p", "openai", "http://x.test", "m", prompt_profile=prompt_profile).validated()


def test_the_cursor_guards_are_settings_a_run_can_override(isolated_home):
    settings = Settings(round_budget=7, unproductive_limit=2, evidence_gate=False)
    settings.save()
    again = Settings.load()
    assert again.cursor_options() == {"evidence_gate": False, "round_budget": 7, "unproductive_limit": 2}
    assert again.cursor_options(round_budget=3, evidence_gate=True) == {
        "evidence_gate": True, "round_budget": 3, "unproductive_limit": 2}
    assert "[cursor]" in paths.settings_path().read_text()
    for bad in (0, 1001, True, 2.5):
        with pytest.raises(InputError, match="round budget"):
            again.cursor_options(round_budget=bad)
    paths.settings_path().write_text("[cursor]\nunproductive_limit = 0\n")
    with pytest.raises(InputError, match="unproductive limit 0 must be a whole number from 1 to 50"):
        Settings.load()
    paths.settings_path().write_text("[cursor]\nevidence_gate = \"yes\"\n")
    with pytest.raises(InputError, match="evidence_gate must be true or false"):
        Settings.load()


@pytest.fixture
def cli(tmp_path):
    home = tmp_path / "home"
    env = cli_env(home)
    env["PYTHON_KEYRING_BACKEND"] = "tests.keyring_backend.FileKeyring"
    env["TEST_KEYRING_FILE"] = str(tmp_path / "keyring.json")

    def run(*args, extra_env=None):
        return subprocess.run(goalgui_cmd(*args), cwd=tmp_path, env={**env, **(extra_env or {})},
                              capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)

    run.home, run.tmp, run.env = home, tmp_path, env
    return run


def test_profiles_command(cli):
    with ScriptedServer() as server:
        server.default = ("reply", 200, openai_reply("OK"))
        out = cli("profiles", "add", "mine", "--kind", "openai", "--base-url", server.url, "--model", "m1",
                  "--key-env", "MINE_KEY")
        assert out.returncode == 0, out.stderr
        listed = cli("profiles", "list").stdout
        assert "mine" in listed and "env MINE_KEY" in listed
        out = cli("profiles", "test", "mine", extra_env={"MINE_KEY": KEY})
        assert out.returncode == 0, out.stderr
        assert "answered in" in out.stdout and "gpt-test" in out.stdout
        assert server.requests[-1]["headers"]["Authorization"] == f"Bearer {KEY}"
        server.default = ("reply", 401, {"error": {"message": "bad key"}})
        out = cli("profiles", "test", "mine", extra_env={"MINE_KEY": KEY})
        assert out.returncode == 2 and "authentication failed" in out.stderr and KEY not in out.stderr
    out = cli("profiles", "add", "other", "--kind", "anthropic", "--base-url", "https://a.test", "--model", "c")
    assert out.returncode == 2 and "no terminal to ask for the key" in out.stderr
    assert cli("profiles", "remove", "mine").returncode == 0
    assert "mine" not in cli("profiles", "list").stdout


def test_no_key_ever_reaches_a_file_goalgui_writes(cli):
    (cli.tmp / "keyring.json").write_text(json.dumps({"goalgui\0leaky": KEY}))
    with ScriptedServer() as server:
        server.default = by_purpose("openai")
        out = cli("profiles", "add", "leaky", "--kind", "openai", "--base-url", server.url, "--model", "m",
                  "--key-env", "UNUSED_VAR")
        assert out.returncode == 0, out.stderr
        run = cli("run", "Say hello to the team", "--model", "openai:leaky", "--json")
        assert run.returncode == 0, run.stderr
        run_id = json.loads(run.stdout)["run_id"]
        exports = [cli("export", run_id, "--events"), cli("export", run_id, "--format", "md"), cli("runs", "--json")]
        # a failing call too, so error paths are covered
        server.default = ("reply", 401, {"error": {"message": f"key {KEY[:6]}... invalid"}})
        failed = cli("run", "Another objective", "--model", "openai:leaky", "--json")
        assert failed.returncode == 6
    assert all(r["headers"]["Authorization"] == f"Bearer {KEY}" for r in server.requests)  # it was used
    texts = [run.stdout, run.stderr, failed.stdout, failed.stderr] + [e.stdout + e.stderr for e in exports]
    assert not [t for t in texts if KEY in t]
    written = [p for p in cli.home.rglob("*") if p.is_file()]
    assert any(p.name == "journal.sqlite3" for p in written) and any(p.suffix == ".log" for p in written)
    assert any(p.name == "settings.toml" for p in written)
    leaks = [str(p) for p in written if KEY.encode() in p.read_bytes()]
    assert not leaks


def test_profiles_add_asks_for_the_key_on_a_terminal_and_keeps_it_in_the_keyring(isolated_home, test_keyring,
                                                                                  monkeypatch, capsys):
    from goalgui import cli

    asked = []
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("getpass.getpass", lambda prompt: asked.append(prompt) or KEY)
    assert cli.main(["profiles", "add", "asked", "--kind", "anthropic", "--base-url", "https://api.anthropic.test",
                     "--model", "claude-x"]) == 0
    assert asked and "API key for asked" in asked[0]
    assert find_key(Settings.load().profile("asked")) == KEY  # from the keyring
    settings = paths.settings_path().read_text()
    assert "claude-x" in settings and KEY not in settings
    monkeypatch.setattr("getpass.getpass", lambda prompt: "")
    assert cli.main(["profiles", "add", "nokey", "--kind", "anthropic", "--base-url", "https://a.test",
                     "--model", "c"]) == 2
    assert "needs a key" in capsys.readouterr().err
