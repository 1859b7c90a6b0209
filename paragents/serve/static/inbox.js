// paragents phone inbox. Every piece of text from the server (model output, commands, file names,
// errors) goes into the page with textContent or createTextNode, never as HTML.
// The browser token (from pairing) lives in this origin's localStorage and goes in a header: never a
// cookie, which every other server on this host name would receive (cookies ignore ports).
"use strict";

const $ = (id) => document.getElementById(id);
const ARM_MS = 6000; // a destructive command's first tap arms its Allow button for this long
const TOKEN_KEY = "paragents.token";
const TOKEN_HEADER = "X-Paragents-Session";

function authHeaders() {
  const token = localStorage.getItem(TOKEN_KEY);
  return token ? { [TOKEN_HEADER]: token } : {};
}

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

async function api(path, body) {
  const options = { credentials: "omit", cache: "no-store", headers: authHeaders() };
  if (body !== undefined) {
    options.method = "POST";
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await fetch(path, options);
  let data = null;
  try { data = await response.json(); } catch (e) { data = null; }
  if (!response.ok) {
    const message = data && data.error ? data.error.message : "HTTP " + response.status;
    const error = new Error(message);
    error.status = response.status;
    throw error;
  }
  return data;
}

function age(since) {
  if (!since) return "";
  const s = Math.max(0, Math.round(Date.now() / 1000 - since));
  if (s < 60) return s + " s ago";
  if (s < 3600) return Math.round(s / 60) + " min ago";
  return Math.round(s / 3600) + " h ago";
}

// Characters a browser does not draw as themselves (C0/C1 controls but newline and tab, DEL, and
// invisible format characters: zero-width, bidi overrides, tags), drawn as visible symbols exactly as
// paragents.terminal_text.show_controls does: ESC as "\u241b", BEL as "\u2407", U+202E as "<U+202E>".
// What the page shows of a call is what will run.
const HIDDEN = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\u{e0000}-\u{e007f}]/gu;

function visible(text) {
  return text.replace(HIDDEN, (ch) => {
    const code = ch.codePointAt(0);
    if (code < 0x20) return String.fromCharCode(0x2400 + code);
    if (code === 0x7f) return "\u2421";
    return "<U+" + code.toString(16).toUpperCase().padStart(4, "0") + ">";
  });
}

function textBlock(text, diff) {
  const pre = el("pre", "preview");
  for (const raw of text.split("\n")) {
    const line = visible(raw);
    const cls = diff && line.startsWith("+") && !line.startsWith("+++") ? "add"
      : diff && line.startsWith("-") && !line.startsWith("---") ? "del" : null;
    pre.appendChild(cls ? el("span", cls, line) : document.createTextNode(line));
    pre.appendChild(document.createTextNode("\n"));
  }
  return pre;
}

function previewBlocks(item) {
  // What the ask will do, never less than the server holds: a command whole (scrollable), else the
  // preview, saying plainly what it leaves out, with a button that opens the whole call.
  const p = item.preview;
  const out = [];
  if (typeof item.command === "string") {
    const lines = item.command.split("\n").length;
    out.push(el("div", "why", "The whole command (" + item.size + ")" + (lines > 12 ? ": scroll to read it all" : "")));
    out.push(textBlock(item.command, false));
    return out;
  }
  if (p && p.text) out.push(textBlock(p.text, p.kind === "diff"));
  if (item.not_shown) {
    const note = el("div", "cut", "Not everything is shown: " + item.not_shown + ".");
    const open = el("button", "more", "Show the whole call (" + item.size + ")");
    open.type = "button";
    open.dataset.answer = "show_all";
    open.addEventListener("click", async () => {
      open.disabled = true;
      try {
        const whole = await api("/inbox/" + encodeURIComponent(item.id) + "/call");
        const block = textBlock(whole.whole, false);
        block.classList.add("whole");
        note.replaceWith(el("div", "why", "The whole call (" + whole.size + "):"));
        open.replaceWith(block);
      } catch (e) {
        open.disabled = false;
        note.textContent = "Could not open the whole call: " + e.message;
      }
    });
    out.push(note, open);
  }
  return out;
}

function answerButton(item, card, label, answer, cls) {
  const button = el("button", cls, label);
  button.type = "button";
  button.dataset.answer = answer;
  let armedUntil = 0;
  button.addEventListener("click", () => {
    if (item.destructive && answer.startsWith("allow") && Date.now() > armedUntil) {
      armedUntil = Date.now() + ARM_MS;
      button.classList.add("armed");
      button.textContent = "Tap again to allow";
      setTimeout(() => { button.classList.remove("armed"); button.textContent = label; }, ARM_MS);
      return;
    }
    if (answer === "reject_with_note") { showNote(item, card); return; }
    send(item, card, answer, null);
  });
  return button;
}

function showNote(item, card) {
  if (card.querySelector(".note")) return;
  const box = el("div", "note");
  const area = el("textarea");
  area.placeholder = "Tell the agent what to do instead";
  area.maxLength = 2000;
  const ok = el("button", "deny", "Send denial with note");
  ok.type = "button";
  ok.dataset.answer = "send_note";
  ok.addEventListener("click", () => {
    if (area.value.trim()) send(item, card, "reject_with_note", area.value.trim());
  });
  box.append(area, ok);
  card.querySelector(".buttons").appendChild(box);
  area.focus();
}

async function send(item, card, answer, note) {
  const body = note === null ? { answer } : { answer, note };
  await post(card, "/inbox/" + encodeURIComponent(item.id) + "/answer", body);
}

async function post(card, path, body) {
  for (const b of card.querySelectorAll("button")) b.disabled = true;
  const error = card.querySelector(".error");
  error.textContent = "";
  try {
    await api(path, body);
    card.classList.add("done");
    card.dataset.state = "answered";
  } catch (e) {
    error.textContent = e.message;
    if (e.status !== 409) for (const b of card.querySelectorAll("button")) b.disabled = false;
  }
  scheduleRefresh(0);
}

// A conflict's answers, as the terminal's conflict bar offers them (the item's ``choices``).
const CONFLICT_LABELS = { wait: "Wait", run_anyway: "Run anyway", skip: "Skip", reread: "Re-read first" };

function plainButton(label, answer, cls, onClick) {
  const button = el("button", cls, label);
  button.type = "button";
  button.dataset.answer = answer;
  button.addEventListener("click", onClick);
  return button;
}

function conflictCard(item, card) {
  const path = "/conflicts/" + encodeURIComponent(item.id) + "/answer";
  if (item.holder) card.appendChild(el("div", "why", "Held by " + item.holder + (item.holder_reason ? ": " + item.holder_reason : "")));
  else if (item.holder_reason) card.appendChild(el("div", "why", item.holder_reason));
  if (item.process) card.appendChild(el("div", "why", "Waits in another paragents process (pid " + item.process + ")."));
  if (item.diff) card.appendChild(textBlock(item.diff, true));
  const buttons = el("div", "buttons");
  for (const choice of item.choices) {
    if (!(choice in CONFLICT_LABELS)) continue;
    const cls = choice === "skip" ? "deny" : "allow";
    buttons.appendChild(plainButton(CONFLICT_LABELS[choice], choice, cls, () => post(card, path, { answer: choice })));
  }
  card.append(buttons, el("div", "error"));
  return card;
}

function pauseCard(item, card) {
  const path = "/pauses/" + encodeURIComponent(item.id) + "/answer";
  const loop = item.level === "loop";
  card.appendChild(el("div", "why", loop ? "Loop guard: the session is held before its next request."
    : "Budget (" + item.level + "): " + item.spent + " of " + item.cap + ". The session is held before its next request."));
  const buttons = el("div", "buttons");
  if (!loop) {
    buttons.appendChild(plainButton("Raise to…", "raise", "allow", () => showRaise(card, path)));
  }
  buttons.append(
    plainButton(loop ? "Go on" : "Allow one more request", "one_more", "allow", () => post(card, path, { answer: "one_more" })),
    plainButton("Stop", "stop", "deny", () => post(card, path, { answer: "stop" })),
  );
  card.append(buttons, el("div", "error"));
  return card;
}

function showRaise(card, path) {
  if (card.querySelector(".note")) return;
  const box = el("div", "note");
  const input = el("input");
  input.type = "text";
  input.placeholder = "The new cap, e.g. 5usd or 500k";
  input.maxLength = 100;
  const ok = plainButton("Raise", "send_raise", "allow", () => {
    if (input.value.trim()) post(card, path, { answer: "raise", value: input.value.trim() });
  });
  box.append(input, ok);
  card.querySelector(".buttons").appendChild(box);
  input.focus();
}

function itemCard(item) {
  const card = el("article", "card");
  card.dataset.id = item.id;
  const head = el("div", "head");
  head.append(el("span", "session", item.session_name), el("span", "age", age(item.since)));
  card.appendChild(head);
  card.appendChild(el("div", "summary", item.summary));
  if (item.kind === "conflict") return conflictCard(item, card);
  if (item.kind === "pause") return pauseCard(item, card);
  if (item.kind !== "approval") return card;
  if (item.destructive) {
    const why = item.destructive_reason || "it deletes or overwrites files";
    card.appendChild(el("div", "danger", "Destructive (" + why + "): Allow needs a second tap."));
  }
  if (item.preview && item.preview.detail) card.appendChild(el("div", "why", item.preview.detail));
  if (item.preview && item.preview.cwd) card.appendChild(el("div", "why", "in " + item.preview.cwd));
  for (const block of previewBlocks(item)) card.appendChild(block);
  if (item.preview && item.preview.problem) card.appendChild(el("div", "error", item.preview.problem));
  card.appendChild(el("div", "why", item.rule ? "rule: " + item.rule : item.reason));
  const buttons = el("div", "buttons");
  buttons.append(
    answerButton(item, card, "Allow once", "allow_once", "allow"),
    answerButton(item, card, "Allow for session", "allow_session", "allow"),
    answerButton(item, card, "Deny", "reject_once", "deny"),
    answerButton(item, card, "Deny with note…", "reject_with_note", "deny"),
  );
  card.appendChild(buttons);
  card.appendChild(el("div", "error"));
  return card;
}

function sessionRow(s) {
  const row = el("article", "session-row");
  row.dataset.id = s.id;
  const top = el("div", "top");
  top.append(el("span", "session", s.name), el("span", "state " + s.state, s.state + (s.pending ? " · " + s.pending + " waiting" : "")));
  row.appendChild(top);
  if (s.last_lines && s.last_lines.length) row.appendChild(el("pre", null, s.last_lines.join("\n")));
  return row;
}

function renderInbox(items) {
  const box = $("inbox");
  const open = new Map([...box.querySelectorAll(".card")].map((c) => [c.dataset.id, c]));
  const keep = new Set(items.map((i) => i.id));
  for (const [id, card] of open) if (!keep.has(id)) card.remove();
  for (const item of items) if (!open.has(item.id)) box.appendChild(itemCard(item));
  $("count").textContent = String(items.length);
  $("empty").hidden = items.length > 0;
  document.title = (items.length ? "(" + items.length + ") " : "") + "paragents · needs you";
}

function renderSessions(sessions) {
  const box = $("sessions");
  box.replaceChildren(...sessions.map(sessionRow));
  if (!sessions.length) box.appendChild(el("p", "empty", "No open sessions."));
}

let timer = null;
function scheduleRefresh(delay) {
  if (timer) clearTimeout(timer);
  timer = setTimeout(refresh, delay === undefined ? 250 : delay);
}

async function refresh() {
  timer = null;
  try {
    const [inbox, sessions] = await Promise.all([api("/inbox"), api("/sessions")]);
    $("signin").hidden = true;
    renderInbox(inbox.items);
    renderSessions(sessions.sessions);
  } catch (e) {
    if (e.status === 401) { $("signin").hidden = false; setLive(false, "not paired"); }
    else setLive(false, e.message);
  }
}

function setLive(on, text) {
  const live = $("live");
  live.className = "live " + (on ? "on" : "off");
  live.textContent = text;
}

async function listen() {
  // Server-sent events read with fetch (an EventSource cannot send the token header).
  for (;;) {
    if (!localStorage.getItem(TOKEN_KEY)) { $("signin").hidden = false; setLive(false, "not paired"); return; }
    try {
      const response = await fetch("/events", { credentials: "omit", cache: "no-store", headers: authHeaders() });
      if (response.status === 401) { $("signin").hidden = false; setLive(false, "not paired"); return; }
      if (!response.ok || !response.body) throw new Error("HTTP " + response.status);
      setLive(true, "live");
      scheduleRefresh(0);
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          if (/^(event|data):/m.test(block)) scheduleRefresh();
        }
      }
    } catch (e) { /* reconnect below */ }
    setLive(false, "reconnecting…");
    await new Promise((resolve) => setTimeout(resolve, 3000));
  }
}

refresh();
listen();
setInterval(() => scheduleRefresh(0), 30000); // ages and anything an event missed
