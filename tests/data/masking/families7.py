"""The train rows of round 9: the concepts the dev8 part (test8, scored once as held out, then
read) showed the rules missing or over-reaching, each written fresh in several of the fifteen
languages of the split (EN DE FR ES IT PT NL SV PL RU TR JA KO ZH AR), never a dev8 line:

- a code adorned with a keypad's keys (``#…#``, ``*…#``, ``…#``; one key beside a gate's, a
  lock's or a code's word);
- a gate's, a barrier's, a padlock's, a lock's or a key box's number standing bare after its
  noun in its sentence, and what makes such a number no code (a time, a year, an address, a
  size, a price, an airport's gate);
- a user, then a transliterated "pass" (``يوزر … باس …``, ``юзер … пасс …``, ``유저 … 패스 …``);
  a ``user / password`` pair whose value is generated, whatever names the account;
- a one-time code's label, a clause after a comma, then the digits after a colon;
- a label restated after a comma by a pronoun and its copula ("…, it's …", "…, c'est …");
- a provider key glued to CJK text or a particle, a PIN before a full-width comma;
- recovery codes named in RU, JA, AR; an Amex grouped 4-6-5 and its CID;
- and the look-alikes that over-reached: a phone number on a line about passwords, a release
  named before "is safe".

``FRESH`` to ``FRESH4`` are the four sets written afterwards as a blind author
might (scored before their fixes: see ``docs/benchmarks.md``, "Round 9").

Read by ``generate.py`` (batch ``families7``). Every value is made up.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from batch import Look, Secret, batch_rows  # type: ignore[import-not-found]  # the shared rows()

#: (category, lang, text, the secret).
SECRETS: list[tuple[str, str, str, str]] = [
    ("door_code", "en", "the bin store keypad takes 6613# now", "6613#"),
    ("door_code", "de", "Fahrradkeller: *40917# eintippen geht auch ohne Karte", "*40917#"),
    ("door_code", "fr", "local poubelles : #3381#, merci de refermer", "#3381#"),
    ("door_code", "es", "el candado del trastero es 71540 desde hoy", "71540"),
    ("door_code", "it", "il cancello del parcheggio 60372, chiudetelo", "60372"),
    ("door_code", "pt", "o cadeado do cacifo agora é 29047", "29047"),
    ("door_code", "nl", "het hek van de volkstuin 83310, niet doorgeven", "83310"),
    ("door_code", "sv", "kodlåset på cykelrummet 47129", "47129"),
    ("door_code", "pl", "szlaban na parking 60419*", "60419*"),
    ("door_code", "ru", "шлагбаум во дворе 80327", "80327"),
    ("door_code", "tr", "asma kilit 39104, dolabı kilitleyin", "39104"),
    ("door_code", "ja", "倉庫の南京錠 57219、使ったら戻して", "57219"),
    ("door_code", "ko", "자전거 보관소 자물쇠 68810", "68810"),
    ("door_code", "zh", "车库门禁 *37720#，别告诉外人", "*37720#"),
    ("door_code", "ar", "قفل الخزانة 91430 لا تعطيه لأحد", "91430"),
    ("password", "ar", "يوزر root باس Wq5_hLmz9e للراوتر", "Wq5_hLmz9e"),
    ("password", "ja", "ユーザー guest パス Vo4.kTpmRx", "Vo4.kTpmRx"),
    ("password", "en", "shared netflix: famflix / Ocean!42tq", "Ocean!42tq"),
    ("password", "pl", "konto na allegro: sklep7 / Lipa+19rTz", "Lipa+19rTz"),
    ("otp", "sv", "verifieringskod från banken, kom nyss: 418026", "418026"),
    ("otp", "en", "sms code from the airline, just landed in my inbox: 904417", "904417"),
    ("security_answer", "en", "memorable answer for the pension site, it's Rover1988", "Rover1988"),
    ("security_answer", "fr", "la question secrète, c'est Minou2011", "Minou2011"),
    (
        "api_key",
        "zh",
        "token是ghp_Lm4Qx8Tr2Vw9Kz1Nb7Yc3Hd6Fj0Gs5Pe2Ra，别传",
        "ghp_Lm4Qx8Tr2Vw9Kz1Nb7Yc3Hd6Fj0Gs5Pe2Ra",
    ),
    ("pin", "zh", "收银机PIN是4471，别告诉客人", "4471"),
    (
        "recovery_code",
        "ru",
        "коды для восстановления почты: k3p9-x2qa m7rt-a9zd",
        "k3p9-x2qa m7rt-a9zd",
    ),
    ("card", "de", "Amex 3782 822463 10005 Prüfziffer 7741", "3782 822463 10005"),
]
LOOKS: list[tuple[str, str]] = [
    ("en", "never text a password; ring the office on +44 161 496 0018"),
    ("de", "Passwörter nie per Chat, bitte anrufen: +49 89 2180 5570"),
    ("nl", "stuur geen wachtwoord, bel +31 20 794 3310"),
    ("en", "v3.1.4 is safe to install"),
    ("en", "boarding at gate 31, flight LX1664"),
    ("en", "the gate closes at 1945"),
    ("de", "das Tor wurde 1791 gebaut"),
    ("fr", "le portail mesure 4000 mm"),
    ("es", "el candado cuesta 1290 pesos"),
    ("it", "cancello nr 1203 del porto"),
    ("ru", "замок построен в 1820"),
    ("ja", "ゲートは1830に閉まります"),
    ("zh", "门禁系统 2021 年更新"),
    ("en", "bug #4412 and order #558120"),
    ("en", "**2024** recap, *1500* views"),
    ("en", "dial *100# for balance"),
    ("en", "Ctrl+Z / Ctrl+Y undo and redo"),
    ("en", "the password, it's too long to type"),
]
#: The first set written as a blind author might, scored before its fixes.
FRESH: list[tuple[str, str, str, str]] = [
    ("door_code", "en", "bike shed keypad: 4417# then pull hard", "4417#"),
    ("door_code", "en", "allotment gate combo *20731# (new since sunday)", "*20731#"),
    ("door_code", "de", "Gartentor geht mit *7712# auf, bitte zumachen", "*7712#"),
    ("door_code", "fr", "digicode du local vélos : #6620#", "#6620#"),
    ("door_code", "es", "el candado de la bodega ahora es 93017", "93017"),
    ("door_code", "it", "lucchetto della cantina: 55128, non perderlo", "55128"),
    ("door_code", "pt", "cadeado do depósito agora é 48812", "48812"),
    ("door_code", "nl", "het hangslot van de schuur is 7391", "7391"),
    ("door_code", "sv", "hänglåset på förrådet är 60418 nu", "60418"),
    ("door_code", "pl", "kłódka od piwnicy: 20946", "20946"),
    ("door_code", "ru", "калитка во двор 58301#, не забудьте закрыть", "58301#"),
    ("door_code", "tr", "bahçe kapısı *6621#, köpeğe dikkat", "*6621#"),
    ("door_code", "ja", "駐輪場のゲートは#4410#です", "#4410#"),
    ("door_code", "ko", "창고 자물쇠 번호 72019 입니다", "72019"),
    ("door_code", "zh", "仓库挂锁 63310，用完锁好", "63310"),
    ("door_code", "ar", "قفل المخزن الجديد 84120", "84120"),
    ("door_code", "en", "the barrier at the staff car park is 2291*", "2291*"),
    ("door_code", "de", "Schranke Mitarbeiterparkplatz 50773", "50773"),
    ("pin", "en", "server room maglock override: 660142", "660142"),
    ("password", "ru", "юзер admin пасс Ql8.vPnrtX на роутере", "Ql8.vPnrtX"),
    ("password", "ko", "유저 admin 패스 Hx7_kaLm2q 공유기", "Hx7_kaLm2q"),
    ("password", "tr", "kullanıcı admin şifre Tk9!mozRe yazıcıda", "Tk9!mozRe"),
    ("password", "es", "usuario admin clave Pq4_ruvXe en la impresora", "Pq4_ruvXe"),
    ("password", "de", "das konto vom kassenwart: kw2024 / Tanne#88kl", "Tanne#88kl"),
    ("password", "fr", "compte steam du club : clubfr / Rivage+91kt", "Rivage+91kt"),
    ("password", "en", "ps: guild bank alt is bankalt7 / Qm!84xTrz", "Qm!84xTrz"),
    ("otp", "en", "one-time code from the bank, came just now: 448201", "448201"),
    ("otp", "de", "Bestätigungscode von der Post, gerade gekommen: 730955", "730955"),
    ("otp", "fr", "code de vérification de la banque, reçu à l'instant : 552918", "552918"),
    ("otp", "es", "código de verificación del banco, acaba de llegar: 910377", "910377"),
    ("otp", "it", "codice di verifica della banca, appena arrivato: 684102", "684102"),
    ("security_answer", "en", "bank wants the memorable word, it's Marigold77", "Marigold77"),
    ("security_answer", "de", "die Sicherheitsantwort, das ist Bello1999", "Bello1999"),
    (
        "api_key",
        "ja",
        "APIキーはghp_T4nxQe1vLm8sWc2Zr9YpKd3uJh6BfA0oNi7g です",
        "ghp_T4nxQe1vLm8sWc2Zr9YpKd3uJh6BfA0oNi7g",
    ),
    (
        "api_key",
        "zh",
        "令牌是xoxb-2291847721-Vq8mTnRk2LpWz，别外传",
        "xoxb-2291847721-Vq8mTnRk2LpWz",
    ),
    (
        "api_key",
        "ko",
        "키는hf_Pq7Lm2Vx9Rt4Kw8Zn3Bc6Yd1Fg5Hj0Qs요",
        "hf_Pq7Lm2Vx9Rt4Kw8Zn3Bc6Yd1Fg5Hj0Qs",
    ),
    (
        "several_secrets",
        "en",
        "handover: a) bins tuesday b) key safe by the back door 40719 c) wifi Orchid_Tea42",
        "40719",
    ),
    (
        "several_secrets",
        "nl",
        "overdracht: 1) sleutelkluis achterdeur *8812# 2) wifi Tulp_Regen55",
        "*8812#",
    ),
    (
        "card",
        "en",
        "amex for the deposit 3714 496353 98431 and 8842 on the back",
        "3714 496353 98431",
    ),
]
FRESH_LOOKS: list[tuple[str, str]] = [
    ("en", "order #48213 shipped, tracking to follow"),
    ("en", "see bug #2291 and PR #2304"),
    ("en", "flight BA2490 boards at gate 22 at 1430"),
    ("en", "the gate closes at 2230 on weekdays"),
    ("de", "Tor 2 öffnet um 0800, Einlass ab 0730"),
    ("fr", "le portail a été repeint en 2019"),
    ("es", "el candado cuesta 1299 pesos"),
    ("it", "il cancello è largo 3500 mm"),
    ("pt", "o portão fica na rua 1820"),
    ("nl", "het hek is 1200 cm breed"),
    ("sv", "grinden målades 2021"),
    ("pl", "brama nr 12, hala 3"),
    ("ru", "ворота закрываются в 2300"),
    ("tr", "kapı 14 numara, kat 3"),
    ("ja", "ゲート12から2024年に出発"),
    ("ko", "게이트 23번 탑승 1430"),
    ("zh", "登机口在 B12，1430 起飞"),
    ("ar", "البوابة رقم 12 تفتح الساعة 1430"),
    ("en", "**1500** people came, *2024* was a good year"),
    ("en", "dial *100# to check your balance"),
    ("en", "price 1999* (*excl. VAT)"),
    ("en", "never share your password, call the helpdesk on +44 20 7946 0958"),
    ("de", "Passwort vergessen? Ruf an: +49 30 901820 44"),
    ("fr", "mot de passe perdu : appelez le +33 1 42 68 53 00"),
    ("es", "si olvidas la contraseña llama al +34 912 345 678"),
    ("en", "Ctrl+C / Ctrl+V works, Cmd+C / Cmd+V on mac"),
    ("en", "upgrade from v2.3.1 / v2.4.0-rc1 is safe"),
    ("en", "the ratio is 3:2 / 16:9 on the projector"),
    ("en", "I forgot the password, it's annoying"),
    ("fr", "le mot de passe, c'est toujours la galère"),
    ("en", "the verification code, it expired: 10 minutes is too short"),
    ("en", "key是什么意思？"),
    ("ja", "キーは玄関の横です"),
    ("en", "padlock is in the drawer, the blue one"),
    ("de", "das Schloss Neuschwanstein wurde 1869 begonnen"),
]
#: The second set written as a blind author might, scored before its fixes.
FRESH2: list[tuple[str, str, str, str]] = [
    ("door_code", "en", "storage unit 14 — keypad is 7720#, don't let the kids see", "7720#"),
    ("door_code", "en", "new code for the side gate: *1983#", "*1983#"),
    ("door_code", "de", "Vorhängeschloss Kellerabteil jetzt 38420", "38420"),
    ("door_code", "fr", "le cadenas du vestiaire c'est 48219 maintenant", "48219"),
    ("door_code", "es", "portón del garaje comunitario #55021*", "#55021*"),
    ("door_code", "it", "cancello del cortile: #8830, chiudete sempre", "#8830"),
    ("door_code", "pt", "portão da garagem #44719* e depois empurra", "#44719*"),
    ("door_code", "nl", "poort achter de school 92016#", "92016#"),
    ("door_code", "sv", "grinden vid förskolan *3307*", "*3307*"),
    ("door_code", "pl", "furtka na działkę 88102#", "88102#"),
    ("door_code", "ru", "замок на сарае теперь 70194", "70194"),
    ("door_code", "tr", "depo kilidi yeni şifre değil, kod 99017#", "99017#"),
    ("door_code", "ja", "物置の南京錠は 60913 に変更", "60913"),
    ("door_code", "ko", "공동현관 *4482# 누르고 들어오세요", "*4482#"),
    ("door_code", "zh", "小区门禁 *6602#，快递放门口", "*6602#"),
    ("door_code", "ar", "البوابة الخلفية #77105# للموظفين فقط", "#77105#"),
    ("password", "ar", "اليوزر admin والباس Hq7-uvNe3k", "Hq7-uvNe3k"),
    ("password", "ja", "ユーザーID taro パスワード Km3_pvRxe9", "Km3_pvRxe9"),
    ("password", "zh", "用户 admin 密码 Xo9!qeLt2w", "Xo9!qeLt2w"),
    ("password", "it", "account del negozio: cassa3 / Mela?55Rgt", "Mela?55Rgt"),
    ("password", "sv", "inlogg till skrivaren: kontor / Ekorre#71x", "Ekorre#71x"),
    ("otp", "ru", "код из смс от банка, только пришёл: 530812", "530812"),
    ("otp", "tr", "doğrulama kodu bankadan, az önce geldi: 771204", "771204"),
    ("otp", "nl", "verificatiecode van de bank, net binnen: 210945", "210945"),
    ("otp", "pt", "código de verificação do banco, chegou agora: 389102", "389102"),
    ("security_answer", "es", "la respuesta de seguridad, eso es Toby2010", "Toby2010"),
    ("security_answer", "ru", "ответ на секретный вопрос, это Barsik2012", "Barsik2012"),
    (
        "api_key",
        "zh",
        "API密钥是sk-ant-api03-Vx8qLmT2pRw9Kz4Nb7Yc1Hd6Fj3Gs0，别提交",
        "sk-ant-api03-Vx8qLmT2pRw9Kz4Nb7Yc1Hd6Fj3Gs0",
    ),
    ("api_key", "ja", "トークンはglpat-Qx7mVt2LpRw9Kz4Nb7Yc1です", "glpat-Qx7mVt2LpRw9Kz4Nb7Yc1"),
    ("pin", "en", "laptop boot pin for the reception pc is 5520, not 1234", "5520"),
]
FRESH2_LOOKS: list[tuple[str, str]] = [
    ("en", "#2024 was great, #1999 too"),
    ("en", "call *611 from your phone for support"),
    ("en", "the gate number changed to 14, boarding 0945"),
    ("en", "the padlock was made in 1998"),
    ("de", "das Tor ist 2500 mm hoch"),
    ("fr", "portail n° 1420, rue des Lilas"),
    ("es", "la verja mide 1800 cm"),
    ("it", "il lucchetto costa 1490 centesimi"),
    ("pt", "o cadeado custa R$ 2990"),
    ("nl", "de poort is sinds 2018 dicht"),
    ("sv", "grinden kostade 4500 kr"),
    ("pl", "szlaban otwierany od 0600"),
    ("ru", "калитка покрашена в 2021 году"),
    ("tr", "kapı 2300'de kapanıyor"),
    ("ja", "ゲートは2230に閉まる"),
    ("ko", "게이트는 2230에 닫혀요"),
    ("zh", "门禁系统 2019 年安装"),
    ("ar", "البوابة تغلق الساعة 2230"),
    ("en", "in markdown, *3000* stays bold and #4421 is a heading tag"),
    ("en", "the password policy: call IT at +1 415 555 0172 if locked out"),
    ("pl", "hasło zapomniane? dzwoń +48 22 123 45 67"),
    ("it", "password persa: chiama il +39 02 1234 5678"),
    ("en", "he/she / they/them are fine"),
    ("en", "rate limit: 100 req / 60s per key"),
    ("en", "the key, it's in the drawer"),
    ("de", "der Schlüssel, das ist doch klar"),
    ("en", "user guide / README.md has it"),
    ("en", "version 3.12.1 / 3.13.0rc2 both pass"),
]

#: The third set written as a blind author might (holiday rentals, church halls, shops' closing
#: lists), scored before its fixes.
FRESH3: list[tuple[str, str, str, str]] = [
    (
        "door_code",
        "en",
        "airbnb check-in: lockbox by the bins, code 5821, door sticks a bit",
        "5821",
    ),
    ("door_code", "en", "coworking night entry: keypad 402917 then push", "402917"),
    ("door_code", "en", "the bike lock combo is 0-4-7-2", "0-4-7-2"),
    ("door_code", "de", "Ferienwohnung: Schlüsseltresor neben der Tür, Kombination 3917", "3917"),
    ("door_code", "fr", "gîte : boîte à clés à droite du portail, 7741", "7741"),
    ("door_code", "es", "apartamento: la caja de llaves está junto al buzón, 2049", "2049"),
    ("door_code", "it", "casa vacanze: cassetta chiavi accanto al cancello, codice 6610", "6610"),
    ("door_code", "pt", "alojamento: cofre de chaves ao lado da porta 9137#", "9137#"),
    ("door_code", "nl", "vakantiehuis: sleutelkastje naast de deur 4172", "4172"),
    ("door_code", "sv", "stugan: nyckelboxen vid dörren 8820", "8820"),
    ("door_code", "pl", "domek: sejf na klucze przy drzwiach 5530", "5530"),
    ("door_code", "ru", "квартира посуточно: ключница у двери, 3308", "3308"),
    ("door_code", "tr", "ev: anahtar kutusu kapının yanında, 7204", "7204"),
    ("door_code", "ja", "民泊：キーボックスはポストの横、4419", "4419"),
    ("door_code", "ko", "숙소: 키박스는 우편함 옆 6631", "6631"),
    ("door_code", "zh", "民宿：钥匙盒在信箱旁边 8802", "8802"),
    ("door_code", "ar", "الشقة: صندوق المفاتيح بجانب الباب 5067", "5067"),
    ("alarm", "en", "church hall alarm: punch 2580 then OFF within 30s", "2580"),
    ("alarm", "de", "Alarm im Vereinsheim: 4712 und dann AUS", "4712"),
    ("pin", "en", "gym locker 212 uses pin 8861", "8861"),
    ("password", "en", "camper van wifi: VanLife_2291 (no spaces)", "VanLife_2291"),
    ("password", "fr", "identifiants de l'imprimante : admin / Toner#4471k", "Toner#4471k"),
    ("password", "es", "el login del tpv es caja1 y la clave Tpv!8830q", "Tpv!8830q"),
    ("otp", "en", "use 739201 to finish signing in (don't share it)", "739201"),
    ("otp", "de", "Ihr Anmeldecode lautet 480193", "480193"),
    ("otp", "ja", "認証コードは 520913 です。他人に教えないでください", "520913"),
    ("security_answer", "en", "mum's maiden name for the bank thing = Kowalczyk", "Kowalczyk"),
    (
        "api_key",
        "en",
        "stripe key for the shop sk_live_4eC39HqLyjWDarjtT1zdp7dc, rotate monday",
        "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
    ),
    (
        "api_key",
        "ko",
        "토큰은ghp_Ab3Cd4Ef5Gh6Ij7Kl8Mn9Op0Qr1St2Uv3Wx4Y이에요",
        "ghp_Ab3Cd4Ef5Gh6Ij7Kl8Mn9Op0Qr1St2Uv3Wx4Y",
    ),
    (
        "several_secrets",
        "en",
        "closing list: safe 30417, till drawer 2291#, alarm 8802, wifi Bakery_Oven77",
        "30417",
    ),
]
FRESH3_LOOKS: list[tuple[str, str]] = [
    ("en", "check-in after 1500, checkout by 1100"),
    ("en", "locker 212 is next to the showers"),
    ("en", "the lockbox costs 3499 cents on amazon"),
    ("en", "keypad model KP-4410 needs 4 AA batteries"),
    ("en", "gate 4172 at the port is for trucks"),
    ("de", "Schlüsseltresor Modell 3917 bestellt"),
    ("fr", "le portail fait 4000 mm de large"),
    ("es", "la caja de llaves mide 1200 mm"),
    ("it", "cancello aperto dalle 0800 alle 2000"),
    ("pt", "a porta 12 do prédio 1820"),
    ("nl", "deur 4 van gebouw 1203"),
    ("sv", "dörren till rum 4410"),
    ("pl", "drzwi 12, piętro 3, budynek 1990"),
    ("ru", "дверь 14, подъезд 3, дом 1952 года"),
    ("tr", "kapı 12, blok 3"),
    ("ja", "キーボックスは2019年に設置"),
    ("ko", "키박스 2019년 설치"),
    ("zh", "钥匙盒 2019 年装的"),
    ("ar", "الباب رقم 12 في المبنى 1820"),
    ("en", "the alarm is set for 0630 tomorrow"),
    ("en", "order #40291* ships friday"),
    ("en", "score was 2-1, then 3-3"),
    ("en", "call me on +1 212 555 0147 about the wifi password"),
    ("en", "use promo code 4471 at checkout"),
    ("en", "bus 4172 leaves from gate 3"),
]

#: The fourth set written as a blind author might (doors and entrances joined to their digits,
#: and what such a line says when it is no code), scored before its fixes.
FRESH4: list[tuple[str, str, str, str]] = [
    ("door_code", "en", "office back entrance: 3390, front desk closes at 6", "3390"),
    ("door_code", "de", "die Kellertür ist 6021, Licht links", "6021"),
    ("door_code", "fr", "porte du local : 7719, merci", "7719"),
    ("door_code", "es", "la puerta del trastero es 8204", "8204"),
    ("door_code", "it", "portone: 4517, poi secondo piano", "4517"),
    ("door_code", "pt", "a porta dos fundos é 6630", "6630"),
    ("door_code", "nl", "de achterdeur is 5512", "5512"),
    ("door_code", "sv", "porten är 7741 efter kl 18", "7741"),
    ("door_code", "pl", "drzwi do piwnicy: 3340", "3340"),
    ("door_code", "ru", "подъезд: 4471, этаж 5", "4471"),
    ("door_code", "tr", "apartman kapısı: 2209", "2209"),
    ("door_code", "ko", "현관은 5809#", "5809#"),
    ("door_code", "zh", "大门是 7731#", "7731#"),
    ("door_code", "ar", "الباب: 6641", "6641"),
    ("door_code", "ja", "玄関：8812、エレベーターで5階", "8812"),
]
FRESH4_LOOKS: list[tuple[str, str]] = [
    ("en", "door: 4 of 6 are locked"),
    ("en", "the entrance is 1200 mm wide"),
    ("en", "gate: 14B, boarding 0945"),
    ("en", "the door is 2 m high"),
    ("de", "Tür: 12, Zimmer 4"),
    ("de", "die Haustür ist 1998 eingebaut worden"),
    ("fr", "porte : 2e étage, code postal 75011"),
    ("fr", "l'entrée est à 1400 mètres"),
    ("es", "puerta: la 3, junto al ascensor"),
    ("it", "porta: 8080 per il server"),
    ("pt", "portão: número 1820 da rua"),
    ("nl", "deur: 2200 cm hoog"),
    ("sv", "porten är 2100 mm"),
    ("pl", "drzwi: 2100 zł z montażem"),
    ("ru", "подъезд: 4, квартира 1203"),
    ("tr", "kapı: 2300'de kapanır"),
    ("ja", "玄関は2019年にリフォーム"),
    ("ko", "현관은 2020년에 고쳤어요"),
    ("zh", "大门是 2018 年修的"),
    ("ar", "الباب: 2200 ريال"),
    ("en", "alarm: 0630 and 0700 on weekdays"),
    ("en", "the intercom is 1990s tech"),
    ("en", "entrance: €1500 per table at the fair"),
    ("en", "door # 4412 in the warehouse map"),
]


def rows(next_id: Callable[[str, bool], str]) -> Iterator[dict[str, object]]:
    """Every row of the batch (``next_id(lang, secret)`` numbers them after the earlier
    batches' rows)."""
    secrets: list[Secret] = [(category, lang, t, [s]) for category, lang, t, s in SECRETS]
    secrets += [(category, lang, t, [s]) for category, lang, t, s in FRESH]
    secrets += [(category, lang, t, [s]) for category, lang, t, s in FRESH2]
    secrets += [(category, lang, t, [s]) for category, lang, t, s in FRESH3]
    secrets += [(category, lang, t, [s]) for category, lang, t, s in FRESH4]
    looks: list[Look] = [("round9", lang, text) for lang, text in LOOKS]
    looks += [("round9_fresh", lang, text) for lang, text in FRESH_LOOKS]
    looks += [("round9_fresh2", lang, text) for lang, text in FRESH2_LOOKS]
    looks += [("round9_fresh3", lang, text) for lang, text in FRESH3_LOOKS]
    looks += [("round9_fresh4", lang, text) for lang, text in FRESH4_LOOKS]
    yield from batch_rows("families7", next_id, secrets, looks)
