/* gmeter: sortable, filterable tables, search, interactive charts on request, compare view.
   Every page is complete without it (charts are SVG drawn at build time). */
(function () {
  "use strict";

  function cellValue(cell, type) {
    var text = (cell ? cell.textContent : "").trim();
    if (type === "num") {
      if (text.indexOf("-∞") === 0) { return -Infinity; }
      if (text.indexOf("∞") === 0) { return Infinity; }
      var v = parseFloat(text);
      return isNaN(v) ? null : v;
    }
    return text.toLowerCase();
  }

  function sortTable(table, index, type, th) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
    var keyed = rows.map(function (row, i) {
      return { row: row, key: cellValue(row.cells[index], type), i: i };
    });
    keyed.sort(function (a, b) {
      if (a.key === null && b.key === null) { return a.i - b.i; }
      if (a.key === null) { return 1; }
      if (b.key === null) { return -1; }
      if (a.key < b.key) { return -dir; }
      if (a.key > b.key) { return dir; }
      return a.i - b.i;
    });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
    var frag = document.createDocumentFragment();
    keyed.forEach(function (k) { frag.appendChild(k.row); });
    body.appendChild(frag);
  }

  function setupSorting(table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
      var type = th.getAttribute("data-type");
      if (!type) { return; }
      var button = document.createElement("button");
      button.type = "button";
      while (th.firstChild) { button.appendChild(th.firstChild); }
      th.appendChild(button);
      button.addEventListener("click", function () { sortTable(table, index, type, th); });
    });
  }

  function setupFilter(tools) {
    var table = document.getElementById(tools.getAttribute("data-table"));
    if (!table) { return; }
    var input = tools.querySelector("input[type=search]");
    var verified = tools.querySelector("input[type=checkbox]");
    var count = tools.querySelector(".count");
    var rows = Array.prototype.slice.call(table.tBodies[0].rows);
    var texts = rows.map(function (r) { return (r.cells[2] ? r.cells[2].textContent : "").toLowerCase(); });
    function apply() {
      var q = input.value.trim().toLowerCase();
      var shown = 0;
      rows.forEach(function (row, i) {
        var ok = (!q || texts[i].indexOf(q) !== -1) && (!verified.checked || !row.classList.contains("rep"));
        row.hidden = !ok;
        if (ok) { shown += 1; }
      });
      count.textContent = shown + " of " + rows.length + " entries";
    }
    input.addEventListener("input", apply);
    verified.addEventListener("change", apply);
    tools.hidden = false;
    apply();
  }

  var TOP = document.body.getAttribute("data-top") || "";
  var vegaLoading = null;

  function loadVega() {
    // vega.js (~900 KB) is fetched only when a visitor asks for an interactive chart
    if (typeof window.vegaEmbed === "function") { return Promise.resolve(); }
    if (!vegaLoading) {
      vegaLoading = new Promise(function (resolve, reject) {
        var s = document.createElement("script");
        s.src = TOP + "assets/vega.js";
        s.onload = function () { resolve(); };
        s.onerror = function () { reject(new Error("assets/vega.js did not load")); };
        document.head.appendChild(s);
      });
    }
    return vegaLoading;
  }

  function makeInteractive(fig) {
    var mount = fig.querySelector(".vl[data-spec-href]");
    var button = fig.querySelector("button.interact");
    if (!mount || !button) { return; }
    button.hidden = false;
    button.addEventListener("click", function () {
      button.disabled = true;
      button.textContent = "Loading…";
      var spec;
      fetch(mount.getAttribute("data-spec-href"))
        .then(function (r) { return r.json(); })
        .then(function (s) { spec = s; return loadVega(); })
        .then(function () {
          var box = document.createElement("div");
          mount.textContent = "";
          mount.appendChild(box);
          mount.classList.add("live");
          return window.vegaEmbed(box, spec, { ast: true, renderer: "svg", actions: false, defaultStyle: false });
        })
        .then(function () { button.hidden = true; })
        .catch(function (err) {
          button.textContent = "Interactive chart unavailable";
          console.warn("gmeter chart: " + err.message);
        });
    });
  }

  function escapeHtml(t) {
    return String(t).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }

  var pagefind = null;
  function getPagefind() {
    if (!pagefind) {
      var url = new URL(TOP + "pagefind/pagefind.js", document.baseURI).href;
      pagefind = import(url).then(function (pf) {
        var base = new URL(TOP || "./", document.baseURI).pathname;
        return Promise.resolve(pf.options ? pf.options({ baseUrl: base }) : null).then(function () { return pf; });
      });
    }
    return pagefind;
  }

  function runSearch(q, limit) {
    return getPagefind().then(function (pf) { return pf.search(q); }).then(function (res) {
      return Promise.all(res.results.slice(0, limit).map(function (r) { return r.data(); }));
    });
  }

  function resultHtml(d) {
    var title = (d.meta && d.meta.title) || d.url;
    return '<a href="' + escapeHtml(d.url) + '">' + escapeHtml(title) + "<small>" + (d.excerpt || "") + "</small></a>";
  }

  function setupSearch(form) {
    var input = form.querySelector("input[type=search]");
    var box = form.querySelector(".search-results");
    if (!input || !box) { return; }
    var seq = 0;
    var first = null;
    input.addEventListener("input", function () {
      var q = input.value.trim();
      var mine = ++seq;
      if (!q) { box.hidden = true; box.innerHTML = ""; first = null; return; }
      runSearch(q, 8).then(function (items) {
        if (mine !== seq) { return; }
        first = items.length ? items[0].url : null;
        box.innerHTML = items.length ? items.map(resultHtml).join("") : "<p>No match.</p>";
        box.hidden = false;
      }).catch(function (err) {
        box.innerHTML = "<p>Search is unavailable here (" + escapeHtml(err.message) + ").</p>";
        box.hidden = false;
      });
    });
    input.addEventListener("focus", function () { if (!pagefind) { getPagefind().catch(function () {}); } });
    form.addEventListener("submit", function (ev) {
      if (first) { ev.preventDefault(); window.location.href = first; }
    });
    document.addEventListener("click", function (ev) { if (!form.contains(ev.target)) { box.hidden = true; } });
    input.addEventListener("keydown", function (ev) { if (ev.key === "Escape") { box.hidden = true; } });
  }

  function setupSearchPage(out) {
    var q = new URLSearchParams(window.location.search).get("q") || "";
    var input = document.getElementById("search-q");
    if (input) { input.value = q; }
    if (!q.trim()) { return; }
    runSearch(q.trim(), 30).then(function (items) {
      out.innerHTML = items.length ? items.map(resultHtml).join("") : "<p>No page matches “" + escapeHtml(q) + "”.</p>";
    }).catch(function (err) { out.textContent = "Search is unavailable here (" + err.message + ")."; });
  }

  function fmtDiff(a, b) {
    if (a === null || b === null || a === undefined || b === undefined) { return "—"; }
    var d = a - b;
    var m = Math.abs(d);
    return (d > 0 ? "+" : "") + (m !== 0 && (m < 1e-3 || m >= 1e6) ? d.toExponential(3) : d.toPrecision(4).replace(/\.?0+$/, ""));
  }

  function setupCompare(form) {
    var data = JSON.parse(document.getElementById("compare-data").textContent);
    var body = document.querySelector("#compare-table tbody");
    function draw() {
      var a = data.entries[form.elements.a.value], b = data.entries[form.elements.b.value];
      body.innerHTML = data.metrics.map(function (m) {
        var va = a.v[m.m], vb = b.v[m.m];
        if (!va && !vb) { return ""; }
        var overlap = "—";
        if (va && vb && va[1] !== null && va[2] !== null && vb[1] !== null && vb[2] !== null) {
          overlap = (va[1] <= vb[2] && vb[1] <= va[2]) ? "overlap: not told apart" : "disjoint: told apart";
        }
        function cell(v) { return v ? escapeHtml(v[3]) + (v[4] ? " <small>" + escapeHtml(v[4]) + "</small>" : "") : "—"; }
        return "<tr><th scope=row>" + escapeHtml(m.label) + "</th><td class=n>" + cell(va) + "</td><td class=n>" + cell(vb) +
          "</td><td class=n>" + fmtDiff(va && va[0], vb && vb[0]) + "</td><td>" + overlap + "</td></tr>";
      }).join("");
    }
    form.addEventListener("change", draw);
    form.hidden = false;
    draw();
  }

  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), setupSorting);
  Array.prototype.forEach.call(document.querySelectorAll(".tools[data-table]"), setupFilter);
  Array.prototype.forEach.call(document.querySelectorAll("figure.chart"), makeInteractive);
  Array.prototype.forEach.call(document.querySelectorAll("form.search"), setupSearch);
  var sp = document.getElementById("search-page-results");
  if (sp) { setupSearchPage(sp); }
  var cf = document.getElementById("compare");
  if (cf) { setupCompare(cf); }
}());
