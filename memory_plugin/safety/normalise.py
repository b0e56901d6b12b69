"""The forms of a text the screen matches against: raw-character checks and normalised variants."""

from __future__ import annotations

import base64
import re
import unicodedata

_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b\u200e\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\u3164\ufeff\uffa0\U000e0000-\U000e007f]"
)
_JOINERS = "\u200c\u200d"
_HOMOGLYPHS = str.maketrans(
    "аеорсухіјѕԁɡһӏкмнтвαεορτυνκιχѵⅰℓ",
    "aeopcyxijsdghlkmhtbaeoptuvkixvil",
)
_LEET = str.maketrans("013457@$", "oieastas")
_OURS = r"(system|conversation_summary|[a-z_]*memory[a-z_]*)"
_MARKUP = re.compile(
    rf"<(?!\s*/?\s*{_OURS}\s*>)[^<>\n]{{0,60}}>|[*`~#>|\[\]\"“”]+|(?<!\w)_+|_+(?!\w)"
)
_SPACED = re.compile(r"(?<![\w])(?:\w[ \t.\-*·]){2,}\w(?![\w])")
_BASE64 = re.compile(r"[A-Za-z0-9+/]{16,}={0,2}")


def hidden_character(text: str) -> str | None:
    """The first invisible or bidirectional character in the raw text, as U+XXXX, else None."""
    for index, char in enumerate(text):
        if _INVISIBLE.match(char):
            return f"U+{ord(char):04X}"
        if char in _JOINERS and not _between_letters(text, index):
            return f"U+{ord(char):04X}"
    return None


def _between_letters(text: str, index: int) -> bool:
    """A joiner inside an emoji sequence or a non-Latin word is ordinary text."""
    if index == 0 or index == len(text) - 1:
        return False
    before, after = text[index - 1], text[index + 1]
    return _joinable(before) and _joinable(after)


def _joinable(char: str) -> bool:
    if ord(char) < 0x250:
        return False
    return unicodedata.category(char)[0] in "LMS"


def variants(text: str) -> list[str]:
    """The normalised forms to match: folded, de-homoglyphed, unmarked, despaced and de-leeted."""
    base = _INVISIBLE.sub("", unicodedata.normalize("NFKC", text)).replace("\u200d", "")
    base = base.replace("\u200c", "").casefold()
    latin = base.translate(_HOMOGLYPHS)
    unmarked = " ".join(_MARKUP.sub(" ", latin).split())
    joined = _SPACED.sub(lambda m: re.sub(r"[ \t.\-*·]", "", m.group()), latin)
    despaced = " ".join(_MARKUP.sub(" ", joined).split())
    forms = [base, latin, unmarked, " ".join(joined.split()), despaced, despaced.translate(_LEET)]
    forms.extend(_decoded(text))
    return list(dict.fromkeys(forms))


def _decoded(text: str) -> list[str]:
    """Readable text hidden as base64 inside the text."""
    found = []
    for match in _BASE64.finditer(text):
        chunk = match.group()
        try:
            raw = base64.b64decode(chunk + "=" * (-len(chunk) % 4), validate=True)
            decoded = raw.decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            continue
        if (
            sum(ch.isprintable() or ch.isspace() for ch in decoded) == len(decoded)
            and " " in decoded
        ):
            found.append(" ".join(unicodedata.normalize("NFKC", decoded).casefold().split()))
    return found
