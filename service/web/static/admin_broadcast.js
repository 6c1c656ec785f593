"use strict";
// The lichess broadcast panel of the admin page: per round its lichess round id, whether it
// is pushed, its delay (changed while the service runs: POST /api/admin/broadcast; the
// lichess token stays in the service's config and never reaches this page), the state of its
// pushes, the games lichess refused (with its reason) and the games kept back, and a form to
// add a round.  Loaded after admin.js, whose GET /api/broadcast every 5 s it draws (it takes
// as the renderBroadcast that admin.js calls).  Text from the server or the user only by textContent.
(function () {
  const boxes = new Map(); // round name -> {box, head, form, games}
  let adder = null;

  function adminToken() {
    try { return sessionStorage.getItem("dgt-admin-token") || ""; } catch (e) { return ""; }
  }

  function line(text) { return String(text).split("\n")[0].slice(0, 300); }

  async function send(body) {
    let response;
    try {
      response = await fetch("/api/admin/broadcast", {
        method: "POST",
        headers: { Authorization: "Bearer " + adminToken(), "Content-Type": "application/json" },
        body: JSON.stringify(body),
        cache: "no-store",
        credentials: "same-origin",
      });
    } catch (err) {
      return { ok: false, error: "the service does not answer" };
    }
    let data = null;
    try { data = await response.json(); } catch (e) { data = null; }
    if (response.ok && data) return { ok: true, data: data };
    return { ok: false, error: line(data && data.error ? data.error : "HTTP " + response.status) };
  }

  function node(tag, cls, text) {
    const n = document.createElement(tag);
    if (cls) n.className = cls;
    if (text !== undefined) n.textContent = text;
    return n;
  }

  function field(form, label, input) {
    const l = node("label", "bc-field", label + " ");
    l.appendChild(input);
    l.style.marginRight = "0.8rem";
    form.appendChild(l);
    return input;
  }

  function input(name, type, attrs) {
    const i = document.createElement("input");
    i.name = name;
    i.type = type;
    for (const [k, v] of Object.entries(attrs || {})) i.setAttribute(k, v);
    return i;
  }

  // The settings form of a round (or, without `round`, the form that adds one).
  function settingsForm(round) {
    const form = node("form", "bc-form");
    form.method = "post";
    form.style.display = "flex";
    form.style.flexWrap = "wrap";
    form.style.alignItems = "center";
    form.style.gap = "0.4rem";
    form.style.margin = "0.3rem 0";
    const fields = {};
    if (!round) fields.round = field(form, "Round", input("round", "text", { maxlength: "100", size: "6", required: "" }));
    fields.lichess_id = field(form, "lichess round id", input("lichess_id", "text", { maxlength: "8", size: "9", pattern: "[A-Za-z0-9]{8}", required: round ? null : "" }));
    if (round) fields.lichess_id.removeAttribute("required");
    fields.enabled = field(form, "pushed", input("enabled", "checkbox"));
    fields.delay = field(form, "delay (s)", input("delay", "number", { min: "0", max: "3600", step: "1", size: "5" }));
    const button = node("button", "", round ? "Save" : "Add the round");
    button.type = "submit";
    form.appendChild(button);
    const answer = node("p", "answer");
    answer.setAttribute("role", "status");
    answer.style.flexBasis = "100%";
    form.appendChild(answer);
    if (!round) { fields.enabled.checked = true; fields.delay.value = "0"; }
    form.addEventListener("input", () => { form.dataset.dirty = "1"; });
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const body = { round: round || fields.round.value.trim() };
      const id = fields.lichess_id.value.trim();
      if (id) body.lichess_id = id;
      body.enabled = fields.enabled.checked;
      const delay = Number(fields.delay.value);
      if (fields.delay.value !== "" && Number.isFinite(delay)) body.delay = delay;
      button.disabled = true;
      const got = await send(body);
      button.disabled = false;
      answer.textContent = got.ok ? "Saved." : got.error;
      answer.classList.toggle("ok", got.ok);
      answer.classList.toggle("error", !got.ok);
      if (!got.ok) return;
      delete form.dataset.dirty;
      if (!round) { fields.round.value = ""; fields.lichess_id.value = ""; fields.delay.value = "0"; }
      render(got.data);
    });
    return { form: form, fields: fields };
  }

  function gameLine(game, why) {
    return node("li", "", "board " + game.board + " (" + game.game + "): " + (game.white || "?") + " \u2013 " + (game.black || "?") + ": " + why);
  }

  function roundBox(container, round) {
    let entry = boxes.get(round);
    if (entry) return entry;
    const box = node("div", "box bc-round");
    box.dataset.round = round;
    box.style.marginBottom = "0.6rem";
    const head = node("h3", "bc-head");
    const settings = settingsForm(round);
    const games = node("ul", "items bc-games");
    const none = node("p", "hint bc-none", "Every game of the round is taken.");
    box.append(head, settings.form, games, none);
    container.appendChild(box);
    entry = { box: box, head: head, settings: settings, games: games, none: none };
    boxes.set(round, entry);
    return entry;
  }

  function render(status) {
    const panel = document.getElementById("broadcast");
    const container = document.getElementById("broadcast-rounds");
    if (!panel || !container || !status) return;
    panel.hidden = !status.configured;
    const seen = new Set();
    for (const round of Array.isArray(status.rounds) ? status.rounds : []) {
      const name = String(round.round);
      seen.add(name);
      const entry = roundBox(container, name);
      entry.box.dataset.state = String(round.state);
      entry.head.textContent = "Round " + name + " \u2192 " + round.lichess_id + ": " + round.state + ", " + round.pushes + " pushes" + (round.error ? " (" + line(round.error) + ")" : "");
      const f = entry.settings.fields;
      if (!entry.settings.form.dataset.dirty && !entry.settings.form.contains(document.activeElement)) {
        f.lichess_id.value = String(round.lichess_id || "");
        f.enabled.checked = round.state !== "off";
        f.delay.value = String(Number(round.delay) || 0);
      }
      entry.games.textContent = "";
      for (const game of round.refused || []) entry.games.appendChild(gameLine(game, "refused by lichess: " + line(game.error)));
      for (const game of round.flagged || []) entry.games.appendChild(gameLine(game, "not pushed: " + (game.why || []).join(", ")));
      entry.none.hidden = entry.games.children.length > 0;
    }
    for (const [name, entry] of boxes) {
      if (!seen.has(name)) { entry.box.remove(); boxes.delete(name); }
    }
    if (!adder) {
      adder = node("div", "box bc-add");
      adder.appendChild(node("h3", "", "Push another round"));
      adder.appendChild(settingsForm(null).form);
    }
    container.appendChild(adder);  // always last
  }

  window.renderBroadcast = render;
})();
