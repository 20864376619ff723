/* gmeter: sortable, filterable tables and chart embedding. The page is complete without it. */
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

  function embedCharts() {
    var mounts = document.querySelectorAll(".vl[data-spec]");
    if (!mounts.length) { return; }
    if (typeof window.vegaEmbed !== "function") {
      console.error("gmeter: the Vega bundle (assets/vega.js) did not load");
      return;
    }
    Array.prototype.forEach.call(mounts, function (el) {
      var source = document.getElementById(el.getAttribute("data-spec"));
      var spec = JSON.parse(source.textContent);
      window.vegaEmbed(el, spec, { ast: true, renderer: "svg", actions: false, defaultStyle: false })
        .then(function () { el.classList.add("ready"); })
        .catch(function (err) {
          el.classList.add("failed");
          el.textContent = "This chart could not be drawn (" + err.message + "); its data is in the spec file.";
          console.error("gmeter chart " + el.getAttribute("data-spec") + ": " + err.message);
        });
    });
  }

  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), setupSorting);
  Array.prototype.forEach.call(document.querySelectorAll(".tools[data-table]"), setupFilter);
  embedCharts();
}());
