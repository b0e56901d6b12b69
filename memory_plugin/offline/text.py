"""The offline model's reading of plain text: sentences, facts the user states, questions,
key words, and the person shift between the user's words and stored notes."""

from __future__ import annotations

import re

from memory_plugin.text import search_terms, tokens

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_LEAD = r"^(?:(?:hi|hey|hello|ok|okay|so|and|also|btw|by the way|please|pls|oh)\b[\s,!.]*)*"
_REMEMBER = re.compile(
    _LEAD + r"(?:(?:could|can|would|will) you\s+)?(?:please\s+)?"
    r"(?:remember|note|keep in mind|don't forget|do not forget|make a note)"
    r"(?:\s+that)?\s*[:,-]?\s+(?P<fact>\S.*)$",
    re.I,
)
_SELF = re.compile(
    _LEAD + r"(?P<fact>(?:my|our) \w[\w' -]{0,40}? (?:is|are|was|were|has|have)\b.+"
    r"|I(?:'m| am) (?:working on|based in|from|an? ) ?.+"
    r"|I (?:prefer|like|love|live|work|use|speak|have|own|hate|dislike)\b.+)$",
    re.I,
)
_QUESTION = re.compile(
    r"^(?:what|what's|who|whom|whose|when|where|which|why|how|do|does|did|is|are|was|were|"
    r"can|could|have|has|tell me|list)\b",
    re.I,
)
_ABOUT_ME = re.compile(
    r"\b(?:know|remember|have|say|tell me)\b.*\babout (?:me|myself)\b|\bwho am i\b"
    r"|\bwhat do you know\b",
    re.I,
)
STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "am",
        "i",
        "me",
        "my",
        "mine",
        "myself",
        "you",
        "your",
        "yours",
        "we",
        "our",
        "us",
        "it",
        "its",
        "what",
        "whats",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "which",
        "why",
        "how",
        "do",
        "does",
        "did",
        "can",
        "could",
        "would",
        "should",
        "will",
        "shall",
        "have",
        "has",
        "had",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "from",
        "by",
        "with",
        "about",
        "and",
        "or",
        "but",
        "not",
        "no",
        "so",
        "that",
        "this",
        "these",
        "those",
        "there",
        "here",
        "tell",
        "know",
        "remember",
        "please",
        "again",
        "any",
        "anything",
        "some",
        "something",
        "more",
        "else",
        "s",
        "t",
        "d",
        "ll",
        "re",
        "ve",
        "m",
    ]
)
_MODALS = "can|could|will|would|should|must|might|may|shall"
_TO_THIRD = [
    (r"\bI(?:'m| am)\b", "the user is"),
    (r"\bI was\b", "the user was"),
    (r"\bI(?:'ve| have)\b", "the user has"),
    (r"\bI(?:'ll| will)\b", "the user will"),
    (r"\bI'd\b", "the user would"),
    (r"\bI (?:don't|do not)\b", "the user does not"),
    (rf"\bI ({_MODALS})\b", r"the user \1"),
    (r"(?i:\bmy\b)", "the user's"),
    (r"(?i:\bmine\b)", "the user's"),
    (r"(?i:\bmyself\b)", "themselves"),
    (r"(?i:\bme\b)", "the user"),
]
_TO_SECOND = [
    (r"\bthe user's\b", "your"),
    (r"\bthe user is\b", "you are"),
    (r"\bthe user was\b", "you were"),
    (r"\bthe user has\b", "you have"),
    (r"\bthe user does not\b", "you do not"),
    (rf"\bthe user ({_MODALS})\b", r"you \1"),
    (r"\bthemselves\b", "yourself"),
]


def sentences(text: str) -> list[str]:
    """The text's sentences, stripped, empty ones left out."""
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


def is_question(sentence: str) -> bool:
    """Whether a sentence asks something."""
    return sentence.rstrip().endswith("?") or bool(_QUESTION.match(sentence))


def asks_about_me(text: str) -> bool:
    """Whether the user asks what is known about them."""
    return bool(_ABOUT_ME.search(text))


def _verb_s(verb: str) -> str:
    if verb.lower() == "have":
        return "has"
    if re.search(r"(s|sh|ch|x|z|o)$", verb):
        return verb + "es"
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ies"
    return verb + "s"


def _verb_base(verb: str) -> str:
    if verb.endswith("ies"):
        return verb[:-3] + "y"
    if re.search(r"(ses|shes|ches|xes|zes|oes)$", verb):
        return verb[:-2]
    return verb[:-1] if verb.endswith("s") and not verb.endswith("ss") else verb


def sentence_case(text: str) -> str:
    """One line, first letter capitalised, ending with a full stop."""
    line = " ".join(text.split()).strip(" ,;:-")
    if not line:
        return ""
    line = line[0].upper() + line[1:]
    return line if line[-1] in ".!?" else line + "."


def third_person(text: str) -> str:
    """The user's own words ("my dog is called Rex") as a note ("The user's dog ...")."""
    for pattern, replacement in _TO_THIRD:
        text = re.sub(pattern, replacement, text)
    text = re.sub(r"\bI (\w+)", lambda m: "the user " + _verb_s(m.group(1)), text)
    return sentence_case(text)


def second_person(text: str) -> str:
    """A note ("The user's dog ...") as said to the user ("Your dog ...")."""
    for pattern, replacement in _TO_SECOND:
        text = re.sub(pattern, replacement, text, flags=re.I)
    text = re.sub(r"\bthe user (\w+)", lambda m: "you " + _verb_base(m.group(1)), text, flags=re.I)
    text = re.sub(r"\bthe user\b", "you", text, flags=re.I)
    return sentence_case(text)


def stated_facts(text: str) -> list[str]:
    """The facts a message asks to be remembered or states about the user, as notes."""
    facts: list[str] = []
    for sentence in sentences(text):
        if sentence.endswith("?"):
            continue
        found = _REMEMBER.match(sentence) or _SELF.match(sentence)
        if found:
            fact = third_person(found.group("fact"))
            if fact and fact not in facts:
                facts.append(fact)
    return facts


def as_told(sentence: str) -> str:
    """What the user said, repeated back to them ("remember that my dog ..." -> "Your dog ...")."""
    found = _REMEMBER.match(sentence)
    told = found.group("fact") if found else re.sub(_LEAD, "", sentence, flags=re.I)
    return second_person(third_person(told))


def question_of(text: str) -> str:
    """The message's last question, or ""."""
    asked = [s for s in sentences(text) if is_question(s) and not _REMEMBER.match(s)]
    return asked[-1] if asked else ""


def key_words(text: str) -> list[str]:
    """The words of a question that carry its meaning, in order, without repeats."""
    seen: list[str] = []
    for word in tokens(text):
        if word not in STOP and word not in seen:
            seen.append(word)
    return seen


def overlap(words: list[str], line: str) -> int:
    """How many of `words` the line contains, each word matched by its stem ("named" has
    "name")."""
    present = {*search_terms(line), *tokens(line)}
    return sum(1 for w in words if present.intersection(search_terms(w) or [w]))


def repeats(line: str, said: set[str]) -> bool:
    """Whether every word of the line that carries meaning is among the stems `said` (a
    profile bullet "Prefers short answers." after the note "You prefer short answers.")."""
    return set(search_terms(line)) <= said


def shortened(text: str, limit: int) -> str:
    """One line of at most `limit` characters, cut at a word."""
    line = " ".join(text.split())
    if len(line) <= limit:
        return line
    return line[: limit - 1].rsplit(" ", 1)[0].rstrip(" ,;:.-") + "…"
