// capstan's web view: the list of Clusters and a page per Cluster, kept up to date by the server's
// events (EventSource). Plain JavaScript with no build step; every text from the cluster is set with
// textContent, never parsed as HTML.

const main = document.getElementById("main");
const crumbs = document.getElementById("crumbs");
const live = document.getElementById("live");

// Set once per load: a test tells a live update from a reload by it.
window.capstanLoadID = Math.random().toString(36).slice(2);

// ---- small DOM helpers ----

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(e.dataset, v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// fill replaces the children of an element, skipping null and false and flattening arrays.
function fill(e, ...children) {
  e.replaceChildren();
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// age prints a duration as kubectl does: 45s, 3m, 5h, 2d3h.
function age(iso) {
  if (!iso) return "";
  const s = Math.max(0, Math.floor((Date.now() - new Date(iso).getTime()) / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return `${m}m${s % 60 ? (s % 60) + "s" : ""}`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h${m % 60 && h < 8 ? (m % 60) + "m" : ""}`;
  const d = Math.floor(h / 24);
  return d < 8 ? `${d}d${h % 24 ? (h % 24) + "h" : ""}` : `${d}d`;
}

function statusTone(status) {
  return status === "True" ? "good" : status === "False" ? "bad" : status ? "warning" : "none";
}

function setLive(state, text) {
  live.className = `live ${state}`;
  live.textContent = text;
}

// ---- routing: one page, paths /, /clusters/<namespace>/<name> ----

let current = null; // the view shown: {stop()}

function route() {
  if (current) current.stop();
  main.replaceChildren();
  crumbs.replaceChildren();
  const m = location.pathname.match(/^\/clusters\/([^/]+)\/([^/]+)\/?$/);
  current = m ? clusterView(decodeURIComponent(m[1]), decodeURIComponent(m[2])) : listView();
}

function navigate(url) {
  history.pushState(null, "", url);
  route();
}

document.addEventListener("click", (e) => {
  const a = e.target.closest("a[data-nav]");
  if (!a || e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
  e.preventDefault();
  navigate(a.getAttribute("href"));
});
window.addEventListener("popstate", route);

// stream opens an EventSource and keeps the live indicator in step with it.
function stream(url, handlers) {
  const es = new EventSource(url);
  es.onopen = () => setLive("on", "live");
  es.onerror = () => setLive("off", "reconnecting");
  for (const [event, fn] of Object.entries(handlers)) {
    es.addEventListener(event, (e) => fn(JSON.parse(e.data)));
  }
  return es;
}

// ---- the list of Clusters ----

const listColumns = [
  { key: "namespace", title: "Namespace" },
  { key: "name", title: "Name" },
  { key: "class", title: "Class" },
  { key: "version", title: "Version" },
  { key: "phase", title: "Phase" },
  { key: "controlPlane", title: "Control plane" },
  { key: "workers", title: "Workers" },
  { key: "available", title: "Available" },
  { key: "created", title: "Age" },
];

// matches says whether a row passes the filter: every word must match; "key:value" matches one column
// (ns, namespace, name, class, version, phase, available), a plain word any of them.
function matches(row, words) {
  const fields = {
    namespace: row.namespace, name: row.name, class: row.class, version: row.version,
    phase: row.phase, available: row.available,
  };
  fields.ns = fields.namespace;
  return words.every((w) => {
    const i = w.indexOf(":");
    if (i > 0 && w.slice(0, i) in fields) {
      return (fields[w.slice(0, i)] || "").toLowerCase().includes(w.slice(i + 1));
    }
    return Object.values(fields).some((v) => (v || "").toLowerCase().includes(w));
  });
}

function listView() {
  document.title = "Clusters · capstan";
  crumbs.append(el("span", { text: "Clusters" }));
  const params = new URLSearchParams(location.search);
  const rows = new Map();
  let sort = { key: "namespace", dir: 1 };
  let pending = false;
  let notice = "";

  const filter = el("input", {
    id: "filter", type: "search", placeholder: "Filter: words, or ns:, class:, version:, phase:, available:false",
    value: params.get("q") || "", autocomplete: "off", spellcheck: "false",
  });
  const count = el("span", { id: "count", class: "count" });
  const head = el("tr");
  const body = el("tbody", { id: "clusters" });
  const empty = el("p", { class: "empty", text: "" });
  main.append(el("section", { class: "list" },
    el("div", { class: "toolbar" }, filter, count),
    el("table", { class: "grid" }, el("thead", {}, head), body), empty));

  for (const c of listColumns) {
    head.append(el("th", {
      class: "sortable", dataset: { key: c.key }, text: c.title,
      onclick: () => {
        sort = sort.key === c.key ? { key: c.key, dir: -sort.dir } : { key: c.key, dir: 1 };
        render();
      },
    }));
  }

  function render() {
    pending = false;
    const words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
    const shown = [...rows.values()].filter((r) => matches(r, words));
    const k = sort.key;
    shown.sort((a, b) => {
      const x = String(a[k] || ""), y = String(b[k] || "");
      return (x < y ? -1 : x > y ? 1 : 0) * (k === "created" ? -sort.dir : sort.dir) ||
        a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name);
    });
    for (const th of head.children) {
      th.classList.toggle("sorted", th.dataset.key === k);
      th.classList.toggle("desc", th.dataset.key === k && sort.dir < 0);
    }
    const frag = document.createDocumentFragment();
    for (const r of shown) frag.append(listRow(r));
    body.replaceChildren(frag);
    count.textContent = `${shown.length} of ${rows.size} Cluster${rows.size === 1 ? "" : "s"}`;
    empty.textContent = notice || rows.size === 0 ? notice || "No Cluster yet." : shown.length === 0 ? "No Cluster matches the filter." : "";
  }
  function schedule() {
    if (!pending) {
      pending = true;
      requestAnimationFrame(render);
    }
  }

  filter.addEventListener("input", () => {
    const p = new URLSearchParams(location.search);
    if (filter.value) p.set("q", filter.value); else p.delete("q");
    history.replaceState(null, "", `${location.pathname}${p.size ? "?" + p : ""}`);
    schedule();
  });

  const es = stream("/api/watch/clusters", {
    rows: (ev) => {
      if (ev.reset) rows.clear();
      notice = ev.notice || "";
      for (const r of ev.upsert) rows.set(`${r.namespace}/${r.name}`, r);
      for (const k of ev.delete) rows.delete(k);
      schedule();
    },
  });
  const ticker = setInterval(schedule, 30000); // ages
  filter.focus();
  return { stop: () => { es.close(); clearInterval(ticker); } };
}

function listRow(r) {
  const href = `/clusters/${encodeURIComponent(r.namespace)}/${encodeURIComponent(r.name)}`;
  return el("tr", { dataset: { cluster: `${r.namespace}/${r.name}` }, class: r.deleting ? "deleting" : "" },
    el("td", { text: r.namespace }),
    el("td", {}, el("a", { href, "data-nav": true, text: r.name }), r.deleting ? el("span", { class: "tag bad", text: "deleting" }) : null,
      r.paused ? el("span", { class: "tag warning", text: "paused" }) : null),
    el("td", { text: r.class || "—", class: r.class ? "" : "muted" }),
    el("td", { text: r.version }),
    el("td", { text: r.phase }),
    el("td", { class: r.controlPlane ? `tone-${r.controlPlaneReady ? "good" : "warning"}` : "muted", text: r.controlPlane || "—" }),
    el("td", { class: r.workers ? `tone-${r.workersReady ? "good" : "warning"}` : "muted", text: r.workers || "—" }),
    el("td", { class: "available" },
      el("span", { class: `dot tone-${statusTone(r.available)}` }),
      el("span", { text: r.available || "—", title: [r.availableReason, r.availableMessage].filter(Boolean).join(": ") })),
    el("td", { text: age(r.created), title: r.created }));
}

// ---- a Cluster's page ----

const options = [
  { key: "grouping", label: "Group Machines", def: true },
  { key: "machinesets", label: "MachineSets", def: false },
  { key: "templates", label: "Templates", def: false },
  { key: "echo", label: "Echo", def: false, title: "Show every Machine's infrastructure and bootstrap objects" },
  { key: "resourcesets", label: "ClusterResourceSets", def: false },
  { key: "v1beta1", label: "v1beta1 conditions", def: false },
];

function clusterView(namespace, name) {
  document.title = `${name} · capstan`;
  crumbs.append(el("a", { href: "/", "data-nav": true, text: "Clusters" }), el("span", { class: "sep", text: "/" }),
    el("span", { text: namespace }), el("span", { class: "sep", text: "/" }), el("strong", { text: name }));
  const base = `/api/clusters/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`;
  const params = new URLSearchParams(location.search);
  const opts = {};
  for (const o of options) opts[o.key] = params.has(o.key) ? params.get(o.key) === "1" : o.def;

  const open = new Set(); // keys of the objects whose details are open
  const groupsOpen = new Set(); // keys of the group rows that list their items
  const details = new Map(); // key -> {tab, data}
  let page = null;
  let es = null;

  const header = el("section", { class: "summary", id: "summary" });
  const optionBar = el("div", { class: "options" });
  const treeTable = el("table", { class: "tree grid", id: "tree" });
  const topology = el("section", { class: "panel", id: "topology" });
  const upgrade = el("section", { class: "panel", id: "upgrade" });
  const nodes = el("section", { class: "panel", id: "nodes" });
  const warnings = el("section", { class: "warnings", id: "warnings" });
  main.append(header, warnings, el("section", { class: "panel" }, el("h2", { text: "Tree" }), optionBar, treeTable), topology, upgrade, nodes);

  for (const o of options) {
    const box = el("input", { type: "checkbox", id: `opt-${o.key}`, checked: opts[o.key] });
    box.addEventListener("change", () => {
      opts[o.key] = box.checked;
      const p = new URLSearchParams();
      for (const x of options) if (opts[x.key] !== x.def) p.set(x.key, opts[x.key] ? "1" : "0");
      history.replaceState(null, "", `${location.pathname}${p.size ? "?" + p : ""}`);
      connect();
    });
    optionBar.append(el("label", { title: o.title || "" }, box, " ", o.label));
  }

  function query() {
    const p = new URLSearchParams();
    for (const o of options) p.set(o.key, opts[o.key] ? "1" : "0");
    return p;
  }

  function connect() {
    if (es) es.close();
    es = stream(`/api/watch/clusters/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}?${query()}`, {
      page: (p) => {
        if (p.gone) {
          page = null;
          header.replaceChildren(el("h1", { text: name }), el("p", { class: "empty", text: `Cluster ${namespace}/${name} does not exist (any more).` }));
          for (const s of [treeTable, topology, upgrade, nodes, warnings]) s.replaceChildren();
          return;
        }
        page = p;
        render();
        refreshDetails();
      },
    });
  }

  function render() {
    renderSummary(header, page.cluster);
    warnings.replaceChildren(...(page.warnings || []).map((w) => el("p", { class: "tag warning", text: w })));
    renderTree();
    renderTopology(topology, page.topology);
    renderUpgrade(upgrade, page.upgrade);
    renderNodes(nodes, page.nodes);
  }

  function renderTree() {
    const v1 = page.v1beta1;
    const cols = v1 ? ["Name", "Ready", "Severity", "Reason", "Since", "Message"]
      : ["Name", "Replicas", "Available", "Ready", "Up to date", "Status", "Reason", "Since", "Message"];
    const body = el("tbody");
    walk(page.tree, [], (n, more) => {
      body.append(treeRow(n, more, v1, cols.length));
      const k = nodeKey(n);
      if (n.items && groupsOpen.has(k)) body.append(groupItems(n, cols.length));
      if (!n.items && !n.virtual && open.has(k)) body.append(detailsRow(n.apiVersion, n.kind, n.name, cols.length));
      if (n.items) {
        for (const item of n.items) {
          const ik = nodeKey({ apiVersion: n.apiVersion, kind: n.kind, name: item });
          if (groupsOpen.has(k) && open.has(ik)) body.append(detailsRow(n.apiVersion, n.kind, item, cols.length));
        }
      }
    });
    treeTable.replaceChildren(el("thead", {}, el("tr", {}, cols.map((c) => el("th", { text: c })))), body);
  }

  function treeRow(n, more, v1, ncols) {
    let prefix = "";
    more.forEach((m, i) => {
      prefix += i === more.length - 1 ? (m ? "├─ " : "└─ ") : (m ? "│  " : "   ");
    });
    const k = nodeKey(n);
    const s = n.summary;
    const clickable = !n.virtual;
    const name = el("td", { class: "name" }, el("span", { class: "lines", text: prefix }),
      n.virtual ? el("span", { class: "virtual", text: n.metaName })
        : el("span", {},
          n.deleting ? el("span", { class: "tag bad", text: "deleting" }) : null,
          n.metaName ? el("span", { class: "meta", text: `${n.metaName} - ` }) : null,
          n.items ? el("span", { class: "group", text: `${n.items.length} ${n.kind}s…` })
            : el("span", {}, el("span", { class: "kind", text: `${n.kind}/` }), el("strong", { text: n.name })),
          n.attention ? el("span", { class: "attention", title: `${n.attention} condition(s) not in their normal state`, text: `⚑${n.attention}` }) : null));
    let cells;
    const msg = n.items ? `See ${n.items.slice(0, 2).join(", ")}${n.items.length > 2 ? ", ..." : ""}` : s?.message || "";
    if (v1) {
      cells = [name, el("td", { class: `tone-${n.tone}`, text: s?.status || "" }), el("td", { class: `tone-${n.tone}`, text: s?.severity || "" }),
        el("td", { text: s?.reason || "" }), el("td", { class: "since", text: age(s?.lastTransitionTime) }), el("td", { class: "message", text: msg })];
    } else {
      cells = [name, el("td", { class: "replicas num", text: n.replicas || "" }), el("td", { class: "num", text: n.available || "" }),
        el("td", { class: "num", text: n.ready || "" }), el("td", { class: "num", text: n.upToDate || "" }),
        el("td", { class: `status tone-${n.tone}`, text: s ? `${s.type}: ${s.status}` : "" }), el("td", { text: s?.reason || "" }),
        el("td", { class: "since", text: age(s?.lastTransitionTime) }), el("td", { class: "message", text: msg })];
    }
    const row = el("tr", {
      class: `node tone-row-${n.tone}${clickable ? " clickable" : ""}${open.has(k) || groupsOpen.has(k) ? " open" : ""}`,
      dataset: n.virtual ? { virtual: n.metaName } : { kind: n.kind, name: n.name, apiVersion: n.apiVersion, group: n.items ? "true" : "false" },
    }, cells);
    if (clickable) {
      row.addEventListener("click", () => {
        const set = n.items ? groupsOpen : open;
        if (set.has(k)) set.delete(k); else set.add(k);
        if (!n.items && open.has(k)) loadDetails(n.apiVersion, n.kind, n.name);
        renderTree();
      });
    }
    return row;
  }

  function groupItems(n, ncols) {
    return el("tr", { class: "items" }, el("td", { colspan: ncols },
      el("span", { class: "muted", text: `${n.kind}s in this state: ` }),
      n.items.map((item) => {
        const ik = nodeKey({ apiVersion: n.apiVersion, kind: n.kind, name: item });
        return el("button", {
          class: `item${open.has(ik) ? " open" : ""}`, dataset: { kind: n.kind, name: item }, text: item,
          onclick: () => {
            if (open.has(ik)) open.delete(ik); else { open.add(ik); loadDetails(n.apiVersion, n.kind, item); }
            renderTree();
          },
        });
      })));
  }

  function detailsRow(apiVersion, kind, objName, ncols) {
    const k = nodeKey({ apiVersion, kind, name: objName });
    const d = details.get(k) || { tab: "conditions" };
    const tabs = ["conditions", "events", "yaml"];
    const box = el("div", { class: "details", dataset: { key: k, kind, name: objName } });
    const bar = el("div", { class: "tabs" }, el("strong", { text: `${kind}/${objName}` }),
      tabs.map((t) => el("button", {
        class: `tab${d.tab === t ? " active" : ""}`, dataset: { tab: t }, text: t === "yaml" ? "YAML" : t[0].toUpperCase() + t.slice(1),
        onclick: (e) => { e.stopPropagation(); d.tab = t; details.set(k, d); renderTree(); },
      })));
    box.append(bar);
    if (d.error) box.append(el("p", { class: "tag bad", text: d.error }));
    else if (!d.data) box.append(el("p", { class: "muted", text: "Loading…" }));
    else if (d.tab === "conditions") box.append(conditionsTable(page.v1beta1 ? d.data.v1beta1Conditions : d.data.conditions, page.v1beta1));
    else if (d.tab === "events") box.append(eventsTable(d.data.events));
    else box.append(el("pre", { class: "yaml", text: d.data.yaml }));
    return el("tr", { class: "details-row" }, el("td", { colspan: ncols }, box));
  }

  async function loadDetails(apiVersion, kind, objName) {
    const k = nodeKey({ apiVersion, kind, name: objName });
    const d = details.get(k) || { tab: "conditions" };
    details.set(k, d);
    const p = new URLSearchParams({ apiVersion, kind, name: objName });
    try {
      const r = await fetch(`${base}/object?${p}`);
      if (!r.ok) throw new Error(`${r.status}: ${(await r.text()).trim()}`);
      d.data = await r.json();
      d.error = null;
    } catch (e) {
      d.error = String(e.message || e);
    }
    if (page && open.has(k)) renderTree();
  }

  let refreshTimer = null;
  function refreshDetails() {
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(() => {
      for (const k of open) {
        const [apiVersion, kind, objName] = k.split("|");
        loadDetails(apiVersion, kind, objName);
      }
    }, 250);
  }

  connect();
  const ticker = setInterval(() => page && render(), 15000); // ages
  return { stop: () => { if (es) es.close(); clearInterval(ticker); clearTimeout(refreshTimer); } };
}

function nodeKey(n) {
  return `${n.apiVersion}|${n.kind}|${n.name}`;
}

// walk visits the tree in print order with, for each level, whether more siblings follow.
function walk(n, more, fn) {
  fn(n, more);
  (n.children || []).forEach((c, i) => walk(c, [...more, i < n.children.length - 1], fn));
}

function renderSummary(box, c) {
  fill(box,
    el("h1", {}, c.name, c.deleting ? el("span", { class: "tag bad", text: "deleting" }) : null,
      c.paused ? el("span", { class: "tag warning", text: "paused" }) : null),
    el("dl", { class: "facts" },
      fact("Namespace", c.namespace), fact("Phase", c.phase), fact("Version", c.version || "—"),
      fact("Class", c.class || "—"), fact("Control plane", c.controlPlane || "—", c.controlPlane ? (c.controlPlaneReady ? "good" : "warning") : ""),
      fact("Workers", c.workers || "—", c.workers ? (c.workersReady ? "good" : "warning") : ""),
      fact("Available", c.available || "—", statusTone(c.available), [c.availableReason, c.availableMessage].filter(Boolean).join(": ")),
      fact("Age", age(c.created))));
}

function fact(label, value, tone, title) {
  return el("div", { class: "fact" }, el("dt", { text: label }), el("dd", { class: tone ? `tone-${tone}` : "", text: value, title }));
}

function conditionsTable(list, v1) {
  if (!list || list.length === 0) return el("p", { class: "muted", text: "No conditions." });
  const cols = v1 ? ["Type", "Status", "Severity", "Reason", "Since", "Message"] : ["Type", "Status", "Reason", "Since", "Message"];
  return el("table", { class: "grid conditions" }, el("thead", {}, el("tr", {}, cols.map((c) => el("th", { text: c })))),
    el("tbody", {}, list.map((c) => el("tr", { dataset: { condition: c.type } },
      el("td", { class: "ctype", text: c.type }), el("td", { class: `tone-${c.tone}`, text: c.status }),
      v1 ? el("td", { text: c.severity || "" }) : null,
      el("td", { text: c.reason || "" }), el("td", { class: "since", text: age(c.lastTransitionTime) }),
      el("td", { class: "message", text: c.message || "" })))));
}

function eventsTable(list) {
  if (!list || list.length === 0) return el("p", { class: "muted", text: "No events (Events expire after an hour)." });
  return el("table", { class: "grid events" },
    el("thead", {}, el("tr", {}, ["Type", "Reason", "Age", "Count", "From", "Message"].map((c) => el("th", { text: c })))),
    el("tbody", {}, list.map((e) => el("tr", {},
      el("td", { class: e.type === "Warning" ? "tone-warning" : "", text: e.type }), el("td", { text: e.reason }),
      el("td", { class: "since", text: age(e.last) }), el("td", { class: "num", text: e.count }), el("td", { text: e.source || "" }),
      el("td", { class: "message", text: e.message })))));
}

function renderTopology(box, t) {
  if (!t) {
    box.replaceChildren();
    box.hidden = true;
    return;
  }
  box.hidden = false;
  const r = t.reconciled;
  fill(box,
    el("h2", { text: "ClusterClass" }),
    el("dl", { class: "facts" },
      fact("Class", `${t.classNamespace}/${t.class}`), fact("Version", t.version),
      fact("Control plane replicas", t.controlPlaneReplicas ?? "—"),
      fact("MachineDeployments", (t.machineDeployments || []).map((m) => `${m.name} (${m.class}, ${m.replicas ?? "—"})`).join(", ") || "—"),
      r ? fact("TopologyReconciled", `${r.status}${r.reason ? " (" + r.reason + ")" : ""}`, r.tone, r.message) : null),
    r && r.message ? el("p", { class: "message", text: r.message }) : null,
    t.error ? el("p", { class: "tag bad", text: t.error }) : null,
    (t.classConditions || []).length ? el("details", {}, el("summary", { text: "Class conditions" }), conditionsTable(t.classConditions, false)) : null,
    el("h3", { text: "Variables" }),
    (t.variables || []).length === 0 ? el("p", { class: "muted", text: "The class defines no variables." }) :
      el("table", { class: "grid", id: "variables" },
        el("thead", {}, el("tr", {}, ["Name", "Value", "Default", "Type", "Required", "Description"].map((c) => el("th", { text: c })))),
        el("tbody", {}, t.variables.map((v) => el("tr", { dataset: { variable: v.name } },
          el("td", { class: "mono", text: v.name }), el("td", { class: "mono", text: v.value || "—" }),
          el("td", { class: "mono muted", text: v.default || "" }), el("td", { text: v.type || "" }),
          el("td", { text: v.required ? "yes" : "" }), el("td", { class: "message", text: v.description || "" }))))),
    el("h3", { text: "Patches" }),
    (t.patches || []).length === 0 ? el("p", { class: "muted", text: "The class has no patches." }) :
      el("table", { class: "grid", id: "patches" },
        el("thead", {}, el("tr", {}, ["Name", "Applied", "Kind", "enabledIf", "Description"].map((c) => el("th", { text: c })))),
        el("tbody", {}, t.patches.map((p) => el("tr", { dataset: { patch: p.name } },
          el("td", { class: "mono", text: p.name }),
          el("td", { class: p.enabled === undefined ? "muted" : `tone-${p.enabled ? "good" : "none"}`, text: p.enabled === undefined ? "?" : p.enabled ? "yes" : "no", title: p.note || "" }),
          el("td", { text: p.external ? "external" : "inline" }), el("td", { class: "mono", text: p.enabledIf || "" }),
          el("td", { class: "message", text: p.description || "" }))))));
}

function renderUpgrade(box, u) {
  const total = u.groups.reduce((n, g) => n + g.machines.length, 0);
  const at = u.groups.reduce((n, g) => n + g.atTarget, 0);
  fill(box, el("h2", { text: "Versions" }),
    el("p", {}, u.target ? `${at} of ${total} Machines at ${u.target}` : `${total} Machines`),
    ...u.groups.map((g) => el("div", { class: "vgroup", dataset: { group: `${g.kind}/${g.name}` } },
      el("h3", {}, `${g.kind === "Other" ? "Other Machines" : g.kind + " " + g.name}`,
        el("span", { class: "muted", text: ` ${g.version ? "→ " + g.version : ""}  ${u.target ? g.atTarget + "/" + g.machines.length + " at target" : ""}` })),
      el("div", { class: "bar" }, g.machines.map((m) => el("span", {
        class: `cell ${m.deleting ? "deleting" : m.version === u.target ? "at" : "behind"}`,
        title: `${m.name}: ${m.version || "?"}${m.nodeVersion ? ", kubelet " + m.nodeVersion : ""}, ${m.phase}${m.upToDate ? ", UpToDate " + m.upToDate : ""}${m.deleting ? ", deleting" : ""}`,
      }))),
      el("table", { class: "grid compact" },
        el("thead", {}, el("tr", {}, ["Machine", "Version", "Kubelet", "Phase", "Up to date", "Node"].map((c) => el("th", { text: c })))),
        el("tbody", {}, g.machines.map((m) => el("tr", { class: m.deleting ? "deleting" : "" },
          el("td", { class: "mono", text: m.name }),
          el("td", { class: m.version === u.target ? "tone-good" : "tone-warning", text: m.version || "—" }),
          el("td", { text: m.nodeVersion || "" }), el("td", { text: m.phase + (m.deleting ? " (deleting)" : "") }),
          el("td", { class: `tone-${statusTone(m.upToDate)}`, text: m.upToDate || "" }), el("td", { class: "mono", text: m.node || "" }))))))));
}

function renderNodes(box, n) {
  box.replaceChildren(el("h2", { text: "Nodes of the workload cluster" }));
  if (n.state !== "Watching") {
    box.append(el("p", { class: n.state === "Unavailable" ? "tag bad" : "muted", dataset: { state: n.state }, text: n.message || n.state }));
    return;
  }
  box.append(el("table", { class: "grid", id: "node-list" },
    el("thead", {}, el("tr", {}, ["Name", "Ready", "Roles", "Version", "Internal IP", "Machine", "Age"].map((c) => el("th", { text: c })))),
    el("tbody", {}, (n.items || []).map((x) => el("tr", { dataset: { node: x.name } },
      el("td", { class: "mono", text: x.name + (x.unschedulable ? " (cordoned)" : "") }),
      el("td", { class: `tone-${statusTone(x.ready)}`, text: x.ready, title: [x.readyReason, x.readyMessage].filter(Boolean).join(": ") }),
      el("td", { text: x.roles || "" }), el("td", { text: x.version || "" }), el("td", { class: "mono", text: x.internalIP || "" }),
      el("td", { class: "mono", text: x.machine || "" }), el("td", { text: age(x.created) }))))));
}

route();
