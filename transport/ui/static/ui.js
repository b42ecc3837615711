// contextd inspector: the only script, loaded from /ui/static (CSP forbids
// inline script). It adds an "expand all" toggle above long turn lists.
document.addEventListener("DOMContentLoaded", function () {
  var list = document.querySelector("table.turns");
  if (!list || !list.querySelector("details")) return;
  var b = document.createElement("button");
  b.type = "button";
  b.textContent = "Expand all";
  b.addEventListener("click", function () {
    var open = b.textContent === "Expand all";
    list.querySelectorAll("details").forEach(function (d) { d.open = open; });
    b.textContent = open ? "Collapse all" : "Expand all";
  });
  list.parentNode.insertBefore(b, list);
});
