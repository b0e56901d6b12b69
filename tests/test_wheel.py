"""The package as a user installs it: the built wheel and sdist pass `twine check --strict` and
carry the metadata an index page shows; the wheel, installed in a fresh venv, runs the chat,
the console and the MCP gateway; `langgraph dev` needs only the `studio` extra; CI runs the
same check (.ci/wheel.py, whose functions these tests call, so the two cannot drift)."""

from __future__ import annotations

import ast
import contextlib
import importlib.metadata
import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import threading
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
import trove_classifiers
from packaging.metadata import Metadata
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.langgraph_server import client_for, stream_run

ROOT = Path(__file__).parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]
EXTRAS: dict[str, list[str]] = PROJECT["optional-dependencies"]
STUDIO_STARTUP_TRIES = 180
TEST_TOOLS = {"pytest", "pytest-asyncio", "mypy", "ruff", "playwright", "hypothesis"}


def load_check() -> ModuleType:
    """.ci/wheel.py, the check CI runs, as a module."""
    spec = importlib.util.spec_from_file_location("ci_wheel", ROOT / ".ci" / "wheel.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


check = load_check()


def names(specs: list[str]) -> set[str]:
    """The package names of requirement specs."""
    return {canonicalize_name(Requirement(spec).name) for spec in specs}


def by_name(specs: list[str]) -> dict[str, Requirement]:
    """Requirement specs by their package's name."""
    return {str(canonicalize_name(Requirement(spec).name)): Requirement(spec) for spec in specs}


def third_party_imports(path: Path) -> set[str]:
    """The top-level modules a file imports that are neither stdlib nor memory_plugin."""
    tree = ast.parse(path.read_text())
    found = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    }
    found |= {
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    }
    tops = {name.split(".")[0] for name in found}
    return tops - set(sys.stdlib_module_names) - {"__future__", "memory_plugin"}


def test_graphs_import_only_what_the_base_and_studio_extra_install() -> None:
    providers = importlib.metadata.packages_distributions()
    installed = names(PROJECT["dependencies"]) | names(EXTRAS["studio"])
    for graph in sorted((ROOT / "graphs").glob("*.py")):
        for module in third_party_imports(graph):
            dists = {canonicalize_name(dist) for dist in providers.get(module, [])}
            assert dists & installed, (
                f"graphs/{graph.name} imports {module} ({dists or '?'}), "
                "which neither the dependencies nor the studio extra install"
            )


def test_the_studio_extra_is_langgraph_dev_without_the_test_tools() -> None:
    studio, dev = by_name(EXTRAS["studio"]), by_name(EXTRAS["dev"])
    assert studio["langgraph-cli"].extras == {"inmem"}
    assert studio["langgraph-api"].specifier == dev["langgraph-api"].specifier
    assert not set(studio) & TEST_TOOLS
    assert dev["memory-plugin"].extras == {"studio"}, "the dev extra installs the studio one"


def test_classifiers_are_known_and_name_only_supported_pythons() -> None:
    classifiers: list[str] = PROJECT["classifiers"]
    assert [c for c in classifiers if c not in trove_classifiers.classifiers] == []
    assert "Typing :: Typed" in classifiers
    assert not [c for c in classifiers if c.startswith("License ::")], "license = 'MIT' says it"
    requires = Requirement(f"python{PROJECT['requires-python']}").specifier
    versions = [
        c.rsplit(" :: ", 1)[1]
        for c in classifiers
        if c.startswith("Programming Language :: Python :: 3.")
    ]
    assert versions and all(requires.contains(Version(v)) for v in versions), versions
    assert f"{sys.version_info.major}.{sys.version_info.minor}" in versions


def test_ci_runs_the_wheel_check_after_the_tests() -> None:
    lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    tests = lines.index('step "$TEST_COMMAND"')
    guard = lines.index("if [ -x .venv/bin/python ]; then")
    wheel = [
        n for n, line in enumerate(lines) if line.startswith("step .venv/bin/python .ci/wheel.py")
    ]
    assert len(wheel) == 1, "CI runs .ci/wheel.py once, as a step"
    end = lines.index("fi", guard)
    assert tests < guard < wheel[0] < end, "the wheel step runs after the tests, in their .venv"


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The sdist and the wheel built from it, as CI builds them."""
    return check.build(tmp_path_factory.mktemp("dist"))


def wheel_text(wheel: Path, name: str) -> str:
    """A file of the wheel, as text."""
    return zipfile.ZipFile(wheel).read(name).decode()


@pytest.mark.slow
def test_wheel_and_sdist_pass_twine_check_strict(dist: Any) -> None:
    report = check.twine_check(dist)
    assert report.count("PASSED") == 2, report


@pytest.mark.slow
def test_the_wheel_carries_what_an_index_page_shows(dist: Any) -> None:
    info = f"memory_plugin-{PROJECT['version']}.dist-info"
    metadata = Metadata.from_email(wheel_text(dist.wheel, f"{info}/METADATA"), validate=True)
    assert metadata.description == (ROOT / "README.md").read_text()
    assert metadata.description_content_type == "text/markdown"
    assert str(metadata.license_expression) == "MIT"
    assert metadata.license_files == ["LICENSE"]
    license_text = wheel_text(dist.wheel, f"{info}/licenses/LICENSE")
    assert license_text.startswith("MIT License") and license_text == (ROOT / "LICENSE").read_text()
    assert metadata.classifiers == PROJECT["classifiers"]
    assert metadata.project_urls == PROJECT["urls"]
    assert {"Homepage", "Source", "Issues"} <= set(PROJECT["urls"])
    assert metadata.keywords and "langgraph" in metadata.keywords
    assert metadata.author_email and "maintainers" in metadata.author_email
    assert str(metadata.requires_python) == PROJECT["requires-python"]
    entry_points = wheel_text(dist.wheel, f"{info}/entry_points.txt")
    assert "memory-plugin = memory_plugin.cli:main" in entry_points
    studio = [
        r
        for r in metadata.requires_dist or []
        if r.marker and r.marker.evaluate({"extra": "studio"})
    ]
    studio_names = {canonicalize_name(r.name) for r in studio}
    assert {"langgraph-cli", "langgraph-api"} <= studio_names
    assert not studio_names & TEST_TOOLS
    assert metadata.provides_extra and {"server", "mcp", "studio", "local"} <= set(
        metadata.provides_extra
    )


@pytest.mark.slow
def test_the_sdist_holds_what_the_wheel_was_built_from(dist: Any) -> None:
    with tarfile.open(dist.sdist) as archive:
        top = f"memory_plugin-{PROJECT['version']}/"
        sdist = {name.removeprefix(top) for name in archive.getnames()}
    assert {"pyproject.toml", "README.md", "LICENSE", "PKG-INFO"} <= sdist
    assert not [name for name in sdist if name.startswith("tests/")]
    shipped = {
        str(path.relative_to(ROOT))
        for path in (ROOT / "memory_plugin").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }
    assert {"memory_plugin/py.typed", "memory_plugin/server/static/index.html"} <= shipped
    assert shipped <= sdist
    in_wheel = {
        name for name in zipfile.ZipFile(dist.wheel).namelist() if name.startswith("memory_plugin/")
    }
    assert in_wheel == shipped


@pytest.mark.slow
def test_users_type_checker_sees_our_types(dist: Any, tmp_path: Path) -> None:
    """The wheel ships py.typed, so mypy in a user's environment checks calls into us."""
    env = tmp_path / "user-env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    site = env / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
    install = ["install", "--no-deps", "-q", "--target", str(site / "site-packages")]
    subprocess.run(
        [sys.executable, "-m", "pip", *install, str(dist.wheel)], check=True, timeout=300
    )
    user = tmp_path / "user.py"
    user.write_text('import memory_plugin\n\nbackend: int = memory_plugin.connect("memory://")\n')
    python = str(env / "bin" / "python")
    mypy = ["mypy", "--strict", "--no-incremental", "--cache-dir", os.devnull]
    checked = subprocess.run(
        [sys.executable, "-m", *mypy, "--python-executable", python, str(user)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert 'expression has type "Backend", variable has type "int"' in checked.stdout, (
        checked.stdout
    )


@pytest.fixture(scope="module")
def venv(dist: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the built wheel and its server and mcp extras; its bin folder."""
    return Path(check.fresh_venv(tmp_path_factory.mktemp("fresh") / "venv", dist.wheel))


@pytest.fixture(scope="module")
def user(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A user's working folder outside the checkout."""
    return tmp_path_factory.mktemp("user")


@pytest.fixture(scope="module")
def chatted(venv: Path, user: Path) -> tuple[str, str]:
    """The chat's output after Ann told it her dog's name and asked it back, and its URL."""
    url = f"sqlite:///{user / 'memory.db'}"
    return str(check.chat(venv, user, url)), url


@pytest.mark.slow
def test_the_fresh_venv_runs_the_wheel_not_the_checkout(venv: Path, user: Path) -> None:
    where = check.imported_from(venv, user)
    assert where.is_relative_to(venv.parent) and "site-packages" in where.parts
    version = subprocess.run([venv / "memory-plugin", "--version"], capture_output=True, text=True)
    assert version.stdout.strip() == f"memory-plugin {PROJECT['version']}"


@pytest.mark.slow
def test_the_installed_chat_remembers_on_the_offline_model(chatted: tuple[str, str]) -> None:
    out, _ = chatted
    assert out.startswith("No model configured"), out
    answers = [line for line in out.splitlines() if "assistant> " in line]
    assert len(answers) == 2 and "Rex" in answers[0] and "Rex" in answers[1], out
    assert "scoped memory note stored" in out and "scoped memory recalled hits=1" in out


@pytest.mark.slow
def test_the_installed_console_serves_its_page_and_api(
    venv: Path, user: Path, chatted: tuple[str, str]
) -> None:
    served = check.console(venv, user, chatted[1])
    assert served.printed[0] == f"Store: {chatted[1]}"
    assert served.me["user_id"] == "ann"
    assert [scope["path"] for scope in served.me["scopes"]] == ["/api/personal"]
    assert "<html" in served.page.lower()
    assert served.without_token == 401
    assert served.exit_code == 0


@pytest.mark.slow
def test_the_installed_mcp_gateway_answers_the_sdk_client(
    venv: Path, user: Path, chatted: tuple[str, str]
) -> None:
    gateway = check.gateway(venv, user, chatted[1])
    assert gateway.server
    assert {"remember", "recall", "update_memory"} <= set(gateway.tools)
    assert "Rex" in gateway.recalled


def test_the_package_docs_name_every_extra() -> None:
    table = (ROOT / "docs" / "package.md").read_text().split("## The distribution", 1)[1]
    assert [extra for extra in EXTRAS if f"\n| `{extra}` |" not in table] == []


@contextlib.contextmanager
def langgraph_dev(bin_dir: Path, app: Path) -> Iterator[str]:
    """`langgraph dev` of the venv `bin_dir` serving the langgraph.json in `app`; its URL."""
    port = check.free_port()
    drop = ("LANGSMITH_", "LANGCHAIN_", "OPENAI_", "ANTHROPIC_", "MEMORY_")
    env = {k: v for k, v in check.user_env().items() if not k.startswith(drop)}
    env |= {"LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGGRAPH_NO_VERSION_CHECK": "true"}
    env |= {"NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
    options = ["--no-browser", "--no-reload", "--port", str(port)]
    command = [str(bin_dir / "langgraph"), "dev", *options]
    with (app / "server.log").open("wb") as log:
        process = subprocess.Popen(
            command, cwd=app, env=env, stdout=log, stderr=log, start_new_session=True
        )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(STUDIO_STARTUP_TRIES):
            assert process.poll() is None, (app / "server.log").read_text()[-3000:]
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{url}/ok", timeout=2).status_code == 200:
                    break
            threading.Event().wait(0.5)
        else:
            pytest.fail(f"langgraph dev did not answer on {url}")
        yield url
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)


@pytest.mark.slow
def test_langgraph_dev_runs_on_the_studio_extra_alone(dist: Any, tmp_path: Path) -> None:
    bin_dir = check.fresh_venv(tmp_path / "venv", dist.wheel, "studio")
    listed = subprocess.run(
        [bin_dir / "python", "-m", "pip", "list", "--format=freeze"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    installed = {canonicalize_name(line.split("==")[0]) for line in listed.splitlines()}
    assert {"langgraph-cli", "langgraph-api", "langgraph-runtime-inmem"} <= installed
    assert not installed & (TEST_TOOLS | {"schemathesis"}), installed & TEST_TOOLS
    app = tmp_path / "app"
    shutil.copytree(ROOT / "graphs", app / "graphs")
    shutil.copy(ROOT / "langgraph.json", app / "langgraph.json")
    with langgraph_dev(bin_dir, app) as url:
        client = client_for(url, "ann-demo-token")
        graphs = {assistant["graph_id"] for assistant in client.assistants.search()}
        assert graphs == {"memory_agent", "memory_consolidation"}
        thread = client.threads.create()
        run = stream_run(client, thread["thread_id"], "Remember that my dog is called Rex.", {})
    assert not run.errors, run.errors
    assert ("scoped_memory", "note_stored") in {(e["kind"], e["action"]) for e in run.events}
