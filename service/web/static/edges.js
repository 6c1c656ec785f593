"use strict";
// The edges panel of the overview: shown only when the service is a read replica of
// several edges' halls (GET /api/edges answers a list; a hall of its own answers null).
// Each edge: how old its last heartbeat is, its clock skew, its tables, rows waiting.
(function () {
  const REFRESH = 5000;
  let panel = null;

  function seconds(value) {
    return value < 10 ? value.toFixed(1) + " s" : Math.round(value) + " s";
  }

  function row(edge) {
    const tr = document.createElement("tr");
    const late = edge.late !== false;
    tr.classList.toggle("late", late);
    const cells = [
      edge.id,
      edge.age === null ? "no heartbeat" : seconds(edge.age) + " ago",
      edge.skew === null ? "?" : (edge.skew >= 0 ? "+" : "") + edge.skew.toFixed(2) + " s",
      String(edge.tables),
      edge.waiting === null ? "?" : String(edge.waiting),
      edge.store || "?",
      (edge.refused || []).join("; "),
    ];
    for (const text of cells) {
      const td = document.createElement("td");
      td.textContent = text;
      tr.appendChild(td);
    }
    return tr;
  }

  function show(edges) {
    if (!panel) {
      panel = document.createElement("section");
      panel.id = "edges";
      panel.className = "edges";
      const table = document.createElement("table");
      const head = document.createElement("tr");
      for (const name of ["Edge", "Heartbeat", "Clock skew", "Tables", "Waiting", "Store", "Refused"]) {
        const th = document.createElement("th");
        th.textContent = name;
        head.appendChild(th);
      }
      table.append(document.createElement("thead"), document.createElement("tbody"));
      table.tHead.appendChild(head);
      panel.appendChild(table);
      const main = document.getElementById("tables");
      main.parentNode.insertBefore(panel, main);
    }
    const body = panel.querySelector("tbody");
    body.replaceChildren(...edges.map(row));
  }

  async function refresh() {
    try {
      const response = await fetch("/api/edges", { cache: "no-store" });
      if (!response.ok) return;
      const answer = await response.json();
      if (!Array.isArray(answer.edges)) return; // a hall of its own: no panel, no more asking
      show(answer.edges);
    } catch (e) {
      // the service is away: the live badge says so; try again later
    }
    setTimeout(refresh, REFRESH);
  }

  document.addEventListener("DOMContentLoaded", refresh);
})();
