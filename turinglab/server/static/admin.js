// turinglab admin: reload the live part of the page (#live) every few seconds, without a full
// page reload (scroll position and open links stay). The server renders and escapes everything.
"use strict";
(function () {
  const box = document.getElementById("live"), stamp = document.getElementById("refreshed");
  if (!box) return;
  async function refresh() {
    try {
      const r = await fetch(location.href, { credentials: "same-origin", cache: "no-store" });
      if (!r.ok) return;
      const doc = new DOMParser().parseFromString(await r.text(), "text/html");
      const fresh = doc.getElementById("live");
      if (fresh) box.replaceChildren(...Array.from(fresh.childNodes).map((n) => document.importNode(n, true)));
      if (stamp) stamp.textContent = "Updated " + new Date().toLocaleTimeString() + ".";
    } catch (e) { /* the server is away: try again next time */ }
  }
  setInterval(refresh, 3000);
})();
