/* Exercises and predictions on the static site: the kernel's checks, run in the browser.
 *
 * In a notebook, exercises.check(id, answer) and exercises.predict(id, guess) judge with kvsim
 * (kvsim/book/exercises/__init__.py: evaluate and judge_prediction). The site has no kernel, so
 * this script runs the same rules on the data kvsim computed for it (checks-data.js, written by
 * scripts/site_data.py from kvsim.book.exercises.site_data): the expected answer and why, the
 * tolerances or the range, the general hint and each trap's value and hint; each prediction's
 * value and why. Numbers print as the kernel prints them (plain(): thousands separators, four
 * significant digits, Python's rounding of the exact binary value, half to even).
 * tests/test_site_checks.py runs these functions under Node and the kernel's on the same
 * answers and compares every message.
 *
 * On a page, kvbook_checks.py leaves a hidden form.kvbook-answer after each exercise's check
 * cell; this script fills it (a box for a number, or one button per choice, and "Check"),
 * shows the verdict under it, and keeps the last answer in localStorage per page and exercise.
 * predict-reveal.js asks judgePrediction for the sentence a committed guess gets. Without
 * JavaScript the forms stay hidden and the cells' saved outputs show. Nothing leaves the
 * browser.
 */
(function (root, factory) {
  "use strict";
  var api = factory();
  if (typeof module === "object" && module.exports) {
    module.exports = api;
  } else {
    root.KvbookChecks = api;
  }
})(typeof self !== "undefined" ? self : this, function () {
  "use strict";

  // ----------------------------------------------------------------- numbers as Python prints them

  function group(digits) {
    return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  }

  // "d.ddd" with `decimals` decimals of |x|, rounded as Python's format(x, ".Nf") rounds: the
  // exact binary value, a tie to the even digit.
  function fixed(x, decimals, grouping) {
    var negative = x < 0 || Object.is(x, -0);
    var a = Math.abs(x);
    var intPart, frac;
    if (a >= 1e21) {                      // toFixed turns exponential there; the value is whole
      intPart = BigInt(a).toString();
      frac = "";
    } else {
      var exact = a.toFixed(100);         // every digit of a double this size
      var dot = exact.indexOf(".");
      intPart = exact.slice(0, dot);
      frac = exact.slice(dot + 1);
    }
    while (frac.length < decimals + 1) { frac += "0"; }
    var digits = intPart + frac.slice(0, decimals);
    var rest = frac.slice(decimals);
    var up = rest[0] > "5" || (rest[0] === "5" &&
             (/[1-9]/.test(rest.slice(1)) || Number(digits[digits.length - 1]) % 2 === 1));
    if (up) {
      var chars = digits.split(""), i = chars.length - 1;
      while (i >= 0 && chars[i] === "9") { chars[i] = "0"; i -= 1; }
      if (i >= 0) { chars[i] = String(Number(chars[i]) + 1); } else { chars.unshift("1"); }
      digits = chars.join("");
    }
    var cut = digits.length - decimals;
    var whole = digits.slice(0, cut).replace(/^0+(?=\d)/, "") || "0";
    var text = (grouping ? group(whole) : whole) + (decimals ? "." + digits.slice(cut) : "");
    return (negative ? "-" : "") + text;
  }

  // kvsim.book.exercises.plain: `isInt` for a number the kernel would hold as an int.
  function plain(x, isInt) {
    if (!isFinite(x)) { return isNaN(x) ? "nan" : (x > 0 ? "inf" : "-inf"); }
    if (isInt || (Number.isInteger(x) && Math.abs(x) < 1e15)) {
      var whole = Number.isInteger(x) && Math.abs(x) >= 1e21 ? BigInt(x).toString()
                                                               : fixed(Math.trunc(x), 0, false);
      return whole.charAt(0) === "-" ? "-" + group(whole.slice(1)) : group(whole);
    }
    var a = Math.abs(x);
    if (a >= 1000) { return fixed(x, 1, true); }
    var decimals = Math.max(0, 3 - Math.floor(Math.log10(a)));
    var text = fixed(x, decimals, true);
    return text.indexOf(".") >= 0 ? text.replace(/0+$/, "").replace(/\.$/, "") : text;
  }

  // Python's round(x, n), for the ratios a prediction's feedback prints.
  function pyRound(x, n) { return Number(fixed(x, n, false)); }

  // What a reader typed, as the number the kernel would get: {value, isInt}, or null.
  var NUMBER = /^[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d*)?(?:[eE][+-]?\d+)?$/;
  function parseNumber(text) {
    var t = String(text).trim().replace(/[\u2009\u202f ]/g, "");
    if (!t || !NUMBER.test(t) || !/\d/.test(t.replace(/[eE].*$/, ""))) { return null; }
    var value = Number(t.replace(/,/g, ""));
    if (!isFinite(value)) { return null; }
    return { value: value, isInt: !/[.eE]/.test(t) };
  }

  // ----------------------------------------------------------------- the checks

  function verdict(status, message) { return { status: status, message: message }; }

  function pyRepr(word) { return "'" + word.replace(/\\/g, "\\\\").replace(/'/g, "\\'") + "'"; }

  function close(ex, x) {
    if (ex.between) { return ex.between[0] < x && x < ex.between[1]; }
    return Math.abs(x - ex.expected) <= Math.max(ex.abs_tol, ex.rel_tol * Math.abs(ex.expected));
  }

  // kvsim.book.exercises.evaluate, on an answer typed on the page (a number, or a choice).
  function evaluate(data, id, text) {
    var ex = data.exercises[id];
    if (!ex) { throw new Error("no check for exercise " + id); }
    if (String(text).trim() === "") {
      return verdict("unanswered", "Not answered yet: type your answer (" + ex.unit +
                     ") and press Check.");
    }
    var i;
    if (ex.kind === "choice") {
      var pick = String(text).trim().toLowerCase();
      if (ex.options.indexOf(pick) < 0) {
        return verdict("invalid", "Not one of the choices: pick one of " +
                       ex.options.map(pyRepr).join(", ") + ".");
      }
      if (pick === ex.expected) { return verdict("right", "Right: " + ex.why + "."); }
      for (i = 0; i < ex.traps.length; i += 1) {
        if (pick === ex.traps[i][0]) {
          return verdict("wrong", "Not yet: " + pyRepr(pick) + " is not it; hint: " +
                         ex.traps[i][1] + ".");
        }
      }
      return verdict("wrong", "Not yet: " + pyRepr(pick) + " is not it; hint: " + ex.hint + ".");
    }
    var n = parseNumber(text);
    if (!n) {
      return verdict("invalid", "Not a number: write " +
                     (ex.kind === "int" ? "a whole number" : "a number") + " (" + ex.unit +
                     "), such as 1,735 or 0.86.");
    }
    var x = n.value;
    if (close(ex, x)) { return verdict("right", "Right: " + ex.why + "."); }
    for (i = 0; i < ex.traps.length; i += 1) {
      var trap = ex.traps[i][0], a = Math.abs(trap);
      if (Math.abs(x - trap) <= Math.max(ex.abs_tol, ex.rel_tol * a, 1e-9 * a)) {
        return verdict("wrong", "Not yet: " + plain(x, n.isInt) + " is not it; hint: " +
                       ex.traps[i][1] + ".");
      }
    }
    return verdict("wrong", "Not yet: " + plain(x, n.isInt) + " is not it; hint: " + ex.hint + ".");
  }

  // kvsim.book.exercises.judge_prediction, on a guess typed in a Predict box.
  function judgePrediction(data, id, text) {
    var p = data.predictions[id];
    if (!p) { throw new Error("no prediction " + id); }
    var n = parseNumber(text);
    if (!n) { return verdict("invalid", "Not a number: write your guess (" + p.unit + ")."); }
    var x = n.value, value = p.value;
    var head = "You predicted " + plain(x, n.isInt) + " " + p.unit + "; kvsim shows " +
               p.value_text + " " + p.unit;
    if (p.band) {
      // a band's answer (judge_prediction's band): a guess inside it, edges included, is close
      head += " (" + p.band_label + ": " + p.band_text[0] + " to " + p.band_text[1] + ")";
      if (p.band[0] <= x && x <= p.band[1]) {
        return verdict("close", head + ": inside kvsim's band. Why: " + p.why + ".");
      }
    }
    if (Math.abs(x - value) <= p.rel_tol * Math.abs(value)) {
      return verdict("close", head + ": a close estimate. Why: " + p.why + ".");
    }
    var gap;
    if (x > 0 && value > 0) {
      var ratio = value / x;
      if (ratio >= 0.5 && ratio <= 2) {
        gap = fixed(Math.abs(ratio - 1) * 100, 0, false) + "% " +
              (ratio > 1 ? "above" : "below") + " your guess";
      } else if (ratio > 2) {
        gap = plain(pyRound(ratio, 1), false) + " times your guess";
      } else {
        gap = plain(pyRound(1 / ratio, 1), false) + " times smaller than your guess";
      }
    } else {
      gap = "far from your guess";
    }
    return verdict("off", head + ", " + gap + ". Why: " + p.why + ".");
  }

  // ----------------------------------------------------------------- the page

  function store() {
    try {
      var s = window.localStorage;
      s.getItem("kvbook:answer:");
      return s;
    } catch (e) { return null; }
  }

  function keyFor(id) { return "kvbook:answer:" + window.location.pathname + ":" + id; }

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text) { node.textContent = text; }
    return node;
  }

  function setUpForm(form, data, s) {
    var id = form.dataset.exercise, ex = data.exercises[id];
    if (!ex) { return; }
    var field = "kvbook-answer-" + id;
    var controls = el("span", { "class": "kvbook-answer-controls" });
    var message = el("p", { "class": "kvbook-answer-message", id: field + "-message",
                            "aria-live": "polite" });
    var read;
    if (ex.kind === "choice") {
      var set = el("fieldset", { "class": "kvbook-answer-choices" });
      set.appendChild(el("legend", {}, "Your choice"));
      ex.options.forEach(function (option, i) {
        var label = el("label");
        var radio = el("input", { type: "radio", name: field, value: option, id: field + "-" + i });
        label.appendChild(radio);
        label.appendChild(document.createTextNode(" " + option));
        set.appendChild(label);
      });
      controls.appendChild(set);
      read = function () {
        var checked = form.querySelector("input[type=radio]:checked");
        return checked ? checked.value : "";
      };
    } else {
      form.appendChild(el("label", { "for": field }, "Your answer, in " + ex.unit));
      var input = el("input", { type: "text", inputmode: "decimal", id: field, name: "answer",
                                autocomplete: "off", "aria-describedby": field + "-message" });
      controls.appendChild(input);
      read = function () { return input.value; };
    }
    controls.appendChild(el("button", { type: "submit" }, "Check"));
    form.appendChild(controls);
    form.appendChild(message);

    function show(text, keep) {
      var v = evaluate(data, id, text);
      message.textContent = v.message;
      message.className = "kvbook-answer-message kvbook-answer-" + v.status;
      if (keep && s) {
        try { s.setItem(keyFor(id), JSON.stringify({ answer: String(text) })); } catch (e) { /* full */ }
      }
    }

    form.addEventListener("submit", function (event) {
      event.preventDefault();
      show(read(), true);
    });
    if (s) {
      try {
        var saved = JSON.parse(s.getItem(keyFor(id)));
        if (saved && typeof saved.answer === "string" && saved.answer !== "") {
          if (ex.kind === "choice") {
            var radio = form.querySelector("input[value='" + saved.answer.replace(/'/g, "") + "']");
            if (radio) { radio.checked = true; }
          } else {
            form.querySelector("input").value = saved.answer;
          }
          show(saved.answer, false);
        }
      } catch (e) { /* a damaged entry: start empty */ }
    }
    form.hidden = false;
  }

  function start() {
    var data = window.kvbookChecksData;
    if (!data) { return; }
    document.documentElement.classList.add("kvbook-checks-on");
    var s = store();
    document.querySelectorAll("form.kvbook-answer[data-exercise]").forEach(function (form) {
      setUpForm(form, data, s);
    });
  }

  if (typeof document !== "undefined") {
    if (document.readyState === "loading") {
      document.addEventListener("DOMContentLoaded", start);
    } else {
      start();
    }
  }

  return { plain: plain, fixed: fixed, pyRound: pyRound, parseNumber: parseNumber,
           evaluate: evaluate, judgePrediction: judgePrediction };
});
