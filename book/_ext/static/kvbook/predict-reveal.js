/* Predict boxes on the static site: the answer shows once the reader has committed a guess.
 *
 * kvbook_predict.py gives every Predict box a hidden form (form.kvbook-guess, with the
 * prediction's id and unit) and marks the prediction cell after it (.kvbook-prediction-cell).
 * This script shows the form and veils, behind a visible note, what follows that cell up to
 * the next Predict box or section: the chart, the printed values and the sentence that
 * quotes them. Committing a guess, or choosing to see the answer without one, lifts the veil
 * and shows the guess in the box. The choice is kept in localStorage per page and prediction,
 * so the page opens revealed next time; where the browser refuses storage (private mode,
 * file://) the veil still lifts, for this visit only. Without JavaScript nothing is veiled.
 * Nothing leaves the browser.
 *
 * The page is parsed, and may be painted, before DOMContentLoaded: until then the class
 * kvbook-predict-pending on <html> blurs everything after a prediction cell (a wider cover
 * than the veil; predict-reveal.css), so the answer does not flash. start() always removes it.
 */
(function () {
  "use strict";
  var PENDING = "kvbook-predict-pending";
  document.documentElement.classList.add(PENDING);
  var PREFIX = "kvbook:predict:" + window.location.pathname + ":";
  var NOTE = "The answer below is blurred until you commit a guess in the Predict box above " +
             "(or choose to see it without guessing).";

  function store() {
    try {
      var s = window.localStorage;
      s.getItem(PREFIX);               // some browsers throw only on first use
      return s;
    } catch (e) { return null; }
  }

  function load(s, id) {
    if (!s) { return null; }
    try {
      var saved = JSON.parse(s.getItem(PREFIX + id));
      return saved && (saved.skipped === true || typeof saved.guess === "string") ? saved : null;
    } catch (e) { return null; }
  }

  function save(s, id, entry) {
    if (!s) { return; }
    try { s.setItem(PREFIX + id, JSON.stringify(entry)); } catch (e) { /* quota, private mode */ }
  }

  // The prediction cell after a Predict box, among the box's next siblings.
  function predictionCell(box) {
    for (var el = box.nextElementSibling; el; el = el.nextElementSibling) {
      if (el.classList.contains("kvbook-prediction-cell")) { return el; }
      if (el.tagName === "SECTION" || el.classList.contains("kvbook-predict")) { return null; }
    }
    return null;
  }

  function isBoundary(el) {
    return /^(SECTION|H1|H2|H3)$/.test(el.tagName) || el.classList.contains("kvbook-predict") ||
           el.querySelector(".kvbook-predict, h2, h3") !== null;
  }

  // What answers the box: everything after its prediction cell, up to the next box or section.
  function answer(cell) {
    var out = [];
    for (var el = cell.nextElementSibling; el && !isBoundary(el); el = el.nextElementSibling) {
      if (el.tagName !== "SCRIPT") { out.push(el); }
    }
    return out;
  }

  function veil(parts) {
    if (!parts.length) { return null; }
    var note = document.createElement("p");
    note.className = "kvbook-veil-note";
    note.setAttribute("role", "note");
    note.textContent = NOTE;
    parts[0].parentNode.insertBefore(note, parts[0]);
    parts.forEach(function (el) {
      el.classList.add("kvbook-veiled");
      el.setAttribute("inert", "");
      el.setAttribute("aria-hidden", "true");
    });
    return note;
  }

  function unveil(parts, note) {
    if (note) { note.remove(); }
    parts.forEach(function (el) {
      el.classList.remove("kvbook-veiled");
      el.removeAttribute("inert");
      el.removeAttribute("aria-hidden");
    });
  }

  function describe(form, entry) {
    if (entry.skipped) { return "You chose to see the answer without guessing."; }
    // The kernel's sentence (checks.js runs exercises.judge_prediction's rules on kvsim's value).
    var checks = window.KvbookChecks, data = window.kvbookChecksData;
    var id = form.dataset.prediction;
    if (checks && data && data.predictions && data.predictions[id]) {
      return checks.judgePrediction(data, id, entry.guess).message;
    }
    var unit = form.dataset.unit, note = form.dataset.note;
    var shown = entry.guess + (unit ? (unit === "%" ? "%" : " " + unit) : "");
    return "Your guess: " + shown + (note ? " (" + note + ")" : "");
  }

  function showResult(form, entry) {
    var result = document.createElement("p");
    result.className = "kvbook-guess-result";
    result.setAttribute("role", "status");
    result.tabIndex = -1;
    result.textContent = describe(form, entry);
    form.replaceWith(result);
    return result;
  }

  function setUp(form, s) {
    var box = form.closest(".kvbook-predict");
    var cell = box && predictionCell(box);
    var parts = cell ? answer(cell) : [];
    var id = form.dataset.prediction;
    if (box) { box.dataset.prediction = id; }      // the box keeps its id once the form is gone
    var saved = load(s, id);
    if (saved) { showResult(form, saved); return; }
    var note = veil(parts);
    var input = form.querySelector("input");
    var message = form.querySelector(".kvbook-guess-message");

    function reveal(entry) {
      save(s, id, entry);
      unveil(parts, note);
      showResult(form, entry).focus();
    }

    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var value = input.value.trim();
      if (value === "" || !isFinite(Number(value))) {
        message.textContent = "Type a number first.";
        input.focus();
        return;
      }
      reveal({ guess: value });
    });
    form.querySelector(".kvbook-guess-skip").addEventListener("click", function () {
      reveal({ skipped: true });
    });
    form.hidden = false;
  }

  function start() {
    try {
      var s = store();
      document.querySelectorAll("form.kvbook-guess[data-prediction]").forEach(function (form) {
        setUp(form, s);
      });
    } finally {
      document.documentElement.classList.remove(PENDING);    // never leave the page blurred
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
