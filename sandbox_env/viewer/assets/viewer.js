// The run viewer's page logic. Run data is written by the model under evaluation:
// it only ever enters the DOM as text (el() appends strings as text nodes), never as HTML.
// Little is built up front: the table a page of rows at a time, a rollout's grade and
// transcript when its row is opened.
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("run-data").textContent);
  var ROLLOUTS = DATA.rollouts;
  var PAGE = 100;
  var state = { matches: [], shown: 0, search: "", searchIndex: null };
  var details = new Map(); // rollout n -> its built detail row

  function $(id) { return document.getElementById(id); }

  function el(tag, cls) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    for (var i = 2; i < arguments.length; i++) {
      var k = arguments[i];
      if (k === null || k === undefined || k === false) continue;
      e.append(k instanceof Node ? k : String(k));
    }
    return e;
  }

  function fmtReward(x) { return x === null || x === undefined ? "–" : (Math.round(x * 1000) / 1000).toString(); }
  function value(v) { return JSON.stringify(v === undefined ? null : v); }
  function pre(text, cls) { return el("pre", cls || "", text); }

  // -- header, problems, family table ---------------------------------------------------

  function header() {
    var m = DATA.meta || {};
    var bits = [];
    if (m.model) bits.push("model " + m.model);
    if (m.env_id) bits.push("env " + m.env_id);
    if (m.env_args && Object.keys(m.env_args).length) bits.push("args " + JSON.stringify(m.env_args));
    if (m.date) bits.push(String(m.date));
    bits.push(ROLLOUTS.length + " rollouts");
    if (m.avg_reward !== undefined) bits.push("mean reward " + fmtReward(m.avg_reward));
    $("run-meta").append(el("div", "", bits.join(" · ")), el("div", "source", DATA.source + " (" + DATA.format + ")"));
    if (DATA.problems && DATA.problems.length) {
      var box = el("details", "problems", el("summary", "", DATA.problems.length + " problem(s) reading this run"));
      DATA.problems.forEach(function (p) { box.append(el("div", "", p)); });
      $("run-meta").append(box);
    }
  }

  // the errored count with its kinds, as summary.errored_cell writes it for the terminal
  function erroredCell(row) {
    var kinds = Object.keys(row.error_kinds || {});
    if (!kinds.length) return String(row.errored);
    if (kinds.length === 1) return row.errored + " (" + kinds[0] + ")";
    return row.errored + " (" + kinds.map(function (k) { return k + " " + row.error_kinds[k]; }).join(", ") + ")";
  }

  function familyTable() {
    var t = $("families");
    var cols = [["family", "family"], ["rollouts", "rollouts"], ["mean_reward", "mean reward"],
      ["mean_finished", "mean reward, finished"], ["perfect", "reward 1.0"],
      ["scoring_errors", "scoring errors"], ["tampered", "tampered"], ["errored", "errored"]];
    var head = el("tr", "");
    cols.forEach(function (c) { head.append(el("th", "", c[1])); });
    t.append(el("thead", "", head));
    var body = el("tbody", "");
    DATA.families.forEach(function (row) {
      var tr = el("tr", row.family === "all" ? "total" : "");
      cols.forEach(function (c) {
        var v = row[c[0]];
        var text = c[0] === "mean_reward" || c[0] === "mean_finished" ? fmtReward(v) : c[0] === "errored" ? erroredCell(row) : v;
        var td = el("td", c[0] === "family" ? "" : "num", text);
        if ((c[0] === "scoring_errors" || c[0] === "tampered" || c[0] === "errored") && v > 0) td.classList.add("bad");
        tr.append(td);
      });
      if (row.family !== "all") {
        tr.classList.add("pick");
        tr.title = "show only " + row.family;
        tr.addEventListener("click", function () { $("f-family").value = row.family; onFamily(); });
      }
      body.append(tr);
    });
    t.append(body);
  }

  // -- filters ---------------------------------------------------------------------------

  function options(select, values, allLabel) {
    select.textContent = "";
    select.append(new Option(allLabel, ""));
    values.forEach(function (v) { select.append(new Option(v, v)); });
  }

  function uniq(list) { return Array.from(new Set(list)).sort(); }

  function onFamily() {
    var fam = $("f-family").value;
    var keep = $("f-task").value;
    options($("f-task"), uniq(ROLLOUTS.filter(function (r) { return !fam || r.family === fam; })
      .map(function (r) { return r.task_id; })), "all tasks");
    $("f-task").value = keep;
    if ($("f-task").value !== keep) $("f-task").value = "";
    apply();
  }

  function searchText(r) {
    var parts = [r.task_id, r.family, r.scoring_error || "", r.error || ""];
    var g = r.grade;
    if (g) {
      parts.push(g.reason || "");
      (g.checks || []).forEach(function (c) { parts.push(c.name || "", typeof c.detail === "string" ? c.detail : value(c.detail)); });
    }
    r.completion.forEach(function (m) {
      parts.push(m.content || "", m.reasoning || "");
      (m.tool_calls || []).forEach(function (c) { parts.push(c.name, typeof c.arguments === "string" ? c.arguments : value(c.arguments)); });
    });
    return parts.join("\n").toLowerCase();
  }

  function scoreMatches(r, want) {
    if (!want) return true;
    if (want === "none") return r.reward === null;
    if (r.reward === null) return false;
    if (want === "1") return r.reward === 1;
    if (want === "0") return r.reward === 0;
    return r.reward > 0 && r.reward < 1; // partial
  }

  function flagMatches(flag, want) { return !want || (want === "yes") === Boolean(flag); }

  function apply() {
    var fam = $("f-family").value, task = $("f-task").value, score = $("f-score").value;
    var se = $("f-scoring-error").value, tp = $("f-tampered").value, er = $("f-errored").value;
    var q = $("f-search").value.trim().toLowerCase();
    if (q && !state.searchIndex) state.searchIndex = ROLLOUTS.map(searchText);
    state.matches = [];
    for (var i = 0; i < ROLLOUTS.length; i++) {
      var r = ROLLOUTS[i];
      if (fam && r.family !== fam) continue;
      if (task && r.task_id !== task) continue;
      if (!scoreMatches(r, score)) continue;
      if (!flagMatches(r.scoring_error, se) || !flagMatches(r.tampered, tp) || !flagMatches(r.error, er)) continue;
      if (q && state.searchIndex[i].indexOf(q) < 0) continue;
      state.matches.push(i);
    }
    $("rows").textContent = "";
    state.shown = 0;
    more();
  }

  // -- the rollout table, a page at a time --------------------------------------------------

  function flags(r) {
    var box = el("span", "flags");
    if (r.scoring_error) box.append(el("span", "badge err", "scoring error"));
    if (r.tampered) box.append(el("span", "badge tamper", "tampered"));
    if (r.error) box.append(el("span", "badge err", "error"));
    if (!r.grade) box.append(el("span", "badge muted", "no grade"));
    return box;
  }

  function rewardClass(x) { return x === null ? "muted" : x === 1 ? "good" : x === 0 ? "bad" : "partial"; }

  function row(r) {
    var tr = el("tr", "rollout");
    tr.tabIndex = 0;
    tr.dataset.n = r.n;
    var reason = r.scoring_error ? "scoring error: " + r.scoring_error : r.grade ? r.grade.reason || "" : r.error || "";
    tr.append(el("td", "num muted", r.n), el("td", "", r.family), el("td", "task", r.task_id),
      el("td", "num reward " + rewardClass(r.reward), fmtReward(r.reward)), el("td", "", flags(r)), el("td", "reason", reason));
    tr.addEventListener("click", function () { toggle(tr, r); });
    tr.addEventListener("keydown", function (ev) { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); toggle(tr, r); } });
    return tr;
  }

  function more() {
    var body = $("rows");
    var old = body.querySelector("tr.more");
    if (old) old.remove();
    var end = Math.min(state.matches.length, state.shown + PAGE);
    var frag = document.createDocumentFragment();
    for (var i = state.shown; i < end; i++) {
      frag.append(row(ROLLOUTS[state.matches[i]]));
    }
    state.shown = end;
    var left = state.matches.length - end;
    if (left > 0) {
      var btn = el("button", "", "show " + Math.min(left, PAGE) + " more (" + left + " left)");
      btn.addEventListener("click", more);
      var tr = el("tr", "more", el("td", "", btn));
      tr.firstChild.colSpan = 6;
      frag.append(tr);
      if (window.IntersectionObserver) {
        var io = new IntersectionObserver(function (entries) {
          if (entries.some(function (e) { return e.isIntersecting; })) { io.disconnect(); more(); }
        }, { rootMargin: "400px" });
        io.observe(tr);
      }
    }
    body.append(frag);
    $("count").textContent = state.matches.length === ROLLOUTS.length
      ? ROLLOUTS.length + " rollouts" : state.matches.length + " of " + ROLLOUTS.length + " rollouts";
  }

  function toggle(tr, r) {
    var open = details.get(r.n);
    if (open && open.isConnected) { open.remove(); tr.classList.remove("open"); return; }
    if (!open) {
      open = el("tr", "detail", el("td", "", detail(r)));
      open.firstChild.colSpan = 6;
      details.set(r.n, open);
    }
    tr.after(open);
    tr.classList.add("open");
  }

  // -- one rollout: grade and transcript ---------------------------------------------------

  function detail(r) {
    var box = el("div", "detail-box");
    var where = [r.family, r.task_id, r.difficulty, r.category].filter(Boolean).join(" · ");
    box.append(el("div", "where", where + " · example " + r.example_id + (r.stop ? " · stopped: " + r.stop : "")));
    if (r.scoring_error) box.append(el("div", "alert err", "scoring error (the harness failed, not the model): " + r.scoring_error));
    if (r.error) box.append(el("div", "alert err", "rollout error", pre(r.error)));
    box.append(gradeView(r), transcript(r));
    return box;
  }

  function gradeView(r) {
    var sec = el("section", "grade", el("h3", "", "Grade"));
    var g = r.grade;
    if (!g) {
      sec.append(el("p", "muted", "This run saved no grade (make runs with `websandbox eval` or vf-eval's -C grade)."));
      return sec;
    }
    sec.append(el("p", "reason " + rewardClass(r.reward), "score " + fmtReward(g.score) + " — " + (g.reason || "")));
    if (g.tampered) sec.append(el("div", "alert tamper", "tampered: the canaries show the grader was interfered with"));
    var checks = Array.isArray(g.checks) ? g.checks : [];
    var special = r.family === "orm" ? ormView(checks) : r.family === "django" ? djangoView(checks)
      : r.family === "fastapi" ? fastapiView(checks) : null;
    if (special) sec.append(special);
    sec.append(checksTable(checks, special !== null && checks.length > 6));
    var metrics = g.metrics || {};
    var names = Object.keys(metrics);
    if (names.length) sec.append(el("div", "metrics", names.map(function (k) { return k + " " + fmtReward(metrics[k]); }).join(" · ")));
    return sec;
  }

  function checksTable(checks, collapsed) {
    var t = el("table", "checks");
    checks.forEach(function (c) {
      var d = c.detail;
      t.append(el("tr", c.passed ? "pass" : "fail", el("td", "mark", c.passed ? "✓" : "✗"), el("td", "name", c.name),
        el("td", "", typeof d === "string" ? d : value(d))));
    });
    var passed = checks.filter(function (c) { return c.passed; }).length;
    var label = "checks: " + passed + " of " + checks.length + " passed";
    var box = el("details", "all-checks", el("summary", "", label), t);
    box.open = !collapsed;
    return box;
  }

  function ormView(checks) {
    var c = checks.find(function (x) { return x.rows && typeof x.rows === "object"; });
    if (!c) return null;
    var ev = c.rows, first = ev.first;
    function side(title, rows, count) {
      var t = el("table", "rows");
      var width = rows.reduce(function (w, x) { return Math.max(w, x.length); }, 0);
      var head = el("tr", "", el("th", "", "row"));
      for (var j = 0; j < width; j++) head.append(el("th", "", j));
      t.append(el("caption", "", title + " (" + count + " rows)"), head);
      rows.forEach(function (values, i) {
        var at = ev.offset + i;
        var hit = first && first.row === at;
        var tr = el("tr", hit ? "diff-row" : "", el("td", "num muted", at));
        values.forEach(function (v, j) {
          var td = el("td", "", value(v));
          if (hit && (first.col === null || first.col === j)) { td.classList.add("diff"); td.title = "first difference"; }
          tr.append(td);
        });
        t.append(tr);
      });
      if (first && first.row >= ev.offset + rows.length && first.row === count) {
        t.append(el("tr", "diff-row", el("td", "num muted", first.row), el("td", "diff", "(no row)")));
      }
      return t;
    }
    var shownTo = ev.offset + Math.max(ev.expected.length, ev.received.length);
    var note = first ? "first difference: row " + first.row + (first.col === null ? " (the whole row)" : ", column " + first.col)
      : "every row matches";
    if (ev.offset > 0 || shownTo < Math.max(ev.expected_count, ev.received_count)) note += " · rows " + ev.offset + "–" + (shownTo - 1) + " shown";
    return el("div", "orm", el("div", "note", note),
      el("div", "side-by-side", side("expected", ev.expected, ev.expected_count), side("received", ev.received, ev.received_count)));
  }

  function djangoView(checks) {
    var failing = checks.filter(function (c) { return !c.passed; });
    if (!failing.length) return null;
    var box = el("div", "failing", el("h4", "", failing.length + " failing test(s)"));
    failing.forEach(function (c) {
      box.append(el("div", "test", el("div", "name", c.name), pre(typeof c.detail === "string" ? c.detail : value(c.detail), "assertion")));
    });
    return box;
  }

  var REQUEST = /^(?:step (\d+) \()?((?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) [^\s)]*)\)?: ([\s\S]*)$/;

  function fastapiView(checks) {
    var failing = checks.filter(function (c) { return !c.passed; });
    if (!failing.length) return null;
    var box = el("div", "failing", el("h4", "", failing.length + " failing check(s)"));
    failing.forEach(function (c) {
      var d = typeof c.detail === "string" ? c.detail : value(c.detail);
      var m = REQUEST.exec(d);
      var item = el("div", "test", el("div", "name", c.name));
      if (m) {
        item.append(el("div", "request", (m[1] ? "step " + m[1] + ": " : "") + m[2]));
        var ul = el("ul", "problems");
        m[3].split(/; (?=(?:status|json|body|header|text|SSE|the request)\b)/).forEach(function (p) { ul.append(el("li", "", p)); });
        item.append(ul);
      } else {
        item.append(pre(d, "assertion"));
      }
      box.append(item);
    });
    return box;
  }

  function argsView(args) {
    if (args && typeof args === "object" && !Array.isArray(args)) {
      var keys = Object.keys(args);
      var box = el("div", "args");
      keys.forEach(function (k) {
        var v = args[k];
        box.append(el("div", "arg-name", k), pre(typeof v === "string" ? v : JSON.stringify(v, null, 2), "code"));
      });
      return box;
    }
    return pre(typeof args === "string" ? args : JSON.stringify(args, null, 2), "code");
  }

  function messageView(m, names, isFinal) {
    var label = m.role === "tool" ? "tool output" : isFinal ? "final answer" : m.role;
    var call = m.role === "tool" && names[m.tool_call_id];
    var box = el("div", "msg " + m.role + (isFinal ? " final" : ""),
      el("div", "role", label, call ? el("span", "call-id", " of " + call.name + " " + m.tool_call_id) : null));
    if (m.reasoning) box.append(el("details", "reasoning", el("summary", "", "reasoning"), pre(m.reasoning)));
    if (m.content) box.append(pre(m.content, m.role === "tool" ? "output" : "text"));
    (m.tool_calls || []).forEach(function (c) {
      box.append(el("div", "call", el("div", "call-head", "tool call: " + c.name, el("span", "muted", c.id ? " " + c.id : "")), argsView(c.arguments)));
    });
    return box;
  }

  function transcript(r) {
    var sec = el("section", "transcript", el("h3", "", "Transcript"));
    var prompt = DATA.prompts[r.prompt] || [];
    if (prompt.length) {
      var p = el("details", "prompt", el("summary", "", "prompt: " + prompt.map(function (m) { return m.role; }).join(" + ")));
      p.addEventListener("toggle", function once() {
        p.removeEventListener("toggle", once);
        prompt.forEach(function (m) { p.append(messageView(m, {}, false)); });
      });
      sec.append(p);
    }
    var names = {};
    var last = -1;
    r.completion.forEach(function (m, i) {
      (m.tool_calls || []).forEach(function (c) { names[c.id] = c; });
      if (m.role === "assistant" && !(m.tool_calls || []).length) last = i;
    });
    if (!r.completion.length) sec.append(el("p", "muted", "no completion was saved"));
    r.completion.forEach(function (m, i) { sec.append(messageView(m, names, i === last)); });
    return sec;
  }

  // -- start ---------------------------------------------------------------------------------

  header();
  familyTable();
  options($("f-family"), uniq(ROLLOUTS.map(function (r) { return r.family; })), "all families");
  onFamily();
  $("f-family").addEventListener("change", onFamily);
  ["f-task", "f-score", "f-scoring-error", "f-tampered", "f-errored"].forEach(function (id) { $(id).addEventListener("change", apply); });
  var timer = null;
  $("f-search").addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(apply, 150); });
  requestAnimationFrame(function () {
    setTimeout(function () {
      window.viewerReadyAt = performance.now();
      document.documentElement.dataset.ready = "1";
    }, 0);
  });
})();
