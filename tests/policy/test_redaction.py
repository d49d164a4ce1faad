"""Redaction of personal data and secrets: typed placeholders; checks keep ordinary numbers."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engram.errors import InvalidInputError
from engram.policy import PII_KINDS, WriteCandidate, WritePolicy, redact

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


# ------------------------------------------------ invisible and space-like characters

INVISIBLE_OR_SPACE = {
    "zero-width space": "\u200b",
    "zero-width joiner": "\u200d",
    "zero-width non-joiner": "\u200c",
    "word joiner": "\u2060",
    "byte order mark": "\ufeff",
    "soft hyphen": "\u00ad",
    "left-to-right mark": "\u200e",
    "no-break space": "\u00a0",
    "narrow no-break space": "\u202f",
    "thin space": "\u2009",
    "figure space": "\u2007",
    "ideographic space": "\u3000",
}
NUMBERS = [
    ("4111{0}1111{0}1111{0}1111", "card", ("4111", "1111")),
    ("DE89{0}3704{0}0044{0}0532{0}0130{0}00", "iban", ("3704", "0532")),
    ("+1 555{0}123{0}4567", "phone", ("555", "4567")),
]


def _hide(template: str, char: str, kind: str, parts: tuple[str, ...]) -> None:
    redacted, kinds = redact(f"mine is {template.format(char)} ok")
    assert redacted == f"mine is [{kind.upper()}] ok" and kinds == (kind,)
    assert not any(part in redacted for part in parts)


@pytest.mark.parametrize("char", list(INVISIBLE_OR_SPACE.values()), ids=list(INVISIBLE_OR_SPACE))
@pytest.mark.parametrize(("template", "kind", "parts"), NUMBERS, ids=[n[1] for n in NUMBERS])
def test_invisible_or_space_like_characters_do_not_hide_a_number(
    char: str, template: str, kind: str, parts: tuple[str, ...]
) -> None:
    _hide(template, char, kind, parts)


@pytest.mark.parametrize("char", [c for c in INVISIBLE_OR_SPACE.values() if not c.isspace()])
def test_invisible_characters_do_not_hide_an_address(char: str) -> None:
    """(A space splits an address in two words for every reader: only invisible
    characters are a trick there.)"""
    _hide("an{0}n@exa{0}mple.com", char, "email", ("an", "mple"))


@pytest.mark.parametrize(
    "number",
    [
        "4111.1111.1111.1111",
        "4111/1111/1111/1111",
        "4111  1111  1111  1111",
        "4111\u00a01111\u00a01111\u00a01111",
        "4111\u20131111\u20131111\u20131111",  # en dash
        "４１１１ １１１１ １１１１ １１１１",  # fullwidth digits
        "3782 822463 10005",  # American Express grouping
    ],
)
def test_cards_are_redacted_with_the_separators_people_use(number: str) -> None:
    assert redact(f"card {number} for the gym") == ("card [CARD] for the gym", ("card",))


@pytest.mark.parametrize(
    "iban",
    [
        "de89 3704 0044 0532 0130 00",
        "DE89-3704-0044-0532-0130-00",
        "DE89\u200b370400440532013000",
        "gb82west12345698765432",
        "FR14\u00a02004\u00a01010\u00a00505\u00a00001\u00a03M02\u00a0606",
    ],
)
def test_ibans_are_redacted_whole_in_any_case_and_spacing(iban: str) -> None:
    assert redact(f"my iban is {iban} ok") == ("my iban is [IBAN] ok", ("iban",))


@pytest.mark.parametrize(
    "text",
    [
        "Mail me at john\uff20example.com please.",  # fullwidth commercial at
        "Mail me at john\ufe6bexample.com please.",  # small commercial at
        "Mail me at ｊｏｈｎ＠ｅｘａｍｐｌｅ．ｃｏｍ please.",
    ],
)
def test_look_alike_at_signs_do_not_hide_an_address(text: str) -> None:
    assert redact(text) == ("Mail me at [EMAIL] please.", ("email",))


@pytest.mark.parametrize(
    "text",
    [
        "Temperatures were 21.5 22.0 19.5 18.0 20.5 this week",  # mixed separators
        "On 12/05/2024 and 13/06/2024 I flew to Rome",
        "Prices: 1.299 / 2.499 / 3.999 euros",
        "Version 1.2.3 of tool 4.5.6 was released on 2024.01.15",
        "Tickers AAPL, MSFT and NVDA; I bought 100 at 123.45",
        "The meeting is at 10:30 in room 4111",
        "Area code 030/1234 and zip 10115",
        "The word is de12 abcd efgh ijkl mnop, a puzzle",  # IBAN-shaped, fails the check
    ],
)
def test_numbers_that_are_not_personal_data_survive_the_wider_separators(text: str) -> None:
    assert redact(text) == (text, ())


def test_text_around_a_redaction_keeps_its_invisible_and_special_characters() -> None:
    """Only the span of the personal data is replaced: a family emoji's joiners and a
    French no-break space elsewhere in the text stay as written."""
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    text = f"{family} prix\u00a0: 10 €, card 4111\u200b1111\u200b1111\u200b1111"
    assert redact(text) == (f"{family} prix\u00a0: 10 €, card [CARD]", ("card",))


# ---------------------------------------------------------------------------- secrets

SECRETS = [
    (
        "My password is hunter2-Xq9 for the bank portal.",
        "My password is [SECRET] for the bank portal.",
    ),
    ("password: correct horse battery, thanks", "password: [SECRET], thanks"),
    ("Wifi password = s3cr3t!", "Wifi password = [SECRET]"),
    ("The passcode for the door is 4471.", "The passcode for the door is [SECRET]."),
    ("My PIN is 1234.", "My PIN is [SECRET]."),
    ("my bank card pin is 0000, don't tell", "my bank card pin is [SECRET], don't tell"),
    ('My password is "blue Sky 42" at work.', "My password is [SECRET] at work."),
    ("Mein Passwort ist Sommer2024!", "Mein Passwort ist [SECRET]"),
    ("Mon mot de passe est Chat-42.", "Mon mot de passe est [SECRET]."),
    ("Mi contraseña es Perro99 ok", "Mi contraseña es [SECRET] ok"),
    ("key sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD.", "key [SECRET]."),
    ("key sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv1234567890 ok", "key [SECRET] ok"),
    ("stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc in use", "stripe [SECRET] in use"),
    ("restricted rk_live_51H8abcDEFghiJKLmnop ok", "restricted [SECRET] ok"),
    ("aws AKIAIOSFODNN7EXAMPLE ok", "aws [SECRET] ok"),
    ("My AWS access key is AKIAIOSFODNN7EXAMPLE.", "My AWS access key is [SECRET]."),
    ("session ASIAY34FZKBOKMUTVV7A ok", "session [SECRET] ok"),
    ("gh ghp_16C7e42F292c6912E7710c838347Ae178B4a ok", "gh [SECRET] ok"),
    ("pat github_pat_11ABCDEFG0abcdefghijkl_mnopqrstuvwxyz0123456789 ok", "pat [SECRET] ok"),
    ("slack xoxb-123456789012-1234567890123-AbCdEfGhIjKl ok", "slack [SECRET] ok"),
    ("maps AIzaSyD-abcdefghijklmnopqrstuvwxyz12345 ok", "maps [SECRET] ok"),
    ("gitlab glpat-xYz12AbCdEfGhIjKlMnO ok", "gitlab [SECRET] ok"),
    (
        "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0"
        ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U ok",
        "jwt [SECRET] ok",
    ),
    (
        "My key: -----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\n"
        "-----END RSA PRIVATE KEY----- bye",
        "My key: [SECRET] bye",
    ),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA", "[SECRET]"),
]


@pytest.mark.parametrize(("text", "expected"), SECRETS)
def test_secrets_are_redacted_and_the_sentence_is_kept(text: str, expected: str) -> None:
    assert redact(text) == (expected, ("secret",))


@pytest.mark.parametrize(
    "text",
    [
        "My password manager is 1Password.",
        "My password is stored in 1Password.",
        "My password is weak, I should change it.",
        "I changed my PIN yesterday.",
        "PIN codes at my bank are four digits long.",
        "I skate with sk-8 tickers on my board.",
        "The SKU is sk-2231 in the catalogue.",
        "I use the gh CLI: gh pr create --fill",
        "Tickers: AAPL, MSFT, AKIA is not one, NVDA",
        "I read eyJ as the start of a JSON blob in base64.",
        "My favourite token is the one from the arcade.",
        "The key to success is patience.",
        "-----BEGIN PUBLIC KEY----- is what I share with friends",
        "sk-the-quick-brown-fox-jumps-over-the-dog",
    ],
)
def test_ordinary_words_near_secret_words_survive(text: str) -> None:
    assert redact(text) == (text, ())


def test_the_write_policy_stores_no_digit_of_a_number_split_by_invisible_characters() -> None:
    card, iban = "4111\u200b1111\u2060111\u200d1\u00a01111", "DE89\u200b370400440532013000"
    text = f"My gym card is {card}, IBAN {iban}."
    decision = WritePolicy().evaluate(WriteCandidate(text, tags=("fact",)))
    assert decision.text == "My gym card is [CARD], IBAN [IBAN]."
    assert decision.redactions == ("iban", "card")
