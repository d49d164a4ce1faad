"""Pin classification against phrasings the rules were not written from, keys, bounded effects."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from engram.context import ContextPolicy, PinRules, WorkingMemory, extract_pins
from engram.context._pins import make_pin
from engram.errors import InvalidInputError
from engram.tokens import count_message_tokens, count_tokens


def _kinds(sentence: str) -> list[str]:
    pins = extract_pins([HumanMessage(sentence, id="m")])
    return sorted(name for name, found in pins.items() for _ in found)


REPORTED_CONSTRAINTS = [
    "Confirmed: do not place the order.",
    "I approve nothing until I see the numbers.",
    "Proceed only after I confirm the price.",
    "You're not allowed to buy Tesla.",
    "Max 10 shares per order.",
    "Maximum position size is 5%.",
    "I forbid any short selling.",
    "Please refrain from options trading.",
    "Hands off my retirement account.",
]
# Written for this test, not taken from the rules or the tester's list.
UNSEEN_CONSTRAINTS = [
    "You are not permitted to touch my savings.",
    "Shorting is prohibited in this account.",
    "We prohibit penny stocks.",
    "You may not sell my index funds.",
    "Kindly abstain from margin trading.",
    "Minimum cash buffer: $2,000.",
    "At most 2 orders a week.",
    "Cap: 1,000 EUR per position.",
    "Options are off-limits.",
    "Crypto is banned from my portfolio.",
    "Confirmed, don't send the email.",
    "I authorize nothing without my wife's signature.",
    "Permission denied.",
    "I'm not approving anything over $500.",
    "Go ahead only once I've checked the chart.",
    "Steer clear of Chinese ADRs.",
    "Sell the bonds, but no more than $3k.",
    "Under no condition should you touch my 401k.",
    "Keep at least $5,000 in cash.",
    "Confirmed - cancel the order.",
    "Confirmed; nothing should be sold.",
    "I don't authorize this.",
]


@pytest.mark.parametrize("sentence", REPORTED_CONSTRAINTS + UNSEEN_CONSTRAINTS)
def test_prohibitions_limits_and_refusals_are_constraints(sentence: str) -> None:
    """A prohibition, a limit, a refusal or a deferred approval binds; it never approves."""
    assert _kinds(sentence) == ["constraints"]


REPORTED_APPROVALS = [
    "I authorize the $5,000 transfer to Bob.",
    "Permission granted.",
    "I consent to the rebalance.",
    "You're cleared to place the order.",
    "Green light on the AAPL order.",
]
UNSEEN_APPROVALS = [
    "I authorise the sale of 20 MSFT shares.",
    "I hereby authorize the wire.",
    "Authorized, send it.",
    "Yes, I consent.",
    "Approval granted.",
    "Consent given for the rebalance.",
    "You have the green light.",
    "You have my blessing to rebalance.",
    "I give you permission to sell the bonds.",
    "Go ahead and sell the bonds.",
    "OK, proceed, but never above $50 a share.",
    "Yes, buy it.",
    "OK, you have the go-ahead.",
    "You've got the green light.",
    "Go ahead with no more than 10 shares.",
    "Yes, proceed, no problem.",
]


@pytest.mark.parametrize("sentence", REPORTED_APPROVALS + UNSEEN_APPROVALS)
def test_approvals_in_other_words(sentence: str) -> None:
    assert _kinds(sentence) == ["approvals"]


UNPINNED = [
    "Approved? No way, cancel it.",
    "Go ahead? Absolutely not.",
    "Yes.",
    "Do I need to authorize the transfer?",
    "Green light means go, right?",
    "The board consented to the merger last year.",
    "Authorization failed for the API call.",
    "I can't believe how well NVDA did.",
    "Is short selling allowed in my IRA?",
    "What's the maximum position size you'd suggest?",
    "The maximum drawdown was 12% last year.",
    "Up to you.",
    "Is the maximum 10 shares per order?",
    "Maximum drawdown last year was 12%.",
    "Max Verstappen won again.",
    "Max is a golden retriever, and he's about 3 years old.",
    "The ban on chip exports was lifted.",
    "I wasn't allowed to see the report.",
    "Permission granted? Not yet.",
    "I approve of your writing style.",
    "Permission denied on the folder, can you help?",
]


@pytest.mark.parametrize("sentence", UNPINNED)
def test_questions_facts_and_refusals_are_never_approvals(sentence: str) -> None:
    assert "approvals" not in _kinds(sentence)


@pytest.mark.parametrize("sentence", UNPINNED[2:])
def test_chatter_is_not_pinned_at_all(sentence: str) -> None:
    assert _kinds(sentence) == []


def test_reworded_pins_survive_a_compaction() -> None:
    said = [
        "You're not allowed to buy Tesla.",
        "Max 10 shares per order.",
        "I forbid any short selling.",
        "I authorize the $5,000 transfer to Bob.",
        "Confirmed: do not place the order.",
        "I approve nothing until I see the numbers.",
    ]
    messages: list[BaseMessage] = [SystemMessage("You are a trading assistant.")]
    for i, sentence in enumerate(said):
        messages += [HumanMessage(f"Context item {i}. {sentence}", id=f"u{i}"), AIMessage("Noted.")]
    for i in range(40):
        messages += [HumanMessage(f"How is sector {i}?", id=f"q{i}"), AIMessage("Mixed. " * 40)]
    memory = WorkingMemory(
        ContextPolicy(max_input_tokens=3000, compact_at_tokens=1500, keep_recent_tokens=500)
    )
    update = memory.update({"messages": messages})
    state = {**update, "messages": update["messages"][1:]}
    assert state.get("summary") and all(m.id != "u0" for m in state["messages"])
    sent = "\n".join(m.text for m in memory.model_input(state))
    assert all(sentence in sent for sentence in said)
    assert [p["text"] for p in state["approvals"]] == ["I authorize the $5,000 transfer to Bob."]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Never spend more than €500 per trade.", "Never spend more than £500 per trade."),
        ("Never put more than 5% in one stock.", "Never put more than 5‰ in one stock."),
        ("Never buy while NVDA < 800.", "Never buy while NVDA > 800."),
        ("Never hold more than ¥500.", "Never hold more than ₹500."),
        ("Only trade if the change is +5%.", "Only trade if the change is −5%."),
    ],
)
def test_symbols_that_change_meaning_keep_pins_apart(first: str, second: str) -> None:
    pins = extract_pins([HumanMessage(first, id="a"), HumanMessage(second, id="b")])
    assert [p["text"] for p in pins["constraints"]] == [first, second]


def test_keys_still_merge_what_differs_only_in_case_spacing_or_width() -> None:
    same = [
        "Never buy TSLA above $500.",
        "never  buy tsla above $500",
        "Never buy TSLA above ＄５００.",
    ]
    keys = {make_pin("constraint", text, None)["key"] for text in same}
    assert len(keys) == 1


def _publish(args: dict[str, Any]) -> list[BaseMessage]:
    return [
        SystemMessage("You are an analyst."),
        HumanMessage("Publish the report.", id="h1"),
        AIMessage("", id="a1", tool_calls=[{"name": "publish_report", "args": args, "id": "c1"}]),
        ToolMessage("published: id 42 " * 100, tool_call_id="c1", name="publish_report"),
        HumanMessage("Thanks. What's next?", id="h2"),
    ]


RULES = PinRules(effect_tools=frozenset({"publish_report"}))


def test_effect_args_are_cut_like_results() -> None:
    body = "The quarterly outlook for semiconductors remains strong. " * 1500
    (effect,) = extract_pins(_publish({"body": body}), RULES)["effects"]
    text = effect["text"]
    assert text.startswith('publish_report({"body": "The quarterly outlook')
    assert " -> published: id 42" in text
    assert len(text) < 3 * RULES.max_text and text.count("[cut]") == 2


def test_a_large_effect_leaves_the_model_input_within_budget() -> None:
    body = "The quarterly outlook for semiconductors remains strong. " * 1500
    memory = WorkingMemory(
        ContextPolicy(max_input_tokens=8000, compact_at_tokens=6000, keep_recent_tokens=2000),
        rules=RULES,
    )
    state: dict[str, Any] = {"messages": _publish({"body": body})}
    state.update({k: v for k, v in memory.update(state).items() if k != "messages"})
    sent = memory.model_input(state)
    assert count_message_tokens(sent) <= 8000 and sent[-1].id == "h2"
    assert count_tokens(state["effects"][0]["text"]) < 200


def test_pins_too_large_for_the_budget_are_named_as_pins() -> None:
    pins = [make_pin("constraint", f"Never sell fund {i}.", None) for i in range(60)]
    memory = WorkingMemory(ContextPolicy(max_input_tokens=300, compact_at_tokens=None))
    state = {"messages": [SystemMessage("sys"), HumanMessage("hi")], "constraints": pins}
    with pytest.raises(InvalidInputError, match="pinned") as caught:
        memory.model_input(state)
    assert "than the system prompt" not in str(caught.value)
    huge_system = SystemMessage("Rules. " * 400)
    with pytest.raises(InvalidInputError, match="system prompt"):
        memory.model_input({"messages": [huge_system, HumanMessage("hi")]})
