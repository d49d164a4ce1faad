"""PII redaction: personal data replaced by typed placeholders before anything is stored."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterable

from engram.errors import InvalidInputError

PII_KINDS = ("email", "iban", "card", "national_id", "ip", "phone")
"""Kinds of personal data :func:`redact` knows, in the order they are applied."""


def _luhn_ok(digits: str) -> bool:
    total = 0
    for i, char in enumerate(reversed(digits)):
        value = int(char) * (2 if i % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


def _card_ok(span: str) -> bool:
    digits = re.sub(r"\D", "", span)
    return 13 <= len(digits) <= 19 and _luhn_ok(digits)


def _iban_ok(span: str) -> bool:
    compact = span.replace(" ", "")
    if not 15 <= len(compact) <= 34:
        return False
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in rearranged)) % 97 == 1


def _ip_ok(span: str) -> bool:
    try:
        ipaddress.ip_address(span)
    except ValueError:
        return False
    return True


def _digit_count(low: int, high: int) -> Callable[[str], bool]:
    return lambda span: low <= sum(c.isdigit() for c in span) <= high


_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
_PII: dict[str, tuple[re.Pattern[str], Callable[[str], bool]]] = {
    # from the start of an address only: trying every position of a long word would cost
    # the square of its length
    "email": (
        re.compile(r"(?<![\w.%+-])[\w.%+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}"),
        lambda _: True,
    ),
    "iban": (
        re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b"),
        _iban_ok,
    ),
    "card": (re.compile(r"(?<![\d-])(?:\d[ -]?){12,18}\d(?!\d)"), _card_ok),
    "national_id": (
        re.compile(
            # US social security number (3-2-4 with dashes or spaces).
            r"\b(?!000|666|9\d\d)\d{3}([- ])(?!00)\d{2}\1(?!0000)\d{4}\b"
            # UK National Insurance number.
            r"|\b(?!BG|GB|NK|KN|TN|NT|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]"
            r" ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b"
        ),
        lambda _: True,
    ),
    "ip": (
        re.compile(
            rf"(?<![\d.]){_OCTET}(?:\.{_OCTET}){{3}}(?!\.?\d)"
            r"|(?<![\w:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:])"
        ),
        _ip_ok,
    ),
    "phone": (
        # International: +CC or 00CC, then groups of digits, optional (area) code.
        re.compile(r"(?<![\w+])(?:\+|00)[1-9]\d{0,2}(?:[ .-]?\(?\d{1,5}\)?){2,6}(?!\w)"),
        _digit_count(8, 15),
    ),
    "national_phone": (
        # National: three or more separated groups, e.g. (555) 123-4567, 06 12 34 56 78;
        # 10-12 digits, so dates (2024-01-15, 30.11.2026) and short codes stay.
        re.compile(r"(?<![\w+.-])\(?\d{2,5}\)?[ .-]\d{2,5}(?:[ .-]\d{2,5}){1,4}(?![\w-])"),
        _digit_count(10, 12),
    ),
}


def _placeholder(kind: str) -> str:
    return f"[{kind.upper()}]"


def _redact_kind(text: str, pattern_name: str, kind: str, found: list[str]) -> str:
    pattern, valid = _PII[pattern_name]

    def swap(match: re.Match[str]) -> str:
        if not valid(match.group(0)):
            return match.group(0)
        if kind not in found:
            found.append(kind)
        return _placeholder(kind)

    return pattern.sub(swap, text)


def redact(text: str, kinds: Iterable[str] = PII_KINDS) -> tuple[str, tuple[str, ...]]:
    """Replace personal data with typed placeholders (``[EMAIL]``, ``[CARD]``...).

    Returns the new text and the kinds that were found. Card numbers must pass
    the Luhn check and IBANs the mod-97 check, so ordinary digit runs survive.
    """
    wanted = set(kinds)
    unknown = wanted - set(PII_KINDS)
    if unknown:
        raise InvalidInputError(f"unknown PII kinds {sorted(unknown)}; known: {PII_KINDS}")
    found: list[str] = []
    for kind in PII_KINDS:
        if kind in wanted:
            text = _redact_kind(text, kind, kind, found)
            if kind == "phone":
                text = _redact_kind(text, "national_phone", kind, found)
    return text, tuple(found)
