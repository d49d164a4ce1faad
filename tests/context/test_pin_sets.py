"""Pins on three sets of sentences written as a user would say them to an assistant, each set
written before the rule changes it led to (the manual's working-memory page gives each set's
first-run figures). Across travel, calendars, shopping and investing: what must be pinned,
what must not, and approvals."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage

from engram.context import extract_pins


def _kinds(sentence: str) -> list[str]:
    pins = extract_pins([HumanMessage(sentence, id="m")])
    return sorted(name for name, found in pins.items() if found)


CONSTRAINTS = [
    "Nothing in Russian stocks.",
    "Max. 5 positions.",
    "Keep the hotel under 200 euros a night.",
    "Don't book anything with a layover longer than three hours.",
    "No red-eye flights, ever.",
    "Only aisle seats for me.",
    "I can't fly before 9am.",
    "Budget is capped at $1,500 for the whole trip.",
    "Never email my manager directly.",
    "Avoid anything with peanuts; I'm allergic.",
    "Skip companies that make weapons.",
    "Leave my 401k alone.",
    "Under no circumstances touch the production database.",
    "Do not push to main without a review.",
    "Tech exposure should stay below 30%.",
    "I won't accept fees above 1%.",
    "Stay out of crypto.",
    "None of my money goes into tobacco.",
    "Please don't share my address with anyone.",
    "Limit each trade to 2% of the portfolio.",
    "I never want more than two meetings before lunch.",
    "Hands off the emergency fund.",
    "No more than 3 drinks on the itinerary's evenings.",
    "The deadline is firm: nothing after Friday.",
    "You must get my OK before sending any invoice.",
    "Keep replies short, under 100 words.",
    "Only use sources from the last 12 months.",
    "Exclude Chinese ADRs.",
    "No leverage.",
    "Don't rebalance more than once a quarter.",
    "Please keep my calendar free on Sunday mornings.",
    "Nothing over 50 dollars for the gift.",
    "I refuse to pay for checked bags.",
    "Stick to index funds.",
    "Never schedule calls during school pickup.",
    "Avoid airlines with bad safety records.",
    "My spending cap is 300 a week.",
    "Absolutely no meetings on Fridays.",
    "Do NOT auto-renew any subscription.",
    "All purchases above $100 need my sign-off.",
    "Never sell at a loss.",
    "I'd rather you didn't contact my clients.",
    "Hold no more than 10% in any single stock.",
    "Don't invest in oil companies.",
    "Zero exposure to emerging markets, please.",
    "Keep the kids' screen time under two hours.",
    "I cannot travel in July.",
    "No trades in the first 30 minutes after the open.",
    "Vegetarian restaurants only.",
    "Min. 4 stars for hotels.",
    "Don't ever book me on Ryanair.",
    "Please avoid scheduling anything past 6pm.",
    "Keep total risk at or below 2% per trade.",
    "I'm not comfortable with options, so no options trades.",
    "Nothing with a expense ratio above 0.5%.",
    "Make sure every invoice is sent in PDF.",
    "Under no condition wire money abroad.",
    "My max budget for the laptop is 1200.",
    "Only book refundable fares.",
    "We never work with recruiters.",
    "Please refrain from using my full name in emails.",
    "No single holding may exceed 8%.",
    "Limit the report to two pages.",
    "I will not fly economy on long-haul flights.",
    "You are not allowed to delete any files.",
    "Cap weekly groceries at 150.",
    "Write-ups should never exceed 500 words.",
    "No trades on Fridays, please.",
    "Dairy-free meals only, please.",
]

APPROVALS = [
    "Approved, go ahead with the purchase.",
    "Yes, send it.",
    "You have my go-ahead to book the flight.",
    "OK, place the order.",
    "Go for it.",
    "I authorize the payment of $300.",
    "Looks good, publish it.",
    "Fine by me, proceed.",
    "Sure, transfer the funds.",
    "Green light on the rebalance.",
    "Yes, go ahead and cancel it.",
    "Approved.",
    "Do it.",
    "You're cleared to send the contract.",
    "Alright, book it.",
    "That works for me, go ahead.",
    "Consent given.",
    "I approve the refund.",
    "Yep, execute the trade.",
    "Sounds good, go ahead and send it.",
    "I hereby authorize the wire transfer.",
    "OK, you may proceed.",
    "Go ahead.",
]

NOT_RULES = [
    "Max Verstappen won 3 races in a row.",
    "No worries, take your time.",
    "Nothing much happened at work today.",
    "I only just got back from Lisbon.",
    "Never mind, I found it.",
    "Don't know if that makes sense.",
    "My limit on the credit card was raised to 5,000 last year.",
    "I always loved the mountains as a kid.",
    "No idea what the weather will be.",
    "Is the maximum 10 shares?",
    "Should I avoid tech stocks?",
    "Maxine is coming over at 5.",
    "The cap on the bottle was stuck.",
    "I had at least 3 coffees this morning.",
    "Nobody told me the meeting moved.",
    "The museum is open until 6 pm.",
    "I ran 5 miles yesterday.",
    "We stayed at a hotel for 150 euros a night.",
    "Only 3 people showed up to the party.",
    "I must have left my keys at the office.",
    "Can you make sure I understood the tax rules correctly?",
    "Tesla was up 4% today.",
    "My daughter never eats broccoli.",
    "The kids can't wait for summer.",
    "I don't think the market will crash.",
    "I never thought I'd enjoy hiking this much.",
    "Nothing beats a good espresso.",
    "My son can't stop talking about dinosaurs.",
    "The maximum temperature today was 31 degrees.",
    "We only had two hours in Rome.",
    "Mike always forgets his umbrella.",
    "I won the lottery once, only 20 dollars.",
    "No one called while I was out.",
    "Minnie the cat is 4 years old.",
    "Don't you love autumn?",
    "At least it didn't rain.",
    "The limit of a sequence is a fundamental idea.",
    "I can't believe it's December already.",
    "Avoiding sugar has helped my sleep a lot.",
    "The store had a cap of 2 per customer.",
    "I should have bought Nvidia in 2019.",
    "My wife never drinks coffee after noon.",
    "Nothing in my inbox needs attention.",
    "The limit was reached twice last month.",
    "I never liked spinach.",
    "No way! That's amazing news.",
    "We always went camping in August when I was young.",
    "I can't remember the name of that restaurant.",
    "Max and I are going to the cinema at 8.",
    "You must be tired after that trip.",
    "Nothing changed since our last call.",
    "Avoiding traffic took us an extra hour.",
    "The minimum wage went up 5% this year.",
    "Keep calm and carry on, as they say.",
    "Is there a cap of 10 on trades per day?",
    "Don't worry about it.",
    "I won't be home until 7.",
    "My budget was 500 but I spent 700.",
]


@pytest.mark.parametrize("sentence", CONSTRAINTS)
def test_a_stated_rule_is_pinned_as_a_constraint(sentence: str) -> None:
    assert _kinds(sentence) == ["constraints"]


@pytest.mark.parametrize("sentence", APPROVALS)
def test_an_approval_is_pinned_as_one(sentence: str) -> None:
    assert _kinds(sentence) == ["approvals"]


@pytest.mark.parametrize("sentence", NOT_RULES)
def test_a_statement_of_fact_or_feeling_pins_nothing(sentence: str) -> None:
    assert _kinds(sentence) == []
