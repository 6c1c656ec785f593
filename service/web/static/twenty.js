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
