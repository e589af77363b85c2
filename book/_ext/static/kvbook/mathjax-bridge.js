/* The ipywidgets HTML manager typesets widget labels with the MathJax 2 API
   (MathJax.Hub.Queue(["Typeset", MathJax.Hub, element])) whenever a global
   MathJax exists; the book loads MathJax 3, which has no Hub, so every saved
   widget would throw. This bridges that one call to MathJax 3's typesetPromise.
   It runs on DOMContentLoaded: after the deferred MathJax script, before the
   HTML manager renders widgets on window "load". */
(function () {
  function install() {
    var mj = window.MathJax;
    if (!mj || mj.Hub || typeof mj.typesetPromise === "undefined" && !mj.startup) { return; }
    mj.Hub = {
      Queue: function (command) {
        var element = command && command[2];
        var ready = (mj.startup && mj.startup.promise) || Promise.resolve();
        ready.then(function () {
          return mj.typesetPromise(element ? [element] : undefined);
        }).catch(function (err) { console.warn("MathJax typeset failed", err); });
      }
    };
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", install);
  } else {
    install();
  }
})();
