// The run viewer's page logic. Run data is written by the model under evaluation:
// it only ever enters the DOM as text (el(), common.js, appends strings as text nodes), never as HTML.
// Little is built up front: the table a page of rows at a time, a rollout's grade and
// transcript when its row is opened.
// Served by `websandbox view --serve`, DATA.live says where the server's fresh data is: the
// page asks for it every few seconds (the only request its CSP allows, to its own origin)
// and re-renders, keeping the filters, the order, the rows shown and the open rollouts.
// A rollout's own link is the fragment #rollout=N (or #task=ID): it opens that rollout.
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("run-data").textContent);
  var ROLLOUTS = DATA.rollouts;
  var HAS_GRADES = ROLLOUTS.some(function (r) { return Boolean(r.grade); });
  var LIVE = DATA.live; // null in a written file
  var COLUMNS = 9; // of the rollout table
  var PAGE = 100;
  // open: the rollouts whose detail is open; pending: a linked rollout not in the run yet (a live run)
  var state = { matches: [], shown: 0, search: "", searchIndex: null, open: new Set(), pending: null };
  var details = new Map(); // rollout n -> its built detail row

  function fmtChange(x) { return x === null || x === undefined ? "–" : (x > 0 ? "+" : "") + fmtReward(x); }
  function fmtInt(x) { return x === null || x === undefined ? "–" : Math.round(x).toLocaleString("en-US"); }
  function fmtSec(x) { return x === null || x === undefined ? "–" : (x < 10 ? x.toFixed(2) : x.toFixed(1)) + " s"; }
  function totalTokens(r) { return r.tokens ? (r.tokens.input || 0) + (r.tokens.output || 0) : null; }
  function isSet(obj) { return obj && typeof obj === "object" && Object.keys(obj).length > 0; }
  // the settings that were given a value (null or empty means the server's default)
  function given_(obj) {
    var out = {};
    Object.keys(obj || {}).forEach(function (k) {
      var v = obj[k];
      if (v !== null && v !== undefined && !(typeof v === "object" && !Array.isArray(v) && !isSet(v))) out[k] = v;
    });
    return out;
  }
  function value(v) { return JSON.stringify(v === undefined ? null : v); }
  function pre(text, cls) { return el("pre", cls || "", text); }

  // -- header, problems, family table ---------------------------------------------------

  // what a run says about itself: model, date, size; then what it was made with (sampling,
  // taskset and agent arguments, versions), one line each
  function metaView(m, count, source, format) {
    var box = el("div", "meta");
    var bits = [];
    if (m.model) bits.push("model " + m.model);
    if (m.env_id) bits.push("env " + m.env_id);
    if (m.date) bits.push(String(m.date));
    if (count !== null) bits.push(count + " rollouts");
    if (m.rollouts_per_example) bits.push(m.rollouts_per_example + " rollout(s) a task");
    if (m.avg_reward !== undefined && m.avg_reward !== null) bits.push("mean reward " + fmtReward(m.avg_reward));
    box.append(el("div", "", bits.join(" · ")));
    if (m.sampling_args !== undefined) {
      var given = given_(m.sampling_args);
      box.append(el("div", "made sampling", "sampling " + (isSet(given) ? JSON.stringify(given) : "the server's defaults")));
    }
    if (isSet(m.env_args)) box.append(el("div", "made args", "arguments " + JSON.stringify(m.env_args)));
    if (isSet(m.agent_args)) box.append(el("div", "made agent", "agent " + JSON.stringify(m.agent_args)));
    var v = m.version_info || {}, versions = [];
    if (v.vf_version) versions.push("verifiers " + v.vf_version + (v.vf_commit ? " (" + v.vf_commit + ")" : ""));
    if (v.env_version) versions.push("websandbox " + v.env_version + (v.env_commit ? " (" + v.env_commit + ")" : ""));
    if (versions.length) box.append(el("div", "made versions", versions.join(" · ")));
    box.append(el("div", "source", source + " (" + format + ")"));
    return box;
  }

  function header() {
    var problemsOpen = Boolean($("run-meta").querySelector("details.problems[open]"));
    $("run-meta").textContent = "";
    $("run-meta").append(metaView(DATA.meta || {}, ROLLOUTS.length, DATA.source, DATA.format));
    // what the transcripts say about the model server (notes.py): no tool called, replies cut
    (DATA.notes || []).forEach(function (note) { $("run-meta").append(el("div", "note", note)); });
    if (DATA.problems && DATA.problems.length) {
      var box = el("details", "problems", el("summary", "", DATA.problems.length + " problem(s) reading this run"));
      DATA.problems.forEach(function (p) { box.append(el("div", "", p)); });
      box.open = problemsOpen;
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
    t.textContent = "";
    var cols = [["family", "family"], ["rollouts", "rollouts"], ["mean_reward", "mean reward"],
      ["mean_finished", "mean reward, finished"], ["ci", "95 % interval"], ["perfect", "reward 1.0"],
      ["scoring_errors", "scoring errors"], ["tampered", "tampered"], ["errored", "errored"]];
    var head = el("tr", "");
    cols.forEach(function (c) { head.append(el("th", "", c[1])); });
    t.append(el("thead", "", head));
    var body = el("tbody", "");
    DATA.families.forEach(function (row) {
      var tr = el("tr", row.family === "all" ? "total" : "");
      cols.forEach(function (c) {
        var v = row[c[0]];
        var text = c[0] === "mean_reward" || c[0] === "mean_finished" ? fmtReward(v) : c[0] === "errored" ? erroredCell(row)
          : c[0] === "ci" ? (row.ci_low === null || row.ci_low === undefined ? "–" : fmtReward(row.ci_low) + " – " + fmtReward(row.ci_high)) : v;
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

  // a select's choice kept across a rebuild of its options, "" when the choice is gone
  function keepChoice(select, value) {
    select.value = value;
    if (select.value !== value) select.value = "";
  }

  // the options that depend on the run's rollouts: families, error kinds (a live run gains some)
  function fillOptions() {
    var fam = $("f-family").value, er = $("f-errored").value;
    options($("f-family"), uniq(ROLLOUTS.map(function (r) { return r.family; })), "all families");
    keepChoice($("f-family"), fam);
    Array.from($("f-errored").options).forEach(function (o) { if (o.value.indexOf("kind:") === 0) o.remove(); });
    var kinds = uniq(ROLLOUTS.filter(function (r) { return r.error; }).map(function (r) { return r.error_kind || "error"; }));
    kinds.forEach(function (k) { $("f-errored").append(new Option("yes: " + k, "kind:" + k)); });
    keepChoice($("f-errored"), er);
  }

  function taskOptions() {
    var fam = $("f-family").value, keep = $("f-task").value;
    options($("f-task"), uniq(ROLLOUTS.filter(function (r) { return !fam || r.family === fam; })
      .map(function (r) { return r.task_id; })), "all tasks");
    keepChoice($("f-task"), keep);
  }

  function onFamily() {
    taskOptions();
    apply();
  }

  function clearFilters() {
    ["f-family", "f-task", "f-score", "f-scoring-error", "f-tampered", "f-errored"].forEach(function (id) { $(id).value = ""; });
    $("f-search").value = "";
    taskOptions();
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

  function errorMatches(r, want) {
    if (want.indexOf("kind:") === 0) return Boolean(r.error) && (r.error_kind || "error") === want.slice(5);
    return flagMatches(r.error, want);
  }

  function cmp(a, b) { return a < b ? -1 : a > b ? 1 : 0; }

  // a number, most first (or least first), rollouts without one last, ties in run order
  function byNumber(f, ascending) {
    return function (a, b) {
      var x = f(a), y = f(b);
      if (x === null || x === undefined) return y === null || y === undefined ? a.n - b.n : 1;
      if (y === null || y === undefined) return -1;
      return (ascending ? x - y : y - x) || a.n - b.n;
    };
  }

  var SORTS = {
    family: function (a, b) { return cmp(a.family, b.family) || cmp(a.task_id, b.task_id) || a.n - b.n; },
    task: function (a, b) { return cmp(a.task_id, b.task_id) || a.n - b.n; },
    "score-up": byNumber(function (r) { return r.reward; }, true),
    "score-down": byNumber(function (r) { return r.reward; }, false),
    turns: byNumber(function (r) { return r.turns; }, false),
    tokens: byNumber(totalTokens, false),
    time: byNumber(function (r) { return r.seconds; }, false)
  };

  // the rows that match the filters, in the chosen order; `keep`: as many rows shown as before (a live update)
  function apply(keep) {
    var before = keep === true ? state.shown : 0;
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
      if (!flagMatches(r.scoring_error, se) || !flagMatches(r.tampered, tp) || !errorMatches(r, er)) continue;
      if (q && state.searchIndex[i].indexOf(q) < 0) continue;
      state.matches.push(i);
    }
    var order = SORTS[$("f-sort").value];
    if (order) state.matches.sort(function (i, j) { return order(ROLLOUTS[i], ROLLOUTS[j]); });
    $("rows").textContent = "";
    state.shown = 0;
    more(Math.max(before, PAGE));
  }

  // -- the rollout table, a page at a time --------------------------------------------------

  function flags(r) {
    var box = el("span", "flags");
    if (r.scoring_error) box.append(el("span", "badge err", "scoring error"));
    if (r.tampered) box.append(el("span", "badge tamper", "tampered"));
    if (r.error) box.append(el("span", "badge err", "error"));
    if (r.truncated) box.append(el("span", "badge warn", r.cut_replies ? "cut ×" + r.cut_replies : "cut"));
    if (r.replayed_after && r.replayed_after.length) box.append(el("span", "badge warn", "replayed ×" + r.replayed_after.length));
    if (!r.grade) box.append(el("span", "badge muted", "no grade"));
    return box;
  }

  function rewardClass(x) { return x === null ? "muted" : x === 1 ? "good" : x === 0 ? "bad" : "partial"; }

  // the rollout's own link: a plain click opens it here; a click with a modifier is the browser's (a new tab)
  function linkTo(r) {
    var a = el("a", "link", r.n);
    a.href = "#rollout=" + r.n;
    a.title = "this rollout's own link";
    a.addEventListener("click", function (ev) {
      ev.stopPropagation();
      if (ev.button !== 0 || ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.altKey) return;
      ev.preventDefault();
      reveal({ n: r.n });
    });
    return a;
  }

  function row(r) {
    var tr = el("tr", "rollout");
    tr.tabIndex = 0;
    tr.dataset.n = r.n;
    var reason = r.scoring_error ? "scoring error: " + r.scoring_error : r.grade ? r.grade.reason || "" : r.error || "";
    var tokens = el("td", "num tokens", fmtInt(totalTokens(r)));
    if (r.tokens) tokens.title = fmtInt(r.tokens.input) + " in, " + fmtInt(r.tokens.output) + " out";
    tr.append(el("td", "num muted", linkTo(r)), el("td", "", r.family), el("td", "task", r.task_id),
      el("td", "num reward " + rewardClass(r.reward), fmtReward(r.reward)), el("td", "", flags(r)),
      el("td", "num turns", r.turns === undefined ? "–" : r.turns), tokens, el("td", "num time", fmtSec(r.seconds)),
      el("td", "reason", reason));
    tr.addEventListener("click", function () { toggle(tr, r); });
    tr.addEventListener("keydown", function (ev) { if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); toggle(tr, r); } });
    return tr;
  }

  // rows up to `upTo` shown (default: one page more), then a button for the rest
  function more(upTo) {
    var body = $("rows");
    var old = body.querySelector("tr.more");
    if (old) old.remove();
    var end = Math.min(state.matches.length, typeof upTo === "number" ? upTo : state.shown + PAGE);
    var frag = document.createDocumentFragment();
    for (var i = state.shown; i < end; i++) {
      var r = ROLLOUTS[state.matches[i]];
      var tr = row(r);
      frag.append(tr);
      if (state.open.has(r.n)) { tr.classList.add("open"); frag.append(detailRow(r)); }
    }
    state.shown = end;
    var left = state.matches.length - end;
    if (left > 0) {
      var btn = el("button", "", "show " + Math.min(left, PAGE) + " more (" + left + " left)");
      btn.addEventListener("click", function () { more(); });
      var tr = el("tr", "more", el("td", "", btn));
      tr.firstChild.colSpan = COLUMNS;
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

  // a rollout's detail row, built once and kept (a live update keeps it while the rollout is unchanged)
  function detailRow(r) {
    var d = details.get(r.n);
    if (!d) {
      d = el("tr", "detail", el("td", "", detail(r)));
      d.firstChild.colSpan = COLUMNS;
      details.set(r.n, d);
    }
    return d;
  }

  function toggle(tr, r) {
    if (state.open.has(r.n)) closeRow(tr, r); else openRow(tr, r);
  }

  function openRow(tr, r) {
    state.open.add(r.n);
    tr.after(detailRow(r));
    tr.classList.add("open");
    setLink(r.n);
  }

  function closeRow(tr, r) {
    state.open.delete(r.n);
    var d = details.get(r.n);
    if (d) d.remove();
    tr.classList.remove("open");
    var want = linked();
    if (want && want.n === r.n) setLink(null);
  }

  // -- links to one rollout: #rollout=N (or #task=ID) ----------------------------------------

  function linked() {
    var h;
    try { h = decodeURIComponent(location.hash.slice(1)); } catch (e) { return null; }
    var m = /^rollout=(\d+)$/.exec(h);
    if (m) return { n: Number(m[1]) };
    m = /^task=(.+)$/.exec(h);
    return m ? { task: m[1] } : null;
  }

  // the address bar names the open rollout (no history entry, no hashchange)
  function setLink(n) {
    var url = n === null ? location.pathname + location.search : "#rollout=" + n;
    try { history.replaceState(null, "", url); } catch (e) { /* a page that may not rewrite its URL keeps it */ }
  }

  function findLinked(want) {
    return ROLLOUTS.find(function (r) { return want.n !== undefined ? r.n === want.n : r.task_id === want.task; });
  }

  // open the linked rollout, scrolled to; one that is filtered out clears the filters, one not
  // yet in a live run opens when it arrives
  function reveal(want) {
    var r = findLinked(want);
    if (!r) { state.pending = want; return; }
    state.pending = null;
    var at = state.matches.indexOf(ROLLOUTS.indexOf(r));
    if (at < 0) {
      clearFilters();
      apply();
      at = state.matches.indexOf(ROLLOUTS.indexOf(r));
    }
    if (at >= state.shown) more(at + 1);
    var tr = $("rows").querySelector('tr.rollout[data-n="' + r.n + '"]');
    if (!tr) return;
    if (!state.open.has(r.n)) openRow(tr, r); else setLink(r.n);
    tr.scrollIntoView({ block: "start" });
  }

  // -- export: the rows shown, as CSV or JSONL (export.py writes the same for the command line) --

  var EXPORT_COLUMNS = ["n", "example_id", "family", "task_id", "difficulty", "category", "reward", "scoring_error",
    "tampered", "error_kind", "error", "truncated", "cut_replies", "replayed_after", "turns", "input_tokens", "output_tokens", "seconds",
    "stop", "reason"];

  function orNull(v) { return v === undefined ? null : v; }

  function tableRow(r) {
    var t = r.tokens || {};
    var reason = r.scoring_error ? "scoring error: " + r.scoring_error
      : r.grade && r.grade.reason ? String(r.grade.reason) : String(r.error || "");
    var values = [r.n, r.example_id, r.family, r.task_id, r.difficulty, r.category, r.reward, r.scoring_error,
      Boolean(r.tampered), r.error ? r.error_kind : null, r.error, r.truncated, r.cut_replies,
      r.replayed_after && r.replayed_after.length ? r.replayed_after.join("; ") : null, r.turns, t.input, t.output,
      r.seconds, r.stop, reason];
    var out = {};
    EXPORT_COLUMNS.forEach(function (c, i) { out[c] = orNull(values[i]); });
    return out;
  }

  // a spreadsheet runs a cell starting with = + - @ as a formula: such text gets a leading '
  function csvCell(v) {
    if (v === null) return "";
    if (typeof v === "boolean") return v ? "true" : "false";
    if (typeof v === "number") return String(v);
    var text = typeof v === "string" ? v : JSON.stringify(v);
    return /^[=+\-@\t\r]/.test(text) ? "'" + text : text;
  }

  function csvField(text) { return /[",\r\n]/.test(text) ? '"' + text.replace(/"/g, '""') + '"' : text; }

  function csvText(rows) {
    var lines = [EXPORT_COLUMNS.join(",")];
    rows.forEach(function (row) { lines.push(EXPORT_COLUMNS.map(function (c) { return csvField(csvCell(row[c])); }).join(",")); });
    return lines.join("\n") + "\n";
  }

  function jsonlText(rows) { return rows.map(function (row) { return JSON.stringify(row) + "\n"; }).join(""); }

  // a file made in the page: a Blob URL, no request
  function download(name, text, type) {
    var url = URL.createObjectURL(new Blob([text], { type: type }));
    var a = el("a");
    a.href = url;
    a.download = name;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(function () { URL.revokeObjectURL(url); }, 60000);
  }

  function exportShown(kind) {
    var rows = state.matches.map(function (i) { return tableRow(ROLLOUTS[i]); });
    var name = String(DATA.source).split(/[\\/]/).filter(Boolean).pop() || "run";
    name = name.replace(/[^A-Za-z0-9._-]+/g, "_") + "-rollouts." + kind;
    if (kind === "csv") download(name, csvText(rows), "text/csv");
    else download(name, jsonlText(rows), "application/x-ndjson");
  }

  // -- one rollout: grade and transcript ---------------------------------------------------

  function detail(r) {
    var box = el("div", "detail-box");
    var where = [r.family, r.task_id, r.difficulty, r.category].filter(Boolean).join(" · ");
    box.append(el("div", "where", where + " · example " + r.example_id + (r.stop ? " · stopped: " + r.stop : "")));
    var cost = [];
    if (r.turns !== undefined) cost.push(r.turns + " turn(s)");
    if (r.tokens) cost.push(fmtInt(r.tokens.input) + " tokens in, " + fmtInt(r.tokens.output) + " out");
    if (r.seconds !== null && r.seconds !== undefined) cost.push(fmtSec(r.seconds));
    if (isSet(r.timing)) cost.push(Object.keys(r.timing).map(function (k) { return k + " " + fmtSec(r.timing[k]); }).join(", "));
    if (cost.length) box.append(el("div", "cost", cost.join(" · ")));
    if (r.scoring_error) box.append(el("div", "alert err", "scoring error (the harness failed, not the model): " + r.scoring_error));
    if (r.replayed_after && r.replayed_after.length) {
      box.append(el("div", "alert warn", "replayed after " + r.replayed_after.length + " errored attempt(s); this is the last",
        pre(r.replayed_after.join("\n"))));
    }
    if (r.error) {
      var alert = el("div", "alert err", "rollout error", pre(r.error));
      if (r.traceback) alert.append(el("details", "traceback", el("summary", "", "traceback"), pre(r.traceback)));
      box.append(alert);
    }
    box.append(gradeView(r), transcript(r));
    return box;
  }

  // what makes a run save its grades, on the stack that made this one (v1 saves them in each trace's info)
  function noGradeAdvice(format) {
    if (format === "v1") {
      return "This run saved no grade: a v1 run keeps it in each trace's info, and none is there (the rollouts ended before grading).";
    }
    return "This run saved no grade (make runs with `websandbox eval` or vf-eval's -C grade).";
  }

  function gradeView(r) {
    var sec = el("section", "grade", el("h3", "", "Grade"));
    var g = r.grade;
    if (!g) {
      if (!HAS_GRADES) {
        sec.append(el("p", "muted no-grade", noGradeAdvice(DATA.format)));
      } else if (r.error) {
        sec.append(el("p", "no-grade bad", "Not graded: the rollout stopped on an error before grading."), pre(r.error, "assertion"));
      } else {
        sec.append(el("p", "muted no-grade", "No grade was saved for this rollout."));
      }
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

  // one assistant turn's cost, as far as the run saved it
  function usageView(u, turn) {
    var bits = ["turn " + turn];
    if (u.input_tokens !== undefined) bits.push(fmtInt(u.input_tokens) + " tokens in");
    if (u.output_tokens !== undefined) bits.push(fmtInt(u.output_tokens) + " out");
    if (u.seconds !== undefined) bits.push(fmtSec(u.seconds));
    if (u.finish_reason) bits.push("finish: " + u.finish_reason);
    return el("span", "usage", bits.join(" · "));
  }

  function messageView(m, names, isFinal, turn) {
    var label = m.role === "tool" ? "tool output" : isFinal ? "final answer" : m.role;
    var call = m.role === "tool" && names[m.tool_call_id];
    var box = el("div", "msg " + m.role + (isFinal ? " final" : ""),
      el("div", "role", label, call ? el("span", "call-id", " of " + call.name + " " + m.tool_call_id) : null,
        m.usage ? usageView(m.usage, turn) : null));
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
        prompt.forEach(function (m) { p.append(messageView(m, {}, false, 0)); });
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
    var turn = 0;
    r.completion.forEach(function (m, i) {
      if (m.role === "assistant") turn++;
      sec.append(messageView(m, names, i === last, turn));
    });
    return sec;
  }

  // -- the comparison with a baseline run ----------------------------------------------------

  var COMPARE_SORTS = {
    task: function (a, b) { return cmp(a.task_id, b.task_id); },
    family: function (a, b) { return cmp(a.family, b.family) || cmp(a.task_id, b.task_id); },
    "change-up": function (a, b) { return byNumber(function (t) { return t.change; }, true)(a, b) || cmp(a.task_id, b.task_id); },
    "change-down": function (a, b) { return byNumber(function (t) { return t.change; }, false)(a, b) || cmp(a.task_id, b.task_id); }
  };

  function compareShows(t, show) {
    if (!show) return true;
    if (show === "flipped") return Boolean(t.flip);
    if (show === "gained" || show === "lost") return t.flip === show;
    if (show === "changed") return t.change !== null && t.change !== 0;
    return !t.here || !t.base; // in one run only
  }

  function sideCell(side) {
    if (!side) return el("td", "num muted", "not run");
    var td = el("td", "num score " + rewardClass(side.score), fmtReward(side.score));
    if (side.rollouts > 1) td.append(el("span", "muted", " (" + side.rollouts + ")"));
    if (side.errored) td.append(el("span", "badge err", side.errored + " errored"));
    return td;
  }

  function compareRows() {
    var c = DATA.compare, show = $("c-show").value, order = COMPARE_SORTS[$("c-sort").value] || COMPARE_SORTS.task;
    var body = $("compare-rows");
    body.textContent = "";
    c.tasks.filter(function (t) { return compareShows(t, show); }).sort(order).forEach(function (t) {
      var tr = el("tr", "task-change" + (t.flip ? " flip-" + t.flip : ""));
      var change = el("td", "num change " + (t.change > 0 ? "good" : t.change < 0 ? "bad" : "muted"), fmtChange(t.change));
      tr.append(el("td", "", t.family), el("td", "task", t.task_id), sideCell(t.here), sideCell(t.base), change,
        el("td", "flip", t.flip || ""), el("td", "reason", t.here ? t.here.reason : ""), el("td", "reason", t.base ? t.base.reason : ""));
      if (t.here) {
        tr.classList.add("pick");
        tr.title = "show this task's rollouts";
        tr.addEventListener("click", function () {
          $("f-family").value = "";
          onFamily();
          $("f-task").value = t.task_id;
          apply();
          $("rows").scrollIntoView();
        });
      }
      body.append(tr);
    });
  }

  function compareView() {
    var c = DATA.compare;
    if (!c) return;
    $("compare").hidden = false;
    ["base-name", "base-meta", "compare-summary"].forEach(function (id) { $(id).textContent = ""; });
    $("base-name").append(c.base.meta.model ? "model " + c.base.meta.model : c.base.source);
    $("base-meta").append(metaView(c.base.meta || {}, null, c.base.source, c.base.format));
    var s = c.summary;
    var bits = [s.shared + " tasks in both runs", s.gained + " solved here only (gained)", s.lost + " solved in the baseline only (lost)",
      s.better + " better", s.worse + " worse", s.same + " the same"];
    if (s.mean_change !== null) bits.push("mean change " + fmtChange(s.mean_change));
    if (s.only_here) bits.push(s.only_here + " here only");
    if (s.only_base) bits.push(s.only_base + " in the baseline only");
    $("compare-summary").append(el("div", "", bits.join(" · ")));
    compareRows();
  }

  // -- following a live run (served only) ----------------------------------------------------

  function liveStatus(text, bad) {
    $("live").textContent = text;
    $("live").classList.toggle("bad", Boolean(bad));
  }

  // fresh data from the server: everything rebuilt from it, what the reader chose kept
  function update(data) {
    var old = ROLLOUTS;
    data.live = LIVE;
    DATA = data;
    ROLLOUTS = data.rollouts;
    HAS_GRADES = ROLLOUTS.some(function (r) { return Boolean(r.grade); });
    state.searchIndex = null;
    details.forEach(function (d, n) {
      var a = old.find(function (r) { return r.n === n; }), b = findLinked({ n: n });
      if (!b || JSON.stringify(a) !== JSON.stringify(b)) details.delete(n);
    });
    header();
    familyTable();
    fillOptions();
    taskOptions();
    compareView();
    apply(true);
    if (state.pending) reveal(state.pending);
  }

  function follow() {
    if (!LIVE) return;
    var version = LIVE.version;
    $("live").hidden = false;
    if (LIVE.index) { $("all-runs").href = LIVE.index; $("all-runs").hidden = false; }
    function said() { return "following the run: " + ROLLOUTS.length + " rollouts, read " + new Date().toLocaleTimeString(); }
    liveStatus(said());
    function poll() {
      fetch(LIVE.url + "?since=" + encodeURIComponent(version), { cache: "no-store", credentials: "same-origin" })
        .then(function (resp) {
          if (resp.status === 204) return null;
          if (!resp.ok) return resp.text().then(function (t) { throw new Error(t || "status " + resp.status); });
          return resp.json();
        })
        .then(function (body) {
          if (body) { version = body.version; update(body.data); }
          liveStatus(said());
        }, function (err) {
          liveStatus("the server did not answer (" + err.message + "): this page shows the run as last read, and asks again", true);
        })
        .then(function () { setTimeout(poll, LIVE.every); });
    }
    setTimeout(poll, LIVE.every);
  }

  // -- start ---------------------------------------------------------------------------------

  header();
  familyTable();
  fillOptions();
  onFamily();
  compareView();
  if (DATA.compare) {
    $("c-show").addEventListener("change", compareRows);
    $("c-sort").addEventListener("change", compareRows);
  }
  $("export-csv").addEventListener("click", function () { exportShown("csv"); });
  $("export-jsonl").addEventListener("click", function () { exportShown("jsonl"); });
  window.addEventListener("hashchange", function () { var want = linked(); if (want) reveal(want); });
  var want = linked();
  if (want) reveal(want);
  follow();
  $("f-family").addEventListener("change", onFamily);
  ["f-task", "f-score", "f-scoring-error", "f-tampered", "f-errored", "f-sort"].forEach(function (id) { $(id).addEventListener("change", apply); });
  document.querySelectorAll("table.rollouts th[data-sort]").forEach(function (th) {
    th.classList.add("sortable");
    th.title = "sort by " + (th.textContent === "#" ? "run order" : th.textContent);
    th.addEventListener("click", function () { $("f-sort").value = th.dataset.sort; apply(); });
  });
  var timer = null;
  $("f-search").addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(apply, 150); });
  signalReady();
})();
