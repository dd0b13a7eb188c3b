"""The train rows of round 8: the concepts the dev7 part (test7, scored once as held out, then
read) showed the rules missing or over-reaching, each written fresh in several of the fifteen
languages of the split (EN DE FR ES IT PT NL SV PL RU TR JA KO ZH AR), never a dev7 line:

- a value on the line after a label line that points down at it ("pass below:", "パスワード↓",
  "Passwort unten:", "hasło poniżej:"), and what makes such a next line no value (a sentence,
  a rule, a placeholder);
- a question about a lock's or a code's number answered on the next line by a speaker written
  as a phrase ("— у меня: 5708", "— me: 4412", "— 나: 2405"), and a padlock's number asked
  after;
- a value first and its label after, when the value is a passphrase or has a dot inside;
- an entry's code dialled after a flat's number ("dial 14 then 4109"); an alarm disarmed with
  its code ("se désactive avec 9455");
- a one-time code named with its service, which has a hyphen ("e-tjänst", "e-urzędu");
- a Latin label glued after a kana or Han character ("アプリのPIN: …");
- a label said fondly ("hasełko", "паролик");
- a bot token whose first letter is not M, N or O;
- and the look-alikes that over-reached: a password in a film or a book, a queue ticket
  called a "senha", a value masked with stars and a note in brackets after it.

Read by ``generate.py`` (batch ``families6``). Every value is made up.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from batch import Look, Secret, batch_rows  # type: ignore[import-not-found]  # the shared rows()

#: (category, lang, text, the secret).
SECRETS: list[tuple[str, str, str, str]] = [
    # a label line pointing down at the value on the next line
    (
        "next_line",
        "en",
        "wifi for the cabin, password below:\nPine&Lake_92\nsee you friday",
        "Pine&Lake_92",
    ),
    ("next_line", "en", "nas admin pw here:\nTq7!vorn.Ek\n(don't share)", "Tq7!vorn.Ek"),
    ("next_line", "en", "the key for the test bucket 👇\nAkc82hfPq1Lz", "Akc82hfPq1Lz"),
    ("next_line", "de", "WLAN-Passwort unten:\nBirke#Mond71\nbis morgen", "Birke#Mond71"),
    ("next_line", "de", "Kennwort fürs Büro-NAS ↓\nQuelle_88!x", "Quelle_88!x"),
    (
        "next_line",
        "fr",
        "mot de passe du drive ci-dessous :\nFalaise_Grise9\nmerci",
        "Falaise_Grise9",
    ),
    ("next_line", "fr", "le mdp juste en dessous\nHibou!4421k", "Hibou!4421k"),
    (
        "next_line",
        "es",
        "contraseña del router abajo:\nLoma.Verde55\nno la cambies",
        "Loma.Verde55",
    ),
    ("next_line", "it", "password del NAS qui sotto:\nRondine_73#b", "Rondine_73#b"),
    ("next_line", "pt", "senha do wi-fi aqui embaixo:\nCaju&Mar_19", "Caju&Mar_19"),
    ("next_line", "pt", "senha do portal abaixo ⬇️\nTatu.Bola88", "Tatu.Bola88"),
    ("next_line", "nl", "wachtwoord van de router hieronder:\nMolen_Wind42!", "Molen_Wind42!"),
    ("next_line", "sv", "lösenordet till NAS:en nedan:\nGran#Sjo818\nhälsningar", "Gran#Sjo818"),
    ("next_line", "pl", "hasło do dysku poniżej:\nSosna!Wisla30", "Sosna!Wisla30"),
    ("next_line", "ru", "пароль от роутера ниже:\nLipa_Volga77\nне меняйте", "Lipa_Volga77"),
    ("next_line", "tr", "modem şifresi aşağıda:\nCinar.Deniz64", "Cinar.Deniz64"),
    ("next_line", "ja", "共有フォルダのパスワードは下記\nKx82!momiji\nよろしく", "Kx82!momiji"),
    ("next_line", "ja", "ルーターのパスワード⬇\nSakuraZ_921", "SakuraZ_921"),
    ("next_line", "ko", "공유기 비밀번호 아래\nHaneul_77!q", "Haneul_77!q"),
    ("next_line", "zh", "路由器密码如下：\nZhuYun#5521", "ZhuYun#5521"),
    ("next_line", "zh", "服务器密码在下面\nQf8!baiyun", "Qf8!baiyun"),
    ("next_line", "ar", "كلمة سر الراوتر بالأسفل:\nNakhla_92!r", "Nakhla_92!r"),
    # a code's question answered by a speaker written as a phrase, a padlock's number asked
    ("next_line", "en", "anyone know the padlock code for the bike shed?\n— me: 3817", "3817"),
    ("next_line", "en", "who has the code for the storage lock?\n- I do: 6604", "6604"),
    ("next_line", "de", "wer hat den Code vom Vorhängeschloss am Keller?\n— ich: 2291", "2291"),
    ("next_line", "fr", "qui a le code du cadenas de la cave ?\n— moi : 7315", "7315"),
    (
        "next_line",
        "es",
        "¿quién tiene la combinación del candado del trastero?\n— yo: 4402",
        "4402",
    ),
    ("next_line", "it", "chi ha il codice del lucchetto della cantina?\n— io: 9130", "9130"),
    ("next_line", "pt", "quem tem o código do cadeado do depósito?\n— eu: 5528", "5528"),
    ("next_line", "nl", "wie weet de code van het hangslot?\n— ik: 8047", "8047"),
    ("next_line", "sv", "vem har koden till hänglåset på förrådet?\n— jag: 1953", "1953"),
    ("next_line", "pl", "kto zna szyfr do kłódki w piwnicy?\n— ja: 6271", "6271"),
    ("next_line", "ru", "кто знает код от навесного замка?\n— я знаю: 3390", "3390"),
    ("next_line", "tr", "deponun asma kilit şifresini bilen var mı?\n— ben: 4719", "4719"),
    ("next_line", "ja", "倉庫の南京錠の番号わかる人？\n— 僕：8826", "8826"),
    ("next_line", "ko", "자전거 자물쇠 번호 아는 사람?\n— 저: 5193", "5193"),
    ("next_line", "zh", "谁知道仓库挂锁的密码？\n— 我：7046", "7046"),
    ("next_line", "ar", "مين يعرف رقم قفل الدراجة؟\n— أنا: 6682", "6682"),
    # a value first and its label after: a passphrase, a value with a dot inside
    (
        "value_first",
        "en",
        "maple orbit candle fjord42 is the passphrase for the backup disk",
        "maple orbit candle fjord42",
    ),
    ("value_first", "en", "Wkp.raHUtmLe is the password for the payroll portal", "Wkp.raHUtmLe"),
    ("value_first", "es", "Ptz.ogRAmEl es la contraseña del aula virtual", "Ptz.ogRAmEl"),
    ("value_first", "fr", "Lmo.tyVErHa c'est le mot de passe du portail", "Lmo.tyVErHa"),
    ("value_first", "de", "Hrt.kiLOmWa ist das Passwort vom Schulportal", "Hrt.kiLOmWa"),
    (
        "value_first",
        "pt",
        "vento lago pedra sino31 é a frase-senha do cofre",
        "vento lago pedra sino31",
    ),
    # an entry dialled after a flat's number; an alarm disarmed with its code
    ("door_code", "en", "at the intercom dial 22 then 7710 and push", "7710"),
    ("door_code", "de", "an der Gegensprechanlage 31 wählen, dann 5082 eingeben", "5082"),
    ("door_code", "fr", "à l'interphone compose 12 puis 6631", "6631"),
    ("alarm", "en", "the shop alarm disarms with 4418, you have 30 seconds", "4418"),
    ("alarm", "fr", "l'alarme de la maison se désactive avec 2290", "2290"),
    ("alarm", "es", "la alarma del local se desactiva con 8154", "8154"),
    ("alarm", "it", "l'allarme del negozio si disattiva con 3307", "3307"),
    ("alarm", "pt", "o alarme da loja desativa com 6120", "6120"),
    ("alarm", "de", "die Alarmanlage wird mit 7745 deaktiviert", "7745"),
    ("alarm", "nl", "het alarm schakel je uit met 9021", "9021"),
    ("alarm", "sv", "larmet stängs av med 5530", "5530"),
    ("alarm", "pl", "alarm wyłącza się kodem 1849", "1849"),
    ("alarm", "ru", "сигнализация отключается кодом 6803", "6803"),
    # a one-time code named with its service, which has a hyphen
    ("otp", "sv", "engångskod från bankens e-tjänst: 482019", "482019"),
    ("otp", "pl", "kod weryfikacyjny z e-banku: 730518", "730518"),
    ("otp", "en", "one-time code from the e-filing site: 904172", "904172"),
    ("otp", "de", "Einmalcode vom E-Postfach: 551803", "551803"),
    ("otp", "fr", "code de vérification de l'e-administration : 318402", "318402"),
    # a Latin label glued after a kana or Han character
    ("pin", "ja", "スマホのPIN: 739104", "739104"),
    ("pin", "ja", "会社PCのPIN：4471", "4471"),
    ("pin", "zh", "银行卡的PIN: 620194", "620194"),
    ("password", "ja", "ルーターのpassword: Kz7!hana", "Kz7!hana"),
    # a label said fondly
    ("password", "pl", "hasełko do netflixa to Qr8!kotek", "Qr8!kotek"),
    ("password", "pl", "hasełka do wifi: Mysz_Polna44", "Mysz_Polna44"),
    ("password", "ru", "паролик от вайфая: Kotik_2024!", "Kotik_2024!"),
    # a bot token whose first letter is not M, N or O
    (
        "token",
        "en",
        "discord bot for the guild: "
        "kTz4_8sLmQpRw2XvYb9NcDe1.Gh7_Lk.Qw9eRt5yUi0oP3aSdFgHjKlZx7cVbNm2",
        "kTz4_8sLmQpRw2XvYb9NcDe1.Gh7_Lk.Qw9eRt5yUi0oP3aSdFgHjKlZx7cVbNm2",
    ),
    (
        "token",
        "de",
        "Bot-Token: xQ2pLm8Rk4TvNb7Yc1WdZs5E.a9Bc-D.Kl3mN8pQr2sT5uVw7xY0zA4bC6dE9fG1hJ",
        "xQ2pLm8Rk4TvNb7Yc1WdZs5E.a9Bc-D.Kl3mN8pQr2sT5uVw7xY0zA4bC6dE9fG1hJ",
    ),
]

#: (lang, text): nothing to mask.
LOOKS: list[tuple[str, str]] = [
    # a label line pointing down, then no value
    ("en", "password rules below:\nat least twelve characters\nno names"),
    ("en", "reset the password below:\nclick the link in the mail"),
    ("en", "pass below:\nthe usual one"),
    ("de", "Passwort unten:\nsteht im Tresor"),
    ("fr", "mot de passe ci-dessous :\ndemande à Paul"),
    ("es", "contraseña abajo:\nla de siempre"),
    ("pl", "hasło poniżej:\nzapytaj Kasię"),
    ("ru", "пароль ниже:\nспроси у админа"),
    ("ja", "パスワード↓\n管理者に聞いてください"),
    ("zh", "密码如下：\n请问管理员"),
    ("sv", "lösenordet nedan:\n********"),
    ("ko", "비밀번호 아래\n[사진]"),
    # a code's question, a phrase answers with no code
    ("en", "anyone know the padlock code for the bike shed?\n— me: no idea"),
    ("ru", "кто знает код от навесного замка?\n— я: в 18:30 спрошу"),
    ("ja", "倉庫の南京錠の番号わかる人？\n— 僕：わからない"),
    ("fr", "qui a le code du cadenas ?\n— moi : demain matin"),
    ("de", "wer hat den Code vom Vorhängeschloss?\n— ich: 2 Stück im Keller"),
    ("en", "who has the storage lock?\n- I do: room 2014"),
    # a value first that is no value
    ("en", "green apple pie recipe12 is the passphrase rule they teach? no"),
    ("en", "Index.html is the password page"),
    ("es", "Mi.Cuenta es la contraseña que no recuerdo"),
    # an entry or an alarm and a number that is no code
    ("en", "at the intercom dial 22 then wait for 2 minutes"),
    ("en", "the alarm went off at 0630 and disarms itself after 1200 seconds"),
    ("fr", "l'alarme se déclenche à 2230 chaque soir"),
    ("de", "die Alarmanlage kostet 1499 Euro"),
    ("es", "la alarma se desactiva con la app desde 2023"),
    # a one-time code's words with a hyphen and no code
    ("sv", "engångskod från bankens e-tjänst: kom aldrig"),
    ("pl", "kod weryfikacyjny z e-banku: nie przyszedł"),
    ("en", "one-time code from the e-filing site: expired"),
    # a Latin label after a kana or Han character and no value
    ("ja", "スマホのPINを忘れた"),
    ("ja", "会社PCのPIN：あとで送る"),
    ("zh", "银行卡的PIN忘了"),
    # a label said fondly and no value
    ("pl", "hasełko do netflixa znowu nie działa"),
    ("ru", "паролик от вайфая забыл"),
    # a password in a film or a book, a queue ticket, a masked value with a note
    ("en", "the password in the movie was 'swordfish', classic"),
    ("es", "la contraseña del pirata en el libro era 'tesoro', qué bonito"),
    ("fr", "le mot de passe du héros dans le film était « sésame »"),
    ("de", "das Passwort im Film war 'Schwertfisch'"),
    ("it", "la password nel libro era 'girasole'"),
    ("pt", "a senha do atendimento no banco é B-42, demora"),
    ("pt", "peguei a senha da fila: C17"),
    ("es", "mi número de turno en la farmacia es A-23"),
    ("ja", "パスワード: ****（画面では隠れてます）"),
    ("en", "password: •••••••• (hidden in the screenshot)"),
    ("de", "Passwort: ******** (im Screenshot geschwärzt)"),
    ("zh", "密码：********（截图里已打码）"),
]


#: A second set, written after the first set's rules, as a blind author might write the next
#: line's family (labels ending their line in other ways, chat exports with a stamp and a name
#: between label and value) and the other concepts; scored before any fix of its own.
FRESH: list[tuple[str, str, str, str]] = [
    (
        "next_line",
        "en",
        "[21:04] Tom: what's the pw for the printer admin?\n[21:05] Ana: hang on\n[21:06] Ana: Brnz!4471q",
        "Brnz!4471q",
    ),
    (
        "next_line",
        "en",
        "Mike, [03.11.26 10:02]\nvpn password?\nSara, [03.11.26 10:03]\nGlow_Tide62!",
        "Glow_Tide62!",
    ),
    ("next_line", "en", "login for the kiosk tablet is\nKs9#pebble2", "Ks9#pebble2"),
    ("next_line", "en", "router admin password (case sensitive)\nHqT7vw!mRt", "HqT7vw!mRt"),
    ("next_line", "en", "here's the wifi pass for tonight ->\nOwl.Night_818", "Owl.Night_818"),
    (
        "next_line",
        "de",
        "[08:12] Jonas: Passwort vom Gäste-WLAN?\n[08:13] Mia: Gast_Sonne24",
        "Gast_Sonne24",
    ),
    ("next_line", "de", "Das Kennwort für den Drucker lautet\nDr8ck#Laser", "Dr8ck#Laser"),
    ("next_line", "fr", "le code du digicode c'est\n4B7219", "4B7219"),
    (
        "next_line",
        "fr",
        "[19:40] Léa : c'est quoi le mdp du compte EDF déjà\n[19:41] Hugo : Edf_Maison77",
        "Edf_Maison77",
    ),
    ("next_line", "es", "la clave del wifi del bar es esta\nBarLuna#2290", "BarLuna#2290"),
    ("next_line", "it", "password della stampante, eccola:\nStamp@4410x", "Stamp@4410x"),
    ("next_line", "pt", "a senha do wi-fi da casa de praia é\nPraia_Sol2024", "Praia_Sol2024"),
    ("next_line", "nl", "het wachtwoord van de gast-wifi is\nGast!Tulp88", "Gast!Tulp88"),
    ("next_line", "sv", "lösenordet till skrivaren är\nSkriv#Ek552", "Skriv#Ek552"),
    (
        "next_line",
        "pl",
        "[07:55] Ola: jakie jest hasło do drukarki?\n[07:56] Piotr: chwila\n[07:57] Piotr: Druk_Arka91",
        "Druk_Arka91",
    ),
    ("next_line", "ru", "пароль от принтера —\nPrint_Lis82", "Print_Lis82"),
    ("next_line", "tr", "misafir ağının şifresi şu\nKonuk#4471", "Konuk#4471"),
    (
        "next_line",
        "ja",
        "[10:20] 佐藤: プリンタの管理パスワードって何？\n[10:21] 田中: Prn_Kumo55",
        "Prn_Kumo55",
    ),
    ("next_line", "ko", "프린터 관리자 비번은 이거\nPrn!Haneul4", "Prn!Haneul4"),
    ("next_line", "zh", "打印机管理员密码是这个\nDayin_Yun82", "Dayin_Yun82"),
    ("next_line", "ar", "باسورد الطابعة هو\nTaba3a_7781", "Taba3a_7781"),
    ("next_line", "en", "safe combo?\n— mine's 38-12-07", "38-12-07"),
    ("next_line", "de", "wer kennt den Code vom Fahrradschloss?\n— Lena: 4417", "4417"),
    (
        "next_line",
        "es",
        "¿alguien sabe el código del candado de la bici?\n— yo lo sé: 8830",
        "8830",
    ),
    (
        "value_first",
        "en",
        "amber kettle north violin88 — that's the new passphrase",
        "amber kettle north violin88",
    ),
    ("value_first", "de", "Kro.neWAlDt ist das neue Kennwort", "Kro.neWAlDt"),
    ("door_code", "it", "al citofono fai 8 poi 4471", "4471"),
    ("door_code", "es", "en el portero marca 3 y luego 5519", "5519"),
    ("alarm", "en", "to turn the alarm off punch in 7730", "7730"),
    ("alarm", "de", "Alarm ausschalten mit 6612", "6612"),
    ("alarm", "ja", "警報は 4409 で解除", "4409"),
    ("otp", "nl", "eenmalige code van de e-overheid: 661902", "661902"),
    ("otp", "it", "codice monouso dell'app e-banking: 284410", "284410"),
    ("pin", "ko", "폰의PIN: 558201", "558201"),
    ("password", "pl", "hasełko: Kot_Filemon9", "Kot_Filemon9"),
]
FRESH_LOOKS: list[tuple[str, str]] = [
    ("en", "[21:04] Tom: what's the pw for the printer admin?\n[21:05] Ana: no idea, ask IT"),
    ("en", "login for the kiosk tablet is\nbroken again"),
    ("en", "router admin password (case sensitive)\nis on the sticker underneath"),
    ("en", "the password is\nv2.4.1 of the manual says otherwise"),
    ("en", "Mike, [03.11.26 10:02]\nvpn password?\nSara, [03.11.26 10:03]\nsame as always"),
    ("de", "Das Kennwort für den Drucker lautet\nwie immer"),
    ("de", "[08:12] Jonas: Passwort vom Gäste-WLAN?\n[08:13] Mia: 2 Minuten"),
    ("fr", "le code du digicode c'est\nle même qu'avant"),
    ("fr", "[19:40] Léa : c'est quoi le mdp du compte EDF déjà\n[19:41] Hugo : 14h30 je te dis"),
    ("es", "la clave del wifi del bar es esta\n(foto)"),
    ("it", "password della stampante, eccola:\nnel cassetto"),
    ("pt", "a senha do wi-fi da casa de praia é\nsegredo 😂"),
    ("nl", "het wachtwoord van de gast-wifi is\nveranderd"),
    ("sv", "lösenordet till skrivaren är\nbortglömt"),
    (
        "pl",
        "[07:55] Ola: jakie jest hasło do drukarki?\n[07:56] Piotr: chwila\n[07:57] Piotr: nie wiem",
    ),
    ("ru", "пароль от принтера —\nспроси у Лены"),
    ("tr", "misafir ağının şifresi şu\nkapıda yazıyor"),
    ("ja", "[10:20] 佐藤: プリンタの管理パスワードって何？\n[10:21] 田中: 知らない"),
    ("ko", "프린터 관리자 비번은 이거\n[사진]"),
    ("zh", "打印机管理员密码是这个\n[图片]"),
    ("ar", "باسورد الطابعة هو\nمكتوب على الجهاز"),
    ("en", "safe combo?\n— no idea, 2 years since"),
    ("de", "wer kennt den Code vom Fahrradschloss?\n— Lena: 2019 gekauft"),
    ("es", "¿alguien sabe el código del candado de la bici?\n— yo: ni idea"),
    ("en", "the alarm is set for 0630, punch in the snooze"),
    ("it", "al citofono fai 8 poi aspetta"),
    ("nl", "eenmalige code van de e-overheid: niet ontvangen"),
    ("en", "queue ticket A-14, password reset desk"),
    ("en", "the password in the book is 'mellon', elvish for friend"),
    ("ja", "映画の中のパスワードは「オープンセサミ」だった"),
    ("ru", "пароль в фильме был «рыба-меч»"),
    ("pt", "minha senha no banco é a 37, tô na fila"),
    ("en", "password: ****** (i blurred it)"),
    ("fr", "mot de passe : •••••• (masqué)"),
    ("ko", "비밀번호: ******(가림)"),
]


#: A third set, look-alikes written against the new rules to find where they over-reach (a
#: line pointing down at a line that is no value, a phrase before a colon that is no speaker,
#: a number dialled that is no code, an alarm's time), and a few secrets beside them; scored
#: before any fix of its own.
FRESH2: list[tuple[str, str, str, str]] = [
    ("next_line", "en", "the new vpn password is this one\nVpn_Marble71", "Vpn_Marble71"),
    ("next_line", "it", "ecco la password del wifi ↓\nWifi_Pesca09", "Wifi_Pesca09"),
    (
        "next_line",
        "ru",
        "[11:02] Дима: пароль от вайфая?\n[11:03] Катя: щас\n[11:03] Катя: Kvas_Leto7",
        "Kvas_Leto7",
    ),
    ("door_code", "pt", "no interfone disca 5 e depois 3382", "3382"),
    ("alarm", "tr", "alarm 7731 ile kapanıyor", "7731"),
]
FRESH2_LOOKS: list[tuple[str, str]] = [
    ("en", "the password is this\nlong thing I never remember"),
    ("en", "password rules are these ->\n12+ chars"),
    ("en", "this is the password screen 👇\nscreenshot.png"),
    ("en", "password below:\nv1.2.3"),
    ("de", "Passwort ist das hier\n[Bild]"),
    ("fr", "mot de passe ci-dessous :\nhttps://exemple.fr/reset"),
    ("es", "la contraseña es esta\nsemana la cambio"),
    ("it", "password qui sotto\nnon la trovo"),
    ("pl", "hasło poniżej:\n2024-05-01 zmienione"),
    ("ja", "パスワードは下記\n2024年4月に変更"),
    ("zh", "密码如下：\n2024年更新"),
    ("ko", "비밀번호 아래\n010-1234-5678로 문의"),
    ("tr", "şifre şu\nhatırlamıyorum"),
    ("ar", "كلمة السر بالأسفل:\nاسأل المدير"),
    ("en", "who has the code for the bike lock?\n— me: 2 min"),
    ("en", "who has the padlock?\n— my brother: since 2021"),
    ("fr", "qui a le code du cadenas ?\n— Paul : 18h30"),
    ("de", "Wer hat den Code vom Schloss?\n— ich: 3 Uhr"),
    ("ru", "кто знает код от замка?\n— я: 2019 год"),
    ("ja", "南京錠の番号わかる？\n— 私：2時に聞く"),
    ("en", "at the intercom dial 22 then 2 for the office"),
    ("it", "al citofono fai 8 poi sali al 2° piano"),
    ("en", "the alarm clock is set for 0645 and then 0700"),
    ("fr", "l'alarme incendie sonne à 1400 chaque mardi"),
    ("de", "die Alarmanlage wurde 2019 eingebaut"),
    ("sv", "larmet gick 0300 i natt"),
    ("es", "la alarma suena a las 0700 y luego 0715"),
    ("en", "[10:01] Ana: what's the wifi called?\n[10:02] Ben: hold on\n[10:02] Ben: CafeNet_5G"),
    (
        "en",
        "[10:01] Ana: password for the wifi?\n[10:02] Ben: hold on\n[10:03] Ben: ask the barista",
    ),
    ("pl", "[07:55] Ola: hasło do drukarki?\n[07:56] Piotr: chwila\n[07:57] Piotr: 15:30 będę"),
    ("en", "the password in that episode was 'open sesame'"),
    ("de", "im Buch war das Passwort 'Mellon'"),
]


def rows(next_id: Callable[[str, bool], str]) -> Iterator[dict[str, object]]:
    """Every row of the batch (``next_id(lang, secret)`` numbers them after the earlier
    batches' rows)."""
    secrets: list[Secret] = [(category, lang, t, [s]) for category, lang, t, s in SECRETS]
    secrets += [(category, lang, t, [s]) for category, lang, t, s in FRESH]
    secrets += [(category, lang, t, [s]) for category, lang, t, s in FRESH2]
    looks: list[Look] = [("round8", lang, text) for lang, text in LOOKS]
    looks += [("round8_fresh", lang, text) for lang, text in FRESH_LOOKS]
    looks += [("round8_fresh2", lang, text) for lang, text in FRESH2_LOOKS]
    yield from batch_rows("families6", next_id, secrets, looks)
