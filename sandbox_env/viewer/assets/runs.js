// The runs index (served by `websandbox view --serve` only): one line a saved run, each a link to
// its page on the same server. Paths and models come from the disk and the runs: text only, as in
// viewer.js. The list is asked for again every few seconds, so a run that starts or grows shows.
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("run-data").textContent);
  var LIVE = DATA.live;

  function link(line, text) {
    var a = el("a", "open", text);
    a.href = line.url;
    return a;
  }

  function line(run) {
    var tr = el("tr", run.unreadable ? "run unreadable" : "run");
    var errored = el("td", "num errored", run.errored);
    if (run.errored > 0) errored.classList.add("bad");
    tr.append(el("td", "date", run.date), el("td", "model", link(run, run.model || "?")), el("td", "", run.format),
      el("td", "num rollouts", run.rollouts), el("td", "num mean", fmtReward(run.mean_reward)), errored,
      el("td", "path", link(run, run.path), run.unreadable ? el("div", "", "unreadable: " + run.unreadable) : null));
    tr.dataset.id = run.id;
    return tr;
  }

  function render() {
    $("roots").textContent = "runs under " + DATA.roots.join(", ");
    var body = $("runs");
    body.textContent = "";
    DATA.runs.forEach(function (run) { body.append(line(run)); });
    $("none").hidden = DATA.runs.length > 0;
    $("count").textContent = DATA.runs.length + " run(s), newest first";
  }

  function follow() {
    var version = LIVE.version;
    function poll() {
      fetch(LIVE.url + "?since=" + encodeURIComponent(version), { cache: "no-store", credentials: "same-origin" })
        .then(function (resp) {
          if (resp.status === 204) return null;
          if (!resp.ok) throw new Error("status " + resp.status);
          return resp.json();
        })
        .then(function (body) {
          if (body) { version = body.version; body.data.live = LIVE; DATA = body.data; render(); }
          $("live").textContent = "read " + new Date().toLocaleTimeString();
          $("live").classList.remove("bad");
        }, function (err) {
          $("live").textContent = "the server did not answer (" + err.message + "): the list is as last read";
          $("live").classList.add("bad");
        })
        .then(function () { setTimeout(poll, LIVE.every); });
    }
    setTimeout(poll, LIVE.every);
  }

  render();
  if (LIVE) follow();
  signalReady();
})();
