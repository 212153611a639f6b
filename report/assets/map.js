/* papersift report: the topic map (a Chart.js scatter of the papers, coloured by area),
   the area list, and the search box's hybrid ranking. Reads only this page.

   The page cannot run the embedding model, so its hybrid ranking is: BM25 over the
   page's abstracts (keyword ranks), fused by reciprocal rank (k = 60, as in
   `papersift search`) with vector ranks taken from the precomputed nearest-neighbour
   lists of the three best keyword hits (their cosine to each neighbour). */
(function () {
  "use strict";
  var source = document.getElementById("map-data");
  if (!source) { return; }
  var map = JSON.parse(source.textContent);
  var RRF_K = 60, DEPTH = 100, SEEDS = 3;
  var STOP = {};
  ("a an and are as at be by for from in into is it of on or that the their this to with " +
   "without we our via using between").split(" ").forEach(function (w) { STOP[w] = true; });

  function stem(word) {
    var endings = ["ations", "ation", "ings", "ing", "ies", "es", "ed", "ly", "s"];
    for (var i = 0; i < endings.length; i += 1) {
      var end = endings[i];
      if (word.length > end.length + 3 && word.slice(-end.length) === end) {
        return word.slice(0, -end.length);
      }
    }
    return word;
  }
  function tokens(text) {
    return (text.toLowerCase().match(/[a-z0-9]+/g) || []).filter(function (w) {
      return !STOP[w];
    }).map(stem);
  }

  // BM25 statistics over the abstracts, built at the first search (every card drawn).
  var docs = null, df = {}, avgdl = 1;
  function buildDocs() {
    if (docs) { return; }
    docs = window.papersiftAllCards().map(function (card) {
      var abstract = card.querySelector(".abstract");
      var counts = {}, words = tokens(abstract ? abstract.textContent : card.textContent);
      words.forEach(function (w) { counts[w] = (counts[w] || 0) + 1; });
      return { counts: counts, length: words.length };
    });
    var total = 0;
    docs.forEach(function (doc) {
      total += doc.length;
      Object.keys(doc.counts).forEach(function (w) { df[w] = (df[w] || 0) + 1; });
    });
    avgdl = total / Math.max(docs.length, 1);
  }

  function bm25(query) {
    buildDocs();
    var terms = tokens(query), scores = [];
    docs.forEach(function (doc, position) {
      var score = 0;
      terms.forEach(function (term) {
        var tf = doc.counts[term] || 0;
        if (!tf) { return; }
        var idf = Math.log(1 + (docs.length - df[term] + 0.5) / (df[term] + 0.5));
        score += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * doc.length / avgdl));
      });
      if (score > 0) { scores.push([position, score]); }
    });
    return scores.sort(function (a, b) { return b[1] - a[1] || a[0] - b[0]; }).slice(0, DEPTH);
  }

  // position -> hybrid score, for the papers either ranking found
  window.papersiftRank = function (query) {
    var keyword = bm25(query), fused = new Map(), nearest = new Map();
    keyword.forEach(function (hit, rank) {
      fused.set(hit[0], 1 / (RRF_K + rank + 1));
    });
    keyword.slice(0, SEEDS).forEach(function (hit) {
      nearest.set(hit[0], Math.max(nearest.get(hit[0]) || 0, 1));
      (map.neighbours[hit[0]] || []).forEach(function (pair) {
        nearest.set(pair[0], Math.max(nearest.get(pair[0]) || 0, pair[1]));
      });
    });
    Array.from(nearest.entries()).sort(function (a, b) { return b[1] - a[1] || a[0] - b[0]; })
      .forEach(function (pair, rank) {
        fused.set(pair[0], (fused.get(pair[0]) || 0) + 1 / (RRF_K + rank + 1));
      });
    return fused;
  };

  var areaSelect = document.getElementById("filter-area");
  function showArea(areaId, paperPosition) {
    areaSelect.value = areaId === null ? "" : String(areaId);
    window.papersiftApplyFilters();
    var cards = window.papersiftAllCards();
    var target = paperPosition === undefined ? document.getElementById("papers")
      : cards[paperPosition];
    if (paperPosition !== undefined) {
      cards.forEach(function (card) { card.classList.remove("picked"); });
      target.classList.add("picked");
    }
    target.scrollIntoView();
  }
  document.querySelectorAll("#area-list [data-area]").forEach(function (button) {
    button.addEventListener("click", function () { showArea(button.dataset.area); });
  });

  if (typeof window.Chart === "undefined") { return; }
  var palette = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#ca8a04",
                 "#db2777", "#4d7c0f", "#475569", "#7c3aed", "#0f766e"];
  var datasets = map.areas.map(function (area, index) {
    return {
      label: area.id + " · " + area.label + " (" + area.size + ")",
      areaId: area.id,
      data: map.points.filter(function (p) { return p[3] === area.id; }).map(function (p) {
        return { x: p[1], y: p[2], position: p[0] };
      }),
      backgroundColor: palette[index % palette.length],
      pointRadius: map.points.length > 500 ? 2.5 : 4.5,
    };
  });
  window.papersiftMap = new window.Chart(document.getElementById("chart-map"), {
    type: "scatter",
    data: { datasets: datasets },
    options: {
      plugins: {
        legend: { position: "right", labels: { boxWidth: 10 } },
        tooltip: {
          callbacks: {
            label: function (context) {
              return map.openings[context.raw.position];
            },
          },
        },
      },
      scales: { x: { display: false }, y: { display: false } },
      onClick: function (event, elements) {
        if (!elements.length) { return; }
        var dataset = datasets[elements[0].datasetIndex];
        showArea(dataset.areaId, dataset.data[elements[0].index].position);
      },
    },
  });
})();
