"""Offline LangChain chat models for the answer-level evaluation: a deterministic
answerer that reads only the memory block of its prompt, a judge that compares the
gold answer with the generated one, and models that reply with a script or fail."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

STOP = frozenset(
    {
        "what",
        "when",
        "where",
        "which",
        "who",
        "does",
        "did",
        "say",
        "said",
        "about",
        "the",
        "and",
        "with",
        "from",
        "that",
        "this",
    }
)
DONT_KNOW = "I don't know."


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 2 and w not in STOP}


def _prompt(messages: Sequence[BaseMessage]) -> str:
    return "\n".join(m.text for m in messages)


class _Scripted(BaseChatModel):
    """Replies with ``reply(prompt)``; counts its calls (thread-safe: batch uses threads)."""

    reply: Callable[[str], str]
    calls: list[str] = Field(default_factory=list)
    lock: Any = Field(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        prompt = _prompt(messages)
        with self.lock:
            self.calls.append(prompt)
        message = AIMessage(content=self.reply(prompt))
        return ChatResult(generations=[ChatGeneration(message=message)])


def question_of(prompt: str) -> str:
    """The question an answer prompt asks (its last ``Question:`` line)."""
    return prompt.rsplit("Question:", 1)[1]


def answer_from_memory(prompt: str) -> str:
    """The text of the memory line sharing the most words with the question, else
    "I don't know": only what is inside ``<memory>...</memory>`` can be answered."""
    block = prompt.split("<memory>", 1)[1].split("</memory>", 1)[0]
    question = _words(question_of(prompt))
    best, score = DONT_KNOW, 0
    for line in block.splitlines():
        if line.startswith("## ") or ": " not in line:
            continue
        text = line.split(": ", 1)[1]
        shared = len(_words(text) & question)
        if shared > score:
            best, score = text, shared
    return best


def judge_by_words(prompt: str) -> str:
    """CORRECT when every word of the gold answer is in the generated one."""
    gold = re.search(r"^Gold answer: (.*)$", prompt, re.M)
    answer = re.search(r"^Generated answer: (.*)$", prompt, re.M)
    assert gold and answer, prompt
    found = set(re.findall(r"\w+", gold.group(1).lower())) <= set(
        re.findall(r"\w+", answer.group(1).lower())
    )
    return "The answer states the gold fact.\nCORRECT" if found else "It does not.\nWRONG"


def answerer() -> _Scripted:
    return _Scripted(reply=answer_from_memory)


def judge() -> _Scripted:
    return _Scripted(reply=judge_by_words)


def scripted(reply: Callable[[str], str]) -> _Scripted:
    return _Scripted(reply=reply)


class ModelDown(RuntimeError):
    """What a provider's client raises when the service fails."""


def failing(when: Callable[[str], bool] = lambda prompt: True) -> _Scripted:
    """An answerer that raises :class:`ModelDown` for prompts ``when`` picks."""

    def reply(prompt: str) -> str:
        if when(prompt):
            raise ModelDown("503 service unavailable\nretry later")
        return answer_from_memory(prompt)

    return _Scripted(reply=reply)
