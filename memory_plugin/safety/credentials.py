"""Credentials in memory text: detect-secrets' detectors, then the providers they lack.

1. Every regex detector detect-secrets registers (AWS, Azure storage, Artifactory, Basic-auth
   URLs, Cloudant, Discord, GitHub classic, GitLab, IBM, JWT, Mailchimp, npm `.npmrc`,
   OpenAI, private keys, PyPI, SendGrid, Slack, SoftLayer, Square, Stripe, Telegram,
   Twilio), each reporting its own `secret_type`.
2. Its KeywordDetector (`password = ...`, `"api_key": "..."`), in both its config form (quotes
   optional) and its code form (quotes required), with its own heuristic filters applied to
   each finding (templated, `$`-prefixed, sequential, UUID, id-like, indirect reference, no
   letter) and `_NOT_SECRET` (placeholders such as `<token>`, `***`, `vault:...`). The
   filename-based filters (lock files, swagger, non-text) do not apply: a note has no file.
3. `PROVIDER_PATTERNS`: token formats of providers detect-secrets has no detector for (the
   gitleaks formats), each reporting its provider name.
4. `_PHRASE`: a password or token given in words, in several languages ("the password is
   ...", "Passwort: ...").

Left out, on purpose:
- IPPublicDetector: a public IP address is not a credential (and notes name hosts).
- HighEntropyStringsPlugin: entropy alone cannot tell a secret from the commit shas, content
  hashes, checksums and ids that engineering notes quote (`sha = "9fceb02..."` has the hex
  entropy of a key, a quoted base64 digest that of a token), even in an assignment context; a
  quoted secret under a secret-sounding name is already KeywordDetector's, and one under a
  provider's prefix a provider pattern's.

Every pattern sees one line, a long line cut into bounded overlapping windows (`windows`), and
the patterns added here have bounded quantifiers, so a long text costs linear time. A detector
or provider pattern runs only where its RE2 rewrite (superset.py: matching wherever it can
match, and perhaps more) finds something in the text, so most notes skip most of them.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import accumulate
from typing import Any

from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.filters.heuristic import (
    is_indirect_reference,
    is_likely_id_string,
    is_not_alphanumeric_string,
    is_potential_uuid,
    is_prefixed_with_dollar_sign,
    is_sequential_string,
    is_templated_secret,
)
from detect_secrets.plugins.base import RegexBasedDetector
from detect_secrets.plugins.high_entropy_strings import HighEntropyStringsPlugin
from detect_secrets.plugins.ip_public import IPPublicDetector
from detect_secrets.plugins.keyword import (
    CONFIG_DENYLIST_REGEX_TO_GROUP,
    QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP,
    KeywordDetector,
)

from memory_plugin.safety.superset import Sieve, sieve

_SKIPPED = (HighEntropyStringsPlugin, IPPublicDetector, KeywordDetector)
"""Not run as regex detectors: see the module docstring (KeywordDetector runs filtered)."""

_B64URL = r"[A-Za-z0-9_\-]"
PROVIDER_PATTERNS: dict[str, re.Pattern[str]] = {
    name: re.compile(pattern)
    for name, pattern in {
        "GitHub fine-grained token": r"\bgithub_pat_[A-Za-z0-9_]{70,100}",
        "Anthropic API key": rf"\bsk-ant-(?:api|admin|sid)\d\d-{_B64URL}{{20,120}}",
        "OpenAI-style secret key": (
            r"\bsk-(?:proj-|svcacct-|admin-|live-|test-)?(?=[A-Za-z_\-]{0,199}[0-9])"
            rf"{_B64URL}{{20,200}}"
        ),
        "Google API key": r"\bAIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])",
        "Google OAuth token": rf"\bya29\.{_B64URL}{{20,300}}",
        "Hugging Face token": r"\bhf_[A-Za-z]{30,40}\b",
        "npm access token": r"\bnpm_[A-Za-z0-9]{36}\b",
        "Mailgun key": r"\bkey-[0-9a-f]{32}\b",
        "DigitalOcean token": r"\bdo[opr]_v1_[a-f0-9]{64}\b",
        "Notion token": r"\b(?:secret_[A-Za-z0-9]{43}|ntn_[0-9]{11}[A-Za-z0-9]{35})\b",
        "Atlassian API token": r"\bATATT3[A-Za-z0-9_\-=]{100,250}",
        "Stripe test key": r"\b[rs]k_test_[0-9a-zA-Z]{24,99}\b",
        "Shopify token": r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b",
        "Postman API key": r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b",
        "HashiCorp Vault token": rf"\bhv[sb]\.{_B64URL}{{24,200}}",
        "Linear API key": r"\blin_api_[A-Za-z0-9]{40}\b",
        "Doppler token": r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}\b",
        "Grafana service account token": r"\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b",
        "New Relic key": r"\bNR(?:AK|II|JS)-[A-Za-z0-9]{19,32}\b",
        "Databricks token": r"\bdapi[a-f0-9]{32}(?:-\d)?\b",
        "age secret key": r"\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b",
        "Discord webhook URL": r"discord(?:app)?\.com/api/webhooks/\d{5,30}/[\w\-]{60,80}",
        "Authorization header": (
            r"(?i)\bauthorization[\"']?\s{0,5}[:=]\s{0,5}[\"']?"
            r"(?:basic\s{1,5}[A-Za-z0-9+/]{8,512}={0,2}"
            rf"|bearer\s{{1,5}}{_B64URL}[A-Za-z0-9_\-.~+/]{{7,1024}}|token\s{{1,5}}[A-Za-z0-9_\-.]{{16,512}})"
            r"|\bBearer\s{1,5}(?=[A-Za-z0-9_\-.~+/]{0,1023}[0-9])(?=[A-Za-z0-9_\-.~+/]{0,1023}[A-Za-z])"
            r"[A-Za-z0-9_\-.~+/]{20,1024}"
        ),
        "connection string with password": (
            r"(?i)(?<![a-z0-9+.\-])[a-z][a-z0-9+.\-]{0,31}://:[^\s:/@]{3,256}@[^\s/]"
            r"|(?:^|[;\s\"'])(?:password|pwd)\s{0,5}=\s{0,5}(?![$<{%])[^;\s'\"]{3,128}\s{0,5};"
        ),
        "private key block": r"BEGIN ENCRYPTED PRIVATE KEY|PuTTY-User-Key-File-3",
        "Slack app token": r"\bxapp-\d-[A-Z0-9]{9,12}-\d{10,16}-[a-f0-9]{64}\b",
        "URL with a password": (
            r"(?i)(?<![a-z0-9+.\-])[a-z][a-z0-9+.\-]{0,31}://[^\s:/@\"'<>]{1,128}:"
            r"(?!(?:password|passwd|pass|pwd|secret|changeme|x{3,}|\*+|\.{3})@)(?![$<{%])"
            r"[^\s/@\"'<>]{3,256}@[\w\-\[]"
        ),
        "Docker registry auth": (
            r"\"auth\"\s{0,5}:\s{0,5}\"(?=[A-Za-z0-9+/]{0,400}[0-9])[A-Za-z0-9+/]{16,400}={0,2}\""
        ),
        "Docker Hub token": r"\bdckr_pat_[A-Za-z0-9_\-]{27,80}",
        "crates.io token": r"\bcio[a-zA-Z0-9]{32}\b",
        "NuGet API key": r"\boy2[a-z0-9]{43}\b",
        "Google service account key": r"\"private_key_id\"\s{0,5}:\s{0,5}\"[a-f0-9]{40}\"",
        "Microsoft Teams webhook URL": (
            r"(?:\.webhook\.office\.com/webhookb2|outlook\.office(?:365)?\.com/webhook)"
            r"/[\w\-@/]{60,300}"
        ),
        "Meta or Square access token": r"\bEAA[A-Za-z0-9]{60,300}\b",
        "Twitch OAuth token": r"\boauth:[a-z0-9]{30}\b",
        "Braintree access token": (
            r"\baccess_token\$(?:production|sandbox)\$[0-9a-z]{16}\$[0-9a-f]{32}\b"
        ),
        "Razorpay key": r"\brzp_(?:live|test)_[A-Za-z0-9]{14}\b",
        "Plaid access token": (
            r"\baccess-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}"
            r"-[0-9a-f]{4}-[0-9a-f]{12}\b"
        ),
        "Flutterwave secret key": r"\bFLWSECK(?:_TEST)?-[a-f0-9]{32}-X\b",
        "Mollie API key": r"\b(?:live|test)_(?=[A-Za-z]{0,29}[0-9])[A-Za-z0-9]{30}\b",
        "pgpass line": (
            r"^(?:localhost|[\w\-]{1,63}(?:\.[\w\-]{1,63}){1,10}|\*):(?:\d{1,5}|\*)"
            r":[\w.\-*]{1,63}:[\w.\-*]{1,63}:(?![$<{%*]|\*+$)\S{3,128}$"
        ),
    }.items()
}
"""Token formats of providers detect-secrets lacks, each reported under its provider's name."""
NETRC = "netrc credentials"
_NETRC = re.compile(
    r"\bmachine\s{1,10}(?:localhost|[\w\-]{1,63}(?:\.[\w\-]{1,63}){1,10})\s{1,10}"
    r"(?:login\s{1,10}\S{1,128}\s{1,10})?password\s{1,10}(?![$<{%*])\S{3,128}"
)
"""A .netrc entry with its password, on one line or over several (the file's usual form)."""

_WORD = (
    r"(password|passwd|pwd|passphrase|passcode|pin code|secret|api[ _-]?key|access[ _-]?key|"
    r"auth[ _-]?token|access[ _-]?token|bearer[ _-]?token|token|client[ _-]?secret|"
    r"private[ _-]?key|passwort|kennwort|contraseña|clave|mot de passe|senha|parola d'ordine|"
    r"пароль|токен|密码|口令|密钥|パスワード|トークン)"
)
_PHRASE = re.compile(
    rf"(?<![a-z]){_WORD}[^\n=:：]{{0,30}}?\s*(\bis|\bwas|=|:|：|\bist|\bes|\best|\bé|\bè|это|是|は)"  # noqa: RUF001
    r"\s*[\"'`]?"
    r"(?=[^\s\"'`]*[0-9!@#$%^&*_+=])(?=[^\s\"'`]*[a-z])(?P<value>[^\s\"'`,;]{6,})",
    re.IGNORECASE,
)
_CALL = re.compile(r"[\w.\-]{1,200}[\[(]")
"""A value that is a call or a lookup (`get_secret()`, `env["KEY"]`), not a secret."""
_NOT_SECRET = re.compile(
    r"^(\$\{?\w+\}?|<\w+>|![a-z]+|\*+|x+|\.+|env\.\w+|os\.environ.*|vault:.*)$", re.I
)


WINDOW_CHARS = 1_000
"""detect-secrets' patterns may backtrack over a whole line (`//.+/:_authToken=`): each sees
lines of at most this many characters, overlapping by a fifth, so a long text costs linear time."""


def windows(text: str) -> Iterator[str]:
    """The text's lines, a long one as overlapping windows of WINDOW_CHARS."""
    step = WINDOW_CHARS - WINDOW_CHARS // 5
    for line in text.splitlines():
        if len(line) <= WINDOW_CHARS:
            yield line
            continue
        for start in range(0, len(line) - WINDOW_CHARS // 5, step):
            yield line[start : start + WINDOW_CHARS]


@cache
def _detectors() -> tuple[RegexBasedDetector, ...]:
    mapping: dict[str, type[Any]] = dict(get_mapping_from_secret_type_to_class())
    chosen = [cls() for cls in mapping.values() if issubclass(cls, RegexBasedDetector)]
    return tuple(d for d in chosen if not isinstance(d, _SKIPPED))


_KEYWORD = KeywordDetector()
_KEYWORD_FORMS = (
    (CONFIG_DENYLIST_REGEX_TO_GROUP, False),
    (QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP, True),
)
_KEYWORD_STEMS = re.compile(r"key|pass|pwd|secret|contrase", re.IGNORECASE)
"""A stem of every name in KeywordDetector's denylist: a line without one is not scanned."""
_LONG_WORD_CHARS = 80
_LONG_WORD = re.compile(rf"\w{{{_LONG_WORD_CHARS + 1},}}")
"""KeywordDetector's patterns let a name's suffix run over every word character after it,
then backtrack, for each name in a run: they see runs cut to _LONG_WORD_CHARS, so a long run
costs linear time."""


_LOCATION = re.compile(r"[a-z][a-z0-9+.\-]{0,31}://|[~.]{0,2}/", re.IGNORECASE)
_METADATA_NAME = re.compile(
    r"[_\-.](names?|arns?|paths?|files?|headers?|refs?|urls?|uris?|env|vars?|ids?|length|len|"
    r"types?|fields?|labels?|policy|hints?|location|version|rotation\w{0,10})[\]\"'`]{0,2}"
    r"\s{0,5}(:=|=>|[:=])?\s{0,5}[\"'`]?$",
    re.IGNORECASE,
)
"""A name for something about a secret rather than the secret, just before its value."""


def _explained_away(secret: str, line: str, *, quoted: bool) -> bool:
    """detect-secrets' heuristic filters and `_NOT_SECRET`, plus: the value is a URL or a path,
    the name is a secret's metadata (`secret_name`, `api_key_header`, `password_file`), or the
    value is a plain word ("string", "true"); an unquoted value (config form, which runs to the
    end of the line) must be one word, as "Secret: we meet on Friday" is not."""
    if not quoted:
        secret = secret.strip("\"'`")
        if not secret or any(ch.isspace() for ch in secret):
            return True
    start = line.find(secret)
    if _METADATA_NAME.search(line[: max(start, 0)][-60:]):
        return True
    plain = secret.isalpha() and (len(secret) < 10 or secret[1:].islower() or secret.isupper())
    return bool(
        plain
        or _LOCATION.match(secret)
        or is_templated_secret(secret)
        or is_prefixed_with_dollar_sign(secret)
        or is_sequential_string(secret)
        or is_potential_uuid(secret)
        or is_likely_id_string(secret, line, _KEYWORD)
        or is_not_alphanumeric_string(secret)
        or _NOT_SECRET.match(secret)
        or is_indirect_reference(line)
    )


def _leading_name(pattern: re.Pattern[str]) -> str | None:
    """The group of names a KeywordDetector pattern starts with (every match starts with one
    of them), else None."""
    if not pattern.pattern.startswith("(") or "(" in pattern.pattern[1:].split(")", 1)[0]:
        return None
    return pattern.pattern.split(")", 1)[0] + ")"


@cache
def _name_starts() -> dict[str, re.Pattern[str]]:
    """For each leading group of names, with its pattern's flags, a scan for every place one
    of the names starts (a lookahead, so overlapping names are all found)."""
    scans: dict[str, re.Pattern[str]] = {}
    for form, _ in _KEYWORD_FORMS:
        for pattern in form:
            lead = _leading_name(pattern)
            if lead is not None:
                key = f"{pattern.flags}:{lead}"
                scans.setdefault(key, re.compile(f"(?={lead})", pattern.flags))
    return scans


@cache
def _stem_reach(lead: str) -> int | None:
    """How many characters before one of `_KEYWORD_STEMS` a name of the group can start (every
    name holds one), None where a name holds none or is more than letters and `_?`."""
    reach = 0
    for name in lead[1:-1].split("|"):
        plain = name.replace("_?", "_")
        stem = _KEYWORD_STEMS.search(plain) if plain.replace("_", "").isalpha() else None
        if stem is None:
            return None
        reach = max(reach, stem.start())
    return reach


def _starts(key: str, line: str) -> list[int]:
    """Every place in the line where a name of the group `key` starts: looked for only just
    before each place a stem starts, where the group allows (a scan at every character costs
    several times more)."""
    scan = _name_starts()[key]
    reach = _stem_reach(key.split(":", 1)[1])
    if reach is None:
        return [m.start() for m in scan.finditer(line)]
    found: list[int] = []
    last = -1
    stem = _KEYWORD_STEMS.search(line)
    while stem is not None:
        at = stem.start()
        found.extend(p for p in range(max(at - reach, last + 1), at + 1) if scan.match(line, p))
        last = at
        stem = _KEYWORD_STEMS.search(line, at + 1)
    return found


def _first_match(pattern: re.Pattern[str], line: str, starts: dict[str, list[int]]) -> str | None:
    """pattern.search(line), the matched group KeywordDetector reports: a pattern that starts
    with a group of names can only match where one starts, so it is tried there alone
    (`match` at a position sees the whole line, as `search` does), the first that matches
    being search's match."""
    group = (
        CONFIG_DENYLIST_REGEX_TO_GROUP.get(pattern)
        or QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP[pattern]
    )
    lead = _leading_name(pattern)
    if lead is None:
        found = pattern.search(line)
        return None if found is None else str(found.group(group))
    key = f"{pattern.flags}:{lead}"
    if key not in starts:
        starts[key] = _starts(key, line)
    for position in starts[key]:
        found = pattern.match(line, position)
        if found is not None:
            return str(found.group(group))
    return None


def _keyword_secret(line: str) -> bool:
    """Whether KeywordDetector finds a value under a secret-sounding name that is not
    explained away (see `_explained_away`): its `analyze_string` (each pattern's first match,
    `keyword_exclude` being unset), each pattern tried only where a name starts."""
    if not _KEYWORD_STEMS.search(line):
        return False
    line = _LONG_WORD.sub(lambda run: run.group()[:_LONG_WORD_CHARS], line)
    starts: dict[str, list[int]] = {}
    for form, quoted in _KEYWORD_FORMS:
        for pattern in form:
            found = _first_match(pattern, line, starts)
            if found is not None and not _explained_away(found.strip(), line, quoted=quoted):
                return True
    return False


def _keyword_secret_plain(line: str) -> bool:
    """`_keyword_secret` through KeywordDetector.analyze_string itself (for the tests)."""
    if not _KEYWORD_STEMS.search(line):
        return False
    line = _LONG_WORD.sub(lambda run: run.group()[:_LONG_WORD_CHARS], line)
    return any(
        not _explained_away(found.strip(), line, quoted=quoted)
        for form, quoted in _KEYWORD_FORMS
        for found in _KEYWORD.analyze_string(line, form)
    )


@cache
def _sieve() -> tuple[Sieve | None, tuple[range, ...]]:
    """The RE2 sieve over every detector's patterns and then every provider's, and which of
    its patterns are each detector's."""
    patterns: list[re.Pattern[str]] = []
    spans = []
    for detector in _detectors():
        own = tuple(detector.denylist)
        spans.append(range(len(patterns), len(patterns) + len(own)))
        patterns.extend(own)
    patterns.extend(PROVIDER_PATTERNS.values())
    return sieve(patterns), tuple(spans)


@cache
def _phrase_sieve() -> Sieve | None:
    return sieve([_PHRASE])


def prepare() -> None:
    """Build the detectors and their RE2 sieve now, not at the first write."""
    fast, _ = _sieve()
    if fast is not None:
        fast.candidates(b"")
    _phrase_sieve()


@dataclass(frozen=True)
class Candidates:
    """What may match somewhere in a set of texts, as their RE2 rewrites found: the
    detectors and provider patterns, in their order, and the texts the phrase pattern may
    match in (None: any)."""

    detectors: tuple[RegexBasedDetector, ...]
    providers: tuple[tuple[str, re.Pattern[str]], ...]
    phrase: frozenset[str] | None


def candidates(texts: Sequence[str]) -> Candidates:
    """What may match in any of the texts, in one RE2 scan of all their windows (a document
    screened line by line asks once, not once a line)."""
    fast, spans = _sieve()
    possible = fast.candidates(fast.scan([w for t in texts for w in windows(t)])) if fast else None
    first = spans[-1].stop if spans else 0

    def may(numbers: range) -> bool:
        return possible is None or not possible.isdisjoint(numbers)

    detectors = tuple(d for d, span in zip(_detectors(), spans, strict=True) if may(span))
    providers = tuple(
        pair
        for number, pair in enumerate(PROVIDER_PATTERNS.items(), start=first)
        if may(range(number, number + 1))
    )
    return Candidates(detectors, providers, _phrase_texts(texts))


def _phrase_texts(texts: Sequence[str]) -> frozenset[str] | None:
    """The texts that the phrase pattern's RE2 rewrite matches in or across (None: it could
    not tell), found in one scan of them joined by line feeds."""
    fast = _phrase_sieve()
    spans = None if fast is None else fast.spans(0, fast.scan(texts))
    if spans is None:
        return None
    starts = list(accumulate((len(text.encode("utf-8")) + 1 for text in texts), initial=0))
    found: set[str] = set()
    for start, end in spans:
        number = bisect_right(starts, start) - 1
        while number < len(texts) and starts[number] <= end:
            found.add(texts[number])
            number += 1
    return frozenset(found)


def credential_kind(text: str, among: Candidates | None = None) -> str | None:
    """What kind of credential the text holds (e.g. "GitHub Token"), else None; `among`:
    what may match in texts that hold this one (`candidates`), where known."""
    parts = list(windows(text))
    among = among or candidates([text])
    for detector in among.detectors:
        if any(True for window in parts for _ in detector.analyze_string(window)):
            return str(detector.secret_type)
    for name, pattern in among.providers:
        if any(pattern.search(window) for window in parts):
            return name
    if "machine" in text and _NETRC.search(text):
        return NETRC
    if any(_keyword_secret(window) for window in parts):
        return str(_KEYWORD.secret_type)
    if among.phrase is not None and text not in among.phrase:
        return None
    for match in _PHRASE.finditer(text):
        value = match.group("value")
        name = text[max(match.start("value") - 60, 0) : match.start("value")]
        if not (
            _NOT_SECRET.match(value)
            or _CALL.match(value)
            or _LOCATION.match(value)
            or _METADATA_NAME.search(name)
        ):
            return "password or secret"
    return None
