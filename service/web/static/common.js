"use strict";
// Shared by the overview and the table page: drawing a board, clocks counting down,
// the live stream.  Text from the server is only ever set with textContent.
const GLYPHS = { K: "\u265A", Q: "\u265B", R: "\u265C", B: "\u265D", N: "\u265E", P: "\u265F" };
const FILES = "abcdefgh";

function placementOf(state) {
  if (!state) return null;
  for (const key of ["board", "placement"]) {
    if (typeof state[key] === "string" && state[key].includes("/")) return state[key];
  }
  if (typeof state.fen === "string") return state.fen.split(" ")[0];
  return null;
}

const SQUARE_NAME = /^[a-h][1-8]$/;

// The squares an action's text names, in order: "e2e4", "e7e8q", "F@e3" (a drop),
// "b1<>c1" (a swap), "e2e4&g1f3" (a tandem), "-e4" (a piece given away).  A text of
// another form names no square.
function squaresOfText(text) {
  if (typeof text !== "string" || text.length > 64) return [];
  return text.match(/[a-h][1-8]/g) || [];
}

// The squares the last action changed (a Set of names such as "e4"), from the state's
// last_move or else the last move of its record that stands (a refused one does not);
// null when there is none or its form is unknown.  Never throws.
function lastMoveOf(state) {
  try {
    let lm = state && state.last_move;
    if (!lm && state && Array.isArray(state.moves)) {
      for (let i = state.moves.length - 1; i >= 0 && !lm; i--) {
        const m = state.moves[i];
        if (m && !m.refused) lm = m;
      }
    }
    if (!lm) return null;
    const names = new Set();
    if (typeof lm === "string") {
      for (const n of squaresOfText(lm)) names.add(n);
    } else if (typeof lm === "object") {
      if (Array.isArray(lm.squares)) for (const n of lm.squares) names.add(n);
      for (const n of [lm.from, lm.to]) names.add(n);
      for (const n of squaresOfText(lm.uci)) names.add(n);
    }
    for (const n of Array.from(names)) if (typeof n !== "string" || !SQUARE_NAME.test(n)) names.delete(n);
    return names.size ? names : null;
  } catch (e) {
    return null;
  }
}

// Where the board differs from the game (or, in set-up, from the start position the game
// waits for): the state's set_right entries ({square, want, have}) by square name.
function setRightOf(state) {
  const out = new Map();
  const list = state && Array.isArray(state.set_right) ? state.set_right : [];
  for (const e of list) if (e && SQUARE_NAME.test(e.square)) out.set(e.square, e);
  return out;
}

// Whether a table needs a hand (overview, admin desk): its board differs from the game.
// While playing, a board differs for a moment with every move (a piece in the hand), so it
// is flagged only once it has differed for FIX_GRACE seconds; in set-up at once.
const FIX_GRACE = 3;
const fixSeen = new Map(); // table id -> local time (s) its board began to differ
function needsHand(id, state) {
  const n = state && Array.isArray(state.set_right) ? state.set_right.length : 0;
  if (!n) { fixSeen.delete(id); return false; }
  if (state.phase !== "playing") return true;
  const now = Date.now() / 1000;
  if (!fixSeen.has(id)) fixSeen.set(id, now);
  return now - fixSeen.get(id) >= FIX_GRACE;
}

// What a page draws: the position the game waits for while it is set up, else the game's
// position; the physical board only where the state says nothing of the game.
function shownPlacement(state) {
  if (state && Array.isArray(state.set_right)) {
    for (const fen of [state.awaiting_start, state.phase !== "setup" && state.fen]) {
      if (typeof fen === "string" && fen.includes("/")) return fen.split(" ")[0];
    }
  }
  return placementOf(state);
}

// "e2: put P (empty now)" lines for the squares to set right.
function setRightText(entry) {
  const what = (x) => (x === "" ? "empty" : x === "*" ? "a piece" : x === "?" ? "unreadable" : x);
  const todo = entry.want === "" ? "clear" : "put " + entry.want;
  return entry.square + ": " + todo + " (" + what(entry.have) + " now)";
}

// Draw (or redraw) the 64 squares of `el` from a FEN placement, White at the bottom (Black
// with `opts.flipped`); `last` (lastMoveOf) marks the squares of the last action; `fix`
// (setRightOf) the squares to set right, each with what should stand there; `opts.check`
// the square of a king in check (a page that passes `opts` also gets the files' letters).
function drawBoard(el, placement, last, fix, opts) {
  const flipped = !!(opts && opts.flipped);
  if (el.children.length !== 64 || el.dataset.flipped !== String(flipped)) {
    el.textContent = "";
    el.dataset.flipped = String(flipped);
    for (let row = 0; row < 8; row++) {
      for (let col = 0; col < 8; col++) {
        const rank = flipped ? row : 7 - row, file = flipped ? 7 - col : col;
        const sq = document.createElement("div");
        const name = FILES[file] + (rank + 1);
        sq.className = "sq " + ((file + rank) % 2 ? "l" : "d");
        sq.dataset.square = name;
        if (col === 0) {
          const c = document.createElement("span");
          c.className = "coord";
          c.textContent = String(rank + 1);
          sq.appendChild(c);
        }
        if (row === 7 && opts) {
          const c = document.createElement("span");
          c.className = "coord file";
          c.textContent = FILES[file];
          sq.appendChild(c);
        }
        el.appendChild(sq);
      }
    }
  }
  const pieces = {};
  if (placement) {
    const rows = placement.split("/");
    for (let i = 0; i < 8 && i < rows.length; i++) {
      let file = 0;
      for (const ch of rows[i]) {
        if (/[1-8]/.test(ch)) { file += Number(ch); continue; }
        if (file < 8) pieces[FILES[file] + (8 - i)] = ch;
        file++;
      }
    }
  }
  for (const sq of el.children) {
    const name = sq.dataset.square;
    const ch = pieces[name];
    let pc = sq.querySelector(".pc");
    if (ch) {
      if (!pc) { pc = document.createElement("span"); sq.appendChild(pc); }
      const upper = ch.toUpperCase();
      pc.className = "pc " + (ch === upper ? "w" : "b");
      pc.dataset.piece = ch;
      pc.textContent = GLYPHS[upper] || ch;
    } else if (pc) {
      pc.remove();
    }
    const marked = last instanceof Set ? last.has(name) : !!last && (name === last.from || name === last.to);
    sq.classList.toggle("mark", marked);
    sq.classList.toggle("check", !!(opts && opts.check === name));
    const wrong = fix instanceof Map ? fix.get(name) : undefined;
    sq.classList.toggle("fix", !!wrong);
    if (wrong) sq.dataset.want = wrong.want === "" ? "empty" : wrong.want;
    else delete sq.dataset.want;
  }
  el.dataset.fix = fix instanceof Map ? Array.from(fix.keys()).sort().join(" ") : "";
  el.dataset.placement = placement || "";
}

function formatClock(seconds) {
  if (seconds === null || seconds === undefined || !isFinite(seconds)) return "--:--";
  const s = Math.max(0, seconds);
  if (s < 10) return s.toFixed(1);
  const whole = Math.floor(s);
  const h = Math.floor(whole / 3600), m = Math.floor((whole % 3600) / 60), sec = whole % 60;
  const mm = String(m).padStart(h ? 2 : 1, "0"), ss = String(sec).padStart(2, "0");
  return h ? `${h}:${mm}:${ss}` : `${mm}:${ss}`;
}

// Which side's clock runs: "white", "black" or null.
function runningSide(clocks, state) {
  if (!clocks) return null;
  const r = clocks.running;
  if (r === "white" || r === "black") return r;
  if (r === true) {
    const fen = state && state.fen;
    if (typeof fen === "string" && fen.split(" ")[1]) return fen.split(" ")[1] === "b" ? "black" : "white";
    return state && state.turn === "black" ? "black" : "white";
  }
  return null;
}

let skew = 0; // server time minus local time, seconds
let lostAt = null; // local time (s) the stream to the service was lost; null while connected
// Server time now; while the service is unreachable, the time it was lost (clocks stop).
function serverNow() { return (lostAt === null ? Date.now() / 1000 : lostAt) + skew; }

// Seconds left for `side` now, counting down from as_of when it runs.
function clockNow(clocks, state, side) {
  if (!clocks || typeof clocks[side] !== "number") return null;
  let left = clocks[side];
  if (runningSide(clocks, state) === side && typeof clocks.as_of === "number") {
    left -= Math.max(0, serverNow() - clocks.as_of);
  }
  return left;
}

function setClock(el, clocks, state, side) {
  const left = clockNow(clocks, state, side);
  el.textContent = formatClock(left);
  el.classList.toggle("running", runningSide(clocks, state) === side);
  el.classList.toggle("low", left !== null && left < 10);
}

function linkText(state) {
  if (lostAt !== null) return { down: true, text: "board state unknown: " + lostText() };
  const c = state.connection || {};
  const link = state.link && typeof state.link === "object" ? state.link.state || state.link.status : state.link;
  if (c.state && c.state !== "up") return { down: true, text: "board " + c.state + (c.error ? ": " + c.error : "") };
  if (link && link !== "up" && link !== "connected" && link !== true) return { down: true, text: "board link " + link };
  return { down: false, text: "board connected" };
}

function resultText(state) {
  if (!state.result || state.result === "*") return state.phase ? String(state.phase) : "";
  return state.result + (state.reason ? " (" + state.reason + ")" : "");
}

function lostText() {
  const at = new Date(lostAt * 1000).toTimeString().slice(0, 8);
  return "no connection to the service since " + at;
}

// A diff of the table page's stream (service/web/state_diff.py) applied to `state`: keys
// set or gone, the move list kept up to `moves_from` and the new moves appended.  A new
// object; the move list is a new array only when it changed.
function applyStateDiff(state, diff) {
  const out = Object.assign({}, state);
  for (const key of Array.isArray(diff.unset) ? diff.unset : []) delete out[key];
  if (diff.set && typeof diff.set === "object") Object.assign(out, diff.set);
  if (Number.isInteger(diff.moves_from) && Array.isArray(diff.moves)) {
    const kept = Array.isArray(out.moves) ? out.moves.slice(0, diff.moves_from) : [];
    out.moves = kept.concat(diff.moves);
  }
  return out;
}

// What a diff stream adds to each table's state: {start, pgn} by table id.
const streamExtras = {};
const heldStates = {};

// Open the live stream; `onState(tableId, state)` for every table state received (a
// stream with "&diff=1" in its query gets a whole state first, then only diffs, which are
// applied here); `onLink()` when the connection to the service is lost or comes back (the
// page then shows its states again: the clocks stop, the board state goes grey).  Every
// (re)connection starts with whole states.
function connectStream(query, onState, onLink) {
  const live = document.getElementById("live");
  const source = new EventSource("/api/stream" + query);
  const received = (ev, diffed) => {
    let msg;
    try { msg = JSON.parse(ev.data); } catch (e) { return; }
    if (!msg || typeof msg.table !== "string") return;
    if (typeof msg.server_time === "number") skew = msg.server_time - Date.now() / 1000;
    let state = msg.state;
    if (diffed) {
      const held = heldStates[msg.table];
      if (!held || !msg.diff) return;
      state = applyStateDiff(held, msg.diff);
    }
    if ("start" in msg || "pgn" in msg) {
      const extras = streamExtras[msg.table] || (streamExtras[msg.table] = {});
      if ("start" in msg) extras.start = msg.start;
      if ("pgn" in msg) extras.pgn = msg.pgn;
    }
    if (diffed || query.includes("diff=1")) heldStates[msg.table] = state;
    onState(msg.table, state);
  };
  source.addEventListener("state", (ev) => received(ev, false));
  source.addEventListener("diff", (ev) => received(ev, true));
  if (typeof storeBanner !== "undefined") storeBanner.follow(source);
  const changed = () => {
    document.body.classList.toggle("offline", lostAt !== null);
    if (typeof onLink === "function") onLink();
  };
  source.onopen = () => {
    live.textContent = "live"; live.classList.remove("off");
    if (lostAt !== null) { lostAt = null; changed(); }
  };
  source.onerror = () => {
    if (lostAt === null) { lostAt = Date.now() / 1000; changed(); }
    live.textContent = lostText(); live.classList.add("off");
  };
  return source;
}
