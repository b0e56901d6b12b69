"""docs/console-deploy.md's nginx block, run: a real nginx with TLS in front of two console
processes over one database, reached the way a browser would."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import pytest

from tests.test_cli_serve import free_port, serving

pytestmark = pytest.mark.slow

ROOT = Path(__file__).parent.parent
DEPLOY = ROOT / "docs" / "console-deploy.md"
HOST = "memory.example.com"
TOKEN = "proxy-test-token-0123456789abcdefghijklmnop"
STARTUP_SECONDS = 30


def nginx_or_skip() -> str:
    """Debian's nginx: required in CI (.ci/run installs it), else the test skips."""
    found = shutil.which("nginx") or (
        "/usr/sbin/nginx" if Path("/usr/sbin/nginx").exists() else None
    )
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("nginx is missing: .ci/run installs Debian's nginx-light")
        pytest.skip("nginx is not installed (apt-get install nginx-light)")
    return found


def documented_block() -> str:
    """The one ```nginx block of docs/console-deploy.md."""
    (block,) = re.findall(r"^```nginx\n(.*?)^```\n", DEPLOY.read_text(), re.M | re.S)
    return block


def replace_once(text: str, pattern: str, new: str) -> str:
    """`text` with the one match of `pattern` replaced; the doc must still have that line."""
    result, count = re.subn(pattern, new, text, flags=re.M)
    assert count == 1, f"docs/console-deploy.md's nginx block has no single line {pattern!r}"
    return result


def configure(tmp: Path, upstreams: tuple[int, int], http: int, https: int) -> Path:
    """nginx.conf around the documented block, with local ports and a self-signed cert."""
    cert, key = tmp / "cert.pem", tmp / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-subj", f"/CN={HOST}", "-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
    )
    block = documented_block()
    block = replace_once(block, r"server 127\.0\.0\.1:8765;", f"server 127.0.0.1:{upstreams[0]};")
    block = replace_once(block, r"server 127\.0\.0\.1:8766;", f"server 127.0.0.1:{upstreams[1]};")
    block = replace_once(block, r"listen 80;", f"listen 127.0.0.1:{http};")
    block = replace_once(block, r"listen 443 ssl", f"listen 127.0.0.1:{https} ssl")
    block = replace_once(block, r"ssl_certificate +\S+;", f"ssl_certificate {cert};")
    block = replace_once(block, r"ssl_certificate_key +\S+;", f"ssl_certificate_key {key};")
    temps = "\n".join(
        f"    {kind}_temp_path {tmp / kind};" for kind in ("client_body", "proxy", "fastcgi")
    )
    user = "user root;\n" if os.geteuid() == 0 else ""
    conf = tmp / "nginx.conf"
    conf.write_text(
        f"{user}daemon off;\nworker_processes 1;\npid {tmp / 'nginx.pid'};\n"
        f"error_log {tmp / 'error.log'};\nevents {{}}\n"
        f"http {{\n    access_log {tmp / 'access.log'};\n{temps}\n"
        f"    uwsgi_temp_path {tmp / 'uwsgi'};\n    scgi_temp_path {tmp / 'scgi'};\n"
        f"{block}}}\n"
    )
    return conf


@contextmanager
def nginx(conf: Path, port: int) -> Iterator[None]:
    """nginx running `conf` until the block ends; waits for its TLS port."""
    binary = nginx_or_skip()
    checked = subprocess.run([binary, "-t", "-c", str(conf)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    process = subprocess.Popen([binary, "-c", str(conf)], stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "nginx did not start"
                time.sleep(0.1)
        yield
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture
def deployment(tmp_path: Path) -> Iterator[tuple[str, tuple[str, str], int]]:
    """Two `memory-plugin serve` processes over one SQLite file, nginx in front of both:
    yields the proxy's https base URL, the processes' own URLs and the proxy's http port."""
    nginx_or_skip()
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps({TOKEN: {"identity": "ann", "workspaces": ["acme"]}}))
    shared = ("--url", f"sqlite:///{tmp_path / 'console.db'}", "--tokens", str(tokens))
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with ExitStack() as stack:
        first = stack.enter_context(serving(tmp_path / "a", *shared))
        second = stack.enter_context(serving(tmp_path / "b", *shared))
        ports = (int(first.base.rsplit(":", 1)[1]), int(second.base.rsplit(":", 1)[1]))
        http, https = free_port(), free_port()
        stack.enter_context(nginx(configure(tmp_path, ports, http, https), https))
        yield f"https://127.0.0.1:{https}", (first.base, second.base), http


def client(base: str) -> httpx.Client:
    """A client of the proxy as a browser of memory.example.com (self-signed cert)."""
    return httpx.Client(
        base_url=base,
        verify=False,
        headers={"Host": HOST, "Authorization": f"Bearer {TOKEN}"},
        timeout=30,
    )


def test_http_redirects_to_https(deployment: tuple[str, tuple[str, str], int]) -> None:
    _, _, http = deployment
    answer = httpx.get(f"http://127.0.0.1:{http}/api/me", headers={"Host": HOST})
    assert answer.status_code == 301
    assert answer.headers["location"] == f"https://{HOST}/api/me"


def test_the_console_answers_through_the_proxy(
    deployment: tuple[str, tuple[str, str], int],
) -> None:
    base, _, _ = deployment
    with client(base) as proxy:
        me = proxy.get("/api/me")
        assert me.status_code == 200 and me.json()["user_id"] == "ann"
        assert "max-age=31536000" in me.headers["strict-transport-security"]
        assert proxy.get("/api/me", headers={"Authorization": ""}).status_code == 401
        page = proxy.get("/")
        assert page.status_code == 200 and "<html" in page.text.lower()
        assets = re.findall(r'(?:src|href)="(/static/[^"]+)"', page.text)
        assert assets and all(proxy.get(asset).status_code == 200 for asset in assets)


def test_both_processes_serve_one_memory(deployment: tuple[str, tuple[str, str], int]) -> None:
    base, processes, _ = deployment
    with client(base) as proxy:
        saved = proxy.put(
            "/api/team/acme/document",
            json={"text": "# Team\n\n- Deploys on Tuesdays", "expected_version": None},
        )
        assert saved.status_code == 200, saved.text
        version = saved.json()["document"]["version"]
        stale = proxy.put(
            "/api/team/acme/document",
            json={"text": "# Team\n\n- Deploys on Fridays", "expected_version": version - 1},
        )
        assert stale.status_code == 409
        for own in processes:
            direct = httpx.get(
                f"{own}/api/team/acme/document",
                headers={"Authorization": f"Bearer {TOKEN}"},
                timeout=30,
            )
            assert direct.json()["document"]["text"] == "# Team\n\n- Deploys on Tuesdays"
