// The Jobs tab: the last consolidation runs with their results, "Run now" per scope, and
// "Summarize now" for a thread.

import { api } from "./api.js";
import { alertBox, busy, empty, failure, h, replace, skeleton, timeEl, toast } from "./ui.js";

export function renderJobs(root, me) {
  const runs = h("section", { class: "card wide", "aria-labelledby": "runs-title" }, skeleton(8, "tall"));
  const status = h("div", { class: "status-line", "aria-live": "polite" });
  const list = h("div", {}, skeleton(6));
  const load = async () => {
    try {
      const data = await api("/api/jobs/consolidation", { query: { limit: 20 } });
      replace(list, data.runs.length
        ? h("ol", { class: "runs" }, data.runs.map(run))
        : empty("No consolidation runs yet", "Nightly consolidation runs appear here; use Run now to fold a scope's older notes today."));
    } catch (error) {
      replace(list, failure(error));
    }
  };
  replace(runs,
    h("div", { class: "card-head" }, h("h2", { id: "runs-title" }, "Nightly consolidation"),
      h("p", { class: "sub" }, "Folds notes older than a week into the curated document, scope by scope.")),
    h("div", { class: "run-now" }, h("span", { class: "muted" }, "Run now for:"),
      me.scopes.map((scope) => h("button", { class: "button", type: "button",
        onclick: async (event) => busy(event.currentTarget, "Running…", async () => {
          try {
            const result = await api(`${scope.path.split("?")[0]}/consolidate${scope.path.includes("?") ? `?${scope.path.split("?")[1]}` : ""}`, { method: "POST" });
            replace(status, alertBox(`${scopeName(scope)}: ${result.status}. ${result.summary || ""}`, result.status === "failed" ? "error" : "info"));
            await load();
          } catch (error) {
            replace(status, failure(error));
          }
        }) }, scopeName(scope)))),
    status, list);
  replace(root,
    h("header", { class: "page-head" }, h("div", {}, h("h1", {}, "Jobs"),
      h("p", { class: "sub" }, "Background work on your memory: what ran, what it changed, and how to run it now."))),
    runs, summarizeCard());
  load();
}

function scopeName(scope) {
  return scope.kind === "team" ? `${scope.label} (${scope.workspace})`
    : scope.workspace ? `${scope.label} in ${scope.workspace}` : scope.label;
}

const STATUS = { succeeded: "ok", partial: "warn", failed: "error", running: "info" };

function run(record) {
  return h("li", { class: "run", "data-run": record.id },
    h("div", { class: "version-head" },
      h("strong", {}, timeEl(record.started_at)),
      h("span", { class: `badge ${STATUS[record.status] || ""}` }, record.status),
      h("span", { class: "badge" }, record.trigger === "manual" ? `run now${record.by ? ` by ${record.by}` : ""}` : "nightly"),
      h("span", { class: "muted" }, `${record.folded} ${record.folded === 1 ? "note" : "notes"} folded`)),
    record.summary ? h("p", {}, record.summary) : null,
    record.scopes.length
      ? h("details", { class: "why" }, h("summary", {}, `${record.scopes.length} ${record.scopes.length === 1 ? "scope" : "scopes"}`),
          h("table", { class: "mini" },
            h("thead", {}, h("tr", {}, ["Scope", "Status", "Folded", "Error"].map((t) => h("th", { scope: "col" }, t)))),
            h("tbody", {}, record.scopes.map((s) => h("tr", {},
              h("td", {}, s.kind === "team" ? `team ${s.workspace_id}` : `personal${s.workspace_id ? ` in ${s.workspace_id}` : ""}`),
              h("td", {}, s.status), h("td", {}, String(s.folded)), h("td", {}, s.error || "—"))))))
      : null);
}

function summarizeCard() {
  const input = h("input", { id: "thread-id", required: true, placeholder: "thread id", autocomplete: "off" });
  const button = h("button", { class: "button primary", type: "submit" }, "Summarize now");
  const status = h("div", { class: "status-line", "aria-live": "polite" });
  return h("section", { class: "card wide", "aria-labelledby": "summarize-title" },
    h("div", { class: "card-head" }, h("h2", { id: "summarize-title" }, "Summarize now"),
      h("p", { class: "sub" }, "Compact one of your conversations now instead of waiting for the trigger. No message is sent. The platform enables it with the compaction_manual setting.")),
    h("form", { class: "inline-form", onsubmit: async (event) => {
      event.preventDefault();
      await busy(button, "Summarizing…", async () => {
        try {
          const answer = await api(`/api/threads/${encodeURIComponent(input.value.trim())}/summarize`, { method: "POST" });
          replace(status, alertBox(answer.message, answer.status === "failed" ? "error" : "info"));
          toast(answer.message);
        } catch (error) {
          replace(status, error.status === 404 ? alertBox("Not found: no conversation of yours has this id.") : failure(error));
        }
      });
    } }, h("label", { for: "thread-id" }, "Thread"), input, button),
    status);
}
