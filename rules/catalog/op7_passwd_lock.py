"""OP-7.162: a container's start script could not add its user: /etc/passwd cannot be written (a read-only root file
system).

Why a rule of its own: images that run vLLM as a named user often create that user when the container starts
(`useradd` in the entrypoint), which writes /etc/passwd. shadow-utils' `useradd` first takes a lock beside the file
(/etc/passwd.lock); where the root file system is mounted read-only (docker compose `read_only: true`, Kubernetes
`securityContext.readOnlyRootFilesystem: true`) it cannot, and it says `cannot lock /etc/passwd; try again later`,
words that suggest waiting, although no retry will ever succeed. The container exits before vLLM starts.
Source: xencon/aixcl PR #836 (a vLLM service hardened with `read_only: true` whose entrypoint runs useradd; the fix
removed `read_only` and kept the dropped capabilities and no-new-privileges).
"""

from __future__ import annotations

import re

from rules.catalog import common as c
from rules.events import LogEvent, LogEventKind
from rules.facts import Facts
from rules.model import Category, Finding, Rule, RulePage, Severity

PASSWD_LOCK = re.compile(r"(?P<tool>useradd|groupadd|usermod|adduser): cannot lock (?P<file>/etc/(?:passwd|group))")


def _lock_finding(facts: Facts, event: LogEvent, match: re.Match[str]) -> Finding:
    return RULE_PASSWD_LOCK.finding(
        Severity.CRITICAL,
        f"the container's start script ran {match['tool']}, which cannot write {match['file']}: the root file system "
        "is read-only (or the script does not run as root)",
        summary=f"{match['tool']} locks {match['file']} before it edits it; on a read-only root file system it "
        "cannot, and 'try again later' never comes true: the container exits before vLLM starts. Hardening that "
        "mounts the root file system read-only breaks any image that creates its user at start.",
        evidence=[c.log_evidence(event, name="the file it could not lock", value=match["file"])],
        actions=[
            "Drop the read-only root file system for this container (docker compose `read_only: true`, a pod's "
            "`securityContext.readOnlyRootFilesystem: true`) and keep the rest of the hardening (dropped "
            "capabilities, no-new-privileges): xencon/aixcl PR #836 fixed its vLLM service that way.",
            "Or create the user when the image is built (a `RUN useradd` in the Dockerfile) so nothing writes /etc "
            "at start; then the read-only root can stay, with writable volumes for the caches vLLM writes.",
            "If the root file system is writable, the script is not running as root (`useradd: Permission denied` "
            "comes first), or a killed earlier run left /etc/passwd.lock behind.",
        ],
        confidence=0.75,
    )


RULE_PASSWD_LOCK = Rule(
    code="OP-7.162",
    title="a container's start script could not add its user (read-only root file system)",
    category=Category.STARTUP,
    check=c.on_phrase(PASSWD_LOCK, _lock_finding, kinds=(LogEventKind.PASSWD_LOCKED,)),
    needs=("events",),
    page=RulePage(
        checks="shadow-utils' `useradd: cannot lock /etc/passwd; try again later` (and groupadd's, usermod's, "
        "adduser's, /etc/group's).",
        why="The container exits before vLLM starts, in words that suggest a retry.",
        example="`- useradd: cannot lock /etc/passwd; try again later` from a vLLM service with `read_only: true` "
        "(xencon/aixcl PR #836).",
        fix="No read-only root for this container, or the user created at image build.",
        limits="The line does not say which of read-only root, no root, or a stale lock file it was.",
        references=["https://github.com/xencon/aixcl/pull/836"],
    ),
)

RULES: list[Rule] = [RULE_PASSWD_LOCK]
