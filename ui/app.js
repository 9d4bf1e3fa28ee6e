// skillserve's skills manager: one page, two ways to reach the server.
//
// - Inside a chat (an MCP Apps host): the page talks to the host over
//   postMessage JSON-RPC (ui/initialize, ui/notifications/initialized,
//   tools/call proxied to the server, size changes, host context, teardown),
//   as the extension io.modelcontextprotocol/ui specifies. Every change
//   carries the nonce the server embedded in this render of the page.
// - In a browser (`serve --http`'s `/`, `skillserve ui`): the page is an MCP
//   client of `/mcp` itself (protocol 2026-07-28, one self-contained POST a
//   request, so a server restart loses nothing), with the user's bearer token
//   (typed once, kept in sessionStorage; `skillserve ui` hands it over in the
//   URL's fragment, which never reaches a server's log).
//
// Skills are untrusted: their text is rendered by a Markdown renderer that
// builds DOM nodes from text only (no HTML is ever parsed), shows links
// without following them and images without loading them.
"use strict";

(function () {
  const PROTOCOL = "2026-07-28";
  const APPS_PROTOCOL = "2026-01-26";
  const UI_EXTENSION = "io.modelcontextprotocol/ui";
  const MIME = "text/html;profile=mcp-app";
  const PAGE = 100;
  // The days of a skill's own loads in its view.
  const SKILL_DAYS = 30;
  const TOKEN_KEY = "skillserve-token";

  const nonceMeta = document.querySelector('meta[name="skillserve-nonce"]');
  const state = {
    nonce: nonceMeta ? nonceMeta.getAttribute("content") : null,
    inHost: window.parent !== window,
    overview: null,
    view: "catalog",
    skill: null,
    query: { query: "", source: "", root: "", client: "", status: "" },
    rows: [],
    matched: 0,
    seq: 0,
    notice: null,
    usage: { days: 30, client: "", clients: [] },
  };

  // ---- DOM helpers: text only, never HTML ----
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    if (attrs) {
      for (const [key, value] of Object.entries(attrs)) {
        if (value === null || value === undefined || value === false) continue;
        if (key === "class") node.className = value;
        else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
        else if (key === "dataset") Object.assign(node.dataset, value);
        else node.setAttribute(key, value === true ? "" : String(value));
      }
    }
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }
  const root = () => document.getElementById("app");
  function render(...nodes) {
    root().replaceChildren(...nodes.filter((n) => n !== null && n !== undefined));
  }

  // ---- Transport: the host (postMessage) or /mcp (fetch) ----
  let nextId = 1;
  const pending = new Map();

  function hostRequest(method, params) {
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject });
      window.parent.postMessage({ jsonrpc: "2.0", id, method, params }, "*");
    });
  }
  function hostNotify(method, params) {
    window.parent.postMessage({ jsonrpc: "2.0", method, params }, "*");
  }

  window.addEventListener("message", (event) => {
    if (!state.inHost || event.source !== window.parent) return;
    const message = event.data;
    if (!message || message.jsonrpc !== "2.0") return;
    if (message.id !== undefined && message.method === undefined) {
      const waiting = pending.get(message.id);
      if (!waiting) return;
      pending.delete(message.id);
      if (message.error) waiting.reject(new Error(message.error.message || "the host refused the request"));
      else waiting.resolve(message.result);
      return;
    }
    if (message.id !== undefined) {
      // A request from the host: teardown and ping need an answer.
      const reply = (result) => window.parent.postMessage({ jsonrpc: "2.0", id: message.id, result }, "*");
      if (message.method === "ui/resource-teardown" || message.method === "ping") reply({});
      else window.parent.postMessage({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "method not found: " + message.method } }, "*");
      return;
    }
    switch (message.method) {
      case "ui/notifications/host-context-changed":
        applyHostContext(message.params || {});
        break;
      case "ui/notifications/tool-input": {
        const view = message.params && message.params.arguments && message.params.arguments.view;
        if (view && view !== state.view && VIEWS.some(([id]) => id === view)) show(view);
        break;
      }
      default:
        break;
    }
  });

  function applyHostContext(context) {
    if (context.theme === "light" || context.theme === "dark") document.documentElement.dataset.theme = context.theme;
    const variables = context.styles && context.styles.variables;
    if (variables) {
      for (const [name, value] of Object.entries(variables)) {
        if (typeof value === "string" && name.startsWith("--")) document.documentElement.style.setProperty(name, value);
      }
    }
  }

  function watchSize() {
    let last = "";
    let timer = null;
    const send = () => {
      timer = null;
      const width = Math.ceil(document.documentElement.scrollWidth);
      const height = Math.ceil(document.documentElement.scrollHeight);
      const key = width + "x" + height;
      if (key === last) return;
      last = key;
      hostNotify("ui/notifications/size-changed", { width, height });
    };
    new ResizeObserver(() => {
      if (!timer) timer = setTimeout(send, 50);
    }).observe(document.documentElement);
    send();
  }

  function token() {
    return sessionStorage.getItem(TOKEN_KEY) || "";
  }

  async function httpCall(method, params) {
    const body = {
      jsonrpc: "2.0",
      id: nextId++,
      method,
      params: Object.assign({}, params, {
        _meta: {
          "io.modelcontextprotocol/protocolVersion": PROTOCOL,
          "io.modelcontextprotocol/clientInfo": { name: "skillserve-app", version: "1" },
          "io.modelcontextprotocol/clientCapabilities": { extensions: { [UI_EXTENSION]: { mimeTypes: [MIME] } } },
        },
      }),
    };
    const headers = {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      "MCP-Protocol-Version": PROTOCOL,
      "Mcp-Method": method,
    };
    if (params && typeof params.name === "string") headers["Mcp-Name"] = params.name;
    if (token()) headers.Authorization = "Bearer " + token();
    let response;
    try {
      response = await fetch("/mcp", { method: "POST", headers, body: JSON.stringify(body), cache: "no-store" });
    } catch (error) {
      throw new AppError("unreachable", "The server cannot be reached (" + error.message + "). Is it still running? The page tries again on the next action.");
    }
    if (response.status === 401) {
      sessionStorage.removeItem(TOKEN_KEY);
      throw new AppError("unauthorized", "The server wants a token: " + (await response.text()).trim());
    }
    if (response.status === 403) throw new AppError("forbidden", (await response.text()).trim());
    if (!response.ok) throw new AppError("http", "The server answered " + response.status + ": " + (await response.text()).trim());
    const answer = await response.json();
    if (answer.error) throw new AppError("rpc", answer.error.message);
    return answer.result;
  }

  class AppError extends Error {
    constructor(code, message) {
      super(message);
      this.code = code;
    }
  }

  // tools/call of an app tool: its structured content, or an AppError.
  async function call(name, args) {
    const params = { name, arguments: args || {} };
    const result = state.inHost ? await hostRequest("tools/call", params) : await httpCall("tools/call", params);
    const data = result && result.structuredContent;
    if (result && result.isError) {
      const error = data && data.error;
      const text = (result.content || []).map((c) => c.text || "").join("\n");
      throw new AppError(error ? error.code : "failed", (error && error.message) || text || "the call failed");
    }
    return data || {};
  }

  async function change(name, args) {
    const withNonce = Object.assign({}, args);
    if (state.nonce) withNonce.nonce = state.nonce;
    return call(name, withNonce);
  }

  // ---- Markdown, safely: text nodes only ----
  function markdown(text) {
    const out = el("div", { class: "md" });
    let body = text.replace(/\r\n?/g, "\n");
    const front = /^---\n([\s\S]*?)\n---\n?/.exec(body);
    if (front) {
      out.append(el("pre", { class: "frontmatter", "aria-label": "frontmatter" }, front[1]));
      body = body.slice(front[0].length);
    }
    const lines = body.split("\n");
    let i = 0;
    let paragraph = [];
    const flush = () => {
      if (paragraph.length) out.append(el("p", null, inline(paragraph.join(" "))));
      paragraph = [];
    };
    while (i < lines.length) {
      const line = lines[i];
      const fence = /^(\s*)(```+|~~~+)(.*)$/.exec(line);
      if (fence) {
        flush();
        const code = [];
        i++;
        while (i < lines.length && !lines[i].trim().startsWith(fence[2])) code.push(lines[i++]);
        i++;
        const lang = fence[3].trim();
        out.append(el("pre", lang ? { "data-lang": lang } : null, el("code", null, code.join("\n"))));
        continue;
      }
      const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
      if (heading) {
        flush();
        const level = Math.min(heading[1].length + 2, 6);
        out.append(el("h" + level, null, inline(heading[2])));
        i++;
        continue;
      }
      if (/^\s*([-*_])\s*(\1\s*){2,}$/.test(line)) {
        flush();
        out.append(el("hr"));
        i++;
        continue;
      }
      if (/^\s*>/.test(line)) {
        flush();
        const quote = [];
        while (i < lines.length && /^\s*>/.test(lines[i])) quote.push(lines[i++].replace(/^\s*>\s?/, ""));
        out.append(el("blockquote", null, markdown(quote.join("\n")).childNodes));
        continue;
      }
      const item = /^(\s*)([-*+]|\d+[.)])\s+(.*)$/.exec(line);
      if (item) {
        flush();
        const ordered = /\d/.test(item[2]);
        const list = el(ordered ? "ol" : "ul");
        while (i < lines.length) {
          const m = /^(\s*)([-*+]|\d+[.)])\s+(.*)$/.exec(lines[i]);
          if (!m) {
            if (/^\s{2,}\S/.test(lines[i]) && list.lastChild) {
              list.lastChild.append(" ", inline(lines[i].trim()));
              i++;
              continue;
            }
            break;
          }
          const task = /^\[( |x|X)\]\s+(.*)$/.exec(m[3]);
          list.append(el("li", null, task ? [task[1] === " " ? "☐ " : "☑ ", inline(task[2])] : inline(m[3])));
          i++;
        }
        out.append(list);
        continue;
      }
      if (/^\s*\|.*\|\s*$/.test(line) && i + 1 < lines.length && /^\s*\|?\s*:?-+/.test(lines[i + 1])) {
        flush();
        const cells = (row) => row.trim().replace(/^\||\|$/g, "").split("|").map((c) => c.trim());
        const table = el("table");
        table.append(el("thead", null, el("tr", null, cells(line).map((c) => el("th", null, inline(c))))));
        const tbody = el("tbody");
        i += 2;
        while (i < lines.length && /^\s*\|.*\|\s*$/.test(lines[i])) tbody.append(el("tr", null, cells(lines[i++]).map((c) => el("td", null, inline(c)))));
        table.append(tbody);
        out.append(table);
        continue;
      }
      if (!line.trim()) {
        flush();
        i++;
        continue;
      }
      paragraph.push(line.trim());
      i++;
    }
    flush();
    return out;
  }

  // Inline Markdown: code, images (never loaded), links (shown, not
  // followed), bold, italic. Returns nodes built from text.
  function inline(text) {
    const nodes = [];
    const pattern = /(`+)([\s\S]*?)\1|!\[([^\]]*)\]\(([^)\s]*)[^)]*\)|\[([^\]]+)\]\(([^)\s]*)[^)]*\)|\*\*([^*]+)\*\*|(?<![\w])__([^_]+)__(?![\w])|\*([^*\s][^*]*)\*|(?<![\w])_([^_\s][^_]*)_(?![\w])|<(https?:\/\/[^>\s]+)>/g;
    let last = 0;
    let m;
    while ((m = pattern.exec(text))) {
      if (m.index > last) nodes.push(text.slice(last, m.index));
      if (m[1]) nodes.push(el("code", null, m[2]));
      else if (m[4] !== undefined) nodes.push(el("span", { class: "image", title: "images are not loaded" }, "[image: " + (m[3] || "untitled") + " — " + m[4] + "]"));
      else if (m[6] !== undefined) nodes.push(el("span", { class: "link", title: "links are shown, not followed" }, el("span", { class: "link-text" }, inline(m[5])), " ", el("span", { class: "link-url" }, "(" + m[6] + ")")));
      else if (m[7] || m[8]) nodes.push(el("strong", null, inline(m[7] || m[8])));
      else if (m[9] || m[10]) nodes.push(el("em", null, inline(m[9] || m[10])));
      else if (m[11]) nodes.push(el("span", { class: "link-url" }, m[11]));
      last = pattern.lastIndex;
    }
    if (last < text.length) nodes.push(text.slice(last));
    return nodes;
  }

  // ---- Views ----
  const VIEWS = [
    ["catalog", "Catalog"],
    ["sources", "Sources"],
    ["quarantine", "Quarantine"],
    ["clients", "Clients"],
    ["usage", "Usage"],
  ];

  function canChange() {
    return state.overview && state.overview.changes && state.overview.changes.allowed;
  }

  function frame(...content) {
    const tabs = el(
      "nav",
      { class: "tabs", role: "tablist", "aria-label": "Views" },
      VIEWS.map(([id, title]) =>
        el("button", { role: "tab", "aria-selected": state.view === id && !state.skill ? "true" : "false", onclick: () => show(id) }, title),
      ),
    );
    const facets = state.overview && state.overview.facets;
    const who = state.overview
      ? [
          facets ? facets.total + " skills" : "",
          canChange() ? "" : " · read only",
          state.inHost ? "" : " · ",
          state.inHost ? null : el("button", { class: "link", onclick: signOut }, "Forget token"),
        ]
      : [];
    const notice = state.notice ? el("div", { class: "notice " + state.notice.kind, role: state.notice.kind === "error" ? "alert" : "status" }, state.notice.text) : null;
    render(el("header", { class: "bar" }, el("h1", null, "Skills"), tabs, el("span", { class: "who" }, who)), notice, el("main", null, content));
  }

  function say(kind, text) {
    state.notice = { kind, text };
    const old = root().querySelector(".notice");
    const node = el("div", { class: "notice " + kind, role: kind === "error" ? "alert" : "status" }, text);
    if (old) old.replaceWith(node);
    else root().querySelector("header.bar").after(node);
  }

  function failure(error) {
    if (error && error.code === "unauthorized" && !state.inHost) return login(error.message);
    const message = (error && error.message) || String(error);
    // The server's messages are lines of the command line's kind: a
    // sentence here.
    say("error", message.charAt(0).toUpperCase() + message.slice(1));
  }

  function show(view) {
    state.view = view;
    state.skill = null;
    state.notice = null;
    ({ catalog: catalogView, sources: sourcesView, quarantine: quarantineView, clients: clientsView, usage: usageView })[view]();
  }

  function badge(status) {
    return el("span", { class: "badge " + status }, status);
  }

  function provenance(p) {
    // Who signed an installed source's version (behaviour.md §19.8).
    const signed = p.signed_by
      ? [" · signed by ", el("span", { class: "mono", title: p.signed_by.key }, p.signed_by.principal)]
      : [];
    if (p.source) return [p.kind, " · ", el("span", { class: "mono" }, p.source_id + ": " + p.source), ...signed];
    if (p.plugin) return [p.kind, " · ", p.plugin];
    return p.kind;
  }

  function clientTitles(ids) {
    const columns = (state.overview && state.overview.facets.clients) || [];
    return ids.map((id) => (columns.find((c) => c.id === id) || { title: id }).title);
  }

  // Which clients see a skill, in few words: "every client", "all but
  // Claude Code, Cursor", or the list.
  function seenBy(ids) {
    const columns = (state.overview && state.overview.facets.clients) || [];
    if (!ids.length) return "none";
    if (ids.length === columns.length) return "every client";
    const missing = columns.filter((c) => !ids.includes(c.id)).map((c) => c.title);
    if (ids.length > columns.length / 2) return "all but " + missing.join(", ");
    return clientTitles(ids).join(", ");
  }

  // Where a skill comes from, in full: for the title of its short label.
  function where(r) {
    const p = r.provenance;
    const signed = p.signed_by ? "\nsigned by " + p.signed_by.principal + " (" + p.signed_by.key + ")" : "";
    if (p.source) return p.source_id + ": " + p.source + signed + "\n" + r.id;
    if (p.plugin) return "plugin " + p.plugin + "\n" + r.root;
    return r.root;
  }

  // Which clients see a skill, as a picture: a dot per client column,
  // filled when it is shown the skill, with the names on hover (the
  // Clients view has the detail).
  function seenDots(ids) {
    const columns = (state.overview && state.overview.facets.clients) || [];
    const shown = columns.filter((c) => ids.includes(c.id)).map((c) => c.title);
    const hidden = columns.filter((c) => !ids.includes(c.id)).map((c) => c.title);
    const title = (shown.length ? "Shown to " + shown.join(", ") : "Shown to no client") + (hidden.length && shown.length ? "\nNot shown to " + hidden.join(", ") : "");
    return el(
      "span",
      { class: "seen", title, "aria-label": shown.length + " of " + columns.length + " clients. " + title.replace("\n", ". ") },
      el("span", { class: "dots", "aria-hidden": "true" }, columns.map((c) => el("span", { class: ids.includes(c.id) ? "dot on" : "dot" }))),
      " ",
      el("span", { class: "count", "aria-hidden": "true" }, shown.length + "/" + columns.length),
    );
  }

  function select(label, key, options) {
    return el(
      "label",
      null,
      el("span", { class: "sr-only" }, label),
      el(
        "select",
        {
          "aria-label": label,
          "data-filter": key,
          onchange: (e) => {
            state.query[key] = e.target.value;
            loadCatalog(false);
          },
        },
        el("option", { value: "" }, label + ": all"),
        options.map(([value, text]) => el("option", { value, selected: state.query[key] === value }, text)),
      ),
    );
  }

  function catalogView() {
    const f = state.overview.facets;
    const search = el("input", {
      type: "search",
      placeholder: "Search skills (press / to focus)",
      "aria-label": "Search skills",
      value: state.query.query,
      oninput: (e) => {
        state.query.query = e.target.value;
        loadCatalog(false);
      },
    });
    const filters = el(
      "div",
      { class: "filters" },
      search,
      select("Source", "source", Object.entries(f.sources).map(([k, n]) => [k, k + " (" + n + ")"])),
      select("Root", "root", f.roots.map((r) => [r.path, r.kind + " " + r.label + " (" + r.skills + ")"])),
      select("Client", "client", f.clients.map((c) => [c.id, c.title])),
      select("Status", "status", Object.entries(f.statuses).filter(([, n]) => n > 0).map(([k, n]) => [k, k + " (" + n + ")"])),
    );
    frame(filters, el("p", { class: "summary", id: "summary", "aria-live": "polite" }, "Loading…"), el("div", { id: "rows" }), el("div", { class: "more", id: "more" }));
    loadCatalog(false);
  }

  async function loadCatalog(more) {
    const seq = ++state.seq;
    state.loading = true;
    const args = { offset: more ? state.rows.length : 0, limit: PAGE };
    for (const [k, v] of Object.entries(state.query)) if (v) args[k] = v;
    let page;
    try {
      page = await call("app_catalog", args);
    } catch (error) {
      return failure(error);
    }
    if (seq !== state.seq || state.view !== "catalog" || state.skill) return;
    state.rows = more ? state.rows.concat(page.rows) : page.rows;
    state.matched = page.matched;
    drawRows(more ? page.rows : null);
    state.loading = false;
  }

  function drawRows(appended) {
    const summary = document.getElementById("summary");
    if (!summary) return;
    summary.textContent = state.matched + " of " + (state.overview.facets.total) + " skills" + (state.matched > state.rows.length ? " · showing " + state.rows.length : "");
    const rowOf = (r) =>
      el(
        "tr",
        { "data-id": r.id },
        el("td", { class: "name" }, el("button", { class: "link", onclick: () => openSkill(r.id) }, r.name)),
        el("td", { class: "desc" }, r.description),
        el("td", { class: "prov", title: where(r) }, el("span", { class: "kind" }, r.provenance.kind), " ", el("span", { class: "root mono" }, r.root_label)),
        el("td", null, badge(r.status), r.reason ? el("div", { class: "reason" }, r.reason) : null),
        el("td", { class: "clients" }, seenDots(r.clients)),
      );
    const host = document.getElementById("rows");
    if (appended && host.querySelector("tbody")) {
      host.querySelector("tbody").append(...appended.map(rowOf));
    } else {
      host.replaceChildren(
        state.rows.length
          ? el(
              "table",
              { class: "catalog" },
              el("thead", null, el("tr", null, ["Skill", "Description", "Source", "Status", "Clients"].map((h) => el("th", { scope: "col" }, h)))),
              el("tbody", null, state.rows.map(rowOf)),
            )
          : el("p", null, "No skill matches."),
      );
    }
    const more = document.getElementById("more");
    more.replaceChildren();
    if (state.matched > state.rows.length) {
      const button = el("button", { onclick: () => loadCatalog(true) }, "Show " + Math.min(PAGE, state.matched - state.rows.length) + " more");
      more.append(button);
      const seen = new IntersectionObserver((entries) => {
        if (entries.some((e) => e.isIntersecting)) {
          seen.disconnect();
          loadCatalog(true);
        }
      });
      seen.observe(button);
    }
  }

  async function openSkill(id) {
    state.skill = id;
    state.notice = null;
    frame(el("p", { class: "loading" }, "Loading the skill…"));
    let skill;
    try {
      skill = await call("app_skill", { id });
    } catch (error) {
      return failure(error);
    }
    if (state.skill !== id) return;
    skillView(skill);
  }

  function skillView(s) {
    const back = el("button", { onclick: () => show(state.view) }, "← Back");
    const facts = el(
      "dl",
      { class: "facts" },
      el("dt", null, "Source"),
      el("dd", null, provenance(s.provenance)),
      el("dt", null, "Skills folder"),
      el("dd", null, el("span", { class: "mono" }, s.root_label), s.root_label !== s.root ? el("div", { class: "reason mono" }, s.root) : null),
      el("dt", null, "Folder"),
      el("dd", { class: "mono" }, s.dir),
      el("dt", null, "Clients that see it"),
      el("dd", null, seenDots(s.clients), " ", seenBy(s.clients)),
      el("dt", null, "Digest"),
      el("dd", { class: "mono" }, s.digest || "not available (too many files)"),
      el("dt", null, "Loads (" + SKILL_DAYS + " days)"),
      el("dd", { id: "skill-usage" }, el("span", { class: "loading" }, "…")),
    );
    const actions = el("div", { class: "actions" });
    if (canChange()) {
      if (s.status === "quarantined" && s.digest) {
        actions.append(
          el("button", { class: "primary", onclick: () => act("app_trust", { name: s.name, digest: s.digest }, "Trust " + s.name + " as reviewed?", () => openSkill(s.id)) }, "Trust this version"),
        );
      }
      if (s.provenance.kind === "project" || s.provenance.kind === "installed") {
        actions.append(el("button", { onclick: () => act("app_untrust", { name: s.name }, null, () => openSkill(s.id)) }, "Withdraw approval"));
      }
      if (s.status !== "quarantined" && s.status !== "broken") {
        const columns = state.overview.facets.clients.filter((c) => c.scope);
        const scope = el("select", { "aria-label": "For which clients" }, el("option", { value: "" }, "every client"), columns.map((c) => el("option", { value: c.scope }, c.title)));
        actions.append(
          el("label", null, "For ", scope),
          el("button", { onclick: () => act("app_disable", scoped(s.name, scope.value), null, () => openSkill(s.id)) }, "Disable"),
          el("button", { onclick: () => act("app_enable", scoped(s.name, scope.value), null, () => openSkill(s.id)) }, "Enable"),
        );
      }
    }
    const errors = s.findings.filter((f) => f.severity === "error").length;
    const sections = [
      el("section", { "aria-label": "SKILL.md" }, el("h3", null, "SKILL.md"), s.text !== null ? markdown(s.text) : el("p", { class: "notice error" }, s.text_error)),
      el(
        "section",
        { "aria-label": "Findings" },
        el("h3", null, "Findings (" + s.findings.length + (errors ? ", " + errors + (errors === 1 ? " error" : " errors") : "") + ")"),
        s.findings.length
          ? s.findings.map((f) =>
              el(
                "div",
                { class: "finding " + f.severity },
                el("div", null, el("strong", null, f.severity), " ", el("span", { class: "mono" }, f.code), " — ", el("span", { class: "mono" }, f.file + (f.line ? ":" + f.line : ""))),
                el("div", null, f.message),
                f.excerpt ? el("pre", null, f.excerpt) : null,
                el("div", { class: "reason" }, f.hint),
              ),
            )
          : el("p", null, "None."),
      ),
      el(
        "section",
        { "aria-label": "Files" },
        el("h3", null, "Files (" + s.files.length + ")"),
        s.files_truncated ? el("p", { class: "notice" }, "The listing stops short: " + s.files_truncated) : null,
        el(
          "table",
          { class: "files" },
          el("thead", null, el("tr", null, ["File", "Size", "Digest"].map((h) => el("th", { scope: "col" }, h)))),
          el(
            "tbody",
            null,
            s.files.map((file) =>
              el(
                "tr",
                null,
                el("td", null, el("button", { class: "link", onclick: () => openFile(s.id, file.path) }, file.path), file.script ? el("span", { class: "script" }, " · script") : null),
                el("td", null, size(file.size)),
                el("td", { class: "digest" }, file.digest || "—"),
              ),
            ),
          ),
        ),
        el("div", { id: "file" }),
      ),
    ];
    frame(
      back,
      el(
        "article",
        { class: "panel" },
        el("div", { class: "skill-head" }, el("h2", null, s.name), badge(s.status)),
        s.reason ? el("p", { class: "reason" }, s.reason) : null,
        el("p", null, s.description),
        facts,
        actions,
        sections,
      ),
    );
    skillUsage(s);
  }

  // A skill's loads over the last days and its last use, from the usage
  // report (the skill is its `where`: the folder the catalog's id names).
  async function skillUsage(s) {
    let report;
    let text;
    try {
      report = await call("app_usage", { days: SKILL_DAYS });
    } catch (error) {
      text = error.code === "forbidden" ? "shown to an admin only" : "unknown: " + error.message;
    }
    const host = document.getElementById("skill-usage");
    if (!host || state.skill !== s.id) return;
    if (report && !report.file) {
      text = "not recorded (no data folder)";
    } else if (report) {
      const used = report.skills.find((u) => u.where === s.dir);
      const loads = used ? used.loads : 0;
      text = loads ? count(loads, "load") + " · last used " + when(used.last_loaded) : "none in " + SKILL_DAYS + " days";
      if (!report.recording) text += " (usage is not recorded now: it is off by " + report.off_by + ")";
    }
    host.replaceChildren(text);
  }

  function scoped(name, client) {
    return client ? { name, client } : { name };
  }

  function size(bytes) {
    if (bytes < 1024) return bytes + " B";
    if (bytes < 1024 * 1024) return (bytes / 1024).toFixed(1) + " KiB";
    return (bytes / 1024 / 1024).toFixed(1) + " MiB";
  }

  async function openFile(id, path) {
    const host = document.getElementById("file");
    host.replaceChildren(el("p", { class: "loading" }, "Loading " + path + "…"));
    let file;
    try {
      file = await call("app_file", { id, path });
    } catch (error) {
      host.replaceChildren(el("p", { class: "notice error" }, error.message));
      return;
    }
    const title = el("h3", null, file.path);
    if (file.kind === "text") host.replaceChildren(title, el("pre", { class: "file", tabindex: "0" }, file.text));
    else if (file.kind === "image") host.replaceChildren(title, el("img", { src: "data:" + file.mime + ";base64," + file.data, alt: file.path, class: "shown-image" }));
    else host.replaceChildren(title, el("p", null, "A binary file (" + file.mime + ", " + size(file.size) + "): not shown."));
    host.scrollIntoView({ block: "nearest" });
  }

  // A question answered on the page itself: a host's sandbox may not allow
  // the browser's own dialogs.
  function ask(question, where) {
    return new Promise((resolve) => {
      const done = (answer) => {
        box.remove();
        resolve(answer);
      };
      const yes = el("button", { class: "primary", onclick: () => done(true) }, "Yes");
      const box = el("div", { class: "notice", role: "alertdialog", "aria-label": question }, question, " ", yes, " ", el("button", { onclick: () => done(false) }, "Cancel"));
      const actions = root().querySelector(".actions");
      if (where) where.replaceChildren(box);
      else if (actions) actions.after(box);
      else root().prepend(box);
      yes.focus();
    });
  }

  async function act(tool, args, question, then) {
    if (question && !(await ask(question))) return;
    try {
      const done = await change(tool, args);
      state.overview = await call("app_overview", {});
      if (then) await then();
      say("ok", describe(tool, done));
    } catch (error) {
      failure(error);
    }
  }

  function describe(tool, done) {
    switch (tool) {
      case "app_disable":
      case "app_enable": {
        const scope = done.client ? "for " + done.client : "for every client";
        const verb = tool === "app_disable" ? "Disabled" : "Enabled";
        return done.changed ? verb + " " + done.name + " " + scope + " (" + done.file + ")." : "Nothing changed: " + done.name + " was already " + (tool === "app_disable" ? "disabled" : "enabled") + " " + scope + ".";
      }
      case "app_trust":
        return "Approved " + done.name + " (" + done.digest + "); recorded in " + done.file + ".";
      case "app_untrust":
        return "Withdrew " + done.removed + " approval(s) of " + done.name + ".";
      default:
        return "Done.";
    }
  }

  // ---- Sources: add (plan → install), update (report → apply), remove ----
  // A fetch can take a while: the page says what it is doing and for how
  // long, and keeps the reviewed plan's id and digest for the install.

  async function sourcesView() {
    frame(el("p", { class: "loading" }, "Loading the sources…"));
    let data;
    try {
      data = await call("app_sources", {});
    } catch (error) {
      return failure(error);
    }
    if (state.view !== "sources" || state.skill) return;
    const actions = canChange();
    const table = data.sources.length
      ? el(
          "table",
          { class: "sources" },
          el("thead", null, el("tr", null, ["Source", "Commit", "Updated", "Skills", actions ? "" : null].filter((h) => h !== null).map((h) => el("th", { scope: "col" }, h)))),
          el(
            "tbody",
            null,
            data.sources.map((s) =>
              el(
                "tr",
                { "data-source": s.id },
                el("td", { class: "name" }, s.id, el("div", { class: "reason mono" }, s.url + (s.path ? " (" + s.path + ")" : "") + (s.ref ? " @ " + s.ref : ""))),
                el("td", { class: "mono", title: s.version }, shortVersion(s.version)),
                el("td", null, s.updated),
                el("td", null, s.skills.map((k) => k.name).join(", ")),
                actions
                  ? el(
                      "td",
                      { class: "row-actions" },
                      el("button", { onclick: () => checkUpdate(s.id) }, "Check for updates"),
                      " ",
                      el("button", { class: "danger", onclick: () => removeSource(s) }, "Remove"),
                    )
                  : null,
              ),
            ),
          ),
        )
      : el("p", null, "No sources are installed.");
    frame(
      el("h2", null, "Sources"),
      el("p", { class: "summary" }, "Skills installed from git repositories and published indexes, pinned in " + (data.lock || "sources.lock") + "."),
      actions ? addForm() : el("p", { class: "summary" }, "Read only. To add, update or remove a source: ", el("code", null, "skillserve add URL"), ", ", el("code", null, "skillserve update"), ", ", el("code", null, "skillserve remove ID"), "."),
      el("div", { id: "review" }),
      table,
    );
  }

  function shortVersion(version) {
    return version.startsWith("sha256:") ? version.slice(0, 19) + "…" : version.slice(0, 12);
  }

  function addForm() {
    const source = el("input", { type: "text", name: "source", required: true, "aria-label": "Source to add", placeholder: "owner/repo, a git URL, a local checkout, or https://host", autocomplete: "off", spellcheck: "false" });
    const field = (name, label, hint) => el("label", { class: "field" }, label, el("input", { type: "text", name, placeholder: hint, autocomplete: "off", spellcheck: "false" }));
    const form = el(
      "form",
      {
        class: "add panel",
        onsubmit: (e) => {
          e.preventDefault();
          const values = Object.fromEntries(new FormData(form).entries());
          const args = { source: values.source.trim() };
          if (values.id && values.id.trim()) args.id = values.id.trim();
          if (values.ref && values.ref.trim()) args.ref = values.ref.trim();
          if (values.path && values.path.trim()) args.path = values.path.trim();
          const skills = (values.skills || "").split(/[\s,]+/).filter(Boolean);
          if (skills.length) args.skills = skills;
          reviewAdd(args);
        },
      },
      el("h3", null, "Add a source"),
      el("div", { class: "add-row" }, source, el("button", { class: "primary", type: "submit" }, "Review")),
      el(
        "details",
        null,
        el("summary", null, "Options"),
        el("div", { class: "fields" }, field("id", "Id", "from the URL"), field("ref", "Branch, tag or commit", "the default branch"), field("path", "Folder", "the whole repository"), field("skills", "Only these skills", "every skill")),
      ),
      el("p", { class: "summary" }, "Nothing is installed until you have reviewed the plan."),
    );
    return form;
  }

  // Runs `work` while showing what it does and for how long.
  async function withProgress(text, work) {
    // What the last action said is not about this one.
    state.notice = null;
    const old = root().querySelector(".notice");
    if (old) old.remove();
    const host = document.getElementById("review");
    const started = Date.now();
    const label = el("span", null, text);
    const clock = el("span", { class: "elapsed" }, "");
    const box = el("div", { class: "progress", role: "status", "aria-live": "polite" }, el("span", { class: "spinner", "aria-hidden": "true" }), label, " ", clock);
    if (host) host.replaceChildren(box);
    const timer = setInterval(() => {
      clock.textContent = Math.round((Date.now() - started) / 1000) + " s";
    }, 1000);
    // One action at a time: the buttons wait for this one.
    const paused = [...document.querySelectorAll("main button:not([disabled])")];
    paused.forEach((b) => (b.disabled = true));
    try {
      return await work();
    } finally {
      clearInterval(timer);
      box.remove();
      paused.forEach((b) => (b.disabled = false));
    }
  }

  async function reviewAdd(args) {
    state.notice = null;
    let answer;
    try {
      answer = await withProgress("Fetching " + args.source + " and scanning its skills…", () => change("app_add", args));
    } catch (error) {
      return failure(error);
    }
    if (state.view !== "sources" || state.skill) return;
    showPlan(answer);
  }

  function findingsOf(findings) {
    return findings.length
      ? el(
          "ul",
          { class: "plan-findings" },
          findings.map((f) => el("li", { class: "finding " + f.severity }, el("strong", null, f.severity), " ", el("span", { class: "mono" }, f.code), " ", el("span", { class: "mono" }, f.place), ": ", f.message)),
        )
      : null;
  }

  function filesNote(skill) {
    const scripts = skill.files.filter((f) => f.script).map((f) => f.path);
    return [
      skill.files.length + (skill.files.length === 1 ? " file, " : " files, ") + size(skill.size),
      scripts.length ? el("span", { class: "script" }, " · " + scripts.length + (scripts.length === 1 ? " script: " : " scripts: ") + scripts.join(", ")) : " · no scripts",
    ];
  }

  // The risky rule: error-level security findings need a second yes.
  function riskyGate(names, verb, button) {
    if (!names.length) return null;
    const box = el("input", {
      type: "checkbox",
      onchange: (e) => {
        button.disabled = !e.target.checked;
      },
    });
    button.disabled = true;
    return el("label", { class: "risky" }, box, " " + verb + " anyway: I have read the error-level security findings of " + names.join(", ") + ".");
  }

  function showPlan(answer) {
    const plan = answer.add;
    const host = document.getElementById("review");
    const where = (s) => (s.path === "" && plan.kind === "git" ? "the repository itself" : s.path);
    const install = el("button", { class: "primary", onclick: () => installPlan(answer) }, "Install " + plan.skills.length + (plan.skills.length === 1 ? " skill" : " skills"));
    const gate = riskyGate(plan.risky, "Install", install);
    host.replaceChildren(
      el(
        "section",
        { class: "panel plan", "aria-label": "Plan" },
        el("h3", null, "Plan: " + plan.skills.length + (plan.skills.length === 1 ? " skill" : " skills") + " to install as source '" + plan.id + "'"),
        el(
          "p",
          { class: "summary" },
          plan.url + (plan.subdir ? " (" + plan.subdir + ")" : "") + " · " + (plan.kind === "git" ? (plan.reference || "the default branch") + ", commit " : "index ") + shortVersion(plan.version),
        ),
        el(
          "ul",
          { class: "plan-skills" },
          plan.skills.map((s) =>
            el(
              "li",
              { class: s.risky ? "risky-skill" : null, "data-skill": s.name },
              el("div", null, el("strong", null, s.name), s.risky ? el("span", { class: "badge quarantined" }, "security errors") : null, " ", el("span", { class: "desc" }, s.description)),
              el("div", { class: "reason" }, where(s), " · ", filesNote(s)),
              findingsOf(s.findings),
            ),
          ),
        ),
        plan.skipped.length ? el("div", null, el("h3", null, "Not installed"), el("ul", null, plan.skipped.map((s) => el("li", null, el("span", { class: "mono" }, s.place), ": ", s.reason)))) : null,
        plan.notes.length ? el("ul", { class: "reason" }, plan.notes.map((n) => el("li", null, n))) : null,
        gate,
        el("div", { class: "actions" }, install, el("button", { onclick: () => host.replaceChildren() }, "Cancel")),
      ),
    );
    host.scrollIntoView({ block: "nearest" });
  }

  async function installPlan(answer) {
    const gate = document.querySelector(".plan .risky input");
    const args = { plan: answer.plan, digest: answer.add.digest };
    if (gate && gate.checked) args.allow_risky = true;
    let done;
    try {
      done = await withProgress("Installing…", () => change("app_install", args));
      state.overview = await call("app_overview", {});
    } catch (error) {
      return failure(error);
    }
    await sourcesView();
    say("ok", "Installed " + done.skills.length + (done.skills.length === 1 ? " skill" : " skills") + " (" + done.skills.join(", ") + ") from " + done.source + " as source '" + done.id + "'.");
  }

  async function checkUpdate(id) {
    state.notice = null;
    let answer;
    try {
      answer = await withProgress("Fetching source '" + id + "' again…", () => change("app_update", { id }));
    } catch (error) {
      return failure(error);
    }
    if (state.view !== "sources" || state.skill) return;
    showUpdate(answer);
  }

  function sideBySide(diff) {
    const cells = (line, side, kind) =>
      line
        ? [el("td", { class: "num" }, String(line.number)), el("td", { class: "text " + kind + "-" + side }, line.text)]
        : [el("td", { class: "num" }), el("td", { class: "text empty" })];
    const body = [];
    diff.hunks.forEach((hunk, i) => {
      if (i > 0) body.push(el("tr", { class: "gap" }, el("td", { colspan: "4" }, "⋯")));
      for (const row of hunk.rows) body.push(el("tr", { class: row.kind }, cells(row.before, "before", row.kind), cells(row.after, "after", row.kind)));
    });
    return el(
      "div",
      { class: "diff-wrap" },
      el(
        "table",
        { class: "diff", "aria-label": diff.file + ", before and after" },
        el("colgroup", null, el("col", { class: "num" }), el("col"), el("col", { class: "num" }), el("col")),
        el("thead", null, el("tr", null, el("th", { colspan: "2", scope: "col" }, diff.file + " installed"), el("th", { colspan: "2", scope: "col" }, diff.file + " upstream"))),
        el("tbody", null, body),
      ),
      diff.more_rows ? el("p", { class: "summary" }, "… and " + diff.more_rows + " more rows.") : null,
    );
  }

  function showUpdate(answer) {
    const report = answer.update;
    const host = document.getElementById("review");
    const head = el("h3", null, "Source '" + report.id + "': " + shortVersion(report.from) + (report.has_changes ? " → " + shortVersion(report.to) : ""));
    if (!answer.plan) {
      host.replaceChildren(el("section", { class: "panel update", "aria-label": "Update" }, head, el("p", null, "Up to date: nothing changed upstream for its skills.")));
      return;
    }
    const changed = report.changes.filter((c) => c.status !== "unchanged").length;
    const apply = el("button", { class: "primary", onclick: () => applyUpdate(answer) }, "Apply the update");
    const gate = riskyGate(report.risky, "Update", apply);
    const item = (c) => {
      const parts = [el("div", null, el("span", { class: "badge change-" + c.status }, c.status), " ", el("strong", null, c.name))];
      if (c.status === "new") parts.push(el("div", { class: "desc" }, c.skill.description), el("div", { class: "reason" }, filesNote(c.skill)), findingsOf(c.skill.findings));
      if (c.status === "gone") parts.push(el("div", { class: "reason" }, "No longer upstream: it will be removed."));
      if (c.status === "changed") {
        if (c.store_damaged) parts.push(el("div", { class: "reason" }, "The store's copy was changed or is missing: it is installed again."));
        const files = [];
        for (const [word, list] of [["added", c.added], ["removed", c.removed], ["changed", c.changed]]) for (const p of list) files.push(el("li", null, word + " ", el("span", { class: "mono" }, p)));
        if (files.length) parts.push(el("ul", { class: "files-changed" }, files));
        if (c.scripts.length) parts.push(el("div", { class: "notice scripts-changed", role: "note" }, "Scripts changed: " + c.scripts.join(", ") + " — review them before installing."));
        if (c.skill_md) parts.push(sideBySide(c.skill_md));
        parts.push(findingsOf(c.skill.findings));
      }
      return el("li", { "data-skill": c.name, class: "change " + c.status }, parts);
    };
    host.replaceChildren(
      el(
        "section",
        { class: "panel update", "aria-label": "Update" },
        head,
        el("p", { class: "summary" }, changed + (changed === 1 ? " skill" : " skills") + " changed, new or gone; nothing is installed until you apply it."),
        el("ul", { class: "plan-skills" }, report.changes.map(item)),
        gate,
        el("div", { class: "actions" }, apply, el("button", { onclick: () => host.replaceChildren() }, "Cancel")),
      ),
    );
    host.scrollIntoView({ block: "nearest" });
  }

  async function applyUpdate(answer) {
    const gate = document.querySelector(".update .risky input");
    const args = { plan: answer.plan, digest: answer.update.digest };
    if (gate && gate.checked) args.allow_risky = true;
    let done;
    try {
      done = await withProgress("Installing the update…", () => change("app_apply", args));
      state.overview = await call("app_overview", {});
    } catch (error) {
      return failure(error);
    }
    await sourcesView();
    const one = done.updated[0];
    say("ok", one ? "Updated source '" + one.id + "' to " + shortVersion(one.to) + "." : "Nothing was updated.");
  }

  async function removeSource(source) {
    const names = source.skills.map((k) => k.name);
    const question = "Remove source '" + source.id + "' and its " + names.length + (names.length === 1 ? " skill" : " skills") + (names.length ? " (" + names.join(", ") + ")" : "") + "?";
    if (!(await ask(question, document.getElementById("review")))) return;
    let done;
    try {
      done = await change("app_remove", { id: source.id });
      state.overview = await call("app_overview", {});
    } catch (error) {
      return failure(error);
    }
    await sourcesView();
    say("ok", "Removed source '" + done.id + "' (" + done.skills.length + (done.skills.length === 1 ? " skill" : " skills") + ").");
  }

  async function quarantineView() {
    frame(el("p", { class: "loading" }, "Loading the quarantine…"));
    let page;
    try {
      page = await call("app_catalog", { status: "quarantined", limit: 500 });
    } catch (error) {
      return failure(error);
    }
    if (state.view !== "quarantine") return;
    frame(
      el("h2", null, "Quarantined skills (" + page.matched + ")"),
      el("p", { class: "summary" }, "Skills from folders that are not your own, held back because the security scan found errors. Review each one; trusting approves it exactly as it is now."),
      page.rows.length
        ? el(
            "ul",
            null,
            page.rows.map((r) =>
              el("li", null, el("button", { class: "link", onclick: () => openSkill(r.id) }, r.name), " — ", provenance(r.provenance), el("div", { class: "reason" }, r.reason)),
            ),
          )
        : el("p", null, "Nothing is quarantined."),
    );
  }

  async function clientsView() {
    frame(
      el("h2", null, "Who sees what"),
      el(
        "div",
        { class: "filters" },
        el("input", {
          type: "search",
          placeholder: "Search skills",
          "aria-label": "Search skills",
          value: state.query.query,
          oninput: (e) => {
            state.query.query = e.target.value;
            loadMatrix();
          },
        }),
      ),
      el("div", { id: "matrix" }, el("p", { class: "loading" }, "Loading…")),
    );
    loadMatrix();
  }

  async function loadMatrix() {
    const seq = ++state.seq;
    let m;
    try {
      m = await call("app_clients", { query: state.query.query, limit: 50 });
    } catch (error) {
      return failure(error);
    }
    if (seq !== state.seq || state.view !== "clients" || state.skill) return;
    const host = document.getElementById("matrix");
    if (!host) return;
    const cell = (row, c, index) => {
      const column = m.clients[index];
      const label = (c.shown ? "shown to " : "not shown to ") + column.title + (c.reason ? ": " + c.reason : "");
      const toggle = canChange() && row.status !== "quarantined" && row.status !== "broken"
        ? () => act(c.shown ? "app_disable" : "app_enable", scoped(row.name, column.scope), null, loadMatrix)
        : null;
      return el("td", { class: "cell" }, el("button", { class: c.shown ? "shown" : "not", title: label, "aria-label": row.name + ": " + label, disabled: !toggle, onclick: toggle }, c.shown ? "✓" : "·"));
    };
    host.replaceChildren(
      el("p", { class: "summary" }, m.clients.map((c, i) => c.title + ": " + m.shown[i]).join(" · ")),
      el(
        "table",
        { class: "matrix" },
        el("thead", null, el("tr", null, el("th", { scope: "col" }, "Skill"), m.clients.map((c) => el("th", { scope: "col", class: "client", title: c.title }, c.title)))),
        el("tbody", null, m.rows.map((row) => el("tr", null, el("td", { class: "name" }, el("button", { class: "link", onclick: () => openSkill(row.id) }, row.name)), row.cells.map((c, i) => cell(row, c, i))))),
      ),
      m.matched > m.rows.length ? el("p", { class: "summary" }, "Showing " + m.rows.length + " of " + m.matched + ": search to narrow.") : "",
    );
  }

  // ---- Usage: which skills are used, and which are not ----
  // The report of `skillserve stats --json` (app_usage). Over HTTP only an
  // admin may read it: it says which clients use what.

  function count(n, word) {
    return n + " " + word + (n === 1 ? "" : "s");
  }

  // "2026-11-28T09:12:44Z" as "2026-11-28 09:12 UTC".
  function when(stamp) {
    return typeof stamp === "string" ? stamp.replace("T", " ").replace(/:\d\dZ$/, " UTC") : "—";
  }

  // A server's sentence with `code` in it, as text and code elements.
  function codeSpans(text) {
    return String(text)
      .split("`")
      .map((part, i) => (i % 2 ? el("code", null, part) : part));
  }

  function clientName(name) {
    return name === "" ? "(no name)" : name;
  }

  // Loads per day as a row of bars, oldest first; the numbers on hover.
  function sparkline(daily, to) {
    const top = Math.max(1, ...daily);
    const title = "Loads per day, " + daily.length + " days to " + to + ": " + daily.join(", ");
    const bars = daily.map((n) => {
      const bar = el("span", { class: n ? "bar" : "bar zero" });
      // Through the CSSOM: the page's CSP allows no style attribute.
      if (n) bar.style.height = Math.max(12, Math.round((n / top) * 100)) + "%";
      return bar;
    });
    return el("span", { class: "spark", title, role: "img", "aria-label": title }, bars);
  }

  function usageView() {
    const days = el(
      "select",
      {
        "aria-label": "Days",
        "data-usage": "days",
        onchange: (e) => {
          state.usage.days = Number(e.target.value);
          loadUsage();
        },
      },
      [7, 30, 90].map((d) => el("option", { value: String(d), selected: state.usage.days === d }, "last " + d + " days")),
    );
    const client = el(
      "select",
      {
        "aria-label": "Client",
        "data-usage": "client",
        onchange: (e) => {
          state.usage.client = e.target.value;
          loadUsage();
        },
      },
      el("option", { value: "" }, "Client: all"),
      state.usage.clients.map((c) => el("option", { value: c, selected: state.usage.client === c }, c)),
    );
    frame(el("h2", null, "Usage"), el("div", { class: "filters" }, days, client), el("div", { id: "usage", "aria-live": "polite" }, el("p", { class: "loading" }, "Loading…")));
    loadUsage();
  }

  async function loadUsage() {
    const seq = ++state.seq;
    const args = { days: state.usage.days };
    // A client's own name, not a glob: characters a glob reads are escaped
    // by matching them as themselves (`?` matches any one).
    if (state.usage.client) args.client = state.usage.client.replace(/[*]/g, "?");
    let report;
    try {
      report = await call("app_usage", args);
    } catch (error) {
      if (error.code === "unauthorized") return failure(error);
      if (seq !== state.seq || state.view !== "usage" || state.skill) return;
      const host = document.getElementById("usage");
      if (!host) return;
      if (error.code === "forbidden") {
        host.replaceChildren(
          el(
            "p",
            { class: "notice" },
            "Which clients use which skills is shown to an admin only. Open this page with an admin token (",
            el("code", null, "skillserve token new LABEL --admin"),
            ") or run ",
            el("code", null, "skillserve ui"),
            ", or run ",
            el("code", null, "skillserve stats"),
            " on the server.",
          ),
        );
        return;
      }
      // Said where the report would be (an unreadable usage file, say).
      const message = error.message || String(error);
      host.replaceChildren(el("p", { class: "notice error", role: "alert" }, message.charAt(0).toUpperCase() + message.slice(1)));
      return;
    }
    if (seq !== state.seq || state.view !== "usage" || state.skill) return;
    if (!state.usage.client && report.clients.length) {
      // A client that gave no name cannot be asked for alone.
      const names = report.clients.map((c) => c.client).filter((c) => c !== "");
      if (names.join("\n") !== state.usage.clients.join("\n")) {
        state.usage.clients = names;
        const select = root().querySelector("select[data-usage=client]");
        if (select) select.replaceChildren(el("option", { value: "" }, "Client: all"), names.map((c) => el("option", { value: c }, c)));
      }
    }
    drawUsage(report);
  }

  function drawUsage(r) {
    const host = document.getElementById("usage");
    if (!host) return;
    const loads = r.skills.reduce((sum, s) => sum + s.loads, 0);
    const served = r.sources.reduce((sum, s) => sum + s.skills, 0);
    const parts = [];
    if (!r.file) {
      parts.push(el("div", { class: "notice warn", role: "status" }, el("strong", null, "Usage is not recorded: "), "there is no data folder (HOME is not set)."));
    } else if (!r.recording) {
      parts.push(
        el(
          "div",
          { class: "notice warn", role: "status" },
          el("strong", null, "Usage is not recorded: "),
          "it is turned off (" + r.off_by + "). To record which skills are loaded, ",
          codeSpans(r.turn_on),
          ".",
          r.skills.length ? " Below are the uses recorded before." : " Nothing was recorded before either.",
        ),
      );
    }
    parts.push(
      el(
        "p",
        { class: "summary" },
        count(loads, "load") + " of " + count(r.skills.length, "skill") + " over the last " + count(r.days, "day") + " (" + r.from + " to " + r.to + ", UTC)" + (r.client ? " by " + clientName(state.usage.client) : "") + ".",
      ),
    );
    if (!r.recording && !r.skills.length) {
      host.replaceChildren(...parts);
      return;
    }
    const most = r.skills.length
      ? el(
          "table",
          { class: "usage used" },
          el("thead", null, el("tr", null, ["Skill", "Loads", "Last used", "Per day", "Clients", "Source"].map((h) => el("th", { scope: "col" }, h)))),
          paged(r.skills, (s) =>
            el(
              "tr",
              { "data-skill": s.name },
              el("td", { class: "name" }, s.where ? el("button", { class: "link", onclick: () => openSkill(s.where) }, s.name) : s.name),
              el("td", { class: "num loads", "data-label": "Loads" }, String(s.loads), surfacesNote(s)),
              el("td", { class: "when", "data-label": "Last used" }, when(s.last_loaded)),
              el("td", { "data-label": "Per day" }, sparkline(s.daily, r.to)),
              el("td", { class: "reason", "data-label": "Clients" }, Object.entries(s.clients).map(([c, n]) => clientName(c) + " " + n).join(", ")),
              el("td", { class: "prov", title: s.where || s.root || s.source, "data-label": "Source" }, el("span", { class: "kind" }, s.source), s.where ? null : el("div", { class: "reason" }, "not served now")),
            ),
          ),
        )
      : el("p", null, "No skill was loaded in these days.");
    parts.push(el("section", { "aria-label": "Most used" }, el("h3", null, "Most used"), most));
    if (r.recording) {
      const unused = r.unused.length
        ? el(
            "table",
            { class: "usage unused" },
            el("thead", null, el("tr", null, ["Skill", "Source", "Where it lives", canChange() ? "" : null].filter((h) => h !== null).map((h) => el("th", { scope: "col" }, h)))),
            paged(r.unused, (u) =>
              el(
                "tr",
                { "data-skill": u.name },
                el("td", { class: "name" }, el("button", { class: "link", onclick: () => openSkill(u.where) }, u.name)),
                el("td", { class: "prov", "data-label": "Source" }, el("span", { class: "kind" }, u.source)),
                el("td", { class: "where mono", "data-label": "Where" }, u.where),
                canChange() ? el("td", { class: "row-actions" }, disableButton(u)) : null,
              ),
            ),
          )
        : el("p", null, "Every skill served was loaded in these days.");
      parts.push(
        el(
          "section",
          { "aria-label": "Not used" },
          el("h3", null, "Not used in " + count(r.days, "day") + " (" + r.unused.length + " of " + count(served, "skill") + " served)"),
          r.client ? el("p", { class: "summary" }, "Not loaded by " + clientName(state.usage.client) + "; other clients may use them.") : null,
          unused,
        ),
      );
    }
    const small = (label, heads, rows) =>
      el(
        "section",
        { "aria-label": label, class: "usage-part" },
        el("h3", null, label),
        rows.length ? el("table", { class: "usage small" }, el("thead", null, el("tr", null, heads.map((h) => el("th", { scope: "col" }, h)))), el("tbody", null, rows)) : el("p", null, "None."),
      );
    parts.push(
      el(
        "div",
        { class: "usage-parts" },
        small("By client", ["Client", "Loads", "Skills"], r.clients.map((c) => el("tr", { "data-client": c.client }, el("td", { class: "name" }, clientName(c.client)), el("td", { class: "num", "data-label": "Loads" }, String(c.loads)), el("td", { class: "num", "data-label": "Skills" }, String(c.skills))))),
        small("By source", ["Source", "Loads", "Used of served"], r.sources.map((s) => el("tr", { "data-source": s.source }, el("td", { class: "name" }, s.source), el("td", { class: "num", "data-label": "Loads" }, String(s.loads)), el("td", { class: "num", "data-label": "Used of served" }, s.used + " of " + s.skills)))),
      ),
    );
    host.replaceChildren(...parts);
  }

  // A table's body of `items`, PAGE rows at a time (thousands of skills may
  // be unused): a last row offers the next ones.
  function paged(items, rowOf) {
    const body = el("tbody");
    const more = (from) => {
      const shown = items.slice(from, from + PAGE).map(rowOf);
      const left = items.length - from - shown.length;
      if (left > 0) {
        const button = el(
          "button",
          {
            onclick: () => {
              row.remove();
              const first = more(from + PAGE);
              // The button is gone: the keyboard goes on at the first new row.
              const link = first && first.querySelector("button");
              if (link) link.focus();
            },
          },
          "Show " + Math.min(PAGE, left) + " more (" + left + " left)",
        );
        const row = el("tr", { class: "more-rows" }, el("td", { colspan: "6" }, button));
        shown.push(row);
      }
      body.append(...shown);
      return shown[0];
    };
    more(0);
    return body;
  }

  // Disable an unused skill for every client, after a question asked in
  // its row.
  function disableButton(u) {
    const question = el("div", { class: "ask" });
    const button = el(
      "button",
      {
        "aria-label": "Disable " + u.name + " for every client",
        onclick: async () => {
          if (await ask("Disable " + u.name + " for every client?", question)) act("app_disable", { name: u.name }, null, loadUsage);
        },
      },
      "Disable",
    );
    return [button, question];
  }

  // "tool 3, prompt 1; 2 files read", under a skill's count.
  function surfacesNote(s) {
    const names = { tool: "tool", prompt: "prompt", skills_get: "skills/get", resource: "resource" };
    const by = Object.entries(s.surfaces).filter(([, n]) => n > 0).map(([k, n]) => names[k] + " " + n);
    const reads = Object.values(s.files).reduce((sum, n) => sum + n, 0);
    if (reads) by.push(count(reads, "read") + " of " + count(Object.keys(s.files).length, "file"));
    return by.length ? el("div", { class: "reason" }, by.join(", ")) : null;
  }

  // ---- Start ----
  function login(why) {
    const input = el("input", { type: "password", autocomplete: "off", "aria-label": "Token", placeholder: "Bearer token" });
    const form = el(
      "form",
      {
        class: "login panel",
        onsubmit: (e) => {
          e.preventDefault();
          sessionStorage.setItem(TOKEN_KEY, input.value.trim());
          start();
        },
      },
      el("h1", null, "skillserve"),
      el("p", null, why || "This server needs a token (`skillserve token new LABEL`)."),
      input,
      el("button", { class: "primary", type: "submit" }, "Open"),
    );
    render(form);
    input.focus();
  }

  function signOut() {
    sessionStorage.removeItem(TOKEN_KEY);
    login("Token forgotten.");
  }

  async function start() {
    try {
      state.overview = await call("app_overview", {});
    } catch (error) {
      if (error.code === "unauthorized" && !state.inHost) return login();
      render(el("div", { class: "notice error", role: "alert" }, "The skills manager cannot start: " + error.message));
      return;
    }
    show(state.view);
  }

  document.addEventListener("keydown", (e) => {
    if (e.key === "/" && document.activeElement.tagName !== "INPUT") {
      const search = root().querySelector('input[type="search"]');
      if (search) {
        e.preventDefault();
        search.focus();
      }
    } else if (e.key === "Escape" && state.skill) {
      show(state.view);
    }
  });

  async function boot() {
    if (state.inHost) {
      try {
        const result = await hostRequest("ui/initialize", {
          protocolVersion: APPS_PROTOCOL,
          appInfo: { name: "skillserve", version: "1" },
          appCapabilities: { availableDisplayModes: ["inline", "fullscreen"] },
        });
        applyHostContext((result && result.hostContext) || {});
        hostNotify("ui/notifications/initialized", {});
        watchSize();
      } catch (error) {
        render(el("div", { class: "notice error", role: "alert" }, "The host did not start the app: " + error.message));
        return;
      }
    } else {
      // `skillserve ui` hands the token over in the fragment: keep it in
      // this tab only, and take it out of the address bar.
      const fragment = new URLSearchParams(location.hash.slice(1));
      if (fragment.get("token")) {
        sessionStorage.setItem(TOKEN_KEY, fragment.get("token"));
        history.replaceState(null, "", location.pathname + location.search);
      }
      // A sign of life while the page is open: `skillserve ui` stops a
      // minute after the last one.
      setInterval(() => {
        if (token()) httpCall("tools/list", {}).catch(() => {});
      }, 20000);
    }
    start();
  }

  // Exposed for tests and benchmarks: the page's own state, read-only use.
  window.skillserveApp = { state, markdown };
  boot();
})();
