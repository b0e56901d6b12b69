"""Every `pip install` in README.md and docs/ works from a checkout as written.

The package is not on the package index, so an install line either names the checkout (`-e .`,
`-e ".[server]"`, `.venv/bin/pip install -e '.[dev]'`) with extras pyproject.toml declares, or
an index package of the project's own dependency set (`pip install sentence-transformers`).
Every occurrence is in a code block or an inline code span, so it can be copied.

Each distinct line then runs as written, through bash, in a copy of the checkout's files (git's
tracked and untracked, not ignored) whose `.venv` is a scratch venv. Nothing is downloaded:
pip runs with no index and no configuration, and the scratch venv sees this venv's third-party
packages (not memory-plugin itself), so the line succeeds only if the checkout builds, its
extras exist and every requirement they name is satisfied; a line naming a package that is
not there (`memory-plugin[server]`) fails as it fails for a user. The editable build uses
this venv's setuptools, checked against pyproject.toml's build requirement, instead of an
isolated one (that would need the index). A line needing an extra the `.[dev]` install lacks
(`local`: torch) is marked extra(...): it skips with the reason on a `.[dev]` install and runs
in CI's extras step; any other unmet requirement skips with the reason, and fails in CI.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import IN_CI
from tests.test_docs import FENCE, PAGES, ROOT

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
EXTRAS: dict[str, list[str]] = PROJECT["optional-dependencies"]
SPAN = re.compile(r"`([^`]+)`")
COMMAND = re.compile(r"(?:\S*/)?pip3? install\b[^&|;#\n]*")
CHECKOUT = re.compile(r"\.(?:\[([\w,-]+)\])?")
OURS = re.compile(r"(__editable__[._]*)?memory_plugin")
TIMEOUT = 300


@dataclass(frozen=True)
class InstallLine:
    page: str
    line: int
    command: str

    @property
    def targets(self) -> list[str]:
        """What the line installs: its arguments after `install`, less `-e`."""
        args = shlex.split(self.command)[2:]
        options = [a for a in args if a.startswith("-") and a not in ("-e", "--editable")]
        assert not options, f"{self}: options other than -e: {options}"
        return [a for a in args if not a.startswith("-")]

    def __str__(self) -> str:
        return f"{self.page}:{self.line}: {self.command}"


def install_lines() -> list[InstallLine]:
    """Every `pip install` command in a code block or inline code span of README.md and docs/."""
    found: list[InstallLine] = []
    for page in PAGES:
        text = page.read_text()
        codes = [(m.start(), m.group()) for m in FENCE.finditer(text)]
        prose = FENCE.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)
        codes += [(m.start(1), m.group(1).replace("\n", " ")) for m in SPAN.finditer(prose)]
        for start, code in codes:
            for command in COMMAND.finditer(code):
                line = text.count("\n", 0, start + command.start()) + 1
                found.append(InstallLine(page.name, line, " ".join(command.group().split())))
    return sorted(found, key=lambda found_line: (found_line.page, found_line.line))


def dependency_names() -> set[str]:
    """The names of every package pyproject.toml depends on, in any extra."""
    specs = [*PROJECT["dependencies"], *(spec for extra in EXTRAS.values() for spec in extra)]
    return {canonicalize_name(Requirement(spec).name) for spec in specs}


def extras_named(target: str) -> list[str] | None:
    """The extras a checkout target such as `.[server]` names; None for an index package."""
    checkout = CHECKOUT.fullmatch(target)
    if checkout is None:
        return None
    return [extra for extra in (checkout.group(1) or "").split(",") if extra]


def unmet(line: InstallLine) -> list[str]:
    """The requirements of what the line installs that this venv does not satisfy."""
    specs: list[str] = []
    for target in line.targets:
        extras = extras_named(target)
        if extras is None:
            specs.append(target)
        else:
            specs += [*PROJECT["dependencies"], *(spec for e in extras for spec in EXTRAS[e])]
    missing = []
    for spec in specs:
        requirement = Requirement(spec)
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        try:
            version = importlib.metadata.version(requirement.name)
        except importlib.metadata.PackageNotFoundError:
            missing.append(spec)
            continue
        if not requirement.specifier.contains(version, prereleases=True):
            missing.append(spec)
    return missing


def distinct_lines() -> list[InstallLine]:
    """One install line for each distinct set of targets."""
    seen: dict[tuple[str, ...], InstallLine] = {}
    for line in install_lines():
        seen.setdefault(tuple(line.targets), line)
    return list(seen.values())


def optional_extras(line: InstallLine) -> list[str]:
    """The extras a line needs beyond the `dev` install (`local`): for the checkout's extras it
    names and for an index package one of them lists, those with a requirement `dev` lacks."""
    installed = names([*PROJECT["dependencies"], *EXTRAS["dev"]])
    needed = set()
    for target in line.targets:
        named = extras_named(target)
        if named is None:
            package = canonicalize_name(Requirement(target).name)
            named = [e for e, specs in EXTRAS.items() if package in names(specs)]
        needed |= {extra for extra in named if names(EXTRAS[extra]) - installed}
    return sorted(needed)


def names(specs: list[str]) -> set[str]:
    """The package names of requirement specs."""
    return {canonicalize_name(Requirement(spec).name) for spec in specs}


def as_param(line: InstallLine) -> Any:
    """The line as a test parameter, marked extra(...) when it needs an optional extra, so it
    runs where that extra is installed (CI's extras step) and skips with the reason elsewhere."""
    extras = optional_extras(line)
    return pytest.param(line, marks=[pytest.mark.extra(*extras)] if extras else [])


def offline_env(venv: Path) -> dict[str, str]:
    """This environment with the scratch venv first on PATH and pip offline and unconfigured."""
    drop = ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_") and k not in drop}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env | {
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_INDEX": "1",
        "PIP_NO_BUILD_ISOLATION": "0",  # pip reads "0" here as --no-build-isolation
        "PIP_CHECK_BUILD_DEPENDENCIES": "1",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
    }


def run(command: list[str], cwd: Path, venv: Path) -> subprocess.CompletedProcess[str]:
    """Run a command in the scratch checkout, offline."""
    return subprocess.run(
        command, cwd=cwd, env=offline_env(venv), capture_output=True, text=True, timeout=TIMEOUT
    )


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the checkout's files whose `.venv` sees this venv's packages but not ours."""
    root = tmp_path_factory.mktemp("checkout")
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    )
    for name in filter(None, listed.stdout.decode().split("\0")):
        if (ROOT / name).is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, root / name)
    venv = root / ".venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=TIMEOUT)
    python = str(venv / "bin" / "python")
    run([python, "-m", "pip", "uninstall", "-y", "-q", "setuptools"], root, venv)
    shadow = tmp_path_factory.mktemp("site-packages")
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not OURS.match(entry.name):
            (shadow / entry.name).symlink_to(entry)
    purelib = run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], root, venv
    )
    (Path(purelib.stdout.strip()) / "checkout_venv.pth").write_text(f"{shadow}\n")
    return root


def test_every_pip_install_in_the_docs_is_code_to_copy() -> None:
    lines = install_lines()
    for page in PAGES:
        written = len(re.findall(r"pip3?\s+install", page.read_text()))
        extracted = [line for line in lines if line.page == page.name]
        assert len(extracted) == written, f"{page.name}: a pip install outside code: {extracted}"
    assert len(lines) >= 8


@pytest.mark.parametrize("line", install_lines(), ids=str)
def test_install_line_names_the_checkout_or_a_dependency(line: InstallLine) -> None:
    assert line.targets, f"{line}: installs nothing"
    for target in line.targets:
        extras = extras_named(target)
        if extras is None:
            name = canonicalize_name(Requirement(target).name)
            assert name in dependency_names(), (
                f"{line}: {target} is neither the checkout nor a dependency of it "
                "(memory-plugin is not on the package index: pip install -e '.[extra]')"
            )
        else:
            unknown = [extra for extra in extras if extra not in EXTRAS]
            assert not unknown, f"{line}: pyproject.toml has no extra {unknown}"


@pytest.mark.slow
@pytest.mark.parametrize("line", [as_param(line) for line in distinct_lines()], ids=str)
def test_install_line_works_as_written(line: InstallLine, checkout: Path) -> None:
    missing = unmet(line)
    if missing and not IN_CI:
        pytest.skip(f"{line}: this venv lacks {missing}, which pip would download")
    venv = checkout / ".venv"
    python = str(venv / "bin" / "python")
    run([python, "-m", "pip", "uninstall", "-y", "-q", "memory-plugin"], checkout, venv)
    done = run(["bash", "-e", "-c", line.command], checkout, venv)
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"{line} failed:\n{output}"
    assert "does not provide the extra" not in output, output
    for target in line.targets:
        if extras_named(target) is None:
            found = run([python, "-m", "pip", "show", Requirement(target).name], checkout, venv)
            assert found.returncode == 0, f"{line}: {target} is not installed:\n{found.stderr}"
            continue
        where = run(
            [python, "-c", "import memory_plugin; print(memory_plugin.__file__)"], checkout, venv
        )
        assert where.stdout.strip() == str(checkout / "memory_plugin" / "__init__.py"), where
        version = run([str(venv / "bin" / "memory-plugin"), "--version"], checkout, venv)
        assert version.stdout.strip() == f"memory-plugin {PROJECT['version']}", version
