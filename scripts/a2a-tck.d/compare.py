"""Compares one kit line's outcomes with the expected list.

usage: compare.py EXPECTED OUTCOMES LINE

EXPECTED has one entry a line, ``<line> <fail|skip> <node id or glob>  # reason``
(* in a node id matches any run of characters; a reason is required; blank lines and lines starting with # are comments).
OUTCOMES has ``<line> <outcome> <node id>`` lines, as scripts/a2a-tck writes
them (outcome: pass, xpass, xfail, skip, fail, error).

A test that no entry names must pass (a kit's own xfail counts as a pass).
A failing or erroring test must match a ``fail`` entry; a skipped one a
``skip`` entry. A ``fail`` entry whose test passes, skips or is gone is an
error too: the list, and docs/a2a-conformance.md, must say what happens.
Prints the counts and every difference; exits 1 on a difference.
"""

from __future__ import annotations

import re
import sys
from collections import Counter


def glob_match(nodeid: str, pattern: str) -> bool:
    """Reports whether nodeid matches pattern, in which only * is special
    (it matches any run of characters); brackets are literal, as in node ids."""
    if "*" not in pattern:
        return nodeid == pattern
    rx = ".*".join(re.escape(part) for part in pattern.split("*"))
    return re.fullmatch(rx, nodeid) is not None


def load_expected(path: str, line: str) -> list[tuple[str, str, str]]:
    entries = []
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            text = raw.strip()
            if not text or text.startswith("#"):
                continue
            body, _, reason = text.partition("#")
            fields = body.split()
            if len(fields) != 3 or fields[1] not in ("fail", "skip") or not reason.strip():
                sys.exit(f"{path}:{n}: want '<line> <fail|skip> <node id>  # reason', got: {text}")
            if fields[0] == line:
                entries.append((fields[1], fields[2], reason.strip()))
    return entries


def load_outcomes(path: str, line: str) -> dict[str, str]:
    out = {}
    with open(path, encoding="utf-8") as f:
        for raw in f:
            fields = raw.split("  # ", 1)[0].split(maxsplit=2)
            if len(fields) == 3 and fields[0] == line:
                out[fields[2].strip()] = fields[1]
    return out


def main() -> int:
    expected_path, outcomes_path, line = sys.argv[1:4]
    entries = load_expected(expected_path, line)
    outcomes = load_outcomes(outcomes_path, line)

    def entry_for(nodeid: str, kind: str):
        for e in entries:
            if e[0] == kind and glob_match(nodeid, e[1]):
                return e
        return None

    problems = []
    for nodeid, got in sorted(outcomes.items()):
        failing = entry_for(nodeid, "fail")
        skipping = entry_for(nodeid, "skip")
        if got in ("fail", "error"):
            if failing is None:
                problems.append(f"REGRESSION {got}: {nodeid} (expected to pass)")
        elif got == "skip":
            if failing is not None:
                problems.append(f"CHANGED skip: {nodeid} is listed as failing ({failing[2]})")
            elif skipping is None:
                problems.append(f"REGRESSION skip: {nodeid} (expected to pass)")
        elif failing is not None:
            problems.append(f"FIXED {got}: {nodeid} is listed as failing ({failing[2]}): remove it from the list")

    for kind, pattern, reason in entries:
        if kind != "fail":
            continue
        if not any(glob_match(n, pattern) for n in outcomes):
            problems.append(f"GONE: no test matches the expected failure {pattern} ({reason})")

    c = Counter(outcomes.values())
    passed = c["pass"] + c["xpass"] + c["xfail"]
    failed = c["fail"] + c["error"]
    expected_fail = sum(1 for n, g in outcomes.items() if g in ("fail", "error") and entry_for(n, "fail"))
    print(
        f"A2A {line} kit: {passed} passed, {failed} failed ({expected_fail} expected), "
        f"{c['skip']} skipped, {len(outcomes)} tests"
        + (f" (kit xfail {c['xfail']}, xpass {c['xpass']})" if c["xfail"] or c["xpass"] else "")
    )
    for p in problems:
        print(f"  {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
