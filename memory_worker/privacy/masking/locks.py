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

from memory_worker.privacy.masking.needles import Hits, trie_pattern, words
from memory_worker.privacy.masking.ordinary import NOT_SECRET_CODES, UNITS
from memory_worker.privacy.masking.shapes import Span

#: Needles: a text holding none of them names no key box or lock.
LOCK_NEEDLES = words(
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
    r"|porta|portone|cancello|ingresso|citofono|port[ãa]o|garagem|(?:voor|achter|zij|kelder|buiten)?deur|poort|ingang|hek"
    r"|d[öo]rr(?:en)?|porten|grind(?:en)?|drzwi|bram(?:a|k[ai])|furtk[ai]|wej[śs]ci[ea]|gara[żz]"
    r"|двер[ьи]|калитк[аи]|ворота|подъезд|гараж|kap[ıi](?:s[ıi])?|garaj"
    # an intercom, and an alarm (its code disarms it)
    r"|(?:gegen)?sprechanlage|interphone|interfono|interfone|parlofoon|porttelefon(?:en)?"
    r"|domofon\w*|домофон\w*|diyafon|portero|telefonillo|alarm(?:anlage|et|u|en)?|alarme|alarma|allarme|larm(?:et)?"
    r"|сигнализаци\w*)(?![^\W\d_])"
    r"|門|ドア|玄関|裏口|勝手口|通用口|入口|ゲート|インターホン|警報|뒷문|정문|입구|아파트\s*공동현관|현관|대문|출입문|인터폰|경보|门|对讲|报警器?"
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
        if _AMOUNT.match(text, match.end("v")) or _TIME_AFTER.match(text, match.end("v")):
            continue  # an amount or a time ("padlock 2230 Uhr")
        if match.group("bare") is None or not _YEAR.match(match.group("v")):
            yield match.start("v"), match.end("v"), "pin"
    if "\n" in text:
        for match in _LOCK_ANSWERED.finditer(text):
            if not _YEAR.match(match.group("v")):
                yield match.start("v"), match.end("v"), "pin"


#: What an entry's or a lock's code may be named by with no verb, the digits standing bare after
#: it in its sentence ("boathouse padlock is 54713", "cancello area gru 58300", "Steg-Tor 92784",
#: "iskele kapısı 44960", "浮桥门禁5926", "the override for room 2's maglock is 433487"): a gate, a
#: barrier, a padlock, a lock, a key box or a key safe in the fifteen languages. Narrower than
#: :data:`_ENTRY` on purpose: a door, a port ("porta 8080"), an alarm ("alarm 0630") or a portal
#: name other numbers too.
_BARE_NOUN = (
    r"(?<![^\W\d_])(?:gate|padlock|maglock|mag\s*lock|keysafe|key\s*safe|lock\s*box|key\s*box"
    r"|barrier|combination\s+lock|lock"
    r"|(?:steg|hof|garten|einfahrts|garagen|haus)?-?tor|schloss|vorhängeschloss|zahlenschloss"
    r"|schranke|pforte|schlüssel(?:kasten|box|tresor|safe)"
    r"|portail|portillon|cadenas|barri[èe]re|grille|bo[iî]te\s+[àa]\s+cl[ée]s"
    r"|port[óo]n|cancela|candado|verja|barrera|cajet[íi]n(?:\s+de\s+llaves)?|caja\s+de\s+llaves"
    r"|cancell(?:o|etto)|lucchetto|sbarra|cassetta\s+(?:delle\s+)?chiavi"
    r"|port[ãa]o|cadeado|cofre\s+de\s+chaves|caixa\s+de\s+chaves"
    r"|hek|poort|hangslot|cijferslot|sleutelkastje|sleutelkluis|slagboom"
    r"|grind(?:en)?|hänglås(?:et)?|kodlås(?:et)?|nyckelskåp(?:et)?|nyckelbox(?:en)?|bommen"
    r"|bram(?:a|y|ie|ę)|furtk[aię]|kłódk[aiąę]|szlaban|sejfik|skrytk[aię]"
    r"|калитк[аиуе]|ворот(?:а|ах)|зам(?:ок|ка|ке)|шлагбаум\w*|ключниц\w*"
    r"|kap[ıi](?:s[ıi])?|kilid(?:i|in)|kilit|bariyer|anahtar\s+kutusu"
    r")(?![^\W\d_])"
    r"|ゲート|南京錠|ダイヤル錠|キーボックス|門|게이트|자물쇠|키\s*박스|대문|차단기"
    r"|门禁|大门|挂锁|密码锁|钥匙[盒箱]|(?:ال)?بوابة|(?:ال)?قفل|صندوق\s+(?:ال)?مفاتيح"
)
#: The words that may stand between such a noun and its digits: no digit, no sentence's end,
#: at most 48 characters ("vom Bootshaus ist jetzt", "del pontile", "zone grue").
_BARE_ENTRY = re.compile(
    rf"(?P<noun>(?i:{_BARE_NOUN}))(?P<gap>[^\d.!?。！？\n]{{0,48}}?)"
    r"(?<![A-Za-z0-9])(?P<v>[#*]?\d{4,8}[#*]?)(?![\d.,:/-]\d)(?![A-Za-z0-9])"
)
#: An entry of :data:`_ENTRY` (a door, an entrance, an intercom…), a few words of its own, then
#: a colon or a copula and the digits ("the front door is 4471", "Haustür: 4471", "la porte
#: d'entrée c'est 4471", "玄関は4471"): joined to it, a door's number is its code.
_JOINED_ENTRY = re.compile(
    rf"(?P<noun>(?i:{_ENTRY}))(?P<gap>[^\d.!?。！？\n:：=]{{0,24}}?)"
    r"(?:[ \t]*[:：=]|[ \t]+(?i:is|ist|est|c['’]est|es|è|é|är|er|jest|это|—)|[ \t]*(?:は|는|은|是|为))"
    r"[ \t]*(?<![A-Za-z0-9])(?P<v>[#*]?\d{4,8}[#*]?)(?![\d.,:/-]\d)(?![A-Za-z0-9])"
)
#: An entry's words that also name a network port or a web portal, joined by a colon or an
#: equals sign as a setting is ("porta: 8080", "portal=2024").
_PORTS = frozenset({"porta", "porten", "portal", "portão"})
_CONFIG_JOIN = re.compile(r"[ \t]*[:：=]")
#: A gap that says the number is something else: a room, a flight, a seat, a platform, a phone,
#: a price, a year, an address, a model, a year's verb (anywhere between the noun and digits).
_NOT_A_CODE_GAP = re.compile(
    r"(?i)(?<![^\W\d_])(?:room|zimmer|chambre|habitaci[óo]n|stanza|"
    r"quarto|kamer|rum|pok[óo]j|номер|oda|flight|flug|vol|vuelo|volo|voo|vlucht|рейс|uçuş|"
    r"seat|platform|gleis|quai|and[ée]n|binario|spår|peron|путь|tel|phone|telefon|fax|costs?|"
    r"kostet|co[uû]te|cuesta|costa|kost|kostar|kosztuje|стоит|price|preis|prix|precio|prezzo|"
    r"pre[çc]o|prijs|pris|cena|цена|fiyat|year|jahr|ann[ée]e|a[ñn]o|anno|ano|jaar|år|rok|год|yıl|"
    # an address or an identifier's number ("o portão fica na rua 1820", "brama nr 1234")
    r"street|st|road|rd|avenue|ave|stra(?:ß|ss)e|str|weg|rue|calle|avenida|via|viale|piazza|rua|"
    r"straat|laan|gatan|v[äa]gen|ulica|ul|улица|ул|sokak|sokağı|cadde(?:si)?|nr|no|n[º°o]|№|núm|"
    r"num|model|modell|mod[èe]le|modelo|modello|модель|type|typ|tipo|"
    # a verb of building or founding: a year, not a code ("das Schloss wurde 1869 begonnen")
    r"wurde|was|were|built|gebaut|erbaut|founded|gegründet|construit|construido|costruito|"
    r"constru[íi]do|gebouwd|byggd|zbudowan\w*|построен\w*|yapıldı)"
    r"(?![^\W\d_])"
)
#: The gap's last word a preposition of time or the hour's word, right before the digits: a time
#: or a date ("the gate closes at 2230", "تغلق الساعة 2230"); before it, "à droite du portail,"
#: is a place.
_TIME_BEFORE = re.compile(
    r"(?i)(?<![^\W\d_])(?:at|by|from|until|till|since|before|after|um|ab|bis|seit|vor|nach|à|"
    r"dès|depuis|jusqu['’]?à|a\s+las|desde|hasta|alle|dalle|fino\s+alle|às|até|om|tot|kl|"
    r"klockan|från|till|o|od|do|в|с|до|после|saat|"
    r"hour|heure|hora|ora|ore|uur|timme|godz\w*|час\w*|(?:ال)?ساعة)[ \t]*$"
)
#: A time after the digits ("2230 Uhr", "0700h", "1430時").
_TIME_AFTER = re.compile(
    r"[ \t]*(?:h(?![^\W\d_])|uhr|o['’]?clock|hrs|時|点|시"
    # a year's, a month's or a day's word after it ("2019년 설치", "2019 年装的")
    r"|年|년|月|월)"
    # a particle or a case ending of time glued after the digits ("2300'de", "2230に閉まる",
    # "2230에"): when, not what to key ("60913に変更" is what it was changed to)
    r"|['’](?:de|da|te|ta|den|dan|ten|tan)(?![^\W\d_])|に(?![変替])|에",
    re.I,
)
#: Digits adorned with a keypad's keys: ``#`` or ``*`` on both sides, or a ``#`` after them
#: (the keypad's enter key): a code wherever it stands ("*938654#", "#14695#", "545880#").
#: A ``*`` after them, or one key before them, is a code beside an entry, a lock or a code's
#: word in the sentence ("Tor zum Kranplatz 3076*", "Hafen-Tor #8103", "钥匙盒*837830"); alone
#: it is a footnote, a hashtag or an order's number ("#4521", "1999*").
_KEYPAD_CODE = re.compile(
    r"(?<![A-Za-z0-9_#*+])(?P<a>[#*]?)(?P<v>\d{4,8})(?P<b>[#*]?)(?![A-Za-z0-9_#*]|[.,:/-]\d)"
)
#: A code's word ("code", "Code", "kod", "código", "番号", "码", "번호", "رمز"), for an adorned
#: code's context beside :data:`_BARE_NOUN`.
_CODE_WORD = re.compile(
    r"(?i)(?<![^\W\d_])(?:code|codes|kod|kodu|koden|codice|c[óo]digo|код\w*|combo|pin|"
    r"keypad|tastiera|teclado|clavier|tastatur|knappsats|klawiatur\w*)(?![^\W\d_])"
    r"|暗証番号|暗証|コード|密码|密碼|开门码|门禁码|비밀번호|비번|코드|رمز|الرمز|كود"
)
_SENTENCE_END = re.compile(r"[.!?。！？\n](?!\d)")


def _in_sentence_before(pattern: re.Pattern[str], text: str, at: int, reach: int = 80) -> bool:
    """Whether ``pattern`` stands in the sentence before ``at`` (within ``reach``), and not
    after a word saying the code is of another kind ("order code #48213", "promo code")."""
    start = max(0, at - reach)
    window = text[start:at]
    ends = [m.end() for m in _SENTENCE_END.finditer(window)]
    for found in pattern.finditer(window, ends[-1] if ends else 0):
        before = window[: found.start()].split()
        if not before or before[-1].casefold() not in NOT_SECRET_CODES:
            return True
    return False


_BARE_NOUN_RE = re.compile(rf"(?i:{_BARE_NOUN})")
#: Literal pieces (casefolded) every match of :data:`_BARE_NOUN` and :data:`_ENTRY` holds: a
#: text, or a number's window, without one holds no such noun (a property test checks it).
NOUN_NEEDLES = words(
    """
    gate lock safe box barrier tor schloss schranke pforte schlüssel port barri grille boîte
    boite cadenas cancel candado verja barrera cajet caja lucchetto sbarra cassetta cadeado
    cofre caixa hek poort slot sleutel slagboom grind lås nyckel bommen bram furtk kłódk
    szlaban sejfik skrytk калитк ворот зам шлагбаум ключниц kap kilid kilit bariyer anahtar
    door entr garage intercom tür tur eingang puerta garaje cochera ingresso citofono garagem
    deur ingang dörr dorr drzwi wejś wejs gara двер подъезд гараж sprechanlage interphone
    interfono interfone parlofoon porttelefon domofon домофон diyafon portero telefonillo alarm
    larm сигнализаци ゲート 南京錠 ダイヤル錠 キーボックス 門 ドア 玄関 裏口 勝手口 通用口 入口
    インターホン 警報 게이트 자물쇠 키 대문 차단기 뒷문 정문 입구 현관 출입문 인터폰 경보 门 对讲 报警
    大门 挂锁 密码锁 钥匙 بوابة قفل صندوق الباب المدخل إنذار انذار
    """
)
_NOUN_SCAN = re.compile(trie_pattern(NOUN_NEEDLES))
#: A word naming an identifier right before a keypad-shaped number: an order, an issue, a
#: ticket, an invoice, a reference, in the fifteen languages.
_ID_BEFORE = re.compile(
    r"(?i)(?<![^\W\d_])(?:order|issue|ticket|invoice|ref|pr|bug|case|tracking|bestellung|"
    r"rechnung|commande|facture|pedido|factura|ordine|fattura|encomenda|fatura|bestelling|"
    r"factuur|beställning|faktura|zamówienie|заказ|счёт|счет|sipariş|fatura|"
    r"注文|주문|订单|訂單|طلب|فاتورة)(?:[ \t]+(?:no\.?|nr\.?|number|n[º°o]))?[ \t]*[:#]?[ \t]*$"
)
#: Four digits that may be a year (1800–2039): a bare number after a gate's or a lock's noun
#: then is no code ("the padlock, 1998 vintage"); one with a connector or a keypad's key
#: still is.
_YEAR_LIKE = re.compile(r"(?:1[89]\d|20[0-3])\d$")
_AMOUNT_BEFORE = re.compile(r"[$€£¥₽₴₺]\s*$")
#: A flight's number: an airline's two-character designator right before the digits ("KE
#: 2591", "LH1159"), or a word for a flight glued after them ("2591便", "1159편", "8812航班").
_FLIGHT_BEFORE = re.compile(r"(?<!\w)(?:[A-Z]{2}|[A-Z]\d|\d[A-Z])[ \t]?$")
_FLIGHT_AFTER = re.compile(r"[ \t]?(?:便|편|航班)")


def keypad_codes(text: str, hits: Hits) -> Iterator[Span]:
    """A code adorned with a keypad's keys (see :data:`_KEYPAD_CODE`), and a gate's, a lock's
    or a key box's number standing bare after its noun in its sentence (:data:`_BARE_ENTRY`).
    Run on every text: a ``#`` or a ``*``, or a run of four digits, is looked for first."""
    if "#" in text or "*" in text:
        for match in _KEYPAD_CODE.finditer(text):
            a, b = match.group("a"), match.group("b")
            if not a and not b:
                continue
            at = match.start("v")
            if _AMOUNT.match(text, match.end()) or _AMOUNT_BEFORE.search(text, 0, match.start()):
                continue
            both = bool(a) and bool(b)
            if _ID_BEFORE.search(text, max(0, match.start() - 24), match.start()):
                continue  # "order #40291*", "bug #4412#": an identifier's number
            anywhere = (both and not (a == b == "*")) or b == "#"
            if anywhere or _in_sentence_before(_BARE_NOUN_RE, text, at):
                yield match.start(), match.end(), "pin"
            elif _in_sentence_before(_CODE_WORD, text, at) and not _YEAR.match(match.group("v")):
                yield match.start(), match.end(), "pin"  # not "*2024*", a year in bold
    end = 0
    needles: list[int] | None = None
    for digits in _FOUR_DIGITS.finditer(text):
        if digits.start() < end:
            continue
        end = digits.end()
        if needles is None:  # one C-speed scan a text for the nouns' literal pieces
            needles = [m.start() for m in _NOUN_SCAN.finditer(text.casefold())]
            if not needles:
                return
        window = max(0, digits.start() - 70)
        if not any(window - 8 <= at <= digits.start() for at in needles):  # casefold: ß → ss
            continue
        for pattern in (_BARE_ENTRY, _JOINED_ENTRY):
            found = _entry_code(pattern, text, window, digits)
            if found is not None:
                yield found
                end = found[1]
                break


def _entry_code(
    pattern: re.Pattern[str], text: str, window: int, digits: re.Match[str]
) -> Span | None:
    """The code ``pattern`` finds over ``digits`` (searched from ``window``), unless its gap,
    its value or what follows says it is a time, a year, an amount or an identifier."""
    for match in pattern.finditer(text, window, min(len(text), digits.end() + 12)):
        if not match.start("v") <= digits.start() < match.end("v"):
            continue
        value = match.group("v").strip("#*")
        gap = match.group("gap")
        if _NOT_A_CODE_GAP.search(gap) or _TIME_BEFORE.search(gap) or _YEAR_LIKE.match(value):
            return None
        if _AMOUNT.match(text, match.end()) or _TIME_AFTER.match(text, match.end()):
            return None
        if _AMOUNT_BEFORE.search(gap):
            return None
        if _FLIGHT_BEFORE.search(text, max(0, match.start("v") - 4), match.start("v")) or (
            _FLIGHT_AFTER.match(text, match.end("v"))
        ):
            return None  # "B42番ゲート、KE 2591便": the flight's number, not the gate's code
        if match.group("noun").casefold() in _PORTS and _CONFIG_JOIN.match(text, match.end("gap")):
            return None  # "porta: 8080" (a port), not "a porta dos fundos é 6630"
        return match.start("v"), match.end("v"), "pin"
    return None
