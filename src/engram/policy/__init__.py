"""Write policy, PII redaction and the poisoning guard: no I/O of their own (the
semantic detector calls the embedder it is given).

:class:`WritePolicy` decides whether a candidate memory may be stored. It
rejects noise and out-of-policy writes (each with a reason), holds writes that
read like instructions to the agent for human review (:class:`PoisoningGuard`
says which signal fired), and redacts personal data before anything is stored.
:func:`render_untrusted` renders recalled memory as escaped, delimited data with
a standing instruction that it is not a command.
"""

from engram.policy._guard import SEMANTIC_MARGIN, SEMANTIC_THRESHOLD, Hold, PoisoningGuard
from engram.policy._normalise import View, canonical, skeleton, views
from engram.policy._patterns import SIGNALS, Signal, pattern_signal
from engram.policy._redact import PII_KINDS, redact
from engram.policy._render import (
    IMITATION_MARKER,
    UNTRUSTED_PREAMBLE,
    RenderItem,
    neutralise,
    render_block,
    render_untrusted,
)
from engram.policy._semantic import ATTACK_INTENTS, BENIGN_LOOKALIKES, IntentDetector, Similarity
from engram.policy._text import SERVICE_RUNS, SERVICE_WORDS, is_service_phrase, width, word_count
from engram.policy._write import (
    SENSITIVITIES,
    SOURCES,
    STABLE_TAGS,
    PolicyDecision,
    WriteCandidate,
    WritePolicy,
    instruction_reason,
)

__all__ = [
    "ATTACK_INTENTS",
    "BENIGN_LOOKALIKES",
    "IMITATION_MARKER",
    "PII_KINDS",
    "SEMANTIC_MARGIN",
    "SEMANTIC_THRESHOLD",
    "SENSITIVITIES",
    "SERVICE_RUNS",
    "SERVICE_WORDS",
    "SIGNALS",
    "SOURCES",
    "STABLE_TAGS",
    "UNTRUSTED_PREAMBLE",
    "Hold",
    "IntentDetector",
    "PoisoningGuard",
    "PolicyDecision",
    "RenderItem",
    "Signal",
    "Similarity",
    "View",
    "WriteCandidate",
    "WritePolicy",
    "canonical",
    "instruction_reason",
    "is_service_phrase",
    "neutralise",
    "pattern_signal",
    "redact",
    "render_block",
    "render_untrusted",
    "skeleton",
    "views",
    "width",
    "word_count",
]
