// FeatBench site behaviour: theme choice, sortable tables, filters whose
// state lives in the URL, the compare view, charts and copy buttons. Every
// figure is in the HTML already (the compare view's as data); this script
// sorts, filters and draws.
(function () {
  "use strict";

  var root = document.documentElement;

  // ---- theme -------------------------------------------------------------
  // The reader chooses system, light or dark; "system" removes the stored
  // choice and follows the operating system's preference again.
  function storedTheme() {
    try { return localStorage.getItem("featbench-theme"); } catch (e) { return null; }
  }
  function isDark() {
    var t = root.getAttribute("data-theme");
    if (t) return t === "dark";
    return window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches;
  }
  function setTheme(choice) {
    if (choice === "dark" || choice === "light") {
      root.setAttribute("data-theme", choice);
      try { localStorage.setItem("featbench-theme", choice); } catch (e) { /* private mode */ }
    } else {
      root.removeAttribute("data-theme");
      try { localStorage.removeItem("featbench-theme"); } catch (e) { /* private mode */ }
    }
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

  // A sortable header holds a button (a keyboard and a screen reader can
  // use it); aria-sort on the header says how the column is sorted.
  function initSortable(table, withURL) {
    var head = table.tHead && table.tHead.rows[0];
    if (!head) return;
    Array.prototype.forEach.call(head.cells, function (th) {
      var key = th.getAttribute("data-key");
      if (!key) return;
      var button = th.querySelector("button");
      if (!button) {
        // A header with a link keeps it; the button sorts.
        button = document.createElement("button");
        button.type = "button";
        button.className = "sort";
        button.setAttribute("aria-label", "Sort by " + th.textContent.trim());
        button.textContent = "↕";
        th.appendChild(button);
      }
      function activate() {
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
      button.addEventListener("click", activate);
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
      compareExtra(p);
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
    var model = value(form, "model"), scaffoldName = value(form, "scaffold_name"), org = value(form, "org");
    var checked = checkedValues(form, "checked").length > 0;
    var tags = checkedValues(form, "tag");
    var method = value(form, "method");
    // A method chosen: its column alone of the method columns, and only
    // the rows with a figure on its instances.
    if (method) table.setAttribute("data-method", method);
    else table.removeAttribute("data-method");
    var shown = 0, rows = table.tBodies[0].rows;
    Array.prototype.forEach.call(rows, function (r) {
      var ok = true;
      if (method && (" " + (r.getAttribute("data-methods") || "") + " ").indexOf(" " + method + " ") < 0) ok = false;
      if (q && (r.getAttribute("data-search") || "").indexOf(q) < 0) ok = false;
      if (scaffold && r.getAttribute("data-open-scaffold") !== (scaffold === "open" ? "yes" : "no")) ok = false;
      if (weights && r.getAttribute("data-open-weights") !== (weights === "open" ? "yes" : "no")) ok = false;
      if (checked && r.getAttribute("data-checked") !== "yes") ok = false;
      if (model && r.getAttribute("data-model") !== model) ok = false;
      if (scaffoldName && r.getAttribute("data-scaffold") !== scaffoldName) ok = false;
      if (org) {
        var orgs = [];
        try { orgs = JSON.parse(r.getAttribute("data-orgs") || "[]"); } catch (e) { /* none */ }
        if (orgs.indexOf(org) < 0) ok = false;
      }
      if (tags.length) {
        var have = [];
        try { have = JSON.parse(r.getAttribute("data-tags") || "[]"); } catch (e) { /* no tags */ }
        tags.forEach(function (t) { if (have.indexOf(t) < 0) ok = false; });
      }
      r.hidden = !ok;
      if (ok) shown++;
    });
    return [shown, rows.length];
  }

  function applyIndex(form, table) {
    var q = value(form, "q").toLowerCase(), repo = value(form, "repo"), level = value(form, "level");
    var method = value(form, "method");
    var shown = 0, rows = table.tBodies[0].rows;
    Array.prototype.forEach.call(rows, function (r) {
      var ok = true;
      if (q && (r.getAttribute("data-search") || "").toLowerCase().indexOf(q) < 0) ok = false;
      if (repo && r.getAttribute("data-repo") !== repo) ok = false;
      if (level && r.getAttribute("data-level") !== level) ok = false;
      if (method && r.getAttribute("data-method") !== method) ok = false;
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

  // The compare view draws its table from the data the page embeds, a
  // page of rows at a time: a split can have thousands of instances and
  // dozens of systems, too many cells for the browser to lay out at once.
  var PAGE_ROWS = 100;
  var cmp = null, cmpData = null;
  // compareData is the compare view's embedded data, read once.
  function compareData() {
    if (!cmpData) {
      var src = document.getElementById("compare-data");
      if (src) cmpData = JSON.parse(src.textContent);
    }
    return cmpData;
  }
  function compareState() {
    if (cmp) return cmp;
    var p = params();
    cmp = {
      data: compareData(),
      page: Math.max(0, (parseInt(p.get("page"), 10) || 1) - 1),
      key: p.get("sort") || "",
      dir: p.get("dir") === "desc" ? "desc" : "asc",
      rerun: null
    };
    cmp.bySlug = {};
    cmp.data.systems.forEach(function (s, i) { cmp.bySlug[s.slug] = i; });
    return cmp;
  }

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function compareHeader(c, key, label, numeric) {
    var th = el("th", { scope: "col", "data-key": key });
    if (numeric) th.setAttribute("data-type", "num");
    if (c.key === key) th.setAttribute("aria-sort", c.dir === "asc" ? "ascending" : "descending");
    var b = el("button", { type: "button" }, label);
    b.addEventListener("click", function () {
      c.dir = c.key === key && c.dir === (numeric ? "desc" : "asc") ? (numeric ? "asc" : "desc") : (numeric ? "desc" : "asc");
      c.key = key;
      c.page = 0;
      if (c.rerun) c.rerun();
    });
    th.appendChild(b);
    return th;
  }

  function applyCompare(form, table) {
    var c = compareState(), d = c.data;
    var chosen = checkedValues(form, "s").map(function (slug) { return c.bySlug[slug]; })
      .filter(function (i) { return i !== undefined; });
    var diffOnly = checkedValues(form, "diff").length > 0;
    var hint = compareHint(form);
    var wrap = table.closest(".table-wrap") || table;
    var pager = document.querySelector(".pager");
    hint.hidden = chosen.length >= 2;
    if (chosen.length === 0) {
      hint.textContent = "No system chosen. Choose two or more systems above to compare them instance by instance.";
    } else if (chosen.length === 1) {
      hint.textContent = "Only one system chosen. Choose two or more systems to compare them instance by instance.";
    }
    wrap.hidden = chosen.length === 0;
    var n = d.ids.length, rows = [];
    for (var i = 0; i < n; i++) {
      if (diffOnly) {
        var first = null, differ = false;
        for (var k = 0; k < chosen.length; k++) {
          var y = share(d, chosen[k], i);
          if (first === null) first = y; else if (y !== first) { differ = true; break; }
        }
        if (!differ) continue;
      }
      rows.push(i);
    }
    // Sorting: by instance, repository, level or a system's outcome
    // (resolved, then not resolved, then no prediction).
    if (c.key) {
      var sys = c.key.indexOf("s:") === 0 ? c.bySlug[c.key.slice(2)] : undefined;
      var val = c.key === "id" ? function (i) { return d.ids[i]; }
        : c.key === "repo" ? function (i) { return d.repos[d.repo[i]]; }
        : c.key === "level" ? function (i) { return d.level[i]; }
        : sys !== undefined ? function (i) { var v = share(d, sys, i); return v === null ? -1 : v; } : null;
      if (val) {
        rows.sort(function (a, b) {
          var x = val(a), z = val(b);
          var r = x < z ? -1 : x > z ? 1 : a - b;
          return c.dir === "desc" ? -r : r;
        });
      }
    }
    var pages = Math.max(1, Math.ceil(rows.length / PAGE_ROWS));
    if (c.page >= pages) c.page = pages - 1;
    var from = c.page * PAGE_ROWS, to = Math.min(rows.length, from + PAGE_ROWS);

    var head = el("tr");
    head.appendChild(compareHeader(c, "id", "Instance", false));
    // On a phone the repository goes (the id names it): the systems'
    // columns stay in view.
    var repoHead = compareHeader(c, "repo", "Repository", false);
    repoHead.className = "narrow";
    head.appendChild(repoHead);
    head.appendChild(compareHeader(c, "level", "Level", true));
    chosen.forEach(function (k) {
      var s = d.systems[k];
      var th = compareHeader(c, "s:" + s.slug, "", true);
      th.setAttribute("data-system", s.slug);
      var b = th.querySelector("button");
      b.setAttribute("aria-label", "Sort by " + s.name);
      b.className = "sort";
      b.textContent = "↕";
      var a = el("a", { href: s.url }, s.name);
      th.insertBefore(a, b);
      th.insertBefore(el("span", { "class": "sub" }, s.pass1 ? "pass@1 " + s.pass1 + "%" : s.resolved + " resolved"), b);
      head.appendChild(th);
    });
    var thead = el("thead");
    thead.appendChild(head);
    var body = el("tbody");
    var marks = { y: ["yes", "✓"], n: ["no", "✗"], ".": ["none", "·"] };
    for (var r = from; r < to; r++) {
      var i = rows[r];
      var tr = el("tr");
      var th = el("th", { scope: "row" });
      th.appendChild(breakable(idLink(d, i), d.ids[i]));
      tr.appendChild(th);
      tr.appendChild(el("td", { "class": "narrow" }, d.repos[d.repo[i]]));
      tr.appendChild(el("td", { "class": "num" }, "L" + d.level[i]));
      chosen.forEach(function (k) {
        var m = marks[d.outcomes[k].charAt(i)] || marks["."];
        var t = d.tries && d.tries[k] ? d.tries[k][i] : "";
        // Several attempts: c of n resolved, as c/n.
        if (t) m = [share(d, k, i) === 1 ? "yes" : share(d, k, i) > 0 ? "part" : "no", t];
        tr.appendChild(el("td", { "class": "cmp " + m[0] }, m[1]));
      });
      body.appendChild(tr);
    }
    if (table.tHead) table.removeChild(table.tHead);
    while (table.tBodies.length) table.removeChild(table.tBodies[0]);
    table.appendChild(thead);
    table.appendChild(body);
    if (pager) {
      pager.hidden = wrap.hidden || rows.length <= PAGE_ROWS;
      pager.querySelector(".pager-state").textContent = rows.length
        ? "Instances " + (from + 1) + "–" + to + " of " + rows.length + " (page " + (c.page + 1) + " of " + pages + ")"
        : "No instances";
      pager.querySelector('[data-page="prev"]').disabled = c.page === 0;
      pager.querySelector('[data-page="next"]').disabled = c.page >= pages - 1;
    }
    return [wrap.hidden ? 0 : rows.length, n];
  }

  // share is system k's outcome on instance i as the pairs compare it:
  // 1 or 0 with one attempt, the share of its attempts that resolved the
  // instance with several; null without a prediction.
  function share(d, k, i) {
    var c = d.outcomes[k].charAt(i);
    if (c === ".") return null;
    var t = d.tries && d.tries[k] ? d.tries[k][i] : "";
    if (t) {
      var p = t.split("/");
      return Number(p[0]) / Number(p[1]);
    }
    return c === "y" ? 1 : 0;
  }

  // breakable fills e with text that may wrap after its dots and
  // underscores (<wbr>, so that a copied id stays whole): a long instance
  // id wraps at its parts on a phone, not anywhere.
  // idLink is the element an instance id goes in: a link to its task
  // page, or a plain span where the dataset publishes none (no base).
  function idLink(d, i) {
    return d.base ? el("a", { href: d.base + d.ids[i] + "/" }) : el("span", { "class": "id" });
  }

  function breakable(e, text) {
    var re = /[._]+/g, from = 0, m;
    while ((m = re.exec(text)) !== null) {
      var end = m.index + m[0].length;
      e.appendChild(document.createTextNode(text.slice(from, end)));
      if (end < text.length) e.appendChild(document.createElement("wbr"));
      from = end;
    }
    if (from < text.length) e.appendChild(document.createTextNode(text.slice(from)));
    return e;
  }

  // compareExtra writes the compare view's page and sort into the URL.
  function compareExtra(p) {
    if (!cmp) return;
    p.delete("page"); p.delete("sort"); p.delete("dir");
    if (cmp.page > 0) p.set("page", String(cmp.page + 1));
    if (cmp.key) { p.set("sort", cmp.key); p.set("dir", cmp.dir); }
  }

  function initFilter(form) {
    var id = form.getAttribute("data-board") || form.getAttribute("data-index") || form.getAttribute("data-compare");
    var table = document.getElementById(id);
    if (!table) return;
    var isCompare = form.hasAttribute("data-compare");
    var apply = form.hasAttribute("data-board") ? applyBoard : form.hasAttribute("data-index") ? applyIndex : applyCompare;
    var out = form.querySelector("output");
    function run(save) {
      var r = apply(form, table);
      // A board counts its ranked systems: reference rows are not filtered.
      if (out) out.textContent = r[0] + " of " + r[1] + (form.hasAttribute("data-board") ? " ranked systems shown" : " shown");
      if (save) writeState(form);
    }
    formState(form);
    function changed() {
      if (isCompare) compareState().page = 0;
      run(true);
    }
    form.addEventListener("input", changed);
    form.addEventListener("change", changed);
    form.addEventListener("submit", function (ev) { ev.preventDefault(); });
    if (isCompare) {
      var c = compareState();
      c.rerun = function () { run(true); };
      document.querySelectorAll(".pager button").forEach(function (b) {
        b.addEventListener("click", function () {
          c.page += b.getAttribute("data-page") === "next" ? 1 : -1;
          if (c.page < 0) c.page = 0;
          run(true);
        });
      });
    } else {
      initSortable(table, true);
    }
    table.setAttribute("data-url-state", "1");
    run(false);
    // Marks when the first view is ready (the compare view's benchmark reads it).
    if (window.performance && performance.mark) performance.mark("filters-ready");
  }

  // ---- paired comparison ----------------------------------------------------
  // Two systems the reader picks, on the instances both made a prediction
  // for. The counts and the p-value come with the page, computed by the
  // build for every pair; the instances where the two differ are read
  // from the outcomes. The pair lives in the URL as a and b.
  function initPair() {
    var form = document.querySelector("form[data-pair]");
    var out = document.getElementById("pair-result");
    var d = compareData();
    if (!form || !out || !d || d.systems.length < 2) return;
    var bySlug = {};
    d.systems.forEach(function (s, i) { bySlug[s.slug] = i; });
    var p = params();
    var a = bySlug[p.get("a")], b = bySlug[p.get("b")];
    form.elements.a.value = d.systems[a !== undefined ? a : d.first].slug;
    form.elements.b.value = d.systems[b !== undefined ? b : d.second].slug;
    form.hidden = false;
    function run(save) {
      drawPair(out, d, bySlug[form.elements.a.value], bySlug[form.elements.b.value]);
      if (save) {
        var q = params();
        q.set("a", form.elements.a.value);
        q.set("b", form.elements.b.value);
        saveParams(q);
      }
    }
    form.addEventListener("change", function () { run(true); });
    form.addEventListener("submit", function (ev) { ev.preventDefault(); });
    run(false);
  }

  function drawPair(out, d, i, j) {
    while (out.firstChild) out.removeChild(out.firstChild);
    if (i === j) {
      out.appendChild(el("p", { "class": "compare-hint" }, "Choose two different systems."));
      return;
    }
    var A = d.systems[i], B = d.systems[j];
    // Pairs are stored once, the lower index first.
    var lo = Math.min(i, j), hi = Math.max(i, j), n = d.systems.length;
    var pr = d.pairs[lo * n - lo * (lo + 1) / 2 + (hi - lo - 1)];
    var both = pr.n[0], neither = pr.n[3];
    var onlyA = i === lo ? pr.n[1] : pr.n[2], onlyB = i === lo ? pr.n[2] : pr.n[1];
    var shared = both + onlyA + onlyB + neither, left = d.ids.length - shared;
    out.appendChild(el("p", {}, A.name + " and " + B.name + " both made a prediction for " + shared + " of the " +
      d.ids.length + " instances" + (left ? "; the other " + left + (left === 1 ? " is left out." : " are left out.") : ".")));

    var counts = el("dl", { "class": "pair-counts", id: "pair-counts" });
    // Per attempt: the cells compare shares of attempts (see the note).
    var labels = pr.attempts
      ? ["Equal, above 0", "Higher for " + A.name, "Higher for " + B.name, "Neither resolved"]
      : ["Both resolved", "Only " + A.name, "Only " + B.name, "Neither"];
    [[labels[0], both, "both"], [labels[1], onlyA, "only-a"], [labels[2], onlyB, "only-b"],
      [labels[3], neither, "neither"]].forEach(function (c) {
      var item = el("div");
      item.appendChild(el("dt", {}, c[0]));
      item.appendChild(el("dd", { "data-cell": c[2] }, String(c[1])));
      counts.appendChild(item);
    });
    out.appendChild(counts);

    var differ = onlyA + onlyB;
    var test = differ === 0 ? "They resolved the same shared instances: there is no difference to test."
      : (pr.attempts ? "Compared per attempt (the share of each system's attempts that resolved an instance). Exact sign test on the "
        : "Exact McNemar test on the ") + differ + " instances where they differ: p " + (pr.p.charAt(0) === "<" ? "" : "= ") + pr.p +
        " (two-sided). " + (pr.low
          ? "If the two were equally good, a split at least this uneven would happen less than 5% of the time."
          : "A split at least this uneven is common between equally good systems: these instances do not tell them apart.");
    out.appendChild(el("p", { "class": "pair-test" }, test));

    // The instances where they differ, each linked to its page.
    var only = [[], []];
    for (var k = 0; k < d.ids.length; k++) {
      var x = share(d, i, k), y = share(d, j, k);
      if (x === null || y === null || x === y) continue;
      only[x > y ? 0 : 1].push(k);
    }
    [[A, only[0], "only-a"], [B, only[1], "only-b"]].forEach(function (g) {
      var det = el("details", { "class": "pair-list", "data-list": g[2] });
      if (g[1].length && g[1].length <= 50) det.open = true;
      var what = pr.attempts ? "Higher for " + g[0].name + ": " : "Resolved by " + g[0].name + " only: ";
      det.appendChild(el("summary", {}, what + g[1].length + (g[1].length === 1 ? " instance" : " instances")));
      var ul = el("ul", { "class": "id-list" });
      g[1].forEach(function (k) {
        var li = el("li");
        li.appendChild(breakable(idLink(d, k), d.ids[k]));
        ul.appendChild(li);
      });
      det.appendChild(ul);
      out.appendChild(det);
    });
  }

  // ---- charts --------------------------------------------------------------
  var charts = [];
  // The chart's box is hidden and its data table open until the chart has
  // drawn: without script, or when the chart library failed to load, the
  // reader still has the figures.
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
      el.hidden = false;
      if (el.getAttribute("data-height")) el.style.height = el.getAttribute("data-height") + "px";
      // Category names (systems) take less room on a phone, where they
      // wrap onto up to three lines (the build leaves room for them), and
      // more on a wide screen.
      [].concat(options.yAxis || []).forEach(function (y) {
        if (y.type !== "category" || !y.axisLabel) return;
        y.axisLabel.width = el.clientWidth < 560 ? 110 : el.clientWidth >= 900 ? 240 : 150;
        if (el.clientWidth < 560) {
          y.axisLabel.overflow = "break";
          y.axisLabel.lineHeight = 16;
        }
      });
      logAxes(options);
      // Named points: their names are placed once the points are drawn
      // (nameLabels); until then none shows.
      var named = [];
      (options.series || []).forEach(function (s, si) {
        if (!s.labelPlace) return;
        named.push({ si: si, how: s.labelPlace });
        delete s.labelPlace;
        s.label = { show: false };
      });
      // SVG: every text a box the browser can measure (and crisp when
      // zoomed).
      var chart = window.echarts.init(el, isDark() ? "dark" : null, { renderer: "svg" });
      chart.on("finished", function () {
        if (el.hasAttribute("data-drawn")) return;
        el.setAttribute("data-drawn", "1");
        var data = el.parentNode.querySelector("details.chart-data");
        if (data) data.open = false;
      });
      chart.setOption(options);
      if (named.length) nameLabels(chart, options, named, el);
      charts.push(chart);
    });
  }

  // logAxes labels a log axis the build drew as a value axis over the
  // values' logarithms (logTicks: the ticks' logarithms): its ticks and
  // the tooltips give the values themselves.
  function logAxes(options) {
    var log = false;
    [].concat(options.xAxis || []).forEach(function (x) {
      if (!x.logTicks) return;
      log = true;
      x.axisLabel = x.axisLabel || {};
      x.axisLabel.customValues = x.logTicks;
      x.axisLabel.formatter = function (v) { return compact(Math.pow(10, v)); };
      x.axisTick = { customValues: x.logTicks };
      x.splitLine = { show: true };
      delete x.logTicks;
    });
    if (!log) return;
    options.tooltip = options.tooltip || {};
    options.tooltip.formatter = function (p) {
      var v = p.value || [];
      var x = v.length > 2 ? v[2] : Math.pow(10, v[0]);
      return p.marker + (p.name || p.seriesName) + "<br>" + p.seriesName + ": " + v[1] + " at " + compact(x);
    };
  }
  // compact writes a count as people read it on an axis: 2.5M, 40k, 900.
  function compact(v) {
    var r = function (x) { return String(Math.round(x * 10) / 10); };
    if (v >= 1e6) return r(v / 1e6) + "M";
    if (v >= 1e3) return r(v / 1e3) + "k";
    return r(v);
  }

  // nameLabels names the points of the named series (marked labelPlace
  // by the build) where each name fits: inside the plot, clear of every
  // point of the chart, of the Pareto line and of the names placed before
  // it. A point on a Pareto front ("front") is named first, above and to
  // the left, away from the line, which comes from below and leaves to
  // the right. A point whose name fits nowhere gets a number instead, and
  // the key under the chart gives its name: every named point is named.
  function nameLabels(chart, options, named, el) {
    var g = gridRect(chart);
    var ctx = document.createElement("canvas").getContext("2d");
    ctx.font = "11px sans-serif";
    var H = 16;
    var points = [], obstacles = [], placed = [];
    (options.series || []).forEach(function (s, si) {
      (s.data || []).forEach(function (d, di) {
        var v = d && d.value !== undefined ? d.value : d;
        var px = chart.convertToPixel({ seriesIndex: si }, v);
        if (!px || isNaN(px[0]) || isNaN(px[1])) return;
        points.push({ si: si, di: di, x: px[0], y: px[1], name: d && d.name });
        obstacles.push({ x: px[0] - 6, y: px[1] - 6, w: 12, h: 12, si: si, di: di });
      });
      if (s.type === "line" && s.step) {
        // The step line's segments: across at a point's height, then up.
        var pts = (s.data || []).map(function (d) { return chart.convertToPixel({ seriesIndex: si }, d.value || d); });
        for (var k = 0; k + 1 < pts.length; k++) {
          var a = pts[k], b = pts[k + 1];
          obstacles.push({ x: a[0], y: a[1] - 2, w: b[0] - a[0], h: 4 });
          obstacles.push({ x: b[0] - 2, y: Math.min(a[1], b[1]), w: 4, h: Math.abs(a[1] - b[1]) });
        }
      }
    });
    var hits = function (r, si, di) {
      var inside = r.x >= g.x + 1 && r.y >= g.y + 1 && r.x + r.w <= g.x + g.width - 1 && r.y + r.h <= g.y + g.height - 1;
      if (!inside) return true;
      var meets = function (o) { return r.x < o.x + o.w && o.x < r.x + r.w && r.y < o.y + o.h && o.y < r.y + r.h; };
      return obstacles.some(function (o) { return !(o.si === si && o.di === di) && meets(o); }) || placed.some(meets);
    };
    var spots = function (x, y, w, front) {
      var c = [
        [x + 8, y - H / 2], [x - 8 - w, y - H / 2], [x - w / 2, y - 8 - H], [x - w / 2, y + 8],
        [x + 5, y - 5 - H], [x - 5 - w, y - 5 - H], [x + 5, y + 5], [x - 5 - w, y + 5]
      ];
      if (front) c = [[x - 5 - w, y - 5 - H], [x - 8 - w, y - H / 2], [x - w / 2, y - 8 - H], [x + 5, y - 5 - H]].concat(c);
      for (var k = 1; k <= 3; k++) {
        c.push([x + 8, y - H / 2 - k * H], [x + 8, y - H / 2 + k * H], [x - 8 - w, y - H / 2 - k * H], [x - 8 - w, y - H / 2 + k * H]);
      }
      return c;
    };
    // Farther out, for a number where the spots beside the point are
    // taken: rings of twelve spots, 14 to 42 px from it.
    var ring = function (x, y, w) {
      var c = [];
      for (var d = 14; d <= 42; d += 7) {
        for (var a = 0; a < 12; a++) {
          var t = a * Math.PI / 6;
          c.push([x + d * Math.cos(t) - w / 2, y - d * Math.sin(t) - H / 2]);
        }
      }
      return c;
    };
    // A spot away from its point needs a line to it: the spot is taken
    // only if that line crosses no name placed before (sampled every 2 px).
    var gap = function (b, p) {
      var dx = Math.max(b.x - p.x, 0, p.x - (b.x + b.w)), dy = Math.max(b.y - p.y, 0, p.y - (b.y + b.h));
      return Math.sqrt(dx * dx + dy * dy);
    };
    var lineFree = function (b, p) {
      if (gap(b, p) <= 10) return true;
      var ex = Math.min(Math.max(p.x, b.x), b.x + b.w), ey = Math.min(Math.max(p.y, b.y), b.y + b.h);
      var n = Math.ceil(Math.hypot(ex - p.x, ey - p.y) / 2);
      for (var k = 1; k < n; k++) {
        var x = p.x + (ex - p.x) * k / n, y = p.y + (ey - p.y) * k / n;
        if (placed.some(function (o) { return x > o.x && x < o.x + o.w && y > o.y && y < o.y + o.h; })) return false;
      }
      return true;
    };
    var order = [];
    named.forEach(function (n) {
      points.forEach(function (p) { if (p.si === n.si && p.name) order.push({ p: p, front: n.how === "front" }); });
    });
    order.sort(function (a, b) { return (b.front - a.front) || (a.p.x - b.p.x); });
    var boxes = {}, key = [];
    order.forEach(function (o) {
      var p = o.p, text = p.name, w = ctx.measureText(text).width + 6;
      var clear = function (c) { return !hits({ x: c[0], y: c[1], w: w, h: H }, p.si, p.di); };
      var free = function (c) { return clear(c) && lineFree({ x: c[0], y: c[1], w: w, h: H }, p); };
      var spot = spots(p.x, p.y, w, o.front).find(free);
      if (!spot) {
        // No room for the name: a number, and the name in the key.
        text = String(key.length + 1);
        w = ctx.measureText(text).width + 6;
        // Its line may cross a name only where no other spot is left.
        var cands = spots(p.x, p.y, w, o.front).concat(ring(p.x, p.y, w));
        spot = cands.find(free) || cands.find(clear) || [p.x + 6, p.y - H];
        key.push(text + " " + p.name);
      }
      var box = { x: spot[0], y: spot[1], w: w, h: H };
      placed.push(box);
      // A name or number away from its point (a row or more off, or on
      // a ring) gets a thin line to it, so that it is read as the
      // point's and not its neighbours'.
      boxes[p.si + ":" + p.di] = { box: box, text: text, far: gap(box, p) > 10 };
    });
    var update = named.map(function (n) {
      var s = options.series[n.si];
      return {
        data: (s.data || []).map(function (d, di) {
          var b = boxes[n.si + ":" + di];
          var item = typeof d === "object" && d !== null && !Array.isArray(d) ? Object.assign({}, d) : { value: d };
          item.label = b ? { show: true, formatter: b.text, fontSize: 11, overflow: "none" } : { show: false };
          item.labelLine = { show: !!(b && b.far), lineStyle: { width: 1, color: "#8a8f98" } };
          return item;
        }),
        labelLayout: function (lp) {
          var b = boxes[n.si + ":" + lp.dataIndex];
          return b ? { x: b.box.x + 2, y: b.box.y + H / 2, align: "left", verticalAlign: "middle", hideOverlap: false } : {};
        }
      };
    });
    var full = (options.series || []).map(function () { return {}; });
    named.forEach(function (n, k) { full[n.si] = update[k]; });
    chart.setOption({ series: full });
    var old = el.parentNode.querySelector("p.chart-key[data-for='" + el.id + "']");
    if (old) old.remove();
    if (key.length) {
      var kp = document.createElement("p");
      kp.className = "chart-key";
      kp.setAttribute("data-for", el.id);
      kp.textContent = "Numbered on the chart, where a name had no room: " + key.join("; ") + ".";
      el.insertAdjacentElement("afterend", kp);
    }
  }
  function gridRect(chart) {
    var g = chart.getModel().getComponent("grid", 0);
    var r = g && g.coordinateSystem && g.coordinateSystem.getRect();
    return r || { x: 0, y: 0, width: chart.getWidth(), height: chart.getHeight() };
  }

  // Copy buttons (the citation's BibTeX): shown only where the clipboard
  // can be written.
  function initCopy() {
    document.querySelectorAll("button[data-copy]").forEach(function (b) {
      var src = document.getElementById(b.getAttribute("data-copy"));
      if (!src || !navigator.clipboard) return;
      b.hidden = false;
      b.addEventListener("click", function () {
        navigator.clipboard.writeText(src.textContent).then(function () {
          b.textContent = "Copied";
          setTimeout(function () { b.textContent = "Copy BibTeX"; }, 2000);
        }, function () { b.textContent = "Select the text to copy"; });
      });
    });
  }

  // A table wider than its box says so above it: on a phone a board
  // shows its main figures, and the other columns scroll. Kept up to date
  // as the table changes width (all columns, filters, a redraw) or the
  // window does.
  function scrollCue(wrap) {
    var cue = wrap.previousElementSibling;
    if (!cue || !cue.classList.contains("scroll-cue")) {
      cue = el("p", { "class": "scroll-cue", "aria-hidden": "true" }, "More columns: scroll the table sideways →");
      wrap.parentNode.insertBefore(cue, wrap);
    }
    cue.hidden = wrap.hidden || wrap.scrollWidth <= wrap.clientWidth + 1;
  }
  function initScrollCues() {
    var wraps = document.querySelectorAll(".table-wrap");
    wraps.forEach(scrollCue);
    if (window.ResizeObserver) {
      var ro = new ResizeObserver(function (entries) {
        entries.forEach(function (e) {
          var wrap = e.target.classList.contains("table-wrap") ? e.target : e.target.closest(".table-wrap");
          if (wrap) scrollCue(wrap);
        });
      });
      wraps.forEach(function (w) {
        ro.observe(w);
        // The table, and what replaces its body (the compare view).
        var t = w.querySelector("table");
        if (t) ro.observe(t);
      });
    } else {
      window.addEventListener("resize", function () { wraps.forEach(scrollCue); });
    }
  }

  function ready() {
    document.querySelectorAll("form.filters").forEach(initFilter);
    document.querySelectorAll("table[data-sortable]").forEach(function (t) {
      if (!t.hasAttribute("data-url-state")) initSortable(t, false);
    });
    var select = document.getElementById("theme-select");
    if (select) {
      var t = storedTheme();
      select.value = t === "dark" || t === "light" ? t : "system";
      select.closest(".theme-choice").hidden = false;
      select.addEventListener("change", function () {
        setTheme(select.value);
        drawCharts();
      });
    }
    if (window.matchMedia) {
      // Following the system: redraw the charts when it changes.
      var mq = window.matchMedia("(prefers-color-scheme: dark)");
      if (mq.addEventListener) mq.addEventListener("change", function () { if (!root.getAttribute("data-theme")) drawCharts(); });
    }
    initCopy();
    initPair();
    initScrollCues();
    drawCharts();
    window.addEventListener("resize", function () { charts.forEach(function (c) { c.resize(); }); });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", ready);
  else ready();
})();
