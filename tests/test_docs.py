"""Every code block in README.md and docs/*.md runs as pasted.

The rule, block by block (like langmem's docstring-example test, for Markdown):

- ```python blocks run whole, each in its own subprocess with this venv's python, in an empty
  temporary working directory, with no `MEMORY_*` or `OPENAI_*` variables set, under a
  timeout; they must exit 0. Snippets use `memory_plugin.OfflineModel()`, so no key and no
  network is needed.
- ```bash blocks run the same way with `bash -e`, this venv's `bin/` first on PATH, unless a
  line installs packages (`pip install`) or starts a server (`langgraph dev`, `memory-plugin
  serve`): those need the network or a port, and are the only bash blocks not run (the
  servers are started by tests/test_studio.py and tests/test_cli_serve.py).
- The ```nginx block of docs/console-deploy.md runs in a real nginx in
  tests/test_console_proxy.py; the ```sql blocks of docs/large-stores.md run on the
  partitioned schema in tests/test_partitioned_schema.py.
- Every other fence (```text, ```console, ```json, ...) is output or an illustration and is
  not run; commands that cannot run here (a crontab line, a client of a running LangGraph
  Server) are written that way, with a note in the text.

A ```text block directly after a python or bash block shows what that block prints, and all
of it: the printed lines (stdout, trailing spaces and blank lines around it dropped) are the
shown lines, in order, blank lines between them included, with nothing left out unless the
doc marks the cut. A line that is `...` alone stands for any number of printed lines (zero or
more); `...` inside a line stands for any text within that line (a date, a token); a printed
`...` matches itself. Every such block runs, so every output shown this way is compared; a
```text block after prose is an illustration (a server's first lines, a table from a large
store) and is not.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.M | re.S)
NOT_RUN = ("pip install", "langgraph dev", "memory-plugin serve")
TIMEOUT = 180
CUT = "..."


@dataclass
class Block:
    page: str
    line: int
    lang: str
    code: str
    expected: list[str]

    def __str__(self) -> str:
        return f"{self.page}:{self.line}:{self.lang}"


def blocks() -> list[Block]:
    """Every fenced block of README.md and docs/, with the output the one after it promises."""
    found: list[Block] = []
    for page in PAGES:
        text = page.read_text()
        fences = list(FENCE.finditer(text))
        for n, fence in enumerate(fences):
            lang, code = fence.group(1), fence.group(2)
            nxt = fences[n + 1] if n + 1 < len(fences) else None
            expected: list[str] = []
            if nxt and nxt.group(1) == "text" and not text[fence.end() : nxt.start()].strip():
                expected = output_lines(nxt.group(2))
            line = text.count("\n", 0, fence.start()) + 1
            found.append(Block(str(page.relative_to(ROOT)), line, lang, code, expected))
    return found


def output_lines(text: str) -> list[str]:
    """The lines of an output, trailing spaces and the blank lines around it dropped."""
    return [line.rstrip() for line in text.strip("\n").splitlines()] if text.strip() else []


def printed_as_shown(shown: list[str], printed: str) -> bool:
    """Whether the printed output is the shown one, `...` standing for what the doc cuts."""
    pattern = "".join(
        r"(?:.*\n)*" if line == CUT else ".*".join(map(re.escape, line.split(CUT))) + "\n"
        for line in shown
    )
    return re.fullmatch(pattern, "".join(f"{line}\n" for line in output_lines(printed))) is not None


def runnable() -> list[Block]:
    return [
        b
        for b in blocks()
        if b.lang == "python" or (b.lang == "bash" and not any(s in b.code for s in NOT_RUN))
    ]


def clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "OPENAI_"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


@pytest.mark.slow
@pytest.mark.parametrize("block", runnable(), ids=str)
def test_code_block_runs_as_pasted(block: Block, tmp_path: Path) -> None:
    command = [sys.executable, "-"] if block.lang == "python" else ["bash", "-e", "-s"]
    done = subprocess.run(
        command,
        input=block.code,
        cwd=tmp_path,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, f"{block} failed:\n{done.stdout}\n{done.stderr}"
    if block.expected:
        shown = "\n".join(block.expected)
        assert printed_as_shown(block.expected, done.stdout), (
            f"{block} printed what its doc does not show (mark a cut with `...`):\n"
            f"--- shown\n{shown}\n--- printed\n{done.stdout}"
        )


@pytest.mark.parametrize(
    ("shown", "printed", "same"),
    [
        ("a\nb", "a\nb\n", True),
        ("a\nb", "a\n", False),
        ("a", "a\nb\n", False),
        ("b\na", "a\nb\n", False),
        ("Friday", "It starts Friday.\n", False),
        ("a\n\nb", "a\nb\n", False),
        ("a\n...\nd", "a\nb\nc\nd\n", True),
        ("a\n...\nd", "a\nd\n", True),
        ("...\nc", "a\nb\nc\n", True),
        ("a\n...", "a\nb\n", True),
        ("a\n...\nd", "a\nb\n", False),
        ("(noted ...).", "(noted 2026-12-01).\n", True),
        ("(noted ...).", "(noted 2026-12-01).\nmore\n", False),
        ("x ...", "x\n", False),
        ("{'user_id': ...}", "{'user_id': ...}\n", True),
        ("a  ", "a\n", True),
    ],
)
def test_shown_output_is_what_prints_or_marks_the_cut(shown: str, printed: str, same: bool) -> None:
    assert printed_as_shown(output_lines(shown), printed) is same


def test_every_shown_output_is_compared() -> None:
    shown = [b for b in blocks() if b.expected]
    assert len(shown) >= 30
    assert all(b in runnable() for b in shown), [str(b) for b in shown if b not in runnable()]


def test_every_page_is_checked() -> None:
    pages = {b.page for b in runnable()}
    assert "README.md" in pages
    assert len(pages) >= 5
    assert all(
        b.lang in {"python", "bash", "text", "console", "json", "nginx", "sql"} for b in blocks()
    )


def test_snippets_need_no_key() -> None:
    for block in blocks():
        if block.lang != "python":
            continue
        code = "\n".join(line.split("#")[0] for line in block.code.splitlines())
        assert "init_chat_model" not in code and "ChatOpenAI" not in code, block
        if "OfflineModel()" in code:
            assert "# for OpenAI:" in block.code, f"{block} does not say how to switch to OpenAI"


def test_setting_defaults_quoted_in_the_docs_are_the_code_defaults() -> None:
    from memory_plugin.settings.schema import MemorySettings

    fields = MemorySettings.model_fields
    quoted = re.compile(r"`(\w+)`\s+\(([\d,.]+)(%?)[,)]")
    checked = 0
    for page in PAGES:
        for name, number, percent in quoted.findall(page.read_text()):
            if name not in fields:
                continue
            value = float(number.replace(",", "")) / (100 if percent else 1)
            assert value == pytest.approx(float(fields[name].default)), (page.name, name, number)
            checked += 1
    assert checked >= 15


def test_readme_stays_short() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) <= 180


def test_docs_links_resolve() -> None:
    for page in PAGES:
        for target in re.findall(r"\]\(([^)#:]+\.md)(?:#[^)]*)?\)", page.read_text()):
            assert (page.parent / target).is_file(), f"{page.name} links to missing {target}"
