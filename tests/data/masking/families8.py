"""The train rows of round 10: the concepts the dev9 part (test9, scored once as held out, then
read) showed the rules missing or over-reaching, each written fresh in several of the fifteen
languages of the split (EN DE FR ES IT PT NL SV PL RU TR JA KO ZH AR), never a dev9 line:

- a chat log: one speaker asks whether a text message (an SMS, a text, a message) came, the
  next speaker's line answers with a code's digits, often read back in groups;
- a one-time code's label in corner brackets with the digits glued after it;
- a security question, the question itself given (in brackets, in quotes, after a colon), then
  an arrow or a separator and an answer of a few words;
- a password handed to a command: piped to ``sudo -S``, ``lftp -u user,pass``, ``htpasswd -b``,
  ``7z -p``, ``zip -P``, ``openssl -pass pass:``, ``ncftp -p``;
- a password label misspelt, cut short or written in kana, then a value that starts with a
  word of the writer's script glued to a generated ASCII part;
- "the login for X is V" with a generated value; a code read back with a keypad's key;
- and the look-alikes that over-reached: a login error quoting a user's name, a flight's number
  beside an airport's gate, a label inside a form's placeholder.

``FRESH`` and ``FRESH2`` are the two sets written afterwards as a blind author might (scored
against round 9's rules and these: see ``docs/benchmarks.md``, "Round 10").

Read by ``generate.py`` (batch ``families8``). Every value is made up.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from batch import Look, Secret, batch_rows  # type: ignore[import-not-found]  # the shared rows()

#: (category, lang, text, the secret).
SECRETS: list[tuple[str, str, str, str]] = [
    ("otp", "en", "[08:02] Sam: did the text come through?\n[08:03] Jo: yeah 551 908", "551 908"),
    ("otp", "de", "[12:10] Uwe: Ist die SMS gekommen?\n[12:11] Ina: ja, 40 77 19", "40 77 19"),
    ("otp", "fr", "[19:01] Paul : tu as eu le message ?\n[19:02] Zoé : oui 803 114", "803 114"),
    ("otp", "es", "[07:30] Ana: ¿te llegó el mensaje?\n[07:31] Luis: sí 662 015", "662 015"),
    ("otp", "it", "[21:14] Bea: è arrivato il messaggio?\n[21:15] Dario: sì, 318840", "318840"),
    ("otp", "pt", "[10:44] Rui: chegou a mensagem?\n[10:45] Inês: chegou, 907 226", "907 226"),
    ("otp", "nl", "[16:20] Bram: is het berichtje er al?\n[16:21] Sanne: ja 441 870", "441 870"),
    ("otp", "sv", "[09:09] Olle: kom meddelandet?\n[09:10] Stina: ja 260 431", "260 431"),
    ("otp", "pl", "[14:02] Ola: przyszedł esemes?\n[14:03] Bartek: tak, 775 302", "775 302"),
    ("otp", "ru", "[22:40] Лена: сообщение пришло?\n[22:41] Гоша: да, 514 066", "514 066"),
    ("otp", "tr", "[11:11] Can: mesaj geldi mi?\n[11:12] Ece: geldi 638 207", "638 207"),
    ("otp", "ja", "[18:30] 健太: ショートメール届いた？\n[18:31] 美咲: うん 204 915", "204 915"),
    ("otp", "ko", "[13:05] 지훈: 메시지 왔어?\n[13:06] 서연: 응, 871 330", "871 330"),
    ("otp", "zh", "[20:18] 阿明：短信到了吗？\n[20:19] 小红：到了 356 021", "356 021"),
    ("otp", "ar", "[15:50] سامي: وصلت الرسالة؟\n[15:51] ليلى: نعم 419 583", "419 583"),
    ("otp", "zh", "妈妈转来的：【登录验证码】493817，10分钟内有效", "493817"),
    (
        "security_answer",
        "en",
        "bank's secret question (mother's maiden name): Van Dijk",
        "Van Dijk",
    ),
    ("security_answer", "de", "Sicherheitsfrage (Lieblingsstadt) → Bad Tölz", "Bad Tölz"),
    (
        "security_answer",
        "fr",
        "question secrète 'ville de naissance' → réponse Saint Malo",
        "Saint Malo",
    ),
    (
        "security_answer",
        "pl",
        "pytanie pomocnicze (ulubiony nauczyciel): pan Zbyszek",
        "pan Zbyszek",
    ),
    ("security_answer", "ko", "보안 질문(첫 학교 이름): 해바라기초", "해바라기초"),
    ("password", "en", "deploy box: echo 'Brq7_vL2nw' | sudo -S apt upgrade", "Brq7_vL2nw"),
    ("password", "de", "Backup-Skript: lftp -u backup,Zt8.qWm3rP sftp://nas.lan", "Zt8.qWm3rP"),
    ("password", "fr", "htpasswd -bc /etc/nginx/.pw admin Lo9_PkzTq3", "Lo9_PkzTq3"),
    ("password", "es", "el zip: zip -P Cam1no_8hx fotos.zip *.jpg", "Cam1no_8hx"),
    ("password", "ru", "архив: 7z x -pQw9_Lmz2Xk архив.7z", "Qw9_Lmz2Xk"),
    (
        "password",
        "it",
        "openssl enc -d -aes-256-cbc -in conti.enc -pass pass:Tr3no_Vk8q",
        "Tr3no_Vk8q",
    ),
    ("password", "ja", "共有アカウント、ぱすわーどは桜-Kq72x です", "桜-Kq72x"),
    ("password", "zh", "共享账号 秘碼海豚_Rw58z 别外传", "海豚_Rw58z"),
    ("password", "ko", "공유 계정 비빌번호 바다-9Tq4w 입니다", "바다-9Tq4w"),
    ("password", "ar", "الحساب المشترك الباسوورد نجمة-Lp73 لا ترسله", "نجمة-Lp73"),
    ("password", "nl", "gedeelde account, wachtw: Zoë_KT482", "Zoë_KT482"),
    ("password", "en", "the login for the front desk iPad is Kt7_wQz9Lp now", "Kt7_wQz9Lp"),
    ("password", "sv", "inloggningen till kassan: samma som förra: Hb4!tunna", "Hb4!tunna"),
    ("door_code", "zh", "[09:00] 老李：仓库门禁密码多少？\n[09:01] 小周：7731#", "7731#"),
    ("wifi", "ar", "شبكة البيت HomeNet_5G والرمز Lq83_zTwp", "Lq83_zTwp"),
]

#: (lang, text): what must stay as written.
LOOKS: list[tuple[str, str]] = [
    ("en", "[08:02] Sam: did the text come through?\n[08:03] Jo: yeah at 14:05"),
    ("de", "[12:10] Uwe: Ist die SMS gekommen?\n[12:11] Ina: ja, vor 10 Minuten"),
    ("fr", "[19:01] Paul : tu as eu le message ?\n[19:02] Zoé : oui, en 2019 déjà"),
    ("es", "[07:30] Ana: ¿te llegó el mensaje?\n[07:31] Luis: sí, gracias"),
    ("ja", "[18:30] 健太: メッセージ見た？\n[18:31] 美咲: うん、3回読んだ"),
    ("zh", "[20:18] 阿明：短信到了吗？\n[20:19] 小红：到了，谢谢"),
    ("en", "security question (first pet): not set yet"),
    ("de", "Sicherheitsfrage (Lieblingsstadt) → siehe Notizbuch"),
    ("en", "auth failed: wrong password for user 'deploy' (3 tries left)"),
    ("es", "error: contraseña incorrecta para el usuario 'caja2'"),
    ("ja", "第1ターミナルのC12番ゲート、NH 1043便、出発9:40"),
    ("ko", "1터미널 B7번 게이트, OZ 3021편 탑승"),
    ("zh", "登机口D18，CA 1523航班，8点登机"),
    ("zh", "注册表单：密码：<请输入密码>，验证码：______"),
    ("en", "form template: password: <your password>, PIN: ****"),
    ("en", "the login for the front desk iPad is on the sticker"),
    ("en", "zip -r backup.zip ~/docs"),
    ("en", "run htpasswd -c .htpasswd admin and type it twice"),
    ("ar", "الرمز البريدي للمزرعة 11564"),
]

#: The first fresh set (a sports club's and a family's chats, written as a blind author
#: might, before these rules were final).
FRESH: list[tuple[str, str, str, str]] = [
    (
        "otp",
        "en",
        "[19:22] Mum: did you get a text from the bank?\n[19:24] Tom: yes 3390 12",
        "3390 12",
    ),
    ("otp", "de", "[07:12] Papa: Hast du die SMS bekommen?\n[07:13] Lea: jap 918273", "918273"),
    (
        "otp",
        "nl",
        "[10:01] Oma: heb je de sms gekregen?\n[10:02] Tim: ja hoor, 56 21 09",
        "56 21 09",
    ),
    ("otp", "pt", "[22:00] Mãe: recebeste a SMS do banco?\n[22:01] Rui: sim 448 120", "448 120"),
    ("otp", "tr", "[08:40] Anne: SMS geldi mi?\n[08:41] Efe: geldi, 7812 40", "7812 40"),
    ("otp", "ko", "[21:03] 엄마: 인증 문자 받았니?\n[21:04] 민수: 네 552 819", "552 819"),
    (
        "security_answer",
        "en",
        "club portal security q (favourite coach) → Mr Adeyemi",
        "Mr Adeyemi",
    ),
    ("security_answer", "es", "pregunta secreta (ciudad natal): San Sebastián", "San Sebastián"),
    ("security_answer", "sv", "säkerhetsfråga (första bilen): Volvo Amazon", "Volvo Amazon"),
    ("password", "en", 'club laptop: echo "Fc1899_goal" | sudo -S shutdown -r now', "Fc1899_goal"),
    ("password", "pl", "skrypt klubu: lftp -u trener,Pz7.kRw2q ftp.klub.pl", "Pz7.kRw2q"),
    ("password", "it", "la password del club? è la stessa del wifi: Gol_2024xK", "Gol_2024xK"),
    ("password", "ja", "クラブのパすワードは青空_Tk93 だよ", "青空_Tk93"),
    ("password", "ar", "باسورد حساب النادي صقر_88Lk", "صقر_88Lk"),
]
FRESH_LOOKS: list[tuple[str, str]] = [
    ("en", "[19:22] Mum: did you get a text from the bank?\n[19:24] Tom: yes, 2 of them"),
    ("de", "[07:12] Papa: Hast du die SMS bekommen?\n[07:13] Lea: jap, um 7:10"),
    ("en", "login failed for user 'coach' (attempt 4 of 3)"),
    ("en", "security q (favourite coach) → ask the secretary"),
    ("ko", "인천 2터미널 D23번 게이트, KE 0907편"),
    ("en", "club form: password: <choose one>, PIN: <4 digits>"),
    ("en", "the club's login page is at /members"),
    ("pl", "lftp -u trener ftp.klub.pl i wpisz hasło ręcznie"),
    ("en", "[19:22] Mum: got my message?\n[19:24] Tom: yes see you at 1900"),
    ("ja", "クラブのパスワードは毎月変わるよ"),
]

#: The second fresh set (an office's IT handover, written as a blind author might).
FRESH2: list[tuple[str, str, str, str]] = [
    ("password", "en", "printf 'Tk9_zLq82w\\n' | sudo -S systemctl restart cups", "Tk9_zLq82w"),
    ("password", "de", "htpasswd -b /srv/.htpasswd empfang Rz4_pLkW9q", "Rz4_pLkW9q"),
    ("password", "fr", "7z a -pVx8_qLm2Tz compta.7z compta/", "Vx8_qLm2Tz"),
    ("password", "nl", "openssl pkcs12 -in cert.p12 -passin pass:Kw3.zPq8Lm", "Kw3.zPq8Lm"),
    ("password", "sv", "lftp -u skanner,Ml5_qTz8Wp 10.0.4.20", "Ml5_qTz8Wp"),
    ("password", "en", "the new login for the reception kiosk is Qz8_TkLm4w", "Qz8_TkLm4w"),
    ("password", "zh", "前台电脑 秘马 春天-Xk82q", "春天-Xk82q"),
    ("password", "ko", "프린터 관리자 비번 하늘_Tz48 이에요", "하늘_Tz48"),
    ("security_answer", "de", "Sicherheitsfrage beim Provider: erstes Auto → VW Käfer", "VW Käfer"),
    ("security_answer", "it", "domanda segreta (nonno materno): Nonno Peppino", "Nonno Peppino"),
    ("otp", "ru", "[09:30] Игорь: смс с кодом пришла?\n[09:31] Оля: да, 605 118", "605 118"),
    ("otp", "ar", "[09:30] مازن: وصلتك رسالة الكود؟\n[09:31] رنا: أيوه 772 019", "772 019"),
]
FRESH2_LOOKS: list[tuple[str, str]] = [
    ("en", "printf 'done\\n' | tee log.txt"),
    ("de", "htpasswd -c /srv/.htpasswd empfang (Passwort wird abgefragt)"),
    ("en", "ERROR: bad password for user 'scanner' at 10:04"),
    ("fr", "7z x compta.7z -o/tmp"),
    ("en", "[09:30] Igor: did the sms arrive?\n[09:31] Olga: yes, 2 minutes ago"),
    ("zh", "表单：密码：<密码>，确认密码：<再次输入>"),
    ("ja", "羽田 第2ターミナル 62番ゲート、JL 0123便"),
    ("en", "the kiosk login is the usual one, ask IT"),
]


def rows(next_id: Callable[[str, bool], str]) -> Iterator[dict[str, object]]:
    """Every row of the batch (``next_id(lang, secret)`` numbers them after the earlier
    batches' rows)."""
    secrets: list[Secret] = [(category, lang, t, [s]) for category, lang, t, s in SECRETS]
    secrets += [(category, lang, t, [s]) for category, lang, t, s in FRESH]
    secrets += [(category, lang, t, [s]) for category, lang, t, s in FRESH2]
    looks: list[Look] = [("round10", lang, text) for lang, text in LOOKS]
    looks += [("round10_fresh", lang, text) for lang, text in FRESH_LOOKS]
    looks += [("round10_fresh2", lang, text) for lang, text in FRESH2_LOOKS]
    yield from batch_rows("families8", next_id, secrets, looks)
