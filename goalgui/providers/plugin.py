"""`python:FILE.py:ATTR` and `python:module:ATTR`: models written in Python."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
from pathlib import Path

from ..engine.lifecycle import InputError


def load_python_model(target: str):
    """(model, normalised target). ATTR is a Model instance, a class, or a zero-argument callable."""
    where, sep, attr = target.rpartition(":")
    if not sep or not where or not attr:
        raise InputError(f"bad model spec 'python:{target}': write python:FILE.py:ATTR or python:module:ATTR")
    if where.endswith(".py") or "/" in where:
        path = Path(where).expanduser().resolve()
        if not path.is_file():
            raise InputError(f"no Python file {where}")
        spec = importlib.util.spec_from_file_location(f"goalgui_plugin_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            raise InputError(f"cannot load {path}: {type(exc).__name__}: {exc}") from None
        where = str(path)
    else:
        try:
            module = importlib.import_module(where)
        except ImportError as exc:
            raise InputError(f"cannot import {where}: {exc}") from None
    try:
        obj = getattr(module, attr)
    except AttributeError:
        raise InputError(f"{where} has no attribute {attr}") from None
    if inspect.isclass(obj) or not callable(getattr(obj, "complete", None)):
        try:
            obj = obj()
        except Exception as exc:
            raise InputError(f"{where}:{attr}() failed: {type(exc).__name__}: {exc}") from None
    if not inspect.iscoroutinefunction(getattr(obj, "complete", None)):
        raise InputError(f"{where}:{attr} is not a model: it needs an async complete(request) method")
    if not getattr(obj, "name", None):
        try:
            obj.name = attr
        except AttributeError:
            pass
    return obj, f"{where}:{attr}"
