"""OP-7.206: the API server's web packages at releases that do not work together, from the lines people pasted."""

from __future__ import annotations

from tests.unit.rules.factories import top_finding

# RBLN-SW/vllm-rbln PR #692 and vllm-project/tpu-inference PR #2901, verbatim: FastAPI 0.137 with
# prometheus-fastapi-instrumentator <= 8.0.0; both pinned fastapi below 0.137
INCLUDED_ROUTER = "AttributeError: '_IncludedRouter' object has no attribute 'path'"
# huggingface/trl PR #6876, verbatim: FastAPI 0.110.3 left beside Starlette 1.x; the PR requires fastapi>=0.133
ON_STARTUP = "TypeError: Router.__init__() got an unexpected keyword argument 'on_startup'"
# vllm#8212, verbatim: FastAPI 0.113.0 with the OpenAI server of September 2024 (0.112.2 worked)
UNDEFINED = "TypeError: 'pydantic_core._pydantic_core.PydanticUndefinedType' object is not subscriptable"


def test_each_confirmed_pairing_names_its_packages_and_the_pin_its_thread_used():
    expected = {
        INCLUDED_ROUTER: ("FastAPI 0.137 or newer", 'pip install "fastapi<0.137"'),
        ON_STARTUP: ("Starlette 1.x", 'pip install -U "fastapi>=0.133"'),
        UNDEFINED: ("FastAPI 0.113.0", 'pip install "fastapi<0.113"'),
    }
    for line, (packages, install) in expected.items():
        top = top_finding(line)
        assert top.rule == "OP-7.206" and packages in top.title, line
        assert f"`{install}`" in top.actions[0] and top.changes == [], line


def test_an_indented_traceback_line_is_read_the_same():
    assert top_finding("  " + INCLUDED_ROUTER).rule == "OP-7.206"


def test_other_routers_attributes_are_not_this_rule():
    top = top_finding("AttributeError: 'APIRouter' object has no attribute 'lifespan_context'")
    assert top is None or top.rule != "OP-7.206"
