"""The settings dialog: profiles with keys in the keyring and a Test button over loopback HTTP,
defaults for new goals, the journal's location and the theme."""

import pytest
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication

from goalgui import paths
from goalgui.settings import Settings, find_key
from goalgui.ui.settings_dialog import SettingsDialog
from goalgui.ui.theme import apply_theme, is_dark

from .httpserver import ScriptedServer, dead_port_url
from .test_settings import KEY, test_keyring  # noqa: F401 (a fixture)
from .test_providers import openai_reply
from .test_ui_controls import until


@pytest.fixture
def dialog(qtbot, isolated_home, test_keyring, qloop):  # noqa: F811
    d = SettingsDialog(Settings.load(), ["local", "scripted:rehearsal"])
    qtbot.addWidget(d)
    d.show()
    return d


def fill(dialog, name, url, kind="openai", model="gpt-test", key=""):
    dialog._on_new_clicked()
    dialog.name.setText(name)
    dialog.kind.setCurrentText(kind)
    dialog.base_url.setText(url)
    dialog.model.setText(model)
    dialog.key.setText(key)


def test_a_profile_is_saved_with_its_key_in_the_keyring_only(dialog):
    saved = []
    dialog.saved.connect(saved.append)
    fill(dialog, "work", "https://api.example.test/v1/", key=KEY)
    dialog.save_button.click()
    assert dialog.error.text() == "" and saved
    assert dialog.key.text() == ""  # not left in the widget
    stored = Settings.load().profile("work", "openai")
    assert stored.base_url == "https://api.example.test/v1" and find_key(stored) == KEY
    assert KEY not in paths.settings_path().read_text()
    assert [dialog.profile_list.item(i).text() for i in range(dialog.profile_list.count())] == ["work"]
    assert "a key is stored" in dialog.key.placeholderText()
    dialog.remove_button.click()
    assert "work" not in Settings.load().profiles and find_key(stored) is None


def test_bad_fields_are_refused_in_one_line_and_nothing_is_saved(dialog):
    fill(dialog, "bad name!", "https://x.test", key=KEY)
    dialog.save_button.click()
    assert "bad profile name" in dialog.error.text() and "\n" not in dialog.error.text()
    fill(dialog, "ok", "ftp://x.test")
    dialog.save_button.click()
    assert "bad base URL" in dialog.error.text()
    fill(dialog, "claude", "https://api.anthropic.test", kind="anthropic", model="claude-x")
    dialog.save_button.click()
    assert "needs a key" in dialog.error.text()
    assert not paths.settings_path().exists() or not Settings.load().profiles


def test_the_test_button_calls_the_provider_over_http(dialog, qloop):
    with ScriptedServer() as server:
        server.default = ("reply", 200, openai_reply("OK"))
        fill(dialog, "local-server", server.url + "/v1", key="sk-test-123")
        dialog.test_button.click()
        until(qloop, lambda: dialog.test_task.done())
        assert dialog.test_result.text().startswith(f"{server.url}/v1 answered in") and "'OK'" in dialog.test_result.text()
        request = server.requests[-1]
        assert request["path"] == "/v1/chat/completions"
        assert request["headers"].get("Authorization") == "Bearer sk-test-123"
    dead = dead_port_url()
    fill(dialog, "dead", dead)
    dialog.test_button.click()
    until(qloop, lambda: dialog.test_task.done(), timeout=30)
    assert dialog.test_result.text().startswith(f"failed ({dead}):") and "\n" not in dialog.test_result.text()


def test_defaults_and_journal_location_are_saved(dialog, tmp_path):
    dialog.default_model.setCurrentText("scripted:rehearsal")
    dialog.default_mode.setCurrentText("ask")
    dialog.confirm_timeout.setValue(90)
    dialog.save_defaults_button.click()
    loaded = Settings.load()
    assert loaded.default_model == "scripted:rehearsal" and loaded.default_permission_mode == "ask"
    assert loaded.confirm_timeout == 90
    dialog.confirm_timeout.setValue(0)  # never
    dialog.save_defaults_button.click()
    assert Settings.load().confirm_timeout is None
    dialog.journal_path.setText(str(tmp_path / "elsewhere.sqlite3"))
    dialog.save_general_button.click()
    assert Settings.load().journal == str(tmp_path / "elsewhere.sqlite3")
    assert paths.journal_path(Settings.load().journal) == tmp_path / "elsewhere.sqlite3"


def test_the_theme_turns_the_palette_dark_and_back(dialog):
    app = QApplication.instance()
    try:
        dialog.theme.setCurrentIndex(dialog.theme.findData("dark"))
        dialog.save_general_button.click()
        assert Settings.load().theme == "dark" and is_dark(app.palette())
        dialog.theme.setCurrentIndex(dialog.theme.findData("light"))
        dialog.save_general_button.click()
        assert not is_dark(app.palette())
        assert app.palette().color(QPalette.ColorRole.Window).lightness() > 200
    finally:
        apply_theme("system")


def test_enter_in_a_field_saves_the_profile_and_a_profile_can_be_chosen_again_after_new(dialog, qtbot):
    """Issue 11, item 17."""
    from PySide6.QtCore import Qt

    fill(dialog, "work", "https://api.example.test/v1", key=KEY)
    qtbot.keyClick(dialog.model, Qt.Key.Key_Return)  # used to press New and clear the form
    assert dialog.error.text() == "" and "work" in Settings.load().profiles
    assert dialog.name.text() == "work" and dialog.model.text() == "gpt-test"
    dialog.new_button.click()
    assert dialog.name.text() == ""
    item = dialog.profile_list.item(0)
    qtbot.mouseClick(dialog.profile_list.viewport(), Qt.MouseButton.LeftButton,
                     pos=dialog.profile_list.visualItemRect(item).center())
    assert dialog.name.text() == "work"  # chosen again: "bad profile name ''" no more
    dialog.model.setText("gpt-other")
    dialog.save_button.click()
    assert dialog.error.text() == "" and Settings.load().profiles["work"].model == "gpt-other"


def test_a_key_typed_without_a_keyring_is_kept_and_the_error_says_what_to_do(dialog, monkeypatch):
    import goalgui.settings as settings_module

    monkeypatch.setattr(settings_module, "keyring_problem", lambda: "no system keyring is available (backend: "
                        "fail.Keyring); start and unlock one, or give the key in an environment variable with --key-env VAR")
    fill(dialog, "work", "https://api.example.test/v1", key=KEY)
    dialog.save_button.click()
    assert dialog.key.text() == KEY  # not thrown away
    assert "the key was not saved" in dialog.error.text() and "Key variable" in dialog.error.text()
    assert "--key-env" not in dialog.error.text() and "work" not in Settings.load().profiles


def test_errors_do_not_outlive_the_dialog_and_the_journal_in_use_is_shown(dialog):
    fill(dialog, "bad name!", "https://x.test")
    dialog.save_button.click()
    assert dialog.error.text()
    dialog.close()
    dialog.show()
    assert dialog.error.text() == ""
    assert f"In use now: {paths.journal_path()}" == dialog.journal_in_use.text()
    assert str(paths.journal_path()) in dialog.journal_path.placeholderText()


def test_with_no_keyring_a_named_key_variable_is_the_key_and_the_typed_one_is_dropped(dialog, monkeypatch):
    import goalgui.settings as settings_module

    monkeypatch.setattr(settings_module, "keyring_problem", lambda: "no system keyring is available (backend: x); ...")
    monkeypatch.setenv("WORK_KEY", KEY)
    fill(dialog, "work", "https://api.example.test/v1", key=KEY)
    dialog.save_button.click()
    assert "the key was not saved" in dialog.error.text()
    dialog.key_env.setText("WORK_KEY")  # what the error says to do; the hidden field still holds the key
    dialog.save_button.click()
    assert dialog.error.text() == "" and dialog.key.text() == ""
    assert Settings.load().profiles["work"].key_env == "WORK_KEY"
