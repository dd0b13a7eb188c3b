"""A key box's or a lock's number in a long message: a word naming a key box, a lock box, a
padlock or a combination lock in any of the fifteen label languages, then — in the same
sentence, a few words on — a word for its number or code and 3 to 8 digits ("spare key is in
the lockbox by the shed, the number is 4719", "鍵はキーボックスに入れてあって番号は 2164 です",
"열쇠는 키박스에 있고 번호는 853831 입니다"), or a colon or a copula and the digits
("Schlüsselbox am Eingang: 4471", "the padlock opens with 7731"; not a year then), or the
digits right after the lock's own word ("im Kasten mit Zahlenschloss 8991").

A sentence's end (``. ! ? 。 ！ ？`` or a line break) ends the lock's reach ("キーボックスは
玄関の横です。部屋番号は 302 です" keeps its room), two digits are no code ("Nummer 12"),
and a number followed by a unit is an amount ("ключница стоит 1500 рублей").

An entry's code the same way (:func:`entry_numbers`): a door, a gate, an entrance, a garage or
an intercom named in any of the fifteen languages, then in its sentence a verb of opening or
keying and 4 to 8 digits ("the side gate opens with 4471", "garage: enter 4471", "il
cancello si apre con 6620#", "小区大门按 8068#"), or the digits and the verb after them
("Hoftor: 7731 eingeben", "裏門は 7420 で開きます", "1234* 누르면 열려요"). A time is no code:
"the gate opens at 0700" has no verb of keying before its digits.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memory_worker.privacy.masking.needles import Hits
from memory_worker.privacy.masking.ordinary import UNITS
from memory_worker.privacy.masking.shapes import Span


def _words(text: str) -> frozenset[str]:
    """The whitespace-separated words of a block of text (a word list kept readable)."""
    return frozenset(text.split())


#: Needles: a text holding none of them names no key box or lock.
LOCK_NEEDLES = _words(
    """
    lock box padlock schlüssel schloss boîte boite cadenas llave candado chiavi lucchetto chaves
    cadeado sleutel slot nyckel lås klucz kłódk ключниц замк замок kutus kilit キーボックス 錠 키박스
    키 박스 자물쇠 열쇠 钥匙 锁 صندوق قفل
    """
)

_LOCK = (
    r"lock\s*box|key\s*(?:box|safe)|padlock|combination\s+lock"
    r"|schlüssel(?:kasten|box|tresor|safe)\w*|zahlenschloss\w*|vorhängeschloss\w*"
    r"|kombinationsschloss\w*"
    r"|bo[iî]te\s+(?:[àa]\s+)?cl[ée]s|cadenas"
    r"|caja\s+(?:de\s+)?llaves|candado"
    r"|cassett(?:a|ina)\s+(?:delle\s+|per\s+le\s+)?chiavi|lucchetto"
    r"|(?:caixa|cofre)\s+(?:de\s+|das\s+)?chaves|cadeado"
    r"|sleutel(?:kastje|kluis|box)\w*|hangslot\w*|cijferslot\w*|codeslot\w*"
    r"|nyckel(?:box|skåp|gömma)\w*|kodlås\w*|hänglås\w*"
    r"|skryt(?:k|c)\w*\s+(?:na|z)\s+klucz\w*|kłódk\w*"
    r"|ключниц\w*|кодов\w*\s+зам[оа]?к\w*|навесн\w*\s+зам[оа]?к\w*"
    r"|anahtar\s+kutusu\w*|asma\s+kilit\w*|şifreli\s+kilit\w*"
    r"|キーボックス|南京錠|ダイヤル錠|키\s*박스|자물쇠|열쇠\s*함|钥匙[盒箱]|密码锁|挂锁"
    r"|صندوق\s+(?:ال)?مفاتيح|(?:ال)?قفل"
)
_NUMBER_WORD = (
    r"number|code|combo|combination|nummer|zahl|kombination|num[ée]ro|combinaison"
    r"|n[uú]mero|c[oó]digo|combinaci[oó]n|numero|codice|combinazione|combina[çc][ãa]o|senha"
    r"|combinatie|numret|kod(?:en)?|kombinationen|numer|szyfr|kombinacj\w*|номер|код|шифр"
    r"|комбинаци\w*|numara\w*|kodu|şifre\w*|暗証番号|番号|コード|비밀번호|비번|번호|号码|密码|编号"
    r"|(?:ال)?رقم\w*|(?:ال)?رمز\w*|(?:ال)?كود\w*"
)
_CONNECTOR = (
    r"(?:[ \t]*(?:[:：=]|—|–|-)|[ \t]+(?:is|ist|est|c['’]est|es|è|é|är|er|to|это|jest)"
    r"|[ \t]*(?:は|는|은|是|为))?"
)
#: A connector with no number word ("Schlüsselbox am Eingang: 4471", "kodlåset … är 3344",
#: "the padlock opens with 7731"): then a year is no code.
_BARE_CONNECTOR = (
    r"(?:[ \t]*[:：=]|[ \t]+(?i:is|ist|är|er|est|es|è|é|jest|to|это|opens\s+with|öppnas\s+med"
    r"|öffnet\s+mit|s['’]ouvre\s+avec|se\s+abre\s+con|si\s+apre\s+con|abre\s+com|gaat\s+open\s+met"
    r"|otwiera\s+si[ęe]\s+na|открывается\s+на|açılır))"
)
_YEAR = re.compile(r"(?:19|20)\d\d$")
_DIGITS = r"(?P<v>\d{3,8})(?![\d.,:/-]\d)"
#: A lock's word, up to 80 characters of its sentence, a number word and the digits; or
#: the digits right after the lock's word.
_LOCK_NUMBER = re.compile(
    rf"(?i:{_LOCK})(?:[^.!?。！？\n]{{0,80}}?(?<![A-Za-z\u00c0-\u024f\u0400-\u04ff])"
    rf"(?i:{_NUMBER_WORD}){_CONNECTOR}|(?P<bare>[^.!?。！？\n]{{0,40}}?{_BARE_CONNECTOR})|[ \t]+)"
    rf"[ \t]*{_DIGITS}"
)
_AMOUNT = re.compile(
    rf"[ \t]*(?:[%€$£¥₽₴₺元円원]|(?:{'|'.join(sorted(UNITS, key=len, reverse=True))})(?!\w))",
    re.I,
)


#: An entry, in the fifteen languages (German compounds of ``tor`` and ``tür`` named in full:
#: ``Motor`` and ``Doktor`` are none).
_ENTRY = (
    r"(?<![^\W\d_])(?:front\s+door|back\s+door|side\s+door|door|gate|entrance|garage|intercom"
    r"|portal|(?:haus|hinter|garten|hof|garagen|keller)?t[üu]r|(?:hof|garten|garagen|einfahrts)?tor"
    r"|eingang|pforte|porte|portail|portillon|entr[ée]e|puerta|port[óo]n|entrada|garaje|cochera"
    r"|porta|portone|cancello|ingresso|citofono|port[ãa]o|garagem|voordeur|deur|poort|ingang|hek"
    r"|d[öo]rr(?:en)?|porten|grind(?:en)?|drzwi|bram(?:a|k[ai])|furtk[ai]|wej[śs]ci[ea]|gara[żz]"
    r"|двер[ьи]|калитк[аи]|ворота|подъезд|гараж|kap[ıi](?:s[ıi])?|garaj"
    # an intercom, and an alarm (its code disarms it)
    r"|(?:gegen)?sprechanlage|interphone|interfono|interfone|parlofoon|porttelefon(?:en)?"
    r"|domofon\w*|домофон\w*|diyafon|portero|telefonillo|alarm(?:anlage|et|u|en)?|alarme|alarma|allarme|larm(?:et)?"
    r"|сигнализаци\w*)(?![^\W\d_])"
    r"|門|ドア|玄関|ゲート|インターホン|警報|아파트\s*공동현관|현관|대문|출입문|인터폰|경보|门|对讲|报警器?"
    r"|(?:ال)?بوابة|الباب|المدخل|(?:ال)?إنذار|(?:ال)?انذار"
)
#: A verb of opening or keying before the digits ("opens with", "enter", "se abre con el").
_KEYED = (
    r"(?<![A-Za-z\u00c0-\u024f\u0400-\u04ff])(?:opens?\s+with|open\s+it\s+with|enter|type|press"
    r"|punch(?:\s+in)?|key\s+in|tap\s+in|öffnet\s+(?:sich\s+)?mit|s['’]ouvre\s+avec|taper|tape[sz]?"
    r"|composer|compose[sz]?|se\s+abre\s+con|abre\s+con|marca|teclea|pulsa|si\s+apre\s+con"
    r"|apre\s+con|digita|premi|abre\s+com|digite|gaat\s+open\s+met|open\s+met|toets|öppnas\s+med"
    r"|slå|otwiera\s+si[ęe]\s+(?:kodem|na)|kodem|wpisz|wbij|открывается\s+(?:кодом|на)|кодом"
    r"|набери(?:те)?|введи(?:те)?|tuşla|dial|wählen|wähle|discar|disca|draai|fai"
    # disarming an alarm
    r"|disarms?\s+with|deactivates?\s+with|turn\s+it\s+off\s+with|se\s+d[ée]sactive\s+avec"
    r"|d[ée]sactiver?\s+avec|se\s+desactiva\s+con|desactiva(?:la)?\s+con|si\s+disattiva\s+con"
    r"|disattiva(?:lo|la)?\s+con|(?:se\s+)?desativa(?:-se)?\s+com|uit\s+met|st[äa]ngs\s+av\s+med"
    r"|st[äa]ng\s+av\s+med|wy[łl][ąa]cza\s+si[ęe]\s+(?:kodem|na)|отключается\s+(?:кодом|на)"
    r"|снимается\s+(?:кодом|с\s+охраны\s+кодом))"
    r"(?![A-Za-z\u00c0-\u024f\u0400-\u04ff])"
    r"(?:[ \t]+(?:the|el|il|o|het|le|la|code|c[oó]digo|codice|kod))*"
    # a flat's number first, then the code ("dial 14 then 4109", "compose 12 puis 6631")
    r"(?:[ \t]+\d{1,4}[ \t]*,?[ \t]*(?:then|and\s+then|dann|und\s+dann|puis|et\s+puis|et"
    r"|y\s+luego|luego|y|e\s+poi|poi|e"
    r"|e\s+depois|depois|dan|en|sedan|och|potem|i|потом|затем|sonra|ve))?"
    r"|按|输入|تفتح\s+(?:بالرقم|بالكود|بالرمز)|بالرقم|اكتب|أدخل|ادخل"
)
#: A verb of keying or opening after the digits ("7731 eingeben", "5566 ile açılıyor",
#: "7420 で開きます", "1234* 누르면 열려요").
_KEYED_AFTER = (
    r"(?:eingeben|eintippen|tippen|drücken|intoetsen|ile\s+aç[ıi]l\w*|girin|で開|を押|を入力|と入力"
    r"|누르면|눌러|입력|就开|开门|deaktiviert|entschärft|ausgeschaltet|ile\s+kapan\w*"
    r"|で解除|を入れて解除|로\s*해제|으로\s*해제|解除|撤防)"
)
_ENTRY_DIGITS = r"[#*]?\d{4,8}[#*]?(?![\d.,:/-]\d)"
_ENTRY_NUMBER = re.compile(
    rf"(?i:{_ENTRY})[^.!?。！？\n]{{0,60}}?(?:(?i:{_KEYED})[ \t]*(?P<v>{_ENTRY_DIGITS})"
    rf"|(?<![\d#*])(?P<w>{_ENTRY_DIGITS})[ \t]*(?i:{_KEYED_AFTER}))"
)


#: Four digits or more: an entry's code has them (one C-speed scan before the entry pattern).
_FOUR_DIGITS = re.compile(r"\d{4}")
#: How far before its digits an entry's word and its verb may stand.
_ENTRY_REACH = 90


def entry_numbers(text: str, hits: Hits) -> Iterator[Span]:
    """An entry's code by a verb of opening or keying beside its digits, in the entry's
    sentence: "the side gate opens with 4471", "garage: enter 4471 and press the bell",
    "il cancello si apre con 6620#", "Hoftor: 7731 eingeben", "公共玄関は 7420 で開きます".

    Run on every text (its words are too common to serve as needles): only near a run of
    four digits is the entry's pattern tried."""
    end = 0
    for digits in _FOUR_DIGITS.finditer(text):
        if digits.start() < end:
            continue
        window = max(end, digits.start() - _ENTRY_REACH)
        match = _ENTRY_NUMBER.search(text, window, min(len(text), digits.end() + 30))
        if match is None:
            end = digits.end()
            continue
        group = "v" if match.group("v") is not None else "w"
        at, end = match.span(group)
        if not _AMOUNT.match(text, end):
            yield at, end, "pin"


#: A question about a lock's number on its line (the lock's word and a number word, in either
#: order, a question mark closing the line), then its answer on the next non-blank line: a
#: dash, a time or a speaker (a word or a short phrase: "— у меня:", "— 私：", "- I do:") and
#: the digits alone ("кто знает код от навесного замка?\n— я: 3390").
_ASKED = rf"(?:(?i:{_LOCK})[^\n?？؟]{{0,60}}?(?i:{_NUMBER_WORD})|(?i:{_NUMBER_WORD})[^\n?？؟]{{0,60}}?(?i:{_LOCK}))"
_LOCK_ANSWERED = re.compile(
    rf"{_ASKED}[^\n?？؟]{{0,60}}[?？؟][ \t]*\r?\n(?:[ \t]*\r?\n)?"
    r"[ \t]*(?:\[?\d{1,2}:\d{2}\]?[ \t]*)?(?:[-–—•*>]+[ \t]*)?"
    r"(?:[^\s:：\d][^\n:：\d]{0,23}[:：][ \t]*)?"
    r"(?P<v>\d{3,8})[ \t]*[.!]?[ \t]*(?=\r?\n|$)"
)


def lock_numbers(text: str, hits: Hits) -> Iterator[Span]:
    """A key box's or lock's number in its sentence, or answering a question about it on the
    next line (see the module doc)."""
    if not hits.present & LOCK_NEEDLES:
        return
    for match in _LOCK_NUMBER.finditer(text):
        if _AMOUNT.match(text, match.end("v")):
            continue
        if match.group("bare") is None or not _YEAR.match(match.group("v")):
            yield match.start("v"), match.end("v"), "pin"
    if "\n" in text:
        for match in _LOCK_ANSWERED.finditer(text):
            if not _YEAR.match(match.group("v")):
                yield match.start("v"), match.end("v"), "pin"
