// Forget everywhere (#/forget?text=...): a search box, every place the caller's memory holds
// the text with where it came from, and "Forget selected" (POST /api/forget/preview, then
// POST /api/forget/{id}/apply with the chosen places, once the dialog listing what goes and
// what stays is confirmed).

import { api } from "./api.js";
import { alertBox, busy, confirmDialog, empty, failure, h, replace, skeleton, toast, why } from "./ui.js";

const CONVERSATIONS = "Conversations keep their messages: delete a thread to remove what was said in it.";
const plural = (count, word) => `${count} ${word}${count === 1 ? "" : "s"}`;

function placeRow(place) {
  const box = h("input", { type: "checkbox", name: "place", value: place.id,
    id: `place-${place.id}`, checked: place.editable && place.match === "words",
    disabled: !place.editable });
  const notes = [];
  if (!place.editable) notes.push(h("p", { class: "hint" }, `Not yours to change: ${place.reason}`));
  else if (place.match === "meaning") {
    notes.push(h("p", { class: "hint" }, "Found by meaning, not by its words: tick it only if it holds the fact."));
  }
  return h("li", { class: "place", "data-place": place.id, "data-kind": place.kind },
    h("div", { class: "entry-head place-head" }, box,
      h("label", { for: `place-${place.id}` }, place.label),
      place.match === "meaning" ? h("span", { class: "badge warn" }, "found by meaning") : null,
      place.editable ? null : h("span", { class: "badge read_only" }, "Read only for you")),
    h("p", { class: "entry-text place-text" }, place.text),
    notes,
    why(place.provenance));
}

// Why a place the apply leaves alone keeps the text.
function staysBecause(place) {
  if (!place.editable) return `Not yours to change: ${place.reason}`;
  return place.match === "meaning" ? "found by meaning, and not ticked" : "you unticked it";
}

function excerpt(text, length = 90) {
  return text.length > length ? `${text.slice(0, length - 1)}…` : text;
}

// "Forget selected" asks first, as deleting a note does: what goes, what stays, then confirm.
function confirmForget(found, chosen) {
  const goes = found.places.filter((place) => chosen.has(place.id));
  const stays = found.places.filter((place) => !chosen.has(place.id));
  const item = (place, why) => h("li", { "data-place": place.id },
    h("strong", {}, place.label), h("br"), h("span", { class: "muted" }, why));
  return confirmDialog({
    title: `Forget “${found.text}” in ${plural(goes.length, "place")}?`,
    body: [
      h("p", {}, "It is removed from:"),
      h("ul", { class: "remains", "data-list": "goes" }, goes.map((place) => item(place, excerpt(place.text)))),
      stays.length
        ? [h("p", {}, "It stays in:"),
          h("ul", { class: "remains", "data-list": "stays" }, stays.map((place) => item(place, staysBecause(place))))]
        : h("p", {}, "Nothing else found holds it."),
      h("p", { class: "muted" }, "Each change is saved in its history as a forget by you. ",
        found.threads.length
          ? `${plural(found.threads.length, "conversation")} of yours mention it: they keep their messages; delete a thread to remove what was said in it.`
          : CONVERSATIONS),
    ],
    confirm: `Forget in ${plural(goes.length, "place")}`,
  });
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
    replace(results, empty(`Nothing you can see holds "${found.text}"`, CONVERSATIONS));
    return;
  }
  const list = h("ul", { class: "places" }, found.places.map(placeRow));
  const apply = h("button", { class: "button danger", type: "button", disabled: !editable.length },
    "Forget selected");
  apply.addEventListener("click", async () => {
    const places = [...list.querySelectorAll("input[name=place]:checked")].map((box) => box.value);
    if (!places.length) {
      toast("Tick the places to forget first.", "error");
      return;
    }
    if (await confirmForget(found, new Set(places))) await forget(found, places, apply, results);
  });
  replace(results,
    h("p", {}, `"${found.text}" is in ${plural(found.places.length, "place")}. `,
      "Each change is saved in its history as a forget by you."),
    list,
    h("div", { class: "actions" }, apply));
}

function forget(found, places, apply, results) {
  return busy(apply, "Forgetting…", async () => {
    try {
      const done = await api(`/api/forget/${encodeURIComponent(found.preview_id)}/apply`,
        { method: "POST", body: { places } });
      const left = done.outcomes.filter((outcome) => !outcome.done);
      replace(results,
        alertBox(done.summary, left.length ? "error" : "ok"),
        left.length ? h("ul", {}, left.map((o) => h("li", {}, `${o.label}: ${o.detail}`))) : null,
        h("p", { class: "muted" }, CONVERSATIONS));
    } catch (error) {
      replace(results, failure(error));
    }
  });
}
