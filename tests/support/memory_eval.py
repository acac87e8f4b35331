# ruff: noqa: E501 (sample texts and queries read best one to a line)
"""The labelled evaluation set of memory_search: sample sessions and queries.

Three users, each with nine sessions on topics that overlap (work, travel, money,
health...), so that a query has plausible wrong answers in the same user's history.
Each query names the events that answer it (`relevant`):

- `paraphrase`: asked the way an agent would ask, sharing no content word with the
  events that answer it (`shared_content_words` is empty; a unit test holds it);
- `control`: an exact phrase of the answer, where keyword search is at its best.

Event ids are `<user>-<session>-<n>`, n counting from 0 within the session.
"""

import re
from dataclasses import dataclass
from typing import Any, Literal

from session_recall.core.instant import Instant

U, A, T = "user_message", "assistant_message", "tool_call"

# user -> [(session, start, [(type, text), ...])]
# fmt: off
SESSIONS: dict[str, list[tuple[str, str, list[tuple[str, str]]]]] = {
    "alice": [
        ("db", "2026-03-02T09:00:00Z", [
            (U, "We need to choose where the billing service keeps its records before the Friday review."),
            (A, "The candidates so far are MySQL, Postgres and DynamoDB. What matters most: transactions, cost, or operations?"),
            (U, "Transactions matter most, invoices must never be half written."),
            (A, "Then a relational engine fits best; Postgres has strong transactional guarantees."),
            (U, "OK, let's go with Postgres and keep Redis for caching."),
            (A, "Noted. I'll draft the schema for invoices, customers and payments."),
            (U, "Use UUIDs for the primary keys please."),
            (A, "Schema draft attached, with UUID keys on all three tables."),
            (T, "create_doc(title='billing schema v1')"),
            (U, "Thanks, I'll share it with Marco for review."),
        ]),
        ("ci", "2026-03-05T14:00:00Z", [
            (U, "The CI pipeline takes forty minutes now and developers are complaining."),
            (A, "Most of the time goes to the integration stage, which runs the whole suite serially."),
            (U, "Can we split it across machines?"),
            (A, "Yes: sharding the tests over four runners should bring it under twelve minutes."),
            (U, "Do it, and cache the dependency downloads too."),
            (A, "Done. The first sharded run finished in eleven minutes."),
            (U, "The flaky upload test still fails sometimes though."),
            (A, "It depends on a real S3 bucket; I quarantined it and opened ticket INFRA-2291."),
            (U, "Fine, assign it to Priya."),
        ]),
        ("hiring", "2026-03-10T10:00:00Z", [
            (U, "We have headcount for two backend engineers this quarter."),
            (A, "Shall I draft the job posting? Any must-have skills?"),
            (U, "Go and Kubernetes experience; remote within Europe is fine."),
            (A, "Draft ready, salary band 70k to 85k euros as agreed with HR."),
            (U, "Tomás did great in the system design interview."),
            (A, "Shall I schedule his final round with the CTO?"),
            (U, "Yes, next Tuesday afternoon."),
            (A, "Booked for Tuesday at 15:00."),
            (U, "Lena declined our offer, she is joining a startup."),
            (A, "Sorry to hear it. I'll reopen the second position."),
        ]),
        ("offsite", "2026-03-16T11:00:00Z", [
            (U, "Let's plan the team offsite for September."),
            (A, "How many people, and what budget?"),
            (U, "Twelve people, around fifteen thousand euros in total."),
            (A, "Options: Lisbon, Kraków, or a country house near Porto."),
            (U, "We decided on Lisbon, the flights are cheaper."),
            (A, "I found a venue in Alfama with a meeting room for twelve."),
            (U, "Book it for September 14 to 17."),
            (A, "Booked. A deposit of 2,000 euros was paid with the company card."),
            (U, "Add a surf lesson on the second afternoon."),
            (A, "Surf lesson added for the 15th at Carcavelos beach."),
        ]),
        ("incident", "2026-03-19T10:41:00Z", [
            (U, "The checkout API has been returning 502 errors since 10:40."),
            (A, "The load balancer shows the pods restarting in a loop."),
            (U, "What changed?"),
            (A, "A config deploy at 10:35 lowered the memory limit to 256 MB, and the pods get killed for exceeding it."),
            (U, "Roll it back now."),
            (A, "Rolled back at 10:52; errors stopped at 10:54."),
            (U, "Write the postmortem and schedule a review for Thursday."),
            (A, "Postmortem drafted: fourteen minutes of impact."),
            (U, "Add an alert when pods restart more than three times in five minutes."),
            (A, "Alert rule created in Grafana."),
        ]),
        ("api", "2026-03-24T15:00:00Z", [
            (U, "Should the public interface for partners be REST or GraphQL?"),
            (A, "GraphQL gives flexible queries; REST is simpler to cache and widely known."),
            (U, "We'll stick with REST, our partners only know REST."),
            (A, "How should versions be handled?"),
            (U, "Put the version in the URL, /v1/ and so on."),
            (A, "And for long listings, cursors or offsets?"),
            (U, "Cursors, offsets break on big tables."),
            (A, "Any throttling per client?"),
            (U, "Cap each key at 100 requests per minute."),
            (A, "Spec updated with all three decisions."),
        ]),
        ("vacation", "2026-04-01T17:00:00Z", [
            (U, "I'm off from August 3 to August 21, hiking in the Dolomites."),
            (A, "Who covers your on-call shifts?"),
            (U, "Marco takes the first week, Priya the rest."),
            (A, "Out-of-office reply set for those dates."),
            (U, "Remind me to renew my passport before the trip."),
            (A, "Reminder set for June 1."),
            (U, "Also book the hut near Tre Cime for two nights."),
            (A, "Rifugio Locatelli is booked for August 10 and 11."),
        ]),
        ("cloud", "2026-04-07T09:30:00Z", [
            (U, "Our AWS bill went up 30 percent last month."),
            (A, "The biggest increase comes from GPU instances left running after the ML experiments."),
            (U, "Shut them down and add an auto-stop after two hours idle."),
            (A, "Done; the auto-stop policy applies to every GPU instance now."),
            (U, "Also move logs older than 90 days to Glacier."),
            (A, "Lifecycle rule added; it should save about 400 dollars a month."),
            (U, "Send me a weekly spend report every Monday."),
            (A, "Scheduled: a spend report each Monday at 8:00."),
        ]),
        ("people", "2026-04-14T13:00:00Z", [
            (U, "Marco asked to be promoted to senior engineer."),
            (A, "His review scores support it. Shall I prepare the case for the committee?"),
            (U, "Yes, and mention the payments migration he led."),
            (A, "Case drafted, highlighting the migration and his mentoring of Priya."),
            (U, "My laptop keyboard is broken, order a replacement ThinkPad."),
            (A, "Ordered a ThinkPad X1 Carbon; delivery on Thursday."),
            (U, "Priya wants to switch to the platform team next quarter."),
            (A, "I'll raise it with the platform lead."),
        ]),
    ],
    "bob": [
        ("dog", "2026-03-03T08:00:00Z", [
            (U, "Biscuit has been vomiting since yesterday and won't eat."),
            (A, "That can have many causes. Can you take her to the vet today?"),
            (U, "Booked the vet for 11:00."),
            (U, "The vet says it's gastritis: a bland diet of rice and chicken for a week."),
            (A, "Small portions, four times a day, usually help. Keep water available."),
            (U, "She is eating again and wagging her tail."),
            (A, "Great news. Reintroduce her usual kibble slowly after the week."),
        ]),
        ("kitchen", "2026-03-08T19:00:00Z", [
            (U, "The contractor quoted 18,000 euros to redo the kitchen."),
            (A, "Is that with appliances, or only cabinets and work?"),
            (U, "Only cabinets, countertop and labour."),
            (U, "We chose oak cabinets and a white quartz countertop."),
            (A, "Oak with white quartz is a classic match. When do they start?"),
            (U, "Work starts on May 4 and should take three weeks."),
            (A, "I'll remind you to empty the cupboards the weekend before."),
            (U, "Also ask them about moving the sink under the window."),
        ]),
        ("japan", "2026-03-12T21:00:00Z", [
            (U, "Flights to Tokyo are booked for April 2, back on April 16."),
            (A, "Do you want help with the itinerary?"),
            (U, "Yes: Tokyo, then Kyoto, then Osaka."),
            (U, "Reserve a ryokan in Kyoto with a private onsen."),
            (A, "Booked Ryokan Yoshida-sanso for April 7 to 10."),
            (U, "Should I buy a JR pass?"),
            (A, "For Tokyo-Kyoto-Osaka and back, a 14-day JR pass pays off."),
            (U, "OK, buy the 14-day pass."),
        ]),
        ("running", "2026-03-18T07:00:00Z", [
            (U, "I want to run a half marathon in October."),
            (A, "Training plan: three runs a week, with the long run on Sundays."),
            (U, "My knee hurts after long runs."),
            (A, "You should have it checked before adding distance."),
            (U, "The physio says it's the iliotibial band; I must do hip strengthening exercises."),
            (A, "I'll add clamshells and side planks to your Tuesday and Friday sessions."),
            (U, "Registered for the Berlin half marathon on October 11."),
        ]),
        ("taxes", "2026-03-25T20:00:00Z", [
            (U, "My tax return is due on May 31."),
            (A, "Do you have all your documents: payslips, bank interest, donations?"),
            (U, "I worked from home all year, can I deduct that?"),
            (A, "Yes, the home office flat rate: up to 1,260 euros."),
            (U, "Mrs. Keller will do the filing for 300 euros."),
            (A, "I'll send her the documents folder."),
            (U, "The refund came in: 840 euros."),
        ]),
        ("car", "2026-04-02T12:00:00Z", [
            (U, "The car failed its inspection."),
            (A, "What did they flag?"),
            (U, "Worn brake pads at the front."),
            (A, "Shall I find a garage nearby?"),
            (U, "Autohaus Weber replaced the pads and discs for 540 euros."),
            (A, "Book the re-inspection?"),
            (U, "Yes, and it passed this time."),
        ]),
        ("birthday", "2026-04-09T18:00:00Z", [
            (U, "Anna's birthday is on June 12."),
            (A, "Any ideas for a present?"),
            (U, "She loves jazz, especially saxophone."),
            (A, "Kamasi Washington plays the Philharmonie on June 13."),
            (U, "Bought two tickets for that concert."),
            (A, "Shall I reserve dinner before the show?"),
            (U, "Yes, somewhere Italian near the venue."),
            (A, "Table for two at Trattoria Da Enzo at 18:30."),
        ]),
        ("bread", "2026-04-15T10:00:00Z", [
            (U, "I want to start baking sourdough."),
            (A, "You need a starter first: flour and water, fed daily for about a week."),
            (U, "The starter smells like acetone."),
            (A, "It's hungry: feed it twice a day at a 1:1:1 ratio."),
            (U, "First loaf came out dense and flat."),
            (A, "Let it proof longer, and score it deeper before it goes in."),
        ]),
        ("insurance", "2026-04-20T19:00:00Z", [
            (U, "Our home insurance renewal jumped to 520 euros."),
            (A, "Shall I compare other providers with the same cover?"),
            (U, "Yes, same cover, including water damage."),
            (A, "Allianz offers it for 310 euros a year, HUK for 335."),
            (U, "Switch to Allianz."),
            (A, "Done; the old policy ends on May 31."),
        ]),
    ],
    "carol": [
        ("flour", "2026-03-04T06:30:00Z", [
            (U, "Our flour supplier raised prices by 20 percent."),
            (A, "Shall I ask other mills for quotes?"),
            (U, "Yes, organic only."),
            (A, "Müller Mühle quotes 12 percent below the current price, same quality."),
            (U, "We switched to Müller Mühle from April."),
            (A, "I'll cancel the standing order with the old supplier."),
        ]),
        ("shop", "2026-03-09T21:00:00Z", [
            (U, "I want to sell our cakes online."),
            (A, "Shopify is quickest to set up; WooCommerce is cheaper but needs hosting."),
            (U, "Let's use Shopify."),
            (A, "Store created; I imported the catalogue with photos."),
            (U, "Delivery only within 20 km, cakes are fragile."),
            (U, "The new web store went live on Monday."),
            (A, "First week: 64 orders."),
        ]),
        ("staff", "2026-03-13T15:00:00Z", [
            (U, "We need someone for the weekend shifts."),
            (A, "Shall I post the ad on the local job board?"),
            (U, "Hired Jonas as a weekend baker, he starts Saturday."),
            (A, "Contract and onboarding checklist sent to him."),
            (U, "Sofia wants to reduce to four days a week."),
            (A, "Fridays could be covered by Jonas."),
            (U, "Agreed, Sofia is off on Fridays from May."),
        ]),
        ("complaint", "2026-03-20T12:00:00Z", [
            (U, "A customer says order 7731 arrived damaged, the cake was crushed."),
            (A, "Do they have photos?"),
            (U, "Yes, the box was dented on one side."),
            (A, "Refund 45 euros and send a 10 euro voucher?"),
            (U, "Yes, and apologise in my name."),
            (A, "Refund issued, voucher code SORRY10 sent."),
            (U, "From now on use double-walled boxes for tiered cakes."),
        ]),
        ("marketing", "2026-03-26T16:00:00Z", [
            (U, "How did the Instagram ads do?"),
            (A, "300 new followers and 41 orders with the code INSTA5."),
            (U, "Let's send a newsletter every Friday."),
            (A, "Template ready: new bakes, a recipe and the week's offer."),
            (U, "Use the photo of the rhubarb tart for the first issue."),
        ]),
        ("oven", "2026-04-03T05:45:00Z", [
            (U, "The main oven won't heat up this morning."),
            (A, "Is it showing an error code?"),
            (U, "E4 on the display."),
            (A, "E4 usually means a failed heating element."),
            (U, "The technician replaces the element on Monday, 800 euros."),
            (A, "Shall I move tomorrow's bread orders to the small oven?"),
            (U, "Yes, and bake the croissants at the partner bakery."),
        ]),
        ("allergens", "2026-04-08T14:00:00Z", [
            (U, "An inspector reminded us to label allergens on everything."),
            (A, "I'll generate labels listing gluten, nuts, eggs and milk per product."),
            (U, "Print them on the new thermal printer."),
            (U, "We launch a gluten-free line in June."),
            (A, "It needs a separate preparation area to avoid cross-contamination."),
            (U, "We'll use the back room for it."),
        ]),
        ("loan", "2026-04-13T11:00:00Z", [
            (U, "The bank approved a 50,000 euro loan for the second shop."),
            (A, "At what rate?"),
            (U, "4.2 percent over seven years."),
            (A, "That's about 690 euros a month."),
            (U, "The second shop opens in Neustadt in September."),
        ]),
        ("wedding", "2026-04-21T09:00:00Z", [
            (U, "We got a catering request for a wedding on July 20."),
            (A, "How many guests?"),
            (U, "150 guests, with a three-tier cake and a dessert table."),
            (A, "I'd quote 3,200 euros with delivery and setup."),
            (U, "They accepted and paid a 30 percent deposit."),
            (A, "I'll block July 19 and 20 in the production plan."),
        ]),
    ],
}
# fmt: on


Kind = Literal["paraphrase", "control"]


@dataclass(frozen=True)
class Query:
    user: str
    text: str
    kind: Kind
    relevant: tuple[str, ...]


def _q(user: str, kind: Kind, text: str, *relevant: str) -> Query:
    return Query(user, text, kind, tuple(f"{user}-{r}" for r in relevant))


QUERIES: tuple[Query, ...] = (
    # alice
    _q("alice", "paraphrase", "Which storage engine did the team settle on?", "db-4"),
    _q(
        "alice",
        "paraphrase",
        "Why was the build so slow, and how did it get faster?",
        "ci-0",
        "ci-3",
        "ci-5",
    ),
    _q(
        "alice",
        "paraphrase",
        "Which candidate impressed us during the hiring conversations?",
        "hiring-4",
    ),
    _q("alice", "paraphrase", "Which applicant turned down the job?", "hiring-8"),
    _q(
        "alice",
        "paraphrase",
        "What fun activity is planned for the retreat?",
        "offsite-8",
        "offsite-9",
    ),
    _q("alice", "paraphrase", "What caused the outage?", "incident-3"),
    _q("alice", "paraphrase", "How do clients page through long result lists?", "api-6"),
    _q("alice", "paraphrase", "Which travel document needs updating?", "vacation-4"),
    _q(
        "alice",
        "paraphrase",
        "How are we cutting the infrastructure spending?",
        "cloud-2",
        "cloud-4",
    ),
    _q("alice", "paraphrase", "Who is covering for me while I'm away on holiday?", "vacation-2"),
    _q("alice", "control", "memory limit to 256 MB", "incident-3"),
    _q("alice", "control", "INFRA-2291", "ci-7"),
    _q("alice", "control", "Rifugio Locatelli", "vacation-7"),
    _q("alice", "control", "replacement ThinkPad", "people-4"),
    # bob
    _q("bob", "paraphrase", "What did the animal doctor recommend for my pet's stomach?", "dog-3"),
    _q("bob", "paraphrase", "What materials did we pick for the cooking area?", "kitchen-3"),
    _q("bob", "paraphrase", "Where are we sleeping on the trip abroad?", "japan-3", "japan-4"),
    _q("bob", "paraphrase", "What did the therapist say about my leg pain?", "running-4"),
    _q("bob", "paraphrase", "Who prepares my yearly declaration, and at what price?", "taxes-4"),
    _q("bob", "paraphrase", "How much did the vehicle repair cost?", "car-4"),
    _q("bob", "paraphrase", "What present did I get for my girlfriend?", "birthday-4"),
    _q("bob", "paraphrase", "Which company covers our house now?", "insurance-4", "insurance-3"),
    _q("bob", "paraphrase", "Why did my bread turn out heavy?", "bread-4", "bread-5"),
    _q("bob", "paraphrase", "How much money was returned by the tax office?", "taxes-6"),
    _q("bob", "control", "oak cabinets", "kitchen-3"),
    _q("bob", "control", "14-day JR pass", "japan-6"),
    _q("bob", "control", "Berlin half marathon", "running-6"),
    _q("bob", "control", "smells like acetone", "bread-2"),
    # carol
    _q("carol", "paraphrase", "Which mill supplies us now?", "flour-4", "flour-3"),
    _q("carol", "paraphrase", "When did we start selling on the internet?", "shop-5"),
    _q("carol", "paraphrase", "Who did we recruit for the Sunday shifts?", "staff-2"),
    _q("carol", "paraphrase", "Which employee is working fewer hours?", "staff-4", "staff-6"),
    _q(
        "carol",
        "paraphrase",
        "A buyer got a broken product, what happened?",
        "complaint-0",
        "complaint-2",
    ),
    _q("carol", "paraphrase", "How did our social media promotion perform?", "marketing-1"),
    _q("carol", "paraphrase", "What is wrong with the baking equipment?", "oven-3", "oven-0"),
    _q("carol", "paraphrase", "How much are we borrowing to expand?", "loan-0"),
    _q(
        "carol",
        "paraphrase",
        "What is planned for the marriage celebration?",
        "wedding-2",
        "wedding-0",
    ),
    _q("carol", "paraphrase", "When do products for celiac customers come out?", "allergens-3"),
    _q("carol", "control", "order 7731", "complaint-0"),
    _q("carol", "control", "double-walled boxes", "complaint-6"),
    _q("carol", "control", "rhubarb tart", "marketing-4"),
    _q("carol", "control", "thermal printer", "allergens-2"),
)

# Words that carry no topic. A paraphrase may share these with its answer, nothing
# else: not the word, nor one of five letters or more that starts the same way.
_FUNCTION_WORDS = """a about after again all also am an and any are as at be been before being but by
    can could did do does doing for from get got had has have he her here him his how i
    if in into is it its just let me more most my no not now of off on once only or our
    out over she should so some such than that the their them then there these they this
    those through to too up us very was we were what when where which while who whom why
    will with would you your yes ok s t d ll m re ve"""
STOPWORDS = frozenset(_FUNCTION_WORDS.split())
_WORD = re.compile(r"[^\W_]+")


def content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in STOPWORDS}


def shared_content_words(query: str, answer: str) -> set[str]:
    """Words of `query` that `answer` has too, or shares their first five letters with."""
    theirs = content_words(answer)
    shared = set()
    for word in content_words(query):
        for other in theirs:
            if word == other or (min(len(word), len(other)) >= 5 and word[:5] == other[:5]):
                shared.add(word)
    return shared


def events() -> list[dict[str, Any]]:
    """Every event of the sample sessions, as the indexer takes them."""
    out = []
    for user, sessions in SESSIONS.items():
        for session, start, turns in sessions:
            base = Instant.parse(start).nanos
            for n, (kind, text) in enumerate(turns):
                out.append(
                    {
                        "event_id": f"{user}-{session}-{n}",
                        "user_id": user,
                        "session_id": f"{user}-{session}",
                        "timestamp": Instant(base + n * 60 * 10**9).isoformat(),
                        "type": kind,
                        "text": text,
                    }
                )
    return out


def texts_by_id() -> dict[str, str]:
    return {event["event_id"]: event["text"] for event in events()}


def recall_at(found: list[str], relevant: tuple[str, ...]) -> float:
    """The share of `relevant` among `found` (the first ten hits, say)."""
    return len(set(found) & set(relevant)) / len(relevant)
