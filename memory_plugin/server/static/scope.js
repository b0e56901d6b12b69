// The Personal memory and Team memory tabs: the curated document with its history, and the
// scope's recent notes day by day with search, delete and "Load older".

import { api, ApiError } from "./api.js";
import {
  alertBox, busy, confirmDialog, dayLabel, empty, failure, forgetHref, forgetLink, h, meter, replace,
  skeleton, timeEl, toast, when, why,
} from "./ui.js";

function url(scope, sub) {
  const [base, query] = scope.path.split("?");
  return base + sub + (query ? `?${query}` : "");
}

export function renderScope(root, scope, { title, intro, switcher }) {
  const docCard = h("section", { class: "card doc", "aria-labelledby": "doc-title" }, skeleton(10, "tall"));
  const notesCard = h("section", { class: "card notes", "aria-labelledby": "notes-title" }, skeleton(8, "tall"));
  replace(root,
    h("header", { class: "page-head" },
      h("div", {}, h("h1", {}, title), h("p", { class: "sub" }, intro)),
      switcher),
    h("div", { class: "columns" }, docCard, notesCard));
  loadDocument(docCard, notesCard, scope);
}

async function loadDocument(docCard, notesCard, scope) {
  let answer;
  let versions;
  try {
    [answer, versions] = await Promise.all([
      api(url(scope, "/document")),
      api(url(scope, "/document/history")),
    ]);
  } catch (error) {
    // A scope the caller cannot see: one "not found" for the whole tab, nothing else shown.
    const columns = docCard.parentElement;
    columns.previousElementSibling.querySelector(".sub")?.remove();
    replace(columns, h("div", { class: "card wide" }, failure(error)));
    return;
  }
  const off = answer.switch.enabled ? null : answer.switch.disabled_reason;
  if (off) {
    docCard.parentElement.before(h("div", { class: "alert info", role: "status", id: "scope-off" }, off, " ",
      h("a", { href: "#/settings" }, "Open Settings")));
  }
  new DocumentEditor(docCard, scope, answer, versions.versions, off);
  new NotesPanel(notesCard, scope, off);
}

class DocumentEditor {
  constructor(card, scope, answer, versions, off) {
    this.card = card;
    this.scope = scope;
    this.off = off;
    this.limits = answer.limits;
    this.document = answer.document;
    this.versions = versions;
    this.textarea = h("textarea", {
      id: "doc-text", class: "doc-text", rows: 18, spellcheck: "false",
      "aria-describedby": "doc-status", readOnly: Boolean(off),
      placeholder: `${scope.label} is empty. Write what the agent should always know here, or let nightly consolidation fold older notes in.`,
      oninput: () => this.changed(),
    });
    this.saveButton = h("button", { class: "button primary", type: "submit", disabled: true }, "Save");
    this.discardButton = h("button", { class: "button", type: "button", disabled: true,
      onclick: () => this.discard() }, "Discard changes");
    this.meterSlot = h("div", { class: "meter-slot" });
    this.status = h("div", { id: "doc-status", class: "status-line", "aria-live": "polite" });
    this.versionLine = h("p", { class: "sub" });
    this.whySlot = h("div", { class: "why-slot" });
    this.history = h("ol", { class: "versions", "aria-label": "Version history" });
    replace(card,
      h("div", { class: "card-head" },
        h("h2", { id: "doc-title" }, h("span", { class: "filename" }, scope.label)),
        this.versionLine),
      h("form", { class: "doc-form", onsubmit: (event) => { event.preventDefault(); this.save(); } },
        h("label", { for: "doc-text", class: "sr-only" }, `${scope.label} text`),
        this.textarea,
        this.meterSlot,
        h("div", { class: "actions" }, this.saveButton, this.discardButton,
          h("button", { class: "button", type: "button", title: "The selected text, or the line the cursor is on",
            onclick: () => this.forgetLine() }, "Forget this line everywhere"),
          this.whySlot)),
      this.status,
      h("h3", { class: "section-title" }, "Version history"),
      this.history);
    this.show();
  }

  show() {
    const doc = this.document;
    this.textarea.value = doc ? doc.text : "";
    replace(this.versionLine, doc
      ? ["Version ", String(doc.version), " · saved ", timeEl(doc.updated_at)]
      : "No saved version yet");
    replace(this.whySlot, doc ? why(doc.provenance, "Why this version?") : null);
    this.changed();
    this.renderHistory();
  }

  changed() {
    const text = this.textarea.value;
    const dirty = text !== (this.document ? this.document.text : "");
    this.saveButton.disabled = !dirty || Boolean(this.off);
    this.discardButton.disabled = !dirty;
    const { soft, hard } = this.limits;
    replace(this.meterSlot, meter(text.length, soft, "Document size against the soft limit"),
      text.length > soft
        ? h("p", { class: "hint warn" }, text.length > hard
          ? `Over the hard limit of ${hard.toLocaleString()} characters: saving compresses it.`
          : `Past the soft limit of ${soft.toLocaleString()} characters: consider trimming.`)
        : h("p", { class: "hint" }, `Soft limit ${soft.toLocaleString()}, hard limit ${hard.toLocaleString()} characters.`));
  }

  // Forget everywhere for the selected text, else the line the cursor is on (without its
  // bullet or heading mark).
  forgetLine() {
    const area = this.textarea;
    let text = area.value.slice(area.selectionStart, area.selectionEnd);
    if (!text.trim()) {
      const start = area.value.lastIndexOf("\n", Math.max(0, area.selectionStart - 1)) + 1;
      const end = area.value.indexOf("\n", area.selectionStart);
      text = area.value.slice(start, end === -1 ? undefined : end);
    }
    text = text.trim().replace(/^([-*]|#+)\s+/, "");
    if (!text) {
      toast("Select the text to forget, or put the cursor on its line.", "error");
      area.focus();
      return;
    }
    location.hash = forgetHref(text);
  }

  discard() {
    this.show();
    replace(this.status);
    this.textarea.focus();
  }

  async save() {
    const body = { text: this.textarea.value, expected_version: this.document ? this.document.version : null };
    await busy(this.saveButton, "Saving…", async () => {
      try {
        this.saved(await api(url(this.scope, "/document"), { method: "PUT", body }), "Saved");
      } catch (error) {
        this.refused(error);
      }
    });
  }

  async restore(version, button) {
    await busy(button, "Restoring…", async () => {
      try {
        this.saved(await api(url(this.scope, "/document/restore"), { method: "POST", body: { version } }),
          `Restored version ${version} as`);
      } catch (error) {
        this.refused(error);
      }
    });
  }

  async saved(answer, verb) {
    this.document = answer.document;
    const notes = [...(answer.warnings || [])];
    if (answer.compressed) notes.unshift("The text was over the hard limit, so it was compressed before saving.");
    replace(this.status, notes.map((text) => alertBox(text, "warn")));
    try {
      this.versions = (await api(url(this.scope, "/document/history"))).versions;
    } catch {
      this.versions = [answer.document, ...this.versions];
    }
    this.show();
    toast(`${verb} version ${answer.document.version}.`);
  }

  refused(error) {
    if (error.status === 409) {
      replace(this.status, h("div", { class: "alert error", role: "alert" },
        "Someone saved a newer version while you were editing. Your text is still here; copy it, then ",
        h("button", { class: "link", type: "button", onclick: () => this.reload() }, "load the newest version"), "."));
    } else {
      replace(this.status, failure(error));
    }
  }

  async reload() {
    const answer = await api(url(this.scope, "/document"));
    this.document = answer.document;
    this.versions = (await api(url(this.scope, "/document/history"))).versions;
    replace(this.status);
    this.show();
  }

  renderHistory() {
    if (!this.versions.length) {
      replace(this.history, h("li", { class: "empty-inline" }, "No versions yet: the first save creates version 1."));
      return;
    }
    const current = this.document ? this.document.version : null;
    replace(this.history, this.versions.map((version) => {
      const restore = version.version === current
        ? h("span", { class: "badge" }, "Current")
        : h("button", { class: "button small", type: "button",
            "aria-label": `Restore version ${version.version}`,
            onclick: (event) => this.restore(version.version, event.currentTarget) }, "Restore");
      return h("li", { class: "version", "data-version": String(version.version) },
        h("div", { class: "version-head" },
          h("strong", {}, `Version ${version.version}`),
          h("span", { class: "muted" }, when(version.updated_at), ` · ${version.chars.toLocaleString()} characters`),
          restore),
        h("div", { class: "version-more" },
          h("details", { class: "preview" }, h("summary", {}, "Show text"), h("pre", {}, version.text)),
          why(version.provenance)));
    }));
  }
}

// What deleting a note does, and where its fact may remain (deleting reaches none of them):
// the curated document, the profile, the agent's notes and entries, the conversation it came from.
function remains(scope, note) {
  const team = scope.kind === "team";
  const go = (href, text) => h("a", { href }, text);
  return [
    h("p", {}, "The note is deleted for good: the agent no longer sees it among the recent notes or finds it with recall."),
    h("p", {}, "The fact may remain where deleting this note does not reach:"),
    h("ul", { class: "remains" },
      h("li", { "data-remains": "document" }, note.consolidated
        ? `${scope.label}: nightly consolidation already folded this note into it. `
        : `${scope.label}, if the fact was also written there. `,
      h("button", { class: "link", type: "button", "data-focus": "doc-text" }, `Edit ${scope.label}`)),
      h("li", { "data-remains": "profile" }, team
        ? "What I know about you: the profile of each member who talked about it may hold it (you see yours). "
        : "What I know about you: your profile, updated after each conversation, may hold it. ",
      go("#/profile", "Open your profile")),
      h("li", { "data-remains": "agent" }, "Agent notes: the bounded notes and memory entries the agent keeps may hold it. ",
        go("#/agent", "Open Agent notes")),
      h("li", { "data-remains": "threads" }, team
        ? "The conversations it came from keep their messages, which the agent can search in those threads. "
        : "The conversation it came from keeps its messages, which the agent can search in that thread. ",
      go("#/jobs", "Open your conversations"))),
    h("p", {}, "To remove the fact from your memory everywhere at once (the conversations excepted), ",
      go(`#/forget?text=${encodeURIComponent(note.text)}`, "Forget this fact everywhere"), "."),
  ];
}

class NotesPanel {
  constructor(card, scope, off) {
    this.card = card;
    this.scope = scope;
    this.query = h("input", { type: "search", id: "note-search", name: "q", autocomplete: "off",
      placeholder: "Search notes", "aria-label": "Search notes", disabled: Boolean(off) });
    this.searchButton = h("button", { class: "button", type: "submit", disabled: Boolean(off) }, "Search");
    this.clearButton = h("button", { class: "button", type: "button", hidden: true,
      onclick: () => this.clearSearch() }, "Clear search");
    this.results = h("div", { class: "results", hidden: true, "aria-live": "polite" });
    this.days = h("div", { class: "days" }, skeleton(6));
    this.olderButton = h("button", { class: "button", type: "button", hidden: true,
      onclick: () => this.loadOlder() }, "Load older");
    this.footer = h("div", { class: "notes-footer" }, this.olderButton);
    this.older = null;
    replace(card,
      h("div", { class: "card-head" }, h("h2", { id: "notes-title" }, "Recent notes"),
        h("p", { class: "sub" }, "What the agent wrote down, newest day first.")),
      h("form", { class: "search", role: "search",
        onsubmit: (event) => { event.preventDefault(); this.search(); } },
        this.query, this.searchButton, this.clearButton),
      this.results, this.days, this.footer);
    this.loadFirst();
  }

  async loadFirst() {
    try {
      const page = await api(url(this.scope, "/notes"), { query: { days: 3 } });
      replace(this.days);
      this.addPage(page);
      if (!page.days.length) {
        replace(this.days, empty("No notes yet",
          "When the agent remembers something in a conversation, it appears here under its day."));
      }
    } catch (error) {
      replace(this.days, failure(error));
    }
  }

  addPage(page) {
    for (const { day, notes } of page.days) {
      if (!notes.length) continue;
      this.days.append(h("section", { class: "day", "data-day": day, "aria-label": dayLabel(day) },
        h("h3", { class: "day-title" }, dayLabel(day), h("span", { class: "muted" }, ` · ${notes.length} ${notes.length === 1 ? "note" : "notes"}`)),
        h("ul", { class: "note-list" }, notes.map((note) => this.noteItem(note)))));
    }
    this.older = page.older;
    this.olderButton.hidden = !this.older;
    replace(this.footer, this.olderButton,
      this.older ? null : (page.days.length ? h("p", { class: "muted end" }, "No older notes.") : null));
  }

  async loadOlder() {
    await busy(this.olderButton, "Loading…", async () => {
      try {
        this.addPage(await api(url(this.scope, "/notes"), { query: { before: this.older, days: 3 } }));
      } catch (error) {
        this.footer.prepend(failure(error));
      }
    });
  }

  noteItem(note, score) {
    const item = h("li", { class: "note", "data-key": note.key },
      h("p", { class: "note-text" }, note.text),
      h("div", { class: "note-meta" },
        score === undefined ? timeEl(note.created_at) : [dayLabel(note.day), " · ", h("span", { class: "muted" }, `match ${score.toFixed(2)}`)],
        note.consolidated ? h("span", { class: "badge", title: "Folded into the curated document by nightly consolidation" }, "Consolidated") : null,
        h("button", { class: "button small danger-text", type: "button", "aria-label": `Delete note: ${note.text.slice(0, 60)}`,
          onclick: () => this.remove(note) }, "Delete"),
        forgetLink(note.text)),
      why(note.provenance));
    return item;
  }

  async remove(note) {
    const confirmed = await confirmDialog({
      title: "Delete this note?",
      body: [h("blockquote", {}, note.text), ...remains(this.scope, note)],
      confirm: "Delete note",
    });
    if (!confirmed) return;
    try {
      await api(url(this.scope, `/notes/${encodeURIComponent(note.key)}`), { method: "DELETE" });
    } catch (error) {
      if (!(error instanceof ApiError && error.status === 404)) {
        toast(error.message, "error");
        return;
      }
    }
    for (const item of this.card.querySelectorAll(`li.note[data-key="${CSS.escape(note.key)}"]`)) {
      const day = item.closest("section.day");
      item.remove();
      if (day && !day.querySelector("li.note")) day.remove();
    }
    toast("Note deleted.");
  }

  async search() {
    const q = this.query.value.trim();
    if (!q) return this.clearSearch();
    await busy(this.searchButton, "Searching…", async () => {
      try {
        const { hits } = await api(url(this.scope, "/notes/search"), { query: { q, k: 20 } });
        replace(this.results,
          h("p", { class: "results-title" }, hits.length
            ? `${hits.length} ${hits.length === 1 ? "note matches" : "notes match"} “${q}”`
            : `No notes match “${q}”.`),
          hits.length ? h("ul", { class: "note-list" }, hits.map((hit) => this.noteItem(hit.note, hit.score))) : null);
      } catch (error) {
        replace(this.results, failure(error));
      }
      this.results.hidden = false;
      this.days.hidden = true;
      this.footer.hidden = true;
      this.clearButton.hidden = false;
    });
  }

  clearSearch() {
    this.query.value = "";
    this.results.hidden = true;
    this.days.hidden = false;
    this.footer.hidden = false;
    this.clearButton.hidden = true;
    this.query.focus();
  }
}
