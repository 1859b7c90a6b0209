// paragents pairing page: trade the link's one-time code for a browser token, kept in this origin's
// localStorage (bound to this port) and sent in a header; never a cookie, which every other server
// on this host name would receive (cookies ignore ports).
"use strict";

const TOKEN_KEY = "paragents.token";

(async () => {
  const status = document.getElementById("status");
  const code = decodeURIComponent(location.pathname.slice("/pair/".length));
  history.replaceState(null, "", "/"); // the code leaves the address bar and the history
  try {
    const response = await fetch("/pair", {
      method: "POST",
      credentials: "omit",
      cache: "no-store",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ code }),
    });
    let data = null;
    try { data = await response.json(); } catch (e) { data = null; }
    if (!response.ok || !data || !data.token) {
      status.textContent = data && data.error ? data.error.message : "pairing failed: HTTP " + response.status;
      return;
    }
    localStorage.setItem(TOKEN_KEY, data.token);
    location.replace("/");
  } catch (e) {
    status.textContent = "could not reach paragents: " + e.message;
  }
})();
