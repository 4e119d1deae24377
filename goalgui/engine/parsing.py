"""Readers for model replies: tolerant of text around the JSON, strict about what they accept."""

from __future__ import annotations

import json
import re
from collections import Counter

_WORD = re.compile(r"[A-Za-z]+")
_TOKEN = re.compile(r"[a-z0-9]+")


# strict=False: a small model writes raw line breaks inside JSON strings (SmolLM2 through
# llama.cpp's server did: {"subgoals": ["...\n\nThe plan is..."]}); they are text, not a broken reply
_DECODER = json.JSONDecoder(strict=False)
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_ANSWER = re.compile(r'"answer"\s*:\s*"(YES|NO)"', re.IGNORECASE)


class Unparseable(ValueError):
    """The reply has no answer of the expected shape."""


_OPENER = re.compile(r"[\[{]")
MAX_STARTS = 64  # places a JSON value may start that are tried: a reply of 200,000 "{" is not 200,000 tries
MAX_CHARS = 200_000  # of a reply, read for its JSON; a longer one is cut first


def json_values(text: str):
    """Every JSON value embedded in `text` that starts at a '[' or '{', outermost first.

    Linear and bounded whatever the text: one scan for openers, at most MAX_STARTS decode
    attempts, and nesting too deep to decode is skipped, not raised."""
    text = text[:MAX_CHARS]
    decoder = _DECODER
    end = 0
    tries = 0
    for match in _OPENER.finditer(text):
        start = match.start()
        if start < end:
            continue  # inside the value just read
        if tries >= MAX_STARTS:
            return
        tries += 1
        try:
            value, end = decoder.raw_decode(text, start)
        except (json.JSONDecodeError, RecursionError):
            continue
        yield value


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
    start = text.find("[", 0, MAX_CHARS)
    if start != -1:
        items = []
        for literal in _STRING.findall(text[:MAX_CHARS], start):
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


def content_words(text: str) -> tuple[str, ...]:
    """The words that carry a goal's meaning, in order: no stop words, plural 's' dropped."""
    return tuple(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w
                 for w in normalise(text).split()[:60] if w not in _STOP)


def near(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """True when two goal texts say the same thing in other words ("Plan a birthday party for your
    child" under "Plan a small birthday party for a child"): most words shared, in the same order.
    Texts that differ in a number, or put the same words in another order ("delete the production
    backups, keep the staging ones" / the other way round), are two goals."""
    if not a or not b:
        return a == b
    # cheap bounds first (it runs for every sub-goal against every ancestor and kept sibling):
    # what is shared is at most the words of one found in the other, the union at least the longer
    longer = max(len(a), len(b))
    if min(len(a), len(b)) < NEAR * longer:
        return False
    in_b = set(b)
    if sum(1 for w in a if w in in_b) < NEAR * longer:
        return False
    if sorted(w for w in a if w.isdigit()) != sorted(w for w in b if w.isdigit()):
        return False  # "Write chapter 1" and "Write chapter 2"
    ca, cb = Counter(a), Counter(b)
    shared = sum((ca & cb).values())
    if shared < NEAR * sum((ca | cb).values()):
        return False
    return _common_run(a, b) == shared


def _common_run(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    """The length of the longest common subsequence (at most 60 x 60 steps)."""
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b):
            current.append(previous[j] + 1 if x == y else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


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
