"""OP-7.219: VLLM_USE_MODELSCOPE set, and the server still called the Hugging Face Hub."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding

# vllm#13382 (vLLM 0.7.3.dev133), verbatim lines: the export, the banner, the file-list retry on huggingface.co
EXPORT = "$ export VLLM_USE_MODELSCOPE=True"
BANNER = "INFO 02-17 15:31:18 api_server.py:891] vLLM API server version 0.7.3.dev133+g84683fa2.d20250214"
FILE_LIST = (
    'ERROR 02-17 15:33:29 config.py:102] Error retrieving file list: (MaxRetryError("HTTPSConnectionPool(host='
    "'huggingface.co', port=443): Max retries exceeded with url: /api/models/deepseek-ai/DeepSeek-R1-Distill-Qwen-14B/"
    "tree/main?recursive=True&expand=False (Caused by ConnectTimeoutError(<urllib3.connection.HTTPSConnection object "
    "at 0x7f216b87a360>, 'Connection to huggingface.co timed out. (connect timeout=None)'))\"), '(Request ID: "
    "1ba47281-d3fd-47d8-b844-bc6c1984d527)'), retrying 1 of 2"
)


def test_a_073_development_build_listing_files_on_the_hub_is_the_bug_pr_13384_fixed():
    top = top_finding(EXPORT, BANNER, FILE_LIST)
    assert top.rule == "OP-7.219" and "a development build of 0.7.3" in top.title
    assert "model's file list" in top.title and "vllm>=0.7.3" in top.actions[0]


def test_another_release_calling_the_hub_says_the_variable_did_not_reach_the_process():
    # constructed: the same lines from a 0.8.5 release, whose lookup has ModelScope's branch
    top = top_finding(EXPORT, BANNER.replace("0.7.3.dev133+g84683fa2.d20250214", "0.8.5"), FILE_LIST)
    assert top.rule == "OP-7.219" and "did not reach the server's process" in top.title
    assert "/proc/<pid>/environ" in top.actions[0]


def test_without_the_variable_the_unreachable_hub_stays_op_7_38():
    top = top_finding(BANNER, FILE_LIST)
    assert top.rule == "OP-7.38"
    # the variable turned off is not turned on
    assert top_finding("export VLLM_USE_MODELSCOPE=0", BANNER, FILE_LIST).rule == "OP-7.38"
