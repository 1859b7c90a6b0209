"""TODO(issue 29): remove once every branch has merged (with ``Store.__getattr__``, its only user).

The methods :class:`paragents.store.Store` had while it was built from mixins, and where each went:
old name -> (repository attribute, new name). ``Store.__getattr__`` forwards an old name so a branch
written before the repositories still runs; code on ``main`` uses the repositories, and once this
table is gone mypy finds any call site left."""

MOVED: dict[str, tuple[str, str]] = {
    # sessions.py
    "create_session": ("sessions", "create"),
    "get_session": ("sessions", "get"),
    "find_session": ("sessions", "find"),
    "list_sessions": ("sessions", "all"),
    "update_session": ("sessions", "update"),
    "new_conversation": ("sessions", "new_conversation"),
    "set_conversation_title": ("sessions", "set_conversation_title"),
    "list_conversations": ("sessions", "conversations"),
    "session_state": ("sessions", "state"),
    # messages.py
    "append_message": ("messages", "append"),
    "append_late_tool_result": ("messages", "append_late_tool_result"),
    "load_messages": ("messages", "load"),
    "load_history": ("messages", "load_history"),
    "load_for_display_and_history": ("messages", "load_for_display_and_history"),
    "count_messages": ("messages", "count"),
    "session_revision": ("messages", "revision"),
    "history_mark": ("messages", "history_mark"),
    # turns.py
    "start_turn": ("turns", "start"),
    "finish_turn": ("turns", "finish"),
    "flush_unfinished_turns": ("turns", "flush_unfinished"),
    "unfinished_turns": ("turns", "unfinished"),
    "get_turn": ("turns", "get"),
    "list_turns": ("turns", "all"),
    "recover_interrupted": ("turns", "recover_interrupted"),
    "add_usage": ("turns", "add_usage"),
    "list_usage": ("turns", "list_usage"),
    "usage_by_model": ("turns", "usage_by_model"),
    # compactions.py
    "add_compaction": ("compactions", "add"),
    "latest_compaction": ("compactions", "latest"),
    "list_compactions": ("compactions", "all"),
    # holders.py
    "acquire_session": ("holders", "acquire"),
    "get_holder": ("holders", "get"),
    "renew_holds": ("holders", "renew"),
    "release_session": ("holders", "release"),
    # audit.py
    "record_decision": ("audit", "record"),
    "recent_decisions": ("audit", "recent"),
    # session_events.py
    "record_event": ("events", "record"),
    "list_events": ("events", "all"),
    # reservations.py
    "add_reservation": ("reservations", "add"),
    "release_reservations": ("reservations", "release"),
    "list_reservations": ("reservations", "all"),
    "release_dead_reservations": ("reservations", "release_dead"),
    # notes.py
    "add_note": ("notes", "add"),
    "list_notes": ("notes", "all"),
    "delete_note": ("notes", "delete"),
    # lanes.py
    "reserve_lane": ("lanes", "reserve"),
    "get_lane_by_id": ("lanes", "get_by_id"),
    "get_lane": ("lanes", "get"),
    "lane_of_session": ("lanes", "of_session"),
    "list_lanes": ("lanes", "all"),
    "update_lane": ("lanes", "update"),
    "delete_lane": ("lanes", "delete"),
    "hold_lane_ports": ("lanes", "hold_ports"),
    # lane_verify.py
    "record_verify": ("lane_verify", "record"),
    "last_verify": ("lane_verify", "last"),
    # approvals.py
    "add_approval": ("approvals", "add"),
    "get_approval": ("approvals", "get"),
    "list_approvals": ("approvals", "find"),
    "answer_approval": ("approvals", "answer"),
    "close_approval": ("approvals", "close"),
    "adopt_approval": ("approvals", "adopt"),
    "wait_approval": ("approvals", "wait"),
    "engine_processes": ("approvals", "engine_processes"),
    "orphaned_approvals": ("approvals", "orphaned"),
    # api_access.py
    "record_access": ("api_access", "record"),
    "recent_access": ("api_access", "recent"),
    "prune_access": ("api_access", "prune"),
    "add_pairing_code": ("api_access", "add_pairing_code"),
    "use_pairing_code": ("api_access", "use_pairing_code"),
    # budgets.py
    "spend_rows": ("budgets", "spend_rows"),
    "run_seconds": ("budgets", "run_seconds"),
    "get_session_budget": ("budgets", "get_session_budget"),
    "set_session_budget": ("budgets", "set_session_budget"),
    "get_project_budget": ("budgets", "get_project_budget"),
    "set_project_budget": ("budgets", "set_project_budget"),
    # fanout.py
    "create_group": ("fanout", "create_group"),
    "add_candidate": ("fanout", "add_candidate"),
    "update_candidate": ("fanout", "update_candidate"),
    "update_group": ("fanout", "update_group"),
    "add_judge_answer": ("fanout", "add_judge_answer"),
    "get_group": ("fanout", "get_group"),
    "list_groups": ("fanout", "list_groups"),
    "session_group": ("fanout", "session_group"),
    "group_usage_by_model": ("fanout", "group_usage_by_model"),
    # agent_sessions.py
    "set_agent_session": ("agent_sessions", "set"),
    "get_agent_session": ("agent_sessions", "get"),
    "set_reported_cost": ("agent_sessions", "set_reported_cost"),
    "get_reported_cost": ("agent_sessions", "get_reported_cost"),
    "add_agent_cost": ("agent_sessions", "add_cost"),
    # decisions.py
    "add_decision": ("decisions", "add"),
    "list_decisions": ("decisions", "all"),
    "add_session_message": ("decisions", "add_session_message"),
    "take_session_messages": ("decisions", "take_session_messages"),
    "list_session_messages": ("decisions", "list_session_messages"),
    # drafts.py
    "save_draft": ("drafts", "save"),
    "save_queued": ("drafts", "save_queued"),
    "get_draft": ("drafts", "get"),
}
