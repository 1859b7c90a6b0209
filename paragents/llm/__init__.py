"""The LLM layer: OpenAI-compatible streaming client, stream assembler and loopback replay server."""

from paragents.llm.client import ChatClient
from paragents.llm.errors import LLMError
from paragents.llm.replay import ReceivedRequest, ReplayServer, ThreadedReplayServer
from paragents.llm.replay_script import ScriptedResponse
from paragents.llm.stream import Delta, ReasoningDelta, StreamAssembler, TextDelta, ToolCallDelta

__all__ = [
    "ChatClient",
    "Delta",
    "LLMError",
    "ReasoningDelta",
    "ReceivedRequest",
    "ReplayServer",
    "ScriptedResponse",
    "StreamAssembler",
    "TextDelta",
    "ThreadedReplayServer",
    "ToolCallDelta",
]
