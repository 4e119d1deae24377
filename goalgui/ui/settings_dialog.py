"""Settings: provider profiles (keys to the keyring, a Test button), defaults for new goals, the
journal's location and the theme. Non-modal; every change is checked before it is saved, and a
refusal is one line under the form that caused it."""

from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import replace

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from .. import paths
from ..engine.lifecycle import InputError
from ..engine.permissions import PERMISSION_MODES
from ..engine.strategies import BUILT
from ..settings import (KINDS, PROMPT_PROFILES, THEMES, KeyringUnavailable, Profile, Settings, delete_key, find_key,
                        store_key)
from .plain import plain_label

log = logging.getLogger(__name__)


class SettingsDialog(QDialog):
    """`saved(settings)` after each successful save."""

    saved = Signal(object)

    def __init__(self, settings: Settings, model_choices, parent: QWidget | None = None, journal_used=None):
        super().__init__(parent)
        self.setWindowTitle("goalgui settings")
        self.settings = settings
        self.journal_used = journal_used  # the journal the window has open
        self.test_task: asyncio.Future | None = None
        tabs = QTabWidget()
        tabs.addTab(self._profiles_page(), "Providers")
        tabs.addTab(self._defaults_page(model_choices), "New goals")
        tabs.addTab(self._general_page(), "Journal and theme")
        self.error = plain_label()
        self.error.setStyleSheet("color: #c0392b")
        self.error.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        layout = QVBoxLayout(self)
        layout.addWidget(tabs)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        self.tabs = tabs
        self._refresh_list()
        self.resize(640, 480)

    def showEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        """Opened again: no error or test answer left from last time."""
        self.error.clear()
        self.test_result.clear()
        super().showEvent(event)

    # -- profiles --------------------------------------------------------------------

    def _profiles_page(self) -> QWidget:
        page = QWidget()
        self.profile_list = QListWidget()
        self.profile_list.setMaximumWidth(170)
        self.name = QLineEdit()
        self.kind = QComboBox()
        self.kind.addItems(KINDS)
        self.base_url = QLineEdit()
        self.base_url.setPlaceholderText("https://api.openai.com/v1, http://localhost:11434, …")
        self.model = QLineEdit()
        self.key = QLineEdit()
        self.key.setEchoMode(QLineEdit.EchoMode.Password)
        self.key_env = QLineEdit()
        self.key_env.setPlaceholderText("optional: read the key from this environment variable")
        self.structured = QComboBox()
        self.structured.addItems(("auto", "json_schema", "json_object", "none"))
        self.prompt_profile = QComboBox()
        self.prompt_profile.addItems(PROMPT_PROFILES)
        self.prompt_profile.setToolTip("small: a model of a few hundred million parameters gets the embedded "
                                       "model's rules (plans from the request's own steps, a forced tool call)")
        self.embeddings = QLineEdit()
        self.embeddings.setPlaceholderText("optional: an embeddings model for the findings memory")
        self.read_timeout = QDoubleSpinBox()
        self.read_timeout.setRange(1, 3600)
        self.read_timeout.setValue(120)
        self.read_timeout.setSuffix(" s")
        form = QFormLayout()
        form.addRow("Name", self.name)
        form.addRow("Kind", self.kind)
        form.addRow("Base URL", self.base_url)
        form.addRow("Model", self.model)
        form.addRow("API key", self.key)
        form.addRow("Key variable", self.key_env)
        form.addRow("Structured replies", self.structured)
        form.addRow("Prompts for", self.prompt_profile)
        form.addRow("Embeddings model", self.embeddings)
        form.addRow("Read timeout", self.read_timeout)
        self.new_button = QPushButton("New")
        self.save_button = QPushButton("Save profile")
        self.remove_button = QPushButton("Remove")
        self.test_button = QPushButton("Test")
        self.test_result = plain_label()
        self.test_result.setWordWrap(True)
        row = QHBoxLayout()
        for button in (self.new_button, self.save_button, self.remove_button, self.test_button):
            row.addWidget(button)
        right = QVBoxLayout()
        right.addLayout(form)
        right.addLayout(row)
        right.addWidget(self.test_result)
        right.addStretch(1)
        layout = QHBoxLayout(page)
        layout.addWidget(self.profile_list)
        layout.addLayout(right, 1)
        for button in (self.new_button, self.save_button, self.remove_button, self.test_button):
            button.setAutoDefault(False)  # Enter in a field must not press New (and clear the form)
        for field in (self.name, self.base_url, self.model, self.key, self.key_env, self.embeddings):
            field.returnPressed.connect(self.save_profile)  # Enter saves, as in any form
        self.profile_list.currentTextChanged.connect(self._on_profile_list_current_text_changed)
        self.profile_list.itemClicked.connect(lambda item: self._on_profile_list_current_text_changed(item.text()))
        self.new_button.clicked.connect(self._on_new_clicked)
        self.save_button.clicked.connect(self.save_profile)
        self.remove_button.clicked.connect(self.remove_profile)
        self.test_button.clicked.connect(self._on_test_clicked)
        return page

    def _refresh_list(self, select: str | None = None) -> None:
        self.profile_list.blockSignals(True)
        self.profile_list.clear()
        self.profile_list.addItems(sorted(self.settings.profiles))
        self.profile_list.blockSignals(False)
        names = sorted(self.settings.profiles)
        if select in names:
            self.profile_list.setCurrentRow(names.index(select))
        elif names:
            self.profile_list.setCurrentRow(0)
        else:
            self._on_new_clicked()

    def _on_profile_list_current_text_changed(self, name: str) -> None:
        profile = self.settings.profiles.get(name)
        if profile is None:
            return
        self.name.setText(profile.name)
        self.kind.setCurrentText(profile.kind)
        self.base_url.setText(profile.base_url)
        self.model.setText(profile.model)
        self.key.clear()
        self.key.setPlaceholderText("a key is stored; type to replace it" if find_key(profile)
                                    else "stored in the system keyring, never in a file")
        self.key_env.setText(profile.key_env or "")
        self.structured.setCurrentText(profile.structured_output)
        self.prompt_profile.setCurrentText(profile.prompt_profile)
        self.embeddings.setText(profile.embeddings_model or "")
        self.read_timeout.setValue(profile.read_timeout)
        self.test_result.clear()

    def _on_new_clicked(self) -> None:
        self.profile_list.blockSignals(True)
        self.profile_list.setCurrentRow(-1)  # no current row: clicking any profile, the last one too, loads it
        self.profile_list.blockSignals(False)
        for field in (self.name, self.base_url, self.model, self.key, self.key_env, self.embeddings):
            field.clear()
        self.key.setPlaceholderText("stored in the system keyring, never in a file")
        self.structured.setCurrentText("auto")
        self.prompt_profile.setCurrentText("standard")
        self.read_timeout.setValue(120)
        self.test_result.clear()
        self.name.setFocus()

    def _form_profile(self) -> Profile:
        base = self.settings.profiles.get(self.name.text().strip())
        fields = dict(name=self.name.text().strip(), kind=self.kind.currentText(),
                      base_url=self.base_url.text().strip(), model=self.model.text().strip(),
                      key_env=self.key_env.text().strip() or None, structured_output=self.structured.currentText(),
                      prompt_profile=self.prompt_profile.currentText(),
                      embeddings_model=self.embeddings.text().strip() or None,
                      read_timeout=float(self.read_timeout.value()))
        profile = replace(base, **fields) if base is not None else Profile(**fields)
        return profile.validated()

    def save_profile(self) -> Profile | None:
        """Check the form, put the key (if one was typed) in the keyring, then save the profile."""
        self.error.clear()
        try:
            profile = self._form_profile()
            key = self.key.text().strip()
            if key and profile.key_env and os.environ.get(profile.key_env):
                # a key variable is named and set: it is the key; the one typed is not stored anywhere
                self.key.clear()
                key = ""
            if key:
                try:
                    store_key(profile.name, key)
                except KeyringUnavailable as exc:
                    # the key typed is kept in its (hidden) field, not thrown away: say what works here
                    raise InputError(f"{str(exc).split(';')[0]}: the key was not saved. Start and unlock a "
                                     "keyring, or put the key in an environment variable and name it in "
                                     "Key variable (it is then read from there)") from None
            elif profile.kind == "anthropic" and not find_key(profile):  # OpenAI-compatible servers may need none
                raise InputError("an anthropic profile needs a key: type it, or name a key variable")
            self.settings.profiles[profile.name] = profile
            self.settings.save()
        except InputError as exc:
            self.error.setText(str(exc))
            return None
        self.key.clear()  # stored: the key never stays in a widget
        self._refresh_list(profile.name)
        self.saved.emit(self.settings)
        return profile

    def remove_profile(self) -> None:
        name = self.name.text().strip()
        if name not in self.settings.profiles:
            return
        del self.settings.profiles[name]
        try:
            self.settings.save()
        except InputError as exc:
            self.error.setText(str(exc))
            return
        delete_key(name)
        self._refresh_list()
        self.saved.emit(self.settings)

    def _on_test_clicked(self) -> None:
        self.test_task = asyncio.ensure_future(self.test_profile())

    async def test_profile(self) -> str:
        """One tiny call with the form as it stands (and the key typed, if any); the answer in one line."""
        from ..engine.model import ProviderError
        from ..providers import probe

        self.test_button.setEnabled(False)
        self.test_result.setText("testing…")
        url = self.base_url.text().strip()
        at = f" ({url})" if url else ""
        try:
            profile = self._form_profile()
            text, model, seconds = await probe(profile, self.key.text().strip() or None)
            outcome = f"{profile.base_url} answered in {seconds * 1000:.0f} ms by {model}: {text[:60]!r}"
        except InputError as exc:
            outcome = f"failed: {exc}"
        except ProviderError as exc:
            outcome = f"failed{at}: {exc}"
        except Exception as exc:  # one line for the person, the trace in the log
            log.info("profile test failed", exc_info=True)
            outcome = f"failed{at}: {exc}"
        finally:
            self.test_button.setEnabled(True)
        self.test_result.setText(outcome)
        return outcome

    # -- defaults, journal, theme ----------------------------------------------------

    def _defaults_page(self, model_choices) -> QWidget:
        page = QWidget()
        self.default_model = QComboBox()
        self.default_model.setEditable(True)
        self.default_model.addItems(list(model_choices))
        self.default_model.setCurrentText(self.settings.default_model)
        self.default_mode = QComboBox()
        self.default_mode.addItems(PERMISSION_MODES)
        self.default_mode.setCurrentText(self.settings.default_permission_mode)
        self.default_strategy = QComboBox()
        self.default_strategy.addItems(list(BUILT))  # what the engine can run
        self.default_strategy.setCurrentText(self.settings.default_strategy)
        self.confirm_timeout = QSpinBox()
        self.confirm_timeout.setRange(0, 86_400)
        self.confirm_timeout.setSuffix(" s")
        self.confirm_timeout.setSpecialValueText("never")
        self.confirm_timeout.setValue(int(self.settings.confirm_timeout or 0))
        self.evidence_gate = QCheckBox("a task that used tools settles only after a check ran")
        self.evidence_gate.setChecked(self.settings.evidence_gate)
        self.round_budget = QSpinBox()
        self.round_budget.setRange(1, 1000)
        self.round_budget.setValue(self.settings.round_budget)
        self.round_budget.setToolTip("work rounds per task before it fails forward")
        self.unproductive_limit = QSpinBox()
        self.unproductive_limit.setRange(1, 50)
        self.unproductive_limit.setValue(self.settings.unproductive_limit)
        self.unproductive_limit.setToolTip("rounds in a row with nothing new before each escalation step "
                                           "(re-anchor, narrow, force-close, fail forward)")
        self.save_defaults_button = QPushButton("Save defaults")
        form = QFormLayout(page)
        form.addRow("Model", self.default_model)
        form.addRow("Permission mode", self.default_mode)
        form.addRow("Strategy", self.default_strategy)
        form.addRow("Decline unanswered confirmations after", self.confirm_timeout)
        form.addRow("Cursor: evidence gate", self.evidence_gate)
        form.addRow("Cursor: rounds per task", self.round_budget)
        form.addRow("Cursor: unproductive rounds before escalating", self.unproductive_limit)
        form.addRow(QLabel("Budgets start empty: a new goal has none unless you give them."))
        form.addRow(self.save_defaults_button)
        self.save_defaults_button.clicked.connect(self.save_defaults)
        return page

    def save_defaults(self) -> None:
        self.error.clear()
        model = self.default_model.currentText().strip()
        if not model:
            self.error.setText("the default model cannot be empty")
            return
        self.settings.default_model = model
        self.settings.default_permission_mode = self.default_mode.currentText()
        self.settings.default_strategy = self.default_strategy.currentText()
        self.settings.confirm_timeout = float(self.confirm_timeout.value()) or None
        self.settings.evidence_gate = self.evidence_gate.isChecked()
        self.settings.round_budget = self.round_budget.value()
        self.settings.unproductive_limit = self.unproductive_limit.value()
        self._save()

    def _general_page(self) -> QWidget:
        page = QWidget()
        self.journal_path = QLineEdit(self.settings.journal or "")
        self.journal_path.setPlaceholderText(f"the default: {paths.journal_path()}")
        self.journal_in_use = plain_label(f"In use now: {self.journal_used or paths.journal_path(self.settings.journal)}")
        self.journal_in_use.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.journal_in_use.setWordWrap(True)
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._on_browse_clicked)
        path_row = QHBoxLayout()
        path_row.addWidget(self.journal_path, 1)
        path_row.addWidget(browse)
        self.theme = QComboBox()
        for theme in THEMES:
            self.theme.addItem({"system": "follow the system", "light": "light", "dark": "dark"}[theme], theme)
        self.theme.setCurrentIndex(THEMES.index(self.settings.theme))
        self.save_general_button = QPushButton("Save")
        form = QFormLayout(page)
        form.addRow("Journal file", path_row)
        form.addRow(self.journal_in_use)
        form.addRow(QLabel("A new journal location is used from the next start; runs stay where they were."))
        form.addRow("Theme", self.theme)
        form.addRow(self.save_general_button)
        self.save_general_button.clicked.connect(self.save_general)
        self.file_dialog: QFileDialog | None = None
        return page

    def _on_browse_clicked(self) -> None:
        dialog = QFileDialog(self, "Journal file", self.journal_path.text())
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setNameFilter("SQLite journal (*.sqlite3 *.db)")
        dialog.fileSelected.connect(self.journal_path.setText)
        self.file_dialog = dialog
        dialog.open()

    def save_general(self) -> None:
        from .theme import apply_theme

        self.error.clear()
        self.settings.journal = self.journal_path.text().strip() or None
        self.settings.theme = self.theme.currentData()
        if self._save():
            apply_theme(self.settings.theme)

    def _save(self) -> bool:
        try:
            self.settings.save()
        except (InputError, OSError) as exc:
            self.error.setText(f"could not save the settings: {exc}")
            return False
        self.saved.emit(self.settings)
        return True
