"""Consolidation: ADD / UPDATE / DELETE / NOOP, by rules and by a chat model."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from engram import Principal
from engram.recall import MiniLMEmbedder
from engram.stores.cold import Action, Existing, Fact, LLMResolver, LongTermStore, RuleResolver
from engram.stores.cold._slots import infer_slot, mentions_slot, same_slot
from engram.stores.cold.records import MemoryRecord

if TYPE_CHECKING:  # the fixtures' types, defined in conftest.py
    from conftest import Clock, StoreFactory

ME = Principal("t", "me")


def test_rules_add_noop_update_delete(store: LongTermStore) -> None:
    added = store.remember(ME, "My favourite drink is green tea", slot="drink")
    assert added.action == "added" and added.record is not None
    key = added.record.key
    dup = store.remember(ME, "my favourite drink is green tea!", slot="drink")
    assert dup.action == "noop" and dup.record is not None and dup.record.key == key
    updated = store.remember(ME, "My favourite drink is espresso", slot="drink")
    assert updated.action == "updated" and updated.record is not None
    assert updated.record.key == key and updated.previous is not None
    assert updated.previous.text == "My favourite drink is green tea"
    deleted = store.remember(ME, "I no longer drink espresso", slot="drink")
    assert deleted.action == "deleted" and deleted.previous is not None
    assert store.recall(ME, "favourite drink") == []
    assert [v.text for v in store.history(ME, key)] == [
        "My favourite drink is green tea",
        "My favourite drink is espresso",
    ]


def test_near_duplicate_without_slot_is_noop(store: LongTermStore) -> None:
    store.remember(ME, "Allergic to peanuts", tags=["constraint"])
    again = store.remember(ME, "allergic to PEANUTS", tags=["constraint"])
    assert again.action == "noop"
    other = store.remember(ME, "Allergic to shellfish", tags=["constraint"])
    assert other.action == "added"
    assert len(store.recall(ME, "allergic", k=10)) == 2


def test_consolidation_stays_in_the_namespace(store: LongTermStore) -> None:
    store.remember(Principal("t", "other"), "My favourite drink is tea", slot="drink")
    mine = store.remember(ME, "My favourite drink is tea", slot="drink")
    assert mine.action == "added"


def test_a_new_value_without_a_slot_supersedes_and_as_of_finds_the_old(
    store: LongTermStore, clock: Clock
) -> None:
    first = store.remember(ME, "My risk tolerance is conservative")
    assert first.record is not None and first.record.value["slot"] == "risk_tolerance"
    before = clock()
    clock.advance(days=30)
    second = store.remember(ME, "I now have a high risk tolerance")
    assert second.action == "updated" and second.record is not None
    assert second.record.key == first.record.key
    assert second.reason is not None and "inferred" in second.reason
    assert [r.record.text for r in store.recall(ME, "risk tolerance", k=5)] == [
        "I now have a high risk tolerance"
    ]
    old = store.recall(ME, "risk tolerance", k=5, as_of=before)
    assert [r.record.text for r in old] == ["My risk tolerance is conservative"]


def test_inferred_slots_keep_separate_attributes_apart(store: LongTermStore) -> None:
    store.remember(ME, "My email is me@old.example")
    moved = store.remember(ME, "I live in Leeds")
    again = store.remember(ME, "I moved to York last spring")
    assert moved.action == "added" and again.action == "updated"
    daughter = store.remember(ME, "My daughter is learning Python")
    other = store.remember(ME, "My daughter is seven")
    assert daughter.action == "added" and other.action == "added"
    texts = {r.record.text for r in store.recall(ME, "email daughter York Leeds", k=10)}
    assert texts == {
        "My email is me@old.example",
        "I moved to York last spring",
        "My daughter is learning Python",
        "My daughter is seven",
    }


@pytest.mark.parametrize(
    ("text", "slot"),
    [
        ("My risk tolerance is conservative.", "risk_tolerance"),
        ("my favourite colour is now green", "favorite_color"),
        ("My favorite color is green", "favorite_color"),
        ("My new e-mail address is b@example.org", "email"),
        ("My phone number is 555 0100", "phone"),
        ("Blue is my favourite colour now", "favorite_color"),
        ("That is my dog", None),
        ("Ann: Tom is my manager now", None),
        ("Ann is my sister", None),
        ("I just started a new job at Initech", "employer"),
        ("I've joined a bakery", "employer"),
        ("I'm based in Lyon", "home"),
        ("I work as a nurse", "occupation"),
        ("I turned 35 yesterday", "age"),
        ("I have three children", "number_of_children"),
        ("I have a meeting at 3", None),
        ("My dog's name is Max", "dog_name"),
        ("My dog is called Rex", "dog_name"),
        ("My manager is Sarah", "manager_name"),
        ("Tom is my manager now", "manager_name"),
        ("My manager is strict", None),
        ("Actually, my home city has changed to Porto", "home_city"),
        ("Risk tolerance: aggressive", None),
        ("Ann: my city is Paris", None),
        ("I currently live in Oslo", "home"),
        ("I work for a bakery", "employer"),
        ("I'm 41 years old", "age"),
        ("My wife is a nurse", None),
        ("My manager is called Ana", "manager_name"),
        ("My dog is sleeping", None),
        ("I like jazz", None),
        ("Wie heißt mein Hund?", None),
        ("Note: call the bank", None),
        ("I'm a strict vegan", "diet"),
        ("I don't eat meat", "diet"),
        ("I eat meatballs on Sundays", None),
        ("I'm engaged to Tom", "relationship_status"),
        ("I'm engaged in a long project", None),
        ("I own a red pickup truck", "car"),
        ("I own a bakery", None),
        ("I drive a hard bargain", None),
        ("I was laid off in May", "employer"),
        ("I retired last year", "occupation"),
        ("The user now works at Initech.", "employer"),
        ("The user's email is a@example.com", "email"),
        ("Carol lives in Lisbon.", "carol_home"),
        ("Kim's favourite colour is blue", "kim_favorite_color"),
        ("Ana Lima is based in Porto", "ana_lima_home"),
        ("He lives in Rome", None),
        ("Yesterday I moved to Rome", "home"),
        ("Melanie's daughter is learning Python", None),
        ("Users love this feature", None),
        ("My daughter is 7 years old.", "daughter_age"),
        ("My son just turned 13", "son_age"),
        ("My dog is three", "dog_age"),
        ("My manager is 50", None),
        ("My son is 12 and loves chess", None),
        ("I drive a Toyota Corolla.", "car"),
        ("Actually, I now lease a BMW", "car"),
        ("I drive a hard bargain", None),
        ("I drive my sister to school", None),
        ("I'm 29.", "age"),
        ("I'm 5 minutes away", None),
        ("My new manager is Tom.", "manager_name"),
        ("My current boss is Ana Lima", "boss_name"),
        ("Ana is my new manager", "manager_name"),
        ("My old manager was Sarah.", None),
        ("Sarah was my previous manager", None),
        ("My old phone number was 555 0100", None),
        ("My former email address was a@example.com", None),
        ("My new manager is very strict", None),
        ("I raised my trip budget to $3,500.", "trip_budget"),
        ("I've just set my alarm to 6:30", "alarm"),
        ("I lowered my monthly savings goal down to 300 euros", "monthly_savings_goal"),
        ("I moved my accounts from Chase to Ally.", None),
        ("I moved my car to the garage", None),
        ("We relocated to Austin in March.", "home"),
        ("Our family moved to Vancouver last spring.", "home"),
        ("My family moved to Spain.", None),
        ("My number changed to 555-0199.", "phone"),
        ("I'm a teacher now.", "occupation"),
        ("I'm a morning person", None),
        ("Rust is my favorite programming language these days.", "favorite_programming_language"),
        ("We just had our third child, so I have three kids now.", "number_of_children"),
        ("Please call me Elizabeth from now on.", "name"),
        ("I go by Liz.", "name"),
        ("I raised my hand to ask a question.", None),
        ("Ann: I went to the museum, and I live in Paris now", None),
        ("My car insurance is with Allianz.", "car_insurance"),
        ("I switched my car insurance to AXA.", "car_insurance"),
        ("I changed the wifi password to correcthorse.", "wifi_password"),
        ("I changed dentists, now I see Dr. Gomez.", "dentist_name"),
        ("I switched banks last year", "any_bank"),
        ("I changed jobs in May", "employer"),
        ("I changed my mind", None),
        ("I take the bus to work.", "commute"),
        ("These days I cycle to the office", "commute"),
        ("I walk my dog to the park", None),
        ("Alex and I divorced last year.", "relationship_status"),
        ("We got divorced", "relationship_status"),
        ("My sister and I split the bill", None),
        ("I just had my 35th birthday", "age"),
        ("You can reach me at ana@new.example now", "email"),
        ("We just welcomed our third baby", "number_of_children"),
        ("I report to Tom now.", "manager_name"),
        ("I report to the board", None),
        ("I switched my phone to silent mode.", None),
        ("I set my phone to vibrate", None),
        ("I've been living in Munich since March", "home"),
        ("I met Tom at lunch. I work at Initech.", "employer"),
        ("Just turned 35.", "age"),
        ("Just had my 42nd!", "age"),
        ("I'm in my late thirties now", "age"),
        ("I'm in my element", None),
        ("Been at Monzo since the spring", "employer"),
        ("I've been at the gym since January", None),
        ("I've been at Heathrow since 6am", None),
        ("Home is Denver now.", "home"),
        ("Home is a mess right now", None),
        ("York is our home now", "home"),
        ("We moved last spring.", "home"),
        ("We moved the meeting to Friday.", None),
        ("Ted left early.", None),
        ("Fiona retired, Graham's my boss now.", "boss_name"),
        ("Tom manages me now", "manager_name"),
        ("Tom manages my portfolio", None),
        ("I work from home most days.", "work_location"),
        ("I work from home on Fridays.", None),
        ("I'm back in the office every day now", "work_location"),
        ("I'm in the office today", None),
        ("I bank with HSBC.", "bank"),
        ("Moved my account over to Starling.", "bank"),
        ("I'm 74 kg now.", "weight"),
        ("I get about 7 hours of sleep now.", "sleep_hour_per_night"),
        ("I get 9 hours of sleep on weekends.", None),
        ("I eat eggs again, so vegetarian now.", "diet"),
        ("Started at Revolut last month.", "employer"),
        ("I retrained as a UX researcher.", "occupation"),
        ("My new doctor is Dr. Osei.", "doctor_name"),
        ("My doctor is worried about me.", None),
        ("We bought a place in Portobello.", "home"),
        ("I'm a smoker.", "smoking"),
        ("I'm on days now.", "shift"),
    ],
)
def test_slots_are_read_from_statements_about_oneself(text: str, slot: str | None) -> None:
    assert infer_slot(text) == slot


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("My favourite colour is blue", "Actually my favorite color is green"),
        ("I work at Globex", "I just started a new job at Initech"),
        ("My dog is called Rex", "My dog's name is Max"),
        ("My email is a@example.com", "My new email address is b@example.org"),
        ("I'm 34 years old", "I turned 35 yesterday"),
        ("My manager is Sarah", "Tom is my manager now"),
        ("I have two kids", "I have three children"),
        ("I live in Berlin", "I'm based in Lyon these days"),
        ("I am vegetarian", "I eat meat now"),
        ("I'm on a keto diet", "I've gone vegan"),
        ("I'm single", "I got married in June"),
        ("I drive an electric car", "I sold my car"),
        ("I work as a nurse", "I retired last year"),
        ("I work at Globex", "I was laid off last week"),
        ("Carol lives in Lisbon.", "Carol moved to Berlin and lives there now."),
        ("The user works at Globex as an analyst.", "The user now works at Initech."),
        ("Kim's favourite colour is blue.", "Kim's favorite color is now green."),
        ("Bob takes his coffee black.", "Bob now takes his coffee with oat milk."),
        ("I prefer email for updates", "These days I prefer Slack for updates"),
        ("I drink tea in the morning", "I now drink coffee in the morning instead"),
        ("My daughter is 7 years old.", "My daughter just turned 8."),
        ("I drive a Honda Civic", "I now drive a Rivian"),
        ("I drive a Toyota Corolla.", "I sold my Corolla and bought a Tesla."),
        ("I drive a Honda Civic.", "I traded in my Civic for a Mazda 3."),
        ("My broker is Vanguard.", "I switched from Vanguard to Fidelity last year."),
        ("I use Slack at work.", "We moved from Slack to Teams."),
        ("I use an iPhone.", "I replaced my iPhone with a Pixel."),
        ("My preferred charting tool is Excel.", "I chart in Python now instead of Excel."),
        ("I take my coffee with milk", "From now on I take my coffee black"),
        ("I bank with Chase.", "I moved my accounts from Chase to Ally."),
        ("My main brokerage is Schwab.", "I transferred everything from Schwab to Fidelity."),
        ("I'm 29 years old", "I'm 30 now"),
        ("I walk to the office", "Going forward, I walk to the office with Ana"),
        ("I want my reports as PDF", "I'd rather get reports as HTML from now on"),
        ("I prefer tea in the morning", "These days I'd rather have coffee in the morning"),
        ("I commute by bus", "These days I commute by bike"),
        ("I shop at Lidl.", "Nowadays I shop at Aldi."),
        ("I work from home.", "I now work from the office in Leeds."),
        ("My manager is Sarah.", "My new manager is Tom."),
        ("My phone number is 555 0100", "My new phone number is 555 0199"),
        ("My budget for the trip is $2,000.", "I raised my trip budget to $3,500."),
        ("I've set my alarm to 6:30", "I changed my alarm to 7:15"),
        ("I live in Chicago.", "We relocated to Austin in March."),
        ("My phone number is 555-0100.", "My number changed to 555-0199."),
        ("I work as a nurse.", "I'm a teacher now."),
        ("My favorite programming language is Python.",
         "Rust is my favorite programming language these days."),
        ("I have two kids.", "We just had our third child, so I have three kids now."),
        ("I go by Liz.", "Please call me Elizabeth from now on."),
        ("I drink coffee every morning.", "I gave up coffee, I drink tea in the mornings now."),
        ("I'm in the marketing team.", "I'm in the sales team now."),
        ("I work at Deloitte.", "I left Deloitte and joined KPMG."),
        ("I use Netflix.", "I quit Netflix for Disney+."),
        ("I have two cats.", "We adopted another cat, so now I have three cats."),
        ("I own 2 bikes.", "I own 3 bikes now."),
        ("My risk tolerance is low.", "I'm comfortable with high risk now."),
        ("I'm risk-averse.", "These days I'm happy to take big risks."),
        ("My risk tolerance is moderate.", "Actually, I'm quite risk-averse."),
        ("I'm a cautious investor.", "I've become an aggressive investor."),
        ("My risk appetite is low.", "My risk tolerance is high now."),
        ("I use an Android phone.", "I switched to an iPhone."),
        ("I use Windows on my laptop.", "I switched to Linux last month."),
        ("My browser is Chrome.", "I've moved over to Firefox."),
        ("I use Spotify for music.", "I switched to Apple Music."),
        ("I keep my passwords in LastPass.", "I've moved over to Bitwarden."),
        ("I write code in Vim.", "I switched to VS Code last month."),
        ("We use Skype for calls.", "We switched to Zoom."),
        ("I use an Android phone.", "I switched to an iPhone 15 Pro."),
        ("I use a Samsung Galaxy S21.", "I upgraded my phone to a Pixel 8."),
        ("I run 10k a week.", "I'm now running 30k a week."),
        ("I sleep about 6 hours a night.", "I'm sleeping 8 hours a night now."),
        ("I read 2 books a month.", "I now read 4 books a month."),
        ("My budget for the trip is 2000 euros.", "My trip budget went up to 3000 euros."),
        ("My rent is 1200 a month.", "My rent has gone up to 1350 a month."),
        ("My commute is 40 minutes.", "My commute went down to 15 minutes."),
        ("My phone is an iPhone 12.", "I upgraded my phone to an iPhone 15."),
        ("I'm learning Spanish.", "I gave up Spanish and now I'm learning Italian."),
        ("My gym is Fitness First.", "I cancelled Fitness First and joined PureGym."),
        ("I use Windows at home.", "I switched to Linux at home."),
        ("I use a Mac at work.", "At work, I've moved over to Linux."),
        ("I work as a nurse.", "I quit nursing and became a teacher."),
        ("I smoke a pack a day.", "I quit smoking and took up running."),
        ("My dentist is Dr. Patel.", "I changed dentists, now I see Dr. Gomez."),
        ("My bank is Barclays.", "I switched banks and now use Monzo."),
        ("My car insurance is with Allianz.", "I moved my car insurance to AXA."),
        ("My wifi password is hunter2.", "I changed the wifi password to correcthorse."),
        ("I'm married to Alex.", "Alex and I divorced last year."),
        ("I'm single.", "Sam and I got married in May."),
        ("I take the bus to work.", "I bike to work now."),
        ("I commute by train.", "These days I drive to the office."),
        ("I drink 3 coffees a day.", "I'm down to 1 coffee a day."),
        ("I run 20k a week.", "I'm up to 35k a week now."),
        ("I'm a Python developer.", "I mostly write Rust now, not Python."),
        ("I'm allergic to cats.", "Turns out I'm not allergic to cats after all."),
        ("I drive a Toyota Corolla.", "I sold my Corolla and became a cyclist."),
        ("My therapist is Dr. Lee.", "I stopped seeing Dr. Lee, I see Dr. Kaur now."),
        ("My streaming service is Netflix.", "I dropped Netflix for Hulu."),
        ("I have a golden retriever named Max.", "Max passed away last week."),
        ("We have a cat called Kiwi.", "Our cat Kiwi died in August."),
        ("I'm 34.", "I just had my 35th birthday."),
        ("I use Android.", "I'm on iPhone now."),
        ("We use Skype for calls.", "These days we're on Zoom."),
        ("My email is ana@old.example.", "You can reach me at ana@new.example now."),
        ("I have two kids.", "We just welcomed our third baby."),
        ("My manager is Sarah.", "Sarah left, and now I report to Tom."),
        ("I live in Berlin.", "I've been living in Munich since March."),
        ("I live in Denver.", "We packed up and moved to Austin."),
        ("I work at Tesco.", "I handed in my notice at Tesco."),
        ("I'm a sous chef.", "I got promoted to head chef."),
        ("My landlord is Mr. Chen.", "We have a new landlord, Mrs. Okafor."),
        ("My mobile carrier is Verizon.", "I switched carriers to T-Mobile."),
        ("My favourite tea is earl grey.", "My favourite tea these days is jasmine."),
        ("I'm learning the violin.", "I gave up the violin, too hard."),
        ("I drink coffee every morning.", "I've switched to green tea in the mornings."),
        ("I take whole milk in my coffee.", "I switched to oat milk."),
        ("User plays the violin.", "User gave up the violin and took up the cello."),
        ("User drives a Toyota Corolla.", "User sold their Corolla and bought a Tesla."),
        ("User uses an Android phone.", "User switched to an iPhone."),
        ("User holds 200 shares of AMD.", "User sold their AMD shares and bought NVDA."),
        ("The user takes the bus to work.", "The user now cycles to work."),
        ("I work at Google.", "I've been at Meta since January."),
        ("I work at Initech.", "Left Initech in May, I'm at Globex now."),
        ("I live in Austin.", "Home is Denver now."),
        ("I live in Leeds.", "York is our home now."),
        ("I live in Porto.", "We moved last spring."),
        ("I'm 29.", "I'm in my thirties now."),
        ("I'm 41.", "Just had my 42nd!"),
        ("I'm 33.", "Just turned 34."),
        ("My manager is Ines.", "Ines retired, Omar's my boss now."),
        ("My manager is Priya.", "Priya left, so Tom manages me now."),
        ("I work remotely.", "I'm back in the office every day now."),
        ("I bank with HSBC.", "Moved my account over to Starling."),
        ("I weigh 80 kg.", "I'm 74 kg now."),
        ("I sleep 5 hours a night.", "I get about 7 hours of sleep now."),
        ("I'm vegan.", "I eat eggs again, so vegetarian now."),
        ("I drink a lot of Coke.", "I'm off the Coke, cutting sugar."),
        ("I'm training for a 10k.", "I'm training for a marathon now."),
        ("My partner is called Sam.", "Sam and I broke up; I'm seeing Alex now."),
        ("My boyfriend is Luca.", "I broke up with Luca in May."),
        ("I'm engaged to Noor.", "Noor and I called it off."),
        ("I go running every morning.", "I don't run anymore because of my knee."),
        ("I cycle to the gym on Mondays.", "I haven't cycled since the accident."),
        ("I'm reading Middlemarch.", "I finished Middlemarch and started Emma."),
        ("I'm studying at MIT.", "I graduated from MIT last spring."),
        ("I go climbing on Tuesdays.", "I now go climbing on Thursdays."),
        ("I work at Lloyds.", "Started at Monzo in May."),
        ("I'm 60.", "I hit 61 on Sunday."),
        ("My fiance is Robin.", "Robin and I aren't together anymore."),
        ("I'm a chef.", "I retrained as a electrician."),
        ("My GP is Dr. Reid.", "My new doctor is Dr. Bashir."),
        ("I have a cat called Pixel.", "We lost Pixel last week."),
        ("I use Hulu.", "Cancelled Hulu, it's all Netflix now."),
        ("I'm doing a PhD at Durham.", "Finished my PhD at Durham in July."),
        ("My commute is an hour by train.", "I don't commute at all now."),
        ("I do yoga on Tuesdays.", "Yoga's moved to Thursdays."),
        ("I'm learning Greek.", "I've stopped the Greek lessons."),
        ("My salary is 40k.", "I'm on 46k now."),
        ("I rent a flat in Hove.", "We bought a place in Lewes."),
        ("My mentor is Ada.", "Ada left, Raj mentors me now."),
        ("I work nights.", "I'm on days now."),
        ("I'm a smoker.", "I've been smoke-free since March."),
        ("I drive a Polo.", "The Polo's gone, I've got a Yaris now."),
        ("I'm a banker.", "I left banking to become a nurse."),
        ("I have a budgie called Kiwi.", "Kiwi passed last month."),
        ("I use Outlook.", "Moved everything over to Gmail."),
        ("I play netball on Sundays.", "Netball's on Mondays now."),
        ("My rent is 900.", "Rent's gone up to 975."),
        ("I live with my parents.", "Finally got my own place!"),
        ("I work part-time.", "I'm full-time now."),
        ("I'm vegetarian.", "I've gone fully vegan."),
        ("My partner's name is Tom.", "My partner is Sam these days."),
        ("My budget for the trip is 2000 euros.", "The trip budget is now 3500 euros."),
        ("I live with two flatmates.", "I live on my own now."),
        ("I work from the Leeds office.", "I'm fully remote now."),
        ("I'm a junior developer at Acme.", "I got promoted to senior developer at Acme."),
        ("I sleep about six hours a night.", "I'm getting eight hours of sleep a night now."),
        ("I play five-a-side on Thursdays.", "Five-a-side has moved to Tuesdays."),
        ("I'm based in Manchester.", "I moved down to Bristol in the autumn."),
        ("I'm a teacher.", "I left teaching and I'm a data analyst now."),
        ("My coffee order is a flat white.", "My usual coffee order these days is an oat latte."),
        ("My head of department is Mrs. Evans.", "Mrs. Evans retired, Mr. Price is head of department now."),  # noqa: E501
        ("My line manager is Ola.", "Ben is the manager now."),
        ("My daughter Emma is 5.", "Emma turned 6 last week."),
        ("We have a son, Dylan, who is 6.", "Dylan turned 7 last week."),
        ("Dylan is 6 now.", "My son Dylan just turned 7."),
        ("I prefer reports in PDF", "From now on please send my reports as Markdown"),
        ("I prefer short summaries", "Give me detailed reports instead of short summaries"),
        ("Show prices in US dollars", "Switch my currency to euros"),
        ("Show prices in US dollars", "Use EUR for reports from now on"),
        ("Alert me when a stock drops 5%", "Only alert me on drops of 10% or more from now on"),
        ("I invest mainly in tech stocks", "I've moved most of my portfolio into bonds"),
        ("My investment horizon is 5 years", "I'm now looking at a 10-year horizon"),
        ("My target allocation is 60/40 stocks and bonds", "I've rebalanced to 80/20"),
        ("My broker is Fidelity", "I moved my ISA to Vanguard"),
        ("I wake up at 6am", "These days I get up at 7:30"),
        ("My daughter goes to Oakwood Primary", "My daughter started at Riverside Secondary in September"),  # noqa: E501
        ("I'm based in the London office", "I transferred to the Manchester office"),
        ("I'm in the marketing team", "I've moved to the product team"),
        ("I check the markets every morning", "I only check the markets on Fridays now"),
        ("My phone number is 555-0100", "New number: 555-0199"),
        ("My weekly grocery budget is £80", "We've had to cut our grocery spend to £60 a week"),
        ("I'm saving 500 a month", "I've increased my monthly savings to 700"),
        ("I'm on a keto diet", "I've come off keto"),
        ("I take the 7:45 train", "I get the 8:15 train now"),
        ("My piano teacher is Mrs. Hale", "My new piano teacher is Mr. Osei"),
        ("I'm on the basic Spotify plan", "I upgraded to Spotify Premium"),
        ("My son's football is on Saturdays", "My son's football moved to Sundays"),
        ("I'm renting in Brixton", "We bought a flat in Peckham"),
        ("I take my coffee black", "I've started taking milk in my coffee"),
        ("My monthly rent is 1200", "Our landlord put the rent up to 1350"),
        ("My favourite sector is tech", "Healthcare has become my favourite sector"),
        ("My cholesterol is 6.2", "My latest cholesterol reading was 5.1"),
        ("I bank with Barclays", "All my banking is with Monzo now"),
        ("My biggest holding is Apple", "Microsoft is now my biggest holding"),
        ("My wife's name is Anna", "Anna and I divorced last year"),
        ("My salary is 50k", "I got a raise, I now make 58k"),
        ("My salary is 50k", "I now earn 58k"),
        ("I earn 50k a year", "My salary is now 60k"),
        ("I'm paid $4,000 a month", "I now take home $4,400 a month"),
    ],
)  # fmt: skip
def test_a_paraphrased_new_value_supersedes_the_old(
    store: LongTermStore, old: str, new: str
) -> None:
    first = store.remember(ME, old)
    second = store.remember(ME, new)
    assert second.action == "updated", second.reason
    assert first.record is not None and second.record is not None
    assert second.record.key == first.record.key
    assert [r.text for r in store.history(ME, first.record.key)] == [old, new]


@pytest.mark.parametrize(
    "chain",
    [
        ("My risk tolerance is conservative.", "I now have a high risk tolerance.",
         "My risk tolerance is moderate."),
        ("I live in Paris.", "We moved from Paris to Berlin.", "I moved to Munich."),
        ("I drive a Toyota Corolla.", "I sold my Corolla and bought a Tesla.",
         "I now drive a Rivian."),
        ("I use Slack at work.", "We moved from Slack to Teams.",
         "We switched from Teams to Zoom Chat."),
        ("I drive a Toyota Corolla.", "I sold my Corolla and bought a Tesla.",
         "I sold my Tesla and got a Vespa."),
    ],
)  # fmt: skip
def test_a_new_value_that_names_no_slot_keeps_the_attributes_slot(
    store: LongTermStore, chain: tuple[str, str, str]
) -> None:
    """The second statement names no slot of its own; the third, which does, still
    supersedes it: one current value, three versions in the history."""
    results = [store.remember(ME, text) for text in chain]
    assert [r.action for r in results] == ["added", "updated", "updated"]
    assert {r.record.key for r in results if r.record} == {results[0].record.key}
    current = store.records(ME, limit=10)
    assert [r.text for r in current] == [chain[2]]
    assert [r.text for r in store.history(ME, current[0].key)] == list(chain)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("I like jazz", "I also like rock"),
        ("My sister lives in Rome", "My brother lives in Oslo"),
        ("My manager is strict", "My manager is Sarah"),
        ("My manager is Sarah", "My manager is strict"),
        ("My dog is called Rex", "My dog is sleeping"),
        ("Ann is my sister", "Bea is my sister"),
        ("My favourite colour is blue", "My favourite food is pasta"),
        ("I live in Berlin", "I work from home on Fridays"),
        ("My email is a@example.com", "I check my email every morning"),
        ("I'm 34 years old", "I don't like to talk about my age"),
        ("My phone number is 555 0100", "I lost my phone yesterday"),
        ("My risk tolerance is low", "I read a paper on risk tolerance"),
        ("I am vegetarian", "I eat meatballs on Sundays"),
        ("I'm married", "I'm engaged in a long project"),
        ("I drive an electric car", "I own a bakery"),
        ("I live in Oslo", "Tom lives in Paris"),
        ("I like jazz", "I now like rock"),
        ("I like jazz", "I now also like jazz fusion"),
        ("I use Windows at work", "Now I use a Mac at home"),
        ("I play tennis with Tom", "Tom now plays tennis with Ann"),
        ("Tom lives in Paris", "Ann lives in Paris"),
        ("My dog is 3", "My cat is 5"),
        ("My daughter is learning Python", "My daughter turned 8"),
        ("I visited Paris with Tom last summer.", "We moved from Paris to Berlin."),
        ("My sister lives in Paris.", "We moved from Paris to Berlin."),
        ("I met Tom at Google.", "I switched from Google to Bing for search."),
        ("My broker was Vanguard.", "I switched from Vanguard to Fidelity."),
        ("I drive a Tesla.", "I also drive a Vespa now and then."),
        ("I like Excel.", "Tom sold his Excel course."),
        ("I use Slack at work.", "I sold my old bike and bought a new one."),
        ("I work at Google", "I replaced Google Docs with Notion"),
        ("We moved from Slack to Teams.", "I stopped using Slack."),
        ("I sold my Corolla and bought a Tesla.", "I sold my Corolla."),
        (
            "My preferred report format is PDF.",
            "I'd like this report in HTML instead of PDF this time.",
        ),
        ("I use Slack at work.", "We switched from Slack to email for now."),
        ("I use Chrome as my browser.", "My wife switched from Chrome to Safari."),
        ("My brother drives a Ford Focus.", "I sold my Focus."),
        ("I invest in Apple stock.", "I replaced my Apple Watch with a Garmin."),
        ("I go to yoga on Mondays", "I now go to a pottery class"),
        ("I commute by bus", "Tom now commutes by bike"),
        ("I commute by bus", "These days I also commute by bike"),
        ("I want reports as PDF", "I now want a coffee"),
        ("I talk with my mum on Sundays", "I now talk with a therapist weekly"),
        ("My manager is Tom.", "My old manager was Sarah."),
        ("My phone number is 555 0199", "My old phone number was 555 0100"),
        ("My budget for the trip is $2,000.", "I raised my food budget to $300."),
        ("I've set my alarm to 6:30", "I moved my dentist appointment to Friday"),
        ("I raised my hand to ask a question.", "I raised my hand to vote."),
        ("I'm a fan of jazz.", "I'm now a fan of rock."),
        ("I'm a morning person.", "My brother is a night owl now."),
        ("I live in Chicago.", "I lived in Denver before."),
        ("Ann: I live in Rome.", "Ann: I went to the museum, and I live in Paris now."),
        ("I live in Paris.", "I left Paris on Monday for a week in Rome."),
        ("I work at Deloitte.", "I left Deloitte's office at six."),
        ("I have two cats.", "I now also have two dogs."),
        ("I have two cats.", "My sister now has three cats."),
        ("I have two cats.", "I have another cat now."),
        ("My risk tolerance is low.", "My wife has a high risk tolerance."),
        ("My risk tolerance is low.", "I take risks when rock climbing."),
        ("I'm a cautious investor.", "I'm a conservative voter."),
        ("I'm a cautious investor.", "I'm comfortable with public speaking."),
        ("My sister uses Android.", "I switched to an iPhone."),
        ("I use Chrome.", "I switched to an iPhone."),
        ("I use Windows at work.", "I switched to Linux on my home PC."),
        ("I use Spotify for music.", "I also switched to Apple Podcasts."),
        ("My phone is an iPhone 12.", "My phone number is 555-0100."),
        ("I run 10k a week.", "My wife runs 20k a week."),
        ("I run 10k a week.", "I swim 2km a week."),
        ("I read 2 books a month.", "I buy 2 books a month."),
        ("I work 40 hours a week.", "I spend 2 hours a day on email."),
        ("I spend 2 hours a day on email.", "I spend 3 hours a day reading."),
        ("I drink 3 coffees a day.", "I drink 2 litres of water a day."),
        ("My rent is 1200 a month.", "My salary went up to 75k."),
        ("My budget for the trip is 2000 euros.", "My food budget went up to 300 euros."),
        ("I play tennis.", "I gave up Golf."),
        ("I use Google Docs for notes.", "I switched to DuckDuckGo."),
        ("I use Zoom at work.", "I switched to Vim."),
        ("I play the violin.", "My daughter gave up the violin."),
        ("I play the violin.", "I gave up the piano."),
        ("I use Windows at home.", "I switched to Linux at work."),
        ("I use Windows at work.", "I switched to Linux at home."),
        ("I drink 3 coffees a day.", "I'm down to 1 cigarette a day."),
        ("I'm a Python developer.", "I use Rust now, not Go."),
        ("I'm a Python developer.", "I write Rust, not Python, on weekends."),
        ("I take the bus to work.", "My wife bikes to work now."),
        ("I'm married to Alex.", "My sister and I split the bill."),
        ("My car insurance is with Allianz.", "My home insurance is with AXA."),
        ("My dentist is Dr. Patel.", "I changed my mind about the trip."),
        ("I take the bus to work.", "I quit my job yesterday."),
        ("I play the violin.", "I quit it."),
        ("I work at Google.", "I stopped working in finance."),
        ("I use Android.", "I'm on iPhone."),
        ("I use Android.", "I'm on a Zoom call now."),
        ("I go to the gym on Mondays.", "I gave up yesterday."),
        ("I carpool with Sam.", "I dropped Sam off at school."),
        ("I shop at Costco.", "I stopped at Costco on the way home."),
        ("I work at Google.", "I stopped working late."),
        ("I take the bus to work.", "I gave up my seat on the bus."),
        ("My dentist is Dr. Patel.", "I cancelled my dentist appointment."),
        ("I meet Tom every Monday.", "I cancelled the meeting with Tom."),
        ("I'm married to Alex.", "Alex passed the exam."),
        ("My colleague is Ann.", "I have a new colleague, Tom."),
        ("I take the train to work.", "I changed trains in Paris."),
        ("My favourite cafe is Green Bean.", "I found a new cafe, Blue Door."),
        ("My favourite hobby is chess.", "I have a new hobby, pottery."),
        ("My biggest client is Acme.", "I have a new client, Initech."),
        ("My phone is an iPhone 12.", "I got a new phone number."),
        ("My phone number is 555 0100.", "I got a new phone."),
        ("I take the train to work on Mondays.", "I cycle to the office on Thursdays."),
        ("I take the bus to work.", "I cycle to work when it's sunny."),
        ("I drink coffee every morning.", "I switched to herbal tea in the evenings."),
        ("I drink green tea.", "I switched to a standing desk."),
        ("User uses an Android phone.", "Tom switched to an iPhone."),
        ("User plays the violin.", "Tom gave up the violin."),
        ("My favourite singer is Prince.", "Prince died in 2016."),
        ("I love Elvis.", "Elvis died in 1977."),
        ("My son Leo is 7.", "Our cat Kiwi died."),
        ("I work in London.", "I now live in Paris, not London."),
        ("I work in London.", "These days I live in Paris instead of London."),
        ("I drive to London every Friday.", "I moved from London to Paris."),
        ("I work at Google.", "I've been at the gym since January."),
        ("I work at Google.", "I left Google Maps open on my phone."),
        ("I work at Google.", "I left Google at noon."),
        ("I work for Shopify.", "My wife left Shopify."),
        ("I live in Austin.", "Home is a mess right now."),
        ("I live in Austin.", "Home is where my family is."),
        ("I live in Leeds.", "Dad's home now."),
        ("My husband is Tom.", "Tom and I split the bill."),
        ("My wife is Ana.", "Ana and I separated the recycling."),
        ("I work at UCL.", "I graduated from UCL in 2015."),
        ("I use Python at work.", "I finished the Python course and started Go."),
        ("I work late on Tuesday.", "I'm off Tuesday."),
        ("I go running every morning.", "I don't run on Sundays."),
        ("I see Tom every week.", "I haven't seen Tom since Monday."),
        ("I play tennis on weekends.", "I also play squash now."),
        ("My manager is Priya.", "Tom manages my portfolio."),
        ("I work from home.", "I work from the office when it snows."),
        ("I'm 34.", "My brother is in his forties now."),
        ("I weigh 80 kg.", "My suitcase is 23 kg."),
        ("I'm training for a 10k.", "My sister is training for a marathon now."),
        ("I'm saving for a flat.", "I'm now also saving for a car."),
        ("I'm saving for a trip to Japan.", "I'm reading a book about Japan now."),
        ("I drink four coffees a day.", "I now have a coffee machine at work."),
        ("I work at Google.", "I use Google Docs instead of Word now."),
        ("I run 20k a week.", "I now run with a club on Tuesdays."),
        ("I cook Italian food on weekends.", "I'm now into Thai food."),
        ("I own a house in Leeds.", "I sold the house on Elm Street for a client."),
        ("I work at Lloyds.", "My son started at Monzo in May."),
        ("I'm 60.", "I hit 100 followers on Sunday."),
        ("My fiance is Robin.", "Robin and I aren't together on this."),
        ("I have a cat called Pixel.", "I lost Pixel at the park for an hour."),
        ("I'm learning Greek.", "I've stopped the Spanish lessons."),
        ("My commute is an hour by train.", "I don't commute on Fridays."),
        ("I do yoga on Tuesdays.", "My sister's yoga moved to Thursdays."),
        ("My salary is 40k.", "I'm on 5mg of it now."),
        ("I work nights.", "I work days on weekends."),
        ("I have a budgie called Kiwi.", "I passed in June, first time!"),
        ("My brother is Ian and I live in York.", "I passed last week."),
        ("I drive a Polo.", "The Polo is gone too, sadly."),
        ("I play netball on Sundays.", "Netball is on TV now."),
        ("I work part-time.", "I work full-time on Fridays."),
        ("I live with my parents.", "I live in York."),
        ("I'm a developer at Acme.", "I'm a tutor at the weekend."),
        ("My budget for the trip is 2000 euros.", "My budget for food is 300 euros."),
        ("My rent is 900.", "The kitchen is now painted blue."),
        ("I live in York.", "Netball has moved to Tuesdays."),
        ("I'm a teacher.", "My wife is a data analyst."),
        ("I'm based in Manchester.", "I'm in Bristol for the weekend."),
        ("My manager is Priya.", "Dan is Priya's manager."),
        ("My favourite opera is Tosca.", "Carmen is the favourite now."),
        ("My project is a mobile app.", "The project is now finished."),
        ("My flight is at 9.", "My flight is now delayed."),
        ("My son is 6.", "Emma turned 6 last week."),
        ("My daughter Emma is 5.", "My niece Emma turned 6."),
        ("My daughter Emma is 5.", "Emma's friend Lily turned 6."),
        ("I prefer reports in PDF", "Send me the latest report now"),
        ("I prefer short summaries", "Give me a short summary of the Tesla news now"),
        ("I want figures in euros", "I want to lose 10 pounds this year"),
        ("Show prices in US dollars", "I paid 40 euros for the concert tickets"),
        ("Show prices in US dollars", "I want to convert 500 dollars to euros for my trip"),
        ("My daughter goes to Oakwood Primary", "My niece started at Riverside Secondary"),
        ("My daughter goes to Oakwood Primary", "My son started at Riverside Secondary"),
        ("My son goes to Hillside School", "My son is in the school choir now"),
        ("I invest mainly in tech stocks", "I moved some of my savings into bonds"),
        ("I invest mainly in tech stocks", "I also invest in gold now"),
        ("I invest mainly in index funds", "My wife invests mainly in property"),
        ("I wake up at 6am", "I wake up at 8 on Saturdays"),
        ("I live in Croydon", "I'm based in the London office now"),
        ("I'm based in the London office", "I'm visiting the Manchester office this week"),
        ("My trip budget is 3000", "I now have a 500 budget for the kitchen"),
        ("My investment horizon is 5 years", "I now have a 3-year plan for my career"),
        ("I go to the gym on Mondays", "I've started going to yoga on Mondays"),
        ("I take vitamin D every morning", "I've started taking fish oil every morning"),
        ("I use Google Docs", "I upgraded to Google One storage"),
        ("I'm on the basic Spotify plan", "My wife upgraded to Spotify Premium"),
        ("I'm saving 500 a month", "I earn 3000 a month"),
        ("I'm saving 500 a month", "I'm spending 300 a month on groceries now"),
        ("I do yoga on Tuesdays", "My wife's yoga moved to Thursdays"),
        ("My son's football is on Saturdays", "My daughter's swimming moved to Sundays"),
        ("My piano teacher is Mrs. Hale", "My son's piano teacher is Mr. Osei"),
        ("I'm in the marketing team", "My manager is in the product team"),
        ("Alert me when a stock drops 5%", "Alert me when Apple reports earnings"),
        ("I take the 7:45 train", "I took the 8:15 train today because I overslept"),
        ("My rent is 1200 a month", "My rent is now due on the 1st"),
        ("I take metformin every day", "I now take vitamin D every day"),
        ("I read the FT every morning", "I now read The Economist every weekend"),
        ("My car is a blue Golf", "My neighbour's car is now a red Golf"),
        ("My laptop is a MacBook Air", "My work laptop is now a ThinkPad"),
        ("My cholesterol is 6.2", "My father's cholesterol reading was 5.1"),
        ("My biggest holding is Apple", "My smallest holding is Ford now"),
        ("My salary is 50k", "I make 3 trips a year"),
        ("My salary is 50k", "I make dinner at 7 now"),
        ("My salary is 50k", "My wife now earns 58k"),
        ("My salary is 50k", "I now make 20 dollars in tips on a good night"),
        ("I run 5k every morning", "I now earn 50k a year"),
    ],
)
def test_different_things_are_not_superseded(store: LongTermStore, one: str, other: str) -> None:
    store.remember(ME, one)
    assert store.remember(ME, other).action == "added"


@pytest.mark.parametrize(
    ("old", "retraction"),
    [
        ("I live in Berlin", "I no longer live in Berlin"),
        ("I work at Globex", "I don't work at Globex anymore"),
        ("I work at Globex", "I quit my job"),
        ("I'm allergic to cats.", "I'm no longer allergic to cats."),
        ("I eat meat", "I stopped eating meat"),
        ("I take sugar in my coffee", "I no longer take sugar in my coffee"),
        ("I use Dropbox for backups.", "I stopped using Dropbox."),
        ("I drive a Toyota Corolla.", "I sold my Corolla."),
        ("I drink coffee every morning.", "I stopped drinking coffee."),
        ("I go to the gym on Mondays.", "I stopped going to the gym."),
        ("I play the violin.", "I gave up the violin."),
        ("I smoke a pack a day.", "I quit smoking last month."),
        ("My gym is Fitness First.", "I cancelled Fitness First."),
        ("My therapist is Dr. Lee.", "I stopped seeing Dr. Lee."),
        ("I'm on a low-carb diet.", "I'm not on a diet anymore."),
        ("I scroll Facebook every evening.", "I quit Facebook last month."),
        ("I work in finance.", "I stopped working in finance in May."),
        ("I drink a lot of cola.", "I've cut cola out completely."),
    ],
)
def test_a_retraction_in_the_relations_own_form_ends_it(
    store: LongTermStore, old: str, retraction: str
) -> None:
    store.remember(ME, old)
    assert store.remember(ME, retraction).action == "deleted"
    assert store.recall(ME, old, k=5) == []


def test_the_result_says_which_thing_was_given_up(store: LongTermStore) -> None:
    store.remember(ME, "I go to the gym on Mondays.")
    store.remember(ME, "I work as a nurse.")
    gone = store.remember(ME, "I stopped going to the gym last month.")
    assert (gone.action, gone.reason) == ("deleted", "says 'going to the gym' is gone")
    changed = store.remember(ME, "I quit nursing and became a teacher.")
    assert (changed.action, changed.reason) == ("updated", "replaces 'nursing'")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I live in Berlin.", "I no longer live in Berlin, I live in Munich now."),
        ("I live in Berlin.", "I don't live in Berlin anymore; we moved to Munich."),
        ("I drive a Toyota Corolla.", "I sold my Corolla and now I cycle to work."),
        ("I'm learning Spanish.", "I gave up Spanish and now I'm learning Italian."),
        ("I drink coffee every morning.", "I stopped drinking coffee, now I drink tea."),
        ("I work at Globex.", "I don't work at Globex anymore, I'm freelancing."),
    ],
)
def test_a_retraction_that_says_more_keeps_what_it_says(
    store: LongTermStore, old: str, new: str
) -> None:
    """A retraction that goes on to say how things are now is an update, not a deletion:
    deleting would lose "I live in Munich now" with "Berlin". The old version stays in
    the history."""
    first = store.remember(ME, old)
    second = store.remember(ME, new)
    assert second.action == "updated", second.reason
    assert [r.text for r in store.records(ME, limit=10)] == [new]
    assert first.record is not None
    assert [r.text for r in store.history(ME, first.record.key)] == [old, new]


def test_a_slot_is_the_same_whichever_side_its_thing_is_written() -> None:
    assert same_slot("budget_for_the_trip", "trip_budget")
    assert same_slot("number_of_children", "number_of_children")
    assert not same_slot("trip_budget", "food_budget")
    assert not same_slot("budget_for_the_trip", "budget")


def test_a_mention_of_a_slot_counts_only_in_a_statement() -> None:
    assert mentions_slot("I now have a high risk tolerance", "risk_tolerance")
    assert not mentions_slot("What is my risk tolerance?", "risk_tolerance")
    assert not mentions_slot("The fund's risk tolerance is low", "risk_tolerance")
    assert mentions_slot("I'd say my risk tolerance is high", "risk_tolerance")
    assert not mentions_slot("I read about risk tolerance", "risk_tolerance")
    assert not mentions_slot("I work from home", "home")  # read by its own forms only


def test_rule_resolver_is_pure() -> None:
    assert RuleResolver().resolve(Fact("hello"), []).action is Action.ADD


def _stored(text: str) -> MemoryRecord:
    now = datetime(2026, 1, 1, tzinfo=UTC)
    return MemoryRecord("id", ("t", "me"), "old", {"text": text}, text, now, now, now)


@pytest.mark.parametrize(
    ("old", "new", "similarity", "action"),
    [
        ("My emergency fund covers 3 months", "My emergency fund now covers 6 months", 0.9, "update"),  # noqa: E501
        ("Send my weekly digest on Mondays", "Move my weekly digest to Fridays", 0.8, "update"),
        ("My emergency fund covers 3 months", "My emergency fund now covers 6 months", 0.6, "add"),
        ("My emergency fund covers 3 months", "My emergency fund covers 6 months", 0.9, "add"),
        ("My credit card limit is 5000", "My wife's credit card limit was raised to 8000", 0.9, "add"),  # noqa: E501
        ("My daughter's best friend is Maya", "My son's best friend is Zoe now", 0.9, "add"),
        ("I walk the dog at 7am", "I walked the dog at 6 today, now I'm tired", 0.9, "add"),
        ("I hold 20 stocks", "I now hold 3 ETFs too", 0.9, "add"),
        ("I live in Leeds", "Do I now live in Leeds?", 0.9, "add"),
        ("My car insurance renews in March", "My home insurance now renews in June", 0.9, "add"),
        ("My laptop is a MacBook Air", "My work laptop is now a ThinkPad", 0.9, "add"),
        ("My book club meets on Wednesdays", "My running club meets on Thursdays now", 0.9, "add"),
        ("I have a cleaner every week", "We have the cleaner every other week now", 0.9, "update"),
        ("I want reports every Friday", "Send reports every Monday instead", 0.9, "update"),
    ],
)  # fmt: skip
def test_a_statement_restated_with_a_word_of_change_replaces_the_most_alike(
    old: str, new: str, similarity: float, action: str
) -> None:
    """Step 5 reads only the words and the cosine it is given: alike enough, a word of
    change, the same people, no "too", no one-off, no question."""
    resolved = RuleResolver().resolve(Fact(new), [Existing(_stored(old), similarity)])
    assert resolved.action == action, resolved.reason
    off = RuleResolver(restated_threshold=1.0).resolve(Fact(new), [Existing(_stored(old), 0.99)])
    assert off.action in ("add", "noop")


def test_a_turn_of_a_conversation_is_never_restated() -> None:
    """What was said in a conversation stays said: neither a stored turn (a value with a
    speaker or session) nor a new labelled one is replaced by the restatement step."""
    said = "My emergency fund covers 3 months"
    turn = dataclasses.replace(_stored(said), value={"text": said, "speaker": "Ann"})
    new = Fact("My emergency fund now covers 6 months")
    assert RuleResolver().resolve(new, [Existing(_stored(said), 0.9)]).action is Action.UPDATE
    assert RuleResolver().resolve(new, [Existing(turn, 0.9)]).action is Action.ADD
    labelled = Fact("Ann: my emergency fund now covers 6 months")
    assert RuleResolver().resolve(labelled, [Existing(_stored(said), 0.9)]).action is Action.ADD


def test_a_restatement_picks_the_most_alike_of_several(
    make_store: StoreFactory, minilm: MiniLMEmbedder
) -> None:
    """With all-MiniLM-L6-v2 cosines, in a memory of several facts: the one restated ends,
    the others stay."""
    store = make_store(embedder=minilm)
    facts = [
        "My emergency fund covers 3 months",
        "I meditate for 10 minutes every morning",
        "My mortgage rate is 4.2%",
        "I read the FT every morning",
    ]
    keys = [r.record.key for r in (store.remember(ME, text) for text in facts) if r.record]
    changed = store.remember(ME, "My emergency fund now covers 6 months")
    assert changed.action == "updated" and changed.record is not None, changed.reason
    assert changed.record.key == keys[0] and "restates" in (changed.reason or "")
    kept = store.remember(ME, "I now read The Economist every weekend")
    assert kept.action == "added", kept.reason
    assert sorted(r.text for r in store.records(ME, limit=10)) == sorted(
        [
            *facts[1:],
            "My emergency fund now covers 6 months",
            "I now read The Economist every weekend",
        ]
    )


def _fake(*replies: str) -> GenericFakeChatModel:
    return GenericFakeChatModel(messages=iter([AIMessage(r) for r in replies]))


def test_llm_resolver_decides_update(make_store: StoreFactory) -> None:
    store = make_store(
        resolver=LLMResolver(_fake('{"action": "update", "target": 0, "reason": "moved"}'))
    )
    first = store.remember(ME, "I work at Acme", key="job")
    assert first.action == "added"  # explicit key: no model call
    second = store.remember(ME, "Now I work at Globex")
    assert second.action == "updated" and second.record is not None
    assert second.record.key == "job" and second.reason == "model: moved"


def test_llm_resolver_never_deletes_what_a_new_fact_says(make_store: StoreFactory) -> None:
    """A model's "delete" of a fact that says more than a retraction keeps it as the new
    version: "I moved to Munich" ends "I live in Berlin" and says where the user lives."""
    delete = '{"action": "delete", "target": 0, "reason": "moved"}'
    store = make_store(resolver=LLMResolver(_fake(delete, delete)))
    store.remember(ME, "I live in Berlin", key="home")
    moved = store.remember(ME, "I moved to Munich")
    assert moved.action == "updated" and moved.record is not None
    assert moved.record.key == "home" and moved.reason == "model: moved (kept as an update)"
    assert store.remember(ME, "I no longer live in Munich").action == "deleted"


def test_llm_resolver_falls_back_on_garbage() -> None:
    from datetime import UTC, datetime

    from engram.stores.cold import MemoryRecord

    now = datetime.now(UTC)
    old = MemoryRecord("id1", ("t", "me"), "k", {"text": "likes jazz"}, "likes jazz", now, now, now)
    resolver = LLMResolver(
        _fake("I think you should add it, maybe?", '{"action": "update", "target": 7}')
    )
    assert resolver.resolve(Fact("likes jazz"), [Existing(old)]).action is Action.NOOP
    assert resolver.resolve(Fact("likes rock"), [Existing(old)]).action is Action.ADD


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("My favourite colour is blue", "My favourite colour is red"),
        ("I live in Berlin", "I moved to Munich"),
        ("I work at Acme", "I now work at Globex"),
        ("I drive a Toyota Corolla", "I sold my Corolla and bought a Tesla"),
        ("I take my coffee black", "I now take my coffee with oat milk"),
        ("I love pizza", "I love pizza"),
    ],
)
def test_one_speaker_never_replaces_what_another_said(
    store: LongTermStore, first: str, second: str
) -> None:
    """Turns of a conversation stored with a ``speaker`` value: "I" and "my" are each
    speaker's own, so Bob's new value (or Bob saying the same words) leaves Ann's as she
    said it; only the same speaker's word changes it."""
    ann = store.remember(ME, first, value={"speaker": "Ann", "session": "S1"})
    bob = store.remember(ME, second, value={"speaker": "Bob", "session": "S1"})
    assert bob.action == "added", bob.reason
    said = {(r.record.value.get("speaker"), r.record.text) for r in store.recall(ME, first, k=10)}
    assert {("Ann", first), ("Bob", second)} <= said
    again = store.remember(ME, second, value={"speaker": "Ann", "session": "S2"})
    assert ann.record is not None and again.record is not None
    assert again.action in ("updated", "noop") or first == second, again.reason
    assert bob.record is not None and bob.record.key != again.record.key


def test_a_speakers_turn_leaves_the_users_own_facts(store: LongTermStore) -> None:
    """A fact remembered with no speaker is the user's; a turn some named speaker said is
    not the user's word about it."""
    mine = store.remember(ME, "I live in Berlin")
    theirs = store.remember(ME, "I moved to Munich", value={"speaker": "Ann"})
    assert mine.record is not None and theirs.action == "added", theirs.reason
    assert store.get(ME, mine.record.key) is not None


def test_a_speakers_own_fact_is_found_among_many_of_anothers(store: LongTermStore) -> None:
    """The facts a turn is compared with are its speaker's, however many alike turns
    another speaker said."""
    ann = store.remember(ME, "I take my coffee black", value={"speaker": "Ann"})
    for n in range(12):
        said = f"I now take my coffee with oat milk, says my friend number {n}"
        store.remember(ME, said, value={"speaker": "Bob"})
    changed = store.remember(ME, "I now take my coffee with oat milk", value={"speaker": "Ann"})
    assert ann.record is not None and changed.record is not None
    assert (changed.action, changed.record.key) == ("updated", ann.record.key), changed.reason


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("My favourite colour is blue", "My favourite colour\u200b is red"),
        ("My favourite colour is blue", "My ｆａｖｏｕｒｉｔｅ colour is red"),
        ("My favourite colour is blue", "My favou\u00adrite colour is red"),
        ("My favourite colour is blue", "My\u2060 favourite colour is red\u202e"),
        ("My favourite\u200b colour is blue", "My favourite colour is red"),
        ("I take my coffee bl\u200back", "I now take my c\u200boffee with oat milk"),
    ],
)
def test_invisible_and_styled_characters_change_nothing_of_the_reading(
    store: LongTermStore, old: str, new: str
) -> None:
    """A zero-width character, a soft hyphen or fullwidth letters in either statement do not
    hide that the new one gives a new value of the old one's attribute."""
    first = store.remember(ME, old)
    second = store.remember(ME, new)
    assert first.record is not None and second.record is not None
    assert (second.action, second.record.key) == ("updated", first.record.key), second.reason
