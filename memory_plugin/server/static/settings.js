// The Settings tab: effective values beside each layer's stored values, locks, refused writes
// with their reason, "Use the platform default" per layer, and the context memory switch.

import { api } from "./api.js";
import { disableMemory } from "./profile.js";
import { alertBox, busy, confirmDialog, failure, h, replace, skeleton, toast } from "./ui.js";

const ORDER = ["platform", "org", "space", "user"];
const LAYER_NAMES = { platform: "Platform", org: "Organization", space: "Space", user: "You" };

export function renderSettings(root, me, params) {
  const space = params.get("space") || "";
  const spaces = (me.admin || []).filter((a) => a.startsWith("space:")).map((a) => a.slice(6));
  const spaceInput = h("input", { id: "space", name: "space", value: space, list: "space-list",
    placeholder: "space id", autocomplete: "off" });
  const switchCard = h("section", { class: "card", "aria-labelledby": "switch-title" }, skeleton(3));
  const tableCard = h("section", { class: "card wide", "aria-labelledby": "layers-title" }, skeleton(14, "tall"));
  replace(root,
    h("header", { class: "page-head" },
      h("div", {}, h("h1", {}, "Settings"),
        h("p", { class: "sub" }, "Each layer replaces only the values it sets: platform → organization → space → you.")),
      h("form", { class: "space-form", onsubmit: (event) => {
        event.preventDefault();
        location.hash = spaceInput.value.trim() ? `#/settings?space=${encodeURIComponent(spaceInput.value.trim())}` : "#/settings";
      } },
      h("label", { for: "space" }, "Space"), spaceInput,
      h("datalist", { id: "space-list" }, spaces.map((s) => h("option", { value: s }))),
      h("button", { class: "button", type: "submit" }, "Show"))),
    switchCard, tableCard);
  new SettingsView(root, switchCard, tableCard, space);
}

class SettingsView {
  constructor(root, switchCard, tableCard, space) {
    this.root = root;
    this.switchCard = switchCard;
    this.tableCard = tableCard;
    this.space = space;
    this.status = h("div", { class: "status-line", "aria-live": "polite" });
    this.filter = h("input", { type: "search", id: "settings-filter", placeholder: "Filter settings",
      "aria-label": "Filter settings", oninput: () => this.applyFilter() });
    this.load();
  }

  async load() {
    try {
      this.show(await api("/api/settings", { query: { space: this.space } }));
    } catch (error) {
      replace(this.switchCard, failure(error));
      this.tableCard.remove();
    }
  }

  show(data) {
    this.data = data;
    this.renderSwitch();
    this.renderTable();
  }

  async write(layer, body, button) {
    return busy(button, "Saving…", async () => {
      try {
        this.show(await api(`/api/settings/${layer}`, { method: "PUT", body, query: { space: this.space } }));
        replace(this.status);
        toast(`Saved in the ${LAYER_NAMES[layer].toLowerCase()} layer.`);
        return true;
      } catch (error) {
        replace(this.status, alertBox(`Not saved: ${error.message}`));
        this.refusal = error.message;
        return false;
      }
    });
  }

  renderSwitch() {
    const { enabled, disabled_reason: reason } = this.data.profile_switch;
    const toggle = h("button", {
      type: "button", role: "switch", class: "switch", id: "memory-switch",
      "aria-checked": String(enabled), "aria-describedby": "switch-help", disabled: Boolean(reason),
      title: reason || null,
      onclick: async () => {
        try {
          if (enabled) {
            const answer = await disableMemory();
            if (!answer) return;
            toast(answer.message);
            this.load();
          } else {
            await this.write("user", { set: { profile_user: true } }, toggle);
          }
        } catch (error) {
          replace(this.status, alertBox(error.message));
        }
      },
    }, h("span", { class: "knob" }));
    replace(this.switchCard,
      h("div", { class: "switch-row" },
        h("div", {},
          h("h2", { id: "switch-title" }, h("label", { for: "memory-switch" }, "Context memory")),
          h("p", { id: "switch-help", class: reason ? "hint warn" : "hint" },
            reason || (enabled
              ? "On: the agent remembers durable facts about you across conversations. Turning it off permanently deletes the memory."
              : "Off: nothing about you is loaded or kept."))),
        toggle));
  }

  renderTable() {
    const data = this.data;
    const layers = ORDER.filter((name) => data.layers[name]);
    const head = h("tr", {},
      h("th", { scope: "col" }, "Setting"),
      h("th", { scope: "col" }, "Effective"),
      layers.map((name) => {
        const layer = data.layers[name];
        return h("th", { scope: "col", "data-layer": name },
          h("div", { class: "layer-head" },
            h("span", {}, LAYER_NAMES[name]),
            h("span", { class: "muted small" }, layer.editable ? "you administer" : "view only"),
            name !== "platform" && layer.editable
              ? h("button", { class: "button small", type: "button", onclick: (event) => this.useDefault(name, event.currentTarget) },
                  "Use the platform default")
              : null));
      }));
    const rows = data.fields.map((field) => this.row(field, layers));
    replace(this.tableCard,
      h("div", { class: "card-head" }, h("h2", { id: "layers-title" }, "Layers"),
        h("p", { class: "sub" }, "Stored values per layer beside the value in effect. A lock set by the platform refuses writes below it.")),
      h("div", { class: "table-tools" }, this.filter,
        data.locked.length ? h("span", { class: "muted" }, `Locked by the platform: ${data.locked.join(", ")}`) : null),
      this.status,
      h("div", { class: "table-wrap" },
        h("table", { class: "settings" }, h("thead", {}, head), h("tbody", {}, rows))));
    this.applyFilter();
  }

  row(field, layers) {
    const data = this.data;
    const locked = data.locked.includes(field.name);
    const fromEnv = data.env.includes(field.name);
    const bounds = [field.minimum != null ? `min ${field.minimum}` : null, field.maximum != null ? `max ${field.maximum}` : null]
      .filter(Boolean).join(", ");
    return h("tr", { "data-setting": field.name },
      h("th", { scope: "row" },
        h("code", {}, field.name),
        h("div", { class: "muted small" }, field.description, bounds ? ` (${bounds})` : "")),
      h("td", { class: "effective" },
        h("span", { class: "value" }, show(data.effective[field.name])),
        locked ? h("span", { class: "badge lock", title: "Locked by the platform" }, "locked") : null,
        fromEnv ? h("span", { class: "badge", title: "Set by an environment variable of the deployment" }, "env") : null),
      layers.map((name) => this.cell(field, name)));
  }

  cell(field, name) {
    const layer = this.data.layers[name];
    const stored = Object.hasOwn(layer.values, field.name);
    const lockedHere = layer.locked.includes(field.name);
    const allowed = !field.layers || field.layers.includes(name);
    const td = h("td", { "data-layer": name });
    const view = () => replace(td,
      stored ? h("span", { class: "value" }, show(layer.values[field.name])) : h("span", { class: "muted" }, "—"),
      lockedHere ? h("span", { class: "badge lock", title: "Locked here: lower layers cannot change it" }, "locked") : null,
      layer.editable && allowed
        ? h("button", { class: "button small ghost", type: "button",
            "aria-label": `Edit ${field.name} in the ${LAYER_NAMES[name].toLowerCase()} layer`, onclick: edit }, "Edit")
        : null,
      layer.editable && name === "platform"
        ? h("button", { class: "button small ghost", type: "button",
            "aria-label": `${lockedHere ? "Unlock" : "Lock"} ${field.name}`,
            onclick: (event) => this.write(name, lockedHere ? { unlock: [field.name] } : { lock: [field.name] }, event.currentTarget) },
          lockedHere ? "Unlock" : "Lock")
        : null);
    const edit = () => {
      const input = editor(field, stored ? layer.values[field.name] : this.data.effective[field.name]);
      const save = h("button", { class: "button small primary", type: "submit" }, "Save");
      replace(td, h("form", { class: "cell-form", onsubmit: async (event) => {
        event.preventDefault();
        let value;
        try {
          value = parse(field, input);
        } catch (error) {
          replace(this.status, alertBox(`Not saved: ${error.message}`));
          return;
        }
        if (!(await this.write(name, { set: { [field.name]: value } }, save))) {
          td.querySelector(".cell-error")?.remove();
          td.append(h("p", { class: "cell-error" }, this.refusal));
        }
      } },
      input, save,
      stored ? h("button", { class: "button small", type: "button",
        onclick: (event) => this.write(name, { clear: [field.name] }, event.currentTarget) }, "Clear") : null,
      h("button", { class: "button small", type: "button", onclick: view }, "Cancel")));
      input.focus();
    };
    view();
    return td;
  }

  async useDefault(name, button) {
    const ok = await confirmDialog({
      title: `Use the platform default for the ${LAYER_NAMES[name].toLowerCase()} layer?`,
      body: "Every value stored in this layer is cleared, so the layer above decides again. Locks are kept.",
      confirm: "Clear the layer",
    });
    if (!ok) return;
    await busy(button, "Clearing…", async () => {
      try {
        this.show(await api(`/api/settings/${name}`, { method: "DELETE", query: { space: this.space } }));
        toast("The layer now uses the platform default.");
      } catch (error) {
        replace(this.status, alertBox(`Not cleared: ${error.message}`));
      }
    });
  }

  applyFilter() {
    const term = this.filter.value.trim().toLowerCase();
    for (const row of this.tableCard.querySelectorAll("tbody tr")) {
      row.hidden = Boolean(term) && !row.textContent.toLowerCase().includes(term);
    }
  }
}

function kind(field) {
  const type = String(field.type || "").toLowerCase();
  if (type.includes("bool") || typeof field.default === "boolean") return "bool";
  if (/int|float|number/.test(type) || typeof field.default === "number") return "number";
  if (/tuple|list|array/.test(type) || Array.isArray(field.default)) return "list";
  return "text";
}

function show(value) {
  if (value === true) return "on";
  if (value === false) return "off";
  if (value === null || value === undefined) return "none";
  if (Array.isArray(value)) return value.length ? value.join(", ") : "none";
  return String(value);
}

function editor(field, current) {
  const label = `New value of ${field.name}`;
  switch (kind(field)) {
    case "bool":
      return h("select", { "aria-label": label },
        h("option", { value: "true", selected: current === true }, "on"),
        h("option", { value: "false", selected: current !== true }, "off"));
    case "number":
      return h("input", { type: "number", step: "any", value: String(current ?? ""), "aria-label": label,
        min: field.minimum ?? null, max: field.maximum ?? null, class: "narrow" });
    case "list":
      return h("input", { value: (current || []).join(", "), "aria-label": label, placeholder: "comma, separated" });
    default:
      return h("input", { value: current ?? "", "aria-label": label });
  }
}

function parse(field, input) {
  const raw = input.value.trim();
  switch (kind(field)) {
    case "bool":
      return raw === "true";
    case "number": {
      const value = Number(raw);
      if (!raw || !Number.isFinite(value)) throw new Error(`${field.name} needs a number`);
      return value;
    }
    case "list":
      return raw ? raw.split(",").map((part) => part.trim()).filter(Boolean) : [];
    default:
      return raw === "" && field.default === null ? null : raw;
  }
}

