/* gmeter: sortable, filterable tables, search, interactive charts on request, compare view.
   Every page is complete without it (charts are SVG drawn at build time). */
(function () {
  "use strict";

  // URL state: ?sort=<column key>&dir=asc|desc&q=<filter>&verified=1 (other tables: "<id>-sort" ...)
  function param(table, name) { return (table.id === "lb" ? "" : table.id + "-") + name; }
  function readState(table, name) { return new URLSearchParams(window.location.search).get(param(table, name)); }
  function writeState(table, pairs) {
    var u = new URL(window.location.href);
    Object.keys(pairs).forEach(function (k) {
      if (pairs[k] === null || pairs[k] === "") { u.searchParams.delete(param(table, k)); }
      else { u.searchParams.set(param(table, k), pairs[k]); }
    });
    if (u.href !== window.location.href) { window.history.replaceState(null, "", u.href); }
  }

  // A sort key: {k: number|string|null, last: bool}. "last" keys (∞, a step curve, no value) stay
  // below every finite value in both directions: they are not numbers one can order by.
  function cellKey(cell, type) {
    var text = (cell ? cell.textContent : "").trim();
    if (type !== "num") { return { k: text.toLowerCase(), last: text === "" || text === "—" }; }
    if (cell && cell.querySelector(".mark")) { return { k: null, last: true, why: "step" }; }
    if (/^[-−]?∞/.test(text)) { return { k: null, last: true, why: "∞" }; }
    var v = parseFloat(text.replace("−", "-"));
    return isNaN(v) ? { k: null, last: true } : { k: v, last: false };
  }

  function sortTable(table, th, dir) {
    var index = Array.prototype.indexOf.call(th.parentNode.cells, th);
    var type = th.getAttribute("data-type");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var whys = {};
    var keyed = rows.map(function (row, i) {
      var key = cellKey(row.cells[index], type);
      if (key.why) { whys[key.why] = (whys[key.why] || 0) + 1; }
      return { row: row, key: key, i: i };
    });
    keyed.sort(function (a, b) {
      if (a.key.last || b.key.last) {
        if (a.key.last && b.key.last) { return a.i - b.i; }
        return a.key.last ? 1 : -1;
      }
      if (a.key.k < b.key.k) { return -dir; }
      if (a.key.k > b.key.k) { return dir; }
      return a.i - b.i;
    });
    Array.prototype.forEach.call(th.parentNode.cells, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
    var frag = document.createDocumentFragment();
    keyed.forEach(function (k) { frag.appendChild(k.row); });
    body.appendChild(frag);
    var note = table.closest("section") && table.closest("section").querySelector(".sort-note");
    if (note) {
      var kinds = Object.keys(whys);
      note.hidden = !kinds.length;
      note.textContent = kinds.length ? "Sorted by " + th.textContent.trim() + ": " +
        kinds.map(function (w) { return whys[w] + " “" + w + "” value" + (whys[w] > 1 ? "s" : ""); }).join(" and ") +
        " listed last in either direction: " + (whys["∞"] ? "∞ is not a finite number to order by" : "") +
        (whys["∞"] && whys.step ? "; " : "") + (whys.step ? "a step curve has no finite value under the track's convention" : "") +
        " (see the method below)." : "";
    }
  }

  function setupSorting(table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th) {
      var type = th.getAttribute("data-type");
      if (!type) { return; }
      var button = document.createElement("button");
      button.type = "button";
      while (th.firstChild) { button.appendChild(th.firstChild); }
      th.appendChild(button);
      button.addEventListener("click", function () {
        var now = th.getAttribute("aria-sort");
        var dir;
        if (now === "ascending") { dir = -1; }
        else if (now === "descending") { dir = 1; }
        else { dir = th.getAttribute("data-better") === "higher" ? -1 : 1; }  // best first
        sortTable(table, th, dir);
        writeState(table, { sort: th.getAttribute("data-key"), dir: dir === 1 ? "asc" : "desc" });
      });
    });
    var key = readState(table, "sort");
    if (key) {
      var th = Array.prototype.filter.call(heads, function (h) { return h.getAttribute("data-key") === key; })[0];
      if (th && th.getAttribute("data-type")) { sortTable(table, th, readState(table, "dir") === "asc" ? 1 : -1); }
    }
  }

  function setupFilter(tools) {
    var table = document.getElementById(tools.getAttribute("data-table"));
    if (!table) { return; }
    var input = tools.querySelector("input[type=search]");
    var verified = tools.querySelector("input[type=checkbox]");
    var count = tools.querySelector(".count");
    var section = table.closest("section") || document;
    var restBox = section.querySelector(".rest-matches");
    var restData = document.getElementById("lb-rest");
    var rest = restData ? JSON.parse(restData.textContent) : [];
    var rows = Array.prototype.slice.call(table.tBodies[0].rows);
    var texts = rows.map(function (r) { return (r.cells[2] ? r.cells[2].textContent : "").toLowerCase(); });
    var restTexts = rest.map(function (e) { return (e[1] + " " + e[2]).toLowerCase(); });
    function apply() {
      var q = input.value.trim().toLowerCase();
      var shown = 0;
      rows.forEach(function (row, i) {
        var ok = (!q || texts[i].indexOf(q) !== -1) && (!verified.checked || !row.classList.contains("rep"));
        row.hidden = !ok;
        if (ok) { shown += 1; }
      });
      var more = [];
      if (q && restBox) {
        rest.forEach(function (e, i) { if (restTexts[i].indexOf(q) !== -1) { more.push(e); } });
        restBox.innerHTML = more.length ? "<p class=meta>" + more.length + " more match" + (more.length > 1 ? "es" : "") +
          " among the entries below the first " + rows.length + ":</p><ul class=index>" + more.slice(0, 50).map(function (e) {
            return "<li>#" + escapeHtml(e[0]) + " <a href=\"" + escapeHtml(e[3]) + "\">" + escapeHtml(e[1] || e[2]) + "</a>" +
              (e[1] ? " <small>" + escapeHtml(e[2]) + "</small>" : "") + "</li>";
          }).join("") + "</ul>" : "";
        restBox.hidden = !more.length;
      } else if (restBox) { restBox.hidden = true; restBox.innerHTML = ""; }
      var total = rows.length + rest.length;
      count.textContent = (shown + more.length) + " of " + total + " entries";
      writeState(table, { q: input.value.trim(), verified: verified.checked ? "1" : null });
    }
    var q0 = readState(table, "q");
    if (q0) { input.value = q0; }
    if (readState(table, "verified") === "1") { verified.checked = true; }
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
    var params = new URLSearchParams(window.location.search);
    ["a", "b"].forEach(function (k) {
      var v = params.get(k), sel = form.elements[k];
      if (v !== null && Array.prototype.some.call(sel.options, function (o) { return o.value === v; })) { sel.value = v; }
    });
    form.addEventListener("change", function () {
      var u = new URL(window.location.href);
      u.searchParams.set("a", form.elements.a.value);
      u.searchParams.set("b", form.elements.b.value);
      window.history.replaceState(null, "", u.href);
      draw();
    });
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
