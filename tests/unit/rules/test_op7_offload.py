"""OP-7.23: the CPU KV offload region in /dev/shm that could not be backed at start-up."""

from __future__ import annotations

from advisor.collect.logs import parse_lines
from rules.catalog import op7_offload
from rules.facts import Facts

# vllm#54002: a pod's emptyDir /dev/shm kept the crashed run's region across the container's restart
CREATED = "INFO [shared_offload_region.py:71] Created mmap file /dev/shm/vllm_offload_2510ed76.mmap (17.18 GB)"
FAILED = [
    '  File ".../vllm/v1/kv_offload/cpu/shared_offload_region.py", line 100, in __init__',
    "    self.mmap_obj.madvise(",
    "OSError: [Errno 14] Bad address",
]


def _facts(lines: list[str]) -> Facts:
    return Facts(events=parse_lines(lines).events)


def test_a_region_whose_pages_fail_names_its_size_a_leak_and_the_fixes():
    [finding] = op7_offload.RULE_OFFLOAD_REGION.evaluate(_facts([CREATED, *FAILED]))
    assert finding.title.startswith("the CPU KV offload region (17.18 GB in /dev/shm) could not be backed")
    assert "leaked by an earlier run" in finding.title
    assert finding.actions[0].startswith("Look in /dev/shm") and "17.18 GB" in finding.actions[1]
    assert finding.actions[2].startswith("Upgrade vLLM")


def test_a_region_created_without_an_error_or_an_error_without_a_region_is_not_this():
    assert not op7_offload.RULE_OFFLOAD_REGION.evaluate(_facts([CREATED]))
    assert not op7_offload.RULE_OFFLOAD_REGION.evaluate(_facts(FAILED))
