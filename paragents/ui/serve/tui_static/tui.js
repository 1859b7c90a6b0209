// paragents serve --tui: start textual-serve's terminal with a one-time websocket ticket. The page is
// static (nothing in it comes from the request); the browser token from pairing (this origin's
// localStorage) buys the ticket, since a websocket cannot carry a header.
"use strict";

(async () => {
  const terminal = document.getElementById("terminal");
  const say = (text) => { document.getElementById("intro-text").textContent = text; };
  document.getElementById("restart").addEventListener("click", () => location.reload());
  const size = parseInt(new URLSearchParams(location.search).get("fontsize") || "16", 10);
  terminal.dataset.fontSize = String(size >= 6 && size <= 64 ? size : 16);
  const token = localStorage.getItem("paragents.token");
  if (!token) {
    say("This browser is not paired with paragents: run `paragents pair` (or /pair in the app) and open its link.");
    return;
  }
  let ticket = null;
  try {
    const response = await fetch("/ws-ticket", {
      method: "POST", credentials: "omit", cache: "no-store", headers: { "X-Paragents-Session": token },
    });
    let data = null;
    try { data = await response.json(); } catch (e) { data = null; }
    if (!response.ok || !data || !data.ticket) {
      say(data && data.error ? data.error.message : "HTTP " + response.status);
      return;
    }
    ticket = data.ticket;
  } catch (e) {
    say("could not reach paragents: " + e.message);
    return;
  }
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  terminal.dataset.sessionWebsocketUrl = scheme + "//" + location.host + "/tui/ws/" + encodeURIComponent(ticket);
  const script = document.createElement("script");
  script.src = "/tui/static/js/textual.js";
  script.onload = () => {
    // textual.js starts from window.onload: call it when the load event has already gone by (a
    // script added before it delays it, and the browser calls the handler itself)
    if (document.readyState === "complete" && typeof window.onload === "function") window.onload(new Event("load"));
  };
  document.head.appendChild(script);
})();
