// Runs before the page paints: applies the theme the reader chose with the
// toggle, so a dark choice never flashes light. site.js does the rest.
(function () {
  try {
    var t = localStorage.getItem("featbench-theme");
    if (t === "dark" || t === "light") document.documentElement.setAttribute("data-theme", t);
  } catch (e) { /* storage blocked: follow the system preference */ }
})();
