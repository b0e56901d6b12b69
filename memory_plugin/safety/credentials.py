"""Credentials in memory text: detect-secrets' pattern detectors plus password phrases."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import Any

from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.plugins.base import RegexBasedDetector
from detect_secrets.plugins.high_entropy_strings import HighEntropyStringsPlugin
from detect_secrets.plugins.ip_public import IPPublicDetector
from detect_secrets.plugins.keyword import KeywordDetector

_SKIPPED = (HighEntropyStringsPlugin, IPPublicDetector, KeywordDetector)
_EXTRA = re.compile(
    r"\b(sk-(ant-|proj-|live-|test-)?[a-z0-9_\-]{20,}|aiza[0-9a-z_\-]{35}|xox[abpors]-[0-9a-z\-]{10,}"
    r"|npm_[0-9a-z]{36}|gh[pousr]_[0-9a-z]{30,}|glpat-[0-9a-z_\-]{20}|hf_[a-z]{30,}|ya29\.[0-9a-z_\-]{20,}"
    r"|(aws_)?secret_access_key\s*[=:]\s*\S{20,}|-----begin [a-z ]*private key-----"
    r"|(?<![a-z0-9+.\-])[a-z][a-z0-9+.\-]{0,31}://[^\s:/@]{1,256}:[^\s:/@]{3,256}@[^\s/])",
    re.IGNORECASE,
)
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
_NOT_SECRET = re.compile(r"^(\$\{?\w+\}?|<\w+>|\*+|x+|\.+|env\.\w+|os\.environ.*|vault:.*)$", re.I)


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


def credential_kind(text: str) -> str | None:
    """What kind of credential the text holds (e.g. "GitHub Token"), else None."""
    for detector in _detectors():
        if any(True for window in windows(text) for _ in detector.analyze_string(window)):
            return str(detector.secret_type)
    if _EXTRA.search(text):
        return "API key or token"
    for match in _PHRASE.finditer(text):
        if not _NOT_SECRET.match(match.group("value")):
            return "password or secret"
    return None
