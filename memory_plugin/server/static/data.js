// The Your data tab: download everything your memory holds (GET /api/export, as JSON or as a
// Markdown archive), import an export (POST /api/import), and for a platform admin, delete a
// user (DELETE /api/users/{user_id}).

import { api, apiBlob, seg } from "./api.js";
import { alertBox, busy, confirmDialog, failure, h, replace, toast } from "./ui.js";

// Your workspaces: an export holds your personal memory inside each of them too.
const workspaces = (me) => me.scopes.filter((s) => s.kind === "personal" && s.workspace).map((s) => s.workspace);

function save(blob, name) {
  const link = h("a", { href: URL.createObjectURL(blob), download: name, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 1000);
}

function counts(numbers) {
  return Object.entries(numbers).map(([kind, n]) => `${n} ${kind}`).join(", ");
}

export function renderData(main, me) {
  replace(main,
    h("header", { class: "page-head" }, h("div", {},
      h("h1", {}, "Your data"),
      h("p", { class: "sub" }, "Your memory is yours: take all of it out, bring an export back in, or ",
        h("a", { href: "#/forget" }, "forget a fact everywhere"), "."))),
    downloadCard(me),
    importCard(),
    me.admin.includes("platform") ? deleteCard() : null);
}

function downloadCard(me) {
  const status = h("div", { class: "status-line", "aria-live": "polite" });
  const names = workspaces(me);
  const button = (format, label) => h("button", { class: "button", type: "button", "data-format": format,
    onclick: (event) => busy(event.currentTarget, "Preparing…", async () => {
      const day = new Date().toISOString().slice(0, 10);
      const name = `memory-${me.user_id}-${day}.${format === "markdown" ? "md" : "json"}`;
      try {
        save(await apiBlob("/api/export", { query: { workspace: names, format } }), name);
        replace(status);
        toast(`Saved ${name}.`);
      } catch (error) {
        replace(status, failure(error));
      }
    }) }, label);
  return h("section", { class: "card wide", "aria-labelledby": "download-title" },
    h("div", { class: "card-head" }, h("h2", { id: "download-title" }, "Download your memory"),
      h("p", { class: "sub" }, "Everything your memory holds, of every kind: your notes and documents",
        names.length ? ` (outside workspaces and in ${names.join(", ")})` : "",
        ", your profile, the agent's notes and private entries about you, and your settings, with every version and where each came from. Team memory and conversations are not in it.")),
    h("div", { class: "actions" },
      button("json", "Download JSON"),
      button("markdown", "Download Markdown")),
    h("p", { class: "hint" }, "The JSON export can be imported again, here or into another store; the Markdown archive is for reading."),
    status);
}

function importCard() {
  const file = h("input", { type: "file", id: "import-file", accept: ".json,application/json", required: true });
  const merge = h("input", { type: "checkbox", id: "import-merge" });
  const submit = h("button", { class: "button primary", type: "submit" }, "Import");
  const result = h("div", { class: "results", "aria-live": "polite" });
  const form = h("form", { class: "import-form", onsubmit: (event) => {
    event.preventDefault();
    const chosen = file.files[0];
    if (!chosen) return file.focus();
    return busy(submit, "Importing…", async () => {
      try {
        const text = await chosen.text();
        const report = await api("/api/import", { method: "POST", text,
          query: { merge: merge.checked ? "true" : null } });
        replace(result, importReport(report));
      } catch (error) {
        replace(result, failure(error));
      }
    });
  } },
  h("div", { class: "field" }, h("label", { for: "import-file" }, "Export file (JSON)"), file),
  h("div", { class: "check" }, merge, h("label", { for: "import-merge" },
    "Merge into the memory already here (adds only what is missing, never duplicates)")),
  h("div", { class: "actions" }, submit));
  return h("section", { class: "card wide", "aria-labelledby": "import-title" },
    h("div", { class: "card-head" }, h("h2", { id: "import-title" }, "Import an export"),
      h("p", { class: "sub" }, "Load a JSON export into this store. The whole file is checked first: if anything in it is refused, nothing is written. Without merge, it is refused when you already have memory here.")),
    form, result);
}

function importReport(report) {
  const total = Object.values(report.imported).reduce((sum, n) => sum + n, 0);
  return h("div", { class: "import-report" },
    alertBox(`Imported ${total} items for ${report.user_id}: ${counts(report.imported)}.`, "ok"),
    h("p", {}, report.skipped.length ? `Skipped ${report.skipped.length}:` : "Skipped none."),
    report.skipped.length
      ? h("ul", {}, report.skipped.map((s) => h("li", {}, `${s.kind} ${[...s.path, s.key].join("/")}: ${s.reason}`)))
      : null,
    report.appended.length
      ? h("ul", {}, report.appended.map((a) => h("li", {}, `Appended note ${a.key} as ${a.new_key}: its key holds another note here.`)))
      : null);
}

function deleteCard() {
  const user = h("input", { id: "delete-user", required: true, autocomplete: "off", spellcheck: "false" });
  const threads = h("input", { type: "checkbox", id: "delete-threads" });
  const submit = h("button", { class: "button danger", type: "submit" }, "Delete user");
  const result = h("div", { class: "results", "aria-live": "polite" });
  const form = h("form", { class: "delete-user-form", onsubmit: async (event) => {
    event.preventDefault();
    const id = user.value.trim();
    if (!id) return user.focus();
    const ok = await confirmDialog({
      title: `Delete user ${id}?`,
      body: [
        `Every memory of ${id} in your organization is deleted for good, in every workspace: their notes and documents with every version, their profile and its change log, the agent's notes and private entries about them, and their settings layer.`,
        threads.checked
          ? "Their conversations go too: every thread they own, with its messages and summaries."
          : "Their conversations stay: tick “their threads too” to delete them as well.",
        "Team memory and the agent's shared entries stay. This cannot be undone.",
      ],
      confirm: "Delete user",
    });
    if (!ok) return;
    await busy(submit, "Deleting…", async () => {
      try {
        const erased = await api(`/api/users/${seg(id)}`, { method: "DELETE",
          query: { threads: threads.checked ? "true" : null } });
        replace(result, alertBox(`Deleted ${erased.user_id}: ${counts(erased.deleted)} items`
          + (erased.threads === null ? "." : `; ${erased.threads} threads with their messages and summaries.`), "ok"));
        form.reset();
      } catch (error) {
        replace(result, failure(error));
      }
    });
  } },
  h("div", { class: "field" }, h("label", { for: "delete-user" }, "User id"), user),
  h("div", { class: "check" }, threads, h("label", { for: "delete-threads" }, "Their threads too")),
  h("div", { class: "actions" }, submit));
  return h("section", { class: "card wide", id: "delete-user-card", "aria-labelledby": "delete-title" },
    h("div", { class: "card-head" }, h("h2", { id: "delete-title" }, "Delete a user"),
      h("p", { class: "sub" }, "Platform admins only: remove every memory of a user of your organization, and their settings.")),
    form, result);
}
