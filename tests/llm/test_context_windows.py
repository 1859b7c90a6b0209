"""Reading a model's context window from what the server says (setup uses it)."""

from __future__ import annotations

from paragents.llm.stream import parse_context_windows, parse_props_context


def test_models_entries_say_their_context_window_in_the_fields_servers_use() -> None:
    body = {
        "data": [
            {"id": "vllm-model", "max_model_len": 131072},
            {"id": "openrouter/model", "context_length": 200000},
            {"id": "lmstudio", "max_context_length": 32768},
            {"id": "llama", "meta": {"n_ctx_train": 131072}},  # trained with, not run with
            {"id": "silent"},
            {"id": "bad", "context_length": "lots"},
            {"id": "bool", "context_length": True},
        ]
    }
    assert parse_context_windows(body) == {
        "vllm-model": 131072,
        "openrouter/model": 200000,
        "lmstudio": 32768,
    }
    assert parse_context_windows("not json") == {} and parse_context_windows({"data": "x"}) == {}


def test_llama_cpp_props_say_the_context_it_runs_with() -> None:
    assert parse_props_context({"default_generation_settings": {"n_ctx": 4096}}) == 4096
    assert parse_props_context({"n_ctx": 8192}) == 8192
    assert parse_props_context({"detail": "Not Found"}) is None and parse_props_context(None) is None
