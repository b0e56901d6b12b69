// The REST client: the bearer token (kept in sessionStorage once the user signs in) and JSON calls.

const KEY = "memory-console-token";

export class ApiError extends Error {
  constructor(status, detail) {
    super(detail);
    this.status = status;
    this.detail = detail;
  }
}

export const TOKEN_LINK = /(?:^#|&)token=([^&]*)/;

// The token of a #token=... sign-in link, removed from the address bar (so it stays out of
// the history and bookmarks); it is only kept once the user confirms who it signs in as.
export function takeTokenFromUrl() {
  const match = TOKEN_LINK.exec(location.hash);
  if (!match) return null;
  history.replaceState(null, "", location.pathname + location.search + "#/personal");
  try {
    return decodeURIComponent(match[1]);
  } catch {
    return "";
  }
}

export const token = () => sessionStorage.getItem(KEY);
export const setToken = (value) => sessionStorage.setItem(KEY, value);
export const clearToken = () => sessionStorage.removeItem(KEY);

function message(status, body) {
  const detail = body && body.detail;
  if (typeof detail === "string") return detail;
  if (Array.isArray(detail)) {
    return detail.map((d) => `${(d.loc || []).slice(1).join(".") || "request"}: ${d.msg}`).join("; ");
  }
  return `request failed (HTTP ${status})`;
}

// `query`: an object of parameters; an array value repeats the parameter.
function withQuery(path, query) {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    for (const one of Array.isArray(value) ? value : [value]) {
      if (one !== undefined && one !== null && one !== "") params.append(name, one);
    }
  }
  const text = params.toString();
  return text ? path + (path.includes("?") ? "&" : "?") + text : path;
}

// `body`: sent as JSON; `text`: JSON text sent as it is (a file the user chose).
async function call(path, { method = "GET", body, text, query, bearer } = {}) {
  const headers = { Authorization: `Bearer ${bearer ?? token() ?? ""}` };
  const payload = text ?? (body === undefined ? undefined : JSON.stringify(body));
  if (payload !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(withQuery(path, query), { method, headers, body: payload });
  } catch {
    throw new ApiError(0, "The console cannot reach its server. Check that it is running.");
  }
  if (!response.ok) {
    const data = await response.json().catch(() => null);
    throw new ApiError(response.status, message(response.status, data));
  }
  return response;
}

// `bearer`: a token to call with instead of the signed-in one (a sign-in link's, to ask who it is).
export async function api(path, options = {}) {
  const response = await call(path, options);
  return response.json().catch(() => null);
}

// A download (GET with the bearer token) as a Blob.
export async function apiBlob(path, options = {}) {
  return (await call(path, options)).blob();
}

// A path segment, encoded: ids come from the URL or from the server, never trusted raw.
export const seg = (value) => encodeURIComponent(value);
