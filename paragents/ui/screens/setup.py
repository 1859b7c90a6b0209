"""The setup screen (/setup and first run): endpoint, model and API key, with a connection test.

Fields: base URL; model (a Select filled from ``GET {base_url}/models`` once the server answered, a
free-text Input until then); API key (password Input, never shown again once typed) or the name of the
environment variable holding it; the model's context window (tokens): read from the server when it
says (``/models`` entries' context fields such as vLLM's ``max_model_len``, else llama.cpp's
``/props`` ``n_ctx``), else typed (digits only, at least 256); a "the model can call tools" switch
(off writes ``"tools": false`` for that model, for models or servers that answer tool specs with an
empty reply). "Test connection"
says plainly what worked or failed and preselects the model when the server lists exactly one; "Save"
refuses an empty model, writes the user config with :func:`paragents.config.save_user_config` (mode
0600) and dismisses with True; "Cancel" dismisses with False. The caller reloads the runtime's config
after a save.
"""

from __future__ import annotations

import os
from typing import Any, ClassVar

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.validation import Integer
from textual.widgets import Button, Checkbox, Footer, Input, Label, Select, Static

from paragents import paths
from paragents.config import ConfigError, RuntimeConfig, read_config_file, redact, save_user_config
from paragents.llm import ChatClient
from paragents.ui.core.text import plain
from paragents.ui.widgets.ordered_input import OrderedInput

MIN_WINDOW = 256
"""The smallest context window setup saves (paragents' own instructions take ~140 tokens, ~2,300 with
tool specs): a typo such as 5 is refused instead of failing every request."""
WINDOW_RULE = f"The context window is a whole number of tokens, at least {MIN_WINDOW}"


class WindowInput(OrderedInput):
    """The context-window field: digits only (``restrict``), at least :data:`MIN_WINDOW` (a
    validator). A refused key or paste changes nothing, rings the bell and posts :class:`Refused`, so
    setup says why instead of saving what was left of the text ("-5[b]" is not saved as 5)."""

    class Refused(Message):
        """A key or paste was refused (not a digit)."""

    def __init__(self, value: str, **kwargs: Any) -> None:
        super().__init__(
            value,
            restrict=r"[0-9]*",
            validators=[Integer(minimum=MIN_WINDOW, failure_description=WINDOW_RULE)],
            **kwargs,
        )

    def restricted(self) -> None:
        super().restricted()
        self.post_message(self.Refused())


def _existing_user_config() -> dict[str, Any]:
    path = paths.user_runtime_config_path()
    if not path.is_file():
        return {}
    try:
        return read_config_file(path)
    except ConfigError:
        return {}


class SetupScreen(Screen[bool]):
    """Edit and test the endpoint settings; ``config`` pre-fills the fields (keys are never shown)."""

    DEFAULT_CSS = """
    SetupScreen { align: center top; }
    SetupScreen > VerticalScroll { width: 100; max-width: 100%; height: auto; max-height: 100%;
        border: thick $accent; padding: 1 2; }
    SetupScreen Label { margin: 1 0 0 0; text-style: bold; }
    SetupScreen .help { color: $text-muted; }
    SetupScreen #model-select { display: none; }
    SetupScreen.-models #model-select { display: block; }
    SetupScreen.-models #model-input { display: none; }
    SetupScreen #buttons { height: auto; margin: 1 0 0 0; }
    SetupScreen #buttons Button { margin: 0 2 0 0; }
    SetupScreen #status { height: auto; margin: 1 0 0 0; }
    SetupScreen #status.-ok { color: $success; }
    SetupScreen #status.-error { color: $error; }
    SetupScreen #tools { margin: 1 0 0 0; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "save", "Save"),
    ]

    def __init__(self, config: RuntimeConfig | None = None, *, first_run: bool = False) -> None:
        super().__init__()
        self.config = config or RuntimeConfig.model_validate({})
        self.first_run = first_run
        self.models: list[str] = []
        """Model ids the server listed at the last successful test (empty before)."""
        self.windows: dict[str, int] = {}
        """Context windows the server said at the last test, by model ("": for every model)."""
        self.windows_source = ""
        """Where the server said them ("the server's /props (n_ctx)")."""
        self.asked_windows = False
        """Whether the server was asked for its context windows (Test connection, or Save before it)."""
        self.shown_window = str(self.config.model_settings().context_window)
        """The context window the field started with (the config's, 8,192 by default)."""

    def compose(self) -> ComposeResult:
        cfg = self.config
        existing_key = cfg.api_key.get_secret_value() if cfg.api_key else None
        with VerticalScroll():
            title = "Welcome to paragents: connect a model" if self.first_run else "Setup"
            yield Static(title, classes="title", markup=False)
            yield Static(
                "Any OpenAI-compatible server works (llama.cpp, vLLM, Ollama, OpenAI, …).",
                classes="help",
                markup=False,
            )
            yield Label("Base URL (up to and including /v1)")
            yield OrderedInput(cfg.base_url, placeholder="http://127.0.0.1:8080/v1", id="base-url")
            yield Label("Model")
            yield OrderedInput(cfg.model, placeholder="model name, e.g. qwen2.5-coder", id="model-input")
            yield Select[str]([], prompt="pick a model", id="model-select", allow_blank=True)
            yield Label("API key (leave empty to keep the current one / for servers without keys)")
            yield OrderedInput(
                placeholder=f"current: {redact(existing_key)}" if existing_key else "sk-…",
                password=True,
                id="api-key",
            )
            yield Label("…or the environment variable holding it")
            yield OrderedInput(cfg.api_key_env or "", placeholder="e.g. OPENAI_API_KEY", id="api-key-env")
            yield Label("Context window of the model (tokens)")
            yield WindowInput(
                self.shown_window,
                placeholder="e.g. 32768 (Test connection reads it when the server says)",
                id="context-window",
            )
            yield Checkbox(
                "The model can call tools (untick when it answers with empty replies)",
                cfg.model_settings().tools,
                id="tools",
            )
            with Horizontal(id="buttons"):
                yield Button("Test connection", id="test", variant="primary")
                yield Button("Save", id="save", variant="success")
                yield Button("Cancel", id="cancel")
            yield Static("", id="status", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#base-url", Input).focus()
        if self.app.is_headless:  # frozen cursors: deterministic screenshots in tests
            for field in self.query(Input):
                field.cursor_blink = False

    # --- values --------------------------------------------------------------------------------
    def _value(self, wid: str) -> str:
        return self.query_one(f"#{wid}", Input).value.strip()

    @property
    def model(self) -> str:
        """The chosen model: the Select's value when models were listed, else the typed name."""
        if self.has_class("-models"):
            value = self.query_one("#model-select", Select).value
            if isinstance(value, str):
                return value
        return self._value("model-input")

    def _api_key(self) -> str | None:
        typed = self._value("api-key")
        if typed:
            return typed
        env_name = self._value("api-key-env")
        if env_name:
            return os.environ.get(env_name) or None
        if self.config.api_key is not None:
            return self.config.api_key.get_secret_value()
        return os.environ.get("PARAGENTS_API_KEY") or os.environ.get("OPENAI_API_KEY") or None

    def _status(self, text: str, kind: str = "") -> None:
        status = self.query_one("#status", Static)
        status.update(text)
        status.set_class(kind == "ok", "-ok")
        status.set_class(kind == "error", "-error")
        status.scroll_visible(animate=False)  # under the fold in a short terminal: bring it up

    # --- actions -------------------------------------------------------------------------------
    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "test":
            self.test_connection()
        elif event.button.id == "save":
            self.action_save()
        elif event.button.id == "cancel":
            self.action_cancel()

    def on_window_input_refused(self, event: WindowInput.Refused) -> None:
        event.stop()
        self._status(f"{WINDOW_RULE}: only digits can be typed there (nothing else was taken).", "error")

    def on_select_changed(self, event: Select.Changed) -> None:
        if isinstance(event.value, str):
            self.query_one("#model-input", Input).value = event.value
            self.query_one("#tools", Checkbox).value = self.config.model_settings(event.value).tools
            self._show_window(event.value)

    def _show_window(self, model: str) -> None:
        """Put ``model``'s context window in its field: what the server said, else the config's."""
        said = self.windows.get(model, self.windows.get(""))
        window = said if said is not None else self.config.model_settings(model).context_window
        self.query_one("#context-window", Input).value = str(window)

    def window_note(self) -> str:
        """What setup knows of the chosen model's context window (added to the status line)."""
        said = self.windows.get(self.model, self.windows.get(""))
        if said is not None:
            return f" Context window: {said} tokens (from {self.windows_source})."
        return (
            " The server does not say the model's context window: check it and type it below "
            f"(now {self._value('context-window') or '?'} tokens)."
        )

    @work(exclusive=True, group="setup-test")
    async def test_connection(self) -> None:
        """Ask the server for its models and check the chosen one; report in plain words."""
        base_url = self._value("base-url")
        try:
            RuntimeConfig.model_validate({"base_url": base_url})
        except Exception:
            self._status("Base URL must be an http(s) URL such as http://127.0.0.1:8080/v1", "error")
            return
        env_name = self._value("api-key-env")
        if env_name and not self._value("api-key") and not os.environ.get(env_name):
            self._status(f"${env_name} is not set in this shell: export it or type the key.", "error")
            return
        self._status(f"Connecting to {base_url} …")
        client = ChatClient(base_url, self._api_key())
        try:
            ok, sentence = await client.check_connection(self.model)
            try:
                models = await client.list_models()
            except Exception:
                models = []
            self.windows, self.windows_source = await client.context_windows() if ok or models else ({}, "")
            self.asked_windows = True
        finally:
            await client.aclose()
        if models:
            self.models = models
            select = self.query_one("#model-select", Select)
            # the server's names are shown literally (a str prompt would be read as markup)
            select.set_options([(plain(m), m) for m in models])
            current = self._value("model-input")
            if current in models:
                select.value = current
            elif len(models) == 1:  # the only model the server has: nothing to choose
                select.value = models[0]
                self.query_one("#model-input", Input).value = models[0]
            self.add_class("-models")
        if ok or models:
            if self.model and (self.model in self.windows or "" in self.windows):
                self._show_window(self.model)
            sentence += self.window_note()
        self._status(("✓ " if ok else "✗ ") + sentence, "ok" if ok else "error")

    @work(exclusive=True, group="setup-save")
    async def action_save(self) -> None:
        """Validate and write the user config (0600), then dismiss with True. Saved without a test and
        with the context window as it started, the window is first read from the server when it says
        (else the config's default would be saved as if the user had typed it)."""
        if self.model and not self.asked_windows and self._value("context-window") == self.shown_window:
            await self._ask_windows()
        self._save()

    async def _ask_windows(self) -> None:
        """Ask the server in the base URL field for its context windows; show the chosen model's."""
        try:
            RuntimeConfig.model_validate({"base_url": self._value("base-url")})
        except Exception:
            return  # the save below names what is wrong
        self._status(f"Reading the model's context window from {self._value('base-url')} …")
        client = ChatClient(self._value("base-url"), self._api_key())
        try:
            self.windows, self.windows_source = await client.context_windows()
        finally:
            await client.aclose()
        self.asked_windows = True
        if self.model in self.windows or "" in self.windows:
            self._show_window(self.model)

    def _save(self) -> None:
        if not self.model:
            self._status(
                "Choose a model first: type its name, or press Test connection to list them.", "error"
            )
            self.query_one("#model-select" if self.has_class("-models") else "#model-input").focus()
            return
        field = self.query_one("#context-window", WindowInput)
        checked = field.validate(field.value.strip())
        if not field.value.strip() or (checked is not None and not checked.is_valid):
            typed = field.value.strip()
            self._status(
                f"{WINDOW_RULE} (not {typed!r}); e.g. 32768."
                if typed
                else "Type the model's context window in tokens (e.g. 32768).",
                "error",
            )
            field.focus()
            return
        window = int(field.value.strip())
        data = _existing_user_config()
        data["base_url"] = self._value("base-url")
        data["model"] = self.model
        self._set_model_entry(data, self.query_one("#tools", Checkbox).value, window)
        env_name = self._value("api-key-env")
        typed = self._value("api-key")
        if typed:
            data["api_key"] = typed
            data.pop("api_key_env", None)
        elif env_name:
            data["api_key_env"] = env_name
            data.pop("api_key", None)
        else:
            data.pop("api_key_env", None)
        try:
            path = save_user_config(data)
        except ConfigError as exc:
            self._status(str(exc), "error")
            return
        self.notify(f"Saved {path}")
        self.dismiss(True)

    def _set_model_entry(self, data: dict[str, Any], tools: bool, window: int) -> None:
        """Record the tools switch and the context window of the chosen model in ``data`` (its entry of
        ``models``); nothing is written when both are what the config already gives it."""
        models = dict(data.get("models") or {})
        entry = dict(models.get(self.model) or {})
        listed = self.model in models
        current_tools = entry.get("tools", True) if listed else data.get("tools", True)
        current_window = (
            entry.get("context_window", self.config.default_context_window)
            if listed
            else data.get("default_context_window", self.config.default_context_window)
        )
        if current_tools == tools and current_window == window:
            return  # already so (a model not listed follows the top-level settings)
        entry["context_window"] = window
        entry["tools"] = tools
        models[self.model] = entry
        data["models"] = models

    def action_cancel(self) -> None:
        """Leave without saving."""
        self.dismiss(False)


class Demo(App[None]):
    """The first-run setup screen (endpoint, model, key)."""

    def on_mount(self) -> None:
        self.push_screen(SetupScreen(first_run=True), lambda saved: self.exit())


if __name__ == "__main__":
    Demo().run()
