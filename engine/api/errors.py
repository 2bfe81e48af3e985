"""HTTP errors in vLLM 0.33's shape and wording.

Why vLLM's texts: clients and runbooks match on them (the too-long-prompt text, the 503
`The engine is currently busy…`), and the advisor's rules quote them. The body is the
nested form vLLM uses since 0.10.1: `{"error": {"message", "type", "param", "code"}}`.
"""

from __future__ import annotations

import json
from http import HTTPStatus
from typing import Any

from aiohttp import web

ENGINE_DEAD_MESSAGE = "The server had an error while processing your request."
BODY_PARSE_MESSAGE = "There was an error parsing the body"
TEXT_ENCODE_MESSAGE = "TextEncodeInput must be Union[TextInputSequence, Tuple[InputSequence, InputSequence]]"
BUSY_MESSAGE = (
    "The engine is currently busy and cannot accept new requests. Please try again later or on a different instance."
)


class ApiError(Exception):
    """An error answered to the client as vLLM would answer it."""

    def __init__(
        self, message: str, *, status: int = 400, err_type: str = "BadRequestError", param: str | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.err_type = err_type
        self.param = param

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.err_type, "param": self.param, "code": self.status}}

    def response(self) -> web.Response:
        return web.json_response(self.body(), status=self.status, dumps=compact_json)


class ClientDisconnected(Exception):
    """The client hung up before its request body arrived: nothing to answer, nothing to log."""


class BodyParseError(ApiError):
    """A body the JSON parser gives up on (100,000 nested arrays): FastAPI's own 400, not vLLM's shape."""

    def __init__(self) -> None:
        super().__init__(BODY_PARSE_MESSAGE, status=400)

    def body(self) -> dict[str, Any]:
        return {"detail": self.message}


class Unauthorized(ApiError):
    """vLLM's AuthenticationMiddleware answer for a missing or wrong `Authorization: Bearer` key."""

    def __init__(self) -> None:
        super().__init__("Unauthorized", status=401, err_type="Unauthorized")

    def body(self) -> dict[str, Any]:
        return {"error": self.message}


def bad_request(message: str, param: str | None = None) -> ApiError:
    return ApiError(message, status=400, err_type="BadRequestError", param=param)


def validation_error(message: str, parameter: str | None, value: Any = None) -> ApiError:
    """vLLM's VLLMValidationError as a 400: `<message> (parameter=NAME, value=VALUE)`, param NAME."""
    if parameter is None:
        return bad_request(message)
    return bad_request(f"{message} (parameter={parameter}, value={value})", param=parameter)


def unencodable_text() -> ApiError:
    """A prompt the tokenizer cannot take (a lone surrogate such as "\\ud800"): vLLM 0.32's 400."""
    return bad_request(TEXT_ENCODE_MESSAGE)


def model_not_found(requested: str) -> ApiError:
    return ApiError(f"The model `{requested}` does not exist.", status=404, err_type="NotFoundError", param="model")


def engine_dead() -> ApiError:
    return ApiError(ENGINE_DEAD_MESSAGE, status=500, err_type="InternalServerError")


def engine_busy() -> ApiError:
    # vLLM answers graceful 503s with the HTTP phrase as the type.
    return ApiError(BUSY_MESSAGE, status=503, err_type=HTTPStatus.SERVICE_UNAVAILABLE.phrase)


def shutting_down() -> ApiError:
    return ApiError(
        "The server is shutting down and cannot accept new requests. Please try again on a different instance.",
        status=503,
        err_type=HTTPStatus.SERVICE_UNAVAILABLE.phrase,
    )


def prompt_too_long(max_model_len: int, prompt_tokens: int) -> ApiError:
    """vLLM 0.32's text for a prompt that leaves no room for output.

    vLLM tokenizes at most max_model_len + 1 tokens, so it says "at least" that many.
    """
    counted = min(prompt_tokens, max_model_len + 1)
    return validation_error(
        f"This model's maximum context length is {max_model_len} tokens. However, your prompt "
        f"contains at least {counted} input tokens, which exceeds this limit even without any output "
        f"tokens. Please reduce the length of the input prompt.",
        "input_tokens",
        counted,
    )


def max_tokens_too_large(max_tokens: int, max_model_len: int) -> ApiError:
    """vLLM 0.32: only max_tokens > max_model_len is an error; a prompt plus max_tokens beyond
    max_model_len is clamped (observed: 200 with fewer tokens, not a 400)."""
    return validation_error(
        f"max_tokens={max_tokens} cannot be greater than max_model_len={max_model_len}. "
        f"Please request fewer output tokens.",
        "max_tokens",
        max_tokens,
    )


def compact_json(payload: Any) -> str:
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
