"use strict";
// The 20-chess panel of the table page: the turn's rule, the step of the part under way,
// both hands, a decision the board cannot show (the cast rule, the opponent's pick) and the
// extra pieces.  Drawn from the table state's `variant_panel`; every text by textContent.

// Board glyphs for the extra piece in its three capacities (the board drawing falls back
// to the letter for anything without a glyph).
if (typeof GLYPHS === "object") Object.assign(GLYPHS, { F: "\u2606", E: "\u2726", M: "\u25B2" });

const TWENTY_PIECES = { p: "pawn", n: "knight", b: "bishop", r: "rook", q: "queen", k: "king" };

function twentyLine(parent, label, text, cls) {
  const row = document.createElement("div");
  if (cls) row.className = cls;
  const head = document.createElement("span");
  head.className = "label";
  head.textContent = label + ": ";
  const body = document.createElement("span");
  body.textContent = text;
  row.appendChild(head);
  row.appendChild(body);
  parent.appendChild(row);
  return row;
}

function twentyHand(letters) {
  if (typeof letters !== "string" || !letters) return "none";
  return Array.from(letters).map((c) => TWENTY_PIECES[c.toLowerCase()] || c).join(", ");
}

// What stands on the board for an extra piece: a letter of the board's pieces ("q": the
// black queen) or a DGT special piece ("W" white-wins, "X" black-wins).
const TWENTY_SPECIAL = { W: "the white-wins piece", X: "the black-wins piece" };

function twentyStandIn(letter) {
  if (typeof letter !== "string" || letter.length !== 1) return "?";
  const name = TWENTY_PIECES[letter.toLowerCase()];
  if (name) return "the " + (letter === letter.toUpperCase() ? "white " : "black ") + name;
  return TWENTY_SPECIAL[letter] || letter;
}

function twentyExtra(extra) {
  if (!extra || typeof extra !== "object") return "?";
  if (extra.status === "board" && extra.square) {
    return (extra.kind || "extra piece") + " on " + extra.square + " (on the board: " + twentyStandIn(extra.stand_in) + ")";
  }
  if (extra.status === "captured") return "captured: comes back at the next rule 12-14";
  return "not in the game yet (rules 12-14)";
}

function twentyPanel() {
  let box = document.getElementById("twenty");
  if (!box) {
    box = document.createElement("div");
    box.id = "twenty";
    box.className = "twenty";
    const info = document.querySelector("section.info");
    if (!info) return null;
    info.insertBefore(box, info.firstChild);
  }
  return box;
}

// Called by table.js with every new state.
function renderVariantPanel(state) {
  const panel = state && state.variant_panel;
  const box = twentyPanel();
  if (!box) return;
  box.textContent = "";
  if (!panel || panel.variant !== "twenty-chess") { box.hidden = true; return; }
  box.hidden = false;
  const rule = panel.rule === null || panel.rule === undefined ? "?" : String(panel.rule);
  twentyLine(box, "Turn " + panel.turn + ", rule " + rule, String(panel.rule_text || ""), "rule");
  const side = panel.side === "black" ? "Black" : "White";
  if (panel.step) {
    const steps = Array.isArray(panel.steps) ? panel.steps.length : 0;
    const at = steps > 1 ? " (step " + (Number(panel.step_index) + 1) + " of " + steps + ")" : "";
    twentyLine(box, side + " to act" + at, String(panel.step_text || panel.step), "step");
  }
  const choice = panel.pending_choice;
  if (choice && typeof choice === "object") {
    const who = choice.by === "black" ? "Black" : "White";
    const what = choice.what === "rule" ? "the rule of this turn (cast the die)" : "the piece " + side + " drops";
    const options = Array.isArray(choice.options) ? choice.options.join(", ") : "";
    twentyLine(box, "Waiting for " + who, what + ": " + options, "choice");
  }
  const hands = panel.hands || {};
  twentyLine(box, "Captured pieces", "White " + twentyHand(hands.white) + " · Black " + twentyHand(hands.black), "hands");
  const extra = panel.extra || {};
  twentyLine(box, "White's extra piece", twentyExtra(extra.white), "extra");
  twentyLine(box, "Black's extra piece", twentyExtra(extra.black), "extra");
  if (panel.fool_moves_as) {
    twentyLine(box, "A fool moves as", TWENTY_PIECES[panel.fool_moves_as] || String(panel.fool_moves_as), "fool");
  }
}

// -- stepping through a 20-chess game (table.js asks twentyReplay) ------------------------------
// The record's actions replayed on the placement from the classical start (20-chess takes no
// other): a move (castling, en passant, promotion as in chess: table.js's applyUci), a drop
// "P@e4", a swap "e1<>c4", a tandem "c3b3&b4a4" (the second piece makes the same
// displacement, onto an empty square), a gift "-b1".  The extra piece takes the letter of
// its capacity (F fool, E elephant, M mountain) from its drop, from the SAN of its moves
// ("Ef4-g7") and, at the start of a side's part under rule 12, 13 or 14 by the table's
// schedule, from that rule (its capacity changes then, moved or not).  A rule cast at the
// table is not in the record: there an extra piece that did not move shows its last
// capacity known.

const TWENTY_START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR";
const TWENTY_EXTRA_BY_RULE = { 12: "F", 13: "E", 14: "M" };

// The rule of each turn by the table's options (rule n in turn n for turns 1-20, or the
// schedule=...; orthodox after it), or null when the rules are cast.
function twentyRules(settings) {
  const words = String((settings && settings.options) || "").split(/\s+/).filter(Boolean);
  if (words.includes("cast")) return null;
  let schedule = Array.from({ length: 20 }, (_, i) => i + 1);
  for (const word of words) {
    if (word.startsWith("schedule=")) schedule = word.slice(9).split(",").map(Number);
  }
  return (turn) => (Number.isInteger(turn) && turn >= 1 && turn <= schedule.length ? schedule[turn - 1] : 1);
}

function twentyOwn(letter, side) { return side === "black" ? letter.toLowerCase() : letter.toUpperCase(); }

function twentySquare(name) { return (Number(name[1]) - 1) * 8 + "abcdefgh".indexOf(name[0]); }

// The board (64 letters, "" for empty) after `move`, or null when its text is not an action
// 20-chess writes.  `prev`: the move before it (null for the first), `rules`: twentyRules.
function twentyApply(before, move, prev, rules) {
  if (!move || typeof move.uci !== "string") return null;
  const text = move.uci;
  const side = move.side === "black" ? "black" : "white";
  let b = before.slice();
  const partStart = !prev || prev.number !== move.number || prev.side !== move.side;
  const capacity = partStart && rules ? TWENTY_EXTRA_BY_RULE[rules(move.number)] : undefined;
  if (capacity) {
    for (let i = 0; i < 64; i++) {
      if (b[i] && "FEM".includes(b[i].toUpperCase()) && twentyOwn(b[i], side) === b[i]) b[i] = twentyOwn(capacity, side);
    }
  }
  let m = /^([A-Za-z])@([a-h][1-8])$/.exec(text);
  if (m) { b[twentySquare(m[2])] = m[1]; return b; }
  m = /^([a-h][1-8])<>([a-h][1-8])$/.exec(text);
  if (m) {
    const x = twentySquare(m[1]), y = twentySquare(m[2]);
    if (!b[x] || !b[y]) return null;
    [b[x], b[y]] = [b[y], b[x]];
    return b;
  }
  m = /^-([a-h][1-8])$/.exec(text);
  if (m) {
    const x = twentySquare(m[1]);
    if (!b[x]) return null;
    b[x] = "";
    return b;
  }
  const parts = text.split("&");
  if (parts.length > 2) return null;
  b = applyUci(b, parts[0]);
  if (!b) return null;
  const letter = /^[FEM]/.exec(String(move.san || ""));
  if (letter) b[twentySquare(parts[0].slice(2, 4))] = twentyOwn(letter[0], side);
  if (parts.length === 2) {
    m = /^([a-h][1-8])([a-h][1-8])$/.exec(parts[1]);
    if (!m) return null;
    const x = twentySquare(m[1]), y = twentySquare(m[2]);
    if (!b[x]) return null;
    b[y] = b[x];
    b[x] = "";
  }
  return b;
}

// How table.js replays the state's game: {start, apply(board, index, moves)}, or null when
// it is no 20-chess game.
function twentyReplay(state) {
  const panel = state && state.variant_panel;
  if (!panel || panel.variant !== "twenty-chess") return null;
  const rules = twentyRules(state.settings);
  return {
    start: TWENTY_START,
    apply: (board, i, moves) => twentyApply(board, moves[i], i > 0 ? moves[i - 1] : null, rules),
    live: typeof panel.placement === "string" ? panel.placement : null,
  };
}
