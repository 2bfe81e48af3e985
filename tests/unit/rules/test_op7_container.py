"""OP-7.18 and OP-7.19: the container's user — a uid with no user name, a cache directory it may not write."""

from __future__ import annotations

import pytest

from advisor.collect.logs import parse_lines
from rules.catalog import op7_container
from rules.evaluate import evaluate
from rules.facts import Facts
from tests.unit.rules.factories import top_finding


def _facts(*lines: str) -> Facts:
    return Facts(events=parse_lines(list(lines)).events)


def test_a_random_openshift_uid_gets_user_set_in_the_environment():
    # vllm#44548: torch's inductor asks getpass.getuser() inside vLLM's model-registry subprocess
    facts = _facts(
        '  File "/usr/lib/python3.12/getpass.py", line 169, in getuser',
        "      return pwd.getpwuid(os.getuid())[0]",
        "  KeyError: 'getpwuid(): uid not found: 1000910000'",
    )
    top = evaluate(facts).findings[0]
    assert top.rule == "OP-7.18"
    assert top.title.startswith("the process runs as uid 1000910000, which has no user name")
    assert (top.changes[0].flag, top.changes[0].kind) == ("USER", "env")


def test_a_cache_owned_by_root_is_chowned_or_moved_by_its_own_variable():
    # odysseus-dev/odysseus#6157: Docker created /app/.cache as root for a bind mount
    facts = _facts(
        "PermissionError: [Errno 13] Permission denied: '/app/.cache/vllm'",
        "PermissionError: [Errno 13] Permission denied: '/app/.cache/flashinfer'",
        "RuntimeError: Engine core initialization failed. See root cause above.",
    )
    top = evaluate(facts).findings[0]
    assert top.rule == "OP-7.19"
    assert (
        top.title
        == "the process may not write its cache directory /app/.cache/vllm: permission denied (2 cache directories)"
    )
    assert top.actions[0].startswith("Give the user vLLM runs as ownership of the cache directory: `chown -R")
    assert "/app/.cache" in top.actions[0] and top.changes[0].flag == "VLLM_CACHE_ROOT"
    assert "`docker run --user <uid>`" in top.actions[1]


@pytest.mark.parametrize(
    ("path", "variable"),
    [
        ("/root/.cache/flashinfer/90/cached_ops", "FLASHINFER_WORKSPACE_BASE"),
        ("/root/.cache/huggingface/hub", "HF_HOME"),
        ("/home/u/.triton/cache/x", "TRITON_CACHE_DIR"),
        ("/app/aphrodite-engine/.triton", "TRITON_CACHE_DIR"),  # dphnAI/sonar#458: Triton's parent, made at a request
        ("/tmp/torchinductor_app", "TORCHINDUCTOR_CACHE_DIR"),
        ("/opt/app-cache", "XDG_CACHE_HOME"),
    ],
)
def test_each_librarys_cache_is_moved_by_its_own_variable(path: str, variable: str):
    [finding] = op7_container.RULE_CACHE.evaluate(_facts(f"OSError: [Errno 30] Read-only file system: '{path}'"))
    assert finding.changes[0].flag == variable and finding.changes[0].kind == "env"


def test_a_model_file_it_may_not_read_is_not_a_cache():
    facts = _facts("PermissionError: [Errno 13] Permission denied: '/models/llama/model.safetensors'")
    assert op7_container.RULE_CACHE.evaluate(facts) == []


def test_transformers_own_words_for_a_cache_it_cannot_write_move_hugging_faces_cache():
    # kserve/kserve#3562: the huggingfaceserver under OpenShift's arbitrary uid, HOME=/
    [finding] = op7_container.RULE_CACHE.evaluate(
        _facts(
            "There was a problem when trying to write in your cache folder (/.cache/huggingface/hub). You should set "
            "the environment variable TRANSFORMERS_CACHE to a writable directory."
        )
    )
    assert "/.cache/huggingface/hub" in finding.title and finding.changes[0].flag == "HF_HOME"


def test_a_cache_at_the_root_is_a_user_without_a_home_never_a_directory_to_chown():
    # vllm#20127, verbatim (retyped `[error 13]`): the vLLM 0.9.1 container on OpenShift, HOME=/
    facts = Facts(events=parse_lines(["permissionError: [error 13] Permission denied: '/.cache'"]).events)
    top = evaluate(facts).findings[0]
    assert top.rule == "OP-7.19" and "its home is /" in top.title
    assert [(ch.flag, ch.kind) for ch in top.changes] == [("HOME", "env")]
    assert not any("chown" in action for action in top.actions)
    assert "HF_HOME" in top.actions[0] and "vllm#10185" in top.changes[0].reason


def test_a_cache_on_a_read_only_mount_asks_for_a_writable_mount_not_an_owner():
    # llm-d-incubation/llm-d-modelservice#243, verbatim: the chart mounted the model PVC readOnly; the reporter mounted
    # a writable volume instead
    line = " `OSError: [Errno 30] Read-only file system: '/model-cache/models--meta-llama--Llama-3.1-8B-Instruct'`"
    [finding] = op7_container.RULE_CACHE.evaluate(_facts(line))
    assert finding.title.endswith("it is on a read-only file system") and "readOnly: true" in finding.actions[0]
    assert not any("chown" in action for action in finding.actions)


def test_another_path_on_a_read_only_file_system_asks_for_the_directory_bound_in_writable():
    # Lumi-supercomputer/LUMI-AI-Guide#46, verbatim: a venv created inside LUMI's vLLM Singularity image, whose file
    # systems the guide forgot to bind in (the maintainers' fix: the bindings module; `-B $PWD:$PWD` worked too)
    top = evaluate(_facts("Error: [Errno 30] Read-only file system: '/scratch/project_462000131/mjanicki/h5-env'")).top
    assert top.rule == "OP-7.165" and "/scratch/project_462000131/mjanicki/h5-env" in top.title
    assert "-B <host dir>:<host dir>" in top.actions[0]


def test_a_library_the_user_may_not_read_under_root_is_an_image_built_as_root_run_as_another_uid():
    # vllm#15174, verbatim: vllm-openai v0.8.1 extended to run as uid 1000 (chowning /opt/venv and /root fixed it)
    top = top_finding(
        "`python3: error while loading shared libraries: /root/.local/share/uv/python/cpython-3.12.9-linux-x86_64-gnu"
        "/bin/../lib/libpython3.12.so.1.0: cannot open shared object file: Permission denied`"
    )
    assert top.rule == "OP-7.170"
    assert top.title.endswith("libpython3.12.so.1.0: it lies under /root, the home of the user the image was built as")
    assert "chown" in top.actions[0]


def test_a_library_writing_inside_its_installed_package_is_the_image_folders_permissions_not_a_cache_variable():
    # ai-dynamo/dynamo PR #12770, verbatim: a non-root worker image, FlashInfer linking its MoE cubins; the merged fix
    # gave group write on flashinfer_cubin's folders
    line = (
        "PermissionError: [Errno 13] Permission denied: "
        "/usr/local/lib/python3.12/dist-packages/flashinfer_cubin/cubins/flashinfer"
    )
    top = top_finding(line)
    assert top.rule == "OP-7.19" and "inside the installed package flashinfer_cubin" in top.title
    assert top.changes == []  # no cache variable moves a package's own folder
    assert "chmod -R g+rwX /usr/local/lib/python3.12/dist-packages/flashinfer_cubin" in top.actions[0]
    denied = "PermissionError: [Errno 13] Permission denied: "
    quoted = top_finding(denied + "'/opt/venv/lib/python3.10/site-packages/x/y').")
    assert quoted.rule == "OP-7.19" and "installed package x" in quoted.title
    # a module read, and a cache folder inside a package (the cache reading's, with its variable), are not this
    read = top_finding(denied + "'/usr/lib/python3/site-packages/transformers/a.py'")
    assert read is None or "installed package" not in read.title
    cache = top_finding(denied + "'/usr/lib/python3/dist-packages/flashinfer/.cache/jit'")
    assert cache.rule == "OP-7.19" and [c.flag for c in cache.changes] == ["FLASHINFER_WORKSPACE_BASE"]
