"""Masking round 10 (§14): what the dev9 part showed, as concepts.

- A chat log: one speaker asks whether a text message came, the next speaker's line answers
  with a code's digits (together or read back in groups); what stays: a time, a year, a count,
  a thank-you.
- A one-time code's label in corner brackets with its digits glued after it.
- A security question, its question given, then an answer of a few words; what stays: "not
  set", "see the notes".
- A password handed to a command (``sudo -S`` through a pipe, ``lftp -u user,pass``,
  ``htpasswd -b``, ``7z -p``, ``zip -P``, ``openssl -pass pass:``, ``ncftp -p``); what stays:
  the same commands asking for the password.
- A password label misspelt, cut short or in kana of either kind, then a value that starts
  with a word of the writer's script glued to a generated ASCII part.
- "the login for X is V" with a generated value; a door's code read back with a keypad's key.
- And what over-reached: a login error quoting a user, a flight's number beside an airport's
  gate, a label inside a form's placeholder.

The phrasings below are written for this test, not taken from a corpus part.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from memory_worker.privacy.masking import contains_secret, mask
from memory_worker.privacy.masking.replies import _ASKING, MESSAGE_NEEDLES


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # a code answered on the next speaker's line
        ("[07:40] Kim: did my text arrive?\n[07:41] Lou: yup, 620 913", "620 913"),
        ("[11:02] Jens: Kam die SMS an?\n[11:03] Ute: ja, 710392", "710392"),
        ("[18:15] Nico : t'as eu le SMS ?\n[18:16] Inès : oui 30 41 77", "30 41 77"),
        ("[08:08] Pau: ¿llegó el SMS?\n[08:09] Mar: sí, 5519 02", "5519 02"),
        ("[21:40] Пётр: смс пришла?\n[21:41] Вера: да 8836", "8836"),
        ("[06:30] 陽太: SMS届いた？\n[06:31] 葵: 届いた、 408 551", "408 551"),
        ("[23:10] 도윤: 문자 받았어?\n[23:11] 지우: 어 994 120", "994 120"),
        ("[09:45] 老王：短信来了没？\n[09:46] 小李：来了 775 031", "775 031"),
        ("[14:14] خالد: جاتك الرسالة؟\n[14:15] سلمى: أيوه، 330 481", "330 481"),
        ("[17:17] Ayşe: mesaj geldi mi?\n[17:18] Mert: evet 204 966", "204 966"),
        # corner brackets
        ("转给你：【验证码】516204，勿告诉他人", "516204"),
        ("【認証コード】883015 を入力", "883015"),
        # security question given, then a few words
        ("security question (favourite teacher): Miss Honey", "Miss Honey"),
        ("Sicherheitsfrage 'erstes Haustier' → Antwort Herr Bello", "Herr Bello"),
        ("pergunta de segurança (rua da infância): Rua Augusta", "Rua Augusta"),
        ("güvenlik sorusu (ilk okul): Atatürk İlkokulu", "Atatürk İlkokulu"),
        ("veiligheidsvraag (eerste huisdier) → Tante Mien", "Tante Mien"),
        # a password handed to a command
        ("echo 'Pq8_zWm3Lt' | sudo -S reboot", "Pq8_zWm3Lt"),
        ('printf "Nv5.kRq2Zx\\n" | sudo -S -k whoami', "Nv5.kRq2Zx"),
        ("lftp -u uploads,Wd7-qLp3Xz sftp://files.lan", "Wd7-qLp3Xz"),
        ("htpasswd -bB /etc/.pw staff Jx4_tRm8Qp", "Jx4_tRm8Qp"),
        ("7z x -pHk3_wQz9Lm notes.7z", "Hk3_wQz9Lm"),
        ("zip -e -P Lm2.pQz8Wr tax.zip tax/", "Lm2.pQz8Wr"),
        ("openssl rsa -in k.pem -passin pass:Zq7_mTx4Kp", "Zq7_mTx4Kp"),
        ("ncftpput -u ops -p Vb6_kPz3Qw host /in a.txt", "Vb6_kPz3Qw"),
        # a label misspelt, cut short or in kana, a value glued after a word of the script
        ("共用アカウント ぱすわーど は 月-Rt84k", "Rt84k"),
        ("店のパスわーどは海_Wq27z", "Wq27z"),
        ("秘马 熊猫_Lk73q 别外传", "Lk73q"),
        ("공용 비빈번호 달빛-5Qw2z", "5Qw2z"),
        ("الباسورد وردة_Tq39", "Tq39"),
        ("kennw: Müsli_QX318", "QX318"),
        ("شبكة المكتب Office-5G والرمز Zt62_kQwp", "Zt62_kQwp"),
        # the login for X is V
        ("the login for the lab laptop is Rq9_LmZx4w", "Rq9_LmZx4w"),
        ("the new logon for the till is Tp4!qLw8 from monday", "Tp4!qLw8"),
        # a door's code read back with a keypad's key
        ("[10:00] 阿华：车库门禁密码多少？\n[10:01] 阿丽：6620*", "6620"),
    ],
)
def test_the_concepts_of_round_10_are_masked(text: str, value: str) -> None:
    assert value not in mask(text)
    assert contains_secret(text)


@pytest.mark.parametrize(
    "text",
    [
        "[07:40] Kim: did my text arrive?\n[07:41] Lou: yup, at 07:30",
        "[07:40] Kim: did my text arrive?\n[07:41] Lou: yes in 2021",
        "[07:40] Kim: did my text arrive?\n[07:41] Lou: yes, thanks",
        "[07:40] Kim: did my text arrive?\n[07:41] Lou: yes, 2 of them",
        "[11:02] Jens: Kam die SMS an?\n[11:03] Ute: ja, vor 5 Minuten",
        "[09:45] 老王：短信来了没？\n[09:46] 小李：来了，谢谢",
        "security question (favourite teacher): not set yet",
        "Sicherheitsfrage (erstes Haustier) → siehe Ordner",
        "echo 'hello world' > note.txt",
        "lftp -u uploads sftp://files.lan",
        "htpasswd -c /etc/.pw staff",
        "zip -r tax.zip tax/",
        "openssl rsa -in k.pem -passin file:pass.txt",
        "login failed: bad password for user 'kiosk3' (try 4 of 3)",
        "ERROR 403: wrong password for user 'night_shift'",
        "羽田第1ターミナル 15番ゲート、NH 2177便",
        "김포 3번 게이트, KE 1121편 탑승",
        "signup form: password: <your password>, PIN: ****",
        "表格：密码：<填写密码>，确认：<再次填写>",
        "the login for the lab laptop is on a sticker",
        "the login page for the portal is down again",
        "パスワードは英数字8文字以上",
        "الرمز البريدي للمكتب 11564",
    ],
)
def test_the_look_alikes_of_round_10_are_kept(text: str) -> None:
    assert mask(text) == text


_ASKS = st.sampled_from(
    [
        "did the text come?",
        "got the SMS?",
        "Kam die SMS an?",
        "t'as reçu le message ?",
        "смс пришла?",
        "短信到了吗？",
        "문자 왔어?",
        "وصلتك الرسالة؟",
    ]
)
_ASSENTS = st.sampled_from(["yes", "yep it says", "ja,", "oui", "да,", "到了", "응", "نعم،"])


@hsettings(max_examples=200, deadline=None)
@given(
    ask=_ASKS,
    assent=_ASSENTS,
    code=st.from_regex(r"[0-9]{3} [0-9]{3}|[0-9]{6}|[0-9]{2} [0-9]{2} [0-9]{2}", fullmatch=True),
)
def test_a_code_answering_whether_a_text_came_is_masked(ask: str, assent: str, code: str) -> None:
    text = f"[10:00] A: {ask}\n[10:01] B: {assent} {code}"
    assert code not in mask(text)


@hsettings(max_examples=200, deadline=None)
@given(
    ask=_ASKS,
    assent=_ASSENTS,
    tail=st.sampled_from(["at 10:30", "in 2019", "2 of them", "thanks", "10 minutes ago"]),
)
def test_a_time_year_or_count_answering_whether_a_text_came_stays(
    ask: str, assent: str, tail: str
) -> None:
    text = f"[10:00] A: {ask}\n[10:01] B: {assent} {tail}"
    assert mask(text) == text


@hsettings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    user=st.from_regex(r"[a-z][a-z0-9_]{2,10}", fullmatch=True),
    tries=st.integers(min_value=1, max_value=9),
)
def test_a_login_error_quoting_a_user_stays(user: str, tries: int) -> None:
    text = f"ERROR 401: invalid password for user '{user}' (attempt {tries} of 5)"
    assert mask(text) == text


@hsettings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_asking_line_holds_a_message_needle(data: st.DataObject) -> None:
    """The reply reader runs only when a word for a text message stands: an asking line
    without one would never be read."""
    asked = data.draw(st.from_regex(re.compile(_ASKING.pattern), fullmatch=True))
    assert any(needle in asked.casefold() for needle in MESSAGE_NEEDLES), asked
