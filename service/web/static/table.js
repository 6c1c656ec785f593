"use strict";
// One table, big, live: players with their details, both clocks, the board (the last move
// and a check marked; flip with the button or the key f, kept by the browser), the result,
// the move list with each move's clock time, stepping through the moves (arrow keys,
// Home/End, the buttons; a click on a move goes to it; new moves never move a viewer who
// stepped back: "live" returns).  Follows the table stream's diffs (?diff=1).
const tableId = decodeURIComponent(location.pathname.split("/").filter(Boolean).pop() || "");
const FLIP_KEY = "dgt-table-flipped";
let current = null;   // the newest state
let viewing = null;   // the ply shown while stepping through the moves; null: live
let flipped = false;
let drawnMoves;       // the move list drawn (the stream makes a new array when it changes)
let replayed = null;  // {start, moves, boards}: the positions after each ply, as replayed

try { flipped = localStorage.getItem(FLIP_KEY) === "1"; } catch (e) { flipped = false; }

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

function movesOf(s) {
  return s && Array.isArray(s.moves) ? s.moves.filter((m) => m !== null && m !== undefined) : [];
}

function show(id, s) {
  if (id !== tableId) return;
  current = s;
  const st = s.settings || {};
  document.title = "Table " + id + ": " + (st.white || "?") + " - " + (st.black || "?");
  const known = (v) => typeof v === "string" && v !== "" && v !== "?";
  el("title").textContent = "Table " + id + (known(st.event) ? " · " + st.event : "") + (known(st.round) ? " · round " + st.round : "");
  showPlayers(st);
  const fix = setRightOf(s);
  showSetRight(el("setright"), s, fix);
  if (typeof renderVariantPanel === "function") renderVariantPanel(s);
  el("status").textContent = resultText(s);
  showResult(s);
  showLink(s);
  const scores = s.scores;
  el("scores").textContent = scores && typeof scores === "object" && Object.keys(scores).length
    ? "Score: White " + (scores.white ?? 0) + " – Black " + (scores.black ?? 0) : "";
  list(el("claims"), "Pending claims", s.claims || s.pending_claims);
  list(el("irregularities"), "Irregularities", s.irregularities);
  const extras = streamExtras[tableId] || {};
  el("pgn").href = typeof extras.pgn === "string" ? extras.pgn : "/games.pgn";
  if (s.moves !== drawnMoves) {
    drawnMoves = s.moves;
    showMoves(el("moves"), s);
  }
  if (viewing !== null && viewing >= movesOf(s).length) viewing = null;
  render();
  tick();
}

// -- players ---------------------------------------------------------------------------------
// The optional details of each player in the settings (white_title, white_elo,
// white_federation, white_fide_id, white_team; black_...), each shown only when present.  The
// federation is a text badge of its three-letter FIDE code (flag emoji do not show on every
// screen, and FIDE codes are not ISO country codes).

function detail(st, side, key) {
  const v = st[side + "_" + key];
  if (v === null || v === undefined || v === "" || v === "?") return "";
  return String(v).slice(0, 60);
}

function showPlayers(st) {
  const sides = flipped ? { top: "white", bottom: "black" } : { top: "black", bottom: "white" };
  for (const row of ["top", "bottom"]) {
    const side = sides[row];
    el(row + "-name").textContent = st[side] || "?";
    el(row + "-title").textContent = detail(st, side, "title").slice(0, 4);
    const fed = detail(st, side, "federation").toUpperCase();
    el(row + "-fed").textContent = /^[A-Z]{3}$/.test(fed) ? fed : "";
    const elo = detail(st, side, "elo");
    el(row + "-elo").textContent = /^\d{1,4}$/.test(elo) && elo !== "0" ? elo : "";
    el(row + "-team").textContent = detail(st, side, "team");
    const fide = detail(st, side, "fide_id");
    el(row + "-name").title = /^\d{1,12}$/.test(fide) ? "FIDE ID " + fide : "";
    el(row + "-clock").dataset.side = side;
  }
}

// -- result ----------------------------------------------------------------------------------

const RESULT_WORDS = { "1-0": "White wins", "0-1": "Black wins", "1/2-1/2": "Draw" };

function showResult(s) {
  const box = el("result");
  const result = typeof s.result === "string" ? s.result : "*";
  box.hidden = result === "*" || !result;
  box.dataset.result = box.hidden ? "" : result;
  box.textContent = "";
  if (box.hidden) return;
  const score = document.createElement("span");
  score.className = "score";
  score.textContent = result === "1/2-1/2" ? "½–½" : result.replace("-", "–");
  const words = document.createElement("span");
  words.className = "words";
  const reason = typeof s.reason === "string" && s.reason ? String(s.reason).replace(/[-_]/g, " ") : "";
  words.textContent = (RESULT_WORDS[result] || result) + (reason ? " · " + reason : "");
  box.append(score, words);
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

// -- positions of the moves ------------------------------------------------------------------
// Replayed here from the game's start (the stream's `start`) and each move's UCI, piece by
// piece (castling, en passant, promotion; an illegal move that stood as it was made);
// 20-chess by its own actions (twenty.js).  Realtime games are not stepped through: their
// moves overlap in time, so no position stands between two of them.

function parsePlacement(fen) {
  const board = new Array(64).fill("");
  const rows = String(fen).split(" ")[0].split("/");
  if (rows.length !== 8) return null;
  for (let r = 0; r < 8; r++) {
    let file = 0;
    for (const ch of rows[r]) {
      if (/[1-8]/.test(ch)) { file += Number(ch); continue; }
      if (file < 8) board[(7 - r) * 8 + file] = ch;
      file++;
    }
  }
  return board;
}

function placementText(board) {
  const rows = [];
  for (let rank = 7; rank >= 0; rank--) {
    let row = "", empty = 0;
    for (let file = 0; file < 8; file++) {
      const ch = board[rank * 8 + file];
      if (!ch) { empty++; continue; }
      if (empty) { row += empty; empty = 0; }
      row += ch;
    }
    rows.push(empty ? row + empty : row);
  }
  return rows.join("/");
}

function squareIndex(name) { return (Number(name[1]) - 1) * 8 + FILES.indexOf(name[0]); }

function applyUci(before, uci) {
  if (typeof uci !== "string" || !/^[a-h][1-8][a-h][1-8][qrbn]?$/.test(uci)) return null;
  const b = before.slice();
  const from = squareIndex(uci.slice(0, 2)), to = squareIndex(uci.slice(2, 4));
  const piece = b[from];
  if (!piece) return null;
  const white = piece === piece.toUpperCase();
  const rank = Math.floor(from / 8);
  const target = b[to];
  if (piece.toLowerCase() === "k" && target && target === (white ? "R" : "r")) {
    // Chess960 castling, written king takes own rook
    const kingside = to > from;
    b[from] = ""; b[to] = "";
    b[rank * 8 + (kingside ? 6 : 2)] = piece;
    b[rank * 8 + (kingside ? 5 : 3)] = target;
    return b;
  }
  if (piece.toLowerCase() === "k" && Math.abs(to - from) === 2) {
    const rookFrom = rank * 8 + (to > from ? 7 : 0), rookTo = (from + to) / 2;
    b[rookTo] = b[rookFrom]; b[rookFrom] = "";
  }
  if (piece.toLowerCase() === "p" && !target && (to - from) % 8 !== 0) {
    b[Math.floor(from / 8) * 8 + (to % 8)] = "";  // en passant
  }
  b[from] = "";
  b[to] = uci.length === 5 ? (white ? uci[4].toUpperCase() : uci[4]) : piece;
  return b;
}

// How the game's positions are replayed: from the stream's start FEN with each move's UCI
// (the games python-chess plays), else by a variant's own rules (twenty.js: 20-chess, whose
// replay must end where the game stands, `live`); null: not stepped through (realtime).
function replayOf(s) {
  if (s.realtime && typeof s.realtime === "object") return null;
  const start = (streamExtras[tableId] || {}).start;
  if (typeof start === "string") return { start: start, apply: (board, i, moves) => applyUci(board, moves[i].uci), live: null };
  return typeof twentyReplay === "function" ? twentyReplay(s) : null;
}

// The placement after `ply` moves (0: the start), or null where it cannot be replayed.
function placementAt(s, ply) {
  const how = replayOf(s);
  if (!how) return null;
  if (!replayed || replayed.start !== how.start || replayed.moves !== s.moves) {
    replayed = { start: how.start, moves: s.moves, boards: [parsePlacement(how.start)] };
  }
  const boards = replayed.boards, moves = movesOf(s);
  while (boards.length <= ply && boards.length <= moves.length && boards[boards.length - 1]) {
    boards.push(how.apply(boards[boards.length - 1], boards.length - 1, moves));
  }
  return boards[ply] ? placementText(boards[ply]) : null;
}

// The pieces of two placements alike, an extra piece's capacity aside (F, E, M).
function samePieces(a, b) {
  const plain = (p) => String(p).replace(/[FEM]/g, "X").replace(/[fem]/g, "x");
  return typeof a === "string" && typeof b === "string" && plain(a) === plain(b);
}

function steppable(s) {
  const how = replayOf(s);
  if (!how || placementAt(s, 0) === null) return false;
  if (how.live === null) return true;
  if (replayed.checkedMoves !== s.moves || replayed.checkedLive !== how.live) {
    replayed.checkedMoves = s.moves;
    replayed.checkedLive = how.live;
    replayed.ok = samePieces(placementAt(s, movesOf(s).length), how.live);
  }
  return replayed.ok;
}

// The square of the king a move's SAN says is in check, on `placement` (the one after it).
function checkSquare(placement, move) {
  if (!move || typeof move.san !== "string" || !/[+#]$/.test(move.san) || typeof placement !== "string") return null;
  const king = move.side === "white" ? "k" : "K";
  const board = parsePlacement(placement);
  const at = board ? board.indexOf(king) : -1;
  return at < 0 ? null : FILES[at % 8] + (Math.floor(at / 8) + 1);
}

// -- drawing ---------------------------------------------------------------------------------

function render() {
  const s = current;
  if (!s) return;
  const moves = movesOf(s);
  const n = moves.length;
  let placement = null;
  if (viewing !== null) placement = placementAt(s, viewing);
  if (placement === null) viewing = null;
  let last, fix, move;
  if (viewing === null) {
    const panel = s.variant_panel;  // a variant's own state (twenty.js): its pieces, its panel
    placement = (panel && panel.placement) || shownPlacement(s);
    last = lastMoveOf(s);
    fix = setRightOf(s);
    for (let i = n - 1; i >= 0 && !move; i--) if (!moves[i].refused) move = moves[i];
  } else {
    move = viewing > 0 ? moves[viewing - 1] : null;
    last = move ? new Set(squaresOfText(move.uci)) : null;
    fix = new Map();  // the physical board is compared with the game as it stands only
  }
  const board = el("board");
  drawBoard(board, placement, last, fix, { flipped: flipped, check: checkSquare(placement, move) });
  board.dataset.ply = viewing === null ? "live" : String(viewing);
  const at = viewing === null ? n : viewing;
  const canStep = n > 0 && steppable(s);
  el("steps").hidden = !canStep;
  el("first").disabled = el("back").disabled = !canStep || at === 0;
  el("forward").disabled = el("last").disabled = !canStep || viewing === null;
  const golive = el("golive");
  golive.hidden = viewing === null;
  golive.textContent = viewing === null ? "live" : "live (" + (n - viewing) + " more)";
  el("flip").setAttribute("aria-pressed", String(flipped));
  document.body.classList.toggle("stepping", viewing !== null);
  for (const node of el("moves").querySelectorAll(".mv.cur")) node.classList.remove("cur");
  const cur = at > 0 ? el("moves").querySelector('.mv[data-ply="' + at + '"]') : null;
  if (cur) {
    cur.classList.add("cur");
    if (viewing !== null) cur.scrollIntoView({ block: "nearest" });
  }
}

function go(ply) {
  if (!current) return;
  const n = movesOf(current).length;
  viewing = ply === null || ply >= n ? null : Math.max(0, ply);
  render();
  if (viewing === null) el("moves").scrollTop = el("moves").scrollHeight;
}

function step(delta) {
  if (!current) return;
  const n = movesOf(current).length;
  go((viewing === null ? n : viewing) + delta);
}

function flip() {
  flipped = !flipped;
  try { localStorage.setItem(FLIP_KEY, flipped ? "1" : "0"); } catch (e) { /* private mode */ }
  if (current) showPlayers(current.settings || {});
  render();
  tick();
}

// -- the move list ---------------------------------------------------------------------------
// Grouped by what each entry of the record says (its `number` and its `side`), never by its
// place in the list: a side's whole part (20-chess: several actions) stands under one
// number, whoever moves first and however many parts a number has.  A realtime game has no
// turns: one line a move, in the order they started, with the side and the start time.
// The numbers (data-label) and each part's clock time after it (data-clock, the clock of its
// last move) are drawn by app.css, so a line's text is its moves.  Each move is a span with
// its ply (its place in the record, from 1): a click goes to it.

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

// [{number, parts: [{side, moves: [[ply, move], ...]}]}]: consecutive entries with the same
// number go on one line, consecutive entries of the same side there in one part.
function groupMoves(all) {
  const rows = [];
  all.forEach((m, i) => {
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
    part.moves.push([i + 1, m]);
  });
  return rows;
}

function partSpan(label, side, moves) {
  const span = document.createElement("span");
  span.className = "part";
  span.dataset.side = side;
  if (label) span.dataset.label = label;
  moves.forEach(([ply, m], i) => {
    if (i) span.appendChild(document.createTextNode(" "));
    const mv = document.createElement("span");
    mv.className = "mv";
    mv.dataset.ply = String(ply);
    mv.textContent = moveText(m);
    span.appendChild(mv);
  });
  const lastMove = moves.length ? moves[moves.length - 1][1] : null;
  const clock = lastMove && Number.isFinite(lastMove.clock_seconds) ? formatClock(lastMove.clock_seconds) : "";
  if (clock !== "--:--" && clock) span.dataset.clock = clock;
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
      const span = partSpan(label, part.side, part.moves);
      if (part.moves.some(([, m]) => m && m.final === false)) span.classList.add("pending");
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
  return ordered.map(([m, i]) => {
    const li = document.createElement("li");
    const number = numberOf(m);
    if (number !== null) li.dataset.number = String(number);
    const side = m && typeof m.side === "string" ? m.side : "";
    const label = number === null ? "" : number + (side === "white" ? "." : "...");
    const span = partSpan(label, side, [[i + 1, m]]);
    delete span.dataset.clock;
    li.appendChild(span);
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
  const all = movesOf(s);
  const realtime = s.realtime && typeof s.realtime === "object";
  list.classList.toggle("realtime", !!realtime);
  const lines = realtime ? realtimeLines(all) : turnLines(all);
  for (const li of lines) list.appendChild(li);
  if (lines.length) lines[lines.length - 1].classList.add("last");
  if (viewing === null) list.scrollTop = list.scrollHeight;
}

function showLink(s) {
  const link = linkText(s);
  if (el("link").textContent !== link.text) el("link").textContent = link.text;
  el("link").classList.toggle("down", link.down);
}

function tick() {
  if (!current) return;
  showLink(current);
  const bottom = flipped ? "black" : "white", top = flipped ? "white" : "black";
  setClock(el("bottom-clock"), current.clocks, current, bottom);
  setClock(el("top-clock"), current.clocks, current, top);
}

// -- controls --------------------------------------------------------------------------------

el("first").addEventListener("click", () => go(0));
el("back").addEventListener("click", () => step(-1));
el("forward").addEventListener("click", () => step(1));
el("last").addEventListener("click", () => go(null));
el("golive").addEventListener("click", () => go(null));
el("flip").addEventListener("click", flip);
el("moves").addEventListener("click", (ev) => {
  const mv = ev.target instanceof Element ? ev.target.closest(".mv") : null;
  if (mv && current && steppable(current)) go(Number(mv.dataset.ply));
});
document.addEventListener("keydown", (ev) => {
  if (ev.altKey || ev.ctrlKey || ev.metaKey || ev.target instanceof HTMLInputElement) return;
  const keys = { ArrowLeft: () => step(-1), ArrowRight: () => step(1), Home: () => go(0), End: () => go(null), f: flip, F: flip };
  const action = keys[ev.key];
  if (!action) return;
  if (ev.key.startsWith("Arrow") || ev.key === "Home" || ev.key === "End") {
    if (!current || !steppable(current)) return;
    ev.preventDefault();
  }
  action();
});

connectStream("?table=" + encodeURIComponent(tableId) + "&diff=1", show, () => current && show(tableId, current));
setInterval(tick, 100);
