"""Masking (§14): the one home of what counts as a secret and of taking it out of text.

Every text that leaves the process or is kept about a failure passes through
this package, with one family of functions:

- :func:`find_secrets` — the secrets in a text, as spans with a kind;
- :func:`mask` — the text with each secret replaced by a placeholder; used
  for every prompt to the farm (messages, sender names, cards shown, merge
  requests), every embedder input (cards, related-card queries) and every
  ``recall()`` query; with ``contacts`` (``MEMORY_REDACT_CONTACTS``) e-mail
  addresses and phone numbers too; also for episode summaries and topics;
- :func:`contains_secret` — whether a card may not be stored (§10): it holds a
  secret, a placeholder where one was masked, or talks about a credential;
- :func:`scrub` — what logs, Sentry, the CLI and the console may show
  (stricter: URL details and the process's configured secrets too);
- :func:`mask_error` — an error text as the run error log keeps it: echoes of
  the run's messages removed, scrubbed, bounded.

Last, :mod:`.withhold`: a line that talks about a credential and still holds a word shaped
like a value once the detectors have run is withheld whole, so what ``contains_secret`` flags
never reaches the farm with its value, even a value no rule recognises. And a text in which
a secret was found keeps none of its other values (:mod:`.contaminate`): the other codes of a
handover list, the CVV after a card, the PUK after a PIN.

Where: the detectors run together in :mod:`.detect` (``find_secrets``, ``mask``,
``contains_secret``) on the text :mod:`.normalise` folds (NFKC, zero-width removed,
look-alike letters folded), behind a one-pass prefilter (:mod:`.needles`); what operators
see is :mod:`.outputs` (``scrub``, ``mask_error``, ``redact_url``). BIP-39 seed phrases are
:mod:`.seeds`; the words of ordinary talk around a label are :mod:`.ordinary`.

What is a secret (the detectors, one module each): provider tokens and key
bodies, ``Authorization`` values, credentials inside URLs, command lines and webhook URLs
(:mod:`.shapes`); values named by a label right before them in the lexicon's languages
(EN, RU, DE, ES, FR, UK, PT, IT, PL, ZH, JA, KO, AR, TR, NL, SV and more, mistyped labels
too: :mod:`.labels`, words in :mod:`.lexicon`), named after them, on the line below them or
a little before a long generated key (:mod:`.around`), values in a list of credentials
under a heading that names accounts, logins or passwords (:mod:`.lists`), and values
assigned to secret-named identifiers in env files, JSON, YAML and code (:mod:`.assign`);
a security question's answer, named by the question in any label language (one word, or
up to three once the question itself is given) (:mod:`.questions`); a key box's or a lock's number a few words on in its sentence
(:mod:`.locks`), and an entry's code beside a verb of opening or keying ("the gate opens with
4471"), a code adorned with a keypad's keys (``*938654#``) and a gate's, a padlock's or a key
box's number bare after its noun ("Steg-Tor 92784"); a generated value after a word for access
or credentials, "the login for X is V", and the password of a ``user / password`` pair
(:mod:`.access`); a one-time code answered on the next speaker's line to a question whether a
text message came (:mod:`.replies`);
what a value may be is
:mod:`.values`; Luhn-valid payment card numbers with their expiry and CVV, and US SSNs
(:mod:`.numbers`).

What is *not* (kept as written, on purpose): words about secrets without a
value ("I forgot my password", "password reset link"), ordinary words after a
label ("the password is wrong"), templates (``${DB_PASSWORD}``), version
strings, dates, phone numbers (unless contacts are asked for), ISBNs, IBANs,
order and tracking numbers that fail Luhn, UUIDs, git hashes, URLs without
credentials, code identifiers (``MAX_TOKENS``, ``hf_hub_download``).

The split corpus measures both sides: ``tests/data/masking/train.jsonl`` (train: the rules
are written against it), ``tests/data/masking/dev.jsonl``, ``dev2.jsonl`` and
``tests/data/masking_test3/test.jsonl``, ``tests/data/masking_test4/test.jsonl`` (dev, dev2,
dev3, dev4, and ``masking_test5`` … ``masking_test9`` as dev5 … dev9: earlier held-out sets,
read once scored; a new held-out part is scored once a round by someone who did not write
the rules);
``bench/masking.py`` prints recall and false masks per language and kind. Lists of
backup codes are :mod:`.backup`.
"""

from memory_worker.privacy.masking.detect import (
    CARD_NUMBER,
    EMAIL,
    PHONE,
    REDACTED,
    Found,
    contains_secret,
    find_secrets,
    mask,
)
from memory_worker.privacy.masking.numbers import luhn_valid
from memory_worker.privacy.masking.outputs import (
    ECHO,
    FILTERED,
    forget_echoes,
    mask_error,
    redact_query,
    redact_url,
    remember_secrets,
    scrub,
    scrub_secrets,
    strip_echoes,
)
from memory_worker.privacy.masking.withhold import SECRET_MARKERS

__all__ = [
    "CARD_NUMBER",
    "ECHO",
    "EMAIL",
    "FILTERED",
    "PHONE",
    "REDACTED",
    "SECRET_MARKERS",
    "Found",
    "contains_secret",
    "find_secrets",
    "forget_echoes",
    "luhn_valid",
    "mask",
    "mask_error",
    "redact_query",
    "redact_url",
    "remember_secrets",
    "scrub",
    "scrub_secrets",
    "strip_echoes",
]
