/* The lab's missions on the static site: play a mission, earn stars and a completion code.
 *
 * Nothing is simulated here. lab-missions.js (written by scripts/site_data.py) holds
 * every point of every mission's grid scored by kvsim.lab.missions.score(): the stars
 * without a prediction, the days passed, each target's worst and median day and score()'s
 * own message, and which predictions earn the third star. This script looks the answer up.
 *
 * Chapter 5: a panel before each mission's debrief. The reader commits a prediction (it
 * locks until "Change my guess"), picks the levers (the grid's values only), runs, and
 * reads the stars, the figures and the completion code. As in kvsim.lab.progress, a
 * prediction counts for the third star only if it was committed before the mission's
 * first run, the best run is kept (more stars; on a tie the first), and a code is made for
 * every run with a star: the same code `kvsim missions` prints (SHA-256 over public data,
 * by the browser's Web Crypto; where the browser has none, file:// in some browsers, the
 * stars are kept and the code waits). The hub page (book/lab-hub.md) lists the missions,
 * exports the progress as a file `kvsim missions --import` reads, and imports such a file.
 *
 * The progress is one localStorage entry shaped as kvsim's progress file
 * ({"version": 2, "name", "missions": {...}}). Nothing leaves the browser.
 */
(function () {
  "use strict";
  var KEY = "kvbook:lab:progress";
  var STARS = ["☆☆☆", "★☆☆", "★★☆", "★★★"];
  var FIELDS = ["attempts", "stars", "settings", "prediction", "prediction_counts", "code"];
  var NOTE = "kvsim lab progress (chapter 5). Load it in another session with " +
             "`kvsim missions --import FILE` or kvsim.lab.progress.import_progress(FILE); " +
             "check a code with `kvsim missions --verify CODE`.";
  var NO_CRYPTO = "This browser gives the page no Web Crypto (some do not on file://), so " +
                  "no completion code can be made here; your stars are kept. Open the book " +
                  "over http://127.0.0.1 or https to see the codes.";

  // ------------------------------------------------------------------ storage

  function store() {
    try {
      var s = window.localStorage;
      s.getItem(KEY);
      return s;
    } catch (e) { return null; }
  }

  var memory = null;          // where storage is refused: this visit only

  function empty() { return { version: 2, name: null, missions: {} }; }

  function load() {
    var s = store();
    if (!s) { return memory || (memory = empty()); }
    try {
      var d = JSON.parse(s.getItem(KEY));
      if (d && d.version === 2 && typeof d.missions === "object" && d.missions) { return d; }
    } catch (e) { /* a damaged entry starts over below, and is kept aside */ }
    if (s.getItem(KEY) !== null) {
      try { s.setItem(KEY + ".bad-" + Date.now(), s.getItem(KEY)); } catch (e) { /* quota */ }
    }
    return empty();
  }

  function save(d) {
    var s = store();
    if (!s) { memory = d; return; }
    try { s.setItem(KEY, JSON.stringify(d)); } catch (e) { memory = d; }
  }

  function entry(d, n) {
    var k = String(n);
    if (!d.missions[k]) {
      d.missions[k] = { attempts: 0, stars: 0, settings: null, prediction: null,
                        prediction_counts: false, code: null };
    }
    return d.missions[k];
  }

  // ------------------------------------------------------------------ the data

  function data() { return window.kvbookLabData || null; }

  function mission(n) {
    var d = data();
    return d && d.missions.filter(function (m) { return m.number === Number(n); })[0];
  }

  function same(a, b) { return JSON.stringify(a) === JSON.stringify(b); }

  function valueIndex(lever, v) {
    for (var i = 0; i < lever.values.length; i++) {
      if (same(lever.values[i], v)) { return i; }
    }
    return -1;
  }

  // The row of a grid point: the grid is the product of the levers' values, in order.
  function rowOf(m, values) {
    var index = 0;
    for (var i = 0; i < m.levers.length; i++) {
      var k = valueIndex(m.levers[i], values[i]);
      if (k < 0) { return null; }
      index = index * m.levers[i].values.length + k;
    }
    return m.rows[index] || null;
  }

  function settingsObject(m, values) {
    var out = {};
    m.levers.forEach(function (lv, i) { out[lv.name] = values[i]; });
    return out;
  }

  function settingsValues(m, settings) {
    return m.levers.map(function (lv) { return settings[lv.name]; });
  }

  function predictionRight(m, p) {
    if (!p) { return false; }
    if (p.band) {
      return m.right_bands.some(function (b) { return same(b, p.band); });
    }
    return m.right_causes.indexOf(p.cause) >= 0;
  }

  // score(): the precomputed stars, the third from a prediction that counts.
  function scoreOf(m, values, prediction) {
    var row = rowOf(m, values);
    if (!row) { return null; }
    var stars = row.stars, message = row.message;
    if (row.stars === 2 && prediction) {
      var right = predictionRight(m, prediction);
      stars = right ? 3 : 2;
      message = right ? row.message_right : row.message_wrong;
    }
    return { stars: stars, message: message, row: row };
  }

  function shown(m, lever, v) {
    var i = valueIndex(lever, v);
    return i < 0 ? String(v) : lever.shown[i];
  }

  function predictionText(m, p) {
    if (!p) { return "none"; }
    if (p.band) {
      var lv = m.levers.filter(function (l) { return l.name === m.resource; })[0];
      return "passes from " + shown(m, lv, p.band[0]) + " to " + shown(m, lv, p.band[1]);
    }
    var c = m.causes.filter(function (x) { return x.key === p.cause; })[0];
    return c ? c.text : p.cause;
  }

  // ------------------------------------------------------------------ codes

  // kvsim.lab.codes.check_name: whitespace collapsed, NFKC, 1 to 32 letters, digits,
  // spaces, '.', '-' or "'", with a letter or digit, and the letters of one script (or
  // Latin with Han and kana, Han and Bopomofo, or Han and Hangul: Unicode TS #39's
  // "highly restrictive"), so a look-alike letter of another script is refused.
  // Returns [name, null] or [null, why].
  var SCRIPTS = ["Latin", "Greek", "Cyrillic", "Armenian", "Hebrew", "Arabic", "Syriac",
    "Thaana", "Devanagari", "Bengali", "Gurmukhi", "Gujarati", "Oriya", "Tamil", "Telugu",
    "Kannada", "Malayalam", "Sinhala", "Thai", "Lao", "Tibetan", "Myanmar", "Georgian",
    "Hangul", "Ethiopic", "Cherokee", "Khmer", "Mongolian", "Hiragana", "Katakana",
    "Bopomofo", "Han"];
  var SCRIPT_RE = SCRIPTS.map(function (s) { return [s, new RegExp("\\p{Script=" + s + "}", "u")]; });
  var MIXTURES = [["Latin", "Han", "Hiragana", "Katakana"], ["Latin", "Han", "Bopomofo"],
    ["Latin", "Han", "Hangul"]];
  function scriptsOf(chars) {
    var found = {};
    chars.forEach(function (ch) {
      if (/[0-9]/.test(ch) || !/[\p{L}\p{N}]/u.test(ch)) { return; }
      for (var i = 0; i < SCRIPT_RE.length; i++) {
        if (SCRIPT_RE[i][1].test(ch)) { found[SCRIPT_RE[i][0]] = true; return; }
      }
    });
    return Object.keys(found);
  }
  function checkName(raw) {
    var text = String(raw).split(/\s+/).filter(Boolean).join(" ").normalize("NFKC");
    var max = data() ? data().name_max : 32;
    var chars = Array.from(text);
    var bad = chars.filter(function (ch) { return !/[\p{L}\p{N} .'-]/u.test(ch); })[0];
    if (bad !== undefined) { return [null, "“" + bad + "” is not allowed in a name"]; }
    if (!text) { return [null, "the name is empty"]; }
    if (chars.length > max) { return [null, "the name has " + chars.length + " characters"]; }
    if (!/[\p{L}\p{N}]/u.test(text)) { return [null, "the name has no letter or digit"]; }
    var scripts = scriptsOf(chars);
    var mixed = scripts.length > 1 && !MIXTURES.some(function (mix) {
      return scripts.every(function (s) { return mix.indexOf(s) >= 0; });
    });
    if (mixed) {
      return [null, "the name mixes the letters of " + scripts.join(", ") +
              " (use the letters of one script)"];
    }
    return [text, null];
  }

  function cryptoOk() {
    return !!(window.crypto && window.crypto.subtle && window.TextEncoder);
  }

  function base32(bytes, n) {
    var alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", out = "", bits = 0, value = 0;
    for (var i = 0; i < bytes.length && out.length < n; i++) {
      value = (value << 8) | bytes[i];
      bits += 8;
      while (bits >= 5 && out.length < n) {
        out += alphabet[(value >>> (bits - 5)) & 31];
        bits -= 5;
      }
      value &= (1 << bits) - 1;
    }
    return out;
  }

  function checksum(body) {
    var bytes = new TextEncoder().encode(data().salt + "|" + body);
    return window.crypto.subtle.digest("SHA-256", bytes).then(function (digest) {
      return base32(new Uint8Array(digest), 5);
    });
  }

  function encodedValue(lever, v) {
    var i = valueIndex(lever, v);
    return i < 0 ? null : lever.codes[i];
  }

  function encodedPrediction(m, p) {
    if (!p) { return "-"; }
    if (p.band) {
      var lv = m.levers.filter(function (l) { return l.name === m.resource; })[0];
      return encodedValue(lv, p.band[0]) + ":" + encodedValue(lv, p.band[1]);
    }
    return p.cause;
  }

  // kvsim.lab.codes.completion_code (no room key: the site has none). A promise.
  function makeCode(m, stars, values, prediction, name) {
    var who = name ? name.replace(/ /g, "_") : "-";
    var body = "M" + m.number + "/" + stars + "/" +
               m.levers.map(function (lv, i) { return encodedValue(lv, values[i]); }).join(",") +
               "/" + encodedPrediction(m, prediction) + "/" + who;
    return checksum(body).then(function (sum) { return body + "/" + sum; });
  }

  // A code's own parts back: mission, stars, settings values, prediction (null: none).
  function parseCode(code) {
    var parts = String(code).split("/");
    if (parts.length !== 6 || parts[0][0] !== "M") { return null; }
    var m = mission(parts[0].slice(1));
    if (!m || !/^[0-3]$/.test(parts[1])) { return null; }
    var texts = parts[2].split(",");
    if (texts.length !== m.levers.length) { return null; }
    var values = [];
    for (var i = 0; i < texts.length; i++) {
      var k = m.levers[i].codes.indexOf(texts[i]);
      if (k < 0) { return null; }
      values.push(m.levers[i].values[k]);
    }
    var prediction = null;
    if (parts[3] !== "-") {
      if (m.band && parts[3].indexOf(":") > 0) {
        var lv = m.levers.filter(function (l) { return l.name === m.resource; })[0];
        var ends = parts[3].split(":").map(function (t) { return lv.codes.indexOf(t); });
        if (ends[0] < 0 || ends[1] < 0) { return null; }
        prediction = { band: [lv.values[ends[0]], lv.values[ends[1]]] };
      } else {
        prediction = { cause: parts[3] };
      }
    }
    return { m: m, stars: Number(parts[1]), values: values, prediction: prediction,
             name: parts[4] === "-" ? null : parts[4].replace(/_/g, " "), parts: parts };
  }

  // kvsim.lab.progress.set_name: every stored code made again with the name.
  function remakeCodes(d) {
    if (!cryptoOk()) { return Promise.resolve(d); }
    var jobs = Object.keys(d.missions).map(function (k) {
      var e = d.missions[k], c = e.code && parseCode(e.code);
      if (!c) { return null; }
      return makeCode(c.m, c.stars, c.values, c.prediction, d.name).then(function (code) {
        e.code = code;
      });
    });
    return Promise.all(jobs).then(function () { return d; });
  }

  // Make the codes a record lacks (a run made where the browser had no Web Crypto).
  function fillCodes(d) {
    if (!cryptoOk()) { return Promise.resolve(d); }
    var jobs = Object.keys(d.missions).map(function (k) {
      var e = d.missions[k], m = mission(k);
      if (!m || !e.stars || e.code || !e.settings) { return null; }
      var pred = e.prediction_counts ? e.prediction : null;
      return makeCode(m, e.stars, settingsValues(m, e.settings), pred, d.name)
        .then(function (code) { e.code = code; });
    });
    return Promise.all(jobs).then(function () { return d; });
  }

  // ------------------------------------------------------------------ DOM helpers

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") { node.textContent = attrs[k]; } else if (k === "cls") {
        node.className = attrs[k];
      } else { node.setAttribute(k, attrs[k]); }
    });
    (children || []).forEach(function (c) { if (c) { node.appendChild(c); } });
    return node;
  }

  function figure(slo, value) {
    return (value * slo.scale).toFixed(slo.decimals) + (slo.unit === "s" ? " s" : slo.unit);
  }

  function figuresTable(m, row) {
    var head = el("tr", {}, ["target", "worst of " + data().seeds.length + " days", "median day",
                             "limit", ""].map(function (t) { return el("th", { text: t, scope: "col" }); }));
    var body = m.slo.map(function (s, i) {
      var ok = row.worst[i] <= s.limit + 1e-12;
      return el("tr", {}, [el("th", { text: s.label, scope: "row" }),
        el("td", { text: figure(s, row.worst[i]) }), el("td", { text: figure(s, row.median[i]) }),
        el("td", { text: figure(s, s.limit) }),
        el("td", { text: ok ? "met" : "missed", cls: ok ? "kvbook-lab-met" : "kvbook-lab-missed" })]);
    });
    return el("div", { cls: "kvbook-lab-table" }, [
      el("table", {}, [el("thead", {}, [head]), el("tbody", {}, body)])]);
  }

  function starsNode(stars) {
    return el("span", { cls: "kvbook-lab-stars", "aria-label": stars + " of 3 stars",
                        text: STARS[stars] + " " + stars + " of 3 stars" });
  }

  // ------------------------------------------------------------------ chapter 5's panel

  var uid = 0;

  function panel(m) {
    var id = "kvbook-lab-" + m.number + "-" + (uid++);
    var root = el("section", { cls: "kvbook-lab", "data-mission": String(m.number),
                               "aria-labelledby": id + "-title" });
    root.appendChild(el("h4", { id: id + "-title",
                                text: "Play mission " + m.number + " here, without a kernel" }));
    root.appendChild(el("p", { cls: "kvbook-lab-intro", text:
      "Every setting below was scored by kvsim's score() on " + data().seeds.length +
      " days of traffic; this page looks the result up. SLO: " + m.slo_text + "." }));

    // the name, once for every mission
    var nameId = id + "-name";
    var nameInput = el("input", { id: nameId, type: "text", autocomplete: "name",
                                  maxlength: "64", cls: "kvbook-lab-name" });
    var nameMsg = el("span", { cls: "kvbook-lab-message", role: "status" });
    var nameForm = el("form", { cls: "kvbook-lab-nameform" }, [
      el("label", { for: nameId, text: "Your name (in every completion code)" }), nameInput,
      el("button", { type: "submit", text: "Save my name" }), nameMsg]);
    root.appendChild(nameForm);

    // 1. the prediction
    var pred = el("fieldset", { cls: "kvbook-lab-predict" });
    pred.appendChild(el("legend", { text: m.band
      ? "1. Commit your prediction: which headroom passes on every day?"
      : "1. Commit your prediction: what is the root cause?" }));
    var choices = [];
    var bandSelects = [];
    if (m.band) {
      var lv = m.levers.filter(function (l) { return l.name === m.resource; })[0];
      ["from", "to"].forEach(function (word, j) {
        var sid = id + "-band-" + word;
        var sel = el("select", { id: sid });
        lv.values.forEach(function (v, k) {
          sel.appendChild(el("option", { value: String(k), text: lv.shown[k] }));
        });
        sel.value = String(j === 0 ? 0 : lv.values.length - 1);
        bandSelects.push(sel);
        pred.appendChild(el("label", { for: sid, cls: "kvbook-lab-field",
                                       text: (j ? "to " : "passes from ") + lv.name + " " }));
        pred.appendChild(sel);
      });
    } else {
      m.causes.forEach(function (c, k) {
        var rid = id + "-cause-" + k;
        var radio = el("input", { type: "radio", name: id + "-cause", id: rid, value: c.key });
        choices.push(radio);
        pred.appendChild(el("div", { cls: "kvbook-lab-choice" }, [radio,
          el("label", { for: rid, text: c.text })]));
      });
    }
    var commit = el("button", { type: "button", cls: "kvbook-lab-commit",
                                text: "Commit my prediction" });
    var change = el("button", { type: "button", cls: "kvbook-lab-change",
                                text: "Change my guess" });
    var predMsg = el("p", { cls: "kvbook-lab-message", role: "status" });
    pred.appendChild(el("div", { cls: "kvbook-lab-buttons" }, [commit, change]));
    pred.appendChild(predMsg);
    root.appendChild(pred);

    // 2. the settings
    var levers = el("fieldset", { cls: "kvbook-lab-levers" });
    levers.appendChild(el("legend", { text: "2. Choose the settings (the mission's grid only)" }));
    var selects = m.levers.map(function (lv, i) {
      var sid = id + "-lever-" + i;
      var sel = el("select", { id: sid, "data-lever": lv.name });
      lv.values.forEach(function (v, k) {
        sel.appendChild(el("option", { value: String(k), text: lv.shown[k] }));
      });
      sel.value = String(Math.max(0, valueIndex(lv, lv.start)));
      levers.appendChild(el("div", { cls: "kvbook-lab-field" }, [
        el("label", { for: sid, text: lv.label + " " }), sel]));
      return sel;
    });
    var run = el("button", { type: "button", cls: "kvbook-lab-run",
                             text: "Run on " + data().seeds.length + " days" });
    levers.appendChild(el("div", { cls: "kvbook-lab-buttons" }, [run]));
    root.appendChild(levers);

    var result = el("div", { cls: "kvbook-lab-result", role: "status", "aria-live": "polite" });
    root.appendChild(result);
    var best = el("p", { cls: "kvbook-lab-best" });
    root.appendChild(best);
    root.appendChild(el("p", { cls: "kvbook-lab-hublink" }, [
      document.createTextNode("All your missions, export and import: "),
      el("a", { href: hubHref(), text: "the lab hub" })]));

    var editing = false;

    function currentPrediction() {
      if (m.band) {
        var lv = m.levers.filter(function (l) { return l.name === m.resource; })[0];
        var a = Number(bandSelects[0].value), b = Number(bandSelects[1].value);
        return { band: [lv.values[a], lv.values[b]], order: a <= b };
      }
      var picked = choices.filter(function (r) { return r.checked; })[0];
      return picked ? { cause: picked.value } : null;
    }

    function showPrediction(p) {
      if (!p) { return; }
      if (m.band) {
        var lv = m.levers.filter(function (l) { return l.name === m.resource; })[0];
        bandSelects[0].value = String(valueIndex(lv, p.band[0]));
        bandSelects[1].value = String(valueIndex(lv, p.band[1]));
      } else {
        choices.forEach(function (r) { r.checked = r.value === p.cause; });
      }
    }

    function draw() {
      var d = load(), e = entry(d, m.number);
      if (document.activeElement !== nameInput) { nameInput.value = d.name || ""; }
      var locked = e.prediction !== null && !editing;
      showPrediction(e.prediction);
      choices.concat(bandSelects).forEach(function (x) { x.disabled = locked; });
      commit.hidden = locked;
      change.hidden = !locked;
      if (e.prediction === null) {
        predMsg.textContent = editing ? "" : "No prediction yet: commit one before your first " +
          "run for a chance at the third star.";
      } else if (locked) {
        predMsg.textContent = "Your prediction (locked): " + predictionText(m, e.prediction) +
          (e.prediction_counts ? ". Committed before your first run: it counts toward the third star."
                               : ". Committed after a run: it cannot earn the third star.");
      } else {
        predMsg.textContent = "Choose again and commit; a prediction committed after a run " +
          "cannot earn the third star.";
      }
      if (e.attempts) {
        best.textContent = "Your best of " + e.attempts + " run(s): " + STARS[e.stars] + " " +
          e.stars + " of 3 stars with " + m.levers.map(function (lv) {
            return lv.name + "=" + shown(m, lv, e.settings[lv.name]);
          }).join(", ") + ".";
      } else {
        best.textContent = "No run yet.";
      }
    }

    nameForm.addEventListener("submit", function (event) {
      event.preventDefault();
      var checked = checkName(nameInput.value);
      if (!checked[0]) {
        nameMsg.textContent = "Name not saved: " + checked[1] + " (1 to " + data().name_max +
          " letters, digits, spaces, '.', '-' or \"'\").";
        nameInput.focus();
        return;
      }
      var d = load();
      d.name = checked[0];
      remakeCodes(d).then(function (done) {
        save(done);
        nameMsg.textContent = "Saved: your codes now carry " + checked[0] + ".";
        redrawAll();
      });
    });

    commit.addEventListener("click", function () {
      var p = currentPrediction();
      if (!p) { predMsg.textContent = "Choose a cause first."; return; }
      if (m.band && !p.order) { predMsg.textContent = "The band's low end is above its high end."; return; }
      if (p.band) { delete p.order; }
      var d = load(), e = entry(d, m.number);
      e.prediction = p;
      e.prediction_counts = e.attempts === 0;     // as kvsim.lab.progress.commit_prediction
      save(d);
      editing = false;
      draw();
      change.focus();
    });

    change.addEventListener("click", function () {
      editing = true;
      draw();
      (choices.concat(bandSelects)[0] || commit).focus();
    });

    run.addEventListener("click", function () {
      var values = m.levers.map(function (lv, i) { return lv.values[Number(selects[i].value)]; });
      var d = load(), e = entry(d, m.number);
      var scored = e.prediction_counts ? e.prediction : null;     // as kvsim.lab.progress.attempt
      var sc = scoreOf(m, values, scored);
      result.textContent = "";
      result.appendChild(el("p", {}, [starsNode(sc.stars)]));
      result.appendChild(el("p", { cls: "kvbook-lab-verdict", text: sc.message }));
      result.appendChild(figuresTable(m, sc.row));
      e.attempts += 1;
      var improves = sc.stars > e.stars || e.settings === null;
      if (improves) {
        e.stars = sc.stars;
        e.settings = settingsObject(m, values);
        e.code = null;
      }
      var codeLine = el("p", { cls: "kvbook-lab-code" });
      result.appendChild(codeLine);
      var debrief = el("details", { cls: "kvbook-lab-debrief" }, [
        el("summary", { text: "Debrief (it names the answer)" }),
        el("p", { text: m.debrief }), el("p", { text: "On a real server: " + m.flags + "." })]);
      result.appendChild(debrief);
      var finish = function () { save(d); draw(); };
      if (!sc.stars) {
        codeLine.textContent = "No completion code: a code needs a star.";
        finish();
        return;
      }
      if (!cryptoOk()) {
        codeLine.textContent = NO_CRYPTO;
        finish();
        return;
      }
      makeCode(m, sc.stars, values, scored, d.name).then(function (code) {
        if (improves) { e.code = code; }
        codeLine.textContent = "";
        codeLine.appendChild(document.createTextNode("Completion code of this run: "));
        codeLine.appendChild(el("code", { cls: "kvbook-lab-code-text", text: code }));
        if (!d.name) {
          codeLine.appendChild(document.createTextNode(
            " (no name in it: save your name above and the stored codes carry it)"));
        }
        finish();
      });
    });

    draw();
    root.kvbookDraw = draw;
    return root;
  }

  function redrawAll() {
    document.querySelectorAll(".kvbook-lab").forEach(function (p) {
      if (p.kvbookDraw) { p.kvbookDraw(); }
    });
    var hub = document.getElementById("kvbook-lab-hub");
    if (hub && hub.kvbookDraw) { hub.kvbookDraw(); }
  }

  function hubHref() {
    var script = document.querySelector("script[src*='kvbook/lab.js']");
    var src = script ? script.getAttribute("src") : "";
    // _static/kvbook/lab.js sits two folders below the site's root; the hub is book/lab-hub
    var root = src.replace(/_static\/kvbook\/lab\.js.*$/, "");
    return root + "book/lab-hub.html";
  }

  // Before each "Debrief: mission N" dropdown of chapter 5.
  function placePanels() {
    var done = {};
    document.querySelectorAll("details").forEach(function (det) {
      var summary = det.querySelector("summary");
      var match = summary && /Debrief: mission (\d)/.exec(summary.textContent);
      if (!match || done[match[1]]) { return; }
      var m = mission(match[1]);
      if (!m) { return; }
      done[match[1]] = true;
      det.parentNode.insertBefore(panel(m), det);
    });
  }

  // ------------------------------------------------------------------ the hub

  function exportDoc(d) {
    var codes = {};
    Object.keys(d.missions).sort().forEach(function (k) {
      var e = d.missions[k];
      if (e.stars && e.code) { codes[k] = e.code; }
    });
    var now = new Date().toISOString().replace(/\.\d{3}Z$/, "+00:00");
    return { format: "kvsim-missions-export", version: 1,
             kvsim_version: data().kvsim_version, exported_at: now, note: NOTE,
             codes: codes, progress: d };
  }

  // One record of an export checked against the data and its own code (kvsim's
  // _check_record, then its re-scoring): [record, null] or [null, why].
  function checkRecord(k, rec) {
    var m = mission(k), at = "mission " + k;
    if (!m) { return Promise.resolve([null, at + " is not known"]); }
    if (!rec || typeof rec !== "object") { return Promise.resolve([null, at + ": not a record"]); }
    var keys = Object.keys(rec).sort();
    if (!same(keys, FIELDS.slice().sort())) {
      return Promise.resolve([null, at + ": expected exactly the fields " + FIELDS.join(", ")]);
    }
    if (!(Number.isInteger(rec.attempts) && rec.attempts >= 0) ||
        [0, 1, 2, 3].indexOf(rec.stars) < 0 || typeof rec.prediction_counts !== "boolean") {
      return Promise.resolve([null, at + ": attempts, stars or prediction_counts out of range"]);
    }
    if ((rec.attempts === 0) !== (rec.settings === null) || (rec.stars > 0) !== (rec.code !== null)) {
      return Promise.resolve([null, at + ": settings, stars and code do not agree"]);
    }
    if (rec.settings !== null) {
      var values = settingsValues(m, rec.settings);
      if (!rowOf(m, values) || Object.keys(rec.settings).length !== m.levers.length) {
        return Promise.resolve([null, at + ": settings are not on the mission's grid"]);
      }
    }
    if (rec.prediction !== null) {
      var p = rec.prediction;
      var ok = p && ((p.cause && m.causes.some(function (c) { return c.key === p.cause; })) ||
                     (m.band && Array.isArray(p.band) && p.band.length === 2));
      if (!ok) { return Promise.resolve([null, at + ": the prediction is not one it takes"]); }
    }
    if (rec.code === null) { return Promise.resolve([rec, null]); }
    var c = parseCode(rec.code);
    if (!c || c.m.number !== m.number || c.stars !== rec.stars ||
        !same(c.values, settingsValues(m, rec.settings))) {
      return Promise.resolve([null, at + ": code " + rec.code + " is not the record's"]);
    }
    var sc = scoreOf(m, c.values, c.prediction);
    if (!sc || sc.stars !== c.stars) {
      return Promise.resolve([null, at + ": code " + rec.code + " claims " + c.stars +
                              " star(s); its settings earn " + (sc ? sc.stars : 0)]);
    }
    if (!cryptoOk()) { return Promise.resolve([null, NO_CRYPTO]); }
    return checksum(c.parts.slice(0, 5).join("/")).then(function (sum) {
      return sum === c.parts[5] ? [rec, null]
        : [null, at + ": code " + rec.code + " fails its checksum (a character was changed)"];
    });
  }

  // kvsim.lab.progress._merge: the better best run wins; a prediction keeps its claim on
  // the third star only if it still precedes every run of both.
  function stillCounts(side, other) {
    if (!side.prediction_counts) { return false; }
    return other.attempts === 0 || (other.prediction_counts && same(other.prediction, side.prediction));
  }

  function merge(cur, imp) {
    var base = cur || { attempts: 0, stars: 0, settings: null, prediction: null,
                        prediction_counts: false, code: null };
    var take = imp.settings !== null && (imp.stars > base.stars || base.settings === null);
    var bestRec = take ? imp : base, pred, counts;
    if (stillCounts(base, imp)) { pred = base.prediction; counts = true; }
    else if (stillCounts(imp, base)) { pred = imp.prediction; counts = true; }
    else { pred = base.prediction !== null ? base.prediction : imp.prediction; counts = false; }
    return [{ attempts: Math.max(base.attempts, imp.attempts), stars: bestRec.stars,
              settings: bestRec.settings, code: bestRec.code, prediction: pred,
              prediction_counts: counts }, take];
  }

  function importText(text) {
    var doc;
    try { doc = JSON.parse(text); } catch (e) {
      return Promise.reject(new Error("not JSON: expected a file the hub's export or " +
                                      "`kvsim missions --export` wrote"));
    }
    if (!doc || doc.format !== "kvsim-missions-export" || doc.version !== 1) {
      return Promise.reject(new Error("not an export: expected format kvsim-missions-export, " +
                                      "version 1"));
    }
    var prog = doc.progress;
    if (!prog || prog.version !== 2 || typeof prog.missions !== "object" || !prog.missions) {
      return Promise.reject(new Error("its progress is not version 2 (an export of an older " +
                                      "kvsim: import it with `kvsim missions --import` first)"));
    }
    var keys = Object.keys(prog.missions);
    return Promise.all(keys.map(function (k) { return checkRecord(k, prog.missions[k]); }))
      .then(function (checked) {
        var bad = checked.filter(function (c) { return !c[0]; })[0];
        if (bad) { throw new Error(bad[1]); }
        var d = load(), summary = [];
        keys.forEach(function (k, i) {
          var cur = d.missions[k] || null, out = merge(cur, checked[i][0]);
          summary.push("mission " + k + ": " + (cur && same(cur, out[0]) ? "unchanged"
                       : (out[1] || cur === null) ? "imported" : "kept"));
          d.missions[k] = out[0];
        });
        if (d.name === null && prog.name) {
          var n = checkName(prog.name);
          if (n[0]) { d.name = n[0]; }
        }
        save(d);
        return summary;
      });
  }

  function hubPage(root) {
    var table = el("div", { cls: "kvbook-lab-table" });
    var name = el("p", { cls: "kvbook-lab-hub-name" });
    var total = el("p", { cls: "kvbook-lab-total" });
    var exportButton = el("button", { type: "button", cls: "kvbook-lab-export",
                                      text: "Download my progress (JSON)" });
    var showButton = el("button", { type: "button", cls: "kvbook-lab-show-export",
                                    text: "Show it as text to copy" });
    var exportId = "kvbook-lab-export-text";
    var exportText = el("textarea", { id: exportId, rows: "6", readonly: "readonly",
                                      cls: "kvbook-lab-export-text" });
    var exportLabel = el("label", { for: exportId, text: "Your progress as an export file" });
    var exportBox = el("div", { cls: "kvbook-lab-export-box" }, [exportLabel, exportText]);
    exportBox.hidden = true;
    var fileId = "kvbook-lab-import-file", pasteId = "kvbook-lab-import-text";
    var file = el("input", { type: "file", id: fileId, accept: ".json,application/json" });
    var paste = el("textarea", { id: pasteId, rows: "4", cls: "kvbook-lab-import-text" });
    var importButton = el("button", { type: "button", cls: "kvbook-lab-import",
                                      text: "Import the pasted text" });
    var msg = el("p", { cls: "kvbook-lab-message", role: "status", "aria-live": "polite" });
    root.textContent = "";
    root.appendChild(name);
    root.appendChild(table);
    root.appendChild(total);
    root.appendChild(el("div", { cls: "kvbook-lab-buttons" }, [exportButton, showButton]));
    root.appendChild(exportBox);
    root.appendChild(el("div", { cls: "kvbook-lab-field" }, [
      el("label", { for: fileId, text: "Import an export file " }), file]));
    root.appendChild(el("div", { cls: "kvbook-lab-field" }, [
      el("label", { for: pasteId, text: "or paste one here" }), paste]));
    root.appendChild(el("div", { cls: "kvbook-lab-buttons" }, [importButton]));
    root.appendChild(msg);

    function draw() {
      var d = load(), sum = 0;
      name.textContent = d.name ? "Codes are made for " + d.name + "."
        : "No name yet: save one in any mission's panel in chapter 5; every code then carries it.";
      var head = el("tr", {}, ["mission", "stars", "runs", "best settings", "completion code"]
        .map(function (t) { return el("th", { scope: "col", text: t }); }));
      var rows = data().missions.map(function (m) {
        var e = d.missions[String(m.number)];
        var stars = e ? e.stars : 0;
        sum += stars;
        var settings = e && e.settings ? m.levers.map(function (lv) {
          return lv.name + "=" + shown(m, lv, e.settings[lv.name]);
        }).join(", ") : "not started";
        var code = e && e.code ? el("code", { text: e.code })
          : document.createTextNode(e && e.stars ? NO_CRYPTO : "none yet");
        return el("tr", { "data-mission": String(m.number) }, [
          el("th", { scope: "row", text: m.number + ". " + m.title }),
          el("td", {}, [starsNode(stars)]), el("td", { text: String(e ? e.attempts : 0) }),
          el("td", { text: settings }), el("td", {}, [code])]);
      });
      table.textContent = "";
      table.appendChild(el("table", {}, [el("thead", {}, [head]), el("tbody", {}, rows)]));
      total.textContent = "Total: " + sum + " of " + 3 * data().missions.length + " stars.";
    }

    exportButton.addEventListener("click", function () {
      fillCodes(load()).then(function (d) {
        save(d);
        var blob = new Blob([JSON.stringify(exportDoc(d), null, 1) + "\n"],
                            { type: "application/json" });
        var a = el("a", { href: URL.createObjectURL(blob), download: "kvsim-missions-export.json" });
        document.body.appendChild(a);
        a.click();
        a.remove();
        msg.textContent = "Downloaded kvsim-missions-export.json: `kvsim missions --import " +
          "kvsim-missions-export.json` reads it, and so does this page.";
      });
    });
    showButton.addEventListener("click", function () {
      fillCodes(load()).then(function (d) {
        save(d);
        exportText.value = JSON.stringify(exportDoc(d), null, 1) + "\n";
        exportBox.hidden = false;
        exportText.focus();
        exportText.select();
      });
    });

    function doImport(text) {
      importText(text).then(function (summary) {
        msg.textContent = "Imported: " + summary.join("; ") + ".";
        draw();
      }, function (err) {
        msg.textContent = "Import refused, nothing changed: " + err.message + ".";
      });
    }
    importButton.addEventListener("click", function () { doImport(paste.value); });
    file.addEventListener("change", function () {
      if (!file.files.length) { return; }
      var reader = new FileReader();
      reader.onload = function () { doImport(String(reader.result)); };
      reader.readAsText(file.files[0]);
    });
    draw();
    root.kvbookDraw = draw;
  }

  function start() {
    if (!data()) { return; }
    var hub = document.getElementById("kvbook-lab-hub");
    if (hub) { hubPage(hub); }
    placePanels();
    window.addEventListener("storage", function (event) {
      if (event.key === KEY) { redrawAll(); }
    });
  }

  // For the site's tests and for a reader's console: the same functions the panels use.
  window.kvbookLab = { checkName: checkName, makeCode: function (n, stars, values, p, name) {
    return makeCode(mission(n), stars, values, p, name);
  }, scoreOf: function (n, values, p) { return scoreOf(mission(n), values, p); },
  importText: importText, load: load };

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
