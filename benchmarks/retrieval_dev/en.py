"""English phrasing of the retrieval dev set (data only; `generate.py` fills and dates it)."""

NAMES = [("Maya", "Tom"), ("Joanna", "Nate"), ("Priya", "Lukas"), ("Elena", "Sam"), ("Grace", "Omar")]
MONTHS = "January February March April May June July August September October November December".split()
REPLIES = [
    "Wow, that sounds amazing!",
    "Oh nice, tell me more about it.",
    "Ha, I did not expect that from you.",
    "That is great news, I am happy for you.",
    "Really? How did that go?",
    "I love hearing about this kind of thing.",
    "Sounds like a busy week for you.",
    "You always have the best stories, {other}.",
]
SMALLTALK = [
    "The weather has been {weather} all week, I barely left the house.",
    "I had {food} for lunch again, I should try something new.",
    "Work is {mood} lately, so many meetings about {topic}.",
    "Did you see the news about {topic}? Everyone at the office talks about it.",
    "I was thinking about going to {city} some day, have you ever been?",
    "My neighbour's {pet} kept barking last night, I hardly slept.",
    "I started a podcast about {topic}, it is surprisingly good.",
    "We should grab {food} together soon, {other}.",
    "I cleaned the whole apartment today, it took forever.",
    "Traffic was terrible this morning, I was late again.",
    "I keep forgetting to call my mum back, I feel bad about it.",
    "Have you watched anything good lately? I need a new series.",
    "My phone died in the middle of the day, what a mess.",
    "I am so tired, the week felt twice as long as usual.",
]
FILL = {
    "weather": ["rainy", "grey", "freezing", "sunny", "windy"],
    "food": ["ramen", "a salad", "tacos", "pizza", "dumplings", "curry"],
    "mood": ["hectic", "slow", "stressful", "fine"],
    "topic": ["the budget", "the new office", "space travel", "the elections", "electric cars", "history"],
    "city": ["Lisbon", "Kyoto", "Oslo", "Prague", "Cape Town", "Montreal", "Seville", "Hanoi"],
    "pet": ["dog", "cat", "parrot"],
}
# Events: what a speaker tells on a session's day; `what` names the day, `when` asks for it.
EVENTS = [
    {
        "say": "I ran the {race} in {city} this morning, it took me {n} hours but I finished!",
        "what": "Which race did {S} run {on_date}?",
        "when": "When did {S} run the {race} in {city}?",
        "act": "run the {race}",
        "slots": {
            "race": ["half marathon", "trail race", "charity run", "city marathon"],
            "n": ["2", "3", "4"],
        },
    },
    {
        "say": "I just watched {movie}, I cried at the end.",
        "what": "What movie did {S} watch {on_date}?",
        "when": "When did {S} watch {movie}?",
        "act": "watch {movie}",
        "slots": {
            "movie": ["The Long Shore", "Paper Lanterns", "Midnight Orchard", "The Glass River", "Northbound"]
        },
    },
    {
        "say": "I baked a {cake} for my colleague's farewell today, everyone loved it.",
        "what": "What did {S} bake {on_date}?",
        "when": "When did {S} bake the {cake}?",
        "act": "bake the {cake}",
        "slots": {"cake": ["lemon cake", "carrot cake", "chocolate tart", "cheesecake", "apple pie"]},
    },
    {
        "say": "Guess what, I bought a {item} today, I have wanted one for years.",
        "what": "What did {S} buy {on_date}?",
        "when": "When did {S} buy the {item}?",
        "act": "buy the {item}",
        "slots": {"item": ["used piano", "road bike", "telescope", "sewing machine", "kayak"]},
    },
    {
        "say": "We went to the {band} concert tonight, the crowd was wild.",
        "what": "Which concert did {S} go to {on_date}?",
        "when": "When did {S} see {band} live?",
        "act": "see {band} live",
        "slots": {"band": ["Silver Hollow", "The Night Ferries", "Ocean Static", "Juniper Kings"]},
    },
    {
        "say": "I gave my first talk about {subject} at the library today, I was so nervous.",
        "what": "What did {S} give a talk about {on_date}?",
        "when": "When did {S} give the talk about {subject}?",
        "act": "give the talk about {subject}",
        "slots": {"subject": ["bird migration", "urban gardening", "old maps", "solar power", "bee keeping"]},
    },
    {
        "say": "I visited the {museum} today with my nephew, he loved the dinosaurs.",
        "what": "Which place did {S} visit with a nephew {on_date}?",
        "when": "When did {S} go to the {museum}?",
        "act": "visit the {museum}",
        "slots": {"museum": ["natural history museum", "science centre", "city aquarium", "planetarium"]},
    },
]
# Persona facts that change: `first`, later `then`; the multi-hop question needs both turns.
CHANGES = [
    {
        "first": "Big news: I got a job as a {job} at {company}!",
        "then": "I left {company} last week, I am now a {job2} at {company2}.",
        "single": "Where does {S} work now?",
        "multi": "What was {S}'s job before becoming a {job2} at {company2}?",
        "slots": {
            "job": ["nurse", "data analyst", "sous chef", "architect"],
            "job2": ["yoga teacher", "product manager", "bakery owner", "school counsellor"],
            "company": ["Northside Clinic", "Brightlake Bank", "Casa Verde", "Studio Arc"],
            "company2": ["Lotus Studio", "Fernway Labs", "Crumb & Co", "Hillview School"],
        },
    },
    {
        "first": "We finally moved into a flat in {home}, the view is lovely.",
        "then": "We are moving again, this time to {home2}, closer to my parents.",
        "single": "Which city does {S} live in now?",
        "multi": "Where did {S} live before moving to {home2}?",
        "slots": {
            "home": ["Leeds", "Porto", "Utrecht", "Graz"],
            "home2": ["Bristol", "Braga", "Ghent", "Linz"],
        },
    },
]
# Single facts: a statement and a question that paraphrases it.
FACTS = [
    (
        "We adopted a {animal} from the shelter and named her {pet_name}.",
        "What is the name of {S}'s {animal}?",
        {
            "animal": ["puppy", "kitten", "rabbit"],
            "pet_name": ["Biscuit", "Pepper", "Luna", "Mochi", "Ziggy"],
        },
    ),
    (
        "I signed up for {instrument} lessons every Thursday evening.",
        "What instrument is {S} learning?",
        {"instrument": ["cello", "violin", "drum", "saxophone"]},
    ),
    (
        "My sister {sister} just had twins, I am an aunt now!",
        "What is the name of {S}'s sister who had twins?",
        {"sister": ["Clara", "Ines", "Mira", "Hanna"]},
    ),
    (
        "I am allergic to {allergen}, so I always check the labels.",
        "What is {S} allergic to?",
        {"allergen": ["peanuts", "shellfish", "sesame", "kiwi"]},
    ),
    (
        "My favourite book is {book}, I have read it five times.",
        "Which book is {S}'s favourite?",
        {"book": ["The Salt Road", "Winter Letters", "A Map of Tides", "Quiet Engines"]},
    ),
    (
        "I drive an old {car}, it breaks down every winter.",
        "What car does {S} drive?",
        {"car": ["green Volvo", "red Fiat", "blue Beetle", "white Saab"]},
    ),
]
# Inference: the question shares (almost) no words with the evidence.
INFERENCE = [
    (
        "I spent three days walking mountain trails in the Alps, best holiday of my life.",
        "Would {S} enjoy a hiking trip?",
    ),
    ("Honestly I cannot stand crowds, big parties make me want to hide.", "Is {S} an extrovert?"),
    ("I have been vegetarian for ten years now, no meat at all.", "Would {S} order a steak?"),
    ("I get seasick even on a small ferry, it is awful.", "Would {S} like a sailing cruise?"),
    ("I volunteer at the animal shelter every weekend.", "Does {S} care about animals?"),
    (
        "I am learning Japanese because I want to live in Tokyo one day.",
        "Is {S} interested in moving abroad?",
    ),
    ("I stopped drinking coffee, it made my heart race.", "Would {S} want an espresso after dinner?"),
    (
        "My knees hurt after every run, the doctor told me to switch to swimming.",
        "Is {S} likely to sign up for a marathon?",
    ),
]

ORDER = "What did {S} do first: {a}, or {b}?"


def formats(year: int, month: int, day: int) -> list[str]:
    """Ways a question names the day (the last: only its month)."""
    name = MONTHS[month - 1]
    return [
        f"on {day} {name} {year}",
        f"on {name} {day}, {year}",
        f"on {name[:3]} {day}",
        f"on {year}-{month:02d}-{day:02d}",
        f"in {name} {year}",
    ]
