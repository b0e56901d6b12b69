// The Agent notes tab: the bounded memory/user entries and the agent's memory entries.

import { api } from "./api.js";
import {
  busy, confirmDialog, empty, failure, forgetLink, h, meter, remainsElsewhere, replace, skeleton,
  timeEl, toast, why,
} from "./ui.js";

const TARGETS = {
  memory: ["The agent's own notes", "What the agent noted for itself: conventions, lessons, facts about the work."],
  user: ["About you", "What the agent noted about you, shown to it at the start of each session."],
};

export function renderEntries(root) {
  const bounded = h("section", { class: "card", "aria-labelledby": "bounded-title" }, skeleton(8, "tall"));
  const agent = h("section", { class: "card", "aria-labelledby": "agent-title" }, skeleton(8, "tall"));
  replace(root,
    h("header", { class: "page-head" }, h("div", {},
      h("h1", {}, "Agent notes"),
      h("p", { class: "sub" }, "What the agent keeps between conversations. Edit or delete anything that is wrong."))),
    h("div", { class: "columns" }, bounded, agent));
  loadBounded(bounded);
  loadAgent(agent);
}

async function loadBounded(card) {
  let data;
  try {
    data = await api("/api/entries/bounded");
  } catch (error) {
    replace(card, failure(error));
    return;
  }
  const status = h("div", { class: "status-line", "aria-live": "polite" });
  const body = h("div", {});
  const show = (answer) => {
    replace(body, ["memory", "user"].map((target) => targetSection(target, answer[target], apply)));
  };
  const apply = async (write, button) => busy(button, "Saving…", async () => {
    try {
      const answer = await api("/api/entries/bounded", { method: "POST", body: write });
      replace(status);
      toast(answer.message);
      show(answer);
      return true;
    } catch (error) {
      replace(status, failure(error));
      return false;
    }
  });
  replace(card,
    h("div", { class: "card-head" }, h("h2", { id: "bounded-title" }, "Bounded notes"),
      h("p", { class: "sub" }, `Agent ${data.agent_id || "default"} · small, always in view of the agent`)),
    status, body);
  show(data);
}

function targetSection(target, view, apply) {
  const [title, text] = TARGETS[target];
  const input = h("textarea", { rows: 2, id: `add-${target}`, placeholder: "A short fact, one entry" });
  const add = h("button", { class: "button", type: "submit" }, "Add");
  return h("section", { class: "target", "data-target": target, "aria-label": title },
    h("h3", { class: "section-title" }, title),
    h("p", { class: "hint" }, text),
    meter(view.used, view.limit, `${title}: characters used`),
    view.entries.length
      ? h("ul", { class: "entry-list" }, view.entries.map((entry) => boundedItem(target, entry, apply)))
      : empty("Nothing here yet", null),
    h("form", { class: "inline-form", onsubmit: async (event) => {
      event.preventDefault();
      if (!input.value.trim()) return input.focus();
      await apply({ action: "add", target, content: input.value }, add);
    } }, h("label", { for: `add-${target}`, class: "sr-only" }, `Add to ${title}`), input, add));
}

function boundedItem(target, entry, apply) {
  const item = h("li", { class: "entry" });
  const view = () => replace(item,
    h("p", { class: "entry-text" }, entry.text),
    h("div", { class: "note-meta" },
      h("button", { class: "button small", type: "button", onclick: edit }, "Edit"),
      h("button", { class: "button small danger-text", type: "button", onclick: remove }, "Delete"),
      forgetLink(entry.text)),
    why(entry.provenance));
  const edit = () => {
    const text = h("textarea", { rows: 3, value: entry.text, "aria-label": "Entry text" });
    const save = h("button", { class: "button primary small", type: "submit" }, "Save");
    replace(item, h("form", { class: "edit-form", onsubmit: async (event) => {
      event.preventDefault();
      await apply({ action: "replace", target, content: text.value, old_text: entry.text }, save);
    } }, text, h("div", { class: "actions" }, save,
      h("button", { class: "button small", type: "button", onclick: view }, "Cancel"))));
    text.focus();
  };
  const remove = async (event) => {
    const button = event.currentTarget;
    const ok = await confirmDialog({ title: "Delete this entry?", body: [h("blockquote", {}, entry.text),
      "The agent will no longer see it in new sessions.", remainsElsewhere(entry.text)], confirm: "Delete entry" });
    if (ok) await apply({ action: "remove", target, old_text: entry.text }, button);
  };
  view();
  return item;
}

async function loadAgent(card) {
  let data;
  try {
    data = await api("/api/entries/agent");
  } catch (error) {
    replace(card, failure(error));
    return;
  }
  // Off for the caller: said up front, and every write control disabled (the server refuses them).
  const off = data.switch.enabled ? null : data.switch.disabled_reason;
  const status = h("div", { class: "status-line", "aria-live": "polite" });
  const list = h("div", {});
  const refresh = async () => {
    data = await api("/api/entries/agent");
    show();
  };
  const show = () => replace(list, data.entries.length
    ? h("ul", { class: "entry-list" }, data.entries.map((entry) => agentItem(entry, status, refresh, off)))
    : empty("No memory entries", off ? null : "Entries appear when the agent stores something with its memory tools, or when you add one below."));
  replace(card,
    h("div", { class: "card-head" }, h("h2", { id: "agent-title" }, "Memory entries"),
      h("p", { class: "sub" }, `Agent ${data.agent_id || "default"} · recalled when relevant`)),
    off ? h("div", { class: "alert info", role: "status", id: "agent-off" }, off, " ",
      h("a", { href: "#/settings" }, "Open Settings")) : null,
    status, list,
    h("h3", { class: "section-title" }, "Add an entry"),
    entryForm(null, status, refresh, null, off));
  show();
}

function agentItem(entry, status, refresh, off) {
  const item = h("li", { class: "entry", "data-key": entry.key });
  const view = () => replace(item,
    h("div", { class: "entry-head" },
      h("code", {}, entry.key),
      h("span", { class: `badge ${entry.visibility}` }, entry.visibility.replace("_", " ")),
      h("span", { class: "badge" }, entry.category),
      h("span", { class: "muted" }, `importance ${Number(entry.importance).toFixed(2)}`)),
    h("p", { class: "entry-text" }, entry.content),
    h("div", { class: "note-meta" },
      h("span", { class: "muted" }, "updated ", timeEl(entry.updated_at),
        entry.expires_at ? [" · expires ", timeEl(entry.expires_at)] : null),
      entry.editable
        ? [h("button", { class: "button small", type: "button", disabled: Boolean(off), onclick: () => {
            replace(item, entryForm(entry, status, refresh, view));
            item.querySelector("textarea").focus();
          } }, "Edit"),
          h("button", { class: "button small danger-text", type: "button", disabled: Boolean(off), onclick: remove }, "Delete")]
        : h("span", { class: "badge", title: "Shared with everyone who uses this agent; only a platform admin can change it" }, "Read only for you"),
      forgetLink(entry.content)),
    why(entry.provenance));
  const remove = async () => {
    const ok = await confirmDialog({ title: "Delete this entry?",
      body: [h("blockquote", {}, entry.content), "The agent will no longer recall it.", remainsElsewhere(entry.content)],
      confirm: "Delete entry" });
    if (!ok) return;
    try {
      await api(`/api/entries/agent/${encodeURIComponent(entry.key)}?visibility=${entry.visibility}`, { method: "DELETE" });
      toast("Entry deleted.");
      await refresh();
    } catch (error) {
      replace(status, failure(error));
    }
  };
  view();
  return item;
}

function entryForm(entry, status, refresh, cancel, off) {
  const id = entry ? `edit-${entry.key}` : "new-entry";
  const key = h("input", { id: `${id}-key`, required: true, value: entry ? entry.key : "", readOnly: Boolean(entry),
    placeholder: "e.g. deploy_process" });
  const content = h("textarea", { id: `${id}-content`, rows: 3, required: true, value: entry ? entry.content : "" });
  const category = h("input", { id: `${id}-category`, value: entry ? entry.category : "general" });
  const visibility = h("select", { id: `${id}-visibility` },
    ["private", "shared", "read_only"].map((v) => h("option", { value: v, selected: entry ? entry.visibility === v : v === "private" }, v.replace("_", " "))));
  const importance = h("input", { id: `${id}-importance`, type: "number", min: "0", max: "1", step: "0.05",
    value: entry ? String(entry.importance) : "0.5" });
  const save = h("button", { class: "button primary", type: "submit" }, entry ? "Save" : "Add entry");
  const field = (label, input) => h("div", { class: "field" }, h("label", { for: input.id }, label), input);
  return h("form", { class: "entry-form", onsubmit: async (event) => {
    event.preventDefault();
    await busy(save, "Saving…", async () => {
      try {
        await api(`/api/entries/agent/${encodeURIComponent(key.value.trim())}`, { method: "PUT", body: {
          content: content.value, category: category.value, visibility: visibility.value,
          importance: Number(importance.value),
        } });
        replace(status);
        toast(entry ? "Entry saved." : "Entry added.");
        await refresh();
      } catch (error) {
        replace(status, failure(error));
      }
    });
  } },
  h("fieldset", { class: "plain", disabled: Boolean(off), "aria-describedby": off ? "agent-off" : null },
    h("div", { class: "grid-2" }, field("Key", key), field("Category", category)),
    field("Content", content),
    h("div", { class: "grid-2" }, field("Visibility", visibility), field("Importance (0–1)", importance)),
    h("div", { class: "actions" }, save,
      cancel ? h("button", { class: "button", type: "button", onclick: cancel }, "Cancel") : null)));
}

