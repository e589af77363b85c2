/* The lab's missions on the static site: a reader's committed guesses are kept in the
 * browser's localStorage, per page, and restored when the page is opened again.
 *
 * A mission chart (kvsim.lab_charts.mission_band_chart with interactive=True) binds two
 * Vega parameters to inputs labelled "Mission N: ...": the guess slider and the
 * "I have committed my guess" checkbox. This script stores every such input's value
 * when it changes and, once the charts have drawn their inputs, puts the stored values
 * back (dispatching the events Vega listens to, so the chart follows). A button with the
 * class kvbook-missions-reset forgets this page's values. Nothing leaves the browser.
 * Mission 3's chart also has a drop-down "Mission 3: KV cache dtype" (a <select>): a view of
 * the band, not the guess, so it is neither kept nor locked.
 *
 * A committed guess locks: while a mission's "I have committed my guess" box is ticked, its
 * guess slider and the box are disabled, and a "Change my guess" button beside the box
 * unticks it (the band hides again) and frees the slider.
 */
(function () {
  "use strict";
  var PREFIX = "kvbook:missions:" + window.location.pathname + ":";

  function store() {
    try { return window.localStorage; } catch (e) { return null; }   // private mode, file://
  }

  function missionInputs() {
    var out = [];
    document.querySelectorAll(".vega-bind").forEach(function (bind) {
      var name = bind.querySelector(".vega-bind-name");
      var input = bind.querySelector("input");
      if (name && input && /^\s*Mission \d/.test(name.textContent)) {
        out.push({ key: PREFIX + name.textContent.trim(), input: input });
      }
    });
    return out;
  }

  function restore(item, s) {
    var saved = s.getItem(item.key);
    if (saved === null) { return; }
    if (item.input.type === "checkbox") {
      item.input.checked = saved === "true";
    } else {
      item.input.value = saved;
    }
    item.input.dispatchEvent(new Event("input", { bubbles: true }));
    item.input.dispatchEvent(new Event("change", { bubbles: true }));
  }

  function attach(items, s) {
    items.forEach(function (item) {
      if (item.input.dataset.kvbookMission) { return; }
      item.input.dataset.kvbookMission = "1";
      restore(item, s);
    });
    lock(items);
  }

  function missionOf(item) { return /Mission (\d+)/.exec(item.key)[1]; }

  // The lock: a ticked box disables its mission's slider and itself, until "Change my guess".
  function lock(items) {
    items.filter(function (i) { return i.input.type === "checkbox"; }).forEach(function (box) {
      var n = missionOf(box);
      var sliders = items.filter(function (i) {
        return i.input.type === "range" && missionOf(i) === n;
      });
      var bind = box.input.closest(".vega-bind");
      var button = bind.querySelector("button.kvbook-missions-change");
      if (!button) {
        button = document.createElement("button");
        button.type = "button";
        button.className = "kvbook-missions-change";
        button.textContent = "Change my guess";
        button.addEventListener("click", function () {
          box.input.disabled = false;
          box.input.checked = false;
          box.input.dispatchEvent(new Event("input", { bubbles: true }));
          box.input.dispatchEvent(new Event("change", { bubbles: true }));
          var slider = sliders[0] && sliders[0].input;
          if (slider) { slider.focus(); }
        });
        bind.appendChild(button);
      }
      var locked = box.input.checked;
      box.input.disabled = locked;
      sliders.forEach(function (i) { i.input.disabled = locked; });
      button.hidden = !locked;
    });
  }

  // Saving listens on the document, so a change is kept even before the poll below has
  // found the input (a reader who moves a slider the moment the chart appears).
  function keyOf(input) {
    var bind = input.closest(".vega-bind");
    var name = bind && bind.querySelector(".vega-bind-name");
    return name && /^\s*Mission \d/.test(name.textContent) ? PREFIX + name.textContent.trim()
                                                             : null;
  }

  function listen(s) {
    var save = function (event) {
      var input = event.target;
      if (!(input instanceof HTMLInputElement)) { return; }
      var key = keyOf(input);
      if (key) {
        s.setItem(key, input.type === "checkbox" ? String(input.checked) : input.value);
      }
    };
    document.addEventListener("input", save, true);
    document.addEventListener("change", save, true);
    document.addEventListener("change", function (event) {      // after Vega's own listener
      if (keyOf(event.target)) { window.setTimeout(function () { lock(missionInputs()); }, 0); }
    });
  }

  function start() {
    var s = store();
    if (!s) { return; }
    listen(s);
    document.querySelectorAll(".kvbook-missions-reset").forEach(function (button) {
      button.addEventListener("click", function () {
        Object.keys(s).filter(function (k) { return k.indexOf(PREFIX) === 0; })
          .forEach(function (k) { s.removeItem(k); });
        window.location.reload();
      });
    });
    var tries = 0;
    var timer = window.setInterval(function () {     // charts draw their inputs after load
      var items = missionInputs();
      attach(items, s);
      tries += 1;
      if (tries > 120) { window.clearInterval(timer); }     // 30 s: charts on a slow machine
    }, 250);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
