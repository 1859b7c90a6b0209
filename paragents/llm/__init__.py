"""The LLM layer: OpenAI-compatible streaming client and stream assembler. The loopback replay servers
for tests and cassettes are in :mod:`paragents.llm.replay` (import them from there)."""

from paragents.llm.client import ChatClient
from paragents.llm.errors import LLMError
from paragents.llm.stream import (
    StreamAssembler,
    StreamDelta,
    StreamReasoningDelta,
    StreamTextDelta,
    ToolCallDelta,
)

__all__ = [
    "ChatClient",
    "LLMError",
    "StreamAssembler",
    "StreamDelta",
    "StreamReasoningDelta",
    "StreamTextDelta",
    "ToolCallDelta",
]
