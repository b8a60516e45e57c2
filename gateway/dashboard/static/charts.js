// Draws the overview's charts from the JSON block the server rendered (no inline script: the
// Content-Security-Policy forbids it). Chart.js is vendored, so nothing is fetched elsewhere.
(function () {
  "use strict";
  var block = document.getElementById("chart-data");
  if (!block || typeof Chart === "undefined") { return; }
  var data = JSON.parse(block.textContent);
  var colors = { "1": "#3b82f6", "2": "#f59e0b", "3": "#dc2626" };
  Chart.defaults.animation = false;
  Chart.defaults.font.family = "system-ui, 'DejaVu Sans', sans-serif";

  function bar(id, labels, datasets, options) {
    var el = document.getElementById(id);
    if (!el) { return; }
    new Chart(el, { type: "bar", data: { labels: labels, datasets: datasets },
                    options: Object.assign({ responsive: true, plugins: { legend: { display: datasets.length > 1 } } }, options || {}) });
  }

  bar("chart-tiers", data.labels, Object.keys(data.tiers).map(function (t) {
    return { label: "Tier " + t, data: data.tiers[t], backgroundColor: colors[t], stack: "tiers" };
  }), { scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, ticks: { precision: 0 } } } });
  bar("chart-upstreams", data.upstreams.labels, [{ label: "requests", data: data.upstreams.values, backgroundColor: "#6366f1" }],
      { indexAxis: "y", scales: { x: { beginAtZero: true, ticks: { precision: 0 } } } });
  bar("chart-refusals", data.refusals.labels, [{ label: "refusals", data: data.refusals.values, backgroundColor: "#f97316" }],
      { indexAxis: "y", scales: { x: { beginAtZero: true, ticks: { precision: 0 } } } });
  bar("chart-stripped", data.stripped.labels, [{ label: "identifiers", data: data.stripped.values, backgroundColor: "#10b981" }],
      { indexAxis: "y", scales: { x: { beginAtZero: true, ticks: { precision: 0 } } } });
  bar("chart-integrity", data.labels, [{ label: "integrity alarms", data: data.integrity, backgroundColor: "#dc2626" }],
      { scales: { y: { beginAtZero: true, ticks: { precision: 0 } } } });
  document.body.setAttribute("data-charts", "drawn");
}());
