"""A tool's argument schema as a server's grammar builder can take it."""

from __future__ import annotations


def plain_schema(schema: dict, *, descriptions: bool = False) -> dict:
    """Types, properties, requirements and enums only (descriptions if asked). Length and range
    bounds become repetitions in llama.cpp's grammar builder that overflow its rule limits (a
    200,000-character maxLength does, and llama-cpp-python's server dies of it); the engine checks
    every call against the full schema anyway (`engine.tools.check_arguments`)."""
    out: dict = {"type": schema.get("type", "object")}
    if descriptions and isinstance(schema.get("description"), str):
        out["description"] = schema["description"]
    if out["type"] == "object":
        out["properties"] = {k: plain_schema(v, descriptions=descriptions)
                             for k, v in (schema.get("properties") or {}).items()}
        if schema.get("required"):
            out["required"] = list(schema["required"])
    elif out["type"] == "array" and isinstance(schema.get("items"), dict):
        out["items"] = plain_schema(schema["items"], descriptions=descriptions)
    if "enum" in schema:
        out["enum"] = list(schema["enum"])
    return out
