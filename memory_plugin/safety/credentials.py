"""Credentials in memory text: detect-secrets' pattern detectors plus password phrases."""

from __future__ import annotations

import re
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
    r"|[a-z][a-z0-9+.\-]*://[^\s:/@]+:[^\s:/@]{3,}@[^\s/]+)",
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


@cache
def _detectors() -> tuple[RegexBasedDetector, ...]:
    mapping: dict[str, type[Any]] = dict(get_mapping_from_secret_type_to_class())
    chosen = [cls() for cls in mapping.values() if issubclass(cls, RegexBasedDetector)]
    return tuple(d for d in chosen if not isinstance(d, _SKIPPED))


def credential_kind(text: str) -> str | None:
    """What kind of credential the text holds (e.g. "GitHub Token"), else None."""
    for detector in _detectors():
        if any(True for _ in detector.analyze_string(text)):
            return str(detector.secret_type)
    if _EXTRA.search(text):
        return "API key or token"
    for match in _PHRASE.finditer(text):
        if not _NOT_SECRET.match(match.group("value")):
            return "password or secret"
    return None
