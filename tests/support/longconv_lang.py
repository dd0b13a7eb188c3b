"""The long-conversation suite's phrase books: what people say and what the bot asks, per language.

Data for :mod:`tests.support.longconv` (the generator). Each language has
names (with the forms its questions need, and a spelling in the other
script), value pools (cities, jobs, pets, hobbies, trips, events, …), the
templates of fact messages, reactions and chit-chat, and the question
templates of each category. ``{v}`` is the fact's value, ``{n}`` a name,
``{g}`` a name's genitive (Russian), ``{m}`` a month, ``{c}`` a city, ``{j}`` a job.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Person:
    name: str
    #: The name in the other script (Latin for Cyrillic names, Cyrillic for Latin ones).
    other: str
    #: The form "the dog of X" needs (Russian genitive; the name elsewhere).
    genitive: str


@dataclass(frozen=True)
class Hobby:
    says: tuple[str, ...]
    #: Open-domain questions (an inference from the hobby), ``{n}`` the person.
    infer: tuple[str, ...]


@dataclass(frozen=True)
class Book:
    lang: str
    people: tuple[Person, ...]
    #: (where one lives: "in X", where one moves: "to X") pairs.
    cities: tuple[tuple[str, str], ...]
    jobs: tuple[str, ...]
    pets: tuple[tuple[str, str], ...]  # (species as said, species as asked)
    pet_names: tuple[str, ...]
    hobbies: tuple[Hobby, ...]
    allergies: tuple[str, ...]
    trips: tuple[str, ...]
    events: tuple[tuple[str, str], ...]  # (said, asked)
    cars: tuple[str, ...]
    studies: tuple[str, ...]
    months: tuple[str, ...]  # as "in <month>" needs it, January first
    says: dict[str, tuple[str, ...]]
    asks: dict[str, tuple[str, ...]]
    reactions: tuple[str, ...]
    chatter: tuple[str, ...]
    #: Said before or after a chit-chat line now and then (more distinct messages).
    openers: tuple[str, ...] = field(default=())
    closers: tuple[str, ...] = field(default=())


EN = Book(
    lang="en",
    people=(
        Person("Maria", "Мария", "Maria"),
        Person("Dmitri", "Дмитрий", "Dmitri"),
        Person("Chloe", "Хлоя", "Chloe"),
        Person("Oliver", "Оливер", "Oliver"),
        Person("Priya", "Прия", "Priya"),
        Person("Lucas", "Лукас", "Lucas"),
        Person("Hannah", "Ханна", "Hannah"),
        Person("Tom", "Том", "Tom"),
        Person("Grace", "Грейс", "Grace"),
        Person("Ethan", "Итан", "Ethan"),
    ),
    cities=(
        ("Leeds", "Leeds"),
        ("Bristol", "Bristol"),
        ("Glasgow", "Glasgow"),
        ("Dublin", "Dublin"),
        ("Cardiff", "Cardiff"),
        ("Brighton", "Brighton"),
        ("Manchester", "Manchester"),
        ("Edinburgh", "Edinburgh"),
        ("York", "York"),
        ("Norwich", "Norwich"),
    ),
    jobs=(
        "a nurse",
        "a software developer",
        "a primary school teacher",
        "an accountant",
        "a chef",
        "a pharmacist",
        "an architect",
        "a bus driver",
        "a vet",
        "a journalist",
    ),
    pets=(("dog", "dog"), ("cat", "cat"), ("parrot", "parrot"), ("rabbit", "rabbit")),
    pet_names=("Biscuit", "Pepper", "Rocky", "Luna", "Mango", "Ziggy", "Olive", "Bruno"),
    hobbies=(
        Hobby(
            ("went bouldering again tonight, my forearms are dead",
             "finally sent that overhang route at the climbing gym"),
            ("Would {n} enjoy a day at an indoor wall?", "Which sport gift suits {n}?"),
        ),
        Hobby(
            ("spent all Sunday repotting my tomatoes and chillies",
             "the allotment is finally producing courgettes"),
            ("Who in the chat might have fresh vegetables to share?",
             "Would {n} like a book about growing plants?"),
        ),
        Hobby(
            ("practised the cello for two hours, the Bach suite is getting there",
             "orchestra rehearsal ran late again"),
            ("Would {n} appreciate concert tickets for classical music?",
             "What instrument-related present would {n} like?"),
        ),
        Hobby(
            ("did a 60 km ride along the coast this morning",
             "new road bike tyres are a game changer"),
            ("Is {n} into endurance sports?", "Would {n} like a cycling jersey as a gift?"),
        ),
        Hobby(
            ("baked sourdough again, the crumb was perfect",
             "my starter is three years old now"),
            ("Would {n} like a bread-making class?", "Who could bring homemade bread to the picnic?"),
        ),
        Hobby(
            ("painted a watercolour of the harbour at sunset",
             "bought new brushes and cotton paper for my painting"),
            ("Would {n} enjoy an art gallery visit?", "What craft supplies could you give {n}?"),
        ),
    ),
    allergies=("peanuts", "shellfish", "cats", "pollen", "penicillin", "gluten"),
    trips=("Lisbon", "Kyoto", "Reykjavik", "Marrakesh", "Prague", "Vancouver", "Crete", "Seville"),
    events=(
        ("ran my first half marathon", "run a half marathon"),
        ("got engaged", "get engaged"),
        ("passed my driving test", "pass the driving test"),
        ("started a pottery course", "start a pottery course"),
        ("had my wisdom tooth out", "have a wisdom tooth removed"),
    ),
    cars=("a red Skoda Octavia", "an old Volvo estate", "a Nissan Leaf", "a Mini Cooper"),
    studies=("Japanese", "Portuguese", "the guitar", "sign language", "Italian"),
    months=("January", "February", "March", "April", "May", "June", "July", "August",
            "September", "October", "November", "December"),
    says={
        "home": ("I live in {v} by the way", "life in {v} is pretty quiet for me",
                 "my flat in {v} has a tiny balcony"),
        "move": ("big news, we've moved to {v}!", "done with the boxes, officially living in {v} now"),
        "job": ("I work as {v}", "long shift today, being {v} is exhausting"),
        "job2": ("I quit, starting next week as {v}", "new job! I'm {v} now"),
        "pet": ("my {s} {v} chewed my slippers again", "adopted a {s} today, we named it {v}"),
        "hobby": ("{v}",),
        "allergy": ("can't eat that, I'm allergic to {v}", "my {v} allergy is acting up again"),
        "sibling": ("my sister {v} just got a job as {j}", "my brother {v} works as {j}"),
        "trip": ("just got back from {v}, what a trip", "landed in {v}, the food here is amazing"),
        "event": ("I {v} today!", "so happy, I {v} this morning"),
        "car": ("bought {v}, first car I've ever owned", "my {v} broke down on the motorway"),
        "study": ("started lessons in {v}", "homework for my {v} class is killing me"),
    },
    asks={
        "home": ("Where did {n} live before moving?", "Which city was {n} in at first?",
                 "Which city did {n} live in at first?"),
        "move": ("Where does {n} live now?", "Which city did {n} move to?",
                 "Where has {n} moved to?"),
        "job": ("What does {n} do for a living?", "What is {n}'s job?", "What does {n} work as?"),
        "job2": ("What is {n}'s new job?",),
        "pet": ("What is the name of {n}'s {s}?", "What pet does {n} have?"),
        "allergy": ("What is {n} allergic to?", "Which food or thing should {n} avoid?"),
        "sibling": ("Who is {n}'s sibling?", "What does {n}'s sister or brother do?",
                    "What does {n}'s sister or brother work as?"),
        "trip": ("Where did {n} travel in {m}?", "Which trip did {n} take in {m}?",
                 "Where did {n} get back from in {m}?"),
        "event": ("When did {n} {v}?",),
        "car": ("What car does {n} drive?",),
        "study": ("What is {n} learning?", "Which lessons did {n} start?"),
        "multi_pet": ("What is the pet's name of the person who lives in {c}?",),
        "multi_city": ("Where does the person who works as {j} live?",),
        "multi_sibling": ("Where does the sibling of the person with a {s} named {v} work?",),
    },
    reactions=("{n} wow, how was it?", "nice one {n}!", "{n} tell us more later",
               "haha {n} classic", "{n} send pics!", "congrats {n}"),
    chatter=("good morning everyone", "anyone watching the match tonight?",
             "ugh Mondays", "what's everyone doing this weekend?", "lol", "same here",
             "I need coffee", "the weather is awful again", "did you see the news?",
             "who wants to grab lunch on Friday?", "my phone battery is dying",
             "traffic was horrible this morning", "can't believe it's already {m}",
             "anyone know a good plumber?", "happy Friday!", "that film was overrated",
             "I'm so tired today", "brb", "sounds good to me", "we should do a barbecue soon",
             "my neighbour's dog barked all night", "new episode is out tonight",
             "is the quiz still on Thursday?", "forgot my umbrella again", "see you all later",
             "the train was cancelled again", "just finished a huge cleaning session",
             "thinking about a holiday somewhere warm", "what a week", "pizza tonight?"),
    openers=("honestly", "ok so", "btw", "guys", "hmm", "right,", "omg", "well"),
    closers=("haha", "lol", "tbh", "😅", "!!", "to be fair", "again", "ugh"),
)  # fmt: skip


RU = Book(
    lang="ru",
    people=(
        Person("Мария", "Mariya", "Марии"),
        Person("Дмитрий", "Dmitry", "Дмитрия"),
        Person("Ольга", "Olga", "Ольги"),
        Person("Алексей", "Alexei", "Алексея"),
        Person("Наталья", "Natalya", "Натальи"),
        Person("Сергей", "Sergei", "Сергея"),
        Person("Юлия", "Yulia", "Юлии"),
        Person("Иван", "Ivan", "Ивана"),
        Person("Екатерина", "Ekaterina", "Екатерины"),
        Person("Михаил", "Mikhail", "Михаила"),
    ),
    cities=(
        ("Казани", "Казань"),
        ("Самаре", "Самару"),
        ("Твери", "Тверь"),
        ("Перми", "Пермь"),
        ("Новосибирске", "Новосибирск"),
        ("Калининграде", "Калининград"),
        ("Екатеринбурге", "Екатеринбург"),
        ("Ярославле", "Ярославль"),
        ("Иркутске", "Иркутск"),
        ("Сочи", "Сочи"),
    ),
    jobs=("медсестрой", "программистом", "учителем в школе", "бухгалтером", "поваром",
          "фармацевтом", "архитектором", "водителем автобуса", "ветеринаром", "журналистом"),
    pets=(("пёс", "собаку"), ("кот", "кота"), ("попугай", "попугая"), ("кролик", "кролика")),
    pet_names=("Барсик", "Шарик", "Кеша", "Луна", "Тимоша", "Рыжик", "Пушок", "Бублик"),
    hobbies=(
        Hobby(
            ("опять весь вечер на скалодроме, руки отваливаются",
             "наконец пролез ту трассу с нависанием"),
            ("Понравится ли {n} день на скалодроме?", "Какой спортивный подарок подойдёт {n}?"),
        ),
        Hobby(
            ("всё воскресенье пересаживал помидоры и перец на даче",
             "на грядках наконец пошли кабачки"),
            ("У кого в чате могут быть свежие овощи?", "Обрадуется ли {n} книге о растениях?"),
        ),
        Hobby(
            ("два часа занимался на виолончели, сюита Баха уже получается",
             "репетиция оркестра опять затянулась"),
            ("Оценит ли {n} билеты на концерт классической музыки?",
             "Какой музыкальный подарок подойдёт {n}?"),
        ),
        Hobby(
            ("утром проехал 60 км вдоль реки", "новые покрышки на шоссейнике просто огонь"),
            ("Увлекается ли {n} видами спорта на выносливость?", "Подойдёт ли {n} велоджерси в подарок?"),
        ),
        Hobby(
            ("опять испёк хлеб на закваске, мякиш идеальный", "моей закваске уже три года"),
            ("Понравится ли {n} мастер-класс по выпечке хлеба?",
             "Кто может принести домашний хлеб на пикник?"),
        ),
        Hobby(
            ("нарисовал акварелью гавань на закате", "купил новые кисти и бумагу для рисования"),
            ("Понравится ли {n} поход в художественную галерею?",
             "Какие материалы для творчества можно подарить {n}?"),
        ),
    ),
    allergies=("арахис", "морепродукты", "кошек", "пыльцу", "пенициллин", "глютен"),
    trips=("Стамбула", "Тбилиси", "Еревана", "Калининграда", "Мурманска", "Байкала",
           "Алтая", "Минска"),
    events=(
        ("пробежал первый полумарафон", "пробежать полумарафон"),
        ("сделал предложение", "сделать предложение"),
        ("сдал на права", "сдать на права"),
        ("записался на курсы гончарного дела", "записаться на гончарные курсы"),
        ("удалил зуб мудрости", "удалить зуб мудрости"),
    ),
    cars=("красную Шкоду Октавию", "старый Вольво универсал", "Ниссан Лиф", "Мини Купер"),
    studies=("японский", "португальский", "гитару", "язык жестов", "итальянский"),
    months=("январе", "феврале", "марте", "апреле", "мае", "июне", "июле", "августе",
            "сентябре", "октябре", "ноябре", "декабре"),
    says={
        "home": ("я вообще-то живу в {v}", "жизнь в {v} у меня спокойная",
                 "у моей квартиры в {v} крошечный балкон"),
        "move": ("новости: мы переехали в {v}!", "разобрали коробки, теперь официально живём в {v}"),
        "job": ("я работаю {v}", "длинная смена сегодня, работать {v} выматывает"),
        "job2": ("я уволился, со следующей недели работаю {v}", "новая работа! теперь я работаю {v}"),
        "pet": ("мой {s} {v} опять сгрыз тапки", "взяли сегодня домой {s}, назвали {v}"),
        "hobby": ("{v}",),
        "allergy": ("мне нельзя, у меня аллергия на {v}", "опять аллергия на {v} разыгралась"),
        "sibling": ("моя сестра {v} устроилась работать {j}", "мой брат {v} работает {j}"),
        "trip": ("только вернулся из {v}, вот это поездка", "прилетел из {v}, еда там потрясающая"),
        "event": ("сегодня я {v}!", "так рад, сегодня утром {v}"),
        "car": ("купил {v}, моя первая машина", "моя машина, {v}, сломалась на трассе"),
        "study": ("начал учить {v}", "домашка по курсу, где учу {v}, меня добивает"),
    },
    asks={
        "home": ("Где жил(а) {n} до переезда?", "В каком городе {n} жил(а) сначала?",
                 "Где {n} живёт или жил(а) раньше?"),
        "move": ("Где сейчас живёт {n}?", "В какой город переехал(а) {n}?",
                 "Куда {n} переехали?"),
        "job": ("Кем работает {n}?", "Какая профессия у {g}?", "Где и кем работает {n}?"),
        "job2": ("Какая новая работа у {g}?",),
        "pet": ("Как зовут питомца {g}?", "Какое животное у {g}?"),
        "allergy": ("На что аллергия у {g}?", "Чего следует избегать {n}?"),
        "sibling": ("Как зовут брата или сестру {g}?", "Кем работает брат или сестра {g}?"),
        "trip": ("Куда ездил(а) {n} в {m}?", "Откуда вернулся {n} в {m}?",
                 "Какая поездка была у {g} в {m}?"),
        "event": ("Когда {n} решил(а) {v}?",),
        "car": ("На какой машине ездит {n}?",),
        "study": ("Что учит {n}?", "Что {n} начал(а) учить?"),
        "multi_pet": ("Как зовут питомца человека, который живёт в {c}?",),
        "multi_city": ("Где живёт тот, кто работает {j}?",),
        "multi_sibling": ("Где работает брат или сестра человека, у которого питомец {v}?",),
    },
    reactions=("{n}, ого, ну как?", "{n}, круто!", "{n}, потом расскажешь подробнее",
               "ахах {n} как всегда", "{n}, скинь фотки!", "поздравляю, {n}"),
    chatter=("всем доброе утро", "кто смотрит матч сегодня?", "ох уж эти понедельники",
             "какие планы на выходные?", "ахаха", "у меня так же", "мне нужен кофе",
             "погода опять ужасная", "видели новости?", "кто со мной на обед в пятницу?",
             "телефон садится", "пробки сегодня жуткие", "не верится, что полгода уже прошло",
             "кто знает хорошего сантехника?", "ура, пятница!", "фильм так себе",
             "я сегодня такой уставший", "сейчас вернусь", "звучит отлично",
             "надо бы шашлыки организовать", "соседская собака лаяла всю ночь",
             "вышла новая серия", "квиз в четверг в силе?", "опять забыл зонт", "до вечера всем",
             "электричку опять отменили", "только что закончил генеральную уборку",
             "думаю об отпуске где-нибудь в тепле", "ну и неделька", "пицца сегодня?"),
    openers=("честно говоря", "короче", "кстати", "народ", "хм", "ну", "блин", "слушайте"),
    closers=("ахах", "лол", "если честно", "😅", "!!", "вообще", "опять", "эх"),
)  # fmt: skip


DE = Book(
    lang="de",
    people=(
        Person("Jonas", "Йонас", "Jonas"),
        Person("Lena", "Лена", "Lena"),
        Person("Felix", "Феликс", "Felix"),
        Person("Anna", "Анна", "Anna"),
        Person("Lukas", "Лукас", "Lukas"),
        Person("Sophie", "Софи", "Sophie"),
        Person("Katarina", "Катарина", "Katarina"),
        Person("Niklas", "Никлас", "Niklas"),
        Person("Miriam", "Мириам", "Miriam"),
        Person("Tobias", "Тобиас", "Tobias"),
    ),
    cities=(
        ("Leipzig", "Leipzig"), ("Köln", "Köln"), ("Freiburg", "Freiburg"),
        ("Hamburg", "Hamburg"), ("Dresden", "Dresden"), ("Münster", "Münster"),
        ("Bremen", "Bremen"), ("Nürnberg", "Nürnberg"), ("Kassel", "Kassel"), ("Mainz", "Mainz"),
    ),
    jobs=("Krankenpfleger", "Softwareentwickler", "Grundschullehrer", "Steuerberater", "Koch",
          "Apotheker", "Architekt", "Busfahrer", "Tierarzt", "Journalist"),
    pets=(("Hund", "Hund"), ("Katze", "Katze"), ("Wellensittich", "Wellensittich"),
          ("Kaninchen", "Kaninchen")),
    pet_names=("Bello", "Minka", "Rocky", "Luna", "Krümel", "Flocke", "Pünktchen", "Bruno"),
    hobbies=(
        Hobby(
            ("war heute Abend wieder bouldern, meine Unterarme sind hinüber",
             "endlich die Route mit dem Überhang in der Kletterhalle geschafft"),
            ("Hätte {n} Spaß an einem Tag in der Kletterhalle?",
             "Welches Sportgeschenk passt zu {n}?"),
        ),
        Hobby(
            ("den ganzen Sonntag Tomaten und Chilis umgetopft",
             "im Schrebergarten wachsen endlich Zucchini"),
            ("Wer im Chat könnte frisches Gemüse abgeben?",
             "Würde sich {n} über ein Buch über Pflanzen freuen?"),
        ),
        Hobby(
            ("zwei Stunden Cello geübt, die Bach-Suite wird langsam",
             "Orchesterprobe ging wieder ewig"),
            ("Würde {n} Karten für ein Klassikkonzert schätzen?",
             "Welches Musikgeschenk würde {n} gefallen?"),
        ),
        Hobby(
            ("heute früh 60 km am Rhein entlang geradelt", "neue Rennradreifen sind der Hammer"),
            ("Macht {n} Ausdauersport?", "Wäre ein Radtrikot ein gutes Geschenk für {n}?"),
        ),
        Hobby(
            ("wieder Sauerteigbrot gebacken, die Krume war perfekt",
             "mein Sauerteig ist jetzt drei Jahre alt"),
            ("Würde {n} ein Brotbackkurs gefallen?", "Wer könnte selbstgebackenes Brot zum Picknick mitbringen?"),
        ),
        Hobby(
            ("ein Aquarell vom Hafen im Sonnenuntergang gemalt",
             "neue Pinsel und Papier zum Malen gekauft"),
            ("Würde {n} gern eine Kunstgalerie besuchen?",
             "Welches Bastelmaterial könnte man {n} schenken?"),
        ),
    ),
    allergies=("Erdnüsse", "Meeresfrüchte", "Katzen", "Pollen", "Penicillin", "Gluten"),
    trips=("Lissabon", "Kyoto", "Island", "Marrakesch", "Prag", "Kanada", "Kreta", "Sevilla"),
    events=(
        ("meinen ersten Halbmarathon gelaufen", "einen Halbmarathon laufen"),
        ("mich verlobt", "sich verloben"),
        ("die Führerscheinprüfung bestanden", "die Führerscheinprüfung bestehen"),
        ("einen Töpferkurs angefangen", "einen Töpferkurs anfangen"),
        ("mir den Weisheitszahn ziehen lassen", "sich einen Weisheitszahn ziehen lassen"),
    ),
    cars=("einen roten Skoda Octavia", "einen alten Volvo Kombi", "einen Nissan Leaf",
          "einen Mini Cooper"),
    studies=("Japanisch", "Portugiesisch", "Gitarre", "Gebärdensprache", "Italienisch"),
    months=("Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September",
            "Oktober", "November", "Dezember"),
    says={
        "home": ("ich wohne übrigens in {v}", "das Leben in {v} ist ziemlich ruhig",
                 "meine Wohnung in {v} hat einen winzigen Balkon"),
        "move": ("große Neuigkeit, wir sind nach {v} gezogen!", "Kisten ausgepackt, wir wohnen jetzt offiziell in {v}"),
        "job": ("ich arbeite als {v}", "lange Schicht heute, als {v} ist man echt fertig"),
        "job2": ("ich habe gekündigt, ab nächster Woche arbeite ich als {v}", "neuer Job! ich bin jetzt {v}"),
        "pet": ("mein {s} {v} hat wieder meine Hausschuhe zerkaut", "haben heute einen {s} adoptiert, er heißt {v}"),
        "hobby": ("{v}",),
        "allergy": ("kann ich nicht essen, ich bin allergisch gegen {v}", "meine Allergie gegen {v} ist wieder schlimm"),
        "sibling": ("meine Schwester {v} hat einen Job als {j} bekommen", "mein Bruder {v} arbeitet als {j}"),
        "trip": ("bin gerade aus {v} zurück, was für eine Reise", "in {v} gelandet, das Essen hier ist großartig"),
        "event": ("ich habe heute {v}!", "so glücklich, ich habe heute Morgen {v}"),
        "car": ("habe {v} gekauft, mein erstes eigenes Auto", "mein Auto, {v}, ist auf der Autobahn liegen geblieben"),
        "study": ("habe mit {v} angefangen", "die Hausaufgaben für meinen {v}-Kurs bringen mich um"),
    },
    asks={
        "home": ("Wo hat {n} vor dem Umzug gewohnt?", "In welcher Stadt war {n} zuerst?",
                 "In welcher Stadt wohnte {n} anfangs?"),
        "move": ("Wo wohnt {n} jetzt?", "In welche Stadt ist {n} gezogen?",
                 "Wohin ist {n} gezogen?"),
        "job": ("Was macht {n} beruflich?", "Was ist der Beruf von {n}?", "Als was arbeitet {n}?"),
        "job2": ("Was ist der neue Job von {n}?",),
        "pet": ("Wie heißt das Haustier von {n}?", "Welches Tier hat {n}?"),
        "allergy": ("Wogegen ist {n} allergisch?", "Was sollte {n} meiden?"),
        "sibling": ("Wie heißt das Geschwister von {n}?", "Was macht der Bruder oder die Schwester von {n}?"),
        "trip": ("Wohin ist {n} im {m} gereist?", "Von welcher Reise kam {n} im {m} zurück?",
                 "Wo ist {n} im {m} gelandet?"),
        "event": ("Wann wollte {n} {v}?",),
        "car": ("Welches Auto fährt {n}?",),
        "study": ("Was lernt {n} gerade?", "Womit hat {n} angefangen zu lernen?"),
        "multi_pet": ("Wie heißt das Haustier der Person, die in {c} wohnt?",),
        "multi_city": ("Wo wohnt die Person, die als {j} arbeitet?",),
        "multi_sibling": ("Als was arbeitet das Geschwister der Person mit dem Haustier {v}?",),
    },
    reactions=("{n} wow, wie war's?", "stark {n}!", "{n} erzähl später mehr",
               "haha {n} typisch", "{n} schick Fotos!", "Glückwunsch {n}"),
    chatter=("guten Morgen zusammen", "schaut jemand heute das Spiel?", "Montage halt",
             "was macht ihr am Wochenende?", "lol", "geht mir genauso", "ich brauche Kaffee",
             "das Wetter ist wieder furchtbar", "habt ihr die Nachrichten gesehen?",
             "wer kommt Freitag mit zum Mittagessen?", "mein Akku ist gleich leer",
             "der Verkehr heute früh war schrecklich", "kaum zu glauben, dass schon {m} ist",
             "kennt jemand einen guten Klempner?", "endlich Freitag!", "der Film war überbewertet",
             "bin heute so müde", "bin gleich zurück", "klingt gut",
             "wir sollten bald grillen", "der Hund vom Nachbarn hat die ganze Nacht gebellt",
             "neue Folge kommt heute", "ist das Quiz noch am Donnerstag?", "Schirm wieder vergessen",
             "bis später", "die Bahn ist schon wieder ausgefallen", "gerade großen Hausputz gemacht",
             "denke über Urlaub im Warmen nach", "was für eine Woche", "Pizza heute Abend?"),
    openers=("ehrlich gesagt", "also", "übrigens", "Leute", "hm", "na ja", "boah", "sagt mal"),
    closers=("haha", "lol", "ehrlich", "😅", "!!", "echt", "schon wieder", "naja"),
)  # fmt: skip


ES = Book(
    lang="es",
    people=(
        Person("Lucía", "Люсия", "Lucía"),
        Person("Javier", "Хавьер", "Javier"),
        Person("Carmen", "Кармен", "Carmen"),
        Person("Diego", "Диего", "Diego"),
        Person("Sofía", "София", "Sofía"),
        Person("Pablo", "Пабло", "Pablo"),
        Person("Elena", "Елена", "Elena"),
        Person("Andrés", "Андрес", "Andrés"),
        Person("Marta", "Марта", "Marta"),
        Person("Raúl", "Рауль", "Raúl"),
    ),
    cities=(
        ("Valencia", "Valencia"), ("Bilbao", "Bilbao"), ("Granada", "Granada"),
        ("Zaragoza", "Zaragoza"), ("Málaga", "Málaga"), ("Salamanca", "Salamanca"),
        ("Oviedo", "Oviedo"), ("Cádiz", "Cádiz"), ("Murcia", "Murcia"), ("Vigo", "Vigo"),
    ),
    jobs=("enfermero", "programador", "maestro de primaria", "contable", "cocinero",
          "farmacéutico", "arquitecto", "conductor de autobús", "veterinario", "periodista"),
    pets=(("perro", "perro"), ("gato", "gato"), ("loro", "loro"), ("conejo", "conejo")),
    pet_names=("Canela", "Toby", "Rocky", "Luna", "Chispa", "Pelusa", "Coco", "Bruno"),
    hobbies=(
        Hobby(
            ("otra vez al rocódromo esta noche, tengo los antebrazos destrozados",
             "por fin encadené la vía del desplome en el rocódromo"),
            ("¿Le gustaría a {n} un día en un rocódromo?", "¿Qué regalo deportivo le va a {n}?"),
        ),
        Hobby(
            ("pasé todo el domingo trasplantando tomates y pimientos",
             "el huerto por fin da calabacines"),
            ("¿Quién del chat podría tener verduras frescas para compartir?",
             "¿Le gustaría a {n} un libro sobre plantas?"),
        ),
        Hobby(
            ("practiqué el violonchelo dos horas, la suite de Bach ya va saliendo",
             "el ensayo de la orquesta se alargó otra vez"),
            ("¿Apreciaría {n} entradas para un concierto de música clásica?",
             "¿Qué regalo musical le gustaría a {n}?"),
        ),
        Hobby(
            ("hice 60 km en bici por la costa esta mañana",
             "las cubiertas nuevas de la bici de carretera son otra cosa"),
            ("¿Le van a {n} los deportes de resistencia?", "¿Sería un maillot un buen regalo para {n}?"),
        ),
        Hobby(
            ("horneé pan de masa madre otra vez, la miga quedó perfecta",
             "mi masa madre ya tiene tres años"),
            ("¿Le gustaría a {n} un taller de panadería?", "¿Quién podría traer pan casero al picnic?"),
        ),
        Hobby(
            ("pinté una acuarela del puerto al atardecer", "compré pinceles y papel nuevos para pintar"),
            ("¿Disfrutaría {n} de una visita a una galería de arte?",
             "¿Qué material de manualidades se le podría regalar a {n}?"),
        ),
    ),
    allergies=("los cacahuetes", "el marisco", "los gatos", "el polen", "la penicilina", "el gluten"),
    trips=("Lisboa", "Kioto", "Islandia", "Marrakech", "Praga", "Canadá", "Creta", "Oporto"),
    events=(
        ("corrí mi primera media maratón", "correr una media maratón"),
        ("me comprometí", "comprometerse"),
        ("aprobé el examen de conducir", "aprobar el examen de conducir"),
        ("empecé un curso de cerámica", "empezar un curso de cerámica"),
        ("me sacaron la muela del juicio", "sacarse la muela del juicio"),
    ),
    cars=("un Seat León rojo", "un Volvo familiar viejo", "un Nissan Leaf", "un Mini Cooper"),
    studies=("japonés", "portugués", "guitarra", "lengua de signos", "italiano"),
    months=("enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto",
            "septiembre", "octubre", "noviembre", "diciembre"),
    says={
        "home": ("por cierto, vivo en {v}", "la vida en {v} es bastante tranquila",
                 "mi piso en {v} tiene un balcón diminuto"),
        "move": ("¡gran noticia, nos hemos mudado a {v}!", "cajas deshechas, ya vivimos oficialmente en {v}"),
        "job": ("trabajo de {v}", "turno largo hoy, ser {v} agota"),
        "job2": ("lo dejé, desde la semana que viene trabajo de {v}", "¡trabajo nuevo! ahora soy {v}"),
        "pet": ("mi {s} {v} volvió a morder mis zapatillas", "hoy adoptamos un {s}, se llama {v}"),
        "hobby": ("{v}",),
        "allergy": ("no puedo comer eso, soy alérgico a {v}", "mi alergia a {v} ha vuelto"),
        "sibling": ("mi hermana {v} consiguió trabajo de {j}", "mi hermano {v} trabaja de {j}"),
        "trip": ("acabo de volver de {v}, menudo viaje", "aterricé en {v}, la comida aquí es increíble"),
        "event": ("¡hoy {v}!", "qué felicidad, esta mañana {v}"),
        "car": ("me compré {v}, mi primer coche", "mi coche, {v}, se averió en la autopista"),
        "study": ("empecé clases de {v}", "los deberes de mi clase de {v} me están matando"),
    },
    asks={
        "home": ("¿Dónde vivía {n} antes de mudarse?", "¿En qué ciudad estaba {n} al principio?",
                 "¿En qué ciudad vivía {n} al principio?"),
        "move": ("¿Dónde vive {n} ahora?", "¿A qué ciudad se mudó {n}?",
                 "¿Adónde se ha mudado {n}?"),
        "job": ("¿A qué se dedica {n}?", "¿Cuál es la profesión de {n}?", "¿De qué trabaja {n}?"),
        "job2": ("¿Cuál es el nuevo trabajo de {n}?",),
        "pet": ("¿Cómo se llama la mascota de {n}?", "¿Qué animal tiene {n}?"),
        "allergy": ("¿A qué es alérgico {n}?", "¿Qué debería evitar {n}?"),
        "sibling": ("¿Cómo se llama el hermano o la hermana de {n}?", "¿A qué se dedica el hermano o la hermana de {n}?"),
        "trip": ("¿Adónde viajó {n} en {m}?", "¿De qué viaje volvió {n} en {m}?",
                 "¿Dónde aterrizó {n} en {m}?"),
        "event": ("¿Cuándo quiso {n} {v}?",),
        "car": ("¿Qué coche conduce {n}?",),
        "study": ("¿Qué está aprendiendo {n}?", "¿De qué empezó clases {n}?"),
        "multi_pet": ("¿Cómo se llama la mascota de la persona que vive en {c}?",),
        "multi_city": ("¿Dónde vive la persona que trabaja de {j}?",),
        "multi_sibling": ("¿De qué trabaja el hermano de la persona cuya mascota es {v}?",),
    },
    reactions=("{n} hala, ¿qué tal?", "¡qué bien {n}!", "{n} luego nos cuentas",
               "jaja {n} como siempre", "{n} ¡manda fotos!", "enhorabuena {n}"),
    chatter=("buenos días a todos", "¿alguien ve el partido esta noche?", "odio los lunes",
             "¿qué hacéis este finde?", "jajaja", "yo igual", "necesito un café",
             "otra vez hace un tiempo horrible", "¿habéis visto las noticias?",
             "¿quién se apunta a comer el viernes?", "me quedo sin batería",
             "el tráfico esta mañana fue horrible", "no me creo que ya sea {m}",
             "¿alguien conoce un buen fontanero?", "¡por fin viernes!", "la peli estaba sobrevalorada",
             "hoy estoy muy cansado", "ahora vuelvo", "me parece bien",
             "tenemos que hacer una barbacoa pronto", "el perro del vecino ladró toda la noche",
             "sale el episodio nuevo esta noche", "¿el quiz sigue siendo el jueves?",
             "otra vez me olvidé el paraguas", "hasta luego", "han vuelto a cancelar el tren",
             "acabo de hacer una limpieza enorme", "pensando en unas vacaciones al sol",
             "vaya semana", "¿pizza esta noche?"),
    openers=("la verdad", "bueno", "por cierto", "chicos", "mmm", "pues", "madre mía", "oye"),
    closers=("jaja", "jeje", "en serio", "😅", "!!", "otra vez", "vamos", "uf"),
)  # fmt: skip

BOOKS = {book.lang: book for book in (EN, RU, DE, ES)}
