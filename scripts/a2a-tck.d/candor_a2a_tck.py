"""pytest plugin that scripts/a2a-tck loads (-p candor_a2a_tck) into both
lines of the A2A conformance kit. It changes no outcome; it does this:

1. Authorization. Neither kit can pass credentials, and the agent under test
   wants a bearer token. Every request the kit sends through requests or
   httpx to the agent's origin (CANDOR_TCK_ORIGIN, scheme://host:port) gets
   ``Authorization: Bearer <token>``, the token read from
   CANDOR_TCK_TOKEN_FILE, unless it already has an Authorization header or
   the running test's node id matches a line of CANDOR_TCK_NO_AUTH (tests of
   authentication itself, which send what they mean to send). The token is
   replaced by [REDACTED] in every report.

2. The card's version. With CANDOR_TCK_CARD_VERSION set (the 0.3 line), a
   GET of /.well-known/agent-card.json without an A2A-Version header gets
   ``A2A-Version: <it>``: the 0.3 kit predates the header, and without it
   the agent serves its 1.0 card.

3. Imports. Debian bookworm's protobuf (3.21) has no
   google.protobuf.runtime_version, which the 1.0 line's generated a2a_pb2
   calls to check its protobuf version; a no-op module stands in. (The
   stubs directory holds the googleapis-common-protos modules Debian lacks.)

4. Loopback. The 1.0 line's webhook receiver binds 127.0.0.1, not every
   interface.

5. Outcomes. At the end it writes CANDOR_TCK_RESULTS: one
   ``<outcome> <node id>  # why`` line a test (outcome: pass, xpass, xfail,
   skip, fail, error), which scripts/a2a-tck.d/compare.py judges.
"""

from __future__ import annotations

import os
import re
import sys
import types
from urllib.parse import urlsplit


def glob_match(nodeid: str, pattern: str) -> bool:
    """Reports whether nodeid matches pattern, in which only * is special
    (it matches any run of characters); brackets are literal, as in node ids."""
    if "*" not in pattern:
        return nodeid == pattern
    rx = ".*".join(re.escape(part) for part in pattern.split("*"))
    return re.fullmatch(rx, nodeid) is not None


# --- 3. imports -------------------------------------------------------------

try:
    from google.protobuf import runtime_version as _rv  # noqa: F401
except ImportError:
    _rv = types.ModuleType("google.protobuf.runtime_version")

    class _Domain:
        GOOGLE_INTERNAL = 1
        PUBLIC = 2

    def _validate(*_args, **_kwargs):
        return None

    _rv.Domain = _Domain
    _rv.ValidateProtobufRuntimeVersion = _validate
    sys.modules["google.protobuf.runtime_version"] = _rv
    import google.protobuf

    google.protobuf.runtime_version = _rv

import pytest  # noqa: E402


# --- 1. authorization, 2. the card's version ---------------------------------

_ORIGIN = os.environ.get("CANDOR_TCK_ORIGIN", "")
_TOKEN_FILE = os.environ.get("CANDOR_TCK_TOKEN_FILE", "")
_NO_AUTH_FILE = os.environ.get("CANDOR_TCK_NO_AUTH", "")
_CARD_VERSION = os.environ.get("CANDOR_TCK_CARD_VERSION", "")
_CARD_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")


def _read_token() -> str:
    if not _TOKEN_FILE:
        return ""
    with open(_TOKEN_FILE, encoding="utf-8") as f:
        return f.read().strip()


_TOKEN = _read_token()


def _patterns(path: str) -> list[str]:
    if not path:
        return []
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                out.append(line)
    return out


_NO_AUTH = _patterns(_NO_AUTH_FILE)

# The node id of the test running now; None outside a test (session
# fixtures set up before the first test, such as the agent card fetch, get
# the header).
_current: dict[str, str | None] = {"nodeid": None}


def _origin_of(url) -> str:
    try:
        u = urlsplit(str(url))
    except ValueError:
        return ""
    return f"{u.scheme}://{u.netloc}".lower()


def _wants_auth(url) -> bool:
    if not _TOKEN or not _ORIGIN or _origin_of(url) != _ORIGIN.lower():
        return False
    nodeid = _current["nodeid"]
    if nodeid is not None and any(glob_match(nodeid, p) for p in _NO_AUTH):
        return False
    return True


def _card_fetch(method, url) -> bool:
    """Reports whether a request is a GET of the agent's card, which gets
    ``A2A-Version: CANDOR_TCK_CARD_VERSION`` when it has no such header."""
    if not _CARD_VERSION or str(method).upper() != "GET" or _origin_of(url) != _ORIGIN.lower():
        return False
    try:
        path = urlsplit(str(url)).path
    except ValueError:
        return False
    return path.endswith(_CARD_PATHS)


def _has(headers, name: str) -> bool:
    if not headers:
        return False
    return any(str(k).lower() == name for k in headers.keys())


def _has_auth(headers) -> bool:
    return _has(headers, "authorization")


def _patch_requests() -> None:
    try:
        import requests.sessions
    except ImportError:
        return
    orig = requests.sessions.Session.request

    def request(self, method, url, *args, **kwargs):
        headers = dict(kwargs.get("headers") or {})
        changed = False
        if _wants_auth(url) and not _has_auth(headers) and not _has_auth(self.headers):
            headers["Authorization"] = f"Bearer {_TOKEN}"
            changed = True
        if _card_fetch(method, url) and not _has(headers, "a2a-version") and not _has(self.headers, "a2a-version"):
            headers["A2A-Version"] = _CARD_VERSION
            changed = True
        if changed:
            kwargs["headers"] = headers
        return orig(self, method, url, *args, **kwargs)

    requests.sessions.Session.request = request


def _patch_httpx() -> None:
    try:
        import httpx
    except ImportError:
        return

    def add(request) -> None:
        if _wants_auth(request.url) and "authorization" not in request.headers:
            request.headers["Authorization"] = f"Bearer {_TOKEN}"
        if _card_fetch(request.method, request.url) and "a2a-version" not in request.headers:
            request.headers["A2A-Version"] = _CARD_VERSION

    orig_send = httpx.Client.send

    def send(self, request, *args, **kwargs):
        add(request)
        return orig_send(self, request, *args, **kwargs)

    httpx.Client.send = send

    orig_asend = httpx.AsyncClient.send

    async def asend(self, request, *args, **kwargs):
        add(request)
        return await orig_asend(self, request, *args, **kwargs)

    httpx.AsyncClient.send = asend


_patch_requests()
_patch_httpx()


def _redact(text: str) -> str:
    if _TOKEN and text:
        return text.replace(_TOKEN, "[REDACTED]")
    return text


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _current["nodeid"] = item.nodeid
    try:
        yield
    finally:
        _current["nodeid"] = None


# --- 4. loopback ----------------------------------------------------------


def pytest_configure(config):
    """The 1.0 line's webhook receiver binds every interface; bind it to
    127.0.0.1 (scripts/a2a-tck passes --webhook-host=127.0.0.1 to match)."""
    try:
        from tck.webhook import server
    except ImportError:
        return
    orig_start = server.WebhookReceiver.start

    def start(self):
        if self.host in ("", "0.0.0.0", "::"):
            self.host = "127.0.0.1"
        return orig_start(self)

    server.WebhookReceiver.start = start


# --- 5. outcomes -------------------------------------------------------------

_results: dict[str, tuple[str, str]] = {}


def _why(report) -> str:
    """One line saying why a test did not pass (the skip reason, or the
    last line of the failure), for the outcomes file."""
    lr = report.longrepr
    if lr is None:
        return ""
    if isinstance(lr, tuple) and len(lr) == 3:
        text = str(lr[2])
    else:
        crash = getattr(getattr(lr, "reprcrash", None), "message", None)
        text = str(crash if crash is not None else lr)
    text = " ".join(_redact(text).split())
    if text.startswith("Skipped: "):
        text = text[len("Skipped: "):]
    return text[:300]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    # The token must not reach a report, whatever a test printed.
    if _TOKEN:
        if rep.longrepr is not None and _TOKEN in str(rep.longrepr):
            rep.longrepr = _redact(str(rep.longrepr))
        rep.sections = [(name, _redact(content)) for name, content in rep.sections]


def pytest_runtest_logreport(report):
    nodeid = report.nodeid
    if report.when == "call" or (report.when == "setup" and not report.passed):
        if report.passed:
            state = "xpass" if hasattr(report, "wasxfail") else "pass"
        elif report.skipped:
            state = "xfail" if hasattr(report, "wasxfail") else "skip"
        else:
            state = "fail" if report.when == "call" else "error"
        _results[nodeid] = (state, "" if state == "pass" else _why(report))
    elif report.when == "teardown" and report.failed:
        _results[nodeid] = ("error", _why(report))


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get("CANDOR_TCK_RESULTS", "")
    if not path:
        return
    with open(path, "w", encoding="utf-8") as f:
        for nodeid in sorted(_results):
            state, why = _results[nodeid]
            f.write(f"{state} {nodeid}" + (f"  # {why}" if why else "") + "\n")
