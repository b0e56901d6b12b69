"""Credentials: one synthesised sample per provider (detect-secrets' detectors, its keyword
detector, the provider patterns it lacks, password phrases) is refused in shared memory naming
its kind and kept in private memory; near-misses and the benign corpus pass in shared memory.

The samples are assembled at run time from fixed pseudo-random characters, so the repository
holds no string a secret scanner would flag."""

from __future__ import annotations

import base64
import json
import random
import re
import string
from pathlib import Path

import pytest

from memory_plugin.errors import MemoryWriteError
from memory_plugin.safety import screen
from memory_plugin.safety.credentials import PROVIDER_PATTERNS, credential_kind

ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"


def fake(alphabet: str, n: int, seed: int = 0) -> str:
    """n fixed characters that look random, drawn from the alphabet."""
    rng = random.Random(f"{alphabet}|{n}|{seed}")
    return "".join(rng.choice(alphabet) for _ in range(n))


def b64url(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


def p(*parts: str) -> str:
    """Join parts, so that no whole token is written in the source."""
    return "".join(parts)


JWT = ".".join(
    [b64url({"alg": "HS256", "typ": "JWT"}), b64url({"sub": "4821", "n": "ann"}), fake(B64URL, 43)]
)
BASIC = base64.b64encode(p("deploy:", fake(ALNUM, 14)).encode()).decode()

DETECT_SECRETS = [
    ("Artifactory Credentials", p("artifactory key AKC", fake(ALNUM, 70), " for ci")),
    ("AWS Access Key", p("the deploy user's key is ", "AKIA", fake(UPPER_ALNUM, 16))),
    ("Azure Storage Account access key", p("AccountName=ann;AccountKey=", fake(B64, 86), "==")),
    ("Basic Auth Credentials", p("clone https://deploy:", fake(ALNUM, 12), "@git.example.com/r")),
    ("Cloudant Credentials", p('cloudant_password = "', fake(HEX, 64), '"')),
    (
        "Discord Bot Token",
        p("bot token M", fake(B64URL, 23), ".", fake(B64URL, 6), ".", fake(B64URL, 27)),
    ),
    ("GitHub Token", p("CI uses ghp", "_", fake(ALNUM, 36))),
    ("GitLab Token", p("GitLab PAT glpat", "-", fake(ALNUM, 20))),
    ("IBM Cloud IAM Key", p('ibm_cloud_iam_api_key = "', fake(ALNUM, 44), '"')),
    ("IBM COS HMAC Credentials", p('cos_hmac_secret_access_key = "', fake(HEX, 48), '"')),
    ("JSON Web Token", f"session cookie {JWT}"),
    ("Mailchimp Access Key", p("mailchimp ", fake(HEX, 32), "-us14")),
    (
        "NPM tokens",
        p("//registry.npmjs.org/:_authToken=", fake(HEX, 8), "-1a2b-3c4d-5e6f-", fake(HEX, 12)),
    ),
    ("OpenAI Token", p("sk-", fake(ALNUM, 20), "T3Blbk", "FJ", fake(ALNUM, 20, 1))),
    ("Private Key", p("-----BEGIN RSA ", "PRIVATE KEY-----")),
    ("PyPI Token", p("pypi-AgEIcHlwaS5vcmc", fake(B64URL, 80))),
    ("SendGrid API Key", p("SG.", fake(B64URL, 22), ".", fake(B64URL, 43))),
    ("Slack Token", p("xoxb", "-2841937561-4829137564821-", fake(ALNUM, 24))),
    ("SoftLayer Credentials", p('softlayer_api_key = "', fake(LOWER_ALNUM, 64), '"')),
    ("Square OAuth Secret", p("sq0csp", "-", fake(B64URL, 43))),
    ("Stripe Access Key", p("billing uses sk_", "live_", fake(ALNUM, 24))),
    ("Telegram Bot Token", p("bot 5837261940:", fake(B64URL, 35))),
    ("Twilio API Key", p("twilio sid A", "C", fake(LOWER_ALNUM, 32))),
]
PROVIDERS = [
    ("GitHub fine-grained token", p("github_", "pat_", fake(ALNUM, 22), "_", fake(ALNUM, 59))),
    ("Anthropic API key", p("sk-ant-", "api03-", fake(B64URL, 93), "AA")),
    ("OpenAI-style secret key", p("OPENAI_KEY is sk-", "proj-", fake(ALNUM, 48))),
    ("Google API key", p("maps key AI", "za", fake(B64URL, 35))),
    ("Google OAuth token", p("ya29", ".", fake(B64URL, 120))),
    ("Hugging Face token", p("hf", "_", fake(string.ascii_letters, 34))),
    ("npm access token", p("publish with np", "m_", fake(ALNUM, 36))),
    ("Mailgun key", p("mailgun ke", "y-", fake(HEX, 32))),
    ("DigitalOcean token", p("do", "p_v1_", fake(HEX, 64))),
    ("Notion token", p("notion secr", "et_", fake(ALNUM, 43))),
    ("Notion token", p("notion nt", "n_", fake(string.digits, 11), fake(ALNUM, 35))),
    ("Atlassian API token", p("jira ATATT", "3x", fake(B64URL, 180), "=", fake(HEX, 8))),
    ("Stripe test key", p("sk", "_test_", fake(ALNUM, 24))),
    ("Shopify token", p("shp", "at_", fake(HEX, 32))),
    ("Postman API key", p("PM", "AK-", fake(HEX, 24), "-", fake(HEX, 34))),
    ("HashiCorp Vault token", p("VAULT_TOKEN hv", "s.", fake(B64URL, 90))),
    ("Linear API key", p("lin_", "api_", fake(ALNUM, 40))),
    ("Doppler token", p("dp.", "pt.", fake(ALNUM, 43))),
    ("Grafana service account token", p("gl", "sa_", fake(ALNUM, 32), "_", fake(HEX, 8))),
    ("New Relic key", p("NR", "AK-", fake(UPPER_ALNUM, 27))),
    ("Databricks token", p("da", "pi", fake(HEX, 32))),
    ("age secret key", p("AGE-SECRET", "-KEY-1", fake(BECH32, 58))),
    (
        "Discord webhook URL",
        p("https://discord.com/api/", "webhooks/1234567890123/", fake(B64URL, 68)),
    ),
    ("Authorization header", p("Authorization: Basic ", BASIC)),
    ("Authorization header", p("curl -H 'Authorization: Bearer ", fake(B64URL, 40), "'")),
    ("Authorization header", p("send it as Bearer ", fake(HEX, 40))),
    ("connection string with password", p("REDIS_URL=redis://:", fake(ALNUM, 16), "@cache:6379")),
    (
        "connection string with password",
        p("Server=db1;Database=app;User Id=sa;Password=", fake(ALNUM, 12), ";"),
    ),
    ("private key block", p("-----BEGIN ENCRYPTED ", "PRIVATE KEY-----")),
    ("Slack app token", p("xapp", "-1-A0", fake(UPPER_ALNUM, 9), "-4829137564821-", fake(HEX, 64))),
    ("pgpass line", p("db.internal:5432:orders:app:", fake(ALNUM, 14))),
    ("URL with a password", p("Staging DB: postgres://app:", fake(ALNUM, 9), "!@db.acme:5432/o")),
    ("Docker registry auth", p('{"auths": {"reg.acme.io": {"auth": "', BASIC, '"}}}')),
    ("Docker Hub token", p("docker login -u acme -p dckr", "_pat_", fake(B64URL, 27))),
    ("crates.io token", p("cargo login ci", "o", fake(ALNUM, 32))),
    ("NuGet API key", p("nuget push --api-key oy", "2", fake(LOWER_ALNUM, 43))),
    ("Google service account key", p('"private_key_id": "', fake(HEX, 40), '"')),
    (
        "Microsoft Teams webhook URL",
        p("https://acme.webhook.office.com/", "webhookb2/", fake(HEX, 36), "@", fake(HEX, 36)),
    ),
    ("Meta or Square access token", p("WhatsApp token EA", "AG", fake(ALNUM, 150))),
    ("Twitch OAuth token", p("oauth", ":", fake(LOWER_ALNUM, 30))),
    (
        "Braintree access token",
        p("access_token", "$production$", fake(LOWER_ALNUM, 16), "$", fake(HEX, 32)),
    ),
    ("Razorpay key", p("rzp", "_live_", fake(ALNUM, 14))),
    (
        "Plaid access token",
        p("access-", "production-", fake(HEX, 8), "-4a1b-8c2d-9e3f-", fake(HEX, 12)),
    ),
    ("Flutterwave secret key", p("FLW", "SECK-", fake(HEX, 32), "-X")),
    ("Mollie API key", p("mollie live", "_", fake(string.ascii_letters, 20), "4", fake(ALNUM, 9))),
    ("netrc credentials", p("machine api.example.com login deploy password ", fake(ALNUM, 12))),
    (
        "netrc credentials",
        p("~/.netrc:\nmachine git.acme.io\n  login ci\n  password ", fake(ALNUM, 16)),
    ),
]
WORDS = [
    ("Secret Keyword", p('db_password = "', fake(ALNUM, 14), '"')),
    ("Secret Keyword", p("client_secret: ", fake(ALNUM, 10), "9")),
    ("Secret Keyword", p("aws_secret_access_key = ", fake(ALNUM + "/+", 40))),
    ("password or secret", "Das Passwort für den Server ist Sommer2024!"),
    ("password or secret", "the wifi password is Casa#2023"),
]
SAMPLES = DETECT_SECRETS + PROVIDERS + WORDS

NEAR_MISSES = [
    "the token bucket refills at 10/s",
    "set the password policy to 12 chars min",
    "Bearer tokens expire after an hour",
    "Authorization: Bearer <token>",
    "Basic authentication is enabled on staging",
    "fixed in 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "request id 123e4567-e89b-12d3-a456-426614174000",
    "postgres://localhost:5432/app",
    "postgres://app@localhost:5432/app",
    "use ${DB_PASSWORD} from the env",
    "password = os.environ['DB_PASSWORD']",
    "secret = get_secret('db')",
    'api_key = "<your key here>"',
    "password: ********",
    "Secret: we meet on Friday",
    "my_secret: true",
    "password_reset_link: https://example.com/reset",
    "the JWT header starts with eyJhbGciOiJIUzI1NiJ9 and nothing else",
    "eyJ.not-a-token",
    "the key-value store holds sessions",
    "sk-learn is a typo for scikit-learn",
    "a secret_santa list",
    "Secret management is handled by Vault",
    "rotate the AWS secret access key every 90 days",
    "-----BEGIN CERTIFICATE-----",
    "-----BEGIN PUBLIC KEY-----",
    "SSH public key fingerprint SHA256:nThbg6kXUpJWGl7E1IGOCspRomTxdCARLviKw6E5SY8",
    "the machine learning login page has a password reset link",
    "machine api.example.com login deploy password ${NETRC_PASSWORD}",
    "put the machine name, login and password in ~/.netrc",
    "standup:10:30:team:notes",
    "localhost:5432:orders:app:*",
    "pypi-publish is the name of the release job",
    "git clone ssh://git@github.com:acme/repo.git",
    "https://ann@wiki.acme.io/page and https://example.com:8443/status",
    'the registry config sets "auth": "oauth2" for the mirror',
    "live_reload is on in dev; test_signup_flow_handles_duplicates covers it",
    "grant the oauth:read scope to the bot",
    "the WhatsApp EAA tokens expire after 60 days",
]


def test_every_provider_pattern_and_detect_secrets_detector_has_a_sample() -> None:
    from memory_plugin.safety.credentials import _detectors

    kinds = {kind for kind, _ in SAMPLES}
    assert set(PROVIDER_PATTERNS) <= kinds
    assert {str(d.secret_type) for d in _detectors()} <= kinds


@pytest.mark.parametrize(
    ("kind", "text"), SAMPLES, ids=[f"{k}-{i}" for i, (k, _) in enumerate(SAMPLES)]
)
def test_a_credential_is_refused_in_shared_memory_naming_its_kind(kind: str, text: str) -> None:
    assert credential_kind(text) == kind
    with pytest.raises(MemoryWriteError, match=re.escape(f"holds a secret ({kind})")):
        screen(text, "the note", visibility="shared")
    screen(text, "the note", visibility="private")


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_a_near_miss_passes_in_shared_memory(text: str) -> None:
    assert credential_kind(text) is None
    screen(text, "the note", visibility="shared")


def test_no_benign_corpus_line_holds_a_credential() -> None:
    path = Path(__file__).parent / "data" / "screen_benign.txt"
    lines = [
        line.split("\t", 1)[1] for line in path.read_text("utf-8").splitlines() if "\t" in line
    ]
    assert len(lines) >= 600
    assert [line for line in lines if credential_kind(line) is not None] == []


def test_a_credential_deep_in_a_long_line_is_still_found() -> None:
    token = p("github_", "pat_", fake(ALNUM, 82, 2))
    line = "x " * 3_000 + token + " y" * 3_000
    assert credential_kind(line) == "GitHub fine-grained token"
