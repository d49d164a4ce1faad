"""What a fact is about, when the caller names no slot (pure).

Two facts that give different values of the same attribute of the user ("My risk
tolerance is conservative", then "I now have a high risk tolerance") must not both be
served as current. :func:`infer_slot` reads the attribute from the common English forms
of a statement about oneself:

- ``My <attribute> is|are|was|has become|changed to <value>``;
- a few single-valued relations: where the user lives, where they work (or that they left
  their job), their occupation, age, name, diet, relationship status and car ("I drive a
  Toyota Corolla": a make, written with a capital);
- the age of a child, relative or pet ("My daughter just turned 8": ``daughter_age``).

``<Label>: <value>`` is not read: it is also how a conversation turn names its speaker
("Ann: yesterday I went to the museum"), and two turns of one speaker are no contradiction.

:func:`mentions_slot` tells whether a new fact with no form of its own speaks of an
attribute already inferred for a stored fact ("I now have a *high* risk tolerance").
People, pets and things the user has ("my daughter is learning Python") are not
attributes: a possessive of one of them is left without a slot, so two facts about a
daughter never supersede each other (their age aside). What a statement says changed
without a slot ("I sold my Corolla and bought a Tesla") is read in
:mod:`engram.stores.cold._changes`. Other languages get no inferred slot (the caller's
``slot=`` or an LLM resolver handles them).
"""

from __future__ import annotations

import re

from engram.policy import canonical
from engram.recall import stem

_WORD = r"[a-z][a-z'-]*"
_WORDS = rf"{_WORD}(?:\s+{_WORD}){{0,3}}?"
_ATTRIBUTE = rf"(?P<attr>{_WORDS})"
_COPULA = (
    r"(?:is|are|was|were|has become|has changed to|changed to|is now|now is|'s"
    r"|(?:has\s+)?(?:went|gone|moved)\s+(?:up|down)\s+to|(?:has\s+)?(?:risen|rose|grown|grew"
    r"|increased|decreased|dropped|fallen|fell|climbed|jumped)\s+to)"
)
"""How a statement gives an attribute's value: "my budget *is* ...", "my rent *went up to*
...", "my salary *has risen to* ..."."""
_LATELY = r"(?:these\s+days|nowadays|now|currently|lately|at\s+the\s+moment|right\s+now)"
"""When a value holds, said between an attribute and its value ("my favourite tea *these
days* is jasmine")."""
_MY = re.compile(
    rf"^(?:and\s+|but\s+|so\s+)?my\s+{_ATTRIBUTE}\s+(?:{_LATELY}\s+)?{_COPULA}\s+(?P<value>\S.*)$"
)
_BARE_CHANGE = re.compile(
    rf"^(?:the\s+)?{_ATTRIBUTE}(?:'s|\s+has|\s+is)\s+(?:now\s+)?(?:(?:gone|went)\s+(?:up|down)\s+to"
    r"|(?:risen|fallen|dropped|increased|decreased)\s+to|(?:up|down)\s+to)\s+(?P<value>\d\S*.*)$"
)
"""An attribute said without "my" that went up or down to a number ("Rent's gone up to
1250", "The commute is down to 25 minutes"): the user's."""
_PUT_UP = re.compile(
    rf"^(?:(?:our|my|the)\s+)?[a-z]+\s+(?:has\s+)?(?:put|pushed|bumped|brought)\s+(?:the|our|my)\s+"
    rf"{_ATTRIBUTE}\s+(?:up|down)\s+to\s+(?P<value>\d\S*.*)$"
)
"""Someone put an attribute of the user's up or down to a number ("Our landlord put the rent
up to 1350")."""
_THE_NOW = re.compile(rf"^the\s+(?!user\b){_ATTRIBUTE}(?:\s+is|'s)\s+now\s+(?P<value>\S.*)$")
"""An attribute said with "the" and a new value ("The trip budget is now 3500 euros"): the
user's, as "my" would say it."""
_LATELY_LAST = re.compile(rf"\s+{_LATELY}$", re.IGNORECASE)
_WEEKLY_TIMES = (
    r"(?:(?:mon|tues|wednes|thurs|fri|satur|sun)days?|weekends?|weekdays?|mornings?|evenings?"
    r"|afternoons?|nights?)\b"
)
"""A day of the week or a time of day one does a thing on ("on Tuesdays", "in the mornings")."""
_NOW = r"(?:now\s+|currently\s+|just\s+|recently\s+|finally\s+|no\s+longer\s+|don't\s+)?"
"""Words between the subject and the verb: when ("now"), or a retraction ("no longer")."""
_NUMBER = r"(?:\d{1,2}|no|one|two|three|four|five|six|seven|eight|nine|ten)"
_DIETS = r"(?:vegetarian|vegan|pescatarian|pescetarian|flexitarian|carnivore|omnivore|keto)"
_VEHICLES = r"(?:car|suv|truck|pickup|van|minivan|hatchback|sedan|convertible)"
_I = rf"^i\s+{_NOW}"
_IM = rf"^i(?:'m| am)\s+{_NOW}"
_IVE = rf"^i(?:'ve| have)?\s+{_NOW}"
"""How a statement about oneself starts: "I (now) ...", "I'm (now) ...", "I've (now) ..."."""
_WE = rf"^(?:i|we)\s+{_NOW}"
_WE_ARE = rf"^(?:i(?:'m| am)|we(?:'re| are))\s+{_NOW}"
_WE_HAVE = rf"^(?:i|we|our\s+family)(?:'ve| have| has)?\s+{_NOW}"
"""The same for what the user's household says of itself: "We moved to Austin", "Our
family moved to Vancouver", "We have three kids" (where the user lives and how many
children they have)."""
_MONTHS = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_SINCE = (
    rf"(?:{_MONTHS}|(?:the\s+)?(?:spring|summer|autumn|fall|winter)|\d{{4}}|last\s+\w+"
    r"|graduating|graduation|(?:the\s+)?start\s+of)\b"
)
"""Since when one has been at a workplace: a month, season or year ("I've been at Meta
since January"), not an hour ("at Heathrow since 6am")."""
_WHEN_MOVED = (
    rf"(?:(?:in|last|this)\s+(?:{_MONTHS}|spring|summer|autumn|fall|winter|\d{{4}}|year"
    r"|month|week)|(?:a\s+few|a\s+couple\s+of|a|an|one|two|three|\d+)\s+(?:days?|weeks?"
    r"|months?|years?)\s+ago|recently|finally|over\s+the\s+(?:summer|winter|weekend))"
)
"""When a move happened, with nothing else said: "we moved in October" moved home (not "we
moved the meeting")."""
_DESTINATION = r"(?:work|the\s+office|school|college|uni|university|campus|class)"
"""Where a commute goes."""
_AN_OFFICE = r"(?:the|our|my)\s+(?:[a-z-]+\s+){0,2}office\b"
"""An office of the user's employer ("the Leeds office"): where they work, not live."""
_ALWAYS = (
    r"(?!.*\b(?:too|as\s+well|also|sometimes|occasionally|when|if|once|twice"
    r"|(?:mon|tues|wednes|thurs|fri|satur|sun)days?|week(?:day|end)s?)\b)"
)
"""A statement of how the user always does a thing, not now and then ("I cycle to work
when it's sunny", "on Thursdays" is no new commute)."""
_NOT_PART = r"(?!.*\b(?:also|too|as\s+well|some|part|a\s+bit|a\s+little|a\s+few)\b)"
"""A statement of all or most of a thing, not a part added ("I also invest in gold", "I
moved some of my savings into bonds")."""
_CURRENCIES = (
    r"(?:dollars?|usd|euros?|eur|pounds?(?:\s+sterling)?|sterling|gbp|yen|jpy|yuan|renminbi"
    r"|rmb|cny|francs?|chf|rupees?|inr|won|krw|kronor|kroner|krona|sek|nok|dkk|cad|aud|nzd"
    r"|pesos?|mxn|reais|brl|rand|zar|zloty|pln|hkd|sgd)"
)
_IN_A_CURRENCY = (
    r"(?!.*\b(?:weigh|weight|kilos?|kg|lbs|lose|lost|gain|gained)\b)(?!.*\d)(?:.*?\s(?:in|to"
    r"|into|use|using))?\s+(?:(?:us|american|canadian|australian|hong\s+kong|new\s+zealand"
    rf"|singapore|swiss|british)\s+)?{_CURRENCIES}\b"
)
"""Money given in a currency ("prices in US dollars", "use EUR"): the currency the user
wants figures in (not "pounds" of weight, nor an amount: "convert 500 dollars to euros")."""
_WISH = (
    r"(?:please\s+)?(?:(?:i|we)(?:\s+would|'d|\s+want|\s+prefer|\s+need)(?:\s+(?:like|prefer"
    r"|rather))?\s+(?:to\s+)?(?:(?:see|get|have|receive)\s+)?|can\s+you\s+|could\s+you\s+)?"
    r"(?:always\s+)?(?:show|give|quote|display|report|list|put|convert|express|price|use"
    r"|keep|do|send|write|present|prices|figures|amounts|numbers|everything|all|reports?)\b"
)
"""How a user asks for how things are shown: "Show prices ...", "I'd like reports ...",
"Please use ...", "I want figures ..."."""
_A_SCHOOL = (
    r"(?:[\w'-]+\s+){0,3}?(?:school|primary|secondary|academy|high|college|nursery|preschool"
    r"|pre-school|kindergarten|elementary|middle|grammar|university|uni|daycare)\b"
)
"""A school, college or nursery, by its name or kind ("Oakwood Primary", "a new school")."""
_OCCUPATIONS = (
    r"(?:teacher|nurse|doctor|physician|surgeon|dentist|pharmacist|lawyer|attorney|paralegal"
    r"|accountant|engineer|developer|programmer|designer|architect|scientist|researcher"
    r"|professor|lecturer|tutor|student|analyst|consultant|manager|director|executive"
    r"|entrepreneur|founder|freelancer|contractor|writer|journalist|editor|author|translator"
    r"|artist|musician|photographer|chef|cook|baker|barista|waiter|waitress|bartender"
    r"|electrician|plumber|carpenter|mechanic|technician|driver|pilot|farmer|firefighter"
    r"|paramedic|therapist|psychologist|counselor|counsellor|veterinarian|vet|librarian"
    r"|cashier|clerk|salesperson|realtor|banker|trader|economist|recruiter|administrator"
    r"|secretary|assistant|caregiver|nanny|soldier|officer|police\s+officer|social\s+worker"
    r"|intern|apprentice|retiree)s?"
)
"""Common occupations: "I'm a teacher now" gives the user's occupation, "I'm a morning
person" does not."""
_RISKY = (
    r"(?:conservative|cautious|moderate|balanced|aggressive|risk[- ]averse|risk[- ]tolerant"
    r"|risk[- ]seeking|risk[- ]loving|risk[- ]taker)"
)
_DEGREE = (
    r"(?:(?:very|quite|pretty|fairly|rather|really|(?:a\s+lot|much|far)\s+)?(?:more|less)?\s*)"
)
"""How much: "quite risk-averse", "much more aggressive"."""
_INVESTING = r"(?:investor|trader|saver|with\s+(?:my\s+)?(?:money|investments?|investing|risk))"
"""What makes "conservative" or "aggressive" the user's risk tolerance: "a cautious
*investor*", "aggressive *with my money*" (not "a conservative voter")."""
_RELATIONS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("risk_tolerance", re.compile(rf"{_IM}(?:an?\s+)?{_DEGREE}risk[- ](?:averse|tolerant)\b")),
    ("risk_tolerance", re.compile(rf"{_IM}(?:an?\s+)?{_DEGREE}{_RISKY}\s+{_INVESTING}\b")),
    (
        "risk_tolerance",
        re.compile(rf"{_IVE}(?:become|became|grown|gotten)\s+(?:an?\s+)?{_DEGREE}{_RISKY}\b"),
    ),
    (
        "risk_tolerance",
        re.compile(
            rf"{_IM}{_DEGREE}(?:not\s+)?(?:comfortable|happy|fine|ok|okay|willing)\s+"
            r"(?:with|to\s+take|taking)\s+(?:(?:a\s+lot\s+of|lots\s+of|\w+)\s+)?risks?\b"
        ),
    ),
    ("home", re.compile(rf"{_WE}(?:live|reside)\s+in\s+\S")),
    ("home", re.compile(rf"{_WE_ARE}(?:living|based|settled)\s+in\s+(?!{_AN_OFFICE})\S")),
    ("home", re.compile(rf"{_WE_HAVE}been\s+(?:living|based)\s+in\s+\S")),
    (
        "home",
        re.compile(
            rf"{_WE_ARE}renting\s+(?:an?\s+(?:[a-z-]+\s+)?(?:place|house|flat|room|apartment"
            r"|studio)\s+)?in\s+\S"
        ),
    ),
    (
        "team",
        re.compile(
            rf"^(?:i(?:'m| am)\s+{_NOW}(?:in|on|part\s+of)|i\s+{_NOW}work\s+(?:in|on|for)"
            rf"|i(?:'ve| have)?\s+{_NOW}(?:moved|switched|transferred|been\s+moved)"
            r"\s+(?:over\s+)?to"
            rf"|i(?:'ve| have)?\s+{_NOW}joined)\s+(?:the|our)\s+(?:[a-z&-]+\s+){{1,3}}?team\b"
        ),
    ),
    (
        "allocation",
        re.compile(
            rf"{_IVE}(?:rebalanced|reallocated)\s+(?:(?:my|our|the)\s+(?:portfolio|investments"
            r"|pension|savings|allocation)\s+)?(?:to|at|into)\s+\S"
        ),
    ),
    (
        "home",
        re.compile(
            rf"{_WE_HAVE}(?:bought|rent|rented|are\s+renting|'re\s+renting|own)\s+an?\s+"
            r"(?:new\s+|little\s+|small\s+)?(?:place|house|flat|home|apartment|condo|cottage)\s+in\s+\S"
        ),
    ),
    (
        "home",
        re.compile(
            rf"{_WE_HAVE}(?:moved|relocated)(?:\s+(?:house|home|out|away|cities|countries))?"
            rf"(?:\s+{_WHEN_MOVED})?$"
        ),
    ),
    (
        "home",
        re.compile(
            rf"{_WE_HAVE}(?:[a-z]+(?:\s+[a-z]+){{0,3}}\s+and\s+)?(?:moved|relocated)\s+"
            rf"(?:down\s+|up\s+|over\s+|back\s+|out\s+)?to\s+(?!{_WEEKLY_TIMES})\S"
        ),
    ),
    ("employer", re.compile(rf"{_I}work\s+(?:at|for)\s+\S")),
    ("employer", re.compile(rf"{_IM}working\s+(?:at|for)\s+\S")),
    (
        "employer",
        re.compile(
            rf"{_IVE}(?:joined|started\s+(?:a\s+new\s+job|working)\s+"
            rf"(?:at|for)|got\s+a\s+(?:new\s+)?job\s+(?:at|with))\s+\S"
        ),
    ),
    ("occupation", re.compile(rf"^i(?:'m| am)?\s+{_NOW}work(?:ing)?\s+as\s+an?\s+\S")),
    (
        "occupation",
        re.compile(
            rf"{_IM}an?\s+(?:[a-z-]+\s+)?{_OCCUPATIONS}(?:\s+(?:at|for|with)\s+"
            rf"(?!(?:the\s+)?{_WEEKLY_TIMES})[a-z0-9&.'-]+"
            r"(?:\s+[a-z0-9&.'-]+){0,2})?(?:\s+now)?$"
        ),
    ),
    ("occupation", re.compile(rf"{_IVE}(?:become|became)\s+an?\s+(?:[a-z-]+\s+)?{_OCCUPATIONS}\b")),
    ("occupation", re.compile(rf"{_IVE}(?:re-?trained|re-?qualified|qualified)\s+as\s+an?\s+\S")),
    (
        "occupation",
        re.compile(
            rf"{_I}(?:left|quit|gave\s+up)\s+[a-z-]+(?:\s+[a-z-]+)?\s+to\s+(?:become|be|work\s+as)"
            rf"\s+an?\s+(?:[a-z-]+\s+)?{_OCCUPATIONS}\b"
        ),
    ),
    (
        "work_hours",
        re.compile(rf"{_I}{_ALWAYS}work\s+(?:part[- ]time|full[- ]time)(?:\s+now)?$"),
    ),
    ("work_hours", re.compile(rf"{_IM}{_ALWAYS}(?:part[- ]time|full[- ]time)(?:\s+now)?$")),
    (
        "living_arrangement",
        re.compile(
            rf"{_I}{_ALWAYS}live\s+(?:alone|on\s+my\s+own|by\s+myself|with\s+(?:my\s+)?"
            rf"(?:{_NUMBER}\s+|a\s+|some\s+)?(?:parents"
            r"|mum|mom|dad|family|flatmates?|roommates?|housemates?))\b"
        ),
    ),
    (
        "living_arrangement",
        re.compile(
            rf"{_IVE}(?:got|found|moved\s+into)\s+(?:a\s+place\s+of\s+my\s+own|my\s+own\s+(?:place"
            r"|flat|apartment|house))\b"
        ),
    ),
    ("age", re.compile(r"^i(?:'m| am)\s+(?:now\s+)?\d{1,3}\s+(?:years?\s+old|y/?o)\b")),
    ("age", re.compile(r"^i(?:'m| am)\s+(?:now\s+)?\d{1,3}(?:\s+now)?$")),
    ("age", re.compile(rf"{_IVE}turned\s+\d{{1,3}}\b")),
    (
        "age",
        re.compile(
            rf"{_IVE}(?:hit|reached)\s+\d{{1,3}}(?=\s*(?:[,.!;]|$|\s+(?:today|yesterday|last|this"
            r"|on|in)\b))"
        ),
    ),
    (
        "age",
        re.compile(
            rf"{_IVE}(?:had|celebrated)\s+my\s+\d{{1,3}}(?:st|nd|rd|th)"
            r"(?:\s+birthday\b|\s*(?=[,.!;]|$))"
        ),
    ),
    (
        "age",
        re.compile(
            rf"{_IM}(?:now\s+)?in\s+my\s+(?:early\s+|mid[- ]?|late\s+)?(?:teens|twenties"
            r"|thirties|forties|fifties|sixties|seventies|eighties|nineties|[2-9]0s)\b"
        ),
    ),
    ("email", re.compile(r"^(?:you\s+can\s+)?(?:reach|contact|email)\s+me\s+(?:now\s+)?at\s+\S+@")),
    ("name", re.compile(r"^(?:my name is|(?:please\s+|you\s+can\s+)?call me|i go by)\s+\S")),
    (
        "number_of_children",
        re.compile(
            rf"{_WE_HAVE}(?:had|welcomed)\s+(?:our|my)\s+(?:first|second|third|fourth|fifth"
            r"|sixth)\s+(?:baby|child|kid|son|daughter)\b"
        ),
    ),
    (
        "number_of_children",
        re.compile(rf"{_WE}have\s+{_NUMBER}\s+(?:kids?|child(?:ren)?)\b"),
    ),
    ("employer", re.compile(rf"{_IVE}(?:left|quit|lost)\s+my\s+job\b")),
    ("employer", re.compile(rf"{_IVE}(?:handed|turned|put)\s+in\s+my\s+(?:notice|resignation)\b")),
    ("employer", re.compile(rf"{_IVE}(?:resigned|gave\s+(?:my\s+)?notice)\b")),
    ("occupation", re.compile(rf"{_IVE}(?:got\s+|been\s+|was\s+)?promoted\s+to\s+\S")),
    ("employer", re.compile(r"^i\s+(?:was|got|have\s+been)\s+(?:laid\s+off|fired|let\s+go)\b")),
    ("occupation", re.compile(rf"^i(?:'m| am|'ve| have)?\s+{_NOW}(?:retired|unemployed)\b")),
    ("diet", re.compile(rf"{_IM}(?:not\s+)?(?:an?\s+)?(?:strict\s+)?{_DIETS}\b")),
    (
        "diet",
        re.compile(
            rf"{_IVE}(?:gone|turned|become|went)\s+(?:fully\s+|completely\s+|strictly\s+|full\s+)?"
            rf"{_DIETS}\b"
        ),
    ),
    ("diet", re.compile(rf"{_I}(?:(?:do\s+not|don't|never)\s+)?eat\s+meat\b")),
    (
        "diet",
        re.compile(
            rf"{_IVE}(?:come|came|gone|went|got)\s+off\s+(?:the\s+|my\s+)?(?:{_DIETS}"
            r"|[a-z-]+\s+diet|diet)\b"
        ),
    ),
    ("diet", re.compile(rf"{_IVE}(?:started|stopped|quit)\s+eating\s+meat\b")),
    (
        "diet",
        re.compile(
            rf"^i(?:'m| am)?\s+{_NOW}(?:not\s+)?(?:on|follow(?:ing)?)\s+an?\s+(?:\S+\s+)?diet\b"
        ),
    ),
    (
        "relationship_status",
        re.compile(
            rf"{_IM}(?:single|married|engaged|divorced|separated|widowed"
            rf"|in\s+a\s+relationship)\b(?!\s+(?:in|from|by|on|at|about)\b)"
        ),
    ),
    (
        "relationship_status",
        re.compile(rf"{_IVE}(?:got|gotten)\s+(?:married|engaged|divorced)\b"),
    ),
    (
        "relationship_status",
        re.compile(
            rf"^(?:{_WORD}\s+and\s+i|i\s+and\s+{_WORD}|we|i)\s+{_NOW}(?:(?:got|have\s+got"
            r"|had|'ve\s+got|are|were|'re)\s+)?(?:divorced|separated|engaged|married|broke\s+up"
            r"|split\s+up)\b(?!\s+(?:the|a|an|our|my|his|her|their|it|them|this|that)\b)"
        ),
    ),
    ("commute", re.compile(rf"{_WE}{_ALWAYS}commute\s+(?:by|on|via)\s+\S")),
    (
        "commute",
        re.compile(
            rf"{_WE}{_ALWAYS}(?:take|ride|catch|get)\s+(?:the|a)\s+(?:bus|train|tube|subway|metro"
            rf"|tram|ferry|shuttle|underground)\s+(?:in\s+)?to\s+{_DESTINATION}\b"
        ),
    ),
    (
        "commute",
        re.compile(
            rf"{_WE}{_ALWAYS}(?:bike|cycle|walk|drive|run|jog|carpool|skate|ride\s+(?:my|a)\s+"
            rf"(?:bike|bicycle|scooter|motorbike|motorcycle))\s+(?:in\s+)?to\s+{_DESTINATION}\b"
        ),
    ),
    ("car", re.compile(rf"{_I}(?:drive|own)\s+an?\s+(?:[\w-]+\s+){{0,3}}?{_VEHICLES}\b")),
    ("car", re.compile(rf"{_IVE}(?:sold|bought|got\s+rid\s+of)\s+my\s+car\b")),
    ("car", re.compile(rf"{_IVE}(?:bought|got)\s+an?\s+(?:new\s+)?car\b")),
    (
        "work_location",
        re.compile(
            rf"{_I}{_ALWAYS}(?:mostly\s+|mainly\s+|fully\s+)?work\s+(?:from\s+home|at\s+home"
            r"|remotely|remote|(?:from|in)\s+(?:the|our)\s+(?:[a-z-]+\s+){0,2}office|on[- ]site"
            r"|hybrid)\b"
        ),
    ),
    ("work_location", re.compile(rf"{_IM}{_ALWAYS}(?:fully\s+)?(?:remote|hybrid)(?:\s+now)?$")),
    ("work_location", re.compile(rf"{_IM}{_ALWAYS}based\s+(?:in|at|out\s+of)\s+{_AN_OFFICE}")),
    (
        "work_location",
        re.compile(
            rf"{_IVE}(?:been\s+)?(?:transferred|moved|relocated|switched)\s+(?:over\s+)?to\s+"
            rf"{_AN_OFFICE}"
        ),
    ),
    (
        "work_location",
        re.compile(
            rf"{_IM}{_ALWAYS}(?:back\s+in\s+the\s+office|in\s+the\s+office\s+(?:full[- ]time"
            r"|every\s+day|five\s+days))\b"
        ),
    ),
    ("bank", re.compile(rf"{_WE}bank\s+with\s+\S")),
    ("bank", re.compile(r"^(?:all\s+)?(?:my|our)\s+banking\s+is\s+(?:now\s+|all\s+)*with\s+\S")),
    (
        "bank",
        re.compile(
            rf"{_IVE}(?:moved|switched|transferred)\s+(?:my|our)\s+(?:bank(?:ing)?\s+|current\s+"
            r"|checking\s+)?accounts?\s+(?:over\s+)?to\s+\S"
        ),
    ),
    (
        "salary",
        re.compile(
            rf"{_IM}(?:now\s+)?on\s+(?:about\s+|around\s+)?[$£€]?\d+(?:[.,]\d+)?\s*(?:k|grand"
            r"|thousand)\b(?!\s+(?:followers|steps|words|miles|km|views|subscribers)\b)"
        ),
    ),
    (
        "shift",
        re.compile(
            rf"{_I}(?:work|do)\s+(?:the\s+)?(?:nights|days|lates|earlies|night\s+shifts?"
            r"|day\s+shifts?|early\s+shifts?|late\s+shifts?)(?:\s+now)?$"
        ),
    ),
    (
        "shift",
        re.compile(
            rf"{_IM}(?:on\s+)?(?:the\s+)?(?:nights|days|lates|earlies|night\s+shift|day\s+shift"
            r"|early\s+shift|late\s+shift)(?:\s+(?:now|again|these\s+days))?$"
        ),
    ),
    (
        "smoking",
        re.compile(rf"{_IM}(?:an?\s+)?(?:heavy\s+|light\s+|social\s+)?(?:non-|ex-)?smoker\b"),
    ),
    ("smoking", re.compile(rf"^i(?:'m| am|'ve| have)?\s+{_NOW}(?:been\s+)?smoke-free\b")),
    ("weight", re.compile(rf"^i\s+{_NOW}weigh\s+(?:about\s+|around\s+)?\d")),
    (
        "weight",
        re.compile(
            rf"{_IM}(?:down\s+to\s+|up\s+to\s+)?(?:about\s+|around\s+)?\d+(?:\.\d+)?\s*"
            r"(?:kg|kgs|kilos?|lbs?|pounds|stone)\b"
        ),
    ),
    (
        "sleep_hour_per_night",
        re.compile(
            rf"^i(?:'ve| have|'m| am)?\s+{_NOW}(?:get|getting)\s+"
            r"(?:a\s+solid\s+|a\s+good\s+|about\s+|around\s+|only\s+)?"
            r"(?:\d+|five|six|seven|eight|nine|ten)\s+hours?\s+(?:of\s+)?sleep\b"
            r"(?:\s+(?:a|per|each|every)\s+night)?(?:\s+now)?$"
        ),
    ),
    ("diet", re.compile(rf"^(?:now\s+)?{_DIETS}(?:\s+(?:now|again))?$")),
    (
        "wake_time",
        re.compile(
            rf"{_I}{_ALWAYS}(?:usually\s+|normally\s+|tend\s+to\s+)?(?:wake|get)\s+up\s+"
            r"(?:at|around|about|by|before)\s+(?:about\s+|around\s+)?\d"
        ),
    ),
    (
        "bedtime",
        re.compile(
            rf"{_I}{_ALWAYS}(?:usually\s+|normally\s+|tend\s+to\s+)?(?:go\s+to\s+(?:bed|sleep)"
            r"|turn\s+in)\s+(?:at|around|about|by|before)\s+(?:about\s+|around\s+)?\d"
        ),
    ),
    (
        "investment_focus",
        re.compile(
            rf"{_WE}{_NOT_PART}(?:mainly\s+|mostly\s+|primarily\s+|largely\s+|only\s+)?invest"
            r"\s+(?:mainly\s+|mostly\s+|primarily\s+|largely\s+|only\s+)?in\s+\S"
        ),
    ),
    (
        "investment_focus",
        re.compile(
            rf"{_WE_ARE}{_NOT_PART}(?:mainly|mostly|primarily|largely|heavily|fully|all|now)\s+"
            r"invested\s+in\s+\S"
        ),
    ),
    (
        "investment_focus",
        re.compile(
            rf"{_WE_HAVE}{_NOT_PART}(?:moved|shifted|put|rotated|switched|transferred|reallocated"
            r"|reinvested)\s+(?:(?:most|all|the\s+bulk|the\s+majority|everything|the\s+lot)"
            r"\s+(?:of\s+)?)?(?:my|our)\s+(?:portfolio|money|savings|investments|pension)\s+"
            r"(?:in)?to\s+\S"
        ),
    ),
    (
        "investment_focus",
        re.compile(
            r"^(?:my|our)\s+portfolio\s+is\s+(?:now\s+)?(?:mostly|mainly|largely|all|entirely"
            r"|heavily|primarily)\s+(?:in\s+)?\S"
        ),
    ),
    ("currency", re.compile(rf"^{_WISH}{_IN_A_CURRENCY}")),
    ("school", re.compile(rf"{_IM}(?:studying|enrolled|a\s+student)\s+at\s+{_A_SCHOOL}")),
    ("school", re.compile(rf"{_I}(?:attend|study\s+at)\s+{_A_SCHOOL}")),
)
_HAD_TO = r"(?:(?:had|decided|chose|needed)\s+to\s+)?"
_SET_VERBS = (
    r"(?:raised|lowered|increased|decreased|reduced|cut|changed|updated|set|moved|bumped|upped"
    r"|dropped|extended|shortened|adjusted|upgraded|downgraded|switched|transferred|raise|lower"
    r"|increase|decrease|reduce|change|update|move|bump|drop|extend|shorten|adjust|upgrade"
    r"|downgrade|switch|transfer)"
)
_SET_TO = re.compile(
    rf"(?:^i(?:'ve| have)?\s+{_NOW}{_HAD_TO}{_SET_VERBS}\s+(?:my|our|the)"
    rf"|^we(?:'ve| have)?\s+{_NOW}{_HAD_TO}{_SET_VERBS}\s+(?:my|our)"
    r"|^(?:please\s+)?(?:raise|lower|increase|decrease|reduce|cut|change|update|set|switch"
    r"|bump|extend|shorten|adjust)\s+my)"
    rf"\s+{_ATTRIBUTE}\s+(?:up\s+|down\s+|back\s+)?to\s+(?P<value>\S.*)"
)
"""A new value given by what the user did to an attribute of theirs, or asks to be done:
"I raised my trip budget to $3,500", "I've set my alarm to 6:30", "I upgraded my phone to an
iPhone 15", "We've had to cut our grocery spend to £60 a week", "Switch my currency to
euros" (not "We moved the meeting to Friday": a meeting is no one's attribute)."""
_A_SETTING = re.compile(r"\b(?:mode|silent|vibrate|mute|muted|settings?)\b")
"""A value that says how a thing is set, not which it is ("to silent mode", "to vibrate")."""
_CHANGED_ONE = re.compile(
    rf"^(?:i|we)(?:'ve| have)?\s+{_NOW}(?:changed|switched|swapped)\s+(?P<attr>[a-z]{{2,}}?)s\b"
)
"""A change of whom or what the user has one of, said by its plural: "I changed
*dentists*", "we switched *banks*", "I changed *jobs*"."""
_NEW_LABEL = re.compile(rf"^(?:my\s+)?new\s+(?P<attr>{_WORD}(?:\s+{_WORD})?)\s*:\s*(?=\S)")
"""A new value written as a note: "New number: 555-0199" (a speaker is never "New ...")."""
_KIN_SCHOOL = re.compile(
    rf"^my\s+(?P<who>{_WORD})\s+(?:now\s+|just\s+|recently\s+)?(?:goes\s+to|attends"
    r"|is\s+(?:now\s+)?(?:at|in)|'s\s+(?:now\s+)?(?:at|in)|(?:has\s+)?(?:just\s+)?started\s+at"
    r"|is\s+starting\s+at|(?:has\s+)?(?:moved|changed|transferred|switched)\s+to)\s+"
    rf"{_A_SCHOOL}(?=\s*(?:$|[,;:!]|\s(?:in|on|since|this|last|next|now|from|and|but|near)\b))"
)
"""The school one of the user's kin goes to: "My daughter goes to Oakwood Primary", "my son
started at Riverside Secondary in September" (not "my son is in the school play")."""
_HAVE_NEW = re.compile(
    r"^(?:i|we)(?:'ve| have)?\s+(?:just\s+)?(?:have|got|hired)\s+an?\s+new\s+"
    r"(?!(?:dog|cat|puppy|kitten|pet|baby|car)\b)"
    rf"(?P<attr>{_WORD}(?:\s+{_WORD})?)(?:$|,|\s+(?:called|named|now|at|with)\b)"
)
"""One the user has a new one of, said as such: "we have a new *landlord*, Mrs. Okafor",
"I've got a new *dentist*" (not a pet: "we got a new dog" keeps the old one)."""
_CHANGED_ONE_SLOT = {"job": "employer", "career": "occupation", "house": "home", "flat": "home"}
"""What changing one of these changes ("I changed jobs": where the user works)."""
_RATE = re.compile(
    rf"^(?:i|we)(?:'m| am|'re| are)?\s+{_NOW}(?:(?:still|usually|normally|typically|about)\s+)?"
    r"(?P<verb>[a-z]+)\s+(?:about\s+|around\s+|roughly\s+|at\s+least\s+)?"
    r"(?:\d+(?:[.,]\d+)?|an?|one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty)"
    r"\s*(?P<unit>[a-z]+)(?:\s+of\s+(?P<what>[a-z]+))?\s+(?:a|an|per|each|every)\s+"
    r"(?P<period>day|night|week|month|year|morning|evening|weekend)"
    r"(?:\s+(?:now|these\s+days|nowadays|on\s+average))?$"
)
"""How much of something the user does in a period, said last: "I run 10k a week", "I'm now
running 30k a week", "I sleep 7 hours a night" (the verb, unit and period are the slot:
"I spend 2 hours a day on email" says more, and gives none)."""
_MONEY_RATE = re.compile(
    rf"^(?:i|we)(?:'m| am|'re| are)?\s+{_NOW}(?:(?:still|usually|normally|about)\s+)?"
    r"(?P<verb>sav(?:e|ing)|earn(?:ing)?|mak(?:e|ing)|invest(?:ing)?|contribut(?:e|ing)"
    r"|put(?:ting)?\s+(?:away|aside))\s+(?:about\s+|around\s+|roughly\s+)?[£$€]?\s?\d[\d,.]*k?"
    r"\s*(?:(?:pounds|dollars|euros|usd|gbp|eur)\s+)?(?:a|an|per|each|every)\s+"
    r"(?P<period>week|month|year)(?:\s+(?:now|these\s+days|nowadays|at\s+the\s+moment))?$"
)
"""How much money the user puts by or earns in a period, said last: "I'm saving 500 a
month", "I earn £3,000 a month" (``save_per_month``: one attribute with "my monthly
savings"; not "I'm spending 300 a month on groceries", which says on what)."""
_MONEY = (
    r"(?:[£$€]\s?\d[\d,.]*\s*(?:k|m|grand|thousand)?|\d[\d,.]*\s*(?:k|grand|thousand)"
    r"|\d[\d,.]*\s*(?:pounds|dollars|euros|usd|gbp|eur))"
)
"""An amount that is money by its sign, its "k" or "grand", or its currency."""
_EARNS = re.compile(
    rf"^(?:i|we)(?:'m| am|'re| are)?\s+{_NOW}(?:(?:still|usually|normally)\s+)?"
    r"(?:earn(?:ing)?|mak(?:e|ing)|(?:get(?:ting)?\s+)?paid|tak(?:e|ing)\s+home"
    r"|bring(?:ing)?\s+(?:in|home))\s+(?:about\s+|around\s+|roughly\s+|over\s+|just\s+)?"
    rf"{_MONEY}(?:\s+(?:a|an|per|each|every)\s+(?:week|month|year|annum))?"
    r"(?:\s+(?:now|these\s+days|nowadays|at\s+the\s+moment|before\s+tax|after\s+tax))?$"
)
"""What the user earns, said with an amount that is money: "I now make 58k", "I'm paid
$4,000 a month", "I take home £2,900 a month" (the ``salary``; not "I make 3 trips a
year")."""
_LEVEL = re.compile(
    rf"^(?:i|we)(?:'m| am|'re| are|'ve| have)?\s+{_NOW}(?:(?:cut|come|gone|got|been)\s+)?"
    r"(?:down|up|back)\s+to\s+(?:about\s+|around\s+|roughly\s+)?"
    r"(?:\d+(?:[.,]\d+)?|an?|one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty)"
    r"\s*(?P<unit>[a-z]+)(?:\s+of\s+(?P<what>[a-z]+))?\s+(?:a|an|per|each|every)\s+"
    r"(?P<period>day|night|week|month|year|morning|evening|weekend)"
    r"(?:\s+(?:now|these\s+days|nowadays))?$"
)
"""How much the user does now, said as the level reached with no verb: "I'm down to 1
coffee a day", "I'm up to 35k a week": the slot of any rate of that unit and period
(:data:`_ANY`)."""
_ANY = "any_"
"""The prefix of a slot that names an attribute by its last words: ``any_coffee_per_day``
is ``drink_coffee_per_day``, ``any_carrier`` is ``mobile_carrier`` (:func:`same_slot`)."""
_UNITS = {
    "k": "km", "kms": "km", "kilometer": "km", "kilometers": "km", "kilometre": "km",
    "kilometres": "km", "mi": "mile", "hr": "hour", "hrs": "hour", "h": "hour",
    "min": "minute", "mins": "minute",
}  # fmt: skip
"""Units written several ways ("10k", "10 km")."""
_NOT_IN_ATTRIBUTE = frozenset("from to into by with at in on for of".split())  # noqa: SIM905
"""Words after which "my <words> to ..." names no attribute ("my accounts from Chase to Ally")."""
_READ_BY_FORM = frozenset(name for name, _ in _RELATIONS) - {"risk_tolerance"}
"""Slots only their own forms give a value of, never a mention of the word (a risk
tolerance is named too: "I now have a high risk tolerance")."""
_NOT_ATTRIBUTES = frozenset(
    """wife husband partner girlfriend boyfriend fiance fiancee spouse son daughter child
    children kid kids baby mother mom mum father dad parents brother sister sibling siblings
    grandmother grandfather grandma grandpa aunt uncle cousin niece nephew friend friends
    boss manager colleague colleagues coworker team neighbour neighbor doctor teacher
    dog cat pet pets horse bird car house flat apartment office company
    hand hands arm arms head eyes voice mind""".split()  # noqa: SIM905
)
"""People, pets and things, the body included: "my daughter is ..." says something of her,
"I raised my hand to ask" is no value of an attribute."""
_OWNED = frozenset("car house flat apartment office company".split())  # noqa: SIM905
"""Things of the user's an attribute may belong to: "my *car* insurance is with Allianz"
(but "my car is ..." says something of the car)."""
_NAMED = frozenset(
    """wife husband partner girlfriend boyfriend fiance fiancee spouse boss manager
    landlord landlady dog cat doctor gp dentist therapist accountant lawyer mentor coach
    tutor physio trainer""".split()  # noqa: SIM905
)
"""Whom (or which pet) the user has one of: their name is an attribute of the user."""
_KIN = frozenset(
    """son daughter child kid baby brother sister mother mom mum father dad grandmother
    grandfather grandma grandpa wife husband partner dog cat""".split()  # noqa: SIM905
)
"""Whose age the user gives as one of theirs ("my daughter just turned 8")."""
_AGE = r"(?:\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_KIN_AGE = re.compile(
    rf"^(?:my\s+(?P<who>{_WORD})(?:,?\s+{_WORD},)?(?:\s+{_WORD})??|(?:i|we)\s+have\s+an?\s+"
    rf"(?P<had>{_WORD}),?\s+{_WORD},?\s+who)"
    rf"\s+(?:is|'s|is\s+now|(?:has\s+)?(?:just\s+)?turned)\s+{_AGE}"
    r"(?:\s+(?:years?|months?)(?:\s+old)?|\s+y/?o)?"
    r"(?:\s+(?:now|today|yesterday|this\s+\w+|last\s+\w+|on\s+\w+))?$"
)
_REPORTS_TO = re.compile(
    r"^(?i:i)\s+(?i:(?:now|currently)\s+)?(?i:report)\s+(?i:directly\s+)?(?i:to)\s+"
    r"[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?(?:\s+(?i:now|these\s+days))?\s*[.!]?$"
)
""""I report to Tom": whom the user reports to is their manager (a name, with a capital:
not "I report to the board")."""
_PLACE = r"[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*){0,2}"
_HOME_IS = re.compile(
    rf"^(?:(?i:home)\s+(?i:is|'s)\s+(?i:now\s+)?{_PLACE}"
    rf"|{_PLACE}\s+(?i:is|'s)\s+(?i:now\s+)?(?i:my|our)\s+(?i:new\s+)?(?i:home)\b"
    r"(?!\s+(?i:for|to|of|team|page|office)\b))"
)
""""Home is Denver now", "Denver is our new home": where the user lives, named."""
_BEEN_AT = re.compile(
    rf"^(?i:i(?:'ve|\s+have))\s+(?i:(?:now|just)\s+)?(?i:been)\s+(?i:working\s+)?(?i:at|with)\s+"
    rf"{_PLACE}\s+(?i:since)\s+(?i:{_SINCE})"
)
""""I've been at Meta since January": where the user works, named (not "at the gym"),
since a month, season or year (not "at Heathrow since 6am")."""
_STARTED_AT = re.compile(
    rf"^(?i:i(?:'ve|\s+have|'m|\s+am)?)\s+(?i:(?:just|now|recently)\s+)?(?i:started|starting)"
    rf"\s+(?i:at|with)\s+{_PLACE}(?:\s*[,.!;]|\s+(?i:last|this|next|in|on|a|two|three|\d)|\s*$)"
)
""""I started at Revolut last month": where the user works, named."""
_MOVED_ACCOUNT = re.compile(
    r"^(?i:i|we)(?i:'ve|\s+have)?\s+(?i:(?:now|just|finally)\s+)?(?i:moved|transferred|switched)"
    r"\s+(?i:my|our)\s+(?:(?i:(?:brokerage|trading|investment|stocks\s+and\s+shares)\s+account"
    r"|isa|portfolio|investments|shares|pension)s?)\s+(?i:over\s+)?(?i:to)\s+[A-Z]"
)
""""I moved my ISA to Vanguard": whom the user invests through, named (not "my portfolio
into bonds"; "my account" alone is a bank's)."""
_MANAGES_ME = re.compile(
    r"^[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?\s+(?i:(?:now|currently)\s+)?"
    r"(?P<verb>(?i:manages|supervises|mentors|coaches|tutors))\s+(?i:me)\b"
)
""""Tom manages me now", "Sam mentors me now": the user's manager or mentor, by name."""
_WHO_DOES = {
    "manages": "manager",
    "supervises": "manager",
    "mentors": "mentor",
    "coaches": "coach",
    "tutors": "tutor",
}
_DRIVES_NAMED = re.compile(
    r"^(?i:i)\s+(?i:(?:now|currently|just|still)\s+)?(?i:drive|lease)\s+(?i:an?)\s+"
    r"(?i:(?:new|used|old|second-hand|brand\s+new)\s+)?[A-Z0-9][\w-]*"
)
""""I drive a Tesla", "I lease a BMW": a vehicle named by its make (a capital)."""
_CALLED = re.compile(
    rf"^(?:and\s+|but\s+)?my\s+(?:new\s+)?(?P<who>{_WORD})(?:'s\s+name\s+is|\s+is\s+"
    rf"(?:now\s+)?(?:called|named))\s+\S"
)
_IS_MY = re.compile(
    rf"^(?P<subject>[a-z][\w'-]*(?:\s+[a-z][\w'-]*)?)(?:\s+is|'s|\s+has\s+become|\s+became)\s+"
    rf"(?:(?:now\s+)?my\s+{_ATTRIBUTE}"
    rf"(?:\s+{_LATELY})?|(?:the\s+)?(?P<role_attr>{_WORDS})"
    rf"\s+{_LATELY})$"
)
_NOT_SUBJECTS = frozenset("that this it he she who what there here which one".split())  # noqa: SIM905
_PROPER = re.compile(r"^(?:(?:Dr|Mr|Mrs|Ms|Mx|Prof)\.?\s+)?[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*){0,2}$")
"""A value that is a name ("Sarah", "Ana Lima")."""
_VALUE_STARTS = re.compile(r"^(?:\w+ing|called|named|also|still|not|never|always|(?:now\s+)?due)\b")
_PREFIX = re.compile(
    r"^(?:(?:actually|now|nowadays|currently|these days|lately|today|yesterday|recently"
    r"|by the way|btw|(?:it\s+)?turn(?:s|ed)\s+out(?:\s+that)?"
    r"|from now on|going forward|starting (?:today|now)"
    r"|update|oh|well|so|last (?:week|month|year)|this (?:week|month|year)|in \d{4})"
    r"[, ]+)+"
)
_PREFIX_ANY_CASE = re.compile(_PREFIX.pattern, re.IGNORECASE)
_SPELLING = {
    "favourite": "favorite",
    "favourites": "favorites",
    "colour": "color",
    "colours": "colors",
    "flavour": "flavor",
    "neighbourhood": "neighborhood",
    "e-mail": "email",
    "programme": "program",
    "centre": "center",
    "theatre": "theater",
}
"""British and American spellings of a word name the same attribute."""
_FRESH = frozenset("new current present updated latest actual usual regular".split())  # noqa: SIM905
"""Words that mark the current value, not name the attribute ("my *new* email address is ...",
"my *usual* coffee order is ...")."""
_FORMER = frozenset("old previous former last ex".split())  # noqa: SIM905
"""Words that mark a value as past: "my *old* phone number was ..." gives no current value."""
_SAME = {
    "email_address": "email",
    "mail_address": "email",
    "mobile": "phone",
    "mobile_number": "phone",
    "cell": "phone",
    "cell_number": "phone",
    "cellphone_number": "phone",
    "number": "phone",
    "phone_number": "phone",
    "telephone_number": "phone",
    "home_address": "address",
    "postal_address": "address",
    "street_address": "address",
    "home_town": "hometown",
    "birth_date": "birthday",
    "date_of_birth": "birthday",
    "job": "occupation",
    "profession": "occupation",
    "employer": "employer",
}
"""Attributes spoken of in several ways."""


def _clean(text: str) -> str:
    text = text.strip().lower().replace("\u2019", "'")
    text = re.split(r"[.!?;\n]", text, maxsplit=1)[0].strip()
    words = (_SPELLING.get(word, word) for word in _PREFIX.sub("", text).split())
    return " ".join(words)


def _current(attribute: str) -> list[str] | None:
    """The words of ``attribute`` without those marking it current ("new manager" ->
    ["manager"]); None for a former one ("old manager")."""
    words = attribute.split()
    while words and words[0] in _FRESH:
        words = words[1:]
    return None if words and words[0] in _FORMER else words


def _slot_name(attribute: str) -> str | None:
    words = _current(attribute)
    if not words or words[-1] in _NOT_ATTRIBUTES or words[0] in _NOT_ATTRIBUTES - _OWNED:
        return None
    name = "_".join(words)
    return _SAME.get(name, name)


def _named(clean: str) -> str | None:
    """``<relation>_name`` of "my wife's name is ...", "my dog is called ...": the one
    such person or pet the user has."""
    match = _CALLED.match(clean)
    if match and match.group("who") in _NAMED:
        return f"{match.group('who')}_name"
    return None


def _inverted(clean: str) -> str | None:
    """The attribute of "<value> is my <attribute> (now)": "Tosca is my favourite
    opera", "Ana is my manager now" (``manager_name``); without "my", only a person the
    user has one of, and only said as now ("Mr. Price is head of department now")."""
    match = _IS_MY.match(clean)
    if match is None or match.group("subject").split()[0] in _NOT_SUBJECTS:
        return None
    if match.group("role_attr") is not None:
        who = _relation(match.group("role_attr"))
        return None if who is None else f"{who}_name"
    attribute = match.group("attr")
    if (who := _relation(attribute)) is not None:
        return f"{who}_name"
    return _slot_name(attribute)


def _value_named(attribute: str, value: str) -> str | None:
    """``<relation>_name`` of "my manager is Sarah" (the value is a name, in ``value``'s
    own case; "my *new* manager is Tom" too), and of a role the user has one of for a
    thing ("my piano teacher is Mrs. Hale": ``piano_teacher_name``); ``None`` for "my
    manager is strict" and for a former one ("my old manager was Sarah")."""
    if not _PROPER.match(value.strip().rstrip(".!")):
        return None
    if (who := _relation(attribute)) is not None:
        return f"{who}_name"
    words = [word.removesuffix("'s") for word in _current(attribute) or []]
    if len(words) > 1 and words[-1] in _ROLES and not _NOT_ATTRIBUTES - _KIN & set(words[:-1]):
        return "_".join([*words, "name"])  # ("my son's teacher": son_teacher_name)
    return None


_ROLES = _NAMED | frozenset(
    """teacher instructor advisor adviser physiotherapist hairdresser barber vet nanny cleaner
    babysitter agent broker optician surgeon consultant""".split()  # noqa: SIM905
)
"""Whom the user has one of for a thing ("piano *teacher*", "financial *advisor*")."""


_NAMED_AS = {
    "head of department": "manager",
    "line manager": "manager",
    "team lead": "manager",
    "team leader": "manager",
    "supervisor": "manager",
}
"""Other names of a person of :data:`_NAMED` ("my line manager" is the user's manager)."""


def _relation(attribute: str) -> str | None:
    """The one person or pet of :data:`_NAMED` that ``attribute`` is, marked current or
    not ("manager", "new manager", "line manager"); None for anything else, a former one
    included."""
    words = _current(attribute)
    if words and (who := _NAMED_AS.get(" ".join(words))) is not None:
        return who
    return words[0] if words and len(words) == 1 and words[0] in _NAMED else None


_THIRD_PERSON = {
    "is": "am", "'s": "'m", "has": "have", "lives": "live", "resides": "reside",
    "works": "work", "eats": "eat", "drives": "drive", "owns": "own", "follows": "follow",
    "doesn't": "don't", "does": "do",
}  # fmt: skip
"""Verbs of a statement about someone in the third person, as the first person says them."""
_ADVERBS = frozenset("now currently just recently finally still no longer".split())  # noqa: SIM905
_SUBJECT = re.compile(
    r"^(?:(?P<user>(?i:the\s+user|user))|(?P<name>[A-Z][\w-]*(?: [A-Z][\w-]*)?))"
    r"(?P<rest>'s\s.*|\s.*)$"
)
_NOT_NAMES = frozenset(
    """i my we our you your he his she her they their it its this that these those there
    the a an today yesterday tomorrow now actually also then so but and""".split()  # noqa: SIM905
)


_SUBJECTLESS = re.compile(
    r"^(?i:(?:just|finally|recently|already|then)\s+)*(?P<verb>(?i:left|quit|sold|got|moved"
    r"|switched|upgraded|downgraded|changed|started|finished|joined|turned|bought|traded"
    r"|swapped|dropped|ditched|cancell?ed|replaced|gave|took|picked|signed|stopped|relocated"
    r"|graduated|adopted|lost|became|began|went|had|celebrated|transferred|handed|been"
    r"|retired|resigned|split|broke|packed|spent|hit|retrained|cut))\s+(?=[\w\"'])"
)
"""A statement of the user's with its "I" left out, as people write notes and chat: "Left
Deloitte in March", "Just turned 35", "Sold the Corsa", "Been at Meta since January"
(a verb of what one did or became first; not "Ted left", where a name comes first)."""


def _as_first_person(text: str) -> tuple[str, str | None] | None:
    """``text`` about "the user" or a named person, said in the first person, and whose
    it is (``None``: the user's own): "Carol moved to Berlin" → ("I moved to Berlin",
    "carol"), "The user's email is ..." → ("my email is ...", None)."""
    said = text.strip().replace("\u2019", "'")
    if (verb := _SUBJECTLESS.match(said)) is not None:
        been = verb["verb"].lower() == "been"
        return ("I've " if been else "I ") + said[0].lower() + said[1:], None
    match = _SUBJECT.match(said)
    if match is None:
        return None
    name = match.group("name")
    if name is not None and name.split()[0].lower() in _NOT_NAMES:
        return None
    owner = None if name is None else name.lower().replace(" ", "_")
    rest = match.group("rest")
    if rest.startswith("'s "):
        return "my " + rest[3:], owner
    words = rest.split()
    for i, word in enumerate(words):
        if word.lower() not in _BEFORE_VERB:
            words[i] = _THIRD_PERSON.get(word.lower()) or _first_person_verb(word)
            break
    return "I " + " ".join(words), owner


_BEFORE_VERB = _ADVERBS | frozenset(
    """always usually often never sometimes rarely also mostly generally typically normally
    really only""".split()  # noqa: SIM905
)
"""Adverbs between a subject and its verb ("The user *now always* takes ...")."""


def _first_person_verb(word: str) -> str:
    """A verb in the third person singular as the first person says it ("takes" ->
    "take", "cycles" -> "cycle", "watches" -> "watch", "flies" -> "fly"); any other word
    as it is."""
    lowered = word.lower()
    if len(lowered) <= 3 or not lowered.endswith("s") or lowered.endswith(("ss", "us", "is")):
        return word
    if lowered.endswith("ies"):
        return word[:-3] + "y"
    if lowered.endswith(("ches", "shes", "sses", "xes", "zes", "oes")):
        return word[:-2]
    return word[:-1]


def users_own(text: str) -> str:
    """``text`` about "the user" said in the first person ("User sold their Corolla" ->
    "I sold my Corolla"), as the rules read the user's own words; any other text as it
    is (a named person's stays theirs)."""
    said = _as_first_person(text)
    if said is None or said[1] is not None:
        return text
    return re.sub(r"\btheir\b", "my", re.sub(r"\bthemselves\b", "myself", said[0]))


def infer_slot(text: str) -> str | None:
    """The attribute ``text`` gives a value of (``"risk_tolerance"``), or ``None``.

    A statement about "the user" reads as the user's own; one about a named person
    ("Carol lives in Lisbon", "Kim's favourite colour is blue") gets that person's slot
    (``carol_home``), which never supersedes the user's own (``home``). The user's own
    attribute counts first: "Fiona retired, Graham's my boss now" gives ``manager_name``.
    Read as a reader sees it: styled letters plain, invisible characters dropped."""
    text = canonical(text)
    if kin := _kin_age(_clean(text)):  # (before a name after a comma starts a clause)
        return kin
    theirs = None
    for clause in _clauses(text):
        if (own := _first_person_slot(clause)) is not None:
            return own
        said = _as_first_person(clause)
        if said is not None and (slot := _first_person_slot(said[0])) is not None:
            if said[1] is None:
                return slot
            theirs = theirs or f"{said[1]}_{slot}"
    return theirs


_CLAUSE_BREAK = re.compile(
    r"(?<=[.!?;])\s+|\n+|,\s*(?:so|and|but)\s+|,\s*(?=(?:i|we|my)\b|(?-i:[A-Z]))"
    r"|\s+(?:and|but)\s+(?=(?:now\s+)?i(?:'m|\s+am)\b)",
    re.IGNORECASE,
)
_LABEL = re.compile(r"^[^:\n]{1,40}:\s")


def labelled(text: str) -> bool:
    """Whether ``text`` is a turn that names its speaker ("Ann: yesterday I went ...")."""
    return _LABEL.match(text.strip()) is not None


def only_retracts(text: str, cue: re.Pattern[str]) -> bool:
    """Whether ``text`` says nothing but a retraction (the ``cue``): "I no longer live in
    Berlin" only retracts; "I no longer live in Berlin, I live in Munich now" and "I
    stopped drinking coffee, now I drink tea" say how things are now too (a part with "I",
    "we" or "my" and no cue), and so does a reason ("I don't run anymore because of my
    knee")."""
    parts = re.split(
        r"[.;!?,]|\b(?:and|but|so|because|since|due\s+to)\b", text.replace("\u2019", "'")
    )
    return not any(_USERS_WORD.search(part) and not cue.search(part) for part in parts)


_USERS_WORD = re.compile(r"\b(?i:i|i'm|i've|we|we're|my|our)\b")
"""A word by which a statement speaks of the user ("I", "we", "my"...)."""


def _clauses(text: str) -> list[str]:
    """The sentences and joined clauses of ``text`` in order ("We just had our third
    child, so I have three kids now", "I gave up coffee, I drink tea now": what the
    second says is what counts); a labelled turn
    ("Ann: ...") whole, so no clause of it reads as the user's own."""
    if labelled(text):
        return [text]
    return [part for part in _CLAUSE_BREAK.split(text) if part.strip()] or [text]


def _first_person_slot(text: str) -> str | None:
    clean = _clean(text)
    for name, pattern in _RELATIONS:
        if pattern.search(clean):
            return name
    as_said = _PREFIX_ANY_CASE.sub("", text.strip())
    if _DRIVES_NAMED.match(as_said):
        return "car"
    if _MOVED_ACCOUNT.match(as_said):
        return "broker"
    if _REPORTS_TO.match(as_said):
        return "manager_name"
    if does := _MANAGES_ME.match(as_said):
        return f"{_WHO_DOES[does['verb'].lower()]}_name"
    if _HOME_IS.match(as_said):
        return "home"
    if _BEEN_AT.match(as_said) or _STARTED_AT.match(as_said):
        return "employer"
    changed = _SET_TO.search(clean)
    if changed and _A_SETTING.search(changed["value"]):
        return None  # ("I switched my phone to silent mode": how it is set, not which it is)
    if changed and not _NOT_IN_ATTRIBUTE & set(changed["attr"].split()):
        return _of_value(_slot_name(changed["attr"]), changed["value"])
    if _EARNS.match(clean):
        return "salary"
    if money := _MONEY_RATE.match(clean):
        return f"{stem(money['verb'])}_per_{money['period']}"
    if rate := _RATE.match(clean):
        return _rate(rate)
    if level := _LEVEL.match(clean):
        unit = _UNITS.get(level["unit"], _singular(level["unit"]))
        what = f"_{_singular(level['what'])}" if level["what"] else ""
        return f"{_ANY}{unit}{what}_per_{level['period']}"
    if one := _CHANGED_ONE.match(clean) or _HAVE_NEW.match(clean):
        return _one_of(one["attr"])
    if kin := _kin_age(clean):
        return kin
    if (school := _KIN_SCHOOL.match(clean)) is not None and school["who"] in _KIN:
        return f"{school['who']}_school"
    if named := _named(clean) or _inverted(clean):
        return named
    clean = _NEW_LABEL.sub(lambda new: f"my new {new['attr']} is ", clean)
    match = (
        _MY.match(clean)
        or _BARE_CHANGE.match(clean)
        or _THE_NOW.match(clean)
        or _PUT_UP.match(clean)
    )
    if match is None or _VALUE_STARTS.match(match.group("value")):
        return None
    said = _LATELY_LAST.sub("", match.group("value"))  # ("my partner is Sam these days")
    found = re.search(re.escape(said), text.replace("\u2019", "'"), re.I)
    value = found.group(0) if found else ""
    return _value_named(match.group("attr"), value) or _of_value(
        _slot_name(match.group("attr")), said
    )


def _kin_age(clean: str) -> str | None:
    """``<kin>_age`` of "my daughter just turned 8", "my son Dylan is 6", "we have a son,
    Dylan, who is 6" (the user's child, relative or pet of :data:`_KIN`), or None."""
    kin = _KIN_AGE.match(clean)
    who = kin and (kin["who"] or kin["had"])
    return f"{who}_age" if who in _KIN else None


def _one_of(attribute: str) -> str | None:
    """The slot of whom or what the user has one of (:data:`_CHANGED_ONE`,
    :data:`_HAVE_NEW`): ``landlord_name``, ``employer`` of "job", ``any_carrier``."""
    if (slot := _CHANGED_ONE_SLOT.get(attribute)) is not None:
        return slot
    if (who := _relation(attribute)) is not None:
        return f"{who}_name"
    slot = _slot_name(attribute)
    return slot and f"{_ANY}{'phone_model' if attribute == 'phone' else slot}"


_A_STATE = re.compile(
    r"^(?:(?:now|all|finally|officially|completely|fully|almost|nearly)\s+)*(?:finished|done|over"
    r"|complete|completed|ready|broken|fixed|repaired|closed|open|delayed|cancell?ed"
    r"|postponed|on\s+hold|late|overdue|paid|booked|full|empty)$"
)
"""A value that says how a thing is, not which it is ("My project is now finished" keeps "My
project is a mobile app")."""


def _of_value(slot: str | None, value: str) -> str | None:
    """``slot`` as the value says: a phone with no number in it is the phone the user
    has ("My phone is an iPhone 12": ``phone_model``), not their number; none for a state
    (:data:`_A_STATE`)."""
    if _A_STATE.match(value.strip()):
        return None
    if slot == "phone" and len(re.findall(r"\d", value)) < 5:
        return "phone_model"
    return slot


def _rate(rate: re.Match[str]) -> str | None:
    """The slot of how much the user does in a period (:data:`_RATE`): "running 30k a
    week" -> ``run_km_per_week``."""
    verb = stem(rate["verb"])
    if rate["verb"] in _COPULAS or verb in ("am", "be", "have", "ha", "get", "got"):
        return None  # ("I'm 35 a year ...", "I have 3 meetings a day": no activity)
    unit = _UNITS.get(rate["unit"], _singular(rate["unit"]))
    what = f"_{_singular(rate['what'])}" if rate["what"] else ""
    return f"{verb}_{unit}{what}_per_{rate['period']}"


_OF = frozenset("for of".split())  # noqa: SIM905
_ARTICLES = frozenset("the a an my our".split())  # noqa: SIM905


def same_slot(one: str, other: str) -> bool:
    """Whether two slot names name one attribute, the thing it belongs to written before
    or after it: "budget_for_the_trip" (from "My budget for the trip is ...") and
    "trip_budget" (from "I raised my trip budget to ..."); a slot of :data:`_ANY` is
    any that ends as it does (``any_coffee_per_day``: ``drink_coffee_per_day``)."""
    if one == other or _canonical(one) == _canonical(other):
        return True
    for named, slot in ((one, other), (other, one)):
        if named.startswith(_ANY):
            kind = named.removeprefix(_ANY)
            if slot == kind or (slot.endswith(f"_{kind}") and not _CHOSEN & set(slot.split("_"))):
                return True
    return False


_CHOSEN = frozenset(
    """favorite best worst least dream ideal first next last biggest largest smallest oldest
    youngest newest top other""".split()  # noqa: SIM905
)
"""Words of an attribute chosen among many ("favorite_hobby"): a new one of the kind ("I
have a new hobby") is no new value of it."""


_SAME_SLOT = {
    "target_allocation": "allocation",
    "asset_allocation": "allocation",
    "portfolio_allocation": "allocation",
    "risk_appetite": "risk_tolerance",
    "risk_profile": "risk_tolerance",
    "boss_name": "manager_name",
    "gp_name": "doctor_name",
    "line_manager_name": "manager_name",
}
"""Names of one attribute ("My risk appetite is low" is the risk tolerance)."""


_MEASURED = frozenset("reading level levels figure result".split())  # noqa: SIM905
"""Words for a measurement of a thing, which is the thing's value ("my cholesterol reading"
is my cholesterol)."""
_PERIODIC = frozenset("weekly monthly daily nightly yearly annual".split())  # noqa: SIM905
"""How often an amount recurs, which the value says too ("£60 a week"): a weekly budget and
a budget per week are one attribute, whatever the period."""
_PER = re.compile(r"_per_(?:day|night|week|month|year|morning|evening|weekend)$")
_SAME_WORD = {"spend": "budget", "earn": "salari", "incom": "salari", "pay": "salari"}
"""Stems of an attribute's words that name one thing ("grocery spend" is the grocery
budget, what one earns a month one's salary)."""


def _canonical(slot: str) -> str:
    slot = _PER.sub("", _SAME_SLOT.get(slot, slot))
    words = [w for w in slot.split("_") if w not in _ARTICLES and w not in _PERIODIC]
    if len(words) > 1 and words[-1] in _MEASURED:
        words = words[:-1]
    words = [_SAME_WORD.get(stemmed := stem(w), stemmed) for w in words] or [slot]
    for i, word in enumerate(words):
        if word in _OF and 0 < i < len(words) - 1:
            return "_".join(words[i + 1 :] + words[:i])
    return "_".join(words)


def same_person(named: str, kin: str, text: str) -> bool:
    """Whether the slot of a person by name (``named``: "emma_age", from "Emma turned 6")
    is the slot of one of the user's kin (``kin``: "daughter_age") in ``text``, a fact
    that names them ("My daughter Emma is 5")."""
    relation, _, attribute = kin.partition("_")
    if relation not in _KIN or not attribute or not named.endswith(f"_{attribute}"):
        return False
    name = named[: -len(attribute) - 1].replace("_", " ")
    if not name or name in _KIN:
        return False
    return re.search(rf"\b{re.escape(name)}\b", text, re.IGNORECASE) is not None


def mentions_slot(text: str, slot: str) -> bool:
    """Whether ``text``, a statement of the user's (first person, not a question), gives
    a new value of the attribute ``slot`` by naming it: "I now have a *high* risk
    tolerance", "honestly my risk tolerance is low". A passing mention ("I check my email
    every morning") is not one, and the relations read only from their own forms (where
    the user lives or works, age, names...) are never matched by a mention ("I work from
    home on Fridays" says nothing of where the user lives)."""
    clean = _clean(text)
    if text.strip().endswith("?") or not re.match(r"^(?:i|i'm|i've|my)\b", clean):
        return False
    if slot in _READ_BY_FORM or slot.endswith("_name"):
        return False
    phrase = r"\s+".join(re.escape(w) for w in slot.split("_"))
    if (given := re.search(rf"\b{phrase}\s+{_COPULA}\s+(?P<value>\S.*)$", clean)) is not None:
        value = given["value"]  # ("my flight is now delayed": how it is; "... now due on")
        return not _A_STATE.match(value) and not _VALUE_STARTS.match(value)
    if re.search(rf"\bhave\s+(?:an?\s+)?(?:[\w'-]+\s+){{1,3}}{phrase}\b", clean) is not None:
        return True
    *kind, head = slot.split("_")
    return (
        bool(kind)
        and not _CHOSEN & set(kind)
        and _A_NEW_AMOUNT.search(clean) is not None
        and (
            re.search(
                rf"\ban?\s+(?:[\w'-]+\s+){{0,2}}?[\w'-]*\d[\w'-]*\s+{head}\b(?!\s+(?:for|of|on|to)\b)",
                clean,
            )
            is not None
        )
    )


_A_NEW_AMOUNT = re.compile(rf"\b{_LATELY}\b")
"""A change said with no attribute named in full ("I'm *now* looking at a 10-year horizon" of
``investment_horizon``): the amount then names it by its last word."""


def stops_slot(text: str, slot: str) -> bool:
    """Whether ``text``, a statement of the user's, says they no longer do what a one-word
    ``slot`` names ("I don't commute at all" of ``commute``, "I've stopped commuting"; not
    now and then: "I don't commute on Fridays")."""
    if "_" in slot or not re.fullmatch(r"[a-z]{3,}", slot):
        return False
    clean = _clean(text)
    if re.match(_ALWAYS, clean) is None:
        return False  # ("I don't commute on Fridays", "... when it snows")
    doing = rf"{re.escape(slot.removesuffix('e'))}(?:e|es|ing)?"
    return (
        re.search(
            rf"\b(?:i|we)(?:'ve)?\s+(?:(?:don't|do\s+not|no\s+longer|never|have\s+stopped|stopped"
            r"|quit)\s+)"
            rf"{doing}\b",
            clean,
        )
        is not None
    )


def _singular(word: str) -> str:
    """``word`` without a plural's ``s`` ("mornings": "morning"; not "bus" or "glass")."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


_COPULAS = frozenset("am is are was were".split())  # noqa: SIM905
