"""A one-line :class:`~textual.widgets.Input` whose editing keys keep their order with typed text.

Textual's ``Input`` inserts a printable key in its own key handler but runs a bound key (backspace,
arrows, home/end, ctrl+k, …) only once the key event has bubbled up to the App; with keys arriving in
a burst (a fast typist, tmux ``send-keys``, a busy loop) the next characters are inserted first, so
"ab⌫c" can end as "abc" or with the cursor in the wrong place (upstream: Textualize/textual#6605).
:class:`OrderedInput` runs its own bindings inline, in order with the printable keys, as the prompt
editor does (``prompt_area.py``). Keys it does not bind still bubble to the app's bindings."""

from __future__ import annotations

from textual import events
from textual.app import App, ComposeResult
from textual.widgets import Input, Static


class OrderedInput(Input):
    """An Input whose bound keys run in order with typed text (see the module docstring)."""

    async def _on_key(self, event: events.Key) -> None:
        # Runs before Input._on_key (MRO dispatch); prevent_default() skips it for keys handled here.
        if event.is_printable or not await self._run_own_binding(event.key):
            return
        event.stop()
        event.prevent_default()

    async def _run_own_binding(self, key: str) -> bool:
        """Run this input's binding for ``key`` now; False when it has none or its action declined."""
        for binding in self._bindings.key_to_bindings.get(key, ()):
            if await self.app.run_action(binding.action, self):
                return True
        return False


class Demo(App[None]):
    """An ordered input; what was submitted shows below it."""

    def compose(self) -> ComposeResult:
        yield OrderedInput(placeholder="type fast, with backspaces and arrows")
        yield Static("", id="out", markup=False)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.query_one("#out", Static).update(f"submitted: {event.value}")


if __name__ == "__main__":
    Demo().run()
