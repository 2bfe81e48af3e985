"""What to check first for the parts of vLLM whose errors most often come from a setting outside the failing line.

Why a module of its own: two rules name a component and then have nothing in the line to act on: VC-5 for a failure
vLLM logged in its own words (the component from the catalog's file), VC-2 for an exception neither the wording
table nor the catalog knows (the component from its traceback's deepest vLLM frame, or the file its log line's
header names). The advice is the component's, not the rule's, so both read it from here.
"""

from __future__ import annotations

# What to check for the parts of vLLM whose logged errors most often come from a setting outside the line.
COMPONENT_ACTIONS: dict[str, str] = {
    "tool-call parser": (
        "Outside streaming, a tool call that does not parse is answered as plain text: the model's whole output "
        "goes into the answer's content with no tool_calls (vllm/tool_parsers/*, 0.32). Check that "
        "--tool-call-parser is the one vLLM's tool-calling documentation pairs with the model's family, and that "
        "the chat template is the one that parser expects (vLLM ships them as examples/tool_chat_template_*.jinja); "
        "an answer cut by the request's max_tokens in the middle of a call cannot parse either (its finish_reason "
        "is length). A failure only with stream=true is the parser's streaming path, which reads the call while it "
        "is still partial: send the same request unstreamed to tell it from output that never parses. A named "
        'tool_choice, or "required" (vLLM 0.8.3 on), makes vLLM constrain the output to the tools\' JSON schema '
        "with structured outputs, so the call parses."
    ),
    "reasoning parser": "Check that --reasoning-parser is the one vLLM's reasoning-outputs documentation pairs with "
    "the model's family, and that the chat template emits the think tags that parser looks for.",
    "KV transfer connector": "The KV transfer connector (--kv-transfer-config) failed with a peer or a store: "
    "fetch the log of the other side at the same time (the prefill or decode instance, or the KV store's "
    "server), where the transfer's failure usually has its cause.",
    "structured output (guided decoding)": "The request's schema, regex or grammar is what the backend failed on: "
    "retry that request alone, and try another backend (--structured-outputs-config '{\"backend\": …}').",
}
