"""Words, length and service phrases of a candidate memory, in any script (pure).

A word is a run of letters, combining marks and digits (``regex``'s Unicode
properties), so Cyrillic, Greek, Arabic and Devanagari words count like Latin
ones. Han, Hiragana and Katakana are written without spaces: each of their
characters counts as one word and two columns of length (the width a terminal
gives it), so a short Chinese sentence is as long as its English translation.
"""

from __future__ import annotations

import unicodedata

import regex

_WORD = regex.compile(r"[\p{L}\p{M}\p{N}]+(?:['’][\p{L}\p{M}]+)*")
_UNSPACED = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}\u30fc]")

_LANGUAGE = regex.compile(r"^\s*[a-z]{2}:")
_SERVICE_WORDS = """
en: ok okay k kk thanks thank you thx ty got it sure yes yeah yep no nope cool great nice
    sounds good noted will do done alright fine hi hello hey bye perfect awesome understood
    right cheers please lol much very so np welcome that's thats all hmm wow oh ah uh um huh
de: danke schön schoen vielen dank ja nein gut super prima alles klar tschüss hallo bitte
    genau passt okay verstanden sehr toll
fr: merci beaucoup oui non d'accord daccord bien super parfait salut bonjour au revoir
    génial entendu très ça marche
es: gracias muchas sí si vale bueno perfecto hola adiós adios genial claro de nada muy bien
it: grazie mille sì va bene perfetto ciao certo capito
pt: obrigado obrigada sim não valeu beleza olá tchau certo muito
nl: dank je wel bedankt nee oké prima doei hoi top
pl: dzięki dziękuję tak nie dobrze
tr: teşekkürler teşekkür ederim sağol evet hayır tamam
ru: спасибо большое да нет ок окей хорошо ладно понятно привет пока отлично супер класс угу
    ага норм ясно
uk: дякую так ні добре гаразд зрозуміло
el: ευχαριστώ ναι όχι εντάξει
ar: شكرا شكراً نعم لا حسنا حسناً طيب تمام مرحبا
he: תודה כן לא בסדר
hi: धन्यवाद शुक्रिया हाँ हां नहीं ठीक है अच्छा नमस्ते जी
ko: 감사합니다 고마워요 고마워 네 아니요 좋아요 알겠습니다 안녕하세요
"""

_SERVICE_RUNS = """
zh: 谢谢 多谢 感谢 好的 好 嗯 是的 是 对 收到 明白 了解 没问题 行 可以 哈哈 你好 再见 不客气 非常
ja: ありがとう ございます はい いいえ 了解 わかりました どうも よろしく お願いします
"""

SERVICE_WORDS = frozenset(
    word for line in _SERVICE_WORDS.splitlines() for word in _LANGUAGE.sub("", line).split()
)
"""Words that carry no fact: a text made only of them is a service phrase ("ok, thanks!",
"danke schön", "спасибо большое", "شكرا")."""

SERVICE_RUNS = tuple(
    sorted(
        {run for line in _SERVICE_RUNS.splitlines() for run in _LANGUAGE.sub("", line).split()},
        key=len,
        reverse=True,
    )
)
"""Service phrases of scripts written without spaces ("谢谢", "好的", "ありがとう")."""


def words(text: str) -> list[str]:
    """Lower-cased (NFKC) words of ``text`` in any script."""
    return _WORD.findall(unicodedata.normalize("NFKC", text).lower())


def word_count(text: str) -> int:
    """Space-separated words of ``text`` that hold a letter or digit, any script; each
    Han/kana character counts as one word ("risk:low" is one, "我是医生" four)."""
    return sum(_count(token) for token in unicodedata.normalize("NFKC", text).split())


def _count(token: str) -> int:
    unspaced = len(_UNSPACED.findall(token))
    rest = _UNSPACED.sub(" ", token)
    return unspaced + (1 if _WORD.search(rest) else 0)


def width(text: str) -> int:
    """Length in columns: wide and fullwidth characters (CJK) count two."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def is_service_phrase(text: str) -> bool:
    """True when ``text`` holds no word that is not a service word in some language."""
    return all(_is_service_word(word) for word in words(text))


def _is_service_word(word: str) -> bool:
    if word in SERVICE_WORDS:
        return True
    if not _UNSPACED.search(word):
        return False
    for run in SERVICE_RUNS:
        word = word.replace(run, "")
    return not word
