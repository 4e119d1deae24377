"""A keyring backend for tests: what the OS keyring would hold, in a file outside goalgui's dirs,
so a key stored by one `goalgui` process is found by the next. Selected with
PYTHON_KEYRING_BACKEND=tests.keyring_backend.FileKeyring and TEST_KEYRING_FILE."""

import json
import os

from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError


class FileKeyring(KeyringBackend):
    priority = 1

    def _load(self):
        try:
            with open(os.environ["TEST_KEYRING_FILE"]) as f:
                return json.load(f)
        except FileNotFoundError:
            return {}

    def _save(self, data):
        with open(os.environ["TEST_KEYRING_FILE"], "w") as f:
            json.dump(data, f)

    def get_password(self, service, username):
        return self._load().get(f"{service}\0{username}")

    def set_password(self, service, username, password):
        data = self._load()
        data[f"{service}\0{username}"] = password
        self._save(data)

    def delete_password(self, service, username):
        data = self._load()
        if data.pop(f"{service}\0{username}", None) is None:
            raise PasswordDeleteError("no such password")
        self._save(data)
