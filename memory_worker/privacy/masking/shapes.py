"""Secrets recognised by their shape, wherever they stand: provider tokens, private keys,
``Authorization`` values, credentials inside URLs, webhook URLs.

Each rule is a pattern and the group that is the secret (0: the whole match);
some carry a check on the value that a regular expression says badly (the
``Basic`` value must decode to ``user:password``; an ``sk-`` key must be long or
hold a digit). Minimum lengths sit under every real token's length and above
ordinary words: ``sk-learn`` or ``hf_hub_download`` are not keys.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterator

from memory_worker.privacy.masking.needles import Hits

Span = tuple[int, int, str]
Check = Callable[[str], bool]


def _has_digit(value: str) -> bool:
    return any(c.isdigit() for c in value)


#: A character typed over and over for a value left out: x, X, 0, *, •, ., # (a lucky
#: ``888888`` inside a password is the password's own).
_FILLED = re.compile(r"([xX0*•.#])\1{5}")
_RUN = re.compile(r"([xX0*•.#])\1{3,}")
#: A filled value keeps fewer characters than this once its runs are taken out
#: (``sk-xxxxxxxx`` keeps ``sk-``; a real key followed by ``-XXXX…`` keeps the key).
_FILLED_REST = 12
_VARIABLE = re.compile(
    r"^(?:\$(?:\{|\(|[A-Z_][A-Z0-9_]*$)|<[^<>]+>$|\{\{|%\(?\w*\)?[sd]$|\[[^\[\]]*\]$)"
)


def placeholder(value: str) -> bool:
    """A value that stands for one: a shell or template variable (``$PASS``, ``"$(cat f)"``,
    ``${X}``, ``%s``, ``<token>``), or one character typed over and over (``sk-xxxxxxxx``,
    ``********``) with little else."""
    bare = value.strip("\"'`")
    if _VARIABLE.match(bare) is not None:
        return True
    return _FILLED.search(value) is not None and len(_RUN.sub("", value)) < _FILLED_REST


def token_like(value: str) -> bool:
    """A value that reads as a generated token rather than a word: a digit, a symbol, or
    upper case after the first letter (``correct-horse`` is a phrase, ``K9x…`` is not)."""
    if len(value) < 6:
        return False
    return (
        _has_digit(value)
        or any(c in "._~+/=!@#$%^&*" for c in value)
        or any(c.isupper() for c in value[1:])
    )


def _mixed_base58(value: str) -> bool:
    return (
        _has_digit(value)
        and any(c.isupper() for c in value[1:])
        and any(c.islower() for c in value)
    )


def _sk_key(value: str) -> bool:
    return len(value) >= 19 or _has_digit(value)


def _basic_credentials(value: str) -> bool:
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded and len(decoded) >= 3


#: (kind, needles, pattern, secret group, check on the secret). A rule runs only on a text
#: whose casefolded form holds one of its needles (every match holds one: a property test
#: checks it), so an ordinary sentence costs a few substring searches, not 40 scans.
_RULES: tuple[tuple[str, tuple[str, ...], str, int | str, Check | None], ...] = (
    ("token", ("sk-",), r"\bsk-[A-Za-z0-9][A-Za-z0-9_-]{9,}", 0, _sk_key),
    ("token", ("k_live_", "k_test_"), r"\b[rsp]k_(?:live|test)_[A-Za-z0-9]{10,}", 0, None),
    ("token", ("whsec_",), r"\bwhsec_[A-Za-z0-9+/=]{16,}", 0, None),
    (
        "token",
        ("akia", "asia", "abia", "acca", "agpa", "aida", "aipa", "anpa", "anva", "aroa", "apka"),
        r"\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA)[A-Z0-9]{16}\b",
        0,
        None,
    ),
    ("token", ("gh",), r"\bgh[pousr]_[A-Za-z0-9]{30,}", 0, None),
    ("token", ("github_pat_",), r"\bgithub_pat_[A-Za-z0-9_]{30,}", 0, None),
    ("token", ("gl",), r"\bgl(?:pat|dt|ptt|rt|cbt|soat|ffct)-[A-Za-z0-9_-]{20,}", 0, None),
    ("token", ("xox",), r"\bxox[abeoprs]-[A-Za-z0-9-]{10,}", 0, None),
    ("token", ("xapp-",), r"\bxapp-\d-[A-Za-z0-9-]{10,}", 0, None),
    ("token", ("aiza",), r"\bAIza[0-9A-Za-z_-]{35}", 0, None),
    ("token", ("ya29.",), r"\bya29\.[0-9A-Za-z_-]{20,}", 0, None),
    ("token", ("gocspx-",), r"\bGOCSPX-[A-Za-z0-9_-]{20,}", 0, None),
    ("token", ("hf_",), r"\bhf_[A-Za-z0-9]{30,}", 0, None),
    ("token", ("npm_",), r"\bnpm_[A-Za-z0-9]{30,}", 0, None),
    ("token", ("pypi-",), r"\bpypi-[A-Za-z0-9_-]{40,}", 0, None),
    ("token", ("sg.",), r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}", 0, None),
    ("token", ("sk",), r"\bSK[0-9a-f]{32}\b", 0, None),
    ("token", ("key-",), r"\bkey-[0-9a-zA-Z]{32}\b", 0, None),
    ("token", ("-us",), r"\b[0-9a-f]{32}-us\d{1,2}\b", 0, None),
    ("token", ("_v1_",), r"\bdo[opr]_v1_[a-f0-9]{64}\b", 0, None),
    ("token", ("shp",), r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b", 0, None),
    ("token", ("atatt3",), r"\bATATT3[A-Za-z0-9_=-]{30,}", 0, None),
    ("token", ("sq0",), r"\bsq0(?:atp|csp)-[0-9A-Za-z_-]{22,}", 0, None),
    ("token", ("dapi",), r"\bdapi[a-f0-9]{32}\b", 0, None),
    ("token", ("glc_", "glsa_"), r"\bgl(?:c|sa)_[A-Za-z0-9+/=_]{32,}", 0, None),
    ("token", ("lin_api_",), r"\blin_api_[A-Za-z0-9]{32,}", 0, None),
    ("token", ("hvs.",), r"\bhvs\.[A-Za-z0-9_-]{24,}", 0, None),
    ("token", ("age-secret-key-1",), r"\bAGE-SECRET-KEY-1[A-Z0-9]{50,}", 0, None),
    ("token", (":",), r"(?<![0-9])\d{8,10}:[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])", 0, None),
    (
        "token",
        ("eyj",),
        r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        0,
        None,
    ),
    # a private key's body without its header: DER (``MII…``) or OpenSSH base64
    ("private_key", ("mii",), r"\bMII[A-Za-z0-9+/]{3}IBA[A-Za-z0-9+/]{54,}={0,2}", 0, None),
    (
        "private_key",
        ("b3blbnnzac1rzxktdje",),
        r"\bb3BlbnNzaC1rZXktdjE[A-Za-z0-9+/]{20,}={0,2}",
        0,
        None,
    ),
    # credentials on command lines: curl -u user:pass (the whole pair), mysql -pSECRET (not
    # the backtick closing `mysql -u root -p`: no value, it asks for one),
    # sshpass -p SECRET, docker login -p, redis-cli -a, --password/--token/--api-key VALUE
    (
        "password",
        ("-u", "--user"),
        r"(?<!\S)(?:-u|--user|--proxy-user)(?:[ \t]+|=)?[\"']?(?P<v>[^\s\"':$<]{1,64}:[^\s\"'<]{3,})",
        "v",
        None,
    ),
    (
        "password",
        ("mysql", "mariadb"),
        r"\b(?:mysql|mysqladmin|mysqldump|mariadb)\b[^\n]*?\s-p(?P<v>[^\s,;.'\")`-]\S*)",
        "v",
        None,
    ),
    (
        "password",
        ("mysql", "mariadb"),
        r"\b(?:mysql|mysqladmin|mysqldump|mariadb)\b[^\n]*?\s-p(?P<q>['\"])(?P<v>[^'\"\n]{3,})(?P=q)",
        "v",
        None,
    ),
    ("password", ("sshpass",), r"\bsshpass\s+-p\s*(?P<v>\S+)", "v", None),
    # a password handed to a command's own flag or argument: piped into ``sudo -S``, ``lftp -u
    # user,pass``, ``htpasswd -b file user pass``, ``7z -pPASS``, ``zip -P PASS``, ``openssl
    # -pass pass:PASS``, ``ncftp -p PASS``
    (
        "password",
        ("sudo",),
        r"\b(?:echo|printf)(?:[ \t]+-[a-zA-Z]+)*[ \t]+(?P<q>['\"]?)(?P<v>[^\s'\"|]{3,}?)(?:\\n)?(?P=q)"
        r"[ \t]*\|[ \t]*sudo\b[^\n|]*?[ \t]-[a-zA-Z]*S",
        "v",
        None,
    ),
    ("password", ("lftp",), r"\blftp\b[^\n]*?[ \t]-u[ \t]+[^\s,]+,(?P<v>[^\s'\"]+)", "v", None),
    (
        "password",
        ("htpasswd",),
        r"\bhtpasswd(?=[^\n]*?[ \t]-[a-zA-Z]*b)(?:[ \t]+-[a-zA-Z]+)+[ \t]+\S+[ \t]+\S+[ \t]+"
        r"['\"]?(?P<v>[^\s'\"]+)",
        "v",
        None,
    ),
    ("password", ("7z",), r"\b7za?\b[^\n]*?[ \t]-p(?P<v>[^\s'\"-]\S*)", "v", None),
    ("password", ("zip",), r"\b(?:un)?zip\b[^\n]*?[ \t]-P[ \t]*(?P<v>[^\s'\"-]\S*)", "v", None),
    (
        "password",
        ("openssl",),
        r"\bopenssl\b[^\n]*?[ \t]-pass(?:in|out)?[ \t]+pass:(?P<v>[^\s'\"]+)",
        "v",
        None,
    ),
    ("password", ("ncftp",), r"\bncftp\w*\b[^\n]*?[ \t]-p[ \t]+(?P<v>[^\s-]\S*)", "v", None),
    ("password", ("redis-cli",), r"\bredis-cli\b[^\n]*?\s-a\s+(?P<v>[^\s-]\S*)", "v", None),
    (
        "password",
        ("login",),
        r"\blogin\b[^\n]*?\s(?:-p|--password)(?:[ \t]+|=)(?P<v>[^\s$-]\S*)",
        "v",
        None,
    ),
    ("password", ("sqlcmd",), r"\bsqlcmd\b[^\n]*?\s-P\s*(?P<v>[^\s-]\S*)", "v", None),
    ("password", ("smbclient",), r"\bsmbclient\b[^\n]*?\s-U\s*\S+?%(?P<v>\S+)", "v", None),
    ("password", ("/p:",), r"(?<!\S)/p:(?P<v>[^\s$]\S*)", "v", None),
    # net use Z: \\srv\share /user:DOM\name PASS, or PASS before /user: ("*" asks for it)
    (
        "password",
        ("net use",),
        r"(?i)\bnet use\b[^\n]*?\s/u(?:ser)?:\S+\s+(?P<v>[^\s/*]\S*)",
        "v",
        None,
    ),
    (
        "password",
        ("net use",),
        r"(?i)\bnet use\s+(?:[a-z]:\s+)?\\\\\S+\s+(?P<v>[^\s/*]\S*)\s+/u(?:ser)?:",
        "v",
        None,
    ),
    (
        "password",
        ("pass", "pwd", "token", "api", "secret"),
        r"(?i)(?<!\S)--(?:[a-z]+-)?(?:password|passwd|pass|pwd|token|api-?key|secret|"
        r"auth-token|access-token|client-secret)(?:[ \t]+|=)[\"']?(?P<v>[^\s\"'$<{%-][^\s\"']*)",
        "v",
        None,
    ),
    # Authorization headers and bearer/basic values
    (
        "auth_header",
        ("authorization",),
        r"(?i)\b(?:proxy-)?authorization\s*[:=]\s*[\"']?(?:basic|bearer|token|digest|bot|"
        r"apikey|sso-key|negotiate|ntlm)\s+(?P<v>[^\s\"',;]{4,})",
        "v",
        None,
    ),
    (
        "auth_header",
        ("authorization",),
        r"(?i)\b(?:proxy-)?authorization\s*[:=]\s*[\"']?(?P<v>[^\s\"',;]{6,})",
        "v",
        token_like,
    ),
    ("auth_header", ("bearer",), r"(?i)\bbearer\s+(?P<v>[A-Za-z0-9._~+/=-]{8,})", "v", token_like),
    (
        "auth_header",
        ("basic",),
        r"(?i)\bbasic\s+(?P<v>[A-Za-z0-9+/]{6,}={0,2})",
        "v",
        _basic_credentials,
    ),
    # webhooks: everything after the fixed part of the URL is the credential
    (
        "webhook",
        ("hooks.slack.com",),
        r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<v>[A-Za-z0-9_/-]+)",
        "v",
        None,
    ),
    (
        "webhook",
        ("discord",),
        r"discord(?:app)?\.com/api/webhooks/(?P<v>\d+/[A-Za-z0-9_-]+)",
        "v",
        None,
    ),
    (
        "webhook",
        ("outlook.office",),
        r"outlook\.office(?:365)?\.com/webhook/(?P<v>[^\s\"'<>]+)",
        "v",
        None,
    ),
)


def _ascii_bounded(pattern: str) -> str:
    """A token's pattern whose word boundaries are ASCII ones: a key glued to CJK text or a
    particle ("key是AIza…", "キーはsk-proj-…です") starts and ends where its ASCII run does
    (``\\b`` sees no boundary between ``是`` and ``A``: both are word characters)."""
    if pattern.startswith(r"\b"):
        pattern = r"(?<![A-Za-z0-9_])" + pattern[2:]
    if pattern.endswith(r"\b"):
        pattern = pattern[:-2] + r"(?![A-Za-z0-9_])"
    return pattern


_COMPILED: tuple[tuple[str, tuple[str, ...], re.Pattern[str], int | str, Check | None], ...] = (
    tuple(
        (kind, needles, re.compile(_ascii_bounded(pattern)), group, check)
        for kind, needles, pattern, group, check in _RULES
    )
)


#: Every needle of the rules (see :mod:`memory_worker.privacy.masking.needles`).
TOKEN_NEEDLES = frozenset(needle for rule in _RULES for needle in rule[1])
_RULES_BY_NEEDLE: dict[str, tuple[int, ...]] = {
    needle: tuple(i for i, rule in enumerate(_RULES) if needle in rule[1])
    for needle in TOKEN_NEEDLES
}
PEM_NEEDLES = frozenset({"private key"})
URL_NEEDLES = frozenset({"://", "=", "@"})

#: A Discord bot token: the bot's id in base64 (a real one starts with M, N or O; one made up
#: for an example or a test may not, so any letter, with digits and both cases in its first
#: part), a timestamp of 6–7 characters, an HMAC — no fixed prefix, so it is looked for in
#: every text (the short middle part sets it apart from a JWT).
_DISCORD = re.compile(
    r"(?<![A-Za-z0-9_.-])(?=[A-Za-z0-9_-]{0,27}\d)(?=[A-Za-z0-9_-]{0,27}[a-z])"
    r"(?=[A-Za-z0-9_-]{0,27}[A-Z])[A-Za-z][A-Za-z0-9_-]{22,27}\.[A-Za-z0-9_-]{6,7}\."
    r"[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_-])"
)


#: A BitLocker recovery key: eight groups of six digits.
_BITLOCKER = re.compile(r"(?<![\d-])\d{6}(?:-\d{6}){7}(?![\d-])")

#: A wallet's private key in WIF: base58, 51–52 characters from 5, K or L.
_WIF = re.compile(r"(?<![A-Za-z0-9])[5KL][1-9A-HJ-NP-Za-km-z]{50,51}(?![A-Za-z0-9])")


def unmarked_tokens(text: str, hits: Hits) -> Iterator[Span]:
    """Spans of tokens that carry no needle (Discord bot tokens, WIF private keys, BitLocker
    recovery keys)."""
    if len(text) >= 55 and "-" in text:
        for match in _BITLOCKER.finditer(text):
            yield match.start(), match.end(), "token"
    if "." in text:
        for match in _DISCORD.finditer(text):
            yield match.start(), match.end(), "token"
    if len(text) >= 51:
        for match in _WIF.finditer(text):
            if _mixed_base58(match.group(0)):
                yield match.start(), match.end(), "private_key"


def token_shapes(text: str, hits: Hits) -> Iterator[Span]:
    """Spans of provider tokens, key bodies, ``Authorization`` values and webhook secrets
    (``hits``: the needles ``text`` holds)."""
    rules = sorted({i for needle in hits.present for i in _RULES_BY_NEEDLE.get(needle, ())})
    for kind, _, pattern, group, check in (_COMPILED[i] for i in rules):
        for match in pattern.finditer(text):
            value = match.group(group)
            if (check is None or check(value)) and (kind == "webhook" or not placeholder(value)):
                yield match.start(group), match.end(group), kind


# --- PEM private key blocks --------------------------------------------------------------------

_PEM_BEGIN = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = re.compile(r"\s*-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")
_PEM_HEADER_LINE = re.compile(r"\s*(?:Proc-Type|DEK-Info|Comment|Version|Hash):[^\n]*")
_PEM_TOKEN = re.compile(r"\s*(?P<t>[A-Za-z0-9+/]+={0,2})(?=\s|$|-----)")


def _base64_line(token: str) -> bool:
    """A token of a key body: long, or padded, or mixed like generated text (not a word)."""
    if len(token) >= 16 or token.endswith("="):
        return True
    return len(token) >= 2 and (
        _has_digit(token)
        or any(c in "+/" for c in token)
        or (any(c.isupper() for c in token[1:]) and any(c.islower() for c in token))
    )


def private_key_blocks(text: str, hits: Hits) -> Iterator[Span]:
    """Spans of PEM private keys, header to footer; a block cut short (no footer) runs to the
    last token of its base64 body."""
    if hits.present.isdisjoint(PEM_NEEDLES):
        return
    for begin in _PEM_BEGIN.finditer(text):
        at = begin.end()
        while True:
            header = _PEM_HEADER_LINE.match(text, at)
            if header is not None and header.end() > at:
                at = header.end()
                continue
            token = _PEM_TOKEN.match(text, at)
            if token is None or not _base64_line(token.group("t")):
                break
            at = token.end()
        end = _PEM_END.match(text, at)
        yield begin.start(), end.end() if end is not None else at, "private_key"


# --- credentials inside URLs --------------------------------------------------------------------

_AUTHORITY = re.compile(r"(?i)\b[a-z][a-z0-9+.-]{1,20}://(?P<a>[^\s/\"'<>]+)")
_QUERY_SECRET = re.compile(
    r"(?i)[?&;](?:access_token|refresh_token|id_token|api[_-]?key|apikey|key|token|secret|"
    r"client_secret|password|passwd|pwd|pass|auth|sig|signature|x-amz-signature|"
    r"x-amz-security-token|private_token)=(?P<v>[^&#\s\"'<>]+)"
)


#: ``user:password@host`` without a scheme (``ssh``, ``git``, connection strings).
_BARE_AUTHORITY = re.compile(
    r"(?<![\w.:/@%+-])[A-Za-z0-9._%+-]{1,64}:(?P<p>[^\s:@/'\"<>\[\]]{3,128})@"
    r"(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+|localhost)\b"
)


#: A Wi-Fi QR code's text (``WIFI:T:WPA;S:<network>;P:<password>;;``): the password field.
WIFI_NEEDLES = frozenset({"wifi:"})
_WIFI_QR = re.compile(r"(?i)\bWIFI:(?:[^;\n]*;)*?P:(?P<p>(?:\\.|[^;\\\n])+);")


def wifi_qr(text: str, hits: Hits) -> Iterator[Span]:
    """Spans of the password of a Wi-Fi QR code's text."""
    if "wifi:" not in hits.present:
        return
    for match in _WIFI_QR.finditer(text):
        yield match.start("p"), match.end("p"), "password"


def url_credentials(text: str, hits: Hits) -> Iterator[Span]:
    """Spans of passwords in ``scheme://user:password@host`` and ``user:password@host``
    (also ``:password@`` and a token standing alone as the user) and of secret query
    parameters' values."""
    if hits.present.isdisjoint(URL_NEEDLES):
        return
    if "@" in text:
        for match in _BARE_AUTHORITY.finditer(text):
            yield match.start("p"), match.end("p"), "url_credential"
    for match in _AUTHORITY.finditer(text):
        authority = match.group("a")
        userinfo, at, _ = authority.rpartition("@")
        if not at or not userinfo:
            continue
        start = match.start("a")
        user, colon, password = userinfo.partition(":")
        if colon and password:
            yield start + len(user) + 1, start + len(userinfo), "url_credential"
        elif not colon and len(user) >= 16 and token_like(user):
            yield start, start + len(user), "url_credential"
    for match in _QUERY_SECRET.finditer(text):
        if not match.group("v").startswith("["):  # already masked
            yield match.start("v"), match.end("v"), "url_credential"
