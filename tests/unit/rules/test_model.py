"""The rule model and catalog: stable codes, a full page per rule, the severity order, pasteable flags."""

import re

import pytest

from rules.catalog import ALL_RULES, CODE_PATTERN, FAMILIES, UnknownRuleError, code_order, codes, get_rule
from rules.model import ConfigChange, Severity

# The code forms, from the catalog's own families: OP-N.M (the runbook's sub-rules), FAMILY-N for the others.
OTHER_FAMILIES = "|".join(family for family in FAMILIES if family != "OP")
CODE = re.compile(rf"^(OP-[1-9]\d*\.[1-9]\d*|({OTHER_FAMILIES})-[1-9]\d*)$")


def _family(code: str) -> str:
    """OP-5.3 -> OP-5; AP-1 -> AP."""
    return code.rsplit(".", 1)[0] if code.startswith("OP-") else code.split("-")[0]


def test_severity_orders_critical_first_info_last():
    assert [s.rank for s in Severity] == [0, 1, 2, 3, 4]
    assert Severity.CRITICAL.rank < Severity.HIGH.rank < Severity.INFO.rank


def test_codes_are_unique_and_well_formed():
    assert len(codes()) == len(set(codes()))
    assert all(CODE.match(code) for code in codes()), codes()


def test_the_code_pattern_accepts_every_family_and_no_other():
    """CODE_PATTERN is built from FAMILIES: a family added there is a valid code prefix at once."""
    assert [code_order(f"{family}-1")[0] for family in FAMILIES] == list(range(len(FAMILIES)))
    assert CODE_PATTERN.match("XX-1") is None and CODE_PATTERN.match("OPX-1") is None


def test_families_come_in_catalog_order_and_number_upwards():
    """Derived from the catalog: a new AP-8 or OP-5.15 needs no change here; a reordering fails."""
    prefixes = [code.split("-")[0] for code in codes()]
    assert prefixes == sorted(prefixes, key=FAMILIES.index)
    numbers: dict[str, list[int]] = {}
    for code in codes():
        numbers.setdefault(_family(code), []).append(int(code.rsplit(".", 1)[-1].rsplit("-", 1)[-1]))
    for family, seen in numbers.items():
        assert seen == sorted(set(seen)) and seen[0] == 1, (family, seen)


def test_docs_show_a_title_as_the_rule_prints_it():
    from pathlib import Path

    from rules.catalog.op5_kv import RULE_PREEMPTION
    from tests.unit.rules.factories import live

    [finding] = RULE_PREEMPTION.evaluate(live(running=60, waiting=14, kv=0.99, preemptions_added=12))
    docs = (Path(__file__).parents[3] / "docs" / "rules.md").read_text()
    assert f'OP-5.3: "{finding.title}"' in docs


def test_catalog_covers_op1_to_op6_all_seven_antipatterns_and_health():
    families = {code.split(".")[0] for code in codes()}
    assert {"OP-1", "OP-2", "OP-3", "OP-4", "OP-5", "OP-6"} <= families
    assert {f"AP-{n}" for n in range(1, 8)} <= set(codes())
    assert {"HL-1", "HL-2", "HL-3"} <= set(codes())


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_every_rule_has_a_complete_page(rule):
    page = rule.page
    for part in (page.checks, page.why, page.example, page.fix, page.limits):
        assert len(part.strip()) > 10
    text = rule.explain()
    for heading in ("What it checks", "Why it matters", "Example", "Fix", "Limits"):
        assert heading in text
    assert text.startswith(rule.code)


def test_a_rule_is_declared_with_keyword_arguments_only():
    from rules.model import Category, Rule

    rule = ALL_RULES[0]
    with pytest.raises(TypeError):
        Rule(rule.code, rule.title, Category.STARTUP, rule.page, rule.check)  # type: ignore[misc]


def test_lookup_is_case_insensitive():
    assert get_rule("op-5.3").code == "OP-5.3"


def test_unknown_code_is_a_user_facing_error_that_names_the_code_and_the_fix():
    with pytest.raises(UnknownRuleError) as caught:
        get_rule("OP-9.9")
    assert caught.value.user_facing
    assert "OP-9.9" in str(caught.value) and "servops rules list" in str(caught.value)


def test_a_family_code_points_to_its_sub_rules():
    with pytest.raises(UnknownRuleError, match="OP-5.1"):
        get_rule("OP-5")


def test_boolean_changes_render_as_vllm_flags():
    assert ConfigChange(flag="--enforce-eager", proposed="true", reason="r").command_line() == "--enforce-eager"
    assert (
        ConfigChange(flag="--enable-prefix-caching", proposed="false", reason="r").command_line()
        == "--no-enable-prefix-caching"
    )
    assert ConfigChange(flag="--max-num-seqs", proposed="64", reason="r").command_line() == "--max-num-seqs 64"


def test_docs_catalog_lists_every_rule_code():
    from pathlib import Path

    docs = (Path(__file__).parents[3] / "docs" / "rules.md").read_text()
    missing = [code for code in codes() if f"`{code}`" not in docs]
    assert not missing, f"docs/rules.md lacks {missing}"


def test_a_finding_points_to_its_rule_page_in_its_json():
    import json

    from rules.model import Category, Finding

    finding = Finding(rule="OP-5.3", severity=Severity.HIGH, category=Category.KV_CACHE, title="t")
    assert json.loads(finding.model_dump_json())["explain"] == "servops rules explain OP-5.3"
    assert Finding.model_validate_json(finding.model_dump_json()) == finding


def test_every_rule_declared_in_the_catalog_package_is_in_the_catalog():
    """A module left out of MODULES, or a rule left out of its module's RULES, would pass its own tests
    (they call the rule directly) while triage, `servops rules` and docs/rules.md never saw it."""
    import importlib
    import pkgutil

    import rules.catalog as catalog
    from rules.model import Rule

    for info in pkgutil.iter_modules(catalog.__path__):
        module = importlib.import_module(f"{catalog.__name__}.{info.name}")
        declared = [
            value
            for value in vars(module).values()
            if isinstance(value, Rule) and getattr(value.check, "__module__", None) == module.__name__
        ]
        if not declared:
            continue
        assert module in catalog.MODULES, (
            f"rules/catalog/{info.name}.py declares {[r.code for r in declared]} but is not in MODULES: "
            "import it in rules/catalog/__init__.py and add it to MODULES"
        )
        left_out = [rule.code for rule in declared if rule not in module.RULES]
        assert not left_out, f"rules/catalog/{info.name}.py declares {left_out} but leaves them out of its RULES"
