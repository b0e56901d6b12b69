"""CI tests with the README's own commands, and a test needing a missing optional extra skips
with the reason (or fails where CI installed the extra)."""

from __future__ import annotations

import importlib.metadata
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests import conftest

ROOT = Path(__file__).parent.parent
BASH = re.compile(r"^```bash\n(.*?)^```\n", re.M | re.S)


def ci_commands() -> list[str]:
    """The test and extras commands .ci/run reads from README.md."""
    script = (ROOT / ".ci" / "run").read_text()
    reader = script[script.index("readme_command() {") : script.index("TEST_COMMAND=")]
    wanted = script[script.index("TEST_COMMAND=") : script.index("\nlog ")]
    shell = f'{reader}{wanted}\nprintf "%s\\n---\\n" "$TEST_COMMAND" "$EXTRAS_COMMAND"'
    out = subprocess.run(["bash", "-c", shell], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return [part.strip() for part in out.stdout.split("---") if part.strip()]


@pytest.mark.slow
def test_ci_runs_the_readmes_test_command_as_written() -> None:
    blocks = [block.strip() for block in BASH.findall((ROOT / "README.md").read_text())]
    chat, tests = blocks[0], blocks[1]
    assert (
        chat
        == "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/memory-plugin chat"
    )
    assert tests == (
        'python3 -m venv .venv && .venv/bin/pip install -e ".[dev]" && .venv/bin/pytest -n auto'
    )
    test_command, extras_command = ci_commands()
    assert test_command == tests
    assert extras_command in blocks and "MEMORY_TEST_EXTRAS=local" in extras_command
    script = (ROOT / ".ci" / "run").read_text().splitlines()
    code = [line for line in script if not line.lstrip().startswith("#")]
    assert [line for line in code if "pip install" in line and "readme_command" not in line] == []
    assert not any("MEMORY_TEST_POSTGRES_URL=" in line for line in code)


@pytest.fixture
def without_torch(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This environment as if torch were not installed."""
    real = importlib.metadata.version

    def version(name: str) -> str:
        if name == "torch":
            raise importlib.metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "version", version)
    yield


def marked(*extras: str) -> Any:
    """A test item marked extra(*extras)."""
    mark = pytest.mark.extra(*extras).mark
    return SimpleNamespace(iter_markers=lambda name: [mark] if name == "extra" else [])


@pytest.mark.usefixtures("without_torch")
def test_a_test_needing_a_missing_extra_skips_with_the_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(conftest, "REQUIRED_EXTRAS", set())
    assert "torch==2.13.0" in conftest.missing_packages("local")
    with pytest.raises(pytest.skip.Exception, match=r"needs the `local` extra \(.*torch==2\.13\.0"):
        conftest.pytest_runtest_setup(marked("local"))
    conftest.pytest_runtest_setup(marked("server"))


@pytest.mark.usefixtures("without_torch")
def test_where_ci_installed_the_extra_a_missing_one_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(conftest, "REQUIRED_EXTRAS", {"local"})
    with pytest.raises(pytest.fail.Exception, match="MEMORY_TEST_EXTRAS names 'local'"):
        conftest.pytest_runtest_setup(marked("local"))


def test_an_unknown_extra_is_an_error() -> None:
    with pytest.raises(ValueError, match="no extra 'gpu'"):
        conftest.missing_packages("gpu")


FAST_LOOP = '.venv/bin/pytest -n auto -m "not slow"'
ELAPSED = re.compile(r"assert\b.*\b(monotonic|perf_counter|time)\(\) - ")


@pytest.mark.slow
def test_the_contributing_section_names_the_fast_loop() -> None:
    contributing = (ROOT / "README.md").read_text().split("## Contributing", 1)[1]
    assert f"`{FAST_LOOP}`" in " ".join(contributing.split())
    assert ci_commands()[0].endswith("&& .venv/bin/pytest -n auto"), (
        "CI runs every test but benches"
    )


def test_no_test_asserts_on_elapsed_time() -> None:
    """A bound on wall time fails on a loaded machine; tests hold the model or move the clock."""
    found = [
        f"{path.name}:{number}: {line.strip()}"
        for path in sorted((ROOT / "tests").glob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if ELAPSED.search(line)
    ]
    assert found == []


def collected(*options: str) -> list[str]:
    """The test ids pytest collects with `options`."""
    command = [sys.executable, "-m", "pytest", *options, "--collect-only", "-q"]
    done = subprocess.run(
        [*command, "-p", "no:cacheprovider"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return [line for line in done.stdout.splitlines() if "::" in line]


@pytest.mark.slow
def test_the_fast_loop_keeps_all_three_backends() -> None:
    fast = collected(*shlex.split(FAST_LOOP)[3:])
    for backend in ("memory", "sqlite", "postgres"):
        on_it = [test for test in fast if re.search(rf"\[(.*-)?{backend}(-.*)?\]$", test)]
        assert len(on_it) > 500, f"the fast loop runs {len(on_it)} tests on {backend}"


@pytest.mark.slow
def test_benchmarks_leave_the_default_run_and_ci_runs_them_as_a_step() -> None:
    default, benches = collected(), collected("-m", "bench")
    assert benches, "no test is marked bench"
    assert all(test.startswith("tests/test_bench_") for test in benches)
    assert not set(benches) & set(default)
    assert collected("tests/test_bench_ops_plan.py") != [], "a bench file named still runs"
    steps = (ROOT / ".ci" / "run").read_text()
    assert "step .venv/bin/pytest -m bench" in steps


SAMPLE = """
import subprocess, sys, pytest

def test_unmarked():
    subprocess.run([sys.executable, "-c", "pass"], check=True)

@pytest.mark.slow
def test_marked():
    subprocess.run([sys.executable, "-c", "pass"], check=True)

@pytest.fixture(scope="module")
def server():
    return subprocess.Popen([sys.executable, "-c", "pass"]).wait()

def test_shared_fixture_process(server):
    assert server == 0
"""


@pytest.mark.slow
def test_a_test_starting_a_process_unmarked_fails_naming_the_command(tmp_path: Path) -> None:
    (tmp_path / "test_sample.py").write_text(SAMPLE)
    options = ["-p", "tests.processes", "-p", "no:cacheprovider", "--rootdir", str(tmp_path)]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *options, "-q", "-rf", str(tmp_path / "test_sample.py")],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed, 2 passed" in done.stdout, done.stdout
    assert "test_unmarked started 1 process(es) but is not marked slow" in done.stdout
    assert "-c pass" in done.stdout
