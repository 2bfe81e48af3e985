"""`servops rules`: the rule catalog — list every code, or print one rule's page.

Like `ruff rule F401`: codes are stable, so an on-call engineer who sees `OP-5.3` in a report
can read what it checks, why, an example, the fix and its limits without opening the code.
`list --json` writes a JSON document (kind "rules") for tools and reports.
"""

from __future__ import annotations

import argparse
import json
from datetime import datetime, timezone

from advisor import __version__
from advisor.errors import UserError
from rules.catalog import ALL_RULES, UnknownRuleError, get_rule

NAME = "rules"


def register(subparsers) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        NAME,
        help="list the triage rules (OP-1 … OP-6, AP-n, HL-n) or explain one",
        description=(
            "The catalog of triage rules. 'servops rules list' prints every code with its title "
            "and category; 'servops rules explain CODE' prints the rule's page: what it checks, "
            "why it matters, an example, the fix and its limits."
        ),
    )
    actions = parser.add_subparsers(dest="rules_action", metavar="ACTION")
    listing = actions.add_parser("list", help="list every rule code, title and category",
                                 description="List every rule in catalog order.")
    listing.add_argument("--json", action="store_true", help="print a JSON document (kind 'rules') instead of a table")
    explain = actions.add_parser("explain", help="print the page of one rule",
                                 description="Print one rule's page (what, why, example, fix, limits).")
    explain.add_argument("code", metavar="CODE", help="a rule code such as OP-5.3 or AP-1 (case-insensitive)")
    explain.add_argument("--json", action="store_true", help="print the rule page as JSON")
    return parser


def run(args: argparse.Namespace) -> int:
    action = getattr(args, "rules_action", None)
    if action == "explain":
        return _explain(args.code, as_json=args.json)
    if action == "list" or action is None:
        return _list(as_json=bool(getattr(args, "json", False)))
    raise UserError(f"unknown action '{action}'; use 'servops rules list' or 'servops rules explain CODE'")


def catalog_document() -> dict:
    """The catalog as a JSON-ready document with the house's top-level keys."""
    return {
        "kind": "rules",
        "servops_version": __version__,
        "created_at": datetime.now(timezone.utc).isoformat(),
        "rules": [_rule_entry(rule) for rule in ALL_RULES],
    }


def _rule_entry(rule) -> dict:
    return {"code": rule.code, "title": rule.title, "category": rule.category.value,
            "page": rule.page.model_dump()}


def _list(as_json: bool) -> int:
    if as_json:
        print(json.dumps(catalog_document(), indent=2))
        return 0
    width = max(len(rule.code) for rule in ALL_RULES)
    for rule in ALL_RULES:
        print(f"{rule.code:<{width}}  {rule.category.value:<14} {rule.title}")
    print(f"\n{len(ALL_RULES)} rules. 'servops rules explain CODE' prints a rule's page.")
    return 0


def _explain(code: str, as_json: bool) -> int:
    try:
        rule = get_rule(code)
    except UnknownRuleError as exc:
        raise UserError(str(exc)) from exc
    if as_json:
        print(json.dumps(_rule_entry(rule), indent=2))
    else:
        print(rule.explain(), end="")
    return 0
