"""The permission layer: one ``Policy.decide()`` answers allow / ask / deny for every tool call.

Rules use Claude Code's ``permissions`` syntax and files (a Claude Code block pastes in unchanged).
Modules: ``rules`` (grammar, matching), ``shell`` (tree-sitter-bash: simple commands, redirects,
wrappers), ``commands`` (what known commands read/write), ``special`` (Claude Code's documented Bash
special cases), ``resolve`` (path resolutions, protected paths), ``settings`` (files), ``evaluate``
(per-part checks, modes), ``policy`` (scopes, decide).
"""

from paragents.permissions.decision import Decision, PermissionMode, RuleRow, SubDecision, parse_mode
from paragents.permissions.policy import INTERNAL_TOOLS, Policy, tool_family
from paragents.permissions.rules import Rule, parse_rule
from paragents.permissions.settings import PolicyError
from paragents.permissions.shell import parse_command
from paragents.permissions.targets import write_targets

__all__ = [
    "INTERNAL_TOOLS",
    "Decision",
    "PermissionMode",
    "Policy",
    "PolicyError",
    "Rule",
    "RuleRow",
    "SubDecision",
    "parse_command",
    "parse_mode",
    "parse_rule",
    "tool_family",
    "write_targets",
]
