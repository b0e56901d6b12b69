// Forget everywhere (#/forget?text=...): a search box, every place the caller's memory holds
// the text with where it came from, and "Forget selected" (POST /api/forget/preview, then
// POST /api/forget/{id}/apply with the chosen places).

import { api } from "./api.js";
import { alertBox, busy, empty, failure, h, replace, skeleton, toast, why } from "./ui.js";

function placeRow(place) {
  const box = h("input", { type: "checkbox", name: "place", value: place.id,
    id: `place-${place.id}`, checked: place.editable && place.match === "words",
    disabled: !place.editable });
  const notes = [];
  if (!place.editable) notes.push(h("p", { class: "muted" }, `Not yours to change: ${place.reason}`));
  else if (place.match === "meaning") {
    notes.push(h("p", { class: "muted" }, "Found by meaning, not by its words: tick it only if it holds the fact."));
  }
  return h("li", { class: "place", "data-place": place.id, "data-kind": place.kind },
    h("div", { class: "place-head" }, box,
      h("label", { for: `place-${place.id}` }, h("strong", {}, place.label))),
    h("p", { class: "place-text" }, place.text),
    notes,
    why(place.provenance));
}

export function renderForget(main, params) {
  const input = h("input", { type: "search", id: "forget-text", name: "text", autocomplete: "off",
    required: true, maxlength: "500", placeholder: "A fact or a name, e.g. Rex",
    "aria-label": "What to forget", value: params.get("text") || "" });
  const find = h("button", { class: "button primary", type: "submit" }, "Find");
  const results = h("div", { class: "results", "aria-live": "polite" });
  const form = h("form", { class: "forget-search", onsubmit: (event) => {
    event.preventDefault();
    busy(find, "Finding…", () => preview(input.value, results));
  } }, input, find);
  replace(main,
    h("header", { class: "page-head" }, h("div", {},
      h("h1", {}, "Forget everywhere"),
      h("p", { class: "sub" }, "Find a fact in every memory you can change (your notes and documents, team memory, your profile, the agent's notes and entries) and remove it from each place at once."))),
    h("section", { class: "card wide" }, form, results));
  if (input.value.trim()) busy(find, "Finding…", () => preview(input.value, results));
  else input.focus();
}

async function preview(text, results) {
  replace(results, skeleton(4));
  let found;
  try {
    found = await api("/api/forget/preview", { method: "POST", body: { text } });
  } catch (error) {
    replace(results, failure(error));
    return;
  }
  const editable = found.places.filter((place) => place.editable);
  if (!found.places.length) {
    replace(results, empty(`Nothing you can see holds "${found.text}"`,
      "Conversations keep their messages: delete a thread to remove what was said in it."));
    return;
  }
  const list = h("ul", { class: "places" }, found.places.map(placeRow));
  const apply = h("button", { class: "button danger", type: "button", disabled: !editable.length },
    "Forget selected");
  apply.addEventListener("click", () => busy(apply, "Forgetting…", async () => {
    const places = [...list.querySelectorAll("input[name=place]:checked")].map((box) => box.value);
    if (!places.length) {
      toast("Tick the places to forget first.", "error");
      return;
    }
    try {
      const done = await api(`/api/forget/${encodeURIComponent(found.preview_id)}/apply`,
        { method: "POST", body: { places } });
      const left = done.outcomes.filter((outcome) => !outcome.done);
      replace(results,
        alertBox(done.summary, left.length ? "error" : "ok"),
        left.length ? h("ul", {}, left.map((o) => h("li", {}, `${o.label}: ${o.detail}`))) : null,
        h("p", { class: "muted" }, "Conversations keep their messages: delete a thread to remove what was said in it."));
    } catch (error) {
      replace(results, failure(error));
    }
  }));
  replace(results,
    h("p", {}, `"${found.text}" is in ${found.places.length} place${found.places.length === 1 ? "" : "s"}. `,
      "Each change is saved in its history as a forget by you."),
    list,
    h("div", { class: "actions" }, apply));
}
