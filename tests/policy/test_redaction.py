"""PII redaction: typed placeholders, checksums that keep ordinary numbers intact."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engram.errors import InvalidInputError
from engram.policy import PII_KINDS, redact

CASES = [
    ("mail alice.smith+work@example.co.uk now", "mail [EMAIL] now", "email"),
    ("call +44 20 7946 0958 today", "call [PHONE] today", "phone"),
    ("call +1 (415) 555-0132", "call [PHONE]", "phone"),
    ("call 0033 6 12 34 56 78", "call [PHONE]", "phone"),
    ("Handy: +49 30 901820", "Handy: [PHONE]", "phone"),
    ("ring +15551234567", "ring [PHONE]", "phone"),
    ("home (555) 123-4567", "home [PHONE]", "phone"),
    ("mobile 06 12 34 56 78", "mobile [PHONE]", "phone"),
    ("visa 4111 1111 1111 1111 exp", "visa [CARD] exp", "card"),
    ("mc 5500-0000-0000-0004", "mc [CARD]", "card"),
    ("amex 378282246310005", "amex [CARD]", "card"),
    ("iban GB82 WEST 1234 5698 7654 32.", "iban [IBAN].", "iban"),
    ("iban DE89370400440532013000", "iban [IBAN]", "iban"),
    ("iban FR14 2004 1010 0505 0001 3M02 606", "iban [IBAN]", "iban"),
    ("ssn 123-45-6789", "ssn [NATIONAL_ID]", "national_id"),
    ("NI number AB 12 34 56 C", "NI number [NATIONAL_ID]", "national_id"),
    ("server 192.168.10.254.", "server [IP].", "ip"),
    ("v6 2001:db8::8a2e:370:7334 ok", "v6 [IP] ok", "ip"),
]


@pytest.mark.parametrize(("text", "expected", "kind"), CASES)
def test_each_kind_is_replaced_by_its_placeholder(text: str, expected: str, kind: str) -> None:
    assert redact(text) == (expected, (kind,))


@pytest.mark.parametrize(
    "text",
    [
        "visa 4111 1111 1111 1112 fails Luhn",  # non-Luhn digit run stays
        "order 4111111111111112",
        "iban GB82 WEST 1234 5698 7654 33",  # fails mod-97
        "On 2024-01-15 I bought 150 shares at $123.45",
        "Revenue was 1,234,567 in FY2024; target 12:30 meeting",
        "ssn-like 000-12-3456 is not a valid SSN",
        "Python 3.11 and numpy 2.4.6",
        "We met at 10:30:00 on 30.11.2026",
        "Order #123456789 shipped",
    ],
)
def test_ordinary_numbers_survive(text: str) -> None:
    redacted, kinds = redact(text)
    assert redacted == text and kinds == ()


def test_several_kinds_in_one_text_are_reported_once_each() -> None:
    text = "a@b.io or c@d.io, card 4111111111111111, call +33 6 12 34 56 78"
    redacted, kinds = redact(text)
    assert redacted == "[EMAIL] or [EMAIL], card [CARD], call [PHONE]"
    assert kinds == ("email", "card", "phone")


def test_kinds_are_selectable() -> None:
    text = "a@b.io, 4111111111111111"
    assert redact(text, ["email"]) == ("[EMAIL], 4111111111111111", ("email",))
    assert redact(text, []) == (text, ())


def test_unknown_kinds_are_bad_input() -> None:
    with pytest.raises(InvalidInputError, match="passport"):
        redact("x", ["email", "passport"])


def _luhn_complete(body: list[int]) -> str:
    total = 0
    for i, digit in enumerate(reversed(body)):
        value = digit * (1 if i % 2 else 2)
        total += value - 9 if value > 9 else value
    return "".join(map(str, body)) + str((10 - total % 10) % 10)


@given(st.lists(st.integers(0, 9), min_size=14, max_size=14), st.sampled_from(["", " ", "-"]))
def test_any_luhn_valid_card_is_redacted(body: list[int], sep: str) -> None:
    number = _luhn_complete([4, *body])
    spaced = sep.join(number[i : i + 4] for i in range(0, 16, 4))
    assert redact(f"pay with {spaced} please", ["card"]) == ("pay with [CARD] please", ("card",))


@given(st.lists(st.integers(0, 9), min_size=14, max_size=14), st.integers(1, 9))
def test_no_luhn_invalid_digit_run_is_redacted_as_a_card(body: list[int], bump: int) -> None:
    valid = _luhn_complete([4, *body])
    invalid = valid[:-1] + str((int(valid[-1]) + bump) % 10)
    assert redact(f"ref {invalid}", PII_KINDS) == (f"ref {invalid}", ())
