"""A dev set for duplicate-fact merging: pairs of extracted facts that should, or should not, be one fact.

Written for this project (not taken from any public data set), in English and in Simplified Chinese. Each
`Pair` holds two short, self-contained facts about the user, worded as a fact-extraction model would write
them, the subject.attribute `key` they fill and the normalized value each one states.

- `PARAPHRASES_EN` / `PARAPHRASES_ZH`: `a` and `b` say the same thing in different words (same key, same
  value): active and passive voice, other verbs and synonyms, another word order, "I" or "the user".
- `CONTRASTS_EN` / `CONTRASTS_ZH`: hard negatives that must stay two facts: the same key and near-identical
  wording with another value (a city, a name, a number, a day, a negation), or overlapping words on two
  different keys (a sister or a brother, favourite or least favourite). Where the keys differ, `key` holds
  both as "key_a|key_b" (see `Pair.key_a`, `Pair.key_b`) and the two values may be equal.

Data only; `measure.py` scores it with the embedded embedder.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CONTRASTS_EN", "CONTRASTS_ZH", "PARAPHRASES_EN", "PARAPHRASES_ZH", "Pair"]


@dataclass(frozen=True)
class Pair:
    key: str
    a: str
    b: str
    value_a: str
    value_b: str

    @property
    def key_a(self) -> str:
        return self.key.split("|")[0]

    @property
    def key_b(self) -> str:
        return self.key.split("|")[-1]


PARAPHRASES_EN: list[Pair] = [
    # food and drink
    Pair(
        "user.favourite_drink",
        "The user loves green tea.",
        "Green tea is the user's favourite drink.",
        "green tea",
        "green tea",
    ),
    Pair(
        "user.favourite_food",
        "The user's favourite food is ramen.",
        "I like ramen more than any other dish.",
        "ramen",
        "ramen",
    ),
    Pair(
        "user.breakfast",
        "The user usually eats oatmeal for breakfast.",
        "Most mornings I start the day with a bowl of porridge oats.",
        "oatmeal",
        "oatmeal",
    ),
    Pair(
        "user.diet",
        "The user is vegetarian.",
        "I don't eat meat or fish, I follow a vegetarian diet.",
        "vegetarian",
        "vegetarian",
    ),
    Pair(
        "user.coffee_order",
        "The user takes their coffee black with no sugar.",
        "I drink my coffee black and never add sugar.",
        "black, no sugar",
        "black, no sugar",
    ),
    Pair(
        "user.spice_tolerance",
        "The user cannot handle spicy food.",
        "Spicy dishes are too much for me.",
        "no spicy food",
        "no spicy food",
    ),
    # places
    Pair("user.city", "The user lives in Lisbon.", "Lisbon is where I live now.", "Lisbon", "Lisbon"),
    Pair(
        "user.hometown",
        "The user grew up in Manchester.",
        "Manchester is the user's hometown.",
        "Manchester",
        "Manchester",
    ),
    Pair("user.nationality", "The user is from Canada.", "I am Canadian.", "Canada", "Canada"),
    Pair("user.home.floor", "The user lives on the fourth floor.", "My flat is on floor four.", "4", "4"),
    # work
    Pair("user.job", "The user works as a nurse.", "I am a nurse by profession.", "nurse", "nurse"),
    Pair(
        "user.employer",
        "The user is employed by Siemens.",
        "Siemens is the company I work for.",
        "Siemens",
        "Siemens",
    ),
    Pair(
        "user.job_start",
        "The user started their current job in March 2021.",
        "I have been in my present position since March 2021.",
        "March 2021",
        "March 2021",
    ),
    Pair("user.commute", "The user cycles to work.", "I get to the office by bike.", "bike", "bike"),
    Pair(
        "user.remote_day",
        "The user works from home on Fridays.",
        "Fridays are my remote work days.",
        "Friday",
        "Friday",
    ),
    Pair(
        "user.meeting_constraint",
        "The user does not want meetings before 10am.",
        "No meetings before ten in the morning for me.",
        "no meetings before 10am",
        "no meetings before 10am",
    ),
    # pets and family
    Pair("user.cat.name", "The user has a cat named Miso.", "Miso is the name of my cat.", "Miso", "Miso"),
    Pair(
        "user.dog.breed",
        "The user owns a golden retriever.",
        "I have a dog, a golden retriever.",
        "golden retriever",
        "golden retriever",
    ),
    Pair("user.sister.name", "The user's sister is called Anna.", "Anna is my sister.", "Anna", "Anna"),
    Pair(
        "user.mother.name", "The user's mother is named Helen.", "My mom's name is Helen.", "Helen", "Helen"
    ),
    Pair(
        "user.husband.name", "The user is married to David.", "David is the user's husband.", "David", "David"
    ),
    Pair("user.son.age", "The user's son is seven years old.", "My boy is 7.", "7", "7"),
    Pair("user.children_count", "The user has three children.", "I am a parent of three kids.", "3", "3"),
    Pair("user.brothers_count", "The user has two brothers.", "I grew up with two brothers.", "2", "2"),
    Pair(
        "user.daughter.school",
        "The user's daughter attends Riverside Primary School.",
        "My daughter goes to Riverside Primary.",
        "Riverside Primary School",
        "Riverside Primary School",
    ),
    Pair(
        "user.best_friend.name",
        "The user's best friend is Omar.",
        "Omar is my closest friend.",
        "Omar",
        "Omar",
    ),
    # identity and numbers
    Pair("user.name", "The user's name is Priya.", "I'm called Priya.", "Priya", "Priya"),
    Pair(
        "user.nickname",
        "The user's friends call them Sam.",
        "Sam is the nickname my friends use for me.",
        "Sam",
        "Sam",
    ),
    Pair("user.pronouns", "The user goes by she/her.", "My pronouns are she/her.", "she/her", "she/her"),
    Pair("user.age", "The user is 34 years old.", "I am thirty-four.", "34", "34"),
    Pair("user.birthday", "The user's birthday is on 12 May.", "I was born on May 12th.", "12 May", "12 May"),
    Pair("user.height", "The user is 180 cm tall.", "I am one metre eighty.", "180 cm", "180 cm"),
    Pair(
        "user.rent",
        "The user pays 900 euros a month in rent.",
        "My monthly rent is €900.",
        "900 EUR/month",
        "900 EUR/month",
    ),
    Pair(
        "user.laptop_budget",
        "The user's budget for a new laptop is 1500 dollars.",
        "I can spend up to $1,500 on the new laptop.",
        "1500 USD",
        "1500 USD",
    ),
    # health
    Pair(
        "user.allergy",
        "The user is allergic to peanuts.",
        "Peanuts give the user an allergic reaction.",
        "peanuts",
        "peanuts",
    ),
    Pair(
        "user.medication",
        "The user takes insulin every day.",
        "I inject insulin daily.",
        "insulin",
        "insulin",
    ),
    Pair(
        "user.condition",
        "The user has type 2 diabetes.",
        "I was diagnosed with type 2 diabetes.",
        "type 2 diabetes",
        "type 2 diabetes",
    ),
    Pair(
        "user.intolerance",
        "The user is lactose intolerant.",
        "Dairy upsets my stomach because I can't digest lactose.",
        "lactose",
        "lactose",
    ),
    Pair(
        "user.supplement",
        "The user takes vitamin D every morning.",
        "Each morning I have a vitamin D supplement.",
        "vitamin D",
        "vitamin D",
    ),
    Pair(
        "user.weight_goal",
        "The user wants to lose five kilos.",
        "My goal is to drop 5 kg.",
        "lose 5 kg",
        "lose 5 kg",
    ),
    Pair("user.fear", "The user is afraid of heights.", "Heights scare me.", "heights", "heights"),
    # schedule
    Pair(
        "user.bedtime",
        "The user usually goes to bed around 11pm.",
        "I tend to fall asleep at about eleven at night.",
        "23:00",
        "23:00",
    ),
    Pair(
        "user.wake_time",
        "The user wakes up at 6:30 on weekdays.",
        "On weekdays my alarm goes off at half past six.",
        "6:30",
        "6:30",
    ),
    Pair(
        "user.exercise",
        "The user runs five kilometres every morning.",
        "Every morning I go for a 5 km run.",
        "5 km run every morning",
        "5 km run every morning",
    ),
    Pair(
        "user.gym_days",
        "The user goes to the gym on Mondays and Thursdays.",
        "My gym days are Monday and Thursday.",
        "Monday, Thursday",
        "Monday, Thursday",
    ),
    Pair(
        "user.appointment",
        "The user has a dentist appointment on Tuesday.",
        "On Tuesday I'm seeing the dentist.",
        "dentist, Tuesday",
        "dentist, Tuesday",
    ),
    # hobbies and tastes
    Pair(
        "user.hobby",
        "The user enjoys painting with watercolours.",
        "Watercolour painting is one of my hobbies.",
        "watercolour painting",
        "watercolour painting",
    ),
    Pair("user.instrument", "The user plays the cello.", "I am an amateur cellist.", "cello", "cello"),
    Pair(
        "user.favourite_sport",
        "The user is a big fan of tennis.",
        "Tennis is the sport I follow most.",
        "tennis",
        "tennis",
    ),
    Pair(
        "user.favourite_team",
        "The user supports Liverpool FC.",
        "I'm a Liverpool supporter.",
        "Liverpool FC",
        "Liverpool FC",
    ),
    Pair(
        "user.favourite_author",
        "The user's favourite author is Haruki Murakami.",
        "I like Murakami's books best of all.",
        "Haruki Murakami",
        "Haruki Murakami",
    ),
    Pair(
        "user.favourite_music",
        "The user mostly listens to jazz.",
        "Jazz is the music I listen to most.",
        "jazz",
        "jazz",
    ),
    Pair(
        "user.disliked_genre",
        "The user dislikes horror movies.",
        "I can't stand horror films.",
        "horror",
        "horror",
    ),
    Pair(
        "user.balcony_plants",
        "The user grows tomatoes on the balcony.",
        "I have tomato plants on my balcony.",
        "tomatoes",
        "tomatoes",
    ),
    # languages and education
    Pair(
        "user.language",
        "The user speaks fluent Spanish.",
        "I can speak Spanish fluently.",
        "Spanish",
        "Spanish",
    ),
    Pair(
        "user.learning_language",
        "The user is learning Japanese.",
        "I am currently studying Japanese.",
        "Japanese",
        "Japanese",
    ),
    Pair(
        "user.native_language",
        "The user's native language is Portuguese.",
        "Portuguese is my mother tongue.",
        "Portuguese",
        "Portuguese",
    ),
    Pair(
        "user.education",
        "The user has a master's degree in chemistry.",
        "I hold an MSc in chemistry.",
        "MSc chemistry",
        "MSc chemistry",
    ),
    Pair(
        "user.university",
        "The user studied at the University of Edinburgh.",
        "I went to university in Edinburgh.",
        "University of Edinburgh",
        "University of Edinburgh",
    ),
    # plans and travel
    Pair(
        "user.trip_plan",
        "The user plans to visit Japan in October.",
        "In October I am going on a trip to Japan.",
        "Japan, October",
        "Japan, October",
    ),
    Pair(
        "user.planned_move",
        "The user intends to move to Berlin next year.",
        "Next year I'm relocating to Berlin.",
        "Berlin, next year",
        "Berlin, next year",
    ),
    Pair(
        "user.last_trip", "The user visited Peru last summer.", "Last summer I went to Peru.", "Peru", "Peru"
    ),
    Pair(
        "user.seat_preference",
        "The user prefers a window seat on flights.",
        "When flying, I always pick a seat by the window.",
        "window",
        "window",
    ),
    Pair(
        "user.timezone",
        "The user is in the Central European time zone.",
        "My time zone is CET.",
        "CET",
        "CET",
    ),
    # devices
    Pair("user.phone", "The user uses an iPhone 15.", "My phone is an iPhone 15.", "iPhone 15", "iPhone 15"),
    Pair(
        "user.laptop",
        "The user works on a ThinkPad laptop.",
        "My laptop is a Lenovo ThinkPad.",
        "ThinkPad",
        "ThinkPad",
    ),
    Pair(
        "user.os",
        "The user runs Linux on their computer.",
        "My computer's operating system is Linux.",
        "Linux",
        "Linux",
    ),
    Pair(
        "user.car",
        "The user drives a Toyota Corolla.",
        "I own a Toyota Corolla.",
        "Toyota Corolla",
        "Toyota Corolla",
    ),
]

CONTRASTS_EN: list[Pair] = [
    # same key, another value
    Pair("user.city", "The user lives in Paris.", "The user lives in Berlin.", "Paris", "Berlin"),
    Pair(
        "user.favourite_drink",
        "The user loves green tea.",
        "The user loves jasmine tea.",
        "green tea",
        "jasmine tea",
    ),
    Pair(
        "user.favourite_food",
        "The user's favourite food is ramen.",
        "The user's favourite food is pho.",
        "ramen",
        "pho",
    ),
    Pair("user.job", "The user works as a nurse.", "The user works as a doctor.", "nurse", "doctor"),
    Pair(
        "user.employer", "The user works for Google.", "The user works for Microsoft.", "Google", "Microsoft"
    ),
    Pair("user.cat.name", "The user has a cat named Miso.", "The user has a cat named Tofu.", "Miso", "Tofu"),
    Pair(
        "user.dog.breed",
        "The user owns a golden retriever.",
        "The user owns a German shepherd.",
        "golden retriever",
        "German shepherd",
    ),
    Pair(
        "user.sister.name",
        "The user's sister is called Anna.",
        "The user's sister is called Hannah.",
        "Anna",
        "Hannah",
    ),
    Pair("user.age", "The user is 34 years old.", "The user is 43 years old.", "34", "43"),
    Pair("user.children_count", "The user has three children.", "The user has two children.", "3", "2"),
    Pair(
        "user.allergy",
        "The user is allergic to peanuts.",
        "The user is allergic to shellfish.",
        "peanuts",
        "shellfish",
    ),
    Pair("user.allergy", "The user is allergic to cats.", "The user is allergic to dogs.", "cats", "dogs"),
    Pair(
        "user.language",
        "The user speaks fluent Spanish.",
        "The user speaks fluent Italian.",
        "Spanish",
        "Italian",
    ),
    Pair("user.instrument", "The user plays the cello.", "The user plays the violin.", "cello", "violin"),
    Pair(
        "user.trip_plan",
        "The user plans to visit Japan in October.",
        "The user plans to visit Japan in December.",
        "Japan, October",
        "Japan, December",
    ),
    Pair(
        "user.trip_plan",
        "The user plans to visit Japan in October.",
        "The user plans to visit Korea in October.",
        "Japan, October",
        "Korea, October",
    ),
    Pair(
        "user.meeting_constraint",
        "The user does not want meetings before 10am.",
        "The user does not want meetings after 4pm.",
        "no meetings before 10am",
        "no meetings after 4pm",
    ),
    Pair(
        "user.meeting_constraint",
        "No meetings before 10am for the user.",
        "No meetings before 9am for the user.",
        "no meetings before 10am",
        "no meetings before 9am",
    ),
    Pair(
        "user.gym_days",
        "The user goes to the gym on Mondays and Thursdays.",
        "The user goes to the gym on Tuesdays and Fridays.",
        "Monday, Thursday",
        "Tuesday, Friday",
    ),
    Pair(
        "user.phone", "The user uses an iPhone 15.", "The user uses an iPhone 13.", "iPhone 15", "iPhone 13"
    ),
    Pair(
        "user.car",
        "The user drives a Toyota Corolla.",
        "The user drives a Honda Civic.",
        "Toyota Corolla",
        "Honda Civic",
    ),
    Pair(
        "user.birthday",
        "The user's birthday is on 12 May.",
        "The user's birthday is on 21 May.",
        "12 May",
        "21 May",
    ),
    Pair(
        "user.rent",
        "The user pays 900 euros a month in rent.",
        "The user pays 1200 euros a month in rent.",
        "900 EUR/month",
        "1200 EUR/month",
    ),
    Pair(
        "user.bedtime",
        "The user usually goes to bed around 11pm.",
        "The user usually goes to bed around 1am.",
        "23:00",
        "01:00",
    ),
    Pair(
        "user.remote_day",
        "The user works from home on Fridays.",
        "The user works from home on Mondays.",
        "Friday",
        "Monday",
    ),
    Pair(
        "user.favourite_music",
        "The user mostly listens to jazz.",
        "The user mostly listens to heavy metal.",
        "jazz",
        "heavy metal",
    ),
    Pair(
        "user.favourite_team",
        "The user supports Liverpool FC.",
        "The user supports Manchester United.",
        "Liverpool FC",
        "Manchester United",
    ),
    Pair(
        "user.hometown",
        "The user grew up in Manchester.",
        "The user grew up in Melbourne.",
        "Manchester",
        "Melbourne",
    ),
    Pair(
        "user.laptop_budget",
        "The user's budget for a new laptop is 1500 dollars.",
        "The user's budget for a new laptop is 800 dollars.",
        "1500 USD",
        "800 USD",
    ),
    Pair("user.commute", "The user cycles to work.", "The user takes the bus to work.", "bike", "bus"),
    Pair(
        "user.husband.name",
        "The user is married to David.",
        "The user is married to Daniel.",
        "David",
        "Daniel",
    ),
    Pair(
        "user.son.age", "The user's son is seven years old.", "The user's son is eleven years old.", "7", "11"
    ),
    Pair("user.diet", "The user is vegetarian.", "The user is vegan.", "vegetarian", "vegan"),
    Pair(
        "user.condition",
        "The user has type 2 diabetes.",
        "The user has type 1 diabetes.",
        "type 2 diabetes",
        "type 1 diabetes",
    ),
    Pair(
        "user.wake_time",
        "The user wakes up at 6:30 on weekdays.",
        "The user wakes up at 8:30 on weekdays.",
        "6:30",
        "8:30",
    ),
    # same key, another value, first and third person mixed
    Pair("user.city", "I live in Vienna.", "The user lives in Zurich.", "Vienna", "Zurich"),
    Pair(
        "user.sister.name", "My sister is called Laura.", "The user's sister is called Lena.", "Laura", "Lena"
    ),
    Pair("user.employer", "I work at Amazon.", "The user works at Airbus.", "Amazon", "Airbus"),
    # negations
    Pair(
        "user.likes_coffee",
        "The user likes coffee.",
        "The user does not like coffee.",
        "yes",
        "no",
    ),
    Pair("user.smoker", "The user is a smoker.", "The user is not a smoker.", "yes", "no"),
    Pair("user.owns_car", "The user owns a car.", "The user doesn't own a car.", "yes", "no"),
    Pair("user.drinks_alcohol", "The user drinks alcohol.", "The user never drinks alcohol.", "yes", "no"),
    Pair(
        "user.allergy.penicillin",
        "The user is allergic to penicillin.",
        "The user is not allergic to penicillin.",
        "yes",
        "no",
    ),
    Pair("user.eats_meat", "The user eats meat.", "The user no longer eats meat.", "yes", "no"),
    Pair(
        "user.works_weekends",
        "The user works on weekends.",
        "The user never works on weekends.",
        "yes",
        "no",
    ),
    Pair("user.can_swim", "The user can swim.", "The user cannot swim.", "yes", "no"),
    Pair("user.has_pets", "The user has pets.", "The user has no pets.", "yes", "no"),
    Pair("user.married", "The user is married.", "The user is not married.", "yes", "no"),
    Pair("user.enjoys_cooking", "I enjoy cooking.", "I don't enjoy cooking.", "yes", "no"),
    # different keys, overlapping words
    Pair(
        "user.sister.name|user.brother.name",
        "The user's sister is called Anna.",
        "The user's brother is called Anna.",
        "Anna",
        "Anna",
    ),
    Pair(
        "user.mother.name|user.mother_in_law.name",
        "The user's mother is named Helen.",
        "The user's mother-in-law is named Helen.",
        "Helen",
        "Helen",
    ),
    Pair(
        "user.son.age|user.daughter.age",
        "The user's son is seven years old.",
        "The user's daughter is seven years old.",
        "7",
        "7",
    ),
    Pair(
        "user.favourite_drink|user.disliked_drink",
        "Green tea is the user's favourite drink.",
        "Green tea is the user's least favourite drink.",
        "green tea",
        "green tea",
    ),
    Pair(
        "user.city|user.birthplace",
        "The user lives in Lisbon.",
        "The user was born in Lisbon.",
        "Lisbon",
        "Lisbon",
    ),
    Pair(
        "user.job|user.dream_job",
        "The user works as a pilot.",
        "The user wants to work as a pilot.",
        "pilot",
        "pilot",
    ),
    Pair(
        "user.last_trip|user.trip_plan",
        "The user visited Peru last summer.",
        "The user plans to visit Peru next summer.",
        "Peru",
        "Peru",
    ),
    Pair(
        "user.language|user.learning_language",
        "The user speaks Japanese.",
        "The user is learning Japanese.",
        "Japanese",
        "Japanese",
    ),
    Pair(
        "user.cat.name|user.dog.name",
        "The user's cat is called Luna.",
        "The user's dog is called Luna.",
        "Luna",
        "Luna",
    ),
    Pair(
        "user.allergy|user.favourite_fruit",
        "The user is allergic to strawberries.",
        "The user loves strawberries.",
        "strawberries",
        "strawberries",
    ),
    Pair(
        "user.employer|user.wife.employer",
        "The user works at Siemens.",
        "The user's wife works at Siemens.",
        "Siemens",
        "Siemens",
    ),
    Pair(
        "user.age|user.father.age",
        "The user is 62 years old.",
        "The user's father is 62 years old.",
        "62",
        "62",
    ),
    Pair(
        "user.best_friend.name|user.boss.name",
        "The user's best friend is Omar.",
        "The user's boss is Omar.",
        "Omar",
        "Omar",
    ),
    Pair(
        "user.gym_days|user.swimming_days",
        "The user goes to the gym on Mondays.",
        "The user goes swimming on Mondays.",
        "Monday",
        "Monday",
    ),
    Pair(
        "user.phone|user.work_phone",
        "The user's personal phone is an iPhone 15.",
        "The user's work phone is an iPhone 15.",
        "iPhone 15",
        "iPhone 15",
    ),
    Pair(
        "user.breakfast|user.dinner",
        "The user usually eats oatmeal for breakfast.",
        "The user usually eats oatmeal for dinner.",
        "oatmeal",
        "oatmeal",
    ),
    Pair(
        "user.meeting_constraint|user.call_constraint",
        "The user does not want meetings before 10am.",
        "The user does not want phone calls before 10am.",
        "no meetings before 10am",
        "no calls before 10am",
    ),
    Pair(
        "user.brothers_count|user.sisters_count",
        "The user has two brothers.",
        "The user has two sisters.",
        "2",
        "2",
    ),
    Pair(
        "user.home.floor|user.office.floor",
        "The user lives on the fourth floor.",
        "The user's office is on the fourth floor.",
        "4",
        "4",
    ),
]

PARAPHRASES_ZH: list[Pair] = [
    # 饮食
    Pair("user.favourite_drink", "用户最喜欢绿茶。", "绿茶是用户最爱喝的饮料。", "绿茶", "绿茶"),
    Pair("user.favourite_food", "用户最喜欢吃火锅。", "火锅是我最爱的食物。", "火锅", "火锅"),
    Pair("user.breakfast", "用户早餐通常吃包子。", "我早上一般吃包子当早饭。", "包子", "包子"),
    Pair("user.diet", "用户是素食者。", "我吃素，不碰任何肉类。", "素食", "素食"),
    Pair("user.spice_tolerance", "用户不能吃辣。", "辣的东西我吃不了。", "不吃辣", "不吃辣"),
    Pair(
        "user.coffee_order",
        "用户喝咖啡不加糖也不加奶。",
        "我只喝黑咖啡，从来不放糖。",
        "黑咖啡不加糖",
        "黑咖啡不加糖",
    ),
    # 地点
    Pair("user.city", "用户住在成都。", "我现在定居成都。", "成都", "成都"),
    Pair("user.hometown", "用户的老家在湖南长沙。", "我是长沙人，在那里长大。", "长沙", "长沙"),
    Pair("user.home.floor", "用户住在四楼。", "我家在4层。", "4", "4"),
    # 工作
    Pair("user.job", "用户是一名护士。", "我的职业是护士。", "护士", "护士"),
    Pair("user.employer", "用户供职于华为。", "华为是我工作的公司。", "华为", "华为"),
    Pair(
        "user.job_start",
        "用户2021年3月入职现在的公司。",
        "我从2021年三月起就在目前这家公司上班。",
        "2021年3月",
        "2021年3月",
    ),
    Pair("user.commute", "用户骑自行车上班。", "我每天骑车去公司。", "自行车", "自行车"),
    Pair("user.commute_time", "用户通勤单程要一个小时。", "我从家到公司路上得花一小时。", "1小时", "1小时"),
    Pair("user.remote_day", "用户每周五在家办公。", "周五我都远程上班。", "周五", "周五"),
    Pair(
        "user.meeting_constraint",
        "用户不希望上午10点前开会。",
        "早上十点以前别给我安排会议。",
        "10点前不开会",
        "10点前不开会",
    ),
    # 宠物和家人
    Pair("user.cat.name", "用户养了一只叫咪咪的猫。", "我家猫的名字是咪咪。", "咪咪", "咪咪"),
    Pair("user.dog.breed", "用户养的狗是金毛。", "我有一只金毛寻回犬。", "金毛", "金毛"),
    Pair("user.sister.name", "用户的姐姐叫李娜。", "李娜是我姐姐。", "李娜", "李娜"),
    Pair("user.mother.name", "用户的母亲名叫王芳。", "我妈妈叫王芳。", "王芳", "王芳"),
    Pair("user.husband.name", "用户的丈夫叫张伟。", "用户和张伟是夫妻。", "张伟", "张伟"),
    Pair("user.son.age", "用户的儿子今年七岁。", "我儿子7岁了。", "7", "7"),
    Pair("user.children_count", "用户有三个孩子。", "我家有三个小孩。", "3", "3"),
    Pair("user.brothers_count", "用户有两个哥哥。", "我上面有两个哥哥。", "2", "2"),
    Pair(
        "user.daughter.school", "用户的女儿在实验小学上学。", "我女儿读的是实验小学。", "实验小学", "实验小学"
    ),
    Pair("user.best_friend.name", "用户最好的朋友是刘洋。", "刘洋是我最铁的哥们。", "刘洋", "刘洋"),
    # 身份和数字
    Pair("user.name", "用户叫陈静。", "我的名字是陈静。", "陈静", "陈静"),
    Pair("user.nickname", "朋友们都叫用户小胖。", "我的外号是小胖。", "小胖", "小胖"),
    Pair("user.age", "用户今年34岁。", "我三十四岁了。", "34", "34"),
    Pair("user.birthday", "用户的生日是5月12日。", "我是五月十二号出生的。", "5月12日", "5月12日"),
    Pair("user.zodiac", "用户属龙。", "我的生肖是龙。", "龙", "龙"),
    Pair("user.height", "用户身高175厘米。", "我一米七五。", "175厘米", "175厘米"),
    Pair("user.rent", "用户每月房租3500元。", "我一个月的租金是三千五。", "3500元/月", "3500元/月"),
    Pair(
        "user.laptop_budget", "用户买新电脑的预算是八千元。", "新笔记本我最多花8000块。", "8000元", "8000元"
    ),
    # 健康
    Pair("user.allergy", "用户对花生过敏。", "花生会让用户过敏。", "花生", "花生"),
    Pair("user.medication", "用户每天都要打胰岛素。", "我每日注射胰岛素。", "胰岛素", "胰岛素"),
    Pair("user.condition", "用户患有2型糖尿病。", "我被诊断出二型糖尿病。", "2型糖尿病", "2型糖尿病"),
    Pair(
        "user.intolerance", "用户乳糖不耐受。", "我一喝牛奶就肚子不舒服，因为消化不了乳糖。", "乳糖", "乳糖"
    ),
    Pair("user.supplement", "用户每天早上吃维生素D。", "我每天早晨补充维D。", "维生素D", "维生素D"),
    Pair("user.weight_goal", "用户想减掉五公斤。", "我的目标是瘦十斤。", "减5公斤", "减5公斤"),
    Pair("user.fear", "用户恐高。", "我很怕待在高的地方。", "高处", "高处"),
    # 作息
    Pair("user.bedtime", "用户一般晚上11点睡觉。", "我通常十一点左右上床睡觉。", "23:00", "23:00"),
    Pair("user.wake_time", "用户工作日早上六点半起床。", "上班的日子我六点半就起来了。", "6:30", "6:30"),
    Pair(
        "user.exercise",
        "用户每天早上跑五公里。",
        "我每天清晨都会跑5公里。",
        "每天早上跑5公里",
        "每天早上跑5公里",
    ),
    Pair(
        "user.gym_days",
        "用户每周一和周四去健身房。",
        "我的健身日是星期一和星期四。",
        "周一、周四",
        "周一、周四",
    ),
    Pair("user.appointment", "用户周二要去看牙医。", "星期二我约了牙医。", "周二看牙医", "周二看牙医"),
    # 爱好
    Pair("user.hobby", "用户喜欢画水彩画。", "水彩画是我的爱好之一。", "水彩画", "水彩画"),
    Pair("user.instrument", "用户会拉大提琴。", "我业余时间拉大提琴。", "大提琴", "大提琴"),
    Pair("user.favourite_sport", "用户是网球迷。", "我最爱看的运动是网球。", "网球", "网球"),
    Pair("user.favourite_author", "用户最喜欢的作家是余华。", "余华的书我最爱看。", "余华", "余华"),
    Pair("user.favourite_music", "用户平时主要听爵士乐。", "我听得最多的音乐是爵士。", "爵士乐", "爵士乐"),
    Pair("user.disliked_genre", "用户不喜欢恐怖片。", "恐怖电影我受不了。", "恐怖片", "恐怖片"),
    Pair("user.balcony_plants", "用户在阳台上种了西红柿。", "我家阳台种着番茄。", "番茄", "番茄"),
    # 语言和学历
    Pair("user.language", "用户能说流利的西班牙语。", "我的西班牙语讲得很流利。", "西班牙语", "西班牙语"),
    Pair("user.learning_language", "用户正在学日语。", "我目前在学习日语。", "日语", "日语"),
    Pair("user.native_language", "用户的母语是粤语。", "粤语是我的第一语言。", "粤语", "粤语"),
    Pair("user.education", "用户有化学硕士学位。", "我是化学专业的硕士。", "化学硕士", "化学硕士"),
    Pair("user.university", "用户毕业于浙江大学。", "我是浙大毕业的。", "浙江大学", "浙江大学"),
    # 计划和出行
    Pair(
        "user.trip_plan", "用户打算十月去日本旅游。", "我计划在10月份去日本玩。", "日本，十月", "日本，十月"
    ),
    Pair("user.planned_move", "用户准备明年搬到上海。", "明年我要搬去上海住。", "上海，明年", "上海，明年"),
    Pair("user.last_trip", "用户去年夏天去了云南。", "去年暑假我去云南旅行了。", "云南", "云南"),
    Pair("user.seat_preference", "用户坐飞机喜欢靠窗的座位。", "乘飞机时我总选靠窗位。", "靠窗", "靠窗"),
    # 设备
    Pair("user.phone", "用户用的是iPhone 15。", "我的手机是苹果15。", "iPhone 15", "iPhone 15"),
    Pair(
        "user.laptop",
        "用户的笔记本电脑是联想ThinkPad。",
        "我用一台ThinkPad笔记本工作。",
        "ThinkPad",
        "ThinkPad",
    ),
    Pair("user.car", "用户开一辆比亚迪汉。", "我的车是比亚迪汉。", "比亚迪汉", "比亚迪汉"),
    Pair("user.payment", "用户平时用微信支付。", "我付款一般用微信。", "微信支付", "微信支付"),
]

CONTRASTS_ZH: list[Pair] = [
    # 同一键，不同的值
    Pair("user.city", "用户住在北京。", "用户住在南京。", "北京", "南京"),
    Pair("user.favourite_drink", "用户最喜欢绿茶。", "用户最喜欢红茶。", "绿茶", "红茶"),
    Pair("user.favourite_food", "用户最喜欢吃火锅。", "用户最喜欢吃烧烤。", "火锅", "烧烤"),
    Pair("user.job", "用户是一名护士。", "用户是一名医生。", "护士", "医生"),
    Pair("user.employer", "用户在华为工作。", "用户在小米工作。", "华为", "小米"),
    Pair("user.cat.name", "用户养了一只叫咪咪的猫。", "用户养了一只叫球球的猫。", "咪咪", "球球"),
    Pair("user.dog.breed", "用户养的狗是金毛。", "用户养的狗是柯基。", "金毛", "柯基"),
    Pair("user.sister.name", "用户的姐姐叫李娜。", "用户的姐姐叫李丽。", "李娜", "李丽"),
    Pair("user.age", "用户今年34岁。", "用户今年43岁。", "34", "43"),
    Pair("user.children_count", "用户有三个孩子。", "用户有两个孩子。", "3", "2"),
    Pair("user.allergy", "用户对花生过敏。", "用户对海鲜过敏。", "花生", "海鲜"),
    Pair("user.allergy", "用户对猫毛过敏。", "用户对狗毛过敏。", "猫毛", "狗毛"),
    Pair("user.language", "用户能说流利的西班牙语。", "用户能说流利的葡萄牙语。", "西班牙语", "葡萄牙语"),
    Pair("user.instrument", "用户会拉大提琴。", "用户会拉小提琴。", "大提琴", "小提琴"),
    Pair(
        "user.trip_plan",
        "用户打算十月去日本旅游。",
        "用户打算十二月去日本旅游。",
        "日本，十月",
        "日本，十二月",
    ),
    Pair(
        "user.trip_plan", "用户打算十月去日本旅游。", "用户打算十月去韩国旅游。", "日本，十月", "韩国，十月"
    ),
    Pair(
        "user.meeting_constraint",
        "用户不希望上午10点前开会。",
        "用户不希望下午4点后开会。",
        "10点前不开会",
        "16点后不开会",
    ),
    Pair(
        "user.meeting_constraint",
        "用户不希望上午10点前开会。",
        "用户不希望上午9点前开会。",
        "10点前不开会",
        "9点前不开会",
    ),
    Pair(
        "user.gym_days",
        "用户每周一和周四去健身房。",
        "用户每周二和周五去健身房。",
        "周一、周四",
        "周二、周五",
    ),
    Pair("user.phone", "用户用的是iPhone 15。", "用户用的是华为Mate 60。", "iPhone 15", "华为Mate 60"),
    Pair("user.car", "用户开一辆比亚迪汉。", "用户开一辆特斯拉Model 3。", "比亚迪汉", "特斯拉Model 3"),
    Pair("user.birthday", "用户的生日是5月12日。", "用户的生日是5月21日。", "5月12日", "5月21日"),
    Pair("user.rent", "用户每月房租3500元。", "用户每月房租5300元。", "3500元/月", "5300元/月"),
    Pair("user.bedtime", "用户一般晚上11点睡觉。", "用户一般凌晨1点睡觉。", "23:00", "01:00"),
    Pair("user.remote_day", "用户每周五在家办公。", "用户每周一在家办公。", "周五", "周一"),
    Pair("user.favourite_music", "用户平时主要听爵士乐。", "用户平时主要听摇滚乐。", "爵士乐", "摇滚乐"),
    Pair("user.hometown", "用户的老家在湖南长沙。", "用户的老家在湖北武汉。", "长沙", "武汉"),
    Pair(
        "user.laptop_budget",
        "用户买新电脑的预算是八千元。",
        "用户买新电脑的预算是五千元。",
        "8000元",
        "5000元",
    ),
    Pair("user.commute", "用户骑自行车上班。", "用户坐地铁上班。", "自行车", "地铁"),
    Pair("user.husband.name", "用户的丈夫叫张伟。", "用户的丈夫叫张威。", "张伟", "张威"),
    Pair("user.son.age", "用户的儿子今年七岁。", "用户的儿子今年十一岁。", "7", "11"),
    Pair("user.diet", "用户是素食者。", "用户是严格的纯素食者。", "素食", "纯素"),
    Pair("user.condition", "用户患有2型糖尿病。", "用户患有1型糖尿病。", "2型糖尿病", "1型糖尿病"),
    Pair("user.wake_time", "用户工作日早上六点半起床。", "用户工作日早上八点半起床。", "6:30", "8:30"),
    Pair("user.zodiac", "用户属龙。", "用户属蛇。", "龙", "蛇"),
    # 同一键，不同的值，第一人称和第三人称混用
    Pair("user.city", "我住在杭州。", "用户住在苏州。", "杭州", "苏州"),
    Pair("user.sister.name", "我姐姐叫王静。", "用户的姐姐叫王晶。", "王静", "王晶"),
    Pair("user.employer", "我在阿里巴巴上班。", "用户在字节跳动上班。", "阿里巴巴", "字节跳动"),
    # 否定
    Pair("user.likes_coffee", "用户喜欢喝咖啡。", "用户不喜欢喝咖啡。", "是", "否"),
    Pair("user.smoker", "用户抽烟。", "用户不抽烟。", "是", "否"),
    Pair("user.owns_car", "用户有车。", "用户没有车。", "是", "否"),
    Pair("user.drinks_alcohol", "用户喝酒。", "用户从来不喝酒。", "是", "否"),
    Pair("user.allergy.penicillin", "用户对青霉素过敏。", "用户对青霉素不过敏。", "是", "否"),
    Pair("user.eats_meat", "用户吃肉。", "用户已经不吃肉了。", "是", "否"),
    Pair("user.works_weekends", "用户周末要上班。", "用户周末从不上班。", "是", "否"),
    Pair("user.can_swim", "用户会游泳。", "用户不会游泳。", "是", "否"),
    Pair("user.has_pets", "用户养宠物。", "用户没有养宠物。", "是", "否"),
    Pair("user.married", "用户已经结婚了。", "用户还没结婚。", "是", "否"),
    Pair("user.eats_spicy", "我能吃辣。", "我不能吃辣。", "是", "否"),
    # 不同的键，措辞相近
    Pair("user.sister.name|user.brother.name", "用户的姐姐叫李晨。", "用户的哥哥叫李晨。", "李晨", "李晨"),
    Pair(
        "user.sister.name|user.younger_sister.name",
        "用户的姐姐叫李晨。",
        "用户的妹妹叫李晨。",
        "李晨",
        "李晨",
    ),
    Pair(
        "user.mother.name|user.mother_in_law.name",
        "用户的母亲名叫王芳。",
        "用户的婆婆名叫王芳。",
        "王芳",
        "王芳",
    ),
    Pair("user.son.age|user.daughter.age", "用户的儿子今年七岁。", "用户的女儿今年七岁。", "7", "7"),
    Pair(
        "user.favourite_drink|user.disliked_drink",
        "绿茶是用户最爱喝的饮料。",
        "绿茶是用户最不爱喝的饮料。",
        "绿茶",
        "绿茶",
    ),
    Pair("user.city|user.birthplace", "用户住在厦门。", "用户出生在厦门。", "厦门", "厦门"),
    Pair("user.job|user.dream_job", "用户是一名飞行员。", "用户想成为一名飞行员。", "飞行员", "飞行员"),
    Pair(
        "user.last_trip|user.trip_plan", "用户去年夏天去了云南。", "用户打算明年夏天去云南。", "云南", "云南"
    ),
    Pair("user.language|user.learning_language", "用户会说日语。", "用户在学日语。", "日语", "日语"),
    Pair("user.cat.name|user.dog.name", "用户的猫叫豆豆。", "用户的狗叫豆豆。", "豆豆", "豆豆"),
    Pair("user.allergy|user.favourite_fruit", "用户对草莓过敏。", "用户最爱吃草莓。", "草莓", "草莓"),
    Pair("user.employer|user.wife.employer", "用户在腾讯上班。", "用户的妻子在腾讯上班。", "腾讯", "腾讯"),
    Pair("user.age|user.father.age", "用户今年62岁。", "用户的父亲今年62岁。", "62", "62"),
    Pair(
        "user.best_friend.name|user.boss.name", "用户最好的朋友是刘洋。", "用户的老板是刘洋。", "刘洋", "刘洋"
    ),
    Pair("user.gym_days|user.swimming_days", "用户每周一去健身房。", "用户每周一去游泳。", "周一", "周一"),
    Pair(
        "user.phone|user.work_phone",
        "用户的私人手机是iPhone 15。",
        "用户的工作手机是iPhone 15。",
        "iPhone 15",
        "iPhone 15",
    ),
    Pair("user.breakfast|user.dinner", "用户早餐通常吃面条。", "用户晚餐通常吃面条。", "面条", "面条"),
    Pair(
        "user.meeting_constraint|user.call_constraint",
        "用户不希望上午10点前开会。",
        "用户不希望上午10点前接电话。",
        "10点前不开会",
        "10点前不接电话",
    ),
    Pair("user.brothers_count|user.sisters_count", "用户有两个哥哥。", "用户有两个姐姐。", "2", "2"),
    Pair("user.home.floor|user.office.floor", "用户住在四楼。", "用户的办公室在四楼。", "4", "4"),
]
