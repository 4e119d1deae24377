"""Model implementations and the one function that turns a model spec into a Model."""

from __future__ import annotations

from ..engine.lifecycle import InputError
from .scripted import ScriptedModel

HTTP_KINDS = ("openai", "anthropic", "ollama")


def http_model(profile, key=None):
    """The Model for a provider profile, with its key (looked up if not given)."""
    from ..settings import find_key
    from .anthropic import AnthropicModel
    from .ollama import OllamaModel
    from .openai import OpenAIModel

    key = key or find_key(profile)
    if key is None and profile.kind == "anthropic":  # OpenAI-compatible local servers may need none
        raise InputError(f"no key for profile {profile.name!r}: store one with 'goalgui profiles add {profile.name} "
                         f"...' or set GOALGUI_{profile.name.upper()}_API_KEY")
    cls = {"openai": OpenAIModel, "anthropic": AnthropicModel, "ollama": OllamaModel}[profile.kind]
    return cls(profile, key)


def embedder_for(model):
    """The provider's embeddings for the findings memory, where its profile names a model; else None
    (the engine's own hashing embedder)."""
    make = getattr(model, "embedder", None)
    return make() if callable(make) else None


async def probe(profile, key=None) -> tuple[str, str, float]:
    """One tiny call through a profile: (what it answered, the model that answered, seconds).
    Raises ProviderError (or InputError for a missing key) with a one-line message."""
    import time

    from ..engine.model import ModelRequest

    model = http_model(profile, key)
    request = ModelRequest("execute", [{"role": "user", "content": "Reply with the word OK."}], None, max_tokens=8)
    try:
        started = time.perf_counter()
        reply = await model.complete(request)
        return reply.text.strip(), reply.model or profile.model, time.perf_counter() - started
    finally:
        await model.aclose()


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
    if kind in HTTP_KINDS:
        from ..settings import Settings

        if not target:
            raise InputError(f"bad model spec {spec!r}: name a profile, e.g. {kind}:NAME")
        return http_model(Settings.load().profile(target, kind)), spec
    if kind == "local":
        from .local import LocalModel

        return LocalModel(), "local"
    raise InputError(
        f"unknown model spec {spec!r}: use local, scripted:NAME, python:FILE.py:ATTR, "
        "openai:PROFILE, anthropic:PROFILE or ollama:PROFILE"
    )


__all__ = ["ScriptedModel", "load_model"]
