"""The train rows of round 6: the mechanisms the dev5 part (test5, scored once as held out,
then read) showed the rules missing, each written fresh in the fifteen languages of the split
(EN DE FR ES IT PT NL SV PL RU TR JA KO ZH AR), never a dev5 line: a security question's
answer after the question itself (in quotes, brackets or corner brackets) and a colon, an
"answer" word or a copula; a password after a shortened label in square brackets; a
password key glued into one word in a JSON or env paste; a code asked for in a chat and
answered by its digits and a few words (or after a CJK speaker's colon with no space); a
long message naming a key box or a lock, then its number a few words on — and their
look-alikes: the question without its answer, a bracketed note, a command line that asks
for its password, an answer that is a count or a year, a key box's price or room number.

Read by ``generate.py`` (batch ``families4``). Every value is made up.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from batch import Look, Secret, batch_rows  # type: ignore[import-not-found]  # the shared rows()

#: (lang, text, the secret): a security question, its question, then its one-word answer.
SECURITY: list[tuple[str, str, str]] = [
    ("en", "secret question (city where you were born): Vantrelo", "Vantrelo"),
    ("en", "Security Q 'favourite teacher' -> Morqualen", "Morqualen"),
    ("de", "Kontrollfrage (Lieblingslehrer) Antwort: Quarnebel", "Quarnebel"),
    ("de", "Geheimfrage »erstes Auto« = Velptrix", "Velptrix"),
    ("fr", "question secrète « ville de naissance » : Dromaliek", "Dromaliek"),
    ("fr", "question de sécurité (nom du premier animal) réponse : Taskovin", "Taskovin"),
    ("es", "pregunta de seguridad «nombre de tu primera mascota»: Yorbalen", "Yorbalen"),
    ("es", "pregunta secreta (ciudad natal) respuesta: Quelmorin", "Quelmorin"),
    ("it", "domanda segreta (città natale): Fenturlo", "Fenturlo"),
    ("it", "domanda di sicurezza «primo insegnante» risposta: Gavroneck", "Gavroneck"),
    ("pt", "pergunta secreta «nome do primeiro animal»: Zelmorra", "Zelmorra"),
    ("pt", "pergunta de segurança: cidade natal → Brunqueva", "Brunqueva"),
    ("nl", "geheime vraag (geboorteplaats): Kwintalo", "Kwintalo"),
    ("nl", "veiligheidsvraag 'eerste leraar' antwoord = Drobbelix", "Drobbelix"),
    ("sv", "hemlig fråga (första bilen): Vorbastik", "Vorbastik"),
    ("sv", "säkerhetsfråga 'favoritlärare' svar: Klemquist", "Klemquist"),
    ("pl", "pytanie bezpieczeństwa (miasto urodzenia): Wrostegal", "Wrostegal"),
    ("pl", 'pytanie kontrolne "nazwisko nauczyciela" odpowiedź: Grabelnik', "Grabelnik"),
    ("ru", "секретный вопрос (город рождения): Зовренка", "Зовренка"),
    ("ru", "контрольный вопрос «кличка собаки» ответ: Tarbuzik", "Tarbuzik"),
    ("uk", "контрольне питання (ім'я першого вчителя): Дремулька", "Дремулька"),
    ("tr", "gizli soru (doğduğun şehir): Karvelti", "Karvelti"),
    ("tr", "güvenlik sorusu 'ilk öğretmen' cevap: Dumrelik", "Dumrelik"),
    ("ja", "セキュリティ質問（生まれた町）：Horvadeki", "Horvadeki"),
    ("ja", "秘密の質問「好きな先生」→ Tamrivo", "Tamrivo"),
    ("ko", "비밀 질문 (태어난 도시): Morbelka", "Morbelka"),
    ("ko", "보안 질문 「첫 선생님」 답변: Kuzrelo", "Kuzrelo"),
    ("zh", "安全问题（出生城市）：Velgrado", "Velgrado"),
    ("zh", "密保问题「小学老师的名字」答：Sorbinka", "Sorbinka"),
    ("ar", "السؤال السري (مدينة الميلاد): Qarvelin", "Qarvelin"),
    ("ar", "سؤال الامان 'اسم المعلم الأول' الجواب: Dormatek", "Dormatek"),
]

#: (lang, text, the secret): an answer named secret, the two words side by side.
SECRET_ANSWERS: list[tuple[str, str, str]] = [
    ("en", "hidden answer = Quorvelin", "Quorvelin"),
    ("tr", "gizli cevap: Morkanelli", "Morkanelli"),
    ("ko", "비밀 답변: Harvonelli", "Harvonelli"),
    ("ar", "الإجابة السرية: Morvikello", "Morvikello"),
    ("sv", "säkerhetssvar: Talvikonne", "Talvikonne"),
]

#: (lang, text, the secret): a word for access or credentials, a colon or an arrow, and one
#: generated value closing the line.
ACCESS: list[tuple[str, str, str]] = [
    ("en", "streaming creds: Vq7!marlo9", "Vq7!marlo9"),
    ("de", "Netflix-Zugang: Hopsi#4471", "Hopsi#4471"),
    ("fr", "accès box : Trq8*lumen", "Trq8*lumen"),
    ("es", "acceso del router: Mzp4!quena", "Mzp4!quena"),
    ("it", "accesso wifi ospiti -> Gal9#tremo", "Gal9#tremo"),
    ("pt", "acesso do painel: Lub7!terra", "Lub7!terra"),
    ("nl", "toegang nas: Wrk5#dolmen", "Wrk5#dolmen"),
    ("sv", "inloggning förrådsdatorn: Fjq3!snor", "Fjq3!snor"),
    ("pl", "dostęp do panelu: Krt6#wiosna", "Krt6#wiosna"),
    ("ru", "доступ к админке: Vlx8!zima", "Vlx8!zima"),
    ("tr", "giriş bilgisi: Ymr2#deniz", "Ymr2#deniz"),
    ("ja", "ログイン情報：Hnk5!sora", "Hnk5!sora"),
    ("ko", "로그인 정보: Bdl7#hana", "Bdl7#hana"),
    ("zh", "登录信息：Qin3!shan", "Qin3!shan"),
    ("ar", "بيانات الدخول: Kmr4#bahr", "Kmr4#bahr"),
]

#: (lang, text, the secret): a shortened password label, its value in square brackets.
BRACKETED: list[tuple[str, str, str]] = [
    ("en", "forum acct: user maple_k / pw [Trolq84#x]", "Trolq84#x"),
    ("de", "Forum: Nutzer elch12, Kennwort: [Hafru22!]", "Hafru22!"),
    ("fr", "forum : pseudo lila / mdp : [Vorte55?]", "Vorte55?"),
    ("it", "forum: utente gatto9 / pass: [xQ7mZpL2w]", "xQ7mZpL2w"),
    ("pt", "fórum: usuário lua / senha [Brito81#]", "Brito81#"),
    ("nl", "forum: gebruiker vos / ww: [Kibbel42!]", "Kibbel42!"),
    ("pl", "forum: login kot / hasło [Pradu77?]", "Pradu77?"),
    ("tr", "forum: kullanıcı kedi / şifre [Yorku19!]", "Yorku19!"),
    ("ko", "포럼 아이디: nabi7 / 비번: [Qelm93!k]", "Qelm93!k"),
    ("zh", "论坛 账号: xiaolu / 密码: [Tusk52#w]", "Tusk52#w"),
    ("ar", "المنتدى: المستخدم rami / كلمة السر [Zahr61!]", "Zahr61!"),
]

#: (lang, text, the secret): a password key glued into one word in a pasted JSON or env.
GLUED_KEYS: list[tuple[str, str, str]] = [
    (
        "de",
        '{"benutzer": "kiosk_ost", "kennwort": "Larm4471?", "host": "mail.example.de"}',
        "Larm4471?",
    ),
    ("es", '{"usuario": "bar_sol", "contrasena": "Pelu8812!"}', "Pelu8812!"),
    ("pt", '{"usuario": "loja_ze", "senha": "Tomb5530#"}', "Tomb5530#"),
    ("nl", '{"gebruiker": "bakker_jan", "wachtwoord": "Knol7720?"}', "Knol7720?"),
    ("sv", '{"anvandare": "cafe_ost", "losenord": "Mysk4410!"}', "Mysk4410!"),
    ("pl", '{"uzytkownik": "sklep_ala", "haslo": "Zubr3381?"}', "Zubr3381?"),
    ("tr", '{"kullanici": "firin_ali", "sifre": "Kuzu6619!"}', "Kuzu6619!"),
    ("it", '{"utente": "bar_roma", "parolachiave": "Orso2290?"}', "Orso2290?"),
    ("fr", '{"login": "gite_mer", "motdepasse": "Galet9043!", "port": 993}', "Galet9043!"),
    ("fr", "MOTDEPASSE=Sable7714?", "Sable7714?"),
    ("fr", "MOT_DE_PASSE=Galet5520!", "Galet5520!"),
    ("pt", '{"utilizador": "loja", "palavra_passe": "Rio8833#"}', "Rio8833#"),
]

#: (lang, text, the secret): a code asked for in a chat, answered by its digits and a few
#: words, or by a speaker written in a script without spaces and no space after the colon.
CHAT_ANSWERS: list[tuple[str, str, str]] = [
    ("en", "Sam: what's the gate code?\nLiv: 6618 then push hard", "6618"),
    ("de", "Jonas: wie ist der Torcode?\nMia: 7304 und dann drücken", "7304"),
    ("fr", "Hugo : c'est quoi le digicode ?\nZoé : 5821 puis la porte", "5821"),
    ("es", "Leo: ¿cuál es el código del portal?\nAna: 3390 y empuja", "3390"),
    ("pt", "Rui: qual é o código do portão?\nBia: 4472 e empurra", "4472"),
    ("nl", "Bram: wat is de deurcode?\nNoor: 9015 en dan duwen", "9015"),
    ("sv", "Oskar: vad är portkoden?\nElsa: 2287 sen dra", "2287"),
    ("pl", "Kuba: jaki jest kod do bramy?\nOla: 6649 i pchnij", "6649"),
    ("ru", "Макс: какой код от домофона?\nАня: 1538 и толкай", "1538"),
    ("tr", "Emre: kapı kodu ne?\nZeynep: 8826 sonra it", "8826"),
    ("ja", "母：玄関の暗証番号なんだっけ？\n息子：3047", "3047"),
    ("zh", "妈妈：门禁码多少？\n儿子：5912", "5912"),
    ("ko", "엄마：현관 비밀번호 뭐였지?\n아들：7730", "7730"),
]

#: (lang, text, the secret): a long message naming a key box, a lock or a padlock, then its
#: number a few words on.
LOCK_NUMBERS: list[tuple[str, str, str]] = [
    (
        "en",
        "hi all, we're away till Sunday, spare key is in the lockbox by the shed, the number is 4719, thanks for feeding the cat",
        "4719",
    ),
    (
        "de",
        "Hallo zusammen, der Schlüssel hängt im Schlüsselkasten am Zaun, die Nummer ist 5830, danke fürs Gießen",
        "5830",
    ),
    (
        "de",
        "Fahrrad steht hinten, mit dem Zahlenschloss 3161 abgeschlossen, bitte wieder zumachen",
        "3161",
    ),
    (
        "fr",
        "coucou, la clé est dans la boîte à clés près de la porte, le code c'est 8294, merci pour les plantes",
        "8294",
    ),
    (
        "es",
        "hola vecinos, la llave está en el candado de la valla, combinación 6027, gracias por regar",
        "6027",
    ),
    (
        "it",
        "ciao, la chiave è nel lucchetto a combinazione sul cancello, numero 4418, grazie mille",
        "4418",
    ),
    (
        "nl",
        "hoi buren, sleutel ligt in het sleutelkastje bij de deur, het nummer is 7352, bedankt!",
        "7352",
    ),
    (
        "sv",
        "hej grannar, nyckeln ligger i nyckelboxen vid dörren, koden är 2940, tack för hjälpen",
        "2940",
    ),
    (
        "pl",
        "cześć, klucz jest w skrytce na klucze przy furtce, numer to 5186, dzięki za podlewanie",
        "5186",
    ),
    ("ru", "привет соседи, ключ в ключнице у двери, номер 9073, спасибо что поливаете", "9073"),
    (
        "tr",
        "merhaba komşular, anahtar kapının yanındaki anahtar kutusunda, numarası 6631, teşekkürler",
        "6631",
    ),
    (
        "ja",
        "皆さんへ　来週は留守にします。合鍵はキーボックスにあって、番号は 7185 です。よろしくお願いします",
        "7185",
    ),
    (
        "ko",
        "이웃분들께 다음 주에 집을 비워요 열쇠는 키박스에 넣어뒀고 번호는 4093 입니다 부탁드려요",
        "4093",
    ),
    ("zh", "邻居们好，我们下周出门，钥匙在钥匙盒里，号码是 8820，麻烦帮忙浇花，谢谢", "8820"),
    ("ar", "مرحبا يا جيران، المفتاح في صندوق المفاتيح عند الباب، الرقم 3574، شكرا لكم", "3574"),
    ("en", "the padlock on the garden shed opens with 8816, shut it after", "8816"),
    ("nl", "het hangslot van de fietsenstalling: 6190, graag weer dichtdoen", "6190"),
    ("sv", "kodlåset på förrådet är 4273 om ni behöver stegen", "4273"),
    ("ar", "قفل المخزن رقمه 9461 لو احتجتم السلم", "9461"),
]

LOOKS: list[tuple[str, str]] = [
    ("en", "security question (city where you were born): I never set one"),
    ("en", "what was my security question again? the first pet one?"),
    ("de", "Sicherheitsfrage: Name des ersten Haustiers"),
    ("fr", "question secrète : ville de naissance ?"),
    ("es", "pregunta de seguridad: nombre de tu primera mascota"),
    ("it", "domanda di sicurezza: città natale"),
    ("pt", "pergunta de segurança (nome da primeira escola): esqueci"),
    ("nl", "beveiligingsvraag: naam eerste huisdier"),
    ("sv", "säkerhetsfrågan är dum, byt den"),
    ("pl", "pytanie pomocnicze: imię pierwszego zwierzaka"),
    ("ru", "контрольный вопрос: девичья фамилия матери"),
    ("tr", "güvenlik sorusu: ilk evcil hayvanın adı"),
    ("ja", "秘密の質問：最初のペットの名前"),
    ("ko", "보안 질문: 첫 반려동물 이름"),
    ("zh", "密保问题：第一只宠物的名字"),
    ("ar", "سؤال الأمان: اسم أول حيوان أليف"),
    ("en", "the quiz question (capital of Peru): Lima"),
    ("de", "Quizfrage (Hauptstadt von Peru): Lima"),
    ("en", "forum: user maple_k / pw [ask me]"),
    ("en", "pw [see vault]"),
    ("en", "run `mysql -u root -p` and type it at the prompt"),
    ("de", "gib `mysql -u admin -p shop` ein, dann fragt er nach dem Passwort"),
    ("en", "`psql -U postgres -W` prompts for it"),
    ("fr", "lance `mysqldump -u root -p` puis tape le mot de passe"),
    ("en", '{"user": "kiosk", "passwordHint": "your dog"}'),
    ("de", '{"benutzer": "kiosk_ost", "kennwort": "", "host": "mail.example.de"}'),
    ("en", "the answer: Lima"),
    ("en", "access: read-only"),
    ("en", "login: anna.k"),
    ("de", "Zugang: über den Hintereingang"),
    ("fr", "accès : 24h/24"),
    ("ru", "доступ: admin"),
    ("en", "creds: in the vault"),
    ("en", "access: Room4B"),
    ("de", "Antwort: Berlin"),
    ("en", "secret answer: forgot"),
    ("ko", "답변: 내일 갈게요"),
    ("en", "Sam: what's the gate code?\nLiv: 2 sec, looking"),
    ("en", "Sam: what's the gate code?\nLiv: 1500 people got it already"),
    ("de", "Jonas: wie ist der Torcode?\nMia: 2024 geändert, frag Tom"),
    ("ja", "母：郵便番号なんだっけ？\n息子：1500001"),
    ("zh", "妈妈：快递单号多少？\n儿子：SF1234567890"),
    ("en", "the lockbox by the shed is the one from 2019, the number is on the lid"),
    ("de", "der Schlüsselkasten hat 4 Haken, Nummer 12 ist für die Garage"),
    ("ja", "キーボックスは玄関の横です。部屋番号は 302 です"),
    ("ko", "키박스는 문 옆에 있어요 호수는 302 입니다"),
    ("fr", "la boîte à clés coûte 2990 euros chez le serrurier"),
    ("ru", "ключница стоит 1500 рублей"),
    ("en", "the padlock on the shed is from 2019, ask me for the code"),
    ("sv", "kodlåset är trasigt sedan 2021"),
]


def rows(next_id: Callable[[str, bool], str]) -> Iterator[dict[str, object]]:
    """Every row of the batch (``next_id(lang, secret)`` numbers them after the earlier
    batches' rows)."""
    secrets: list[Secret] = [("security_answer", lang, t, [s]) for lang, t, s in SECURITY]
    secrets += [("security_answer", lang, t, [s]) for lang, t, s in SECRET_ANSWERS]
    secrets += [("access_value", lang, t, [s]) for lang, t, s in ACCESS]
    secrets += [("password_bracketed", lang, t, [s]) for lang, t, s in BRACKETED]
    secrets += [("config_glued_key", lang, t, [s]) for lang, t, s in GLUED_KEYS]
    secrets += [("chat_code_answer", lang, t, [s]) for lang, t, s in CHAT_ANSWERS]
    secrets += [("lock_number", lang, t, [s]) for lang, t, s in LOCK_NUMBERS]
    looks: list[Look] = [("round6", lang, text) for lang, text in LOOKS]
    yield from batch_rows("families4", next_id, secrets, looks)
