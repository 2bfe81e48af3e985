"""OP-7.161 and OP-7.162: a container that stops before vLLM serves, for reasons outside vLLM: huggingface_hub told
to download with a package it lacks, and a start script that cannot write /etc. Read from the lines threads quoted."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding


def test_hf_transfer_asked_for_and_missing_proposes_the_variable_off_and_the_package():
    # vllm-project/vllm-omni PR #1264, verbatim (the thread wraps the rest of huggingface_hub's message)
    top = top_finding("ValueError: Fast download using 'hf_transfer' is enabled (HF_HUB_ENABLE_HF_TRANSFER=1)")
    assert top.rule == "OP-7.161"
    [change] = top.changes
    assert (change.flag, change.current, change.proposed, change.kind) == ("HF_HUB_ENABLE_HF_TRANSFER", "1", "0", "env")
    assert "pip install hf_transfer" in top.actions[0]
    whole = (  # huggingface_hub's whole message (file_download.py's http_get), as a pod's log holds it
        "ValueError: Fast download using 'hf_transfer' is enabled (HF_HUB_ENABLE_HF_TRANSFER=1) but 'hf_transfer' "
        "package is not available in your environment. Try `pip install hf_transfer`."
    )
    assert top_finding(whole).rule == "OP-7.161"


def test_a_start_script_that_cannot_lock_etc_passwd_is_a_read_only_root_file_system():
    top = top_finding("- useradd: cannot lock /etc/passwd; try again later")  # xencon/aixcl PR #836, verbatim
    assert top.rule == "OP-7.162" and "useradd" in top.title and "read-only" in top.title
    assert top.evidence[0].value == "/etc/passwd"
    assert "read_only: true" in top.actions[0] and "readOnlyRootFilesystem" in top.actions[0]
    assert top_finding("groupadd: cannot lock /etc/group; try again later").rule == "OP-7.162"


def test_other_lock_words_are_not_read_as_the_start_script():
    top = top_finding("E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 123 (apt-get)")
    assert top is None or top.rule != "OP-7.162"
