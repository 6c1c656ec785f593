"use strict";
// The admin page's pairings: a round's pairings file (FIDE TRF or CSV) sent as it is to
// POST /api/admin/pairings (?round=N&name=FILE) with the admin token (admin.js keeps it),
// and what the import did: per table the players seated (now, or at the next game), the
// byes, the tables without a game, the boards without a table.  Text only as text.

function pairingsItem(text, bad) {
  const li = document.createElement("li");
  li.textContent = text;
  if (bad) li.classList.add("error");
  return li;
}

function pairingText(entry) {
  const white = playerLabel(entry.white.name, { white_title: entry.white.title, white_elo: entry.white.elo, white_federation: entry.white.federation }, "white");
  const black = playerLabel(entry.black.name, { black_title: entry.black.title, black_elo: entry.black.elo, black_federation: entry.black.federation }, "black");
  return "board " + entry.board + ": " + white + " \u2013 " + black;
}

function renderPairings(report) {
  const list = $("pairings-report");
  list.textContent = "";
  if (!report || report.round === undefined || !Array.isArray(report.tables)) return;
  const applies = { now: "seated", "next game": "seated for the next game (the game under way is the record)", already: "seated already", "later round": "left as it is (a later round is at the table)" };
  for (const t of report.tables) {
    const what = t.error ? "not seated: " + t.error : applies[t.applies] || t.applies;
    list.appendChild(pairingsItem("Table " + t.table + ", " + pairingText(t) + ": " + what, Boolean(t.error)));
  }
  for (const p of report.no_table || []) list.appendChild(pairingsItem("No table has " + pairingText(p) + " (give a table board = " + p.board + ")", true));
  for (const line of roundLines(report)) list.appendChild(pairingsItem(line, false));
}

async function importPairings(event) {
  event.preventDefault();
  const answer = $("pairings-answer");
  const file = $("pairings-file").files[0];
  if (!file) { say(answer, false, "choose the pairings file first"); return; }
  const query = new URLSearchParams({ name: file.name });
  const round = $("pairings-round").value.trim();
  if (round) query.set("round", round);
  const button = $("pairings-form").querySelector("button[type=submit]");
  button.disabled = true;
  say(answer, true, "importing " + file.name + "\u2026");
  let response = null;
  let data = null;
  try {
    response = await fetch("/api/admin/pairings?" + query.toString(), {
      method: "POST",
      headers: { Authorization: "Bearer " + token, "Content-Type": "application/octet-stream" },
      body: file,
      cache: "no-store",
      credentials: "same-origin",
    });
    data = await response.json();
  } catch (err) {
    data = null;
  } finally {
    button.disabled = false;
  }
  if (!response) { say(answer, false, "the service does not answer"); return; }
  if (!response.ok || !data || data.error) {
    say(answer, false, oneLine(data && data.error ? data.error : "HTTP " + response.status));
    return;
  }
  const seated = data.tables.filter((t) => !t.error).length;
  say(answer, true, (data.round !== null ? "round " + data.round + ": " : "") + seated + " table(s) seated from " + data.source);
  renderPairings(data);
}

document.addEventListener("DOMContentLoaded", async () => {
  $("pairings-form").addEventListener("submit", importPairings);
  renderPairings(await fetchRound());
});
