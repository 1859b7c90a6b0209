"""Budgets in the TUI: the panel's spend label, the meters, ``/budget`` and the budget inbox rows
(``hooks``). The bar of a session held at a budget is ``ui/widgets/budget_bar.py`` (the session
panel and the inbox show it)."""
