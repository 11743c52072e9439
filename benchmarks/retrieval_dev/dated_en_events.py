"""English phrasing of the dated dev set, part two: dated events, people met through a relation (two-session
questions), values that change and the words for relative dates (data only, `relative` is pure)."""

from datetime import date

__all__ = ["BRIDGES", "EVENTS", "LATEST", "ORDER", "relative"]

MONTHS = "January February March April May June July August September October November December".split()
NUMBERS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


def relative(kind: str, day: date, n: int = 0) -> str:
    """Words for a window a question names: relative to the time asked, or a day or month by name."""
    if kind == "yesterday":
        return "yesterday"
    if kind == "days_ago":
        return f"{NUMBERS[n]} days ago"
    if kind == "last_week":
        return "last week"
    if kind == "last_month":
        return "last month"
    if kind == "on_day":
        return f"on {day.day} {MONTHS[day.month - 1]}"
    return f"in {MONTHS[day.month - 1]}"


# Events: `say` on the day, `when` asks for that day, `what` asks what happened in a window ({rel}).
EVENTS = [
    {
        "slots": {"band": ["Silver Hollow", "The Night Ferries", "Ocean Static", "Juniper Kings"]},
        "say": [
            "We went to the {band} gig tonight, my ears are still ringing.",
            "Caught {band} at the arena this evening, what a setlist!",
        ],
        "when": ["When did I see {band} perform?", "On what day did I go to hear {band} play?"],
        "what": ["Which band did I see live {rel}?", "Whose show did I go to {rel}?"],
        "act": "hearing {band}",
        "noise": "Tickets for the summer festival sold out in minutes.",
    },
    {
        "slots": {
            "race": ["half marathon", "trail race", "charity 10k", "harbour run"],
            "city": ["Porto", "Leeds", "Ghent", "Bergen"],
        },
        "say": [
            "Crossed the finish line of the {race} in {city} this morning!",
            "Done! The {race} in {city} nearly killed me but I made it.",
        ],
        "when": ["When did I run the {race} in {city}?", "What day was my {race} in {city}?"],
        "what": ["Which running event did I complete {rel}?", "What race did I take part in {rel}?"],
        "act": "the {race}",
        "noise": "My running shoes are falling apart, I need new ones before the next race.",
    },
    {
        "slots": {
            "show": [
                "the Hokusai prints",
                "the Bauhaus retrospective",
                "the dinosaur hall",
                "the Frida Kahlo show",
            ]
        },
        "say": [
            "Spent the afternoon at {show}, I could have stayed for hours.",
            "Finally saw {show} at the museum today, worth the queue.",
        ],
        "when": ["When did I visit {show}?", "What day was I at {show}?"],
        "what": ["Which exhibition did I go to {rel}?", "What did I see at the museum {rel}?"],
        "act": "visiting {show}",
        "noise": "The museum café is the best place for a quiet coffee.",
    },
    {
        "slots": {"cake": ["lemon drizzle", "carrot cake", "chocolate tart", "cheesecake", "apple pie"]},
        "say": [
            "I baked a {cake} for a colleague's farewell today, it vanished in minutes.",
            "Made a {cake} from scratch this afternoon, the kitchen is a disaster.",
        ],
        "when": ["When did I bake the {cake}?", "What day did I make that {cake}?"],
        "what": ["What did I bake {rel}?", "What came out of my oven {rel}?"],
        "act": "baking the {cake}",
        "noise": "The oven is making a weird clicking noise again.",
    },
    {
        "slots": {"peak": ["Ben Lomond", "Snowdon", "Mount Teide", "Pen y Fan", "the Zugspitze"]},
        "say": [
            "Just got back from a day up {peak}, my legs are jelly.",
            "Reached the top of {peak} at noon, the view was unreal.",
        ],
        "when": ["When did I climb {peak}?", "On what day did I hike up {peak}?"],
        "what": ["Which mountain did I hike {rel}?", "Which summit did I reach {rel}?"],
        "act": "climbing {peak}",
        "noise": "My hiking boots still smell of mud from the last walk.",
    },
    {
        "slots": {"place": ["Casa Lupa", "The Tin Kettle", "Sakura House", "Le Petit Four", "Olive & Ash"]},
        "say": [
            "Had dinner at {place} tonight, the tasting menu was unreal.",
            "We finally got a table at {place} this evening.",
        ],
        "when": ["When did I eat at {place}?", "What day did we have dinner at {place}?"],
        "what": ["Which restaurant did I try {rel}?", "Where did I eat out {rel}?"],
        "act": "dinner at {place}",
        "noise": "Restaurant prices around here have gone up a lot.",
    },
]
ORDER = ["Which came first: {a} or {b}?", "Did {a} happen before {b}?", "What did I do earlier, {a} or {b}?"]
# Two-session questions: a relative named in one session, a new fact about them (by name) in another.
BRIDGES = {
    "relations": ["sister", "brother", "cousin", "neighbour", "best friend", "flatmate", "uncle", "aunt"],
    "names": ["Lena", "Marco", "Aisha", "Jonas", "Keiko", "Ruben", "Tess", "Viktor", "Nadia", "Felix"],
    "intro": [
        "My {rel} {name} came round for dinner tonight.",
        "Helped my {rel} {name} assemble a wardrobe all afternoon.",
        "Long phone call with {name}, my {rel}, we had not talked in ages.",
    ],
    "noise": ["My {rel} keeps sending me memes at two in the morning.", "I owe my {rel} a birthday card."],
    "facts": [
        {
            "slots": {"city": ["Lisbon", "Montreal", "Hanoi", "Tallinn", "Seville"]},
            "say": [
                "{name} has decided to relocate to {city} in the spring.",
                "Big news from {name}: a flat in {city}, lease signed.",
            ],
            "ask": ["Which city is my {rel} moving to?", "Where will my {rel} be living soon?"],
            "answer": "{city}",
        },
        {
            "slots": {
                "job": ["paramedic", "sommelier", "tax lawyer", "primary school teacher", "game designer"]
            },
            "say": [
                "{name} just got hired as a {job}, so proud.",
                "{name} quit the bank to retrain as a {job}.",
            ],
            "ask": ["What does my {rel} do for work now?", "What is my {rel}'s new profession?"],
            "answer": "{job}",
        },
        {
            "slots": {"animal": ["hedgehog", "pair of ferrets", "tortoise", "husky", "cockatoo"]},
            "say": [
                "{name} brought home a {animal} yesterday, total chaos.",
                "{name} now shares the flat with a {animal}.",
            ],
            "ask": ["What pet does my {rel} keep?", "Which animal lives with my {rel} these days?"],
            "answer": "{animal}",
        },
        {
            "slots": {"hobby": ["rock climbing", "pottery", "salsa dancing", "beekeeping", "sailing"]},
            "say": [
                "{name} has got really into {hobby}, every single weekend.",
                "{name} signed up for {hobby} and will not stop talking about it.",
            ],
            "ask": ["What is my {rel}'s new pastime?", "How does my {rel} spend free time lately?"],
            "answer": "{hobby}",
        },
    ],
}
# Values that change: `first` tells the first, `then` each later one; only the last is the evidence.
LATEST = [
    {
        "values": ["Riverside", "Old Town", "the harbour district", "Northgate", "Hillcrest"],
        "first": ["I signed the lease on a flat in {v} today."],
        "then": ["We moved again, home is now in {v}.", "Unpacking boxes in our new place in {v}, finally!"],
        "ask": ["Which neighbourhood am I living in these days?", "Where is home for me at the moment?"],
    },
    {
        "values": ["by bike", "on the tram", "by car", "on foot", "by e-scooter"],
        "first": ["These days I get to the office {v}, about twenty minutes."],
        "then": ["Changed my routine: now I go in {v}.", "New plan for the morning trip to work: {v}."],
        "ask": ["How do I currently get to work?", "What is my commute like at the moment?"],
    },
    {
        "values": ["a Pixel 7", "an iPhone 13", "a Fairphone 4", "a Galaxy S22", "a Nokia flip phone"],
        "first": ["My phone is {v}, the battery holds up so far."],
        "then": ["Upgraded, I am on {v} now.", "Dropped the old handset in the sink, replaced it with {v}."],
        "ask": ["Which mobile do I use right now?", "What handset do I carry these days?"],
    },
    {
        "values": ["52 minutes", "49 minutes", "47 minutes", "45 minutes"],
        "ordered": True,
        "first": ["My best 10k time is {v} so far."],
        "then": ["New personal record on the 10k: {v}!", "Shaved it down again, {v} for ten kilometres."],
        "ask": ["What is my fastest 10k at the moment?", "How quick is my current ten-kilometre best?"],
    },
    {
        "values": ["The Glass Harbour", "Nine Quiet Rooms", "A Field of Kites", "The Last Lamplighter"],
        "first": ["Started reading {v} on the train."],
        "then": [
            "Gave up on the last one, now I am halfway through {v}.",
            "Picked up {v}, cannot put it down.",
        ],
        "ask": ["What am I reading currently?", "Which novel is on my nightstand now?"],
    },
    {
        "values": ["four", "three", "two", "one"],
        "ordered": True,
        "first": ["I am drinking about {v} cups of coffee a day, too many."],
        "then": ["Cut down again: {v} cups a day now.", "Down to {v} cups of coffee daily."],
        "ask": ["How much coffee do I have daily these days?", "How many cups do I drink each day now?"],
    },
    {
        "values": ["volleyball", "five-a-side football", "ultimate frisbee", "water polo", "netball"],
        "first": ["I joined a {v} team at the sports centre."],
        "then": ["Switched to {v} this season, new team, new kit.", "I play {v} on Thursdays now."],
        "ask": ["Which team sport am I playing now?", "What sport do I do with a team at the moment?"],
    },
    {
        "values": ["1,150 euros", "1,240 euros", "1,310 euros", "1,390 euros"],
        "ordered": True,
        "first": ["Our rent is {v} a month, which is fine for the area."],
        "then": ["The landlord raised it, we pay {v} a month now.", "New contract, rent went up to {v}."],
        "ask": ["How much am I paying for my flat each month?", "What does my housing cost me monthly?"],
    },
]
