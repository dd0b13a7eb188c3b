"""The train rows of round 6: the mechanisms the dev5 part (test5, scored once as held out,
then read) showed the rules missing, each written fresh in the fifteen languages of the split
(EN DE FR ES IT PT NL SV PL RU TR JA KO ZH AR), never a dev5 line: a security question's
answer after the question itself (in quotes, brackets or corner brackets) and a colon, an
"answer" word or a copula; a password after a shortened label in square brackets; a
password key glued into one word in a JSON or env paste — and their look-alikes: the question
without its answer, a bracketed note, a command line that asks for its password.

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
]


def rows(next_id: Callable[[str, bool], str]) -> Iterator[dict[str, object]]:
    """Every row of the batch (``next_id(lang, secret)`` numbers them after the earlier
    batches' rows)."""
    secrets: list[Secret] = [("security_answer", lang, t, [s]) for lang, t, s in SECURITY]
    secrets += [("password_bracketed", lang, t, [s]) for lang, t, s in BRACKETED]
    secrets += [("config_glued_key", lang, t, [s]) for lang, t, s in GLUED_KEYS]
    looks: list[Look] = [("round6", lang, text) for lang, text in LOOKS]
    yield from batch_rows("families4", next_id, secrets, looks)
