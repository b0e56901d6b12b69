// Small DOM helpers shared by every tab: elements, dialogs, provenance, dates, states.

export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (name === "class") node.className = value;
    else if (name === "value" || name === "checked" || (name in node && typeof value !== "string")) {
      node[name] = value;
    }
    else node.setAttribute(name, value === true ? "" : value);
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
}

export function replace(node, ...children) {
  node.replaceChildren();
  append(node, children);
  return node;
}

const DAY = new Intl.DateTimeFormat(undefined, {
  weekday: "long", year: "numeric", month: "long", day: "numeric", timeZone: "UTC",
});
const STAMP = new Intl.DateTimeFormat(undefined, {
  year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit",
  timeZone: "UTC", timeZoneName: "short",
});

export function dayLabel(day) {
  const date = new Date(`${day}T00:00:00Z`);
  return Number.isNaN(date.getTime()) ? day : DAY.format(date);
}

export function when(iso) {
  if (!iso) return "unknown time";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : STAMP.format(date);
}

export const timeEl = (iso) => h("time", { datetime: iso || "" }, when(iso));

const SOURCES = {
  tool: "a tool call of the agent",
  node: "the agent's memory step during a turn",
  job: "a background job",
  api: "this console or the REST API",
  code: "application code",
  forget: "a forget you asked for (Forget everywhere)",
};

export function provenanceRows(p) {
  const rows = [["Source", SOURCES[p.source] || p.source || "unknown"]];
  if (p.tool) rows.push(["Tool", p.tool]);
  if (p.tool_call_id) rows.push(["Tool call", p.tool_call_id]);
  if (p.job) rows.push(["Job", p.job]);
  if (p.job_run) rows.push(["Job run", h("a", { href: "#/jobs", title: "See the consolidation runs" }, p.job_run)]);
  if (p.thread_id) rows.push(["Thread", p.thread_id]);
  if (p.turn) rows.push(["Turn", `user turn ${p.turn}`]);
  if (p.run_id) rows.push(["Run", p.run_id]);
  if (p.actor) rows.push(["By", p.actor]);
  rows.push(["When", when(p.at)]);
  return rows;
}

export function why(provenance, label = "Why?") {
  const body = provenance
    ? h("dl", { class: "facts" },
        provenanceRows(provenance).map(([name, value]) => [h("dt", {}, name), h("dd", {}, value)]))
    : h("p", { class: "muted" }, "No source was recorded: this was written before the console tracked where memory comes from.");
  return h("details", { class: "why" }, h("summary", {}, label), body);
}

// A modal dialog (focus trapped by showModal) resolving to true when confirmed.
export function confirmDialog({ title, body, confirm = "Delete", danger = true }) {
  return new Promise((resolve) => {
    const dialog = h("dialog", { class: "dialog", "aria-labelledby": "dialog-title" },
      h("form", { method: "dialog" },
        h("h2", { id: "dialog-title" }, title),
        (Array.isArray(body) ? body : [body]).map((part) =>
          part instanceof Node ? part : h("p", {}, part)),
        h("div", { class: "actions" },
          h("button", { value: "cancel", class: "button", autofocus: true }, "Cancel"),
          h("button", { value: "confirm", class: danger ? "button danger" : "button primary" }, confirm))));
    dialog.addEventListener("close", () => {
      resolve(dialog.returnValue === "confirm");
      dialog.remove();
    });
    // A link (or a [data-focus] button) in the body cancels the dialog, then goes there.
    dialog.addEventListener("click", (event) => {
      const target = event.target.closest("a[href], [data-focus]");
      if (!target) return;
      dialog.close();
      if (target.dataset.focus) document.getElementById(target.dataset.focus)?.focus();
    });
    document.body.append(dialog);
    dialog.showModal();
  });
}

export function skeleton(lines = 3, cls = "") {
  return h("div", { class: `skeleton ${cls}`, "aria-hidden": "true" },
    Array.from({ length: lines }, () => h("div", { class: "bone" })));
}

export function loading(label = "Loading…") {
  return h("div", { class: "loading", role: "status" }, h("span", { class: "sr-only" }, label), skeleton(4));
}

export function empty(title, text) {
  return h("div", { class: "empty" }, h("p", { class: "empty-title" }, title), text ? h("p", {}, text) : null);
}

export function alertBox(text, kind = "error") {
  return h("div", { class: `alert ${kind}`, role: kind === "error" ? "alert" : "status" }, text);
}

export const NOT_FOUND = "This memory does not exist, or it is not yours to see.";

export function notFound() {
  return h("div", { class: "empty not-found", role: "alert" },
    h("p", { class: "empty-title" }, "Not found"),
    h("p", {}, NOT_FOUND),
    h("p", {}, h("a", { href: "#/personal" }, "Go to your personal memory")));
}

export function failure(error) {
  if (error && error.status === 404) return notFound();
  return alertBox(error && error.message ? error.message : String(error));
}

// Run `action` with the button busy (disabled, labelled) and restore it after.
export async function busy(button, label, action) {
  const original = button.textContent;
  button.disabled = true;
  button.setAttribute("aria-busy", "true");
  button.textContent = label;
  try {
    return await action();
  } finally {
    button.disabled = false;
    button.removeAttribute("aria-busy");
    button.textContent = original;
  }
}

let toastTimer;
export function toast(text, kind = "ok") {
  const region = document.getElementById("toast");
  replace(region, h("div", { class: `toast ${kind}` }, text));
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => region.replaceChildren(), 5000);
}

export function meter(used, limit, label) {
  const share = limit ? Math.min(1, used / limit) : 0;
  const level = share >= 1 ? "over" : share >= 0.8 ? "high" : "ok";
  const fill = h("span");
  fill.style.width = `${(share * 100).toFixed(1)}%`; // through the CSSOM: the CSP allows no inline style
  return h("div", { class: `meter ${level}` },
    h("div", { class: "meter-bar", role: "meter", "aria-valuemin": "0", "aria-valuemax": String(limit),
      "aria-valuenow": String(used), "aria-label": label }, fill),
    h("span", { class: "meter-text" }, `${used.toLocaleString()} / ${limit.toLocaleString()} characters`));
}

// Forget everywhere (#/forget?text=...) for one item's text.
export const forgetHref = (text) => `#/forget?text=${encodeURIComponent(text)}`;

export function forgetLink(text) {
  return h("a", { class: "forget-link", href: forgetHref(text),
    "aria-label": `Forget everywhere: ${text.slice(0, 60)}` }, "Forget everywhere");
}

// What a delete dialog says after the item itself: the text may remain elsewhere.
export function remainsElsewhere(text) {
  return h("p", { "data-remains": "elsewhere" },
    "The same fact may remain elsewhere in your memory (your notes and documents, your profile, the agent's notes and entries). To remove it from all of them at once, ",
    h("a", { href: forgetHref(text) }, "Forget this fact everywhere"), ".");
}
