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
  const panel = s.variant_panel;  // a variant's own state (twenty.js): its pieces, its panel
  const fix = setRightOf(s);
  drawBoard(el("board"), (panel && panel.placement) || shownPlacement(s), lastMoveOf(s), fix);
  showSetRight(el("setright"), s, fix);
  if (typeof renderVariantPanel === "function") renderVariantPanel(s);
  el("status").textContent = resultText(s);
  showLink(s);
  const scores = s.scores;
  el("scores").textContent = scores && typeof scores === "object" && Object.keys(scores).length
    ? "Score: White " + (scores.white ?? 0) + " – Black " + (scores.black ?? 0) : "";
  list(el("claims"), "Pending claims", s.claims || s.pending_claims);
  list(el("irregularities"), "Irregularities", s.irregularities);
  showMoves(el("moves"), s);
  tick();
}

// The squares to set right: the start position a game waits for, or where the board
// differs from the game.
function showSetRight(box, s, fix) {
  box.textContent = "";
  if (!fix.size) return;
  const h = document.createElement("div");
  h.textContent = s.awaiting_start
    ? "Set up the start position: the game begins when the board shows it"
    : s.phase === "playing" ? "The board differs from the game" : "Set up the start position";
  const ul = document.createElement("ul");
  for (const e of fix.values()) ul.appendChild(item(setRightText(e)));
  box.append(h, ul);
}

// -- the move list ---------------------------------------------------------------------------
// Grouped by what each entry of the record says (its `number` and its `side`), never by its
// place in the list: a side's whole part (20-chess: several actions) stands under one
// number, whoever moves first and however many parts a number has.  A realtime game has no
// turns: one line a move, in the order they started, with the side and the start time.
// The numbers are drawn by app.css from data-label, so a line's text is its moves.

// A move the board could not tell from others is shown with them: "Nxc3 (or Nxb2)".
function moveText(m) {
  if (!m || typeof m !== "object") return String(m);
  const text = String(m.san || m.uci || "?");
  const others = Array.isArray(m.alternatives) ? m.alternatives.map((o) => o && (o.san || o.uci)).filter(Boolean) : [];
  return others.length ? text + " (or " + others.join(", ") + ")" : text;
}

function sideName(side) {
  if (typeof side !== "string" || !side) return "?";
  return side.charAt(0).toUpperCase() + side.slice(1);
}

function numberOf(m) {
  return m && typeof m === "object" && Number.isFinite(m.number) ? m.number : null;
}

// [{number, parts: [{side, moves: [...]}]}]: consecutive entries with the same number go on
// one line, consecutive entries of the same side there in one part.
function groupMoves(all) {
  const rows = [];
  for (const m of all) {
    const number = numberOf(m);
    const side = m && typeof m.side === "string" ? m.side : "";
    let row = rows[rows.length - 1];
    if (!row || number === null || row.number !== number) {
      row = { number: number, parts: [] };
      rows.push(row);
    }
    let part = row.parts[row.parts.length - 1];
    if (!part || part.side !== side) {
      part = { side: side, moves: [] };
      row.parts.push(part);
    }
    part.moves.push(m);
  }
  return rows;
}

function partSpan(label, side, text) {
  const span = document.createElement("span");
  span.className = "part";
  span.dataset.side = side;
  if (label) span.dataset.label = label;
  span.textContent = text;
  return span;
}

function turnLines(all) {
  const lines = [];
  for (const row of groupMoves(all)) {
    const li = document.createElement("li");
    if (row.number !== null) li.dataset.number = String(row.number);
    const several = row.parts.some((p) => p.moves.length > 1);
    row.parts.forEach((part, i) => {
      let label = "";
      if (row.number !== null && (i === 0 || several)) {
        label = row.number + (i === 0 && part.side === "white" ? "." : "...");
      }
      const span = partSpan(label, part.side, part.moves.map(moveText).join(" "));
      if (part.moves.some((m) => m && m.final === false)) span.classList.add("pending");
      if (i) li.appendChild(document.createTextNode("  "));
      li.appendChild(span);
    });
    lines.push(li);
  }
  return lines;
}

function realtimeLines(all) {
  const at = (m) => (m && Number.isFinite(m.start) ? m.start : Infinity);
  const ordered = all.map((m, i) => [m, i]).sort((a, b) => at(a[0]) - at(b[0]) || a[1] - b[1]);
  return ordered.map(([m]) => {
    const li = document.createElement("li");
    const number = numberOf(m);
    if (number !== null) li.dataset.number = String(number);
    const side = m && typeof m.side === "string" ? m.side : "";
    const label = number === null ? "" : number + (side === "white" ? "." : "...");
    li.appendChild(partSpan(label, side, moveText(m)));
    const meta = document.createElement("span");
    meta.className = "meta";
    const when = m && Number.isFinite(m.start) ? " · " + m.start.toFixed(2) + " s" : "";
    meta.textContent = " · " + sideName(side) + when + (m && m.refused ? " · refused" : "");
    li.appendChild(meta);
    if (m && m.refused) li.classList.add("refused");
    return li;
  });
}

function showMoves(list, s) {
  list.textContent = "";
  const all = Array.isArray(s.moves) ? s.moves.filter((m) => m !== null && m !== undefined) : [];
  const realtime = s.realtime && typeof s.realtime === "object";
  list.classList.toggle("realtime", !!realtime);
  const lines = realtime ? realtimeLines(all) : turnLines(all);
  for (const li of lines) list.appendChild(li);
  if (lines.length) lines[lines.length - 1].classList.add("last");
  list.scrollTop = list.scrollHeight;
}

function showLink(s) {
  const link = linkText(s);
  if (el("link").textContent !== link.text) el("link").textContent = link.text;
  el("link").classList.toggle("down", link.down);
}

function tick() {
  if (!current) return;
  showLink(current);
  setClock(el("bottom-clock"), current.clocks, current, "white");
  setClock(el("top-clock"), current.clocks, current, "black");
}

el("pgn").href = "/games.pgn";
fetch("/api/games").then((r) => r.json()).then((g) => {
  const mine = (g.games || []).filter((x) => x.table === tableId);
  if (mine.length) el("pgn").href = mine[mine.length - 1].pgn;
}).catch(() => {});
connectStream("?table=" + encodeURIComponent(tableId), show, () => current && show(tableId, current));
setInterval(tick, 100);
