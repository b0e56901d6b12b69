"""The forms of a text the screen matches against: raw-character checks and normalised variants.

Besides folding, homoglyphs, markup, spacing and leetspeak, `variants` undoes what attackers
encode: rot13 and reversed text (always added: cheap and plausible), and base64, base32, hex
(`69676e...`, `\\x69\\x67`, `0x69 0x67`), URL escapes and HTML entities, each decoded form kept
only when it reads as text. Decoding is nested at most `_DEPTH` levels, decodes at most
`_BUDGET` characters of candidates in all, yields at most `_MAX_DECODED` forms, and every
pattern it scans with is a single character class or a fixed-width group, so the work stays
linear in the length of the text.
"""

from __future__ import annotations

import base64
import binascii
import html
import re
import unicodedata
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import cache, lru_cache
from urllib.parse import unquote_plus

from memory_plugin.safety.superset import Sieve, sieve

# Every format (Cf) character of Unicode 15, the invisible marks the screen has always refused
# (U+034F, U+17B4, U+17B5), Hangul fillers, blank braille and variation selectors: the
# characters hidden_character looks at (tests/test_screen_decoding.py checks the Cf list).
_CANDIDATES = re.compile(
    "[\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160"
    "\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\u2800"
    "\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e01ef]"
)
_JOINERS = "\u200c\u200d"
# Cf characters that render visibly (prepended concatenation marks such as Arabic number signs).
_VISIBLE_FORMAT = frozenset("\u0600\u0601\u0602\u0603\u0604\u0605\u06dd\u070f\u0890\u0891\u08e2")
_VS_TEXT, _VS_EMOJI = "\ufe0e", "\ufe0f"
_KEYCAP = "\u20e3"
_EMOJI_PUNCTUATION = "\u203c\u2049\u2139\u3030\u303d"  # letters and punctuation with emoji forms
_BLACK_FLAG = "\U0001f3f4"
_CANCEL_TAG = "\U000e007f"
_HOMOGLYPHS = str.maketrans(
    "аеорсухіјѕԁɡһӏкмнтвαεορτυνκιχѵⅰℓ",
    "aeopcyxijsdghlkmhtbaeoptuvkixvil",
)
# Looking for a homoglyph is a scan, much faster than translating text that holds none.
_HOMOGLYPH = re.compile(f"[{re.escape(''.join(map(chr, _HOMOGLYPHS)))}]")
_LEET = str.maketrans("013457@$", "oieastas")
_LEETED = re.compile(r"[a-z]*+[013457@$][a-z013457@$]*+")
_ROT13 = str.maketrans(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "nopqrstuvwxyzabcdefghijklmNOPQRSTUVWXYZABCDEFGHIJKLM",
)
_Table = tuple[dict[int, int], bytes]  # str.translate's table, and the same for ASCII bytes


def _table(table: dict[int, int]) -> _Table:
    ascii_part = bytes(table.get(code, code) for code in range(128))
    return table, ascii_part + bytes(range(128, 256))


_LEET_TABLE, _ROT13_TABLE = _table(_LEET), _table(_ROT13)
_SENTENCE = re.compile(r"[^.!?\n]+[.!?\n]*")
_COMMON = frozenset(
    (
        "a",
        "all",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "by",
        "do",
        "for",
        "from",
        "i",
        "in",
        "is",
        "it",
        "me",
        "my",
        "no",
        "not",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "we",
        "with",
        "you",
        "your",
    )
)
_ENDINGS = ("ing", "ion", "ions", "ed", "ly", "er", "ous", "ent", "ate", "ive", "al", "ore")
_PUNCTUATION = ".,;:!?\"'()"
_OURS = r"(system|conversation_summary|[a-z_]*memory[a-z_]*)"
# The lookahead (any branch's first character) lets `re` skip the other characters without
# trying each branch at each of them.
_MARKUP = re.compile(
    r'(?=[<*`~#>|\[\]"“”_])'
    rf"(?:<(?!\s*/?\s*{_OURS}\s*>)[^<>\n]{{0,60}}>|[*`~#>|\[\]\"“”]+|(?<!\w)_+|_+(?!\w))"
)
_SPACED = re.compile(r"(?<![\w])(?:\w[ \t.\-*·]){2,}\w(?![\w])")
_SPACERS = re.compile(r"[ \t.\-*·]")

# Candidate runs: one character class each, or fixed-width groups whose separators can never
# start a group, so a failed attempt gives back at most a few characters.
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
_BASE32 = re.compile(r"[A-Z2-7]{16,}={0,6}|[a-z2-7]{16,}={0,6}")
_HEX = re.compile(r"(?:(?:\\x|0x)?[0-9a-fA-F]{2}[ ,:]{0,2}){8,}")
_HEX_NOISE = re.compile(r"\\x|0x|[ ,:]")
_URL_ESCAPE = re.compile(r"%[0-9a-fA-F]{2}")
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z][a-zA-Z0-9]{1,31});")

_DEPTH = 2  # nested encodings decoded, e.g. base64 of hex
_BUDGET = 20_000  # characters of candidates decoded in all
_MAX_DECODED = 32  # decoded forms kept (each decoding with its rot13 and reversed forms)
_PROBE = 32  # characters of a candidate decoded first, to drop noise before decoding it all


def hidden_character(text: str) -> str | None:
    """The first invisible or bidirectional character in the raw text, as U+XXXX, else None.

    Joiners between letters or inside emoji sequences, one emoji or text presentation selector
    after a character that has an emoji form (❤️, 1️⃣), one variation selector after a CJK
    ideograph (a Japanese name's glyph variant), an emoji tag sequence (the flag of Scotland)
    and blank braille beside braille are ordinary text.
    """
    flag_end = 0
    for match in _CANDIDATES.finditer(text):
        index = match.start()
        if index < flag_end:
            continue
        if 0xE0000 <= ord(text[index]) <= 0xE007F:
            flag_end = _flag_end(text, index)
            if flag_end > index:
                continue
        if _hidden(text, index):
            return f"U+{ord(text[index]):04X}"
    return None


def _hidden(text: str, index: int) -> bool:
    char = text[index]
    code = ord(char)
    if 0xFE00 <= code <= 0xFE0F or 0xE0100 <= code <= 0xE01EF:
        if index > 0 and _ideograph(text[index - 1]) and code not in (0xFE0E, 0xFE0F):
            return False
        return not (char in (_VS_TEXT, _VS_EMOJI) and index > 0 and _emoji_base(text, index - 1))
    if char in _JOINERS:
        return not _between_letters(text, index)
    if char == "\u2800":
        return not _beside_braille(text, index)
    return char not in _VISIBLE_FORMAT


def _ideograph(char: str) -> bool:
    """A CJK ideograph, which an ideographic variation selector (葛 + U+E0100, a Japanese
    name's glyph) or a standardized one (U+FE00) may follow."""
    code = ord(char)
    return (
        0x3400 <= code <= 0x4DBF
        or 0x4E00 <= code <= 0x9FFF
        or 0xF900 <= code <= 0xFAFF
        or 0x20000 <= code <= 0x3FFFF
    )


def _emoji_base(text: str, index: int) -> bool:
    """Whether the character can take an emoji or text presentation selector."""
    char = text[index]
    if char in "#*0123456789":  # a keycap: 1, U+FE0F, U+20E3
        return index + 2 < len(text) and text[index + 2] == _KEYCAP
    if ord(char) < 0xA9:
        return False
    return unicodedata.category(char) in ("So", "Sm", "Sk") or char in _EMOJI_PUNCTUATION


def _flag_end(text: str, index: int) -> int:
    """Where the emoji tag sequence holding the tag at index ends (a black flag, 3 to 6 tag
    letters or digits, CANCEL TAG: the flag of Scotland), else index."""
    start = index
    while start > 0 and index - start < 7 and _tag_letter(text[start - 1]):
        start -= 1
    if start == 0 or text[start - 1] != _BLACK_FLAG:
        return index
    end = start
    while end < len(text) and end - start < 7 and _tag_letter(text[end]):
        end += 1
    if 3 <= end - start <= 6 and end < len(text) and text[end] == _CANCEL_TAG:
        return end + 1
    return index


def _tag_letter(char: str) -> bool:
    return "\U000e0061" <= char <= "\U000e007a" or "\U000e0030" <= char <= "\U000e0039"


def _beside_braille(text: str, index: int) -> bool:
    neighbours = text[max(index - 1, 0) : index] + text[index + 1 : index + 2]
    return any("\u2801" <= ch <= "\u28ff" for ch in neighbours)


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


def _strip_hidden(text: str) -> str:
    return _CANDIDATES.sub("", text)


def variants(text: str, runs: frozenset[int] | None = None) -> list[str]:
    """The normalised forms to match: folded, de-homoglyphed, unmarked, despaced, de-leeted,
    rot13, reversed (whole and word by word) and decoded (`runs`: the kinds of encoded run
    that may occur in the text, `encoded_runs` of texts holding it, where known)."""
    if text.isascii():  # NFKC keeps it, and no hidden character or homoglyph is ASCII
        base = latin = text.lower()
    else:
        base = _strip_hidden(unicodedata.normalize("NFKC", text)).casefold()
        latin = base.translate(_HOMOGLYPHS) if _HOMOGLYPH.search(base) else base
    unmarked = " ".join(_MARKUP.sub(" ", latin).split())
    joined = _SPACED.sub(_unspaced, latin)
    despaced = unmarked if joined == latin else " ".join(_MARKUP.sub(" ", joined).split())
    forms = [
        base,
        latin,
        unmarked,
        " ".join(joined.split()),
        despaced,
        _LEETED.sub(_deleet, despaced),
    ]
    forms.extend(_turned(unmarked))
    forms.extend(_decoded(text, runs))
    return list(dict.fromkeys(forms))


def _deleet(match: re.Match[str]) -> str:
    """A word written with digits for letters, in letters; a number stays a number."""
    word = match.group()
    return _translate(word, _LEET_TABLE) if any(c.isalpha() for c in word) else word


def _unspaced(match: re.Match[str]) -> str:
    return _SPACERS.sub("", match.group())


def _translate(text: str, table: _Table) -> str:
    """str.translate, through bytes for ASCII text (several times faster)."""
    if text.isascii():
        return text.encode("ascii").translate(table[1]).decode("ascii")
    return text.translate(table[0])


def _turned(text: str) -> list[str]:
    """The rot13, reversed and word-by-word reversed forms of the sentences that read better so.

    Turning costs nothing, but every form is matched against every rule, so a sentence is only
    turned where the turned form looks more like words: rot13 where it has a quarter more
    vowels, reversal where more of its words are common words or end like English words.
    """
    rot13, backwards = [], []
    for match in _SENTENCE.finditer(text.casefold()):
        sentence = match.group()
        if 4 * _count(sentence, "nrvbh") > 5 * _count(sentence, "aeiou"):
            rot13.append(_translate(sentence, _ROT13_TABLE))
        if _reads_better_reversed(sentence):
            backwards.append(sentence)
    forms = [" ".join(rot13)] if rot13 else []
    if backwards:
        forms.append(" ".join(sentence[::-1] for sentence in reversed(backwards)))
        forms.append(" ".join(word[::-1] for sentence in backwards for word in sentence.split()))
    return forms


def _count(text: str, letters: str) -> int:
    return sum(map(text.count, letters))


def _wordlike_pattern(common: Iterable[str], endings: Iterable[str], *, reverse: bool) -> str:
    """A word (a run of non-whitespace) that, stripped of punctuation, is a common word, or
    that ends like an English word (read backwards with `reverse`)."""
    punctuation = f"[{re.escape(_PUNCTUATION)}]*"
    words = "|".join(re.escape(w[::-1] if reverse else w) for w in sorted(common))
    ends = "|".join(re.escape(e[::-1] if reverse else e) for e in endings)
    ending = rf"(?:{ends})\S*" if reverse else rf"\S*(?:{ends})"
    return rf"{punctuation}(?:{words}){punctuation}|{ending}"


_WORDLIKE = re.compile(_wordlike_pattern(_COMMON, _ENDINGS, reverse=False))
_WORDLIKE_REVERSED = re.compile(_wordlike_pattern(_COMMON, _ENDINGS, reverse=True))


def _reads_better_reversed(sentence: str) -> bool:
    """Whether more of the sentence's words (as str.split sees them) read like English
    backwards than forwards."""
    score = 0
    for word in sentence.split():
        score += _wordlike(word)
    return score > 0


@lru_cache(maxsize=1 << 16)
def _wordlike(word: str) -> int:
    """1 if the word reads like English backwards only, -1 forwards only, else 0."""
    return (_WORDLIKE_REVERSED.fullmatch(word) is not None) - (
        _WORDLIKE.fullmatch(word) is not None
    )


def encoded_runs(texts: Sequence[str]) -> frozenset[int] | None:
    """The kinds of encoded run (`_RUNS`) that may occur in any of the texts, found in one
    RE2 scan of them all (a document screened line by line asks once); None where any may."""
    fast = _runs_sieve()
    if fast is None:
        return None
    scanned = fast.scan(texts)
    return frozenset(n for n in range(len(_RUNS)) if fast.may_match(n, scanned))


def _decoded(text: str, runs: frozenset[int] | None = None) -> list[str]:
    """Readable text hidden by encoding inside the text, nested up to _DEPTH levels (`runs`:
    the kinds of run that may occur in the text itself, where known)."""
    if runs is not None and not _may_decode(text, runs):
        return []
    found: list[str] = []
    budget = [_BUDGET]
    queue = deque([(text, 1)])
    while queue:
        source, depth = queue.popleft()
        for decoded in _decodings(source, budget, runs if depth == 1 else None):
            if _readable(decoded):
                for form in (decoded, *_turned(decoded)):
                    folded = _fold(form)
                    if folded not in found:
                        found.append(folded)
                if len(found) >= _MAX_DECODED:
                    return found[:_MAX_DECODED]
            if depth < _DEPTH and len(decoded) <= budget[0]:
                budget[0] -= len(decoded)
                queue.append((decoded, depth + 1))
    return found


def _may_decode(text: str, runs: frozenset[int]) -> bool:
    """Whether the text holds what `_decodings` decodes: a URL escape's `%`, an entity's `&`
    or a run of one of the kinds `runs`."""
    return "%" in text or "&" in text or any(_RUNS[n][0].search(text) for n in runs)


def _fold(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _decodings(text: str, budget: list[int], runs: frozenset[int] | None = None) -> Iterator[str]:
    """Each printable decoding of the text: its lines with URL escapes or HTML entities
    unescaped, then each candidate run decoded (`runs`: the kinds that may occur, where
    known)."""
    for escape, unescape in ((_URL_ESCAPE, unquote_plus), (_ENTITY, html.unescape)):
        if budget[0] <= 0 or not escape.search(text):
            continue
        lines = "\n".join(line for line in text.splitlines() if escape.search(line))
        lines = lines[: budget[0]]
        budget[0] -= len(lines)
        unescaped = unescape(lines)
        if unescaped != lines and _printable(unescaped):
            yield unescaped
    if runs is None:
        runs = encoded_runs([text])
    for number, (pattern, decoders) in enumerate(_RUNS):
        if runs is not None and number not in runs:
            continue  # no candidate run: RE2 found none in one linear scan
        for match in pattern.finditer(text):
            if budget[0] <= 0:
                return
            for turn, decode in decoders:
                run = turn(match.group())
                probe = _text_of(decode, run[:_PROBE], partial=len(run) > _PROBE)
                if probe is None or not _printable(probe):
                    continue
                budget[0] -= len(run)
                decoded = probe if len(run) <= _PROBE else _text_of(decode, run)
                if decoded is not None and _printable(decoded):
                    yield decoded


def _text_of(decode: Callable[[str], bytes], chunk: str, *, partial: bool = False) -> str | None:
    """The chunk decoded as UTF-8 text (a character cut off at the end of a partial chunk
    dropped), else None."""
    try:
        raw = decode(chunk)
    except (ValueError, binascii.Error):
        return None
    try:
        return raw.decode("utf-8") or None
    except UnicodeDecodeError as exc:
        if partial and exc.start >= len(raw) - 3:
            return raw[: exc.start].decode("utf-8", errors="ignore") or None
        return None


def _printable(text: str) -> bool:
    return "".join(text.split()).isprintable()


def _readable(text: str) -> bool:
    """Printable, mostly letters, and words (spaces, or a script written without them)."""
    if not text or not _printable(text):
        return False
    letters = sum(map(str.isalpha, text))
    spaces = len(text) - len("".join(text.split()))
    if letters + spaces < 0.6 * len(text):
        return False
    return spaces > 0 or (letters >= 4 and all(ord(ch) > 0x2E7F for ch in text))


def _b64(chunk: str) -> bytes:
    chunk = chunk.rstrip("=")
    usable = len(chunk) - len(chunk) % 4 if len(chunk) % 4 == 1 else len(chunk)
    chunk = chunk[:usable]
    altchars = b"-_" if ("-" in chunk or "_" in chunk) else None
    return base64.b64decode(chunk + "=" * (-len(chunk) % 4), altchars=altchars, validate=True)


def _same(run: str) -> str:
    return run


def _rot13(run: str) -> str:
    return _translate(run, _ROT13_TABLE)


def _reversed(run: str) -> str:
    return run.rstrip("=")[::-1]


def _b32(chunk: str) -> bytes:
    chunk = chunk.rstrip("=")
    chunk = chunk[: len(chunk) - len(chunk) % 8] if len(chunk) % 8 in (1, 3, 6) else chunk
    return base64.b32decode(chunk + "=" * (-len(chunk) % 8), casefold=True)


def _hex(chunk: str) -> bytes:
    digits = _HEX_NOISE.sub("", chunk)
    return bytes.fromhex(digits[: len(digits) - len(digits) % 2])


_Decoder = tuple[Callable[[str], str], Callable[[str], bytes]]
_RUNS: tuple[tuple[re.Pattern[str], tuple[_Decoder, ...]], ...] = (
    (_HEX, ((_same, _hex),)),
    (_BASE32, ((_same, _b32),)),
    (_BASE64, ((_same, _b64), (_reversed, _b64), (_rot13, _b64))),
)


def prepare() -> None:
    """Build the RE2 sieve of the encoded runs now, not at the first write."""
    _runs_sieve()


@cache
def _runs_sieve() -> Sieve | None:
    """The RE2 sieve for the candidate runs' patterns (see memory_plugin.safety.superset)."""
    return sieve([pattern for pattern, _ in _RUNS])
