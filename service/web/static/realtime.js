"use strict";
// Realtime chess on the table page: each piece's remaining delay (a shrinking bar and the
// seconds left, counted down between updates), the pieces under way, and the corrections
// the players must make (also outlined on the board).  Reads state.realtime, which only a
// realtime table sends; for any other table it draws nothing.  Loaded after common.js and
// before table.js: it wraps connectStream so it sees every state table.js sees.  Text from
// the server is only ever set with textContent.
(function () {
  const DELAY_TICKS = 10;
  const pageTable = decodeURIComponent(location.pathname.split("/").filter(Boolean).pop() || "");
  let latest = null; // {rt, receivedAt (seconds, local clock)}

  const original = connectStream;
  connectStream = function (query, onState) {
    return original(query, (id, state) => {
      onState(id, state);
      if (id === pageTable) showRealtime(state);
    });
  };

  function nowSeconds() { return Date.now() / 1000; }

  function panel() {
    let box = document.getElementById("rt-panel");
    if (box) return box;
    const info = document.querySelector("section.info");
    if (!info) return null;
    box = document.createElement("div");
    box.id = "rt-panel";
    box.className = "realtime";
    const moves = document.getElementById("moves");
    info.insertBefore(box, moves || null);
    return box;
  }

  function clearBoard() {
    const board = document.getElementById("board");
    if (!board) return;
    for (const node of board.querySelectorAll(".rt-delay, .rt-travel")) node.remove();
    for (const sq of board.children) {
      sq.style.outline = "";
      sq.style.outlineOffset = "";
    }
  }

  function section(box, cls) {
    let node = box.querySelector("." + cls);
    if (!node) {
      node = document.createElement("div");
      node.className = cls;
      box.appendChild(node);
    }
    return node;
  }

  function titled(parent, title, tag, texts) {
    parent.textContent = "";
    if (!texts.length) return;
    const head = document.createElement("div");
    head.className = "rt-title";
    head.textContent = title;
    parent.appendChild(head);
    const list = document.createElement(tag);
    for (const text of texts) {
      const li = document.createElement("li");
      li.textContent = text;
      list.appendChild(li);
    }
    parent.appendChild(list);
  }

  function showRealtime(state) {
    const rt = state && typeof state.realtime === "object" ? state.realtime : null;
    if (!rt) {
      latest = null;
      const old = document.getElementById("rt-panel");
      if (old) old.remove();
      clearBoard();
      return;
    }
    latest = { rt: rt, phase: state.phase, receivedAt: nowSeconds(), shownTravels: null };
    const box = panel();
    if (!box) return;
    // How many pieces the last state had under way (the table sends a state at every
    // arrival and at the end of every delay).
    box.dataset.travels = String(Array.isArray(rt.travels) ? rt.travels.length : 0);
    section(box, "rt-head");
    const corrections = Array.isArray(rt.corrections) ? rt.corrections : [];
    titled(section(box, "rt-corrections"), "Set right on the board:", "ol", corrections.map((c) =>
      typeof c.text === "string" ? c.text : String(c.kind || "?") + " " + String(c.square || "")));
    section(box, "rt-travels");
    draw();
  }

  // The panel's parts that change with time: the game time and the pieces still under way.
  function drawPanel(now) {
    const box = document.getElementById("rt-panel");
    if (!box || !latest) return;
    const rt = latest.rt;
    const vt = now !== null ? " · game time " + now.toFixed(1) + " s" : "";
    section(box, "rt-head").textContent = "Realtime chess · tick " + String(rt.tick) + " s" + vt;
    const under = (Array.isArray(rt.travels) ? rt.travels : []).filter(
      (t) => now === null || !(Number(t.arrives) <= now));
    const texts = under.map((t) => String(t.piece) + " " + String(t.from) + "–" + String(t.to) +
      (typeof t.arrives === "number" ? " (arrives " + t.arrives.toFixed(1) + " s)" : ""));
    const key = texts.join("\n");
    if (key === latest.shownTravels) return;
    latest.shownTravels = key;
    titled(section(box, "rt-travels"), "Under way:", "ul", texts);
  }

  function mark(sq, cls, text, fraction, colour) {
    let node = sq.querySelector("." + cls);
    if (!node) {
      node = document.createElement("span");
      node.className = cls;
      // Above the piece (z-index 1) and the last-move mark; the seconds in white.
      node.style.position = "absolute";
      node.style.left = "0";
      node.style.bottom = "0";
      node.style.zIndex = "2";
      node.style.height = "24%";
      node.style.display = "flex";
      node.style.alignItems = "center";
      node.style.paddingLeft = "3px";
      node.style.boxSizing = "border-box";
      node.style.fontSize = "calc(var(--board) / 40)";
      node.style.fontWeight = "700";
      node.style.color = "#fff";
      node.style.textShadow = "0 0 2px #000";
      node.style.lineHeight = "1";
      node.style.pointerEvents = "none";
      node.style.whiteSpace = "nowrap";
      node.style.overflow = "visible";
      sq.appendChild(node);
    }
    node.textContent = text;
    node.style.width = Math.max(0, Math.min(1, fraction)) * 100 + "%";
    node.style.background = colour;
  }

  // Redraw the delays and travels, counted down from the last state.
  function draw() {
    const board = document.getElementById("board");
    if (!board) return;
    clearBoard();
    if (!latest) return;
    const rt = latest.rt;
    const elapsed = Math.max(0, nowSeconds() - latest.receivedAt);
    const playing = latest.phase === "playing";
    // Game time now, counted on from the last state (null when the game does not run).
    const now = playing && typeof rt.virtual_time === "number" ? rt.virtual_time + elapsed : null;
    drawPanel(now);
    if (!playing) return;
    const full = DELAY_TICKS * (Number(rt.tick) || 1);
    const squares = {};
    for (const sq of board.children) squares[sq.dataset.square] = sq;
    const delays = rt.delays && typeof rt.delays === "object" ? rt.delays : {};
    for (const name of Object.keys(delays)) {
      const left = Number(delays[name]) - elapsed;
      const sq = squares[name];
      if (!sq || !(left > 0)) continue;
      mark(sq, "rt-delay", left.toFixed(1), left / full, "rgba(220, 60, 40, 0.55)");
    }
    for (const t of Array.isArray(rt.travels) ? rt.travels : []) {
      const sq = squares[t.to];
      if (!sq) continue;
      const arrives = Number(t.arrives);
      const total = arrives - Number(t.started);
      const left = now !== null ? arrives - now : total;
      if (now !== null && left <= 0) {
        // Arrived since the last state (the table's state for the arrival follows within
        // a hall tick): its delay of ten ticks runs from the arrival.
        const delay = arrives + full - now;
        if (delay > 0 && !(t.to in delays)) mark(sq, "rt-delay", delay.toFixed(1), delay / full, "rgba(220, 60, 40, 0.55)");
        continue;
      }
      mark(sq, "rt-travel", "→" + Math.max(0, left).toFixed(1), total > 0 ? left / total : 0, "rgba(40, 120, 220, 0.55)");
    }
    for (const c of Array.isArray(rt.corrections) ? rt.corrections : []) {
      for (const name of [c.square, c.from]) {
        if (typeof name === "string" && squares[name]) {
          // Inside the square: a neighbour drawn later would cover an outline outside it.
          squares[name].style.outline = "4px solid #d33";
          squares[name].style.outlineOffset = "-4px";
        }
      }
    }
  }

  setInterval(draw, 100);
})();
