"""Patterns of instructions aimed at the agent, in the main languages (pure).

Each :class:`Signal` names one attack intent and holds patterns for it in English
and in German, Dutch, French, Spanish, Italian, Portuguese, Polish, Turkish,
Russian, Ukrainian, Greek, Arabic, Hindi, Chinese, Japanese and Korean. They are
written from how each intent is phrased in general (the verbs and objects of
"ignore your instructions", "always approve", "send the history to ..."), and
matched against every normalised reading of a text (see
:mod:`engram.policy._normalise`); the semantic detector covers paraphrases.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass, replace

import regex

from engram.policy._literals import Needed, fold, needed

_F = regex.IGNORECASE | regex.MULTILINE | regex.V1


@dataclass(frozen=True)
class Signal:
    """An attack intent: its name, a readable reason and its patterns (compiled on first
    use: compiling them all costs about a second, which a process that never screens a
    write should not pay)."""

    name: str
    reason: str
    sources: tuple[str, ...]
    gate_sources: tuple[str, ...] = ()
    """Each must match somewhere before the ``gated`` patterns are tried (a cheap
    necessary condition: a long document without any URL skips the URL patterns)."""
    gated_sources: tuple[str, ...] = ()
    gate_hint_sources: tuple[str, ...] = ()
    """For each gate, a pattern that matches wherever the gate does and costs less (or
    ``""`` for none): a text the hint misses skips the gate, with the same verdict."""

    @functools.cached_property
    def patterns(self) -> tuple[regex.Pattern[str], ...]:
        return _compiled(self.sources)

    @functools.cached_property
    def gates(self) -> tuple[regex.Pattern[str], ...]:
        return _compiled(self.gate_sources)

    @functools.cached_property
    def gated(self) -> tuple[regex.Pattern[str], ...]:
        return _compiled(self.gated_sources)

    @functools.cached_property
    def _screened(self) -> tuple[tuple[Screened, ...], tuple[Screened, ...], tuple[Screened, ...]]:
        hints = self.gate_hint_sources or ("",) * len(self.gate_sources)
        gates = tuple(
            replace(g, hint=regex.compile(h, _F) if h else None)
            for g, h in zip(_screened(self.gate_sources), hints, strict=True)
        )
        return _screened(self.sources), gates, _screened(self.gated_sources)

    @functools.cached_property
    def literals(self) -> frozenset[str]:
        """Every literal one of the screens looks for."""
        return frozenset(s for p in itertools.chain(*self._screened) for s in p.needed or ())

    @functools.cached_property
    def _by_literal(self) -> tuple[_Index, _Index]:
        patterns, _, gated = self._screened
        return _index(patterns), _index(gated)

    def search(
        self, text: str, folded: str | None = None, present: frozenset[str] | None = None
    ) -> bool:
        """Whether ``text`` matches (``folded``: its :func:`._literals.fold`, if known;
        ``present``: which of :attr:`literals`, at least, ``folded`` holds). Only the
        patterns one of whose needed literals is present are tried."""
        folded = fold(text) if folded is None else folded
        present = literals_in(folded, self.literals) if present is None else present
        _, gates, _ = self._screened
        patterns, gated = (index.tried(present) for index in self._by_literal)
        if any(p.search(text, present) for p in patterns):
            return True
        return (
            bool(gated)
            and all(g.search(text, present) for g in gates)
            and any(p.search(text, present) for p in gated)
        )


@dataclass(frozen=True)
class _Index:
    """Screened patterns by the literals they need (those needing none: always tried)."""

    items: tuple[Screened, ...]
    by_literal: dict[str, tuple[int, ...]]
    always: frozenset[int]

    def tried(self, present: frozenset[str]) -> list[Screened]:
        """The patterns a text holding just the ``present`` literals may match, in order."""
        hit = set(self.always)
        for literal in present:
            hit.update(self.by_literal.get(literal, ()))
        return [self.items[i] for i in sorted(hit)]


def _index(items: tuple[Screened, ...]) -> _Index:
    by_literal: dict[str, list[int]] = {}
    for i, item in enumerate(items):
        for literal in item.needed or ():
            by_literal.setdefault(literal, []).append(i)
    always = frozenset(i for i, item in enumerate(items) if item.needed is None)
    return _Index(items, {k: tuple(v) for k, v in by_literal.items()}, always)


@dataclass(frozen=True, slots=True)
class Screened:
    """A pattern behind cheap tests a text must pass first, none of which a text it
    matches fails: one of its needed literals in the case-folded text (:mod:`._literals`;
    ``None``: none known), and a cheaper regex that matches wherever the pattern does
    (``hint``)."""

    pattern: regex.Pattern[str]
    needed: Needed
    hint: regex.Pattern[str] | None = None

    def search(self, text: str, present: frozenset[str]) -> bool:
        """Whether ``text`` matches; ``present``: the needed literals its folded text holds."""
        if self.needed is not None and self.needed.isdisjoint(present):
            return False
        if self.hint is not None and self.hint.search(text) is None:
            return False
        return self.pattern.search(text) is not None


def _compiled(sources: tuple[str, ...]) -> tuple[regex.Pattern[str], ...]:
    return tuple(regex.compile(source, _F) for source in sources)


def _screened(sources: tuple[str, ...]) -> tuple[Screened, ...]:
    return tuple(
        Screened(pattern, needed(source))
        for source, pattern in zip(sources, _compiled(sources), strict=True)
    )


def literals_in(folded: str, literals: frozenset[str]) -> frozenset[str]:
    """Those of ``literals`` that ``folded`` holds (an ASCII text holds no other)."""
    tried = _ascii(literals) if folded.isascii() else literals
    return frozenset(s for s in tried if s in folded)


@functools.lru_cache(maxsize=64)
def _ascii(literals: frozenset[str]) -> tuple[str, ...]:
    return tuple(s for s in literals if s.isascii())


@functools.cache
def _all_literals() -> frozenset[str]:
    return frozenset(s for signal in SIGNALS for s in signal.literals)


def _signal(name: str, reason: str, *sources: str) -> Signal:
    return Signal(name, reason, sources)


_AI = (
    r"(?:assistant|agent|ai|a\.i\.|model|bot|chatbot|llm|copilot|claude|gpt|chatgpt|gemini|llama"
    r"|system)"
)
_AGENT = r"(?:assistant|agent|ai|a\.i\.|bot|chatbot|llm|copilot|claude|gpt|chatgpt|gemini)"
_YOU = (
    rf"(?:you|the (?:ai |research |market |personal )?{_AGENT}|your {_AGENT}"
    rf"|(?:^|(?<=[.!?;:\n]\s?)){_AGENT})"
)
_FROM_NOW = (
    r"(?:from now on(?:wards?)?|going forward|henceforth|from this (?:point|moment|day) (?:on(?:wards?)?"
    r"|forward)|from here (?:on(?: out)?|forward|onwards?)|starting (?:now|today)|from today(?: on"
    r"(?:wards?)?)?|effective immediately)"
)
"""When a standing order starts: an attack's usual opening."""
_START = (
    r"(?:^|[.!?;:\n]\s*|\b(?:and|then|so|also|but)\s+|,\s*)(?:please\s+|kindly\s+|now\s+)?"
    rf"(?:{_FROM_NOW},?\s+)?(?:please\s+|kindly\s+)?"
)
"""Where an imperative starts: a sentence, clause or standing order ("from now on, ...")."""
_OBJECT = (
    r"(?:instructions?|prompts?|rules|guidelines|guidance|directions|directives|constraints|guardrails"
    r"|safeguards|restrictions|limitations|filters|polic(?:y|ies)|programming|training|orders"
    r"|system (?:message|prompt)|safety(?: rules| guidelines| filters| checks)?|commands)"
)
_NOT_FIRST_PERSON = (
    r"(?<!\b(?:i|we|me to|us to|i'll|i will|i had to|i have to|i tend to|i always|i often|i usually"
    r"|i never|i sometimes|i'd|i would|you can|they)\s)"
)
"""Not right after a first-person subject: "I ignore the assembly instructions" is a fact."""
_NOT_REQUIRED = (
    r"(?<!\b(?:never|not|no|nothing|nobody|none|neither|nor|don't|doesn't|won't|can't|cannot"
    r"|mustn't|shouldn't|isn't|aren't)\b(?!\s+(?:hesitate|wait|bother|forget|stop|cease|quit"
    r"|refrain|fail|delay|need|needed|necessary|matter|longer|reason|problem|point|worry|hold back"
    r"|think twice|be afraid|be shy))[^.!?;:,\n]{0,80})"
)
"""Not in a clause that forbids the act done "without" approval: "never move money without
asking" requires the approval, where "move money without asking" waives it. A negation that
only turns into a push ("don't hesitate to", "no matter what", "never wait") does not count,
and a clause ends at punctuation: "never wait: pay without asking" is still a waiver."""
_OWN_CLAUSE = (
    r"(?<!(?:^|[.!?;:\n]\s*|\b(?:and|but|so|then|because|when|while|if)\s+|,\s*)"
    r"(?:i|we|i've|i'm|i'd|i'll|we've|we're|we'd|we'll)\s(?:(?!\b(?:you|your|assistant|agent|ai"
    r"|bot|model|want|wants|need|needs|like|wish|expect|require|prefer|insist|order|instruct"
    r"|authori[sz]e|allow|permit|consent|agree|demand|ask|let)\b)[^.!?;:\n]){0,80})"
)
"""Not in a clause whose subject is the user ("I", "we") and that neither addresses the
agent nor says what the user wants of it: "I paid the plumber without asking my wife" is
a fact, "I want you to pay without asking" and "Pay without asking" are not."""
_CONSENT = (
    r"(?:approvals?|permissions?|confirmations?|consent|sign-?offs?|authori[sz]ations?|go-?aheads?"
    r"|okays?|clearance|verifications?|double-?checks?)"
)
"""What a human gives before the agent acts."""
_ACTIONS = (
    r"(?:payments?|transfers?|trades?|orders?|purchases?|refunds?|withdrawals?|transactions?"
    r"|payouts?|invoices?|wires?|remittances?|commands?|deployments?|sales?|charges?|bills?"
    r"|money|funds)"
)
"""What an agent does that a human approves."""
_WAIVED = (
    rf"(?:(?:needs?|requires?)\s+no\s+(?:\S+\s+){{0,2}}?{_CONSENT}"
    rf"|(?:do|does|will|should)(?:n't| not)\s+(?:need|require)\s+(?:\S+\s+){{0,2}}?{_CONSENT}"
    rf"|no longer (?:needs?|requires?)\s+(?:\S+\s+){{0,2}}?{_CONSENT}"
    r"|(?:never|no longer|(?:does|do|will)(?:n't| not)|won't)\s+(?:needs?|has|have)\s+to\s+(?:sign off"
    r"|approve|confirm|authori[sz]e|okay|ok|be asked|be consulted|be checked with)"
    rf"|no\s+(?:\S+\s+){{0,2}}?{_CONSENT}\s+(?:is\s+|are\s+)?(?:needed|required|necessary)"
    rf"|{_CONSENT}\s+(?:is|are)\s+(?:(?:no longer|not|never)\s+(?:needed|required|necessary)"
    r"|unnecessary|optional|superfluous)"
    r"|(?:is|are)\s+(?:pre-?cleared|pre-?approved|pre-?authori[sz]ed|cleared in advance))\b"
)
"""A waiver of the human's approval in the passive: "needs no sign-off", "no confirmation
is required", "are pre-cleared" (said of an action, see :data:`APPROVAL`)."""
_ROMANCE_SUBJECT = (
    r"(?<!\b(?:(?:mi|mis|tu|tus|su|sus|el|la|los|las|un|una|meu|minha|meus|minhas|seu|sua|os|as"
    r"|il|lo|mio|mia|miei|mie|suo|mio)\s+\p{L}+|él|ella|ellos|ellas|usted|ele|ela|eles|elas|você"
    r"|lui|lei|loro|egli)\s+(?:(?:siempre|sempre|nunca|mai|también|também|anche|ya|já|già)\s+)?)"
)
"""Not right after a subject ("mi hermano olvida las reglas", "ela esquece as regras"): in
Spanish, Portuguese and Italian the imperative ("olvida", "esquece", "dimentica") is also
the third person, which describes someone."""
_OVERRIDE_VERB = (
    r"(?:ignore|disregard|forget|override|overwrite|bypass|discard|abandon|set aside|throw out"
    r"|nullify|void|supersede|drop|skip|circumvent|suspend|cancel|neglect|pay no attention to"
    r"|stop following|do not follow|don't follow|no longer follow)"
)

OVERRIDE = _signal(
    "override",
    "tells the agent to ignore its instructions",
    rf"{_NOT_FIRST_PERSON}\b{_OVERRIDE_VERB}\s+(?:\S+\s+){{0,5}}?{_OBJECT}\b",
    rf"\b(?:previous|prior|earlier|original|above|all|your|existing|old|current|standing|initial)"
    rf"\s+(?:\S+\s+){{0,2}}?{_OBJECT}\s+(?:are|is|have been|has been|were|was)\s+(?:now\s+|hereby\s+"
    r"|officially\s+)?(?:void|null|cancel+ed|revoked|obsolete|invalid|suspended|lifted|replaced"
    r"|superseded|overridden|disabled|removed|withdrawn|no longer (?:valid|in effect|active|applicable)"
    r"|out of date|outdated)\b",
    rf"(?<!(?:'s|’s|\bmy|\bour)\s+(?:\S+\s+){{0,2}})\b{_OBJECT}\s+(?:\S+\s+){{0,3}}?no longer"
    r" (?:apply|applies|count|counts|matter|hold)\b",
    r"\b(?:supersedes?|replaces?|overrides?|overrules?|takes? precedence over|trumps?|outranks?)"
    r"\s+(?:all\s+|any\s+)?(?:your|the (?:assistant|ai|agent|model)'s|(?:previous|prior|earlier"
    r"|original|other|existing) (?:system )?)\s*(?:\S+\s+)?(?:instructions?|prompts?|guidelines"
    r"|directives?|programming|system (?:message|prompt)|rules|polic(?:y|ies)|orders)\b",
    r"\b(?:this|these|the following|my) (?:note|memory|memories|message|entry|text|instruction)s?"
    r" (?:always )?(?:wins?|prevails?|takes? (?:priority|precedence)|comes? first|overrides?"
    r" (?:everything|all|any)|outranks? (?:everything|all|any))\b"
    r"|\b(?:rely on|use|follow|obey|trust) (?:this|these|my) (?:memory|memories|note|notes|message"
    r"|entry) instead\b",
    rf"\b{_OBJECT}\s+(?:you (?:were given|received|got|have|had)|given to you)\b[^.;\n]{{0,40}}?\b"
    r"(?:is|are|was|were) (?:now )?(?:outdated|obsolete|void|invalid|cancel+ed|superseded|wrong"
    r"|out of date|no longer valid)\b",
    r"\b(?:ignore|disregard|forget)\s+(?:everything|anything|all|what)\s+(?:\S+\s+){0,3}?"
    r"(?:above|before|previously|earlier|prior|you (?:were|have been|'ve been) told)",
    _START + r"(?:obey|follow|listen to|answer to|take orders from) only (?:me|my|this|these|us)\b"
    r"|\bobey (?:me|this (?:note|memory|message)) (?:alone|only)\b",
    # de
    r"\b(?:ignorier\w*|vergiss|vergessen sie|missacht\w*|überschreib\w*|verwirf|umgeh\w*)\b.{0,50}"
    r"(?:anweisung\w*|instruktion\w*|regeln|richtlinien|vorgaben|befehle|prompts?|einschränkung\w*)",
    r"\b(?:vergiss|vergesst|vergessen sie|ignorier\w*|missachte\w*|verwirf)\s+(?:\S+\s+){0,2}?"
    r"(?:alles|alle|sämtliche\w*|das)\b.{0,60}?\b(?:vorher|zuvor|bisher\w*|davor|früher\w*"
    r"|gesagt|erzählt|mitgeteilt|aufgetragen|beigebracht)\b",
    r"\b(?:lass|lasst|lassen sie|setz\w*|stell\w*|hör\w* auf|hört auf|befolg\w*|beacht\w*)\b,?"
    r"\s+(?:\S+\s+){0,4}?(?:anweisung|regel|vorgabe|richtlinie|befehl)\w*\s+(?:\S+\s+)?"
    r"(?:hinter (?:dir|sich|euch)|beiseite|fallen|außer (?:acht|kraft)|zu (?:befolgen|beachten"
    r"|folgen)|nicht mehr)\b",
    r"\b(?:gehorche|gehorchen sie|befolge|befolgen sie|hör|höre) (?:ab jetzt |jetzt |von nun an )?"
    r"(?:nur|allein|ausschließlich) (?:noch )?(?:mir|meine\w*|diese\w*)\b",
    r"(?:anweisung\w*|regeln|richtlinien|vorgaben)\b.{0,40}\b(?:ignorieren|vergessen|missachten)\b",
    # nl
    r"\b(?:negeer|vergeet|omzeil|overschrijf|ignoreer)\b.{0,50}"
    r"(?:instructies|regels|richtlijnen|aanwijzingen|prompts?|beperkingen)",
    # fr
    _NOT_FIRST_PERSON
    + r"\b(?:ignore[rsz]?|oublie[rsz]?|néglige[rsz]?|outrepasse[rsz]?|contourne[rsz]?"
    r"|fais abstraction|faites abstraction|ne tiens pas compte|ne tenez pas compte)\b.{0,50}"
    r"(?:instructions?|consignes?|règles|directives?|prompts?|restrictions?|garde-fous)",
    # es / pt / it
    _NOT_FIRST_PERSON
    + _ROMANCE_SUBJECT
    + r"\b(?:ignora[rs]?|ignore|olvida[rs]?|olvide|olvíd\w*|omite|omitir|descarta[rs]?|desobedece"
    r"|haz caso omiso|no hagas caso|deja(?:r)? de lado|pon(?:le|er)? fin a|abandona[rs]?"
    r"|deja de (?:seguir|obedecer|cumplir|respetar)|no (?:sigas|obedezcas|cumplas|respetes)"
    r"|esqueça|esqueçam|esquece|desconsider[ea]|deixe de lado|deixa de lado|abandone"
    r"|pare de (?:seguir|obedecer|cumprir)|não (?:siga|obedeça|cumpra)|dimentica|dimenticate"
    r"|trascura|lascia perdere|metti da parte|abbandona|smetti di (?:seguire|rispettare|obbedire a)"
    r"|non (?:seguire|rispettare|obbedire a))\b.{0,50}"
    r"(?:instrucciones|instruções|istruzioni|reglas|regras|regole|norme|indicaciones|indicazioni"
    r"|directrices|diretrizes|direttive|normas|orientações|restricciones|restrições|restrizioni"
    r"|órdenes|ordens|ordini|prompts?)",
    _ROMANCE_SUBJECT
    + r"\b(?:olvida|olvíd\w*|ignora|descarta|esqueça|esquece|desconsidere|dimentica|dimenticate"
    r"|scordati|ignorate)\s+(?:de\s+)?(?:todo|todas?|todos|tudo|tutto|tutte|ogni cosa|cuanto)\b"
    r".{0,60}?\b(?:antes|anterior\w*|previ\w*|hasta ahora|até agora|finora|prima|precedent\w*"
    r"|te (?:dijeron|han dicho|ordenaron|indicaron)|(?:lhe|te) disseram|foi dito|ti (?:è|e) stato"
    r" detto|ti hanno detto)\b",
    r"\b(?:obedéceme|obedece(?:me)?|obedeça(?:-me)?|obbedisci(?:mi)?|sigue|segui|siga)"
    r" (?:solo|sólo|só|solamente|apenas|soltanto|unicamente) (?:a )?(?:mí|mim|me|mis|minhas?|le mie)\b",
    # pl / tr
    r"\b(?:zignoruj|ignoruj|zapomnij|pomiń)\b.{0,50}(?:instrukcj\w*|zasad\w*|reguł\w*|polece\w*"
    r"|wytyczn\w*|ogranicze\w*)",
    r"\b(?:talimat|kural|yönerge|kısıtlama)\w*\b.{0,40}(?:yoksay|görmezden gel|unut)",
    # ru / uk
    r"(?:игнорируй|проигнорируй|игнорировать|забудь|забудьте|не обращай внимания на|отбрось"
    r"|отмени|пренебреги|не следуй|не соблюдай|обойди|ігноруй|забудь|знехтуй)\w*.{0,50}"
    r"(?:инструкци|правил|указани|установк|ограничени|промпт|директив|запрет|інструкці|вказів)",
    # el
    r"(?:αγνόησε|αγνοήστε|ξέχνα|ξεχάστε|παράβλεψε)\w*.{0,50}(?:οδηγίες|κανόνες|εντολές|περιορισμούς)",
    # ar
    r"(?:تجاهل|انس|إنس|تخط|تجاوز|لا تتبع|لا تلتزم|اترك)\S*.{0,50}"
    r"(?:التعليمات|تعليمات|القواعد|قواعد|الأوامر|الإرشادات|التوجيهات|القيود)",
    # hi
    r"(?:निर्देश|नियम|आदेश|हिदायत|प्रतिबंध)\S*.{0,40}(?:अनदेखा|नज़रअंदाज़|नजरअंदाज|भूल जा|उपेक्षा|मत मान|पालन मत)",
    r"(?:अनदेखा|नज़रअंदाज़|नजरअंदाज|भूल जा)\S*.{0,40}(?:निर्देश|नियम|आदेश)",
    # zh / ja / ko
    r"(?:忽略|无视|忘记|忘掉|忽视|不要理会|别管|抛开|违背|绕过|跳过|無視)(?:\P{P}){0,12}?"
    r"(?:指令|指示|规则|規則|提示词|提示|设定|設定|限制|命令|规定|约束|安全)",
    r"(?:指示|命令|ルール|規則|制約|プロンプト|ガイドライン|设定|指令|规则)\P{P}{0,12}?"
    r"(?:無視|忘れ|従わ(?:な|ず)|破棄|忽略|无视)",
    r"(?:지시|명령|규칙|지침|프롬프트|제한)\S*\s*(?:\S+\s+){0,3}?(?:무시|잊어|따르지)",
)

ROLE = _signal(
    "role",
    "gives the agent a new role or new instructions",
    r"\bnew (?:instructions?|rules|system prompt|directives?|task|orders|persona)\s*:",
    rf"\b{_FROM_NOW}"
    rf",?\s+(?:{_YOU}|act|behave|respond|answer|reply|speak|always|never|do not|don't|ignore"
    r"|treat|consider|regard|assume|trust)\b",
    r"\b(?:the user's |your |my )?(?:real|true|actual|genuine) (?:instructions?|system prompt"
    r"|directives?|orders) (?:are|is|can be found|lives?|are (?:stored|kept))\s+(?:\S+\s+){0,3}?"
    r"(?:in|at|on|inside|under)\b",
    r"(?<=(?:https?://|www\.)\S{0,200}?[^.\n]{0,40}?)\b(?:follow|obey|execute|apply|carry out)"
    r"\s+(?:them|it|those|these|the (?:instructions|steps|orders))\b",
    rf"\b(?:you are|you're|{_YOU} is)\s+(?:now|no longer|henceforth|from now on)\b",
    _START
    + r"(?:pretend|imagine) (?:that )?(?:you(?:'re| are)?|to be)\b|\byou (?:will |should |must )?"
    r"pretend\b|" + _START + r"(?:roleplay as|impersonate (?:a|an|the))\b",
    _START + r"(?:act|behave|respond|speak)\s+(?:as|like)\s+(?:a|an|the|if)\b",
    _START
    + r"(?:enable|enter|activate|switch to|turn on|go into)\s+(?:the\s+)?(?:dan|developer|god"
    r"|debug|admin|jailbreak|unrestricted|sudo)\s+mode\b|\byou(?:'re| are) (?:now )?in (?:dan|developer"
    r"|god|jailbreak|unrestricted|sudo) mode\b|\b(?:dan|jailbreak|god) mode\b|\bdo anything now\b"
    r"|\bjailbr(?:eak|oken) (?:ai|assistant|model|bot|version|prompt)\b",
    r"\b(?:unrestricted|unfiltered|uncensored|jailbroken|rule-?free|limitless|amoral)\s+(?:ai|assistant"
    r"|model|bot|chatbot|llm|version|agent)\b|\b(?:ai|assistant|model|bot|agent|llm) (?:with no|without"
    r" any|without) (?:rules|restrictions|limits|filters|guidelines|content policy|safety)\b",
    r"(?:制限のない|制限なしの|ルールのない)(?:AI|アシスタント|モデル)|没有(?:任何)?(?:限制|规则)的(?:助手|AI|人工智能|模型)"
    r"|без (?:каких-либо |всяких |любых )?(?:ограничений|правил)|(?:ограничений|правил) нет"
    r"|\b(?:ki|assistent|modell) ohne (?:einschränkungen|regeln)|\bohne (?:jegliche )?(?:einschränkungen|regeln)\b"
    r"|\b(?:ia|assistant|modèle) sans (?:aucune )?(?:restriction|règle)s?|\b(?:ia|asistente|assistente|modelo)"
    r" sin (?:restricciones|reglas)|\bsem (?:restrições|regras)\b|\bsenza (?:restrizioni|regole)\b"
    r"|\bzonder (?:beperkingen|regels)\b|बिना (?:किसी )?(?:प्रतिबंध|नियम)|(?:بلا|بدون) (?:أي )?(?:قيود|قواعد)"
    r"|제한 없는|bez ograniczeń|kuralsız",
    r"\byou(?:'re| are) (?:now )?(?:dan|stan|dude|aim|mongo tom|evil-?bot|anti-?gpt|better-?dan)\b"
    r"|\byou(?:'re| are) (?:now )?(?:called |named )?[\w-]+,\s+an? (?:\S+\s+){0,3}?(?:ai|assistant"
    r"|model|chatbot|bot|llm)\b(?!\s+(?:fan|enthusiast|researcher|engineer|developer|expert))",
    r"\byour (?:new|real|true|actual)(?: (?:top|main|only|sole|primary|highest|first))? (?:role"
    r"|persona|identity|name|task|purpose|goal|instructions?|priority|objective|mission|directive)\b",
    rf"\b{_YOU} (?:are|is|'re) (?:no longer|not) (?:bound|restricted|limited|constrained) by\b",
    # de
    r"\b(?:du bist|sie sind) (?:jetzt|ab sofort|nun|ab heute)\b|\bab (?:jetzt|sofort|heute)"
    r",? (?:bist|wirst|sollst|musst|antwortest|gibst|ignorierst) du\b|\btu so,? als\b"
    r"|\bverhalte dich (?:wie|als)\b|\bneue anweisung\w*\s*:",
    # nl
    r"\b(?:je bent|jij bent|u bent) (?:nu|vanaf nu|voortaan)\b|\bvanaf nu (?:ben|moet|ga|antwoord)"
    r" je\b|\bdoe alsof (?:je|u)\b|\bgedraag je als\b|\bnieuwe instructies\s*:",
    # fr
    r"\b(?:tu es|vous êtes) (?:maintenant|désormais|dorénavant|à présent)\b|\b(?:à partir de "
    r"maintenant|désormais|dorénavant),? (?:tu|vous) (?!et\b)\w+|\bfai(?:s|tes) semblant\b"
    r"|\b(?:agis|agissez|comporte-toi|comportez-vous) (?:comme|en tant que)\b|\bnouvelles consignes\s*:",
    # es / pt / it
    r"\b(?:a partir de ahora|desde ahora|de ahora en adelante|ahora),? (?:eres|serás|actúa|actuarás"
    r"|responde|responderás|debes|ignora)\b|\b(?:finge|simula|finja|fingi) (?:ser|que eres|di essere"
    r"|que é)\b|\bcompórtate como\b|\b(?:a partir de agora|de agora em diante|agora),? (?:você é"
    r"|és|você deve|responda)\b|\b(?:d'ora in poi|da adesso|da ora),? (?:sei|sarai|devi|rispondi)\b",
    # pl / tr
    r"\b(?:od teraz|od dziś|teraz) (?:jesteś|musisz|będziesz|odpowiadaj)\b|\budawaj,? że\b"
    r"|\b(?:bundan sonra|artık|şu andan itibaren),? (?:sen|sen bir)\b",
    # ru / uk / el
    r"(?:теперь|отныне|с этого момента|с сегодняшнего дня|відтепер|тепер),? (?:ты|вы|ти)\b"
    r"|\b(?:ты|вы|ти) (?:теперь|отныне|тепер)\b|притворись|представь,? что ты|веди себя как"
    r"|действуй как|поводься як|режим (?:разработчика|бога|без ограничений)"
    r"|από τώρα(?: και στο εξής)?,? (?:είσαι|θα|πρέπει)|προσποιήσου",
    # ar / hi
    r"(?:من الآن|ابتداء من الآن|من الآن فصاعدا|بعد الآن|اعتبارا من الآن)\S*\s+(?:\S+\s+){0,2}?"
    r"(?:أنت|انت|ستكون|يجب|عليك)|\bأنت الآن\b|تظاهر بأنك|تصرف ك",
    r"(?:अब से|आज से|इसके बाद),? (?:तुम|आप)|(?:तुम|आप) अब (?:एक|से)|होने का नाटक|की तरह (?:व्यवहार|बर्ताव)",
    # zh / ja / ko
    r"(?:从现在开始|从现在起|从今以后|今后|从此以后|接下来)[，,]?\P{P}{0,4}(?:你|您)"
    r"|你(?:现在|从现在起)(?:是|就是|扮演)|(?:扮演|假装|假扮|充当)(?:\P{P}){0,10}"
    r"|(?:开发者|开发人员|上帝|越狱|无限制|管理员)模式",
    r"(?:今から|これから|今後|以後)[、,]?\P{P}{0,8}(?:あなたは|君は|お前は)|(?:あなたは|君は|お前は)(?:今から|これから|今後)"
    r"|(?:ふりをして|として振る舞|のように振る舞|になりきって)|(?:開発者|デベロッパー|脱獄|制限なし)モード",
    r"(?:지금부터|이제부터|앞으로)\s*(?:\S+\s+){0,2}?(?:너는|당신은|넌)|척(?:해|하세요)",
)

OBLIGATION = _signal(
    "obligation",
    "addresses the agent with an obligation",
    rf"\b{_YOU}\s+(?:must|shall|have to|has to|need to|needs to|are required to|is required to"
    r"|are to|is to|should (?:always|never|not|now|only|stop)|will (?:always|never|now|only)"
    r"|may now|can now|are (?:allowed|permitted|authori[sz]ed) to|is (?:allowed|permitted"
    r"|authori[sz]ed) to|always|never|(?:do not|don't|must not|mustn't|should not|shouldn't))\b",
    rf"\b(?:note|message|reminder|instructions?|directive|rule|memo|p\.?s\.?) (?:to|for) (?:the |my |"
    rf"our |any )?(?:ai|{_AI}s?|language model)\b",
    rf"(?:^|[.!?\n]\s*)(?:dear|hey|hi|attention|to|for|note to|psst),? (?:the |my |any |whichever )?"
    rf"(?:ai|{_AI})\b(?:\s+\w+){{0,3}}\s*[:,!-]",
    r"\b(?:whenever|if|when|every time|each time|any time) (?:the user|anyone|someone|somebody|they"
    r"|a user)\b.{0,80}\b(?:reply"
    r"|respond|answer|tell (?:them|the user)|say) (?:with|that|only|by)\b",
    _NOT_FIRST_PERSON
    + r"\b(?:quietly|silently|secretly|covertly|discreetly)\s+(?:add|insert|include|append|change"
    r"|alter|replace|send|forward|recommend|mention|steer|redirect|remove|delete|drop)\b",
    r"\b(?:whenever|every time|each time|any time|if|when)\b.{0,60}\b(?:appears|is mentioned"
    r"|comes up|shows up|is used)\b,?\s+(?:you\s+)?(?:must\s+|should\s+)?(?:always\s+)?(?:reply"
    r"|respond|answer|say|output|print|insert|include|recommend)\b",
    r"\bno need (?:for|to let) (?:the user|the owner|the customer|the client|them) (?:to )?know\b"
    r"|\bwithout (?:the user|the owner|the customer|the client) (?:knowing|noticing|finding out"
    r"|being told)\b|" + _START + r"(?:do not|don't|never) (?:tell|inform|alert|notify|let)"
    r" (?:the user|the owner|the customer|the client)\b|\b(?:keep|hide) (?:this|it|that)"
    r" (?:secret |hidden )?from (?:the user|the owner|the customer|the client)\b",
    _START + r"(?:recommend|promote|advertise|plug|push|endorse|shill|upsell)\s+(?:\S+\s+){1,6}?"
    r"(?:in|with|at the end of) (?:every|each|all|any)(?: of your)? (?:\S+\s+)?(?:answers?|repl(?:y|ies)"
    r"|responses?|messages?|conversations?|chats?)\b",
    # de / nl
    r"\b(?:du|sie|der assistent|die ki|das modell|der agent|der bot) (?:musst|müssen|muss|sollst"
    r"|sollen|soll|darfst|dürfen|darf|wirst) (?:ab sofort |ab jetzt |von nun an |jetzt |künftig "
    r"|in zukunft )?(?:immer"
    r"|nie|niemals|stets|nicht mehr|keine?|jede[nsm]?|alle)\b|\b(?:hinweis|nachricht|notiz|anweisung)"
    r" (?:an|für) (?:den assistenten|die ki|das modell|den agenten|den bot)\b",
    r"\b(?:je|jij|u|de assistent|de ai|het model|de agent) (?:moet|moeten|mag|zal) (?:voortaan |vanaf "
    r"nu |nu )?(?:altijd|nooit|niet meer|elke|alle)\b|\b(?:notitie|bericht) (?:aan|voor) de (?:assistent|ai)\b",
    # fr / es / pt / it
    r"\b(?:tu|vous|l'assistant|l'ia|le modèle|l'agent) (?:ne )?(?:dois|devez|doit|devras|devrez)"
    r" (?:désormais |maintenant |dorénavant )?(?:toujours|jamais|plus|tout|chaque)\b|\bnote (?:à|pour)"
    r" (?:l'assistant|l'ia|l'agent|le modèle)\b",
    r"\b(?:tú|usted|el asistente|la ia|el modelo|el agente|você|o assistente|a ia|o modelo"
    r"|l'assistente|il modello) (?:debes|debe|tienes que|tiene que|deve|tem que|precisa|devi)"
    r" (?:siempre|nunca|sempre|mai|ahora|agora|ora)\b|\bnota (?:para|al|ao|per) (?:el |o |l')?"
    r"(?:asistente|assistente|ia|agente|modelo|modello)\b",
    # ru / uk / el / pl / tr
    r"(?:ты|вы|ассистент|помощник|модель|ии|агент|бот|ти|асистент)\s+(?:теперь |отныне |тепер )?"
    r"(?:должен|должна|должны|обязан\w*|повинен|повинна|всегда должен|никогда не должен)\b"
    r"|(?:заметка|примечание|указание|сообщение|нотатка) (?:для|ассистенту|помощнику|модели|ии|асистенту)",
    r"(?:πρέπει|οφείλεις) (?:πάντα|ποτέ)|\b(?:musisz|asystent musi|model musi) (?:zawsze|nigdy)\b"
    r"|\b(?:asistan|yapay zeka|model) (?:her zaman|asla)\b",
    # ar / hi
    r"(?:يجب على|على) (?:المساعد|الذكاء الاصطناعي|النموذج|الوكيل|البوت)|(?:يجب عليك|عليك أن|عليك)"
    r" (?:دائما|دائماً|ألا|أن لا|أن تتجاهل)|(?:ملاحظة|رسالة|تعليمات) (?:إلى|ل|الى) (?:المساعد|الذكاء الاصطناعي|النموذج)",
    r"(?:तुम्हें|आपको|सहायक को|एआई को|मॉडल को|असिस्टेंट को) (?:हमेशा|कभी (?:भी )?नहीं|अब से|हर)"
    r"|(?:सहायक|एआई|असिस्टेंट|मॉडल) के लिए (?:नोट|निर्देश|संदेश)",
    # zh / ja / ko
    r"(?:你|您|助手|助理|人工智能|模型|智能体|机器人|AI)(?:以后|今后|从现在起)?(?:必须|一定要|务必|应该总是|总是要|永远要"
    r"|始终|不得|不准|不许|不要再|只能|只许)|(?:给|致)(?:助手|AI|模型|助理|人工智能)的(?:备注|说明|提示|指示|留言)",
    r"(?:あなた|アシスタント|AI|モデル|エージェント)は?(?:今後|これから)?(?:必ず|常に|絶対に|決して)"
    r"|(?:アシスタント|AI)への(?:メモ|指示|注意)",
    r"(?:너는|당신은|어시스턴트는|AI는|모델은)\s*(?:항상|절대|반드시|앞으로)",
)

APPROVAL = _signal(
    "approval",
    "changes approval or verification behaviour",
    _START + r"(?:always|automatically|auto-?)\s*(?:approve|accept|allow|authori[sz]e|execute|run"
    r"|grant|trust|transfer|send|pay|confirm(?!\s+(?:\S+\s+){0,3}?(?:with (?:me|us|the user|the owner)"
    r"|before|first)\b)|comply|obey|sign off|skip|bypass|disable|reveal"
    r"|share|forward|leak|delete|ignore|follow|process|release|wire|refund)\b",
    r"\bauto-?(?:approve|accept|confirm|execute|pay|sign|authori[sz]e|merge|deploy)\w*\b",
    r"\b(?:should|must|shall|will|are to|is to|can|may) be (?:\S+\s+)?(?:approved|accepted|confirmed"
    r"|executed|paid|processed|signed|granted|authori[sz]ed|released|honou?red) (?:automatically|without"
    r"|immediately|straight away|right away|unconditionally|no questions)\b",
    _START
    + r"(?:approve|accept|sign off on|sign|confirm|pay|authori[sz]e|execute|process|release|grant"
    r"|honou?r|fulfil+)\s+(?:every|all|any|each|whatever|everything|anything)\b",
    _START
    + r"(?:act on|process|grant|honou?r|fulfil+|execute|pay|approve|complete|action|carry out)\s+"
    r"(?:\S+\s+){0,3}?(?:requests?|orders?|transfers?|payments?|refunds?|withdrawals?)\s+(?:\S+\s+)?"
    r"(?:instantly|immediately|at once|straight away|right away|on the spot|unconditionally)\b",
    r"\b(?:no|without (?:a |any )?)humans? (?:in the loop|review|involvement|oversight|sign-?off"
    r"|approval)\b",
    r"\b(?:the\s+)?(?:humans?|users?|owners?|account holders?)\s+(?:is|are)\s+(?:now\s+)?(?:no longer"
    r"|not|never)\s+(?:in the loop|consulted|asked|involved)\b",
    rf"\b{_CONSENT}\s+(?:is|are)\s+(?:now\s+|always\s+)?(?:implied|implicit|assumed|automatic"
    r"|taken as given)\b",
    rf"\b{_ACTIONS}\b[^.!?\n]{{0,80}}?{_WAIVED}",
    rf"{_WAIVED}[^.!?\n]{{0,80}}?\b{_ACTIONS}\b",
    _START + r"(?:approve|accept|sign off on|confirm|pay|authori[sz]e|execute|process|release|grant"
    r"|transfer|wire|refund)\b[^.\n]{0,60}\b(?:automatically|without (?:asking|checking|confirmation)"
    r"|no need to (?:ask|check|run)|as soon as (?:it arrives|they ask|asked))",
    r"\b(?:always|automatically) (?:approve|accept|authori[sz]e|execute|confirm|pay|wire|release|grant)"
    r"\s+(?:\S+\s+){0,2}?(?:all|every|any|each|whatever|anything|requests?|transfers?|payments?"
    r"|orders?|invoices?|transactions?|commands?|refunds?|withdrawals?)\b",
    _START
    + r"(?:do not|don't|never|no longer|stop|quit|cease|refrain from|avoid|no more|don't bother"
    r"|do not bother|no need to|there is no need to|(?:you|we) (?:don't|do not|no longer) need to"
    r"|it is not necessary to|it's not necessary to)\s+(?:\S+\s+)?(?:check(?:ing)?|verify(?:ing)?"
    r"|confirm(?:ing)?|warn(?:ing)?|notify(?:ing)?|log(?:ging)?|report(?:ing)?|refus(?:e|ing)"
    r"|reject(?:ing)?|deny(?:ing)?|question(?:ing)?|flag(?:ging)?|double[- ]?check(?:ing)?"
    r"|validat(?:e|ing)|authenticat(?:e|ing)|escalat(?:e|ing)|consult(?:ing)?"
    r"|(?:tell|inform|alert)(?:ing)? the (?:user|owner|customer|client|account holder)"
    r"|ask(?:ing)?\s+(?:the user\s+|me\s+|anyone\s+)?(?:for|before|whether|if"
    r"|about (?:approval|confirmation|permission)))\b",
    _START
    + r"(?:stop|quit|cease|refrain from|no longer|don't bother|do not bother|no need to|there is no"
    r" need to|(?:you|we) (?:don't|do not|no longer) need(?: to)?|you needn't|it is not necessary to)\s+"
    r"(?:(?!(?:without|unless|until|except|before|after)\b)\S+\s+){0,3}?" + _CONSENT + r"\b",
    _NOT_REQUIRED
    + _OWN_CLAUSE
    + r"\bwithout\s+(?:any\s+|further\s+|prior\s+|additional\s+)?(?:asking|checking|verifying"
    r"|consulting|pinging|notifying|informing|telling|alerting|involving|contacting|looping in"
    r"|double-?checking|(?:(?:the\s+)?(?:user|customer|client|owner|account holder|human)(?:'s)?\s+"
    r"|my\s+|their\s+|his\s+|her\s+|anyone's\s+|anybody's\s+|explicit\s+)?(?:confirmation"
    r"|approval|verification|review|consent|permission|authori[sz]ation|sign-?off|go-?ahead"
    r"|say-?so))\b",
    _NOT_FIRST_PERSON
    + r"\b(?:skip|bypass|disable|turn off|switch off|ignore|waive|omit|circumvent|suppress)\s+"
    r"(?:\S+\s+){0,3}?(?:verification|confirmation|approval|review|2fa|mfa|two-factor|authentication"
    r"|security|checks?|kyc|sign-?off|safety|warnings?|guardrails?|limits?)\b",
    _NOT_FIRST_PERSON
    + r"\b(?:skip|omit|drop|remove|leave out|suppress|hide)\s+(?:\S+\s+){0,3}?(?:disclaimers?"
    r"|compliance (?:notes?|notices?|checks?|warnings?|text|statements?)|risk (?:warnings?"
    r"|disclosures?)|disclosures?)\b",
    r"\b(?:soll|sollst|sollen|muss|musst|müssen|darf|darfst|dürfen|bitte)\b.{0,60}?(?:prüfung"
    r"|verifizierung|bestätigung|freigabe|kontrolle|sicherheits)\w*\s+(?:\S+\s+){0,3}?(?:überspring"
    r"|umgeh|deaktivier|ignorier|weglass|auslass)\w*",
    r"\b(?:treat|consider|regard) (?:all |every |any )?(?:\S+\s+){0,8}?as (?:already )?(?:approved"
    r"|authori[sz]ed|verified|trusted|pre-?approved|confirmed|legitimate)\b|\bpre-?(?:approved"
    r"|authori[sz]ed|verified) (?:by (?:the )?(?:user|owner|admin)|for all)\b",
    # de / nl
    r"\b(?:immer|automatisch|stets|grundsätzlich) (?:alle |jede[nsm]? )?(?:\S+\s+)?(?:genehmig\w*"
    r"|freigeb\w*|freigegeben|bestätig\w*|akzeptier\w*|ausführ\w*|überweis\w*|zahl\w*)\b|\b(?:frag|prüf|bestätig|überprüf|verifizier)\w* (?:nie|niemals|nicht mehr)\b|\bohne"
    r" (?:nachfrage|rückfrage|bestätigung|prüfung|überprüfung|zustimmung|genehmigung|(?:zu |nach)fragen"
    r"|nachzufragen|zu prüfen)\b|\b(?:nie|niemals|nicht mehr) (?:nach)?(?:fragen|prüfen|bestätigen"
    r"|verifizieren|überprüfen|nachfragen)\b|\b(?:überspring|umgeh|deaktivier)\w*\b.{0,30}(?:prüfung"
    r"|verifizierung|bestätigung|freigabe|kontrolle|sicherheits)",
    r"\b(?:altijd|automatisch) (?:alle |elk\w* )?(?:\S+\s+)?(?:goedkeuren|goedgekeurd|accepteren"
    r"|bevestigen|uitvoeren|betalen|overmaken|keur)\b|\bzonder (?:te vragen|bevestiging|controle"
    r"|verificatie|toestemming|goedkeuring|na te vragen)\b|\b(?:vraag|controleer|verifieer|bevestig)"
    r" (?:nooit|niet meer)\b",
    # fr / es / pt / it
    r"\b(?:toujours|automatiquement|systématiquement) (?:tout |toutes? |tous )?(?:\S+\s+)?(?:approuver"
    r"|approuve[rsz]?|valide[rsz]?|accepte[rsz]?|confirme[rsz]?|exécute[rsz]?|paye[rsz]?|payer|vire[rsz]?)"
    r"\b|\bsans (?:demander|confirmation|vérifi\w*|validation|approbation|consentement|autorisation"
    r"|contrôle)\b|\bne (?:demande|vérifie|confirme|contrôle)[sz]? (?:jamais|plus)\b",
    r"\b(?:siempre|automáticamente|sempre|automaticamente) (?:\S+\s+)?(?:aprueba|aprobar|aprove"
    r"|aprovar|approva|approvare|acepta|aceptar|aceite|aceitar|accetta|accettare|confirma|confirmar"
    r"|confirme|conferma|ejecuta|ejecutar|execute|executar|esegui|paga|pagar|pague|transfiere"
    r"|transferir|transfira)\b|\b(?:sin|sem|senza) (?:preguntar|perguntar|chiedere|confirmación"
    r"|confirmação|conferma|confirmar|verificación|verificação|verifica|verificar|aprobación"
    r"|aprovação|approvazione|consentimiento|consentimento|consenso|autorización|autorização"
    r"|autorizzazione|revisión|controllo)\b|\b(?:nunca|no|não|non|mai) (?:preguntes|pidas"
    r"|verifiques|compruebes|confirmes|pergunte|peça|verifique|confirme|chiedere|verificare"
    r"|controllare)\b",
    # pl / tr
    r"\b(?:zawsze|automatycznie) (?:\S+\s+)?(?:zatwierdzaj|zatwierdź|akceptuj|potwierdzaj|wykonuj"
    r"|płać|przelewaj)\b|\bbez (?:pytania|potwierdzenia|weryfikacji|zgody|sprawdzania)\b"
    r"|\bnigdy nie (?:pytaj|sprawdzaj|weryfikuj|potwierdzaj)\b",
    r"\b(?:her zaman|otomatik olarak|daima) (?:\S+\s+)?(?:onayla|kabul et|öde|gönder)\w*"
    r"|\b(?:sormadan|onay almadan|doğrulamadan|kontrol etmeden)\b",
    # ru / uk / el
    r"(?:всегда|автоматически|сразу|завжди|автоматично) (?:\S+\s+)?(?:одобря\w*|одобр\w*|подтвержда\w*"
    r"|принима\w*|выполня\w*|переводи\w*|оплачива\w*|соглаша\w*|схвалю\w*|підтверджу\w*)"
    r"|без (?:подтверждени|проверк|согласи|одобрени|уточнени|запрос|підтвердженн|перевірк)\w*"
    r"|(?:не|никогда не|ніколи не) (?:спрашивай|проверяй|уточняй|подтверждай|запрашивай|перевіряй)"
    r"|(?:пропусти|пропускай|отключи|обойди)\w*\s.{0,30}(?:проверк|подтверждени|верификаци|аутентификаци)",
    r"(?:πάντα|αυτόματα) (?:\S+\s+)?(?:ενέκρινε|έγκρινε|εγκρίνετε|αποδέξου|επιβεβαίωσε|εκτέλεσε)"
    r"|χωρίς (?:να ρωτήσεις|επιβεβαίωση|έλεγχο|έγκριση)",
    # ar / hi
    # imperatives at the start of a word ("أوافق", I approve, is a fact; "حول" alone is "about")
    r"(?<!\p{L})(?:وافق|اقبل|نفذ|أكد|حوّل|ادفع)\S* (?:\S+\s+){0,2}?(?:دائما|دائماً|تلقائيا|تلقائياً|على كل|على جميع)"
    r"|(?:دائما|دائماً|تلقائيا|تلقائياً) (?:\S+\s+)?(?<!\p{L})(?:وافق|اقبل|نفذ|أكد|حوّل|ادفع)"
    r"|(?:دون|بدون|من غير) (?:سؤال|السؤال|تأكيد|التأكد|التحقق|تحقق|موافقة|إذن|مراجعة)"
    r"|لا (?:تسأل|تتحقق|تطلب) (?:عن |أي )?(?:تأكيد|موافقة|إذن)?",
    r"(?:हमेशा|स्वचालित रूप से|अपने आप) (?:\S+\s+){0,2}?(?:मंज़ूर|मंजूर|स्वीकार|अनुमोदित|पुष्टि|भुगतान|ट्रांसफर)"
    r"|बिना (?:पूछे|पुष्टि|जांच|जाँच|सत्यापन|अनुमति|मंजूरी|मंज़ूरी)",
    # zh / ja / ko
    r"(?:自动|总是|一律|始终|直接|默认)(?:\P{P}){0,4}?(?:批准|同意|通过|确认|执行|付款|转账|接受)"
    r"|(?:无需|不需要|不用|不必|无须|别再|不要)(?:再)?(?:向用户)?(?:询问|确认|验证|核实|检查|审核|征求|请求)"
    r"|(?:跳过|绕过|关闭|禁用)(?:\P{P}){0,4}?(?:验证|确认|审核|检查|安全)",
    r"(?:自動的に|常に|必ず|すべて)(?:\P{P}){0,6}?(?:承認|許可|確認|実行|送金|支払)"
    r"|(?:確認|検証|承認|質問|認証)(?:せずに|しないで|不要|なしで|をスキップ)",
    r"(?:자동으로|항상|무조건)\s*(?:\S+\s+){0,2}?(?:승인|허용|확인|실행|송금|결제)"
    r"|(?:확인|검증|승인|인증)\s*(?:하지 말고|없이|하지 않고|을 건너뛰)",
)

TEMPLATE = _signal(
    "template",
    "contains a role marker or chat-template syntax",
    r"^\s*(?:#+\s*|\*\*|\[)?(?:system|assistant|developer|user|tool|human|ai|function"
    r"|admin|operator)\s*(?:\]|\*\*)?\s*:",
    r"<\|[\w\- ]{1,40}\|>|<\｜[^>]{1,40}\｜>|\[/?(?:inst|sys|system|s)\]|<</?sys>>"
    r"|<(?:start|end)_of_turn>|</?s>|<bos>|<eos>|\bbegin_of_text\b",
    r"^\s*(?:```+|~~~+)\s*(?:system|assistant|developer|admin|operator|root|instructions?|prompt"
    r"|sys|jailbreak|override|policy)\b",
    r"^\s*#{1,6}\s*(?:system|assistant|developer|admin|instructions?|override|system override|new"
    r"\s+instructions?|prompt|policy update|jailbreak)\b",
    r"<\s?/?\s?(?:system|assistant|user|developer|instructions?|prompt|sys|human|context|im_start"
    r"|im_end|admin|operator|policy)\b[^>]{0,80}>",
    r"\bsystem prompt\b|\bbegin (?:system|admin|developer|operator) (?:prompt|message|instructions?)\b"
    r"|\[(?:system|admin|operator|developer)(?: message| note| override| instructions?)?\]",
    r"(?:^|[\[(*])\s*(?:system|admin|developer|root) (?:override|instructions?|directive)\b"
    r"|\b(?:system|admin|developer|root) (?:override|instructions?|directive)\s*[:!\]-]",
    r"(?:系统|系統|システム)\s*[:：]|(?:系统提示|系统指令)",
)

TOOL_CALL = _signal(
    "tool_call",
    "contains tool-call syntax",
    r"</?(?:tool_call|tool_use|tool_result|function_call|function_calls|invoke|tool|function"
    r"|parameter|use_tool)\b",
    r"\"(?:function_call|tool_calls?|tool_use|tool_name|tool_input|recipient_name)\"\s*:",
    r"\"type\"\s*:\s*\"(?:tool_use|function|tool_call|function_call)\"",
    r"\"(?:name|tool|function|action)\"\s*:\s*\"[^\"]*\"\s*,\s*\"(?:arguments|parameters|args"
    r"|input|action_input)\"\s*:",
    r"\bfunctions\.\w+\s*\(|<function=\w+|\b(?:call|invoke|trigger|execute|run|use) (?:the )?"
    r"(?:tool|function|api) [\w.]+\s*\(",
)

_SEND = (
    r"(?:send|forward|e-?mail|mail|upload|post|exfiltrate|leak|transmit|share|copy|submit|publish|dump"
    r"|export|sync|mirror|push|relay|deliver|attach|paste|beam|report|sende\w*|schick\w*|leite\w*"
    r"|übermittle\w*|lade\w*|envoie\w*|envoyer|transmet\w*|transfère\w*|partage\w*|envía\w*|enviar"
    r"|manda\w*|reenvía\w*|comparte\w*|stuur\w*|verstuur\w*|deel|invia\w*|inoltra\w*|condividi\w*"
    r"|envie\w*|encaminhe\w*|compartilhe\w*|wyślij|prześlij|gönder\w*|отправ\w*|перешл\w*"
    r"|пересыл\w*|переда\w*|скинь|загрузи\w*|выгрузи\w*|слей|сливай|надішли|відправ\w*"
    r"|发送|发给|发到|转发|上传|传给|传到|分享|泄露|提交|送信|送って|転送|アップロード|共有"
    r"|보내|전송|업로드|أرسل|ارسل|انقل|شارك|भेज\w*|अपलोड|शेयर|στείλε|προώθησε)"
)
_SECRET = (
    r"(?:conversations?|chats?|(?:chat|conversation|message|browsing) (?:history|logs?)|history"
    r"|transcripts?|memor(?:y|ies)|credentials?|passwords?|passcodes?|api[ _-]?keys?|tokens?"
    r"|secrets?|system prompt|personal (?:data|information|details)|user data|account numbers?"
    r"|everything|all (?:the )?(?:data|info\w*|details|messages|files|notes|records)|contacts"
    r"|logs|database|session|cookies|private keys?|seed phrase|(?:the )?users?'s? \w+|portfolios?"
    r"|holdings|financ\w* (?:data|details|records|information)|bank (?:details|statements?)"
    r"|card (?:numbers?|details)|gespräch\w*|verlauf|erinnerung\w*"
    r"|passw\w*|zugangsdaten|daten|nachrichten|historique|mémoires?|mots de passe|identifiants"
    r"|données|historial|conversaci\w*|memoria|contraseñas|credenciales|datos|gesprek\w*"
    r"|\w*geschiedenis|\w*verlauf|\w*historie|wachtwoord\w*|gegevens|cronologia|conversazion\w*|dati|conversas?|histórico"
    r"|senhas|dados|rozmow\w*|histori\w*|hasł\w*|dane|konuşma\w*|şifre\w*|veri\w*|переписк\w*"
    r"|истори\w*|разговор\w*|памят\w*|парол\w*|ключ\w*|данн\w*|токен\w*|листуванн\w*"
    r"|对话|聊天|记录|历史|记忆|密码|密钥|凭证|数据|会话|会話|履歴|記憶|パスワード|データ"
    r"|대화|기록|비밀번호|데이터|المحادثات|المحادثة|سجل|كلمات المرور|كلمة المرور|البيانات|الذاكرة"
    r"|बातचीत|इतिहास|पासवर्ड|डेटा|यादें|συνομιλ\w*|κωδικ\w*)"
)
_TLD = r"(?:com|net|org|io|ru|cn|xyz|site|example|top|info|biz|co|me|app|dev)"
_SPELLED_DOT = r"(?:\bdot\b|\[dot\]|\(dot\))"
"""A dot written out, as addresses are to dodge filters ("evil dot com", "evil[dot]com")."""
_DESTINATION = (
    r"(?:https?://|www\.|ftp://|(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\bwebhooks?\b|\[email\]|\bpastebin"
    rf"|\b[\w-]+\.{_TLD}\b|\b[\w.+-]+ ?(?:\bat\b|\[at\]|\(at\)) ?[\w-]+ ?{_SPELLED_DOT} ?{_TLD}\b)"
)
_DESTINATION_HINT = (
    r"(?:https?://|www\.|ftp://|@[\w-]+(?:\.[\w-]+)+|\bwebhooks?\b|\[email\]|\bpastebin"
    rf"|\.{_TLD}\b|{_SPELLED_DOT} ?{_TLD}\b)"
)
"""What every match of :data:`_DESTINATION` contains, without its costly heads: an
address from its ``@`` on, a host name from its last dot on (the same engine and flags,
so the same verdict on every text, in a fraction of the time)."""

# A URL is read up to 2,048 characters (longer ones are not links browsers follow), and a
# template marker looks back for its URL: an unbounded run after every "http" of a long
# text would cost the square of its length.
_THEIR_DATA = (
    r"(?:data|memor(?:y|ies)|histor(?:y|ies)|conversations?|messages|records|details|information"
    r"|files|profiles?|portfolios?|holdings|accounts|notes|e-?mails|chats?)"
)
"""What a user's memory holds of them."""
_OTHERS = r"(?:users|customers|clients|tenants|accounts|members|people|employees|patients)"
"""Whose data an agent serving one user must not show."""
_ANYONE = (
    r"\b(?:anyone|anybody|whoever|everyone|everybody|any (?:caller|person|one|third part(?:y|ies)"
    r"|stranger))\b"
)
"""Whoever asks: the recipient of data handed out to all comers."""
_USERS = r"\b(?:the|this|that) (?:user|customer|client|owner|account holder|patient)(?:'s|s')"
"""The user's data, named as a third party names it."""

_EXFILTRATION = _signal(
    "exfiltration",
    "asks to send data or credentials elsewhere",
    r"!\[[^\]]*\]\(\s*(?:https?:)?//",
    r"(?<=https?://\S{0,2048}?)(?:\{[^{}\s]{0,200}\}|\$\{|%7B|<[a-z_ ]{3,30}>|\[[A-Z_ ]{3,30}\])",
    r"\b(?:append|include|add|encode|embed|put|insert)\b.{0,60}\b(?:to|in|into)\b (?:the |an? |this "
    r"|each )?(?:url|link|query string|image (?:url|link)|request)\b",
    r"\b(?:visit|open|fetch|load|render|call|ping|curl|wget|request|navigate to|go to|click)\s+"
    r"(?:the link\s+)?https?://[^\s?]{0,2048}\?\S{0,2048}?=",
    _START
    + r"(?:exfiltrate|steal|harvest|siphon(?: off)?|smuggle out)\s+(?:any|all|every|the|their"
    r"|our|your)?\s*" + _SECRET + r"\b",
    r"\b(?:reply|respond|answer)\s+(?:only\s+)?with\b.{0,40}?(?:https?://|www\.)",
    _NOT_FIRST_PERSON
    + r"\b(?:share|send|give|reveal|read out|disclose|hand over)\s+(?:\S+\s+){0,2}?(?:backup|recovery"
    r"|2fa|one-time|otp|verification|security)\s+codes?\b",
    r"\b(?:add|insert|include|append|put|slip|mention|drop)\b.{0,30}?\b(?:link|url|hyperlink)s?\b"
    r".{0,20}?(?:https?://|www\.)",
    _START
    + r"(?:append|include|add|attach|print|output|reveal|show|display|list|disclose|paste|insert"
    r"|write out)\s+(?:\S+\s+){0,4}?(?:api[ _-]?keys?|passwords?(?!\s+(?:manager|policy|hints?"
    r"|reset|strength|rules?))|passcodes?|credentials?|secret keys?|private keys?|access tokens?"
    r"|auth(?:entication)? tokens?|seed phrases?|pin codes?|security codes?|one-time codes?"
    r"|card numbers?|card details|cvvs?|social security numbers?|ssns?)\b",
    rf"\b(?:share|give|tell|send|disclose|reveal|show|provide|hand over|read out)\b[^.!?\n]{{0,60}}?"
    rf"(?:{_ANYONE}[^.!?\n]{{0,60}}?{_USERS}|{_USERS}[^.!?\n]{{0,60}}?{_ANYONE})",
    r"\b(?:include|show|reveal|give|share|display|list|return|add|append|send)\b.{0,60}?\b(?:"
    + _THEIR_DATA
    + r" of (?:all |every |the )?other "
    + _OTHERS
    + r"|(?:other|every|all) (?:\S+\s+)?"
    + _OTHERS
    + r"'s? "
    + _THEIR_DATA
    + r")\b",
)
_B = r"(?:\b|(?<=[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}])|(?=[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}]))"
"""A word boundary that also holds beside Han, kana and Hangul, written without spaces."""
EXFILTRATION = Signal(
    _EXFILTRATION.name,
    _EXFILTRATION.reason,
    _EXFILTRATION.sources,
    gate_sources=tuple(
        rf"{_B}{part}{_B}" if part != _DESTINATION else part
        for part in (_DESTINATION, _SEND, _SECRET)
    ),
    gate_hint_sources=(_DESTINATION_HINT, "", ""),
    gated_sources=(
        rf"{_B}{_SEND}{_B}.{{0,100}}?{_B}{_SECRET}{_B}.{{0,100}}?{_DESTINATION}",
        rf"{_B}{_SECRET}{_B}.{{0,100}}?{_B}{_SEND}{_B}.{{0,100}}?{_DESTINATION}",
        rf"{_B}{_SECRET}{_B}.{{0,100}}?{_DESTINATION}\S*.{{0,40}}?{_B}{_SEND}",
        rf"{_DESTINATION}\S*.{{0,60}}?{_B}{_SEND}{_B}.{{0,60}}?{_B}{_SECRET}{_B}",
    ),
)

_AUTHORITY_LABEL = (
    r"\b(?:operator|administrator|admin|developer|dev team|system|sysadmin|security team|it"
    r" department|anthropic|openai|google|platform|moderator|vendor|compliance team|support team)"
    r"(?:'s)? (?:note|notice|message|override|directive|instruction|update|announcement|alert"
    r"|memo|order|mandate|request)\b"
)
_BEHAVIOUR = (
    r"\b(?:assistant|ai|model|agent|bot|you|your|restrictions?|polic(?:y|ies)|checks?|verification"
    r"|verified|safety|filters?|disabled|lifted|suspended|comply|override|must|share|disclose|reveal"
    r"|send|grant|approve|approved|permission|credentials?|tokens?|passwords?|prompt|rules|unlimited"
    r"|confirmation|transfers?|payments?|consent|without)\b"
)
"""Words of the agent's behaviour: an operator note must speak of them to be suspect."""

AUTHORITY = _signal(
    "authority",
    "impersonates the operator or system, fakes the user's consent, or hands the user's authority"
    " to someone else",
    _AUTHORITY_LABEL + r"[^\n]{0,200}?" + _BEHAVIOUR,
    r"\b(?:message|note|instructions?|notice|directive|order|memo|update) from (?:the |your )?"
    r"(?:operator|administrator|admin|developer|dev team|system|anthropic|openai|security team|it"
    r" department|platform|creators?|owner|management)\b[^\n]{0,200}?" + _BEHAVIOUR,
    r"\b(?:the )?user (?:has |have )?(?:already |previously |explicitly |hereby )*(?:consented"
    r"|agreed|authori[sz]ed|approved|opted in|granted (?:permission|consent|access)|given (?:their |"
    r"full |explicit )?(?:consent|permission|approval))\b",
    r"\b(?:consent|permission|approval|authori[sz]ation|clearance) (?:has been|was|is|have been)"
    r" (?:already |previously )?(?:given|granted|obtained|confirmed|provided|recorded|on file)\b"
    r"[^.\n]{0,80}?" + _BEHAVIOUR,
    r"\b(?:authori[sz]ation|consent|permission) is on file\b",
    _NOT_FIRST_PERSON
    + r"\b(?:treat|regard|consider|count|trust|accept|follow|obey|take|handle|honou?r|believe"
    r"|listen to)\b.{0,80}?\bas (?:if |though )?(?:(?:they|it|he|she|these|those) (?:came|come|were"
    r"|was|are|is|had been) )?(?:(?:coming|sent|written|issued|typed|from) (?:from |by )?|(?:being )?"
    r"(?:authori[sz]ed|approved|signed) by )?(?:the )?(?:account )?(?:owner|holder|user|admin\w*"
    r"|operator|developer|system)(?:'s (?:own )?(?:request|instruction|order|message|word)s?)?\b",
    _START
    + r"(?:do|follow|obey|execute|carry out|comply with|act on|accept|run|perform|implement|heed"
    r"|listen to)\s+(?:whatever|anything|everything|all|any|every|each)\s+(?:\S+\s+){0,6}?"
    r"(?:says?|tells? you|asks?|wants|instructs?|requests?|orders?|commands?|demands?|contains?"
    r"|suggests?|instructions?|directives?|directions?)\b",
    r"(?:^|[.!?;\n]\s*)whatever\s+[^.!?;\n]{1,80}?\s(?:says?|tells? you|asks?|wants|instructs?"
    r"|requests?|orders?|demands?),\s*(?:just |simply )?(?:do|follow|obey|execute|comply with"
    r"|carry out|believe|accept)\b",
    _START + r"(?:take|accept|follow|obey|heed|act on)\s+(?:orders|instructions|commands|directions"
    r"|directives)\s+(?:from|given by|issued by|sent by)\b|" + _START + r"(?:let|allow|permit)\s+"
    r"(?:\S+\s+){1,5}?(?:give|issue|send)\s+you\s+(?:orders|instructions|commands|directions)\b"
    r"|\b(?:can|may|is allowed to|gets to)\s+(?:give|issue|send)\s+you\s+(?:orders|instructions"
    r"|commands)\b|\b(?:speaks?|acts?) (?:for|on behalf of) (?:the user|the owner|the account"
    r" holder)\b",
    r"\b(?:may|can|is allowed to|is permitted to|is (?:authori[sz]ed|cleared) to|has (?:permission"
    r"|access|the right|clearance|rights) to)\s+(?:access|read|see|view|query|export|edit|modify"
    r"|delete)\s+(?:\S+\s+){0,2}?(?:every|all|any|other)\s+(?:tenant|user|customer|client"
    r"|member|account)s?(?:'s?)?\s+" + _THEIR_DATA + r"\b",
    r"\b(?:i|we) (?:hereby |fully |explicitly )*(?:consent|authori[sz]e|agree|approve|permit|allow)"
    rf" (?:you|the {_AI}|my {_AI}|your {_AI})\s+to\b",
    r"\b(?:on behalf of|authori[sz]ed by|approved by|sanctioned by|signed by|verified by) (?:the |"
    r"your )?(?:operator|administrator|admin|developer|system|security team|anthropic|openai"
    r"|platform|it department)\b",
    rf"\b(?:i am|i'm|we are|we're) (?:now |hereby )?(?:instructing|ordering|commanding|directing"
    rf"|requiring) (?:you|the {_AI}|my {_AI}|your {_AI})\s+to\b",
    r"(?<!\b(?:i|we|me|us|i can|we can|to)\s)"
    r"\b(?:turn off|switch off|disable|deactivate|remove|lift|suspend|bypass)\s+(?:the\s+|your\s+|all"
    r"\s+|any\s+)?(?:content (?:filters?|moderation|polic(?:y|ies))|safety (?:filters?|checks|rules"
    r"|guidelines|settings|features|measures|systems?)|guardrails|safeguards|moderation)\b",
    rf"\b(?:i am|i'm|this is) (?:your|the {_AI}'s) (?:developer|operator|creator|administrator"
    r"|admin|owner|system administrator|maker)\b",
    # de / fr / es / ru / zh / ja
    r"\b(?:nachricht|hinweis|anweisung|mitteilung) (?:vom|von der|des) (?:betreiber|administrator"
    r"|entwickler|system|admin)\w*|\bder (?:nutzer|benutzer) hat (?:bereits )?(?:zugestimmt"
    r"|eingewilligt|genehmigt)\b",
    r"\b(?:message|note|consigne) de (?:l'opérateur|l'administrateur|l'admin|du développeur|du système)"
    r"|\bl'utilisateur a (?:déjà )?(?:consenti|accepté|autorisé|approuvé)\b",
    r"\b(?:mensaje|nota|aviso|mensagem) (?:del|do) (?:operador|administrador|desarrollador"
    r"|desenvolvedor|sistema)\b|\bel usuario (?:ya )?(?:ha )?(?:consentido|aceptado|autorizado"
    r"|aprobado)\b|\bo usuário (?:já )?(?:consentiu|autorizou|aprovou)\b",
    r"(?:сообщение|указание|уведомление) (?:от )?(?:оператора|администратора|разработчика|системы)"
    r"|пользователь (?:уже )?(?:дал согласие|согласился|разрешил|одобрил)",
    r"(?:系统|管理员|开发者|开发人员|运营方|操作员|官方)(?:消息|通知|提示|指令|覆盖|声明|公告)"
    r"|用户(?:已经|已)(?:同意|授权|批准)|(?:運営|管理者|開発者|システム)(?:からの)?(?:メッセージ|通知|指示)"
    r"|ユーザーは\P{P}{0,15}?(?:同意|承認|許可)(?:して|済み|しました)",
)

SIGNALS: tuple[Signal, ...] = (
    OVERRIDE,
    ROLE,
    OBLIGATION,
    APPROVAL,
    TEMPLATE,
    TOOL_CALL,
    EXFILTRATION,
    AUTHORITY,
)
"""Every pattern signal, in the order they are tried."""


def pattern_signal(text: str) -> Signal | None:
    """The first signal whose patterns match ``text``, or ``None``."""
    folded = fold(text)
    present = literals_in(folded, _all_literals())
    for signal in SIGNALS:
        if signal.search(text, folded, present):
            return signal
    return None


_SQUASHED: dict[str, str] = {
    "override": r"(?:ignore|disregard|forget|override|bypass|ignoriere|vergiss|ignorez|ignora|negeer)"
    r"(?:all|any|the|your|of|previous|prior|above|earlier|system|safety|original|my|alle|vorherigen"
    r"|toutes|les|instructions|todas|las){0,4}(?:instructions?|prompts?|rules|guidelines|directions"
    r"|polic(?:y|ies)|restrictions|guardrails|anweisungen|regeln|consignes|instrucciones|instructies)",
    "role": r"youarenow|pretend(?:tobe|youare)|developermode|jailbreak|fromnowonyou|dumode"
    r"|youarenolonger|actas(?:an|a)?(?:unrestricted|evil|admin|jailbroken)",
    "approval": r"(?:always|auto(?:matically)?)(?:approve|accept|confirm|execute|pay|transfer|grant)"
    r"|without(?:asking|confirmation|approval|verification|consent|checking)"
    r"|(?:donot|dont|never)(?:ask|check|verify|confirm)(?:the|user|for|before|me){0,3}",
    "exfiltration": r"(?:send|forward|upload|leak|email|exfiltrate)\p{L}{0,30}?(?:conversation|history"
    r"|memories|passwords?|apikeys?|secrets?|credentials|chatlogs?)",
    "authority": r"(?:system|admin|operator|developer)(?:override|notice|message|note)"
    r"|userhas(?:already)?(?:consented|agreed|authori[sz]ed)",
}


@functools.cache
def _squashed_signals() -> tuple[tuple[Signal, regex.Pattern[str]], ...]:
    return tuple(
        (next(s for s in SIGNALS if s.name == name), regex.compile(source, regex.IGNORECASE))
        for name, source in _SQUASHED.items()
    )


def warm_patterns() -> None:
    """Compile every pattern now (the first screened text does otherwise)."""
    _all_literals()
    _squashed_signals()


def squashed_signal(letters: str) -> Signal | None:
    """The signal of a letter-spaced text read as its letters alone, or ``None``."""
    for signal, pattern in _squashed_signals():
        if pattern.search(letters):
            return signal
    return None
