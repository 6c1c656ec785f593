"use strict";
// The organiser's page: the admin token (kept in this tab's sessionStorage, sent as
// "Authorization: Bearer ..." and never in an address), the tables live from the overview
// stream, and the admin commands of one selected table.  Text from the server or the user is
// only ever inserted with textContent.

const TOKEN_KEY = "dgt-admin-token";
const $ = (id) => document.getElementById(id);

let token = "";
let options = null;
let overviewStream = null;
let detailStream = null;
let selected = null;
let prefilled = false;
let chooseAnswered = false;
let drawnChoice = "";
let changesDrawn = null;
let earlierDrawn = null;
const summaries = new Map();
const rows = new Map();

function oneLine(text) {
  return String(text).split("\n")[0].slice(0, 300);
}

function say(el, ok, text) {
  el.textContent = text;
  el.classList.toggle("ok", ok);
  el.classList.toggle("error", !ok);
}

function setLive(on, text) {
  const live = $("live");
  live.textContent = text;
  live.classList.toggle("off", !on);
}

// One request to the service; resolves to {ok, status, data} or {ok: false, status, error}
// with the service's one-line error.
async function call(method, path, body) {
  const init = {
    method,
    headers: { Authorization: "Bearer " + token },
    cache: "no-store",
    credentials: "same-origin",
  };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (err) {
    return { ok: false, status: 0, error: "the service does not answer: " + oneLine(err.message || err) };
  }
  let data = null;
  try {
    data = await response.json();
  } catch (err) {
    data = null;
  }
  if (response.ok && data !== null) return { ok: true, status: response.status, data };
  const error = data && typeof data.error === "string" ? data.error : "HTTP " + response.status + " " + response.statusText;
  return { ok: false, status: response.status, error: oneLine(error) };
}

// --- the token ----------------------------------------------------------------------

function showLogin(message) {
  $("desk").hidden = true;
  $("forget").hidden = true;
  $("login").hidden = false;
  if (message) say($("login-answer"), false, message);
  $("token").focus();
}

async function useToken(candidate) {
  token = candidate;
  say($("login-answer"), true, "checking the token\u2026");
  const answer = await call("GET", "/api/admin/options");
  if (!answer.ok) {
    if (answer.status === 401) {
      token = "";
      sessionStorage.removeItem(TOKEN_KEY);
    }
    showLogin(answer.error);
    return;
  }
  sessionStorage.setItem(TOKEN_KEY, candidate);
  options = answer.data;
  $("token").value = "";
  say($("login-answer"), true, "");
  $("login").hidden = true;
  $("forget").hidden = false;
  $("desk").hidden = false;
  fillOptions();
  connectOverview();
  watchBroadcast();
}

// --- the lichess pushes (GET /api/broadcast): refusals and flagged games -------------

let broadcastTimer = null;

function gameLine(game, why) {
  const li = document.createElement("li");
  li.textContent = "board " + game.board + " (" + game.game + "): " + (game.white || "?") + " \u2013 " + (game.black || "?") + ": " + why;
  return li;
}

// renderBroadcast(status) is admin_broadcast.js's (the broadcast panel).

async function watchBroadcast() {
  if (broadcastTimer) clearTimeout(broadcastTimer);
  if (!token) return;
  const answer = await call("GET", "/api/broadcast");
  if (answer.ok) renderBroadcast(answer.data);
  broadcastTimer = setTimeout(watchBroadcast, 5000);
}

function forgetToken() {
  if (broadcastTimer) clearTimeout(broadcastTimer);
  broadcastTimer = null;
  $("broadcast").hidden = true;
  token = "";
  sessionStorage.removeItem(TOKEN_KEY);
  if (overviewStream) overviewStream.close();
  if (detailStream) detailStream.close();
  overviewStream = detailStream = null;
  setLive(false, "not connected");
  say($("login-answer"), true, "The token is forgotten.");
  showLogin();
}

function fillSelect(select, values, placeholder) {
  select.textContent = "";
  if (placeholder) {
    const option = document.createElement("option");
    option.value = "";
    option.textContent = placeholder;
    select.appendChild(option);
  }
  for (const value of values) {
    const option = document.createElement("option");
    option.value = value;
    option.textContent = value;
    select.appendChild(option);
  }
}

function fillOptions() {
  fillSelect($("start-variant"), options.variants || []);
  fillSelect($("start-rules"), options.rules || []);
  fillSelect($("end-result"), options.results || [], "choose\u2026");
  fillSelect($("claim-kind"), options.claim_kinds || []);
}

// --- the tables ---------------------------------------------------------------------

function parse(text) {
  try {
    return JSON.parse(text);
  } catch (err) {
    return null;
  }
}

function connectOverview() {
  if (overviewStream) overviewStream.close();
  setLive(false, "connecting");
  overviewStream = new EventSource("/api/stream");
  if (typeof storeBanner !== "undefined") storeBanner.follow(overviewStream);
  overviewStream.onopen = () => { setLive(true, "live"); if (typeof deskLink === "function") deskLink(true); };
  overviewStream.onerror = () => {
    setLive(false, "reconnecting");
    if (typeof deskLink === "function") setLive(false, deskLink(false));  // admin_boards.js
  };
  overviewStream.addEventListener("state", (event) => {
    const message = parse(event.data);
    if (!message || typeof message.table !== "string" || !message.state) return;
    summaries.set(message.table, message.state);
    renderRow(message.table);
    if (typeof renderDesk === "function") renderDesk(message.table);  // admin_boards.js
  });
}

function shown(value) {
  return value === null || value === undefined ? "" : String(value);
}

function attentionOf(s) {
  const parts = [];
  if (s.claims) parts.push(s.claims + (s.claims === 1 ? " claim" : " claims"));
  if (s.irregularities) parts.push(s.irregularities + (s.irregularities === 1 ? " irregularity" : " irregularities"));
  if (s.next_players) parts.push(nextPlayersText(s.next_players));
  return parts.join(", ");
}

// A table's row: built once, its cells' texts updated with each summary.
function rowOf(id) {
  let tr = rows.get(id);
  if (tr) return tr;
  tr = document.createElement("tr");
  tr.dataset.table = id;
  const first = document.createElement("td");
  const pick = document.createElement("button");
  pick.type = "button";
  pick.className = "pick";
  pick.textContent = id;
  pick.addEventListener("click", () => select(id));
  first.appendChild(pick);
  tr.appendChild(first);
  for (const name of ["round", "white", "black", "phase", "ply", "result", "board", "attention"]) {
    const td = document.createElement("td");
    td.className = name;
    tr.appendChild(td);
  }
  rows.set(id, tr);
  $("table-rows").appendChild(tr);
  $("no-tables").hidden = true;
  return tr;
}

function renderRow(id) {
  const s = summaries.get(id);
  const tr = rowOf(id);
  const connection = (s.connection && s.connection.state) || s.link || "?";
  const attention = attentionOf(s);
  const texts = {
    round: s.round,
    white: playerLabel(s.white, s.details, "white"),
    black: playerLabel(s.black, s.details, "black"),
    phase: s.phase,
    ply: s.ply || 0,
    result: s.result && s.result !== "*" ? s.result : "",
    board: connection,
    attention,
  };
  for (const [name, value] of Object.entries(texts)) tr.querySelector("td." + name).textContent = shown(value);
  tr.classList.toggle("selected", id === selected);
  tr.classList.toggle("attention", attention !== "");
  tr.classList.toggle("down", connection !== "up");
}

// --- one table ----------------------------------------------------------------------

function select(id) {
  if (selected === id && detailStream) return;
  selected = id;
  prefilled = false;
  chooseAnswered = false;
  drawnClaims = drawnMoves = drawnChoice = "";
  earlierDrawn = null;
  earlierList().textContent = "";
  for (const [other, tr] of rows) tr.classList.toggle("selected", other === id);
  $("detail").hidden = false;
  $("detail-title").textContent = "Table " + id;
  for (const answer of document.querySelectorAll("#detail .answer")) say(answer, true, "");
  if (detailStream) detailStream.close();
  detailStream = new EventSource("/api/stream?table=" + encodeURIComponent(id));
  detailStream.addEventListener("state", (event) => {
    const message = parse(event.data);
    if (!message || message.table !== selected || !message.state) return;
    renderDetail(message.state);
  });
}

function addTerm(dl, term, value) {
  const dt = document.createElement("dt");
  dt.textContent = term;
  const dd = document.createElement("dd");
  dd.textContent = shown(value) === "" ? "\u2013" : shown(value);
  dl.append(dt, dd);
}

// A side's player with every detail known (players.js; FIDE id and team too).
function playerText(settings, side) {
  const extra = [];
  if (settings[side + "_fide_id"]) extra.push("FIDE " + settings[side + "_fide_id"]);
  if (settings[side + "_team"]) extra.push(settings[side + "_team"]);
  return playerLabel(settings[side], settings, side) + (extra.length ? " (" + extra.join(", ") + ")" : "");
}

function renderDetail(state) {
  const settings = state.settings || {};
  const dl = $("detail-state");
  dl.textContent = "";
  addTerm(dl, "Phase", state.phase);
  addTerm(dl, "Result", state.result && state.result !== "*" ? state.result + (state.reason ? " (" + state.reason + ")" : "") : "");
  addTerm(dl, "White", playerText(settings, "white"));
  addTerm(dl, "Black", playerText(settings, "black"));
  addTerm(dl, "Round", settings.round + (settings.board ? ", board " + settings.board : ""));
  if (state.next_players) addTerm(dl, "Next game", nextPlayersText(state.next_players).replace(/^next game: /, ""));
  addTerm(dl, "Event", settings.event);
  addTerm(dl, "Variant", settings.variant);
  addTerm(dl, "Rules", settings.rules);
  addTerm(dl, "Time control", settings.time_control);
  addTerm(dl, "Start FEN", settings.start);
  addTerm(dl, "Moves", Array.isArray(state.moves) ? state.moves.length : 0);
  const panel = state.variant_panel && typeof state.variant_panel === "object" ? state.variant_panel : null;
  if (panel && panel.variant === "twenty-chess") {
    const rule = panel.rule === null || panel.rule === undefined ? "?" : panel.rule;
    addTerm(dl, "20-chess", "turn " + shown(panel.turn) + ", rule " + rule + (panel.rule_text ? ": " + panel.rule_text : ""));
  }
  const connection = state.connection || {};
  addTerm(dl, "Board", (connection.state || state.link || "?") + (connection.error ? ": " + connection.error : ""));
  renderClaims(Array.isArray(state.claims) ? state.claims : []);
  renderIrregularities(Array.isArray(state.irregularities) ? state.irregularities : []);
  renderMoves(Array.isArray(state.moves) ? state.moves : []);
  const changeKey = [selected, state.result, settings.white, settings.black,
    JSON.stringify((state.moves || []).map((m) => m.san))].join("|");
  if (changeKey !== changesDrawn) {
    changesDrawn = changeKey;
    loadChanges(selected);
  }
  // A game is replaced at the table when a new one begins: its result or first move changes.
  const moves = Array.isArray(state.moves) ? state.moves : [];
  const earlierKey = [selected, state.result, moves.length ? moves[0].uci : ""].join("|");
  if (earlierKey !== earlierDrawn) {
    earlierDrawn = earlierKey;
    loadEarlier(selected);
  }
  renderChoice(panel);
  $("drop-kind-form").hidden = !(panel && panel.variant === "twenty-chess");
  if (!prefilled) {
    prefilled = true;
    prefill(settings);
  }
}

function prefill(settings) {
  const values = {
    "start-variant": settings.variant,
    "start-rules": settings.rules,
    "start-time-control": settings.time_control,
    "start-white": settings.white,
    "start-black": settings.black,
    "start-round": settings.round,
    "start-event": settings.event,
    "start-fen": settings.start,
    "players-white": settings.white,
    "players-black": settings.black,
  };
  for (const [id, value] of Object.entries(values)) {
    $(id).value = typeof value === "string" && value !== "?" ? value : "";
  }
  if (!$("start-variant").value && $("start-variant").options.length) $("start-variant").selectedIndex = 0;
  if (!$("start-rules").value && $("start-rules").options.length) $("start-rules").selectedIndex = 0;
}

// What "accept" and "reject" mean for a claim: the claimant decides an offered claim, the
// arbiter rules on a claim that was made.
function decisionLabel(claim, decision) {
  if (claim.status === "offered") return decision === "accept" ? "Claim it (accept)" : "Decline (reject)";
  return decision === "accept" ? "Uphold (accept)" : "Reject";
}

let drawnClaims = "";
let drawnMoves = "";

function renderClaims(claims) {
  const key = JSON.stringify(claims);
  if (key === drawnClaims) return;
  drawnClaims = key;
  const list = $("claims");
  list.textContent = "";
  $("no-claims").hidden = claims.length > 0;
  for (const claim of claims) {
    const li = document.createElement("li");
    li.dataset.claim = String(claim.id);
    const text = document.createElement("span");
    const who = claim.claimant ? claim.claimant + " " : "";
    const against = claim.against ? " against " + claim.against : "";
    const article = claim.article ? " [" + claim.article + "]" : "";
    text.textContent = who + claim.kind + against + " (" + claim.status + ")" + article + ": " + (claim.message || "");
    li.appendChild(text);
    for (const decision of (options && options.decisions) || ["accept", "reject"]) {
      const button = document.createElement("button");
      button.type = "button";
      button.dataset.decision = decision;
      button.textContent = decisionLabel(claim, decision);
      button.addEventListener("click", () => rule(claim.id, decision));
      li.appendChild(button);
    }
    list.appendChild(li);
  }
}

// The change log of the game at the table (corrections, players, result), from
// /api/tables/ID/corrections: fetched again whenever the moves, players or result change.
async function loadChanges(table) {
  if (table === null) return;
  const answer = await call("GET", "/api/tables/" + encodeURIComponent(table) + "/corrections");
  if (!answer.ok || table !== selected) return;
  renderChanges(Array.isArray(answer.data.corrections) ? answer.data.corrections : []);
}

function changeValue(value) {
  if (value && typeof value === "object") {
    if ("result" in value) return value.result + (value.reason ? " (" + value.reason + ")" : "");
    if ("white" in value) return value.white + " \u2013 " + value.black;
  }
  return String(value);
}

function changeText(item) {
  const when = new Date(item.time * 1000).toLocaleTimeString();
  const ply = item.ply ? " at ply " + item.ply : "";
  let text = when + " " + item.what + ply + ": " + changeValue(item.old) + " \u2192 " + changeValue(item.new);
  if (Array.isArray(item.dropped) && item.dropped.length) text += "; dropped " + item.dropped.join(" ");
  return text;
}

function renderChanges(items) {
  const list = $("changes");
  list.textContent = "";
  $("no-changes").hidden = items.length > 0;
  for (const item of items) {
    const li = document.createElement("li");
    li.textContent = changeText(item);
    list.appendChild(li);
  }
}

// The table's earlier games (GET /api/tables/ID/games), newest first, each collapsed; its
// change log (GET /api/games/TABLE-N/corrections) is read when it is opened, once: a game
// replaced at its table never changes.  The list and its heading follow "Changes to this
// game", made here.
function earlierList() {
  let list = $("earlier-games");
  if (list) return list;
  const head = document.createElement("h3");
  head.textContent = "Earlier games at this table";
  list = document.createElement("ul");
  list.id = "earlier-games";
  list.className = "items earlier";
  const none = document.createElement("p");
  none.id = "no-earlier";
  none.className = "hint";
  none.textContent = "None: no game was finished and replaced at this table yet.";
  $("no-changes").after(head, list, none);
  return list;
}

async function loadEarlier(table) {
  if (table === null) return;
  const answer = await call("GET", "/api/tables/" + encodeURIComponent(table) + "/games");
  if (!answer.ok || table !== selected) return;
  const list = earlierList();
  const games = Array.isArray(answer.data.games) ? answer.data.games : [];
  for (const game of games) {
    if (!game || game.at_table || typeof game.game !== "string") continue;
    if (list.querySelector('details[data-game="' + CSS.escape(game.game) + '"]')) continue;
    list.prepend(earlierGame(game));
  }
  $("no-earlier").hidden = list.children.length > 0;
}

function earlierGame(game) {
  const li = document.createElement("li");
  const details = document.createElement("details");
  details.dataset.game = game.game;
  const summary = document.createElement("summary");
  const count = Number(game.changes) || 0;
  const changes = count ? count + (count === 1 ? " change" : " changes") : "no change";
  summary.textContent = "Game " + shown(game.number) + " (" + game.game + ", round " + shown(game.round) + "): "
    + shown(game.white) + " \u2013 " + shown(game.black) + " " + shown(game.result) + ", " + changes;
  const log = document.createElement("ul");
  log.className = "items changes";
  details.append(summary, log);
  details.addEventListener("toggle", () => {
    if (details.open && details.dataset.read !== "1") readEarlierLog(game.game, details, log);
  });
  li.appendChild(details);
  return li;
}

async function readEarlierLog(game, details, log) {
  details.dataset.read = "1";
  log.textContent = "";
  const answer = await call("GET", "/api/games/" + encodeURIComponent(game) + "/corrections");
  const items = answer.ok && Array.isArray(answer.data.corrections) ? answer.data.corrections : null;
  if (items === null) {
    delete details.dataset.read;  // read again when opened again
    const li = document.createElement("li");
    li.className = "error";
    li.textContent = "cannot read its change log: " + answer.error;
    log.appendChild(li);
    return;
  }
  for (const item of items) {
    const li = document.createElement("li");
    li.textContent = changeText(item);
    log.appendChild(li);
  }
  if (!items.length) {
    const li = document.createElement("li");
    li.className = "hint";
    li.textContent = "None: no move, player or result was changed by a command.";
    log.appendChild(li);
  }
}

function renderIrregularities(items) {
  const list = $("irregularities");
  list.textContent = "";
  $("no-irregularities").hidden = items.length > 0;
  for (const item of items.slice(-20)) {
    const li = document.createElement("li");
    const side = item.side ? item.side + ": " : "";
    const article = item.article ? " [" + item.article + "]" : "";
    li.textContent = side + item.kind + article + " \u2013 " + (item.message || "");
    list.appendChild(li);
  }
}

function renderMoves(moves) {
  const key = JSON.stringify(moves.map((m) => [m.ply, m.uci, m.san, m.illegal, m.alternatives]));
  if (key === drawnMoves) return;
  drawnMoves = key;
  const list = $("moves");
  list.textContent = "";
  for (const move of moves) {
    const li = document.createElement("li");
    const button = document.createElement("button");
    button.type = "button";
    button.className = "move";
    button.dataset.ply = String(move.ply);
    const dots = move.side === "black" ? "\u2026 " : ". ";
    button.textContent = move.number + dots + move.san + " (ply " + move.ply + ", " + move.uci + ")" + (move.illegal ? " illegal" : "");
    button.addEventListener("click", () => {
      $("correct-ply").value = String(move.ply);
      if (String(move.uci).includes("@")) $("drop-kind-ply").value = String(move.ply);
      $("correct-uci").focus();
    });
    li.appendChild(button);
    // A move the board could not tell from others (a presence-only board, a capture next to
    // a piece knocked over): one button per other reading fills in the correction.
    for (const other of Array.isArray(move.alternatives) ? move.alternatives : []) {
      if (!other || typeof other.uci !== "string") continue;
      const pick = document.createElement("button");
      pick.type = "button";
      pick.className = "alternative";
      pick.textContent = "or " + String(other.san || other.uci) + "?";
      pick.title = "The board read this the same: click to correct ply " + move.ply + " to " + other.uci;
      pick.addEventListener("click", () => {
        $("correct-ply").value = String(move.ply);
        $("correct-uci").value = other.uci;
        $("correct-uci").focus();
      });
      li.appendChild(pick);
    }
    list.appendChild(li);
  }
}

// A decision the board cannot show (20-chess: the rule cast for a turn, the piece the
// opponent picks under rule 5): shown while one is due, with a button per option or a
// field for the rule; after an answer the form stays until the table is changed, so the
// service's answer can be read.
function renderChoice(panel) {
  const form = $("choose-form");
  const pending = panel && panel.variant === "twenty-chess" && panel.pending_choice && typeof panel.pending_choice === "object" ? panel.pending_choice : null;
  form.hidden = !(pending || chooseAnswered);
  const key = JSON.stringify([pending, panel && panel.turn, panel && panel.side]);
  if (key === drawnChoice) return;
  drawnChoice = key;
  const what = $("choose-what");
  const buttons = $("choose-options");
  buttons.textContent = "";
  $("choose-none").hidden = pending !== null;
  what.hidden = pending === null;
  const rule = pending !== null && pending.what === "rule";
  $("choose-rule").hidden = !rule;
  $("choose-submit").hidden = !rule;
  $("choose-value").required = rule;
  if (pending === null) return;
  const who = pending.by === "black" ? "Black" : "White";
  const side = panel.side === "black" ? "Black" : "White";
  what.dataset.what = String(pending.what);
  if (rule) {
    what.textContent = "Turn " + shown(panel.turn) + ": the rule is to be cast \u2013 " + who + " enters the die's number.";
    $("choose-value").value = "";
    return;
  }
  what.textContent = "Turn " + shown(panel.turn) + ", rule " + shown(panel.rule) + ": " + who + " picks the piece " + side + " drops.";
  const options = Array.isArray(pending.options) ? pending.options : [];
  for (const option of options) {
    const button = document.createElement("button");
    button.type = "button";
    button.dataset.value = String(option);
    button.textContent = String(option);
    button.addEventListener("click", () => choose(String(pending.what), String(option), button));
    buttons.appendChild(button);
  }
}

function choose(what, value, button) {
  chooseAnswered = true;
  send("choose", { what, value }, $("choose-form").querySelector(".answer"), button);
}

// --- commands -----------------------------------------------------------------------

function text(id) {
  return $(id).value.trim();
}

// The arguments of a form's command; empty fields are left out (the table keeps its
// setting), except the start FEN: empty means the variant's start position.
function argsOf(command) {
  const args = {};
  const put = (key, id) => {
    const value = text(id);
    if (value !== "") args[key] = value;
  };
  if (command === "start") {
    put("variant", "start-variant");
    put("rules", "start-rules");
    put("time_control", "start-time-control");
    put("white", "start-white");
    put("black", "start-black");
    put("round", "start-round");
    put("event", "start-event");
    args.start = text("start-fen") || null;
  } else if (command === "players") {
    put("white", "players-white");
    put("black", "players-black");
  } else if (command === "end") {
    put("result", "end-result");
    put("reason", "end-reason");
  } else if (command === "correct") {
    const ply = Number(text("correct-ply"));
    args.ply = Number.isInteger(ply) ? ply : text("correct-ply");
    put("uci", "correct-uci");
  } else if (command === "choose") {
    const value = text("choose-value");
    const due = $("choose-what").dataset.what;
    if (due) args.what = due;
    args.value = /^[0-9]+$/.test(value) ? Number(value) : value;
  } else if (command === "drop_kind") {
    const ply = text("drop-kind-ply");
    args.ply = /^[0-9]+$/.test(ply) ? Number(ply) : ply || "last";
    put("kind", "drop-kind-kind");
  } else if (command === "claim") {
    put("side", "claim-side");
    put("kind", "claim-kind");
    put("uci", "claim-uci");
  }
  return args;
}

function describe(command, data) {
  const events = Array.isArray(data.events) ? data.events : [];
  const notes = events.map((e) => (e.message ? e.type + ": " + e.message : e.type)).filter(Boolean);
  return command + " on table " + data.table + ": done" + (notes.length ? " \u2013 " + notes.join("; ") : "");
}

async function send(command, args, answer, button) {
  if (selected === null) return;
  const table = selected;
  if (button) button.disabled = true;
  say(answer, true, command + ": sending\u2026");
  try {
    const result = await call("POST", "/api/admin/tables/" + encodeURIComponent(table) + "/" + command, args);
    if (result.ok) {
      say(answer, true, oneLine(describe(command, result.data)));
      if (command === "start" || command === "players") await refill(table);
    } else if (result.status === 503) {
      // Kept in memory and retried by the service; shown once it is stored.
      say(answer, false, result.error);
      if (typeof storeBanner !== "undefined") storeBanner.check();
    } else if (needsConfirm(command, args, result)) {
      // The correction would drop later moves: the arbiter sees which, and decides.
      say(answer, false, "not sent: " + result.error);
      if (window.confirm(dropQuestion(result.error))) {
        if (button) button.disabled = false;
        await send(command, { ...args, confirm: true }, answer, button);
      } else {
        say(answer, false, "not corrected: nothing was changed");
      }
    } else {
      say(answer, false, "refused (" + (result.status || "no answer") + "): " + result.error);
      if (result.status === 401) showLogin(result.error);
    }
  } finally {
    if (button) button.disabled = false;
  }
}

// A correction refused because it would drop later moves: the refusal names them and asks
// for "confirm: true".
function needsConfirm(command, args, result) {
  return command === "correct" && args.confirm !== true && result.status === 400
    && typeof result.error === "string" && result.error.includes("send confirm: true");
}

// "correcting move 1 to g1h3 drops the 3 later moves it makes illegal: 2. Nf3 Nc6 3. d4;
// send confirm: true ..." as a question.
function dropQuestion(error) {
  const cut = error.indexOf("; send confirm: true");
  const what = cut >= 0 ? error.slice(0, cut) : error;
  return what.charAt(0).toUpperCase() + what.slice(1) + ".\n\nCorrect the move and drop them?";
}

// The forms show the table's settings again after they changed.
async function refill(table) {
  const answer = await call("GET", "/api/tables/" + encodeURIComponent(table));
  if (!answer.ok || table !== selected) return;
  prefilled = false;
  renderDetail(answer.data);
}

function rule(claimId, decision) {
  send("rule", { claim: String(claimId), decision }, $("rule-answer"), null);
}

function wireForm(form) {
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const command = form.dataset.command;
    if (command === "choose") chooseAnswered = true;
    send(command, argsOf(command), form.querySelector(".answer"), form.querySelector("button[type=submit]"));
  });
}

document.addEventListener("DOMContentLoaded", () => {
  $("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const candidate = $("token").value.trim();
    if (candidate) useToken(candidate);
  });
  $("forget").addEventListener("click", forgetToken);
  for (const form of document.querySelectorAll("form[data-command]")) wireForm(form);
  const kept = sessionStorage.getItem(TOKEN_KEY);
  if (kept) useToken(kept);
  else showLogin();
});
