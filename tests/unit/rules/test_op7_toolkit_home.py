"""OP-7.27: a package found no GPU toolkit directory (ROCM_HOME or CUDA_HOME is None)."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_toolkit_home
from rules.facts import Facts

SITE = "/usr/local/lib/python3.10/dist-packages"
# gpustack/gpustack#5305: Hygon's lightop reads the DTK version from ROCM_HOME at import
LIGHTOP = [
    f'  File "{SITE}/vllm/v1/attention/backends/mla/indexer.py", line 18, in <module>',
    "    from lightop import gemmopt",
    f'  File "{SITE}/lightop/__init__.py", line 20, in <module>',
    "    dtk_version = get_dtk_version(ROCM_HOME)",
    f'  File "{SITE}/lightop/__init__.py", line 16, in get_dtk_version',
    "    dtk_version = ''.join(dtk_version.split('.'))",
    "AttributeError: 'NoneType' object has no attribute 'split'",
]


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_a_none_toolkit_directory_passed_by_a_package_proposes_the_variable_that_sets_it():
    [finding] = op7_toolkit_home.RULE_TOOLKIT_HOME.evaluate(_facts(LIGHTOP))
    assert finding.title.startswith("ROCM_HOME is None: lightop looked for the ROCm (AMD; Hygon's DTK) toolkit")
    [change] = finding.changes
    assert (change.flag, change.kind) == ("ROCM_PATH", "env") and "bin/hipcc" in change.proposed
    assert "ROCM_HOME or ROCM_PATH" in finding.summary


def test_a_none_error_with_no_toolkit_name_in_its_calls_is_not_this():
    lines = [line.replace("ROCM_HOME", "version_file") for line in LIGHTOP]
    assert op7_toolkit_home.RULE_TOOLKIT_HOME.evaluate(_facts(lines)) == []
