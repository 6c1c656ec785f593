"use strict";
// The overview: one card per table, live.
const cards = new Map();
const states = new Map();

function card(id) {
  let c = cards.get(id);
  if (c) return c;
  const a = document.createElement("a");
  a.className = "card";
  a.href = "/tables/" + encodeURIComponent(id);
  a.dataset.table = id;
  const head = document.createElement("div"); head.className = "row meta";
  const black = document.createElement("div"); black.className = "row";
  const board = document.createElement("div"); board.className = "board";
  const white = document.createElement("div"); white.className = "row";
  const status = document.createElement("div"); status.className = "row meta";
  for (const row of [black, white]) {
    const n = document.createElement("span"); n.className = "name";
    const k = document.createElement("span"); k.className = "clock";
    row.append(n, k);
  }
  a.append(head, black, board, white, status);
  document.getElementById("tables").appendChild(a);
  c = { a, head, black, board, white, status };
  cards.set(id, c);
  return c;
}

function show(id, s) {
  states.set(id, s);
  const c = card(id);
  c.head.textContent = "Table " + id + " · round " + (s.round || "?");
  c.black.firstChild.textContent = s.black || "?";
  c.white.firstChild.textContent = s.white || "?";
  drawBoard(c.board, placementOf(s), lastMoveOf(s));
  const link = linkText(s);
  const extra = [];
  if (s.claims) extra.push(s.claims + " claim(s)");
  if (s.irregularities) extra.push(s.irregularities + " irregularit" + (s.irregularities > 1 ? "ies" : "y"));
  c.status.textContent = [resultText(s), link.down ? link.text : "", ...extra].filter(Boolean).join(" · ");
  tick();
}

function tick() {
  for (const [id, s] of states) {
    const c = cards.get(id);
    setClock(c.white.lastChild, s.clocks, s, "white");
    setClock(c.black.lastChild, s.clocks, s, "black");
  }
}

connectStream("", show);
setInterval(tick, 100);
