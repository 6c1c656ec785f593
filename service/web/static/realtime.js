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
    for (const sq of board.children) sq.style.outline = "";
  }

  function showRealtime(state) {
    const rt = state && typeof state.realtime === "object" ? state.realtime : null;
    if (!rt) { latest = null; clearBoard(); return; }
    latest = { rt: rt, phase: state.phase, receivedAt: nowSeconds() };
    const box = panel();
    if (!box) return;
    box.textContent = "";
    const head = document.createElement("div");
    const vt = typeof rt.virtual_time === "number" ? " · game time " + rt.virtual_time.toFixed(1) + " s" : "";
    head.textContent = "Realtime chess · tick " + String(rt.tick) + " s" + vt;
    box.appendChild(head);
    const corrections = Array.isArray(rt.corrections) ? rt.corrections : [];
    if (corrections.length) {
      const title = document.createElement("div");
      title.className = "rt-title";
      title.textContent = "Set right on the board:";
      box.appendChild(title);
      const list = document.createElement("ol");
      for (const c of corrections) {
        const li = document.createElement("li");
        li.textContent = typeof c.text === "string" ? c.text : String(c.kind || "?") + " " + String(c.square || "");
        list.appendChild(li);
      }
      box.appendChild(list);
    }
    const travels = Array.isArray(rt.travels) ? rt.travels : [];
    if (travels.length) {
      const title = document.createElement("div");
      title.className = "rt-title";
      title.textContent = "Under way:";
      box.appendChild(title);
      const list = document.createElement("ul");
      for (const t of travels) {
        const li = document.createElement("li");
        li.textContent = String(t.piece) + " " + String(t.from) + "–" + String(t.to) +
          (typeof t.arrives === "number" ? " (arrives " + t.arrives.toFixed(1) + " s)" : "");
        list.appendChild(li);
      }
      box.appendChild(list);
    }
    draw();
  }

  function mark(sq, cls, text, fraction, colour) {
    let node = sq.querySelector("." + cls);
    if (!node) {
      node = document.createElement("span");
      node.className = cls;
      node.style.position = "absolute";
      node.style.left = "0";
      node.style.bottom = "0";
      node.style.height = "18%";
      node.style.fontSize = "70%";
      node.style.lineHeight = "1";
      node.style.pointerEvents = "none";
      node.style.whiteSpace = "nowrap";
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
    if (!latest || latest.phase !== "playing") return;
    const rt = latest.rt;
    const elapsed = Math.max(0, nowSeconds() - latest.receivedAt);
    const full = DELAY_TICKS * (Number(rt.tick) || 1);
    const squares = {};
    for (const sq of board.children) squares[sq.dataset.square] = sq;
    const delays = rt.delays && typeof rt.delays === "object" ? rt.delays : {};
    for (const name of Object.keys(delays)) {
      const left = Number(delays[name]) - elapsed;
      const sq = squares[name];
      if (!sq || !(left > 0)) continue;
      sq.style.position = "relative";
      mark(sq, "rt-delay", left.toFixed(1), left / full, "rgba(220, 60, 40, 0.55)");
    }
    for (const t of Array.isArray(rt.travels) ? rt.travels : []) {
      const sq = squares[t.to];
      if (!sq) continue;
      const total = Number(t.arrives) - Number(t.started);
      const left = typeof rt.virtual_time === "number" ? Number(t.arrives) - rt.virtual_time - elapsed : total;
      sq.style.position = "relative";
      mark(sq, "rt-travel", "→" + Math.max(0, left).toFixed(1), total > 0 ? left / total : 0, "rgba(40, 120, 220, 0.55)");
    }
    for (const c of Array.isArray(rt.corrections) ? rt.corrections : []) {
      for (const name of [c.square, c.from]) {
        if (typeof name === "string" && squares[name]) squares[name].style.outline = "3px solid #d33";
      }
    }
  }

  setInterval(draw, 100);
})();
