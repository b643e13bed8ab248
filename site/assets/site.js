// FeatBench site behaviour: theme toggle, sortable tables, filters whose
// state lives in the URL, the compare view and charts. Every table is in the
// HTML already; this script only sorts, filters and draws.
(function () {
  "use strict";

  var root = document.documentElement;

  // ---- theme -------------------------------------------------------------
  function storedTheme() {
    try { return localStorage.getItem("featbench-theme"); } catch (e) { return null; }
  }
  function isDark() {
    var t = root.getAttribute("data-theme");
    if (t) return t === "dark";
    return window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
  }
  var initial = storedTheme();
  if (initial === "dark" || initial === "light") root.setAttribute("data-theme", initial);

  // ---- URL state -----------------------------------------------------------
  function params() { return new URLSearchParams(window.location.search); }
  function saveParams(p) {
    var q = p.toString();
    var url = window.location.pathname + (q ? "?" + q : "") + window.location.hash;
    window.history.replaceState(null, "", url);
  }

  // ---- sorting -------------------------------------------------------------
  function cellValue(row, idx, numeric) {
    var cell = row.cells[idx];
    if (!cell) return numeric ? null : "";
    var v = cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent.trim();
    // Compare cells: resolved, then not resolved, then no prediction.
    if (cell.classList.contains("cmp")) v = cell.classList.contains("yes") ? "2" : cell.classList.contains("no") ? "1" : "0";
    if (!numeric) return v.toLowerCase();
    if (v === "") return null;
    var n = parseFloat(v);
    return isNaN(n) ? null : n;
  }

  function sortTable(table, key, dir) {
    var ths = table.tHead.rows[0].cells;
    var idx = -1, numeric = false;
    for (var i = 0; i < ths.length; i++) {
      if (ths[i].getAttribute("data-key") === key) { idx = i; numeric = ths[i].getAttribute("data-type") === "num"; }
      ths[i].removeAttribute("aria-sort");
    }
    if (idx < 0) return false;
    ths[idx].setAttribute("aria-sort", dir === "asc" ? "ascending" : "descending");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = cellValue(a, idx, numeric), y = cellValue(b, idx, numeric);
      // Missing values sort last whatever the direction.
      if (x === null && y === null) return 0;
      if (x === null) return 1;
      if (y === null) return -1;
      var c = x < y ? -1 : x > y ? 1 : 0;
      return dir === "asc" ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    return true;
  }

  function initSortable(table, withURL) {
    var head = table.tHead && table.tHead.rows[0];
    if (!head) return;
    Array.prototype.forEach.call(head.cells, function (th) {
      var key = th.getAttribute("data-key");
      if (!key) return;
      th.tabIndex = 0;
      function activate(ev) {
        if (ev.target.closest("a")) return;
        var cur = th.getAttribute("aria-sort");
        var numeric = th.getAttribute("data-type") === "num";
        var dir = cur === "descending" ? "asc" : cur === "ascending" ? "desc" : (numeric ? "desc" : "asc");
        sortTable(table, key, dir);
        if (withURL) {
          var p = params();
          p.set("sort", key);
          p.set("dir", dir);
          saveParams(p);
        }
      }
      th.addEventListener("click", activate);
      th.addEventListener("keydown", function (ev) {
        if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); activate(ev); }
      });
    });
    if (withURL) {
      var p = params();
      var key = p.get("sort");
      if (key) {
        var th = head.querySelector('th[data-key="' + CSS.escape(key) + '"]');
        var dir = p.get("dir") || (th && th.getAttribute("data-type") === "num" ? "desc" : "asc");
        sortTable(table, key, dir === "asc" ? "asc" : "desc");
      }
    }
  }

  // ---- filters -------------------------------------------------------------
  // A filter form names its table with data-board, data-index or
  // data-compare; its fields are URL parameters of the same names.
  //
  // The compare form's systems are the parameter s, which has three states:
  // absent means the default, every system (the page as served); s=a&s=b
  // means exactly those systems; a lone empty s= means explicitly none, so
  // that unticking every system survives a reload or a shared link.
  function formState(form) {
    var p = params();
    Array.prototype.forEach.call(form.elements, function (el) {
      if (!el.name) return;
      if (el.type === "checkbox") {
        var vals = p.getAll(el.name);
        if (form.hasAttribute("data-compare") && el.name === "s") {
          // Set every box either way: the browser may have restored an
          // older state of the form on reload.
          el.checked = p.has("s") ? vals.indexOf(el.value) >= 0 : el.defaultChecked;
        } else {
          el.checked = vals.indexOf(el.value) >= 0;
        }
      } else if (p.has(el.name)) {
        el.value = p.get(el.name);
      }
    });
  }

  function writeState(form) {
    var p = params();
    var names = {};
    Array.prototype.forEach.call(form.elements, function (el) { if (el.name) names[el.name] = true; });
    Object.keys(names).forEach(function (n) { p.delete(n); });
    Array.prototype.forEach.call(form.elements, function (el) {
      if (!el.name) return;
      if (el.type === "checkbox") {
        if (el.checked) p.append(el.name, el.value);
      } else if (el.value) {
        p.set(el.name, el.value);
      }
    });
    if (form.hasAttribute("data-compare")) {
      // All systems chosen is the default: keep the URL short. None chosen
      // is written s= so that it does not read back as the default.
      var boxes = form.querySelectorAll('input[name="s"]');
      var all = Array.prototype.every.call(boxes, function (b) { return b.checked; });
      if (all) p.delete("s");
      else if (!p.has("s")) p.append("s", "");
    }
    saveParams(p);
  }

  function value(form, name) {
    var el = form.elements[name];
    return el && el.value ? el.value : "";
  }
  function checkedValues(form, name) {
    return Array.prototype.filter.call(form.querySelectorAll('input[name="' + name + '"]'), function (b) {
      return b.checked;
    }).map(function (b) { return b.value; });
  }

  function applyBoard(form, table) {
    var q = value(form, "q").toLowerCase();
    var scaffold = value(form, "scaffold"), weights = value(form, "weights");
    var checked = checkedValues(form, "checked").length > 0;
    var tags = checkedValues(form, "tag");
    var shown = 0, rows = table.tBodies[0].rows;
    Array.prototype.forEach.call(rows, function (r) {
      var ok = true;
      if (q && (r.getAttribute("data-search") || "").indexOf(q) < 0) ok = false;
      if (scaffold && r.getAttribute("data-open-scaffold") !== (scaffold === "open" ? "yes" : "no")) ok = false;
      if (weights && r.getAttribute("data-open-weights") !== (weights === "open" ? "yes" : "no")) ok = false;
      if (checked && r.getAttribute("data-checked") !== "yes") ok = false;
      if (tags.length) {
        var have = (r.getAttribute("data-tags") || "").split("|");
        tags.forEach(function (t) { if (have.indexOf(t) < 0) ok = false; });
      }
      r.hidden = !ok;
      if (ok) shown++;
    });
    return [shown, rows.length];
  }

  function applyIndex(form, table) {
    var q = value(form, "q").toLowerCase(), repo = value(form, "repo"), level = value(form, "level");
    var shown = 0, rows = table.tBodies[0].rows;
    Array.prototype.forEach.call(rows, function (r) {
      var ok = true;
      if (q && (r.getAttribute("data-search") || "").toLowerCase().indexOf(q) < 0) ok = false;
      if (repo && r.getAttribute("data-repo") !== repo) ok = false;
      if (level && r.getAttribute("data-level") !== level) ok = false;
      r.hidden = !ok;
      if (ok) shown++;
    });
    return [shown, rows.length];
  }

  // compareHint returns the message shown while fewer than two systems are
  // chosen, made on first use (without JavaScript every column shows and no
  // message is needed).
  function compareHint(form) {
    var id = form.getAttribute("data-compare") + "-hint";
    var hint = document.getElementById(id);
    if (!hint) {
      hint = document.createElement("p");
      hint.id = id;
      hint.className = "compare-hint";
      hint.setAttribute("role", "status");
      hint.hidden = true;
      form.parentNode.insertBefore(hint, form.nextSibling);
    }
    return hint;
  }

  function applyCompare(form, table) {
    var chosen = checkedValues(form, "s");
    var diffOnly = checkedValues(form, "diff").length > 0;
    var hint = compareHint(form);
    var wrap = table.closest(".table-wrap") || table;
    hint.hidden = chosen.length >= 2;
    if (chosen.length === 0) {
      hint.textContent = "No system chosen. Choose two or more systems above to compare them instance by instance.";
    } else if (chosen.length === 1) {
      hint.textContent = "Only one system chosen. Choose two or more systems to compare them instance by instance.";
    }
    // With no system chosen the table would be only instance names: the
    // message replaces it.
    wrap.hidden = chosen.length === 0;
    // The columns of the chosen systems, by their headers.
    var cols = [], ths = table.tHead.rows[0].cells;
    for (var i = 0; i < ths.length; i++) {
      var key = ths[i].getAttribute("data-system");
      if (key === null) continue;
      ths[i].hidden = chosen.indexOf(key) < 0;
      cols.push([i, !ths[i].hidden]);
    }
    var shown = 0, rows = table.tBodies[0].rows;
    Array.prototype.forEach.call(rows, function (r) {
      var seen = {};
      cols.forEach(function (col) {
        var c = r.cells[col[0]];
        if (!c) return;
        c.hidden = !col[1];
        if (col[1]) seen[c.classList.contains("yes") ? "y" : "n"] = true;
      });
      var ok = !diffOnly || Object.keys(seen).length > 1;
      r.hidden = !ok;
      if (ok) shown++;
    });
    return [wrap.hidden ? 0 : shown, rows.length];
  }

  function initFilter(form) {
    var id = form.getAttribute("data-board") || form.getAttribute("data-index") || form.getAttribute("data-compare");
    var table = document.getElementById(id);
    if (!table) return;
    var apply = form.hasAttribute("data-board") ? applyBoard : form.hasAttribute("data-index") ? applyIndex : applyCompare;
    var out = form.querySelector("output");
    function run(save) {
      var r = apply(form, table);
      if (out) out.textContent = r[0] + " of " + r[1] + " shown";
      if (save) writeState(form);
    }
    formState(form);
    form.addEventListener("input", function () { run(true); });
    form.addEventListener("change", function () { run(true); });
    form.addEventListener("submit", function (ev) { ev.preventDefault(); });
    initSortable(table, true);
    table.setAttribute("data-url-state", "1");
    run(false);
  }

  // ---- charts --------------------------------------------------------------
  var charts = [];
  function drawCharts() {
    if (!window.echarts) return;
    charts.forEach(function (c) { c.dispose(); });
    charts = [];
    document.querySelectorAll(".chart[data-chart]").forEach(function (el) {
      var src = document.getElementById(el.getAttribute("data-chart"));
      if (!src) return;
      var options = JSON.parse(src.textContent);
      options.backgroundColor = "transparent";
      el.removeAttribute("data-drawn");
      var chart = window.echarts.init(el, isDark() ? "dark" : null, { renderer: "canvas" });
      chart.on("finished", function () { el.setAttribute("data-drawn", "1"); });
      chart.setOption(options);
      charts.push(chart);
    });
  }

  function ready() {
    document.querySelectorAll("form.filters").forEach(initFilter);
    document.querySelectorAll("table[data-sortable]").forEach(function (t) {
      if (!t.hasAttribute("data-url-state")) initSortable(t, false);
    });
    var toggle = document.getElementById("theme-toggle");
    if (toggle) {
      toggle.addEventListener("click", function () {
        var next = isDark() ? "light" : "dark";
        root.setAttribute("data-theme", next);
        try { localStorage.setItem("featbench-theme", next); } catch (e) { /* private mode */ }
        drawCharts();
      });
    }
    drawCharts();
    window.addEventListener("resize", function () { charts.forEach(function (c) { c.resize(); }); });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", ready);
  else ready();
})();
