"""Redaction: personal data and secrets replaced by typed placeholders before anything is
stored.

Matching reads a folded copy of the text, so nothing invisible or look-alike can split a
number or an address: format characters (zero-width space and joiners, word joiner,
soft hyphen, bidi marks) are dropped, every Unicode space (no-break, thin, ideographic)
reads as a space, every dash as ``-``, and the rest is NFKC-normalised (fullwidth digits,
``＠``). Each match is mapped back to the span of the original text it came from and that
whole span (the invisible characters inside it too) becomes the placeholder; the rest of
the text is kept as written.
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from engram.errors import InvalidInputError
from engram.policy._normalise import is_invisible

PII_KINDS = ("secret", "email", "iban", "card", "national_id", "ip", "phone")
"""Kinds of personal data and secrets :func:`redact` knows, in the order they are applied
(secrets first: a password that looks like a card number is a password)."""


@dataclass(frozen=True)
class _Rule:
    """A pattern of one kind, the check a match must pass, and the group it redacts
    (``value``: "my password is [SECRET]" keeps the sentence; else the whole match)."""

    pattern: re.Pattern[str]
    valid: Callable[[str], bool] = lambda _: True

    def spans(self, folded: str) -> Iterable[tuple[int, int]]:
        group = "value" if "value" in self.pattern.groupindex else 0
        for match in self.pattern.finditer(folded):
            if self.valid(match.group(group)):
                yield match.span(group)


# ------------------------------------------------------------------------------ checks


def _luhn_ok(digits: str) -> bool:
    total = 0
    for i, char in enumerate(reversed(digits)):
        value = int(char) * (2 if i % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


def _one_separator(span: str) -> bool:
    """Whether the digit groups of ``span`` are separated one way only (spaces, dots,
    slashes or dashes): "21.5 22.0 19.5" is a list of numbers, not one number."""
    return len({sep.strip() or " " for sep in re.findall(r"\D+", span)}) <= 1


def _card_ok(span: str) -> bool:
    digits = re.sub(r"\D", "", span)
    return 13 <= len(digits) <= 19 and _one_separator(span) and _luhn_ok(digits)


_IBAN_LENGTHS = {
    country: int(length)
    for country, length in re.findall(
        r"([A-Z]{2})(\d{2})",
        """
    AD24 AE23 AL28 AO25 AT20 AZ28 BA20 BE16 BF28 BG22 BH22 BI27 BJ28 BR29 BY28 CH21 CI28 CM27
    CR22 CV25 CY28 CZ24 DE22 DJ27 DK18 DO28 DZ26 EE20 EG29 ES24 FI18 FK18 FO18 FR27 GB22 GE22
    GI23 GL18 GR27 GT28 HN28 HR21 HU28 IE22 IL23 IQ23 IR26 IS26 IT27 JO30 KW30 KZ20 LB28 LC32
    LI21 LT20 LU20 LV21 LY25 MC27 MD24 ME22 MG27 MK19 ML28 MN20 MR27 MT31 MU30 MZ25 NI28 NL18
    NO15 OM23 PK24 PL28 PS29 PT25 QA29 RO24 RS22 RU33 SA24 SC31 SD18 SE24 SI19 SK24 SM27 SN28
    SO23 ST25 SV28 TL23 TN24 TR26 UA29 VA22 VG24 XK20 YE30
    """,
    )
}
"""The length of an IBAN in each country that issues them (the SWIFT IBAN registry): with
the mod-97 check it keeps a lower-case word run shaped like an IBAN from passing as one."""


def _iban_ok(span: str) -> bool:
    compact = re.sub(r"[^0-9A-Za-z]", "", span).upper()
    if _IBAN_LENGTHS.get(compact[:2]) != len(compact):
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


def _has_digit(span: str) -> bool:
    """A random key of 20 or more characters holds a digit; a hyphenated phrase does not."""
    return any(c.isdigit() for c in span)


def _not_a_plain_word(value: str) -> bool:
    """Whether a value stated as a secret ("my password is X") reads as one: quoted, or
    holding something besides lower-case letters. "My password is weak" or "is stored in
    1Password" describe the secret; "is hunter2", "is Sommer2024!" or "is 1234" state it."""
    return value[:1] in "\"'“‘" or not (value.isalpha() and value.islower())


# ---------------------------------------------------------------------------- patterns

_SEP = r"(?: {1,3}|[./-])"
"""How people separate the groups of a number: spaces (no-break and ideographic ones
read as spaces), dots, slashes or dashes (any dash reads as ``-``)."""
_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
_SECRET_NAME = (
    r"(?:pass(?:word|wd|code|phrase)|pwd|pin(?: ?code| number)?|security code|cvv2?|cvc"
    r"|(?:api|access|secret|private) key|(?:access|auth|api|bearer|refresh|session) token"
    r"|client secret|passwort|kennwort|geheimzahl|mot de passe|code pin|contraseña|senha"
    r"|wachtwoord|parola d'ordine)"
)
"""Words naming a credential, in English, German, French, Spanish, Portuguese, Dutch and
Italian ("password" is also the Italian word)."""
_SECRET_SUBJECT = (
    rf"\b{_SECRET_NAME}\b(?:\s+(?:for|of|to|on|at|für|pour|de|du|para|per|voor|van)\s+"
    r"(?:[^\s:=.,;]+\s+){0,3}?[^\s:=.,;]+)?"
)
"""The name of a credential, and what it is for ("password for the bank portal")."""
_QUOTED = r"\"[^\"\n]{1,100}\"|'[^'\n]{1,100}'|“[^”\n]{1,100}”|‘[^’\n]{1,100}’"
_NOT_REDACTED = r"(?!\[[A-Z_]+\])"
"""Not a placeholder already ("access key is [SECRET]" after the key itself was redacted)."""
_KEY_PREFIXES = (
    # OpenAI (sk-, sk-proj-, sk-svcacct-), Anthropic (sk-ant-): a digit tells a key
    # from a hyphenated phrase
    _Rule(re.compile(r"(?<![\w-])sk-[A-Za-z0-9_-]{20,}"), _has_digit),
    _Rule(re.compile(r"(?<![\w-])[sr]k_(?:live|test)_[A-Za-z0-9]{10,}")),  # Stripe
    _Rule(re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])")),  # AWS
    _Rule(re.compile(r"(?<![\w-])(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_\w{22,})")),
    _Rule(re.compile(r"(?<![\w-])xox[abeprs]-[A-Za-z0-9-]{10,}"), _has_digit),  # Slack
    _Rule(re.compile(r"(?<![\w-])AIza[0-9A-Za-z_-]{35}")),  # Google
    _Rule(re.compile(r"(?<![\w-])glpat-[0-9A-Za-z_-]{20,}")),  # GitLab
)

_RULES: dict[str, tuple[_Rule, ...]] = {
    "secret": (
        # a PEM private key block, to its end (or the text's, when it was cut off)
        _Rule(
            re.compile(
                r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?"
                r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)",
                re.DOTALL,
            )
        ),
        # a JSON Web Token: base64url header and payload, both JSON objects ("eyJ" is '{"')
        _Rule(re.compile(r"(?<![\w-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[\w-]*")),
        *_KEY_PREFIXES,
        # a labelled value, to the end of its clause: "password: correct horse battery"
        _Rule(
            re.compile(
                rf"{_SECRET_SUBJECT}\s*[:=]\s*"
                rf"(?P<value>{_NOT_REDACTED}(?:{_QUOTED}|[^\s,;][^\n,;]{{0,99}}?))"
                r"(?=[.,;:?)\]]*\s*$|[\n,;]|[.?)\]]\s)",
                re.IGNORECASE,
            )
        ),
        # a stated value: "my PIN is 1234", "mein Passwort ist Sommer2024!"
        _Rule(
            re.compile(
                rf"{_SECRET_SUBJECT}\s+(?:is|was|is now|ist|lautet|war|est|était|es|era|è|é)"
                rf"\s+(?P<value>{_NOT_REDACTED}(?:{_QUOTED}|\S+?))(?=[.,;:?)\]]*(?:\s|$))",
                re.IGNORECASE,
            ),
            _not_a_plain_word,
        ),
    ),
    # from the start of an address only: trying every position of a long word would cost
    # the square of its length
    "email": (_Rule(re.compile(r"(?<![\w.%+-])[\w.%+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}")),),
    "iban": (
        _Rule(
            re.compile(
                rf"(?<![A-Za-z0-9])[A-Za-z]{{2}}\d{{2}}(?:{_SEP}?[A-Za-z0-9]{{4}}){{2,7}}"
                rf"(?:{_SEP}?[A-Za-z0-9]{{1,3}})?(?![A-Za-z0-9])"
            ),
            _iban_ok,
        ),
    ),
    "card": (_Rule(re.compile(rf"(?<!\d)(?<!\d[./-])\d(?:{_SEP}?\d){{12,18}}(?!\d)"), _card_ok),),
    "national_id": (
        _Rule(
            re.compile(
                # US social security number (3-2-4 with dashes or spaces).
                r"\b(?!000|666|9\d\d)\d{3}([- ])(?!00)\d{2}\1(?!0000)\d{4}\b"
                # UK National Insurance number.
                r"|\b(?!BG|GB|NK|KN|TN|NT|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]"
                r" ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b"
            )
        ),
    ),
    "ip": (
        _Rule(
            re.compile(
                rf"(?<![\d.]){_OCTET}(?:\.{_OCTET}){{3}}(?!\.?\d)"
                r"|(?<![\w:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:])"
            ),
            _ip_ok,
        ),
    ),
    "phone": (
        # International: +CC or 00CC, then groups of digits, optional (area) code.
        _Rule(
            re.compile(
                rf"(?<![\w+])(?:\+|00)[1-9]\d{{0,2}}(?:{_SEP}?\(?\d{{1,5}}\)?){{2,6}}(?!\w)"
            ),
            _digit_count(8, 15),
        ),
        # National: three or more separated groups, e.g. (555) 123-4567, 06 12 34 56 78;
        # 10-12 digits, so dates (2024-01-15, 30.11.2026) and short codes stay.
        _Rule(
            re.compile(
                rf"(?<![\w+./-])\(?\d{{2,5}}\)?{_SEP}\d{{2,5}}(?:{_SEP}\d{{2,5}}){{1,4}}(?![\w/-])"
            ),
            _digit_count(10, 12),
        ),
    ),
}


# ----------------------------------------------------------------------------- folding


@lru_cache(maxsize=4096)
def _fold_char(char: str) -> str:
    if is_invisible(char):
        return ""
    category = unicodedata.category(char)
    if category == "Zs":
        return " "
    if category == "Pd" or char == "\u2212":  # dashes, and the minus sign
        return "-"
    return unicodedata.normalize("NFKC", char)


def _fold(text: str) -> tuple[str, list[int] | None]:
    """The text matching reads, and the index in ``text`` of each of its characters
    (``None`` when the two are the same: an ASCII text folds to itself)."""
    if text.isascii():
        return text, None
    pieces: list[str] = []
    origin: list[int] = []
    for at, char in enumerate(text):
        folded = char if char.isascii() else _fold_char(char)
        pieces.append(folded)
        origin.extend([at] * len(folded))
    return "".join(pieces), origin


@dataclass
class _Redacting:
    """A text being redacted, with its folded reading (read again only after a change)."""

    text: str
    found: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.folded, self.origin = _fold(self.text)

    def apply(self, kind: str, rule: _Rule) -> None:
        spans = [(start, end) for start, end in rule.spans(self.folded) if end > start]
        if not spans:
            return
        if kind not in self.found:
            self.found.append(kind)
        if (origin := self.origin) is not None:
            spans = [(origin[start], origin[end - 1] + 1) for start, end in spans]
        self.text = _replace(self.text, spans, f"[{kind.upper()}]")
        self.folded, self.origin = _fold(self.text)


def _replace(text: str, spans: list[tuple[int, int]], placeholder: str) -> str:
    out, last = [], 0
    for start, end in spans:
        out += [text[last:start], placeholder]
        last = end
    out.append(text[last:])
    return "".join(out)


def redact(text: str, kinds: Iterable[str] = PII_KINDS) -> tuple[str, tuple[str, ...]]:
    """Replace personal data and secrets with typed placeholders (``[EMAIL]``,
    ``[CARD]``, ``[SECRET]``...).

    Returns the new text and the kinds that were found. Card numbers must pass the
    Luhn check and IBANs their country's length and the mod-97 check, so ordinary
    digit runs survive; a stated secret ("my PIN is 1234") loses only its value.
    """
    wanted = set(kinds)
    unknown = wanted - set(PII_KINDS)
    if unknown:
        raise InvalidInputError(f"unknown PII kinds {sorted(unknown)}; known: {PII_KINDS}")
    state = _Redacting(text)
    for kind in PII_KINDS:
        for rule in _RULES[kind] if kind in wanted else ():
            state.apply(kind, rule)
    return state.text, tuple(state.found)
