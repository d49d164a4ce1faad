"""Undo obfuscation before judging: every way a text can be read is judged (pure).

:func:`views` returns the text as a reader (or a model) would see it, plus every
decoding an attacker may rely on:

- ``canonical``: NFKC (fullwidth and styled letters become plain), invisible and
  bidirectional controls removed, whitespace runs made one space;
- ``skeleton``: Unicode confusable characters mapped to the ASCII letter they
  imitate (Cyrillic "о", Greek "ο", Cherokee "Ꭺ"...), from Unicode's
  ``confusables.txt`` as shipped by the ``confusable-homoglyphs`` package;
- ``collapsed``: letter-spaced words joined ("i g n o r e  a l l" -> "ignore all")
  and leetspeak read as letters ("1gn0r3", "@ll");
- ``squashed``: a letter-spaced text as its letters alone ("ignoreallprevious..."),
  for spacing that hides the word boundaries too;
- ``base64`` / ``hex`` / ``url``: encoded segments that decode to readable text;
- ``rot13`` and ``reversed``: the whole text so transformed;
- ``comment``: the inside of HTML comments and Markdown link-reference comments.

A word hyphenated across a line break ("instruc-\ntions") is read joined in every view
but the canonical one, and the joined text is itself a view (``dehyphenated``).
"""

from __future__ import annotations

import base64
import binascii
import codecs
import html
import json
import unicodedata
import urllib.parse
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import regex

_KEEP_FORMAT = frozenset("\u200c\u200d")
"""Joiners that some scripts need inside words (Persian, Devanagari): kept in words."""
_STRAY_JOINER = regex.compile(
    r"(?<![\p{L}\p{M}])[\u200c\u200d]|[\u200c\u200d](?![\p{L}\p{M}])"
    r"|(?<=[\p{Latin}\p{Greek}\p{Cyrillic}\p{Armenian}\p{Han}\p{Hiragana}\p{Katakana}"
    r"\p{Hangul}])[\u200c\u200d]"
)
"""A joiner that joins nothing: not between two letters, or after a letter of a script
that never joins (Latin, Greek, Cyrillic, CJK): "Alw\u200days" hides "Always"."""
_INVISIBLE_EXTRA = regex.compile(r"[\ufe00-\ufe0f\U000e0100-\U000e01ef\u115f\u1160\u3164\uffa0]")
_SPACES = regex.compile(r"[\s\p{Zs}]+")
_LINE_BREAK_HYPHEN = regex.compile(r"(?<=\p{L})[-\u2010\u2011]\p{Zs}*\r?\n[\s\p{Zs}]*(?=\p{L})")
"""A hyphen ending a line between two parts of a word, as text wrapped by hand or
copied from a PDF has it."""
_SPACED_LETTERS = regex.compile(
    r"(?<![\p{L}\p{N}])(?:[\p{L}\p{N}@$][ .\-_*·•|/]){2,}[\p{L}\p{N}@$](?![\p{L}\p{N}])"
)
_LEET = str.maketrans(
    {
        "0": "o",
        "1": "i",
        "3": "e",
        "4": "a",
        "5": "s",
        "7": "t",
        "@": "a",
        "$": "s",
        "!": "i",
        "|": "l",
        "€": "e",
    }
)
_LEET_TOKEN = regex.compile(
    r"(?<![\p{L}\d@$!|€])[\p{L}\d@$!|€]*(?:\p{L}[\d@$!|€]|[\d@$!|€]\p{L})[\p{L}\d@$!|€]*"
)
"""A token mixing letters and leetspeak digits or signs, from its first character on (a
match can only start where a token does: trying every position of a long token that has
no such pair would cost the square of its length)."""
_BASE64 = regex.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{16,}={0,2}(?![A-Za-z0-9+/=_-])")
_HEX = regex.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}(?:[\s:,]|\\x|0x)?){8,}(?![0-9A-Fa-f])")
_URL_ESCAPED = regex.compile(r"(?:%[0-9A-Fa-f]{2}){3,}")
_COMMENTS = regex.compile(
    r"<!--(.*?)(?:-->|$)|^\s*\[[^\]]*\]:\s*(?:#|<>)\s*[(\"'](.*?)[)\"']\s*$",
    regex.DOTALL | regex.MULTILINE,
)


@dataclass(frozen=True)
class View:
    """One reading of a text: how it was obtained (``how``) and what it says."""

    how: str
    text: str


def is_invisible(char: str) -> bool:
    """Whether ``char`` shows nothing: a format control (zero-width space and joiners, bidi
    controls, tags, soft hyphen) or an invisible filler (variation selectors, Hangul fillers)."""
    return unicodedata.category(char) == "Cf" or _INVISIBLE_EXTRA.match(char) is not None


def strip_invisible(text: str) -> str:
    """``text`` without format controls (zero-width, bidi, tags) and invisible fillers; a
    joiner stays only inside a word of a script that needs it (Persian, Devanagari)."""
    if text.isascii():  # (nothing in ASCII is invisible)
        return text
    kept = "".join(c for c in text if unicodedata.category(c) != "Cf" or c in _KEEP_FORMAT)
    return _STRAY_JOINER.sub("", _INVISIBLE_EXTRA.sub("", kept))


def canonical(text: str) -> str:
    """NFKC, invisible characters removed, whitespace runs as one space."""
    return _SPACES.sub(" ", strip_invisible(unicodedata.normalize("NFKC", text))).strip()


@lru_cache(maxsize=1)
def _confusables() -> dict[str, str]:
    """Each character that imitates an ASCII letter or digit, mapped to that character."""
    data = resources.files("confusable_homoglyphs").joinpath("confusables.json").read_text()
    table: dict[str, str] = {}
    for char, glyphs in json.loads(data).items():
        if len(char) != 1 or char.isascii():
            continue
        ascii_glyphs = [g["c"] for g in glyphs if len(g["c"]) == 1 and g["c"].isalnum()]
        if ascii_glyphs and ascii_glyphs[0].isascii():
            table[char] = ascii_glyphs[0].lower()
    return table


def skeleton(text: str, lower_first: bool = True) -> str:
    """``text`` lower-cased, each confusable character replaced by the ASCII letter it
    imitates. Case changes what a letter imitates (Cyrillic "І" imitates "l", its
    small "і" an "i"; Greek "Υ" a "Y", its small "υ" a "u"): ``lower_first=False``
    maps before lower-casing."""
    table = _confusables()
    if lower_first:
        return "".join(table.get(c, c) for c in text.lower())
    return "".join(table.get(c, c) for c in text).lower()


def collapse(text: str) -> str:
    """Letter-spaced runs joined into words and leetspeak tokens read as letters."""
    joined = _SPACED_LETTERS.sub(lambda m: regex.sub(r"[ .\-_*·•|/]", "", m.group()), text)
    return _LEET_TOKEN.sub(lambda m: m.group().translate(_LEET), joined)


def _readable(data: bytes) -> str | None:
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    letters = sum(c.isalpha() or c.isspace() for c in decoded)
    return decoded if decoded and letters >= 0.8 * len(decoded) and " " in decoded else None


def _base64(segment: str) -> str | None:
    padded = segment + "=" * (-len(segment) % 4)
    try:
        return _readable(
            base64.b64decode(padded, altchars=b"-_" if "-" in segment or "_" in segment else None)
        )
    except (binascii.Error, ValueError):
        return None


def _hex(segment: str) -> str | None:
    digits = regex.sub(r"\\x|0x|[\s:,]", "", segment)
    try:
        return _readable(bytes.fromhex(digits))
    except ValueError:
        return None


def decoded(text: str) -> list[View]:
    """Readable text hidden in encoded segments and comments of ``text``."""
    out = [View("base64", d) for m in _BASE64.finditer(text) if (d := _base64(m.group()))]
    out += [View("hex", d) for m in _HEX.finditer(text) if (d := _hex(m.group()))]
    if _URL_ESCAPED.search(text):
        out.append(View("url", urllib.parse.unquote(text)))
    if "&" in text and (unescaped := html.unescape(text)) != text:
        out.append(View("entities", unescaped))
    out += [
        View("comment", c) for m in _COMMENTS.finditer(text) for c in m.groups() if c and c.strip()
    ]
    return out


def squash(text: str) -> str:
    """Only the letters of a letter-spaced text, lower-cased ("i g n o r e" -> "ignore")."""
    return "".join(c for c in text.lower() if c.isalpha())


def letter_spaced(text: str) -> bool:
    """Whether ``text`` has a run of three or more letters spaced out one by one."""
    return _SPACED_LETTERS.search(text) is not None


def dehyphenate(text: str) -> str:
    """``text`` with each word hyphenated across a line break joined ("instruc-\ntions")."""
    return _LINE_BREAK_HYPHEN.sub("", text)


def views(text: str) -> list[View]:
    """Every reading of ``text`` to judge, the canonical one first; no duplicates."""
    found = [View("canonical", canonical(text))]
    joined = dehyphenate(text)
    if joined != text:
        found.append(View("dehyphenated", canonical(joined)))
    base = canonical(joined)
    spaced = strip_invisible(unicodedata.normalize("NFKC", joined))
    found += [View("skeleton", skeleton(base))]
    found.append(View("skeleton", skeleton(base, lower_first=False)))
    found.append(View("collapsed", collapse(skeleton(spaced))))
    found += [View(v.how, canonical(v.text)) for v in decoded(base)]
    found += [View("rot13", codecs.encode(base, "rot13")), View("reversed", base[::-1])]
    if letter_spaced(spaced):
        found.append(View("squashed", squash(collapse(skeleton(spaced)))))
    seen: set[tuple[bool, str]] = set()
    unique = []
    for view in found:
        key = (view.how == "squashed", view.text)
        if view.text and key not in seen:
            seen.add(key)
            unique.append(view)
    return unique
