"use strict";
// The banner every page shows while the store cannot write: what the page shows is what
// was stored, and the service keeps what came in since in memory and retries.  Driven by
// GET /api/status (when the page opens and whenever a live stream (re)connects) and by the
// stream's "status" events.  Text from the server is only ever set with textContent.
const storeBanner = (() => {
  function element() {
    let el = document.getElementById("store-banner");
    if (!el) {
      el = document.createElement("div");
      el.id = "store-banner";
      el.className = "store-banner";
      el.setAttribute("role", "alert");
      el.hidden = true;
      document.body.prepend(el);
    }
    return el;
  }

  function show(status) {
    if (!status || typeof status.state !== "string") return;
    const el = element();
    const failing = status.state !== "ok";
    el.hidden = !failing;
    el.dataset.state = status.state;
    if (!failing) { el.textContent = ""; return; }
    const rows = Number.isFinite(status.unstored) ? status.unstored : 0;
    const why = typeof status.error === "string" && status.error ? " (" + status.error.slice(0, 200) + ")" : "";
    el.textContent =
      "Not stored: the service cannot write its database" + why + ". " +
      rows + " row(s) kept in memory and retried; this page shows only what is stored.";
    el.dataset.unstored = String(rows);
  }

  function check() {
    fetch("/api/status", { cache: "no-store", credentials: "same-origin" })
      .then((response) => (response.ok ? response.json() : null))
      .then((data) => { if (data && data.store) show(data.store); })
      .catch(() => {});
  }

  // Follow a live stream's status events; each (re)connection asks again.
  function follow(source) {
    source.addEventListener("status", (ev) => {
      let msg;
      try { msg = JSON.parse(ev.data); } catch (e) { return; }
      if (msg && msg.store) show(msg.store);
    });
    source.addEventListener("open", check);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", check);
  else check();
  return { show, follow, check };
})();
