"""Numbered schema migrations of the SQLite store, and the code that applies them.

``MIGRATIONS[i]`` is the SQL script that brings the schema from version ``i`` to ``i + 1``; the
version reached is kept in the one-row table ``schema_version``. Append new scripts at the end;
never edit a released one. Each migration runs in its own ``BEGIN IMMEDIATE`` transaction which
first re-reads the version, so two processes opening the same file at once never both apply it.

Times are unix seconds (REAL); ids of sessions and conversations are uuid4 hex text; JSON columns
hold UTF-8 JSON text and are checked with ``json_valid``.
"""

from __future__ import annotations

import contextlib
import sqlite3

import aiosqlite

MIGRATIONS: list[str] = [
    # 1: initial schema
    """
    CREATE TABLE sessions (
        id                 TEXT PRIMARY KEY,
        name               TEXT NOT NULL CHECK (name <> ''),
        project_dir        TEXT NOT NULL,
        workdir            TEXT NOT NULL,
        model              TEXT NOT NULL,
        mode               TEXT NOT NULL DEFAULT 'default',
        state              TEXT NOT NULL DEFAULT 'idle',
        is_open            INTEGER NOT NULL DEFAULT 1 CHECK (is_open IN (0, 1)),
        position           INTEGER NOT NULL DEFAULT 0,
        conversation_id    TEXT,
        pid                INTEGER,
        created_at         REAL NOT NULL,
        updated_at         REAL NOT NULL,
        prompt_tokens      INTEGER NOT NULL DEFAULT 0,
        completion_tokens  INTEGER NOT NULL DEFAULT 0,
        total_tokens       INTEGER NOT NULL DEFAULT 0,
        last_prompt_tokens INTEGER NOT NULL DEFAULT 0,
        session_rules      TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(session_rules)),
        UNIQUE (project_dir, name)
    );

    CREATE TABLE conversations (
        id          TEXT PRIMARY KEY,
        session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        created_at  REAL NOT NULL,
        title       TEXT
    );
    CREATE INDEX conversations_session ON conversations(session_id, created_at);

    CREATE TABLE turns (
        id              INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id      TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        conversation_id TEXT REFERENCES conversations(id) ON DELETE SET NULL,
        prompt          TEXT NOT NULL,
        status          TEXT NOT NULL DEFAULT 'running'
                        CHECK (status IN ('running', 'completed', 'failed', 'cancelled', 'interrupted')),
        error           TEXT,
        started_at      REAL NOT NULL,
        finished_at     REAL,
        pid             INTEGER
    );
    CREATE INDEX turns_session ON turns(session_id, id);
    CREATE INDEX turns_running ON turns(status) WHERE status = 'running';

    CREATE TABLE messages (
        id              INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id      TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        turn_id         INTEGER REFERENCES turns(id) ON DELETE SET NULL,
        seq             INTEGER NOT NULL,
        role            TEXT NOT NULL,
        message_json    TEXT NOT NULL CHECK (json_valid(message_json)),
        complete        INTEGER NOT NULL DEFAULT 1 CHECK (complete IN (0, 1)),
        created_at      REAL NOT NULL,
        tokens          INTEGER
    );
    CREATE INDEX messages_conversation ON messages(conversation_id, seq, id);
    CREATE INDEX messages_session ON messages(session_id, id);

    CREATE TABLE usage (
        id                INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id        TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        turn_id           INTEGER REFERENCES turns(id) ON DELETE SET NULL,
        model             TEXT NOT NULL,
        prompt_tokens     INTEGER NOT NULL,
        completion_tokens INTEGER NOT NULL,
        total_tokens      INTEGER NOT NULL,
        estimated         INTEGER NOT NULL DEFAULT 0 CHECK (estimated IN (0, 1)),
        created_at        REAL NOT NULL
    );
    CREATE INDEX usage_session ON usage(session_id, id);

    CREATE TABLE audit (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        tool        TEXT NOT NULL,
        input_json  TEXT NOT NULL CHECK (json_valid(input_json)),
        decision    TEXT NOT NULL,
        reason      TEXT,
        rule        TEXT,
        scope       TEXT,
        answered_by TEXT NOT NULL CHECK (answered_by IN ('policy', 'user', 'headless')),
        answer      TEXT,
        created_at  REAL NOT NULL
    );
    CREATE INDEX audit_session ON audit(session_id, id);

    CREATE TABLE events (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        kind        TEXT NOT NULL,
        data_json   TEXT NOT NULL CHECK (json_valid(data_json)),
        created_at  REAL NOT NULL
    );
    CREATE INDEX events_session ON events(session_id, kind, id);

    CREATE TABLE reservations (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        turn_id     INTEGER REFERENCES turns(id) ON DELETE CASCADE,
        path        TEXT NOT NULL,
        kind        TEXT NOT NULL,
        reason      TEXT,
        pid         INTEGER,
        created_at  REAL NOT NULL
    );
    CREATE INDEX reservations_session ON reservations(session_id);
    CREATE INDEX reservations_path ON reservations(path);

    CREATE TABLE notes (
        id          INTEGER PRIMARY KEY AUTOINCREMENT,
        project_dir TEXT NOT NULL,
        session_id  TEXT REFERENCES sessions(id) ON DELETE CASCADE,
        text        TEXT NOT NULL,
        author      TEXT NOT NULL,
        created_at  REAL NOT NULL
    );
    CREATE INDEX notes_project ON notes(project_dir, session_id);
    """,
    # 2: compaction records (the summary that replaces the older part of a conversation in requests)
    """
    CREATE TABLE compactions (
        id              INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id      TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        upto_message_id INTEGER NOT NULL,
        summary         TEXT NOT NULL,
        created_at      REAL NOT NULL
    );
    CREATE INDEX compactions_conversation ON compactions(conversation_id, id);
    """,
    # 3: one live writer per session (holders), a history revision per session, tool-result outcomes
    """
    CREATE TABLE session_holders (
        session_id  TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
        pid         INTEGER NOT NULL,
        host        TEXT NOT NULL,
        started_at  REAL NOT NULL,
        heartbeat   REAL NOT NULL
    );

    ALTER TABLE sessions ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;

    ALTER TABLE messages ADD COLUMN outcome TEXT CHECK (outcome IS NULL
        OR outcome IN ('ok', 'error', 'denied', 'cancelled', 'interrupted', 'skipped'));

    UPDATE messages SET outcome = CASE
        WHEN json_extract(message_json, '$.content') LIKE 'interrupted:%' THEN 'interrupted'
        WHEN json_extract(message_json, '$.content') LIKE 'cancelled:%' THEN 'cancelled'
        WHEN json_extract(message_json, '$.content') LIKE 'denied %' THEN 'denied'
        WHEN json_extract(message_json, '$.content') LIKE 'error%' THEN 'error'
        ELSE 'ok' END
    WHERE role = 'tool';

    CREATE TRIGGER messages_bump_revision AFTER INSERT ON messages BEGIN
        UPDATE sessions SET revision = revision + 1 WHERE id = NEW.session_id;
    END;

    CREATE TRIGGER compactions_bump_revision AFTER INSERT ON compactions BEGIN
        UPDATE sessions SET revision = revision + 1 WHERE id = NEW.session_id;
    END;

    CREATE TRIGGER conversation_bump_revision AFTER UPDATE OF conversation_id ON sessions
    WHEN OLD.conversation_id IS NOT NEW.conversation_id BEGIN
        UPDATE sessions SET revision = revision + 1 WHERE id = NEW.id;
    END;
    """,
    # 4: lanes (a git worktree per session) and their port blocks
    """
    CREATE TABLE lanes (
        id           INTEGER PRIMARY KEY AUTOINCREMENT,
        repo         TEXT NOT NULL,
        name         TEXT NOT NULL CHECK (name <> ''),
        path         TEXT NOT NULL UNIQUE,
        branch       TEXT NOT NULL,
        base_ref     TEXT NOT NULL,
        base_commit  TEXT NOT NULL,
        port_base    INTEGER NOT NULL UNIQUE,
        port_count   INTEGER NOT NULL DEFAULT 10,
        lockfiles    TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(lockfiles)),
        setup_state  TEXT NOT NULL DEFAULT 'creating'
                     CHECK (setup_state IN ('creating', 'setup', 'ready', 'failed')),
        setup_output TEXT NOT NULL DEFAULT '',
        session_id   TEXT REFERENCES sessions(id) ON DELETE SET NULL,
        created_at   REAL NOT NULL,
        UNIQUE (repo, name)
    );
    CREATE INDEX lanes_session ON lanes(session_id);
    """,
    # 5: pending approvals and conflict decisions, answerable from any process
    """
    CREATE TABLE approvals (
        id          TEXT PRIMARY KEY,
        session_id  TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        turn_id     INTEGER REFERENCES turns(id) ON DELETE SET NULL,
        kind        TEXT NOT NULL CHECK (kind IN ('approval', 'conflict')),
        tool        TEXT NOT NULL,
        call_json   TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(call_json)),
        summary     TEXT NOT NULL,
        reason      TEXT NOT NULL DEFAULT '',
        preview     TEXT NOT NULL DEFAULT '',
        rules       TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(rules)),
        choices     TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(choices)),
        pid         INTEGER,
        host        TEXT,
        created_at  REAL NOT NULL,
        expires_at  REAL,
        state       TEXT NOT NULL DEFAULT 'pending'
                    CHECK (state IN ('pending', 'answered', 'expired', 'closed')),
        answer      TEXT,
        answered_by TEXT,
        answered_at REAL,
        note        TEXT
    );
    CREATE INDEX approvals_pending ON approvals(state, created_at) WHERE state = 'pending';
    CREATE INDEX approvals_session ON approvals(session_id, created_at);
    """,
    # 6: the last verify result of each lane (the commit and tree it ran on, exit code, output tail)
    """
    CREATE TABLE lane_verify (
        lane_id     INTEGER PRIMARY KEY REFERENCES lanes(id) ON DELETE CASCADE,
        command     TEXT NOT NULL,
        commit_id   TEXT NOT NULL,
        tree        TEXT NOT NULL,
        exit_code   INTEGER NOT NULL,
        output_tail TEXT NOT NULL DEFAULT '',
        finished_at REAL NOT NULL
    );
    """,
    # 7: the HTTP API's access log and one-time pairing codes (paragents serve / pair)
    """
    CREATE TABLE api_access (
        id         INTEGER PRIMARY KEY AUTOINCREMENT,
        at         REAL NOT NULL,
        remote     TEXT NOT NULL,
        method     TEXT NOT NULL,
        path       TEXT NOT NULL,
        status     INTEGER NOT NULL,
        principal  TEXT NOT NULL DEFAULT '',
        note       TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX api_access_at ON api_access(at);
    CREATE TABLE pairing_codes (
        code_hash  TEXT PRIMARY KEY,
        created_at REAL NOT NULL,
        expires_at REAL NOT NULL,
        used_at    REAL
    );
    """,
    # 8: budgets kept across restarts, cost and cached tokens per request, turn run time
    """
    ALTER TABLE usage ADD COLUMN cached_tokens INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE usage ADD COLUMN cost_usd REAL;
    ALTER TABLE turns ADD COLUMN run_seconds REAL;

    CREATE TABLE session_budgets (
        session_id  TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
        budget_json TEXT NOT NULL CHECK (json_valid(budget_json)),
        updated_at  REAL NOT NULL
    );

    CREATE TABLE project_budgets (
        project_dir TEXT PRIMARY KEY,
        budget_json TEXT NOT NULL CHECK (json_valid(budget_json)),
        updated_at  REAL NOT NULL
    );
    CREATE INDEX usage_created ON usage(created_at);
    CREATE INDEX turns_started ON turns(started_at);
    """,
    # 9: fan-out groups and their candidates (the evidence), and the
    # optional group of a session
    """
    CREATE TABLE fanout_groups (
        id           TEXT PRIMARY KEY,
        kind         TEXT NOT NULL CHECK (kind IN ('best_of', 'split', 'review')),
        project_dir  TEXT NOT NULL,
        name         TEXT NOT NULL CHECK (name <> ''),
        prompt       TEXT NOT NULL,
        base_ref     TEXT,
        base_commit  TEXT,
        verify       TEXT,
        settings     TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(settings)),
        state        TEXT NOT NULL DEFAULT 'running',
        judge        TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(judge)),
        choice       TEXT CHECK (choice IS NULL OR json_valid(choice)),
        created_at   REAL NOT NULL,
        finished_at  REAL
    );
    CREATE INDEX fanout_groups_project ON fanout_groups(project_dir, created_at);

    CREATE TABLE fanout_candidates (
        group_id     TEXT NOT NULL REFERENCES fanout_groups(id) ON DELETE CASCADE,
        idx          INTEGER NOT NULL,
        session_id   TEXT REFERENCES sessions(id) ON DELETE SET NULL,
        session_name TEXT NOT NULL,
        model        TEXT NOT NULL,
        lane         TEXT,
        lane_path    TEXT,
        branch       TEXT,
        state        TEXT NOT NULL DEFAULT 'running',
        verify       TEXT CHECK (verify IS NULL OR json_valid(verify)),
        evidence     TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(evidence)),
        patch        TEXT,
        PRIMARY KEY (group_id, idx)
    );
    CREATE INDEX fanout_candidates_session ON fanout_candidates(session_id);

    ALTER TABLE sessions ADD COLUMN group_id TEXT;
    """,
    # 10: external ACP agents: the agent a session runs and the agent's own session id
    """
    CREATE TABLE agent_sessions (
        session_id  TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
        agent       TEXT NOT NULL CHECK (agent <> ''),
        remote_id   TEXT,
        created_at  REAL NOT NULL
    );
    """,
    # 11: project-wide decisions (/decide) and notes between sessions (message_session)
    """
    CREATE TABLE decisions (
        id          INTEGER PRIMARY KEY,
        project_dir TEXT NOT NULL,
        text        TEXT NOT NULL CHECK (text <> ''),
        author      TEXT NOT NULL,
        created_at  REAL NOT NULL
    );
    CREATE INDEX decisions_project ON decisions(project_dir, id);
    CREATE TABLE session_messages (
        id           INTEGER PRIMARY KEY,
        project_dir  TEXT NOT NULL,
        to_session   TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        from_name    TEXT NOT NULL,
        text         TEXT NOT NULL CHECK (text <> ''),
        created_at   REAL NOT NULL,
        delivered_at REAL
    );
    CREATE INDEX session_messages_pending ON session_messages(to_session, id) WHERE delivered_at IS NULL;
    """,
    # 12: what was typed but not sent (the prompt box's draft, prompts still queued), per session
    """
    CREATE TABLE drafts (
        session_id  TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
        text        TEXT NOT NULL DEFAULT '',
        queued      TEXT NOT NULL DEFAULT '[]',
        updated_at  REAL NOT NULL
    );
    """,
    # 13: the cumulative cost an external ACP agent last reported for its session
    # (usage_update.cost), so the next turn's delta is right after session/load
    """
    ALTER TABLE agent_sessions ADD COLUMN reported_cost REAL;
    """,
    # 13 -> 14: the tree of a lane's work when it landed on its target (lanes/merge.py): the
    # predictor no longer checks a landed lane against its own landed work (issue 27)
    """
    ALTER TABLE lanes ADD COLUMN landed_tree TEXT;
    """,
    # 15: who answered an ask, in the audit log (a person's terminal, the CLI with its pid and
    # terminal, the web API with its credential and client; issue 25)
    """
    ALTER TABLE audit ADD COLUMN answerer TEXT;
    """,
    # 15 -> 16: where a lane runs (local, container, kubernetes; issue 31, docs/remote.md): a remote
    # lane's worktree mirrors its files, its container/Pod is removed with it
    """
    ALTER TABLE lanes ADD COLUMN backend TEXT NOT NULL DEFAULT 'local';
    """,
    # 16 -> 17: a holder's process start time (/proc/PID/stat), so a reused pid is not taken for
    # the holder; how each tool call was shown while it ran (its summary, sandboxed; ``later``: its
    # announcing message is stored after the row, as an external agent's turn is), for restored
    # transcripts (issue 30)
    """
    ALTER TABLE session_holders ADD COLUMN proc_start INTEGER;

    CREATE TABLE tool_rows (
        id             INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id     TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        call_id        TEXT NOT NULL,
        after_message  INTEGER NOT NULL,
        summary        TEXT NOT NULL,
        sandboxed      INTEGER CHECK (sandboxed IS NULL OR sandboxed IN (0, 1)),
        later          INTEGER NOT NULL DEFAULT 0 CHECK (later IN (0, 1)),
        created_at     REAL NOT NULL
    );
    CREATE INDEX tool_rows_session ON tool_rows(session_id, id);
    """,
]
"""The migration scripts, oldest first; ``len(MIGRATIONS)`` is the current schema version."""

SCHEMA_VERSION = len(MIGRATIONS)
"""The schema version this code writes."""

TABLES: tuple[str, ...] = (
    "sessions",
    "conversations",
    "turns",
    "messages",
    "usage",
    "audit",
    "events",
    "reservations",
    "notes",
    "compactions",
    "lanes",
    "approvals",
    "lane_verify",
    "session_budgets",
    "project_budgets",
    "fanout_groups",
    "fanout_candidates",
    "agent_sessions",
    "drafts",
)
"""Data tables in an order where every referenced row comes before the rows that reference it."""


def split_statements(script: str) -> list[str]:
    """Split an SQL script into complete statements (uses ``sqlite3.complete_statement``).

    Needed because ``executescript`` commits any open transaction first, which would break the
    one-transaction-per-migration rule. Returns the statements without surrounding blank space."""
    statements: list[str] = []
    buf = ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            if buf.strip():
                statements.append(buf.strip())
            buf = ""
    if buf.strip():
        statements.append(buf.strip())
    return statements


async def rollback_quietly(db: aiosqlite.Connection) -> None:
    """Roll back the open transaction of ``db``, if any; never raises (used on error paths)."""
    with contextlib.suppress(sqlite3.Error, ValueError):
        if db.in_transaction:
            await db.execute("ROLLBACK")


async def current_version(db: aiosqlite.Connection) -> int:
    """Return the schema version recorded in ``db`` (0 for a new, empty database)."""
    async with db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
    ) as cur:
        if await cur.fetchone() is None:
            return 0
    async with db.execute("SELECT MAX(version) FROM schema_version") as cur:
        row = await cur.fetchone()
    return int(row[0]) if row and row[0] is not None else 0


async def apply_migrations(db: aiosqlite.Connection) -> int:
    """Bring ``db`` (an autocommit connection) up to :data:`SCHEMA_VERSION`; return the version.

    Each step runs in ``BEGIN IMMEDIATE`` and re-checks the version inside the transaction.
    Raises sqlite3.OperationalError when the database is busy beyond its ``busy_timeout`` (the
    caller retries) and a ``ValueError`` when the file was written by a newer paragents."""
    for target in range(1, SCHEMA_VERSION + 1):
        await db.execute("BEGIN IMMEDIATE")
        try:
            await db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            version = await current_version(db)
            if version >= target:
                await db.execute("COMMIT")
                continue
            for statement in split_statements(MIGRATIONS[target - 1]):
                await db.execute(statement)
            await db.execute("DELETE FROM schema_version")
            await db.execute("INSERT INTO schema_version (version) VALUES (?)", (target,))
            await db.execute("COMMIT")
        except BaseException:
            await rollback_quietly(db)
            raise
    version = await current_version(db)
    if version > SCHEMA_VERSION:
        raise ValueError(
            f"the database has schema version {version} but this paragents knows only up to "
            f"{SCHEMA_VERSION}: upgrade paragents"
        )
    return version
