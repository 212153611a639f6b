// papersift review pages: htmx settings, the CSRF token and reviewer on every request,
// text selection -> "add a missed item", keyboard shortcuts.
(function () {
  "use strict";
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  const reviewerInput = document.getElementById("reviewer");
  const fallback = document.querySelector('meta[name="default-reviewer"]').content;
  reviewerInput.value = localStorage.getItem("papersift-reviewer") || fallback || "";
  reviewerInput.addEventListener("change", () =>
    localStorage.setItem("papersift-reviewer", reviewerInput.value));

  // Refused actions (409 version conflict, 400 bad input) still swap in the card, which
  // then shows why and the item as it now stands.
  htmx.config.responseHandling = [{ code: ".*", swap: true }];
  document.body.addEventListener("htmx:configRequest", (event) => {
    event.detail.headers["X-CSRF-Token"] = csrf;
    event.detail.parameters["reviewer"] = reviewerInput.value;
  });

  // ---- add a missed item: select text in an abstract
  function offsetIn(root, node, offset) {
    const range = document.createRange();
    range.setStart(root, 0);
    range.setEnd(node, offset);
    return range.toString().length; // DOM text: hidden markup delimiters count too
  }
  function showAddForm(card, start, end, text) {
    const form = card.querySelector("form.add-form");
    if (!form) return;
    form.elements.start.value = start;
    form.elements.end.value = end;
    form.elements.selected.value = text;
    form.querySelector("q.selection").textContent = text;
    if (form.elements.set_name) form.elements.set_name.value = text.trim();
    const number = text.match(/-?\d+(?:[.,]\d+)?/);
    if (form.elements.set_value) form.elements.set_value.value = number ? number[0] : "";
    form.hidden = false;
    updateAddFields(form);
  }
  function updateAddFields(form) {
    const type = form.elements.item_type.value;  // each input lists the types it serves
    form.querySelectorAll(".for[data-types]").forEach((span) => {
      span.hidden = !span.dataset.types.split(" ").includes(type);
    });
  }
  document.addEventListener("change", (event) => {
    if (event.target.name === "item_type" && event.target.form &&
        event.target.form.classList.contains("add-form")) updateAddFields(event.target.form);
  });
  document.addEventListener("click", (event) => {
    if (event.target.classList.contains("add-cancel")) event.target.form.hidden = true;
  });
  document.addEventListener("mouseup", () => {
    const selection = window.getSelection();
    if (!selection || selection.isCollapsed || !selection.rangeCount) return;
    const range = selection.getRangeAt(0);
    const abstract = range.commonAncestorContainer.nodeType === 1
      ? range.commonAncestorContainer.closest("p.abstract")
      : range.commonAncestorContainer.parentElement.closest("p.abstract");
    if (!abstract) return;
    const start = offsetIn(abstract, range.startContainer, range.startOffset);
    const end = offsetIn(abstract, range.endContainer, range.endOffset);
    if (end > start) showAddForm(abstract.closest("article"), start, end, range.toString());
  });
  window.papersiftShowAddForm = showAddForm;

  // ---- keyboard: j/k move between items, a accept, r reject, e edit, d paper done, n next
  let focused = null;
  function items() { return Array.from(document.querySelectorAll("li.item")); }
  function focusItem(item) {
    if (focused) focused.classList.remove("focused");
    focused = item;
    if (item) { item.classList.add("focused"); item.focus({ preventScroll: false }); }
  }
  function currentItem() {
    if (focused && document.body.contains(focused)) return focused;
    const key = focused && focused.dataset.itemKey;
    const again = key && items().find((i) => i.dataset.itemKey === key);
    return again || items()[0] || null;
  }
  document.addEventListener("keydown", (event) => {
    const tag = event.target.tagName;
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA" || event.ctrlKey ||
        event.metaKey || event.altKey) return;
    const list = items();
    const item = currentItem();
    const at = item ? list.indexOf(item) : -1;
    const open = (selector) => {
      if (!item) return;
      const details = item.querySelector(selector);
      if (details) { details.open = true; const input = details.querySelector("input"); if (input) input.focus(); }
    };
    switch (event.key) {
      case "j": focusItem(list[Math.min(at + 1, list.length - 1)]); break;
      case "k": focusItem(list[Math.max(at - 1, 0)]); break;
      case "a": if (item) { const b = item.querySelector("button.accept"); if (b) b.click(); } break;
      case "r": open("details.reject"); break;
      case "e": open("details.edit"); break;
      case "d": { const b = document.querySelector("button.mark-reviewed"); if (b) b.click(); break; }
      case "n": { const next = document.getElementById("queue-next") || document.getElementById("next-page"); if (next) next.click(); break; }
      case "/": { const search = document.getElementById("search"); if (search) { event.preventDefault(); search.focus(); } break; }
      default: return;
    }
  });
})();
