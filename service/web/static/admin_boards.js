"use strict";
// The arbiter's desk on the admin page (kept apart from the commands in admin.js): the
// tables that need a hand, listed first, and a board per table drawn from the game with the
// squares to set right marked (common.js draws them as the other pages do).
const deskCards = new Map();

// Why a table needs a hand (empty: it does not): squares to set right, claims,
// irregularities, a board that is not up.
function handReasons(id, s) {
  const out = [];
  const fix = needsHand(id, s) ? s.set_right.length : 0;
  if (fix) out.push((s.phase === "playing" ? "board differs from the game: " : "set up: ") + fix + (fix > 1 ? " squares" : " square"));
  if (s.claims) out.push(s.claims + (s.claims > 1 ? " claims" : " claim"));
  if (s.irregularities) out.push(s.irregularities + (s.irregularities > 1 ? " irregularities" : " irregularity"));
  const link = linkText(s);
  if (link.down) out.push(link.text);
  return out;
}

function deskCard(id) {
  let c = deskCards.get(id);
  if (c) return c;
  const card = document.createElement("div");
  card.className = "desk-card";
  card.dataset.table = id;
  const head = document.createElement("button");
  head.type = "button";
  head.className = "desk-head";
  head.addEventListener("click", () => select(id));
  const board = document.createElement("div");
  board.className = "board";
  const why = document.createElement("div");
  why.className = "desk-why";
  card.append(head, board, why);
  c = { card, head, board, why };
  deskCards.set(id, c);
  return c;
}

function byTable(a, b) {
  return a.localeCompare(b, undefined, { numeric: true });
}

// Called by admin.js with each table's new summary.
function renderDesk(id) {
  const s = summaries.get(id);
  if (!s) return;
  const c = deskCard(id);
  c.head.textContent = "Table " + id + " · " + shown(s.white) + " – " + shown(s.black);
  drawBoard(c.board, shownPlacement(s), lastMoveOf(s), setRightOf(s));
  const reasons = handReasons(id, s);
  c.why.textContent = reasons.join(" · ");
  c.card.classList.toggle("needs-hand", reasons.length > 0);
  const list = $("hand-list");
  list.textContent = "";
  const needing = [];
  for (const [tid, t] of summaries) {
    const r = handReasons(tid, t);
    if (r.length) needing.push([tid, r]);
  }
  needing.sort((a, b) => byTable(a[0], b[0]));
  for (const [tid, r] of needing) {
    const li = document.createElement("li");
    const pick = document.createElement("button");
    pick.type = "button"; pick.className = "pick"; pick.textContent = tid;
    pick.addEventListener("click", () => select(tid));
    const span = document.createElement("span");
    span.textContent = r.join(" · ");
    li.append(pick, span);
    list.appendChild(li);
  }
  $("no-hands").hidden = needing.length > 0;
  const boards = $("desk-boards");
  const order = Array.from(deskCards.keys()).sort((a, b) => {
    const na = deskCards.get(a).card.classList.contains("needs-hand") ? 0 : 1;
    const nb = deskCards.get(b).card.classList.contains("needs-hand") ? 0 : 1;
    return na - nb || byTable(a, b);
  });
  order.forEach((tid, i) => {
    const el = deskCards.get(tid).card;
    if (boards.children[i] !== el) boards.insertBefore(el, boards.children[i] || null);
  });
}

// A board that differs from the game while playing is flagged after a grace time.
setInterval(() => { for (const id of fixSeen.keys()) renderDesk(id); }, 1000);

// The stream to the service opened (`up`) or failed: while it is down the desk says since
// when, its boards go grey and every table's board state is unknown.  Returns the text for
// the page's badge.
function deskLink(up) {
  const was = lostAt;
  if (up) lostAt = null;
  else if (lostAt === null) lostAt = Date.now() / 1000;
  document.body.classList.toggle("offline", lostAt !== null);
  if (was !== lostAt) for (const id of deskCards.keys()) renderDesk(id);
  return up ? "live" : lostText();
}
