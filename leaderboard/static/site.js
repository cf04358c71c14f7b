/* Leaderboard behaviour: click-to-sort tables and the decoding-timeline slider. No dependency, no network.
   Without JavaScript every table is a plain, readable table already ranked. */
(function () {
  "use strict";

  function cellValue(row, idx, type) {
    var cell = row.cells[idx];
    if (!cell) { return null; }
    var v = cell.getAttribute("data-value");
    if (v === null) { v = cell.textContent.trim(); }
    if (type === "num") {
      var f = parseFloat(v);
      return v === "" || isNaN(f) ? null : f;
    }
    return v.toLowerCase();
  }

  function sortTable(table, idx, th) {
    var type = th.getAttribute("data-type") || "text";
    var current = th.getAttribute("aria-sort");
    var asc = current === "ascending" ? false : current === "descending" ? true
      : (th.getAttribute("data-dir") || "asc") === "asc";
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows).map(function (row, i) {
      return { row: row, i: i, v: cellValue(row, idx, type) };
    });
    rows.sort(function (a, b) {
      if (a.v === null && b.v === null) { return a.i - b.i; }
      if (a.v === null) { return 1; }
      if (b.v === null) { return -1; }
      var c = a.v < b.v ? -1 : a.v > b.v ? 1 : 0;
      return (asc ? c : -c) || a.i - b.i;
    });
    rows.forEach(function (r) { body.appendChild(r.row); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", asc ? "ascending" : "descending");
  }

  function initSort() {
    Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
      if (!table.tHead || !table.tBodies.length) { return; }
      Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, idx) {
        if (!th.hasAttribute("data-type")) { return; }
        var btn = document.createElement("button");
        btn.type = "button";
        btn.className = "sort-btn";
        while (th.firstChild) { btn.appendChild(th.firstChild); }
        th.appendChild(btn);
        btn.addEventListener("click", function () { sortTable(table, idx, th); });
      });
    });
  }

  function initSlider() {
    var dataEl = document.getElementById("timeline-data");
    var input = document.getElementById("moment");
    if (!dataEl || !input) { return; }
    var d = JSON.parse(dataEl.textContent);
    var out = document.getElementById("moment-value");
    var partial = document.getElementById("partial");
    var svg = document.querySelector("svg.timeline");
    var cursor = svg ? svg.querySelector(".cursor") : null;
    var words = document.querySelectorAll("#source-text .w");

    function textAt(t) {
      var i, text = "";
      if (d.revisions.length) {
        for (i = 0; i < d.revisions.length && d.revisions[i].t <= t; i++) { text = d.revisions[i].text; }
        return text;
      }
      for (i = 0; i < d.delays.length && d.delays[i] <= t; i++) { /* count written tokens */ }
      return d.tokens.slice(0, i).join(d.joiner);
    }

    function update() {
      var t = parseFloat(input.value);
      var text = textAt(t);
      partial.textContent = text || "(nothing written yet)";
      partial.classList.toggle("is-empty", !text);
      out.textContent = d.unit === "ms" ? (t / 1000).toFixed(2) + " s of " + (d.sourceLength / 1000).toFixed(2) + " s"
        : t + " of " + d.sourceLength + " " + d.unit + "s";
      if (cursor) {
        var x0 = parseFloat(svg.getAttribute("data-x0")), x1 = parseFloat(svg.getAttribute("data-x1"));
        var max = parseFloat(svg.getAttribute("data-max")) || 1;
        var x = x0 + (x1 - x0) * Math.min(t, max) / max;
        cursor.setAttribute("x1", x);
        cursor.setAttribute("x2", x);
      }
      Array.prototype.forEach.call(words, function (w, i) { w.classList.toggle("read", i < t); });
    }
    input.addEventListener("input", update);
    update();
  }

  document.addEventListener("DOMContentLoaded", function () {
    initSort();
    initSlider();
  });
}());
