"""English phrasing of the dated dev set, part one: people, small talk, facts told once and preferences
(data only; `dated_generate.py` places and dates it). Evidence and question are worded apart on purpose, and
each fact has distractor lines that share its topic words but not its answer."""

from benchmarks.retrieval_dev.dated_en_events import BRIDGES, EVENTS, LATEST, ORDER, relative

__all__ = [
    "ASSISTANT", "BRIDGES", "EVENTS", "FILL", "LATEST", "NAMES", "ORDER", "PREFERENCE", "REPLIES",
    "SINGLE", "SMALLTALK", "relative",
]  # fmt: skip

NAMES = ["Maya", "Tom", "Joanna", "Nate", "Priya", "Lukas", "Elena", "Sam", "Grace", "Omar", "Ines", "Dev"]
ASSISTANT = ""  # the assistant's turns show its role
FILL = {
    "weather": ["drizzly", "grey", "freezing", "sunny", "windy", "muggy"],
    "food": ["ramen", "a salad", "tacos", "leftover pizza", "dumplings", "curry"],
    "topic": ["the budget", "the office move", "electric cars", "the school holidays", "the heatwave"],
    "show": ["a cooking show", "a documentary about whales", "an old detective series", "a quiz show"],
}
SMALLTALK = [
    "The weather has been {weather} all week, I have barely left the flat.",
    "Had {food} for lunch again, I really need to cook more.",
    "Work is full of meetings about {topic} at the moment.",
    "The car park at the supermarket was full, I drove around for ages.",
    "The neighbour's dog barked half the night, I am exhausted.",
    "I watched {show} last night instead of sleeping.",
    "My phone keeps dying by lunchtime, the battery is useless.",
    "I need to book a dentist check-up at some point, I keep putting it off.",
    "Everyone at school pick-up was talking about the new teacher.",
    "My coffee went cold while I answered emails, classic.",
    "Concert tickets are so expensive now, I skipped the festival this year.",
    "I tidied the bookshelf and found three novels I never finished.",
    "The train was cancelled again, I worked from home instead.",
    "My sister sent me forty photos of her garden, it looks great.",
    "I should go running more, my knees feel stiff.",
    "Can you remind me to water the plants tomorrow?",
    "I spent the evening sorting receipts for my taxes.",
    "Rent day again, where does the money go.",
]
REPLIES = [
    "That sounds like quite a day, how are you feeling about it?",
    "Thanks for telling me, I will keep that in mind.",
    "Oh, that is lovely to hear!",
    "Noted. Anything you would like me to help with there?",
    "That must have been a lot, hope you get some rest.",
    "Interesting, tell me more whenever you like.",
    "Got it. Want me to add a reminder about it?",
    "Ha, that is very you.",
    "Sounds good, I am glad it worked out.",
    "I understand, that can be frustrating.",
]
# Facts told once: `say` is the evidence, `ask` the question, `noise` a distractor on the same topic.
SINGLE = [
    {
        "slots": {
            "car": ["a grey Skoda estate", "a second-hand Mazda 3", "a red Fiat Panda", "a white Yaris"]
        },
        "say": [
            "Finally collected {car} from the dealer, goodbye bus pass!",
            "Signed the papers for {car} today.",
        ],
        "ask": ["What am I driving these days?", "What kind of vehicle do I own?"],
        "noise": [
            "My neighbour's van blocks my driveway every single morning.",
            "Rental cars at the airport cost a fortune.",
        ],
        "answer": "{car}",
    },
    {
        "slots": {"doc": ["Dr. Okafor", "Dr. Lindqvist", "Dr. Marchetti", "Dr. Haddad", "Dr. Novak"]},
        "say": [
            "{doc} says my wisdom tooth has to come out in spring.",
            "Switched to {doc} at the Elm Street clinic, much gentler with the drill.",
        ],
        "ask": ["Who looks after my teeth?", "What is the name of my dentist?"],
        "noise": [
            "My brother's dentist charges a fortune for a cleaning.",
            "My gums were sore this morning, I should floss more.",
        ],
        "answer": "{doc}",
    },
    {
        "slots": {
            "kid": ["Leo", "Mila", "Arlo", "Zara"],
            "school": ["Hawthorn Primary", "St. Brigid's", "Riverbank Academy", "Oakfield School"],
        },
        "say": [
            "{kid} started at {school} on Monday and came home beaming.",
            "Parents' evening at {school} tonight, {kid}'s form tutor was lovely.",
        ],
        "ask": ["Where does my child go to school?", "Which school is {kid} enrolled at?"],
        "noise": [
            "{kid} lost another water bottle, the third this term.",
            "The school run was chaos with the roadworks today.",
        ],
        "answer": "{school}",
    },
    {
        "slots": {"lang": ["Portuguese", "Japanese", "Polish", "Turkish", "Dutch"]},
        "say": [
            "I enrolled in {lang} evening classes at the community centre.",
            "Two weeks into my {lang} course and I can order coffee!",
        ],
        "ask": ["Which language am I learning?", "What foreign tongue am I studying?"],
        "noise": [
            "My colleague speaks five languages, I am so jealous.",
            "The community centre is repainting the hall this month.",
        ],
        "answer": "{lang}",
    },
    {
        "slots": {
            "pet": ["Biscuit", "Pepper", "Mochi", "Ziggy", "Olive"],
            "kind": ["greyhound", "tabby kitten", "lop-eared rabbit", "collie puppy"],
        },
        "say": [
            "We brought a {kind} home from the shelter and called her {pet}.",
            "Meet {pet}, our rescued {kind}, she already rules the sofa.",
        ],
        "ask": ["What is the name of the animal we adopted?", "What did we name our new pet?"],
        "noise": [
            "The dog park was packed with puppies this afternoon.",
            "My cousin's cat knocked a plant off the shelf again.",
        ],
        "answer": "{pet}",
    },
    {
        "slots": {
            "company": ["Brightwave Labs", "Northwind Logistics", "Kestrel Health", "Blue Fern Studio"]
        },
        "say": [
            "I accepted the offer from {company}, I start in the design team.",
            "Signed my contract with {company} this afternoon.",
        ],
        "ask": ["Who is my new employer?", "Which firm hired me?"],
        "noise": [
            "A recruiter called about a job in sales, no thanks.",
            "Our team lunch was cancelled, the office is half empty.",
        ],
        "answer": "{company}",
    },
    {
        "slots": {"day": ["3", "11", "19", "27"], "month": ["April", "June", "September", "November"]},
        "say": [
            "Our wedding anniversary is on {day} {month}, I need to book somewhere nice.",
            "Ten years married on {day} {month}, can you believe it.",
        ],
        "ask": [
            "On what date did my spouse and I get married?",
            "When do we celebrate our marriage each year?",
        ],
        "noise": [
            "My friends' wedding was gorgeous but the speeches ran long.",
            "I need to find a present for my parents' anniversary.",
        ],
        "answer": "{day} {month}",
    },
    {
        "slots": {
            "inst": ["cello", "banjo", "saxophone", "harp"],
            "teacher": ["Mr. Adebayo", "Ms. Kowalski", "Rosa Delgado", "Mr. Brandt"],
        },
        "say": [
            "First {inst} lesson with {teacher} today, my fingers ache.",
            "{teacher} thinks I am ready for a {inst} recital next term.",
        ],
        "ask": ["Who gives me music lessons?", "Who is my {inst} teacher?"],
        "noise": [
            "A street musician was playing outside the station, so good.",
            "I found an old music book in the loft.",
        ],
        "answer": "{teacher}",
    },
    {
        "slots": {"plant": ["lavender", "raspberry canes", "sunflowers", "a fig tree", "runner beans"]},
        "say": [
            "I put {plant} in along the back fence this weekend.",
            "Spent all Saturday digging, {plant} are in by the back fence now.",
        ],
        "ask": ["What did I plant in the garden by the fence?", "What is growing along my fence?"],
        "noise": [
            "The garden centre had a huge queue for compost.",
            "Slugs ate half of my lettuce, the garden is a mess.",
        ],
        "answer": "{plant}",
    },
    {
        "slots": {"book": ["The Salt Orchard", "A Map of Small Rivers", "Winter Ledger", "The Copper Bell"]},
        "say": [
            "Our book club picked {book} for the next meeting.",
            "The reading group voted for {book} next, I have to order a copy.",
        ],
        "ask": [
            "What is my book club reading next?",
            "Which title does my reading circle discuss next time?",
        ],
        "noise": [
            "The book club argued for an hour about the last ending.",
            "The library fined me for a late book again.",
        ],
        "answer": "{book}",
    },
]
PREFERENCE = [
    {
        "slots": {"herb": ["cilantro", "dill", "fennel", "tarragon"]},
        "say": ["I honestly cannot stand {herb}, it tastes like soap to me."],
        "ask": [
            "Suggest a salsa recipe I would enjoy.",
            "Which flavour should you keep out of dishes you suggest for me?",
        ],
        "noise": ["Tried the new Thai place, the green curry was decent."],
        "answer": "no {herb}",
    },
    {
        "slots": {},
        "say": ["I would rather sit on a train for twelve hours than board a plane again."],
        "ask": [
            "How should I travel to the conference in Vienna?",
            "What kind of transport do I prefer for long trips?",
        ],
        "noise": ["The airport lounge was packed, everyone was delayed."],
        "answer": "rail, not flying",
    },
    {
        "slots": {"genre": ["old jazz records", "bossa nova", "baroque harpsichord", "90s trip-hop"]},
        "say": ["Nothing beats {genre} on a Sunday morning, I could listen all day."],
        "ask": ["Put together a playlist I would like.", "What style of music am I into?"],
        "noise": ["My neighbour practises the drums at seven in the morning."],
        "answer": "{genre}",
    },
    {
        "slots": {"years": ["three", "five", "eight"]},
        "say": ["I have been fully vegetarian for {years} years now, no fish either."],
        "ask": ["Recommend a dinner recipe that fits how I eat.", "Are there foods I avoid?"],
        "noise": ["The butcher on the corner closed down last week."],
        "answer": "vegetarian",
    },
    {
        "slots": {},
        "say": ["I am only any good at exercise before sunrise, evenings are hopeless for me."],
        "ask": ["When is the best time to schedule my workouts?", "Plan a training week that suits me."],
        "noise": ["The gym was heaving at six in the evening, no free benches."],
        "answer": "early mornings",
    },
    {
        "slots": {
            "genre": ["Scandinavian crime", "gothic horror", "hard science fiction", "historical mystery"]
        },
        "say": ["I devour {genre} novels, the darker the better."],
        "ask": ["Which book should I pick up next?", "What sort of fiction do I like?"],
        "noise": ["The bookshop had a sale but I left with nothing."],
        "answer": "{genre}",
    },
    {
        "slots": {},
        "say": ["Beach resorts bore me to tears, give me a mountain hut and a long hike."],
        "ask": ["Plan a holiday I would love.", "What kind of vacation suits me best?"],
        "noise": ["My cousin came back from the beach sunburnt and happy."],
        "answer": "mountains and hiking",
    },
    {
        "slots": {"milk": ["oat", "almond", "soy"]},
        "say": ["I switched to {milk} flat whites, dairy upsets my stomach."],
        "ask": ["How do I take my coffee?", "What should you order for me at the café?"],
        "noise": ["The café downstairs raised its prices again."],
        "answer": "{milk} milk flat white",
    },
    {
        "slots": {},
        "say": ["I focus best in total silence, open-plan offices drive me mad."],
        "ask": ["What kind of workspace helps me concentrate?", "Where should I sit to get work done?"],
        "noise": ["The office is getting new standing desks next month."],
        "answer": "a quiet room",
    },
    {
        "slots": {},
        "say": ["I would much rather get an experience, like a cooking class, than more stuff."],
        "ask": ["What should my friends give me for my birthday?", "What kind of present makes me happiest?"],
        "noise": ["Wrapping paper is so wasteful, my flat is full of it after Christmas."],
        "answer": "experiences over things",
    },
]
