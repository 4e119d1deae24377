"""Readers for model replies: tolerant of text around the JSON, strict about what they accept."""

from __future__ import annotations

import json
import re
from collections import Counter

_WORD = re.compile(r"[A-Za-z]+")
_TOKEN = re.compile(r"[a-z0-9]+")


_DECODER = json.JSONDecoder()
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_ANSWER = re.compile(r'"answer"\s*:\s*"(YES|NO)"', re.IGNORECASE)


class Unparseable(ValueError):
    """The reply has no answer of the expected shape."""


def json_values(text: str):
    """Every JSON value embedded in `text` that starts at a '[' or '{', outermost first."""
    decoder = _DECODER
    i = 0
    while True:
        starts = [p for p in (text.find("[", i), text.find("{", i)) if p != -1]
        if not starts:
            return
        start = min(starts)
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            i = start + 1
            continue
        yield value
        i = end


def yes_no(text: str) -> tuple[bool, str]:
    """(answer, reason) from `YES ...`/`NO ...` or `{"answer": "YES", "reason": ...}`."""
    for value in json_values(text):
        if isinstance(value, dict) and isinstance(value.get("answer"), str):
            answer = value["answer"].strip().upper()
            if answer in ("YES", "NO"):
                return answer == "YES", str(value.get("reason", ""))[:500]
    cut = _ANSWER.search(text)  # a JSON reply cut short by max_tokens still names its answer
    if cut:
        return cut.group(1).upper() == "YES", ""
    match = _WORD.search(text)
    if match and match.group(0).upper() in ("YES", "NO"):
        return match.group(0).upper() == "YES", text[match.end():].strip(" .:-,\n")[:500]
    raise Unparseable(f"expected YES or NO, got {text[:80]!r}")


def string_list(text: str, key: str = "subgoals") -> list[str]:
    """A list of strings from a JSON array or `{key: [...]}`; other items make it unparseable."""
    for value in json_values(text):
        if isinstance(value, dict) and key in value:
            value = value[key]
        if isinstance(value, list):
            if not all(isinstance(item, str) for item in value):
                raise Unparseable("the list holds something other than strings")
            return [item.strip() for item in value if item.strip()]
    # a reply cut short (max_tokens, or a stop sequence inside a string): keep the complete items
    start = text.find("[")
    if start != -1:
        items = []
        for literal in _STRING.findall(text, start):
            try:
                items.append(json.loads(literal).strip())
            except json.JSONDecodeError:
                break
        if items and all(items):
            return items
    raise Unparseable(f"no JSON array of strings in {text[:80]!r}")


def normalise(text: str) -> str:
    """Lower case, words only: how restatements are recognised."""
    return " ".join(_TOKEN.findall(text.lower()))


_STOP = frozenset("a an the and or of for to in on at by with your their our my his her its this that "
                  "these those it is are be as from into about some all each".split())
NEAR = 0.75  # share of content words two goal texts have in common to count as one goal


def content_words(text: str) -> Counter:
    """The words that carry a goal's meaning, counted: no stop words, plural 's' dropped."""
    return Counter(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w
                   for w in normalise(text).split() if w not in _STOP)


def near(a: Counter, b: Counter) -> bool:
    """True when two goal texts say the same thing in other words ("Plan a birthday party for your
    child" under "Plan a small birthday party for a child"); texts that differ in a number do not."""
    if not a or not b:
        return a == b
    if any(w.isdigit() for w in (a - b) + (b - a)):  # "Write chapter 1" and "Write chapter 2": two goals
        return False
    return sum((a & b).values()) >= NEAR * sum((a | b).values())


_MARKUP = re.compile(r"</?\s*data\b|<\|im_(?:start|end)\|>", re.IGNORECASE)


def degenerate(text: str, examples: tuple[str, ...] | list[str] = ()) -> str | None:
    """Why `text` is no attempt at the goal, or None: it carries the prompt's own markup, hands
    back one of the prompt's `examples`, or is one line (or one phrase) said over and over.
    Small models do all three; a verifier that lets them through is decoration (seed 000)."""
    if not text.strip():
        return "the output is empty"
    if _MARKUP.search(text):
        return "the output repeats the prompt's markup"
    flat = normalise(text)
    for example in examples:
        shown = normalise(example)
        if len(shown) >= 30 and shown in flat and len(shown) * 2 > len(flat):
            return "the output repeats the prompt's example"
    lines = [line for line in map(normalise, text.splitlines()) if line]
    if len(lines) >= 4 and Counter(lines).most_common(1)[0][1] * 2 > len(lines):
        return "the output repeats one line"
    words = flat.split()
    if len(words) >= 24:
        # the same 4-word phrase covering over half the text: "Budget: 10,000 tokens, 10,000 tokens, ..."
        top = Counter(zip(words, words[1:], words[2:], words[3:])).most_common(1)[0][1]
        if top >= 6 and top * 4 * 2 > len(words):
            return "the output repeats one phrase"
    return None
