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
  const hand = document.createElement("div"); hand.className = "hand";
  for (const row of [black, white]) {
    const n = document.createElement("span"); n.className = "name";
    const k = document.createElement("span"); k.className = "clock";
    row.append(n, k);
  }
  a.append(head, black, board, white, status, hand);
  document.getElementById("tables").appendChild(a);
  c = { a, head, black, board, white, status, hand };
  cards.set(id, c);
  return c;
}

function show(id, s) {
  states.set(id, s);
  const c = card(id);
  const board = s.details && s.details.board ? " · board " + s.details.board : "";
  c.head.textContent = "Table " + id + board + " · round " + (s.round || "?");
  c.black.firstChild.textContent = playerLabel(s.black, s.details, "black");
  c.white.firstChild.textContent = playerLabel(s.white, s.details, "white");
  const fix = setRightOf(s);
  drawBoard(c.board, shownPlacement(s), lastMoveOf(s), fix);
  showHand(id, s);
  const link = linkText(s);
  const extra = [];
  if (s.claims) extra.push(s.claims + " claim(s)");
  if (s.irregularities) extra.push(s.irregularities + " irregularit" + (s.irregularities > 1 ? "ies" : "y"));
  if (s.next_players) extra.push(nextPlayersText(s.next_players));
  c.status.textContent = [resultText(s), link.down ? link.text : "", ...extra].filter(Boolean).join(" · ");
  tick();
}

// The card's flag and line when its board needs a hand (needsHand: common.js).
function showHand(id, s) {
  const c = cards.get(id);
  const n = needsHand(id, s) ? s.set_right.length : 0;
  c.a.classList.toggle("needs-hand", n > 0);
  const text = !n ? "" : (s.phase === "playing" ? "board differs from the game: " : "set up: ") + n + " square" + (n > 1 ? "s" : "");
  if (c.hand.textContent !== text) c.hand.textContent = text;
}

function tick() {
  for (const [id, s] of states) {
    const c = cards.get(id);
    if (fixSeen.has(id)) showHand(id, s);
    setClock(c.white.lastChild, s.clocks, s, "white");
    setClock(c.black.lastChild, s.clocks, s, "black");
  }
}

// The layout: boards (large), dense (a 16-board round on one full-HD screen) or a list;
// chosen with the buttons in the header and remembered by this browser.
const LAYOUTS = { boards: "Boards", dense: "Dense", list: "List" };
const LAYOUT_KEY = "dgt-overview-layout";

function storedLayout() {
  try { const v = localStorage.getItem(LAYOUT_KEY); return v in LAYOUTS ? v : "boards"; } catch (e) { return "boards"; }
}

function setLayout(name) {
  const grid = document.getElementById("tables");
  for (const n of Object.keys(LAYOUTS)) grid.classList.toggle(n, n === name && n !== "boards");
  grid.dataset.layout = name;
  for (const b of document.querySelectorAll(".layouts button")) b.setAttribute("aria-pressed", String(b.dataset.layout === name));
  try { localStorage.setItem(LAYOUT_KEY, name); } catch (e) { /* private mode: not kept */ }
}

function layoutButtons() {
  const box = document.createElement("div");
  box.className = "layouts";
  box.setAttribute("role", "group");
  box.setAttribute("aria-label", "layout");
  for (const [name, label] of Object.entries(LAYOUTS)) {
    const b = document.createElement("button");
    b.type = "button"; b.dataset.layout = name; b.textContent = label;
    b.addEventListener("click", () => setLayout(name));
    box.appendChild(b);
  }
  document.getElementById("live").before(box);
}

// The round's byes and the tables without a pairing (players.js), under the tables; asked
// for again every 15 s and when a table's players change.
let roundShown = "";
async function showRound() {
  const lines = roundLines(await fetchRound());
  const key = JSON.stringify(lines);
  if (key === roundShown) return;
  roundShown = key;
  let box = document.getElementById("round-byes");
  if (!box) {
    box = document.createElement("section");
    box.id = "round-byes";
    box.className = "round-byes";
    box.style.padding = "0.4rem 1.2rem";
    box.style.color = "#fdd663";
    document.getElementById("tables").after(box);
  }
  box.textContent = "";
  for (const line of lines) {
    const p = document.createElement("p");
    p.textContent = line;
    box.appendChild(p);
  }
}

let playersSeen = "";
function playersChanged() {
  const key = [...states.values()].map((s) => s.white + "|" + s.black).join("/");
  if (key !== playersSeen) { playersSeen = key; showRound(); }
}

layoutButtons();
showRound();
setInterval(showRound, 15000);
setInterval(playersChanged, 1000);
setLayout(storedLayout());
connectStream("", show, () => { for (const [id, s] of states) show(id, s); });
setInterval(tick, 100);
