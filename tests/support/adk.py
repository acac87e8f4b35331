"""A scripted model for ADK agents, as ADK's own `testing_utils.MockModel`: each call
answers with the next queued response and keeps the request it was given."""

from collections.abc import AsyncGenerator
from typing import Any

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from pydantic import Field


class ScriptedModel(BaseLlm):
    model: str = "scripted"
    responses: list[LlmResponse]
    requests: list[LlmRequest] = Field(default_factory=list)

    @classmethod
    def answering(cls, *answers: str | types.Part) -> "ScriptedModel":
        """One response per answer: text, or a part (a function call, say)."""
        parts = [types.Part(text=a) if isinstance(a, str) else a for a in answers]
        return cls(responses=[LlmResponse(content=types.ModelContent([part])) for part in parts])

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.requests.append(llm_request)
        yield self.responses[len(self.requests) - 1]

    @classmethod
    def supported_models(cls) -> list[str]:
        return ["scripted"]


def request_text(request: LlmRequest) -> str:
    """Every text a request carries: its system instruction, its contents' text, and
    the function responses it hands back (as their repr)."""
    texts: list[Any] = [request.config.system_instruction or ""] if request.config else []
    for content in request.contents:
        for part in content.parts or []:
            if part.text:
                texts.append(part.text)
            elif part.function_response:
                texts.append(part.function_response.response)
    return "\n".join(str(t) for t in texts)
