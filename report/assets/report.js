/* papersift report: filters, hover links between items and their highlights, and the
   charts (drawn by the inlined Chart.js). Reads only this page; makes no requests. */
(function () {
  "use strict";

  // Cards past the first page wait in inert <template> pages until the reader scrolls to
  // them, or filters or searches (which need every card).
  var pages = Array.prototype.slice.call(document.querySelectorAll("template.card-page"));
  var more = document.getElementById("more-cards");
  var cards = Array.prototype.slice.call(document.querySelectorAll("article.card"));
  var total = cards.length + pages.reduce(function (sum, page) {
    return sum + page.content.querySelectorAll("article.card").length;
  }, 0);
  function drawNextPage() {
    var page = pages.shift();
    if (page) {
      var added = Array.prototype.slice.call(page.content.querySelectorAll("article.card"));
      page.replaceWith(page.content);
      cards = cards.concat(added);
    }
    if (!pages.length && more) { more.hidden = true; }
    if (shown && !filtered) { shown.textContent = cards.length + " of " + total + " papers drawn"; }
  }
  function drawAll() { while (pages.length) { drawNextPage(); } return cards; }
  window.papersiftAllCards = drawAll;
  var filtered = false;
  var controls = {
    search: document.getElementById("search"),
    task: document.getElementById("filter-task"),
    benchmark: document.getElementById("filter-benchmark"),
    type: document.getElementById("filter-type"),
    numbers: document.getElementById("filter-numbers"),
    flagged: document.getElementById("filter-flagged"),
  };
  // one menu per user field (--fields): its values, matched against each card's data-custom
  var customSelects = Array.prototype.slice.call(document.querySelectorAll("select.filter-custom"));
  customSelects.forEach(function (select) { controls["custom:" + select.dataset.field] = select; });
  // the topic map's area filter, present when the warehouse has a map (papersift index)
  var areaSelect = document.getElementById("filter-area");
  if (areaSelect) { controls.area = areaSelect; }
  var container = cards.length ? cards[0].parentNode : null;
  var anchor = document.getElementById("none-shown");
  var shown = document.getElementById("shown");
  var noneShown = document.getElementById("none-shown");
  if (pages.length) {
    shown.textContent = cards.length + " of " + total + " papers drawn";
    document.getElementById("show-more").addEventListener("click", drawNextPage);
    document.getElementById("show-all").addEventListener("click", drawAll);
    if ("IntersectionObserver" in window) {
      new IntersectionObserver(function (entries) {
        if (entries.some(function (e) { return e.isIntersecting; })) { drawNextPage(); }
      }, { rootMargin: "800px" }).observe(more);
    }
  }

  // What each card can be filtered on, read once, when the first filter is used.
  var index = null, order = null;
  function ensureIndex() {
    if (index) { return; }
    drawAll();
    index = cards.map(function (card) {
      return {
        card: card,
        text: card.textContent.toLowerCase(),
        tasks: JSON.parse(card.dataset.tasks),
        benchmarks: JSON.parse(card.dataset.benchmarks),
        types: JSON.parse(card.dataset.types),
        numbers: card.dataset.numbers === "1",
        flagged: card.dataset.flagged === "1",
        area: card.dataset.area || "",
        custom: card.dataset.custom ? JSON.parse(card.dataset.custom) : {},
      };
    });
    // the original order, restored when the search box is emptied
    order = cards.slice();
  }

  function place(sequence) {
    if (!container) { return; }
    sequence.forEach(function (card) { container.insertBefore(card, anchor); });
  }

  function applyFilters() {
    ensureIndex();
    filtered = true;
    var terms = controls.search.value.toLowerCase().split(/\s+/).filter(Boolean);
    var task = controls.task.value, benchmark = controls.benchmark.value, type = controls.type.value;
    var area = controls.area ? controls.area.value : "";
    // with a topic map the search box ranks (map.js: BM25 fused with vector neighbours)
    var ranked = terms.length && window.papersiftRank ? window.papersiftRank(controls.search.value) : null;
    var visible = 0;
    index.forEach(function (entry, position) {
      var matched = ranked ? ranked.has(position)
        : terms.every(function (term) { return entry.text.indexOf(term) !== -1; });
      var ok = matched
        && (!area || entry.area === area)
        && (!task || entry.tasks.indexOf(task) !== -1)
        && (!benchmark || entry.benchmarks.indexOf(benchmark) !== -1)
        && (!type || entry.types.indexOf(type) !== -1)
        && (!controls.numbers.checked || entry.numbers)
        && (!controls.flagged.checked || entry.flagged)
        && customSelects.every(function (select) {
          return !select.value || (entry.custom[select.dataset.field] || []).indexOf(select.value) !== -1;
        });
      entry.card.hidden = !ok;
      if (ok) { visible += 1; }
    });
    if (ranked) {
      var positions = order.map(function (card, position) { return position; });
      positions.sort(function (a, b) { return (ranked.get(b) || 0) - (ranked.get(a) || 0) || a - b; });
      place(positions.map(function (position) { return order[position]; }));
    } else if (window.papersiftRank) {
      place(order);
    }
    shown.textContent = visible + " of " + cards.length + " papers";
    noneShown.hidden = visible !== 0;
  }
  window.papersiftApplyFilters = applyFilters;

  ["input", "change"].forEach(function (event) {
    Object.keys(controls).forEach(function (name) {
      controls[name].addEventListener(event, applyFilters);
    });
  });
  document.getElementById("reset").addEventListener("click", function () {
    controls.search.value = "";
    controls.task.value = controls.benchmark.value = controls.type.value = "";
    controls.numbers.checked = controls.flagged.checked = false;
    if (controls.area) { controls.area.value = ""; }
    customSelects.forEach(function (select) { select.value = ""; });
    applyFilters();
  });
  document.getElementById("show-markup").addEventListener("change", function (event) {
    document.body.classList.toggle("raw-markup", event.target.checked);
  });

  // Hovering an item outlines its highlighted quote, and the other way round.
  function focusKey(card, key, on) {
    card.querySelectorAll("[data-key], [data-items]").forEach(function (element) {
      var keys = (element.dataset.items || element.dataset.key || "").split(" ");
      if (keys.indexOf(key) !== -1) { element.classList.toggle("focus", on); }
    });
  }
  if (container) {
    container.addEventListener("mouseover", function (event) {
      var target = event.target.closest(".item[data-key], .hl[data-items]");
      var card = event.target.closest("article.card");
      if (!target || !card) { return; }
      var key = target.dataset.key || target.dataset.items.split(" ")[0];
      focusKey(card, key, true);
      target.addEventListener("mouseleave", function () { focusKey(card, key, false); },
        { once: true });
    });
  }

  // Charts.
  var data = JSON.parse(document.getElementById("report-data").textContent);
  if (typeof window.Chart === "undefined") { return; }
  var Chart = window.Chart;
  Chart.defaults.animation = false;
  Chart.defaults.maintainAspectRatio = false;
  Chart.defaults.font.size = 11;
  var colours = data.colours;  // each field's colour, from the registry

  function selectFilter(select, value) {
    select.value = value;
    applyFilters();
    document.getElementById("papers").scrollIntoView();
  }

  function barChart(id, rows, colour, onPick) {
    return new Chart(document.getElementById(id), {
      type: "bar",
      data: {
        labels: rows.map(function (row) { return row[0]; }),
        datasets: [{ label: "papers", data: rows.map(function (row) { return row[1]; }),
                     backgroundColor: colour }],
      },
      options: {
        indexAxis: "y",
        plugins: { legend: { display: false } },
        scales: { x: { beginAtZero: true, ticks: { precision: 0 } },
                  y: { ticks: { autoSkip: false } } },
        onClick: function (event, elements) {
          if (elements.length && onPick) { onPick(rows[elements[0].index]); }
        },
      },
    });
  }

  window.papersiftCharts = [
    barChart("chart-types", data.contributionTypes, "#475569", function (row) {
      selectFilter(controls.type, row[2]);
    }),
    barChart("chart-tasks", data.tasks, colours.task, function (row) {
      selectFilter(controls.task, row[2]);
    }),
    barChart("chart-benchmarks", data.benchmarks, colours.benchmark, function (row) {
      selectFilter(controls.benchmark, row[2]);
    }),
    new Chart(document.getElementById("chart-gains"), {
      type: "bar",
      data: {
        labels: data.gains.labels,
        datasets: [
          { label: "number in its quote", data: data.gains.inQuote, backgroundColor: colours.gain },
          { label: "number not in its quote", data: data.gains.notInQuote, backgroundColor: "#f87171" },
          { label: "no number", data: data.gains.noNumber, backgroundColor: "#cbd5e1" },
        ],
      },
      options: {
        indexAxis: "y",
        scales: { x: { stacked: true, beginAtZero: true, ticks: { precision: 0 } },
                  y: { stacked: true, ticks: { autoSkip: false } } },
        plugins: { legend: { position: "bottom", labels: { boxWidth: 12 } } },
      },
    }),
  ];
})();
