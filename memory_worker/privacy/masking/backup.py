"""Lists of backup (recovery) codes under their label: "github backup codes:\\n6ukc-a538\\n…",
"резервні коди гугла: gas4-band dmh4-rweg", "バックアップコード: tsuf-mtpz 2u5m-2y2z".

A service gives 8–16 single-use codes at once, each 8–10 letters and digits, often as two
groups joined by a dash or a space. After a label naming them (in the lexicon's languages),
every code of that shape up to a blank line (or 400 characters) is a value; one code alone
without the label is not taken (it reads as an order or a reference).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memory_worker.privacy.masking.needles import Hits
from memory_worker.privacy.masking.shapes import Span

#: Needles (casefolded) of the labels: a text without one holds no list.
BACKUP_NEEDLES = frozenset(
    [
        "backup",
        "recovery",
        "резерв",
        "восстановл",
        "відновл",
        "復旧",
        "استرجاع",
        "запасн",
        "secours",
        "récup",
        "recup",
        "respaldo",
        "recupera",
        "riserva",
        "zapas",
        "odzysk",
        "reserv",
        "wiederherstell",
        "herstel",
        "yedek",
        "kurtarma",
        "återställning",
        "バックアップ",
        "リカバリ",
        "백업",
        "복구",
        "备用",
        "恢复",
        "احتياط",
        "استرداد",
    ]
)
_LABEL = re.compile(
    r"(?i)(?:backup|recovery|back-up)[\s_-]?(?:codes?|kodlar\w*)|2fa[\s_-]?codes|"
    r"резервн\w*\s+код\w*|запасн\w*\s+код\w*|код\w*\s+(?:для\s+)?(?:восстановлени|відновлен)\w*|"
    r"codes?\s+de\s+(?:secours|récupération|recuperation|sauvegarde)|"
    r"c[oó]digos?\s+de\s+(?:respaldo|recuperaci[oó]n|recupera[cç][aã]o|backup|reserva|seguran[cç]a)|"
    r"codici\s+di\s+(?:backup|riserva|recupero)|kody\s+(?:zapasowe|odzyskiwania|jednorazowe)|"
    r"reservkod\w*|backupkod\w*|(?:backup-?|wiederherstellungs-?)codes?|herstelcodes?|"
    r"back-?upcodes?|yedek\s+kod\w*|kurtarma\s+kod\w*|återställningskod\w*|"
    r"(?:復旧|回復)\s*コード|バックアップ\s*コード|リカバリー?\s*コード|백업\s*코드|복구\s*코드|备用(?:验证)?码|恢复码|"
    r"(?:رموز|أكواد|اكواد)\s+(?:ال)?(?:احتياط\w*|استرداد|استرجاع)"
)
_CODE = re.compile(
    r"(?<![\w-])(?:[A-Za-z0-9]{4,5}[- ][A-Za-z0-9]{4,5}|[a-z0-9]{8,10}|[A-Z0-9]{8,10})(?![\w-])"
)
_REACH = 400


def _code(value: str) -> bool:
    """Letters and digits mixed, or digits only (``1234 5678``), never a word."""
    plain = value.replace("-", "").replace(" ", "")
    return any(c.isdigit() for c in plain) or ("-" in value and plain.isalpha())


def backup_codes(text: str, hits: Hits) -> Iterator[Span]:
    """Spans of the codes of a backup-code list after its label."""
    if hits.present.isdisjoint(BACKUP_NEEDLES):
        return
    for label in _LABEL.finditer(text):
        end = text.find("\n\n", label.end())
        end = min(len(text) if end < 0 else end, label.end() + _REACH)
        found = [m for m in _CODE.finditer(text, label.end(), end) if _code(m.group())]
        if len(found) >= 2:
            for match in found:
                yield match.start(), match.end(), "token"
