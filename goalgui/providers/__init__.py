"""Model implementations and the one function that turns a model spec into a Model."""

from __future__ import annotations

from ..engine.lifecycle import InputError
from .scripted import ScriptedModel

_NOT_YET = {
    "local": "the embedded llama.cpp model is not built yet; use --model scripted:rehearsal (offline) "
             "or --model python:FILE.py:ATTR",
    "openai": "the OpenAI-compatible provider is not built yet",
    "anthropic": "the Anthropic provider is not built yet",
    "ollama": "the Ollama provider is not built yet",
}


def load_model(spec: str):
    """(model, spec as recorded). Specs: scripted:NAME|FILE.json, python:FILE.py:ATTR|module:ATTR."""
    spec = (spec or "").strip()
    kind, _, target = spec.partition(":")
    if kind == "scripted":
        if not target:
            raise InputError("bad model spec 'scripted:': name a script, e.g. scripted:rehearsal")
        model = ScriptedModel.from_spec(target)
        return model, spec
    if kind == "python":
        from .plugin import load_python_model

        model, normalised = load_python_model(target)
        return model, f"python:{normalised}"
    if kind in _NOT_YET:
        raise InputError(f"model {spec!r} is not available: {_NOT_YET[kind]}")
    raise InputError(
        f"unknown model spec {spec!r}: use local, scripted:NAME, python:FILE.py:ATTR, "
        "openai:PROFILE, anthropic:PROFILE or ollama:PROFILE"
    )


__all__ = ["ScriptedModel", "load_model"]
