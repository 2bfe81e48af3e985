"""OP-7.175: Hugging Face's Xet downloader failed; HF_HUB_DISABLE_XET=1 downloads over plain HTTP."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding


def test_hf_xets_cas_error_proposes_downloading_over_plain_http():
    # meta-pytorch/torchforge PR #109, verbatim: the merged fix exported HF_HUB_DISABLE_XET=1
    top = top_finding(
        "[0] [0] RuntimeError: Data processing error: CAS service error : ReqwestMiddleware Error: Request failed "
        "after 5 retries"
    )
    assert top.rule == "OP-7.175" and top.title.startswith("Hugging Face's Xet downloader (hf-xet) failed")
    assert [(c.flag, c.proposed, c.kind) for c in top.changes] == [("HF_HUB_DISABLE_XET", "1", "env")]
    # vllm PR #18701, verbatim: a worker downloading Qwen3's weights
    single = top_finding("    RuntimeError: Data processing error: CAS service error: Error: single flight error:")
    assert single.rule == "OP-7.175"
