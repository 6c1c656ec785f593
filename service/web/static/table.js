"use strict";
// One table, big, live.
const tableId = decodeURIComponent(location.pathname.split("/").filter(Boolean).pop() || "");
let current = null;

function el(id) { return document.getElementById(id); }

function item(text) { const li = document.createElement("li"); li.textContent = text; return li; }

function describe(x) {
  if (x === null || x === undefined) return "";
  if (typeof x !== "object") return String(x);
  const parts = [];
  for (const key of ["kind", "type", "rule", "claim", "side", "by", "reason", "text", "message", "san", "square"]) {
    if (x[key] !== undefined && x[key] !== null && x[key] !== "") parts.push(String(x[key]));
  }
  return parts.length ? parts.join(" · ") : JSON.stringify(x);
}

function list(container, title, items) {
  container.textContent = "";
  if (!items || !items.length) return;
  const h = document.createElement("div"); h.textContent = title; container.appendChild(h);
  const ul = document.createElement("ul");
  for (const x of items) ul.appendChild(item(describe(x)));
  container.appendChild(ul);
}

function show(id, s) {
  if (id !== tableId) return;
  current = s;
  const st = s.settings || {};
  document.title = "Table " + id + ": " + (st.white || "?") + " - " + (st.black || "?");
  el("title").textContent = "Table " + id + " · " + (st.event || "") + (st.round ? " · round " + st.round : "");
  el("top-name").textContent = st.black || "?";
  el("bottom-name").textContent = st.white || "?";
  drawBoard(el("board"), placementOf(s), lastMoveOf(s));
  el("status").textContent = resultText(s);
  const link = linkText(s);
  el("link").textContent = link.text;
  el("link").classList.toggle("down", link.down);
  const scores = s.scores;
  el("scores").textContent = scores && typeof scores === "object" && Object.keys(scores).length
    ? "Score: White " + (scores.white ?? 0) + " – Black " + (scores.black ?? 0) : "";
  list(el("claims"), "Pending claims", s.claims || s.pending_claims);
  list(el("irregularities"), "Irregularities", s.irregularities);
  const moves = el("moves");
  moves.textContent = "";
  const all = Array.isArray(s.moves) ? s.moves : [];
  for (let i = 0; i < all.length; i += 2) {
    const w = all[i], b = all[i + 1];
    const li = item((w.san || w.uci || "?") + (b ? "  " + (b.san || b.uci || "?") : ""));
    if (i + 2 >= all.length) li.className = "last";
    moves.appendChild(li);
  }
  moves.scrollTop = moves.scrollHeight;
  tick();
}

function tick() {
  if (!current) return;
  setClock(el("bottom-clock"), current.clocks, current, "white");
  setClock(el("top-clock"), current.clocks, current, "black");
}

el("pgn").href = "/games.pgn";
fetch("/api/games").then((r) => r.json()).then((g) => {
  const mine = (g.games || []).filter((x) => x.table === tableId);
  if (mine.length) el("pgn").href = mine[mine.length - 1].pgn;
}).catch(() => {});
connectStream("?table=" + encodeURIComponent(tableId), show);
setInterval(tick, 100);
