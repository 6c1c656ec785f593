"use strict";
// Players as the overview and the admin page show them: title, name ("Last, First"),
// rating and federation, from a table's details (white_title, white_elo, white_federation,
// ...: optional, known when a pairing was imported), and the round's byes
// (/api/pairings).  Only ever set as text.

function playerLabel(name, details, side) {
  const d = details || {};
  const parts = [];
  if (d[side + "_title"]) parts.push(d[side + "_title"]);
  parts.push(name || "?");
  if (d[side + "_elo"]) parts.push(d[side + "_elo"]);
  if (d[side + "_federation"]) parts.push(d[side + "_federation"]);
  return parts.join(" ");
}

// The players named for a table's next game while its game under way is the record
// (state or summary "next_players"), or "".
function nextPlayersText(waiting) {
  if (!waiting || typeof waiting !== "object") return "";
  const round = waiting.round ? " (round " + waiting.round + ")" : "";
  return "next game: " + playerLabel(waiting.white, waiting, "white") + " \u2013 " + playerLabel(waiting.black, waiting, "black") + round;
}

function byeLabel(bye) {
  const who = [bye.title, bye.name, bye.elo, bye.federation].filter(Boolean).join(" ");
  return who + " (" + (bye.kind || "bye") + ")";
}

// The last round imported: its byes and its tables without a game, as lines of text
// ([] before any import).
function roundLines(report) {
  if (!report || report.round === undefined || !Array.isArray(report.byes)) return [];
  const lines = [];
  const round = report.round === null ? "" : "Round " + report.round + ": ";
  if (report.byes.length) lines.push(round + "no game for " + report.byes.map(byeLabel).join(", "));
  const unpaired = report.unpaired_tables || [];
  if (unpaired.length) lines.push(round + "no pairing at table " + unpaired.map((t) => t.table + " (board " + t.board + ")").join(", "));
  return lines;
}

async function fetchRound() {
  try {
    const response = await fetch("/api/pairings", { cache: "no-store" });
    return response.ok ? await response.json() : null;
  } catch (err) {
    return null;
  }
}
