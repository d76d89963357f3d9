// What both pages' scripts use (viewer.js, runs.js): render.py puts this file ahead of the page's
// own script in the page's one <script> element. el() appends strings as text nodes, so what a run
// holds only ever enters the DOM as text, never as HTML.
"use strict";

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

// the page is drawn: the browser tests and the timing in headless.py wait for this
function signalReady() {
  requestAnimationFrame(function () {
    setTimeout(function () {
      window.viewerReadyAt = performance.now();
      document.documentElement.dataset.ready = "1";
    }, 0);
  });
}
