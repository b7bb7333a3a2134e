// The memory browser (docs/browser.md): a page per hash route, each drawn from the daemon's
// REST API (POST /api/<operation>). Memory text only ever goes into the page as text
// (textContent), never as markup; nothing is fetched from anywhere but this server.
"use strict";

const main = () => document.getElementById("main");
let lastRecall = null; // the last search's reply (its trace is drawn at #/trace)

// --- elements -------------------------------------------------------------------------------

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function svg(tag, attrs, ...children) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function table(headers, rows) {
  return el("table", {},
    el("thead", {}, el("tr", {}, headers.map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, rows.map((row) => el("tr", {}, row.map((cell) =>
      cell instanceof Node ? el("td", {}, cell) : el("td", {}, cell ?? "")))))); // eslint-disable-line
}

function show(...nodes) {
  const root = main();
  root.replaceChildren(...nodes);
}

// A page says it has drawn its data (or its error): data-ready on <main>.
function ready() {
  main().dataset.ready = "yes";
}

function failure(err) {
  return el("p", { class: "error", role: "alert" }, err.message || String(err));
}

function memoryLink(id) {
  return el("a", { href: `#/memory/${encodeURIComponent(id)}`, class: "mono" }, id);
}

// --- the API --------------------------------------------------------------------------------

function csrfToken() {
  const found = document.cookie.split("; ").find((c) => c.startsWith("chitta_csrf="));
  return found ? decodeURIComponent(found.slice("chitta_csrf=".length)) : "";
}

async function api(name, params) {
  const response = await fetch(`/api/${name}`, {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": csrfToken() },
    body: JSON.stringify(params || {}),
  });
  if (response.status === 401) {
    window.location.assign("/login");
    throw new Error("not logged in");
  }
  const data = await response.json();
  if (!data.ok) throw new Error(`${data.error}: ${data.message}`);
  return data;
}

// --- search ---------------------------------------------------------------------------------

const LANES = ["sem", "kw", "tag", "ctx", "common", "graph", "hdc", "code", "corr", "theme", "ep"];

function searchForm(onSearch) {
  const query = el("input", { type: "search", id: "q", name: "query", required: true,
    "aria-label": "What to recall", placeholder: "What do you want to know?" });
  const strategy = el("select", { id: "strategy" },
    ["hybrid", "semantic", "keyword", "field"].map((s) => el("option", { value: s }, s)));
  const fusion = el("select", { id: "fusion" },
    el("option", { value: "" }, "the strategy's"), el("option", { value: "rsf" }, "rsf"),
    el("option", { value: "rrf" }, "rrf"));
  const limit = el("input", { type: "number", id: "limit", min: 1, max: 200, value: 10 });
  const realm = el("input", { type: "text", id: "realm", placeholder: "default" });
  const cue = el("input", { type: "text", id: "time_cue", class: "mono",
    placeholder: '{"after": "2026-11-01", "confidence": "sure"}' });
  const now = el("input", { type: "text", id: "now", placeholder: "2026-12-06" });
  const flags = {
    cross_realm: el("input", { type: "checkbox", id: "cross_realm" }),
    include_superseded: el("input", { type: "checkbox", id: "include_superseded" }),
    rerank: el("input", { type: "checkbox", id: "rerank", checked: true }),
  };
  const ablate = LANES.map((lane) => el("input", { type: "checkbox", value: lane,
    id: `ablate-${lane}` }));
  const form = el("form", { class: "search", role: "search" },
    el("div", { class: "query" }, query, el("button", { type: "submit" }, "Recall")),
    el("div", {}, el("label", { for: "strategy" }, "Strategy"), strategy),
    el("div", {}, el("label", { for: "fusion" }, "Fusion"), fusion),
    el("div", {}, el("label", { for: "limit" }, "Limit"), limit),
    el("div", {}, el("label", { for: "realm" }, "Realm"), realm),
    el("div", {}, el("label", { for: "time_cue" }, "Time cue (JSON, docs/time-cue.md)"), cue),
    el("div", {}, el("label", { for: "now" }, "Asked at (if not now)"), now),
    el("div", {}, Object.entries(flags).map(([name, box]) =>
      el("label", { class: "check", for: box.id }, box, name.replace("_", " ")))),
    el("fieldset", {}, el("legend", {}, "Lanes switched off"),
      ablate.map((box) => el("label", { class: "check", for: box.id }, box, box.value))));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const params = { query: query.value, strategy: strategy.value,
      limit: Number(limit.value) || 10, trace: true, rerank: flags.rerank.checked,
      cross_realm: flags.cross_realm.checked,
      include_superseded: flags.include_superseded.checked };
    if (fusion.value) params.fusion = fusion.value;
    if (realm.value.trim()) params.realm = realm.value.trim();
    const off = ablate.filter((b) => b.checked).map((b) => b.value);
    if (off.length) params.ablate = off;
    if (now.value.trim()) params.now = now.value.trim();
    if (cue.value.trim()) {
      try {
        params.time_cue = JSON.parse(cue.value);
      } catch (err) {
        onSearch(null, new Error(`the time cue is not JSON: ${err.message}`));
        return;
      }
    }
    onSearch(params);
  });
  return form;
}

function band(confidence) {
  if (!confidence) return el("p", { class: "note" }, "No band: this strategy embeds nothing.");
  const words = (confidence.words || "").replace(/^[A-Z]+ \(\d+%\):\s*/, "");
  return el("p", {}, el("span", { class: `band ${confidence.band}`, id: "band" },
    `${confidence.band} (${confidence.percent}%)`), " ", words);
}

function laneBars(lanes, scale) {
  const rows = [];
  for (const [name, lane] of Object.entries(lanes || {})) {
    const bar = el("div", { class: `bar ${name}`, role: "img",
      "aria-label": `${name} contributed ${lane.contribution}` });
    bar.style.width = `${Math.max(1, (100 * lane.contribution) / (scale || 1))}%`;
    rows.push(el("span", {}, `${name} #${lane.rank}`), el("div", {}, bar),
      el("span", { class: "mono" }, lane.contribution.toFixed(3)));
  }
  return el("div", { class: "bars" }, rows);
}

function hitItem(hit, scale) {
  return el("li", { class: "hit", "data-id": hit.id },
    el("div", { class: "hit-text" }, hit.content),
    el("div", { class: "meta" }, `${hit.kind} · `, memoryLink(hit.id),
      ` · realm ${hit.realm} · score ${Number(hit.final ?? hit.score).toFixed(3)}`,
      hit.newer ? " · a newer memory may replace it" : "",
      hit.superseded_by ? " · superseded" : ""),
    laneBars(hit.lanes, scale),
    el("details", {}, el("summary", {}, "Factors"),
      table(["factor", "multiplier"], Object.entries(hit.factors || {}).map(([k, v]) => [k, v]))));
}

function hitsList(reply) {
  const scale = Math.max(0.0001, ...reply.hits.flatMap((h) =>
    Object.values(h.lanes || {}).map((l) => l.contribution)));
  return el("ol", { class: "hits", id: "hits" }, reply.hits.map((h) => hitItem(h, scale)));
}

async function searchPage() {
  const results = el("section", { id: "results", "aria-label": "Results" });
  const run = async (params, invalid) => {
    if (invalid) {
      results.replaceChildren(failure(invalid));
      return;
    }
    results.replaceChildren(el("p", { class: "note" }, "Recalling…"));
    try {
      const reply = await api("recall", params);
      lastRecall = reply;
      results.replaceChildren(band(reply.confidence),
        el("p", { class: "meta" }, `${reply.hits.length} hits of ${reply.candidates} candidates, `,
          `lanes ${reply.lanes_run.join(", ")}, ${Number(reply.timing_ms.total).toFixed(1)} ms · `,
          el("a", { href: "#/trace", id: "trace-link" }, "the trace")),
        reply.hits.length ? hitsList(reply) : el("p", {}, "Nothing found."));
    } catch (err) {
      results.replaceChildren(failure(err));
    }
  };
  show(el("h1", {}, "Search"), searchForm(run), results);
  if (lastRecall) {
    document.getElementById("q").value = lastRecall.query;
  }
  document.getElementById("q").focus();
  ready();
}

// --- the trace ------------------------------------------------------------------------------

function traceBars(pairs, label) {
  const top = Math.max(0.0001, ...pairs.map(([, v]) => v));
  return el("div", { class: "bars", "aria-label": label }, pairs.flatMap(([name, value]) => {
    const bar = el("div", { class: `bar ${name}` });
    bar.style.width = `${Math.max(1, (100 * value) / top)}%`;
    return [el("span", { class: "mono" }, name), el("div", {}, bar),
      el("span", { class: "mono" }, Number(value).toFixed(3))];
  }));
}

function tracePage() {
  if (!lastRecall || !lastRecall.trace) {
    show(el("h1", {}, "Trace"), el("p", {}, "Search first: the trace of the last recall is drawn here. ",
      el("a", { href: "#/search" }, "Search")));
    ready();
    return;
  }
  const t = lastRecall.trace;
  const short = (id) => memoryLink(id);
  const sections = [el("h1", {}, "Trace of the last recall"),
    el("p", { class: "meta" }, `strategy ${t.request.strategy}, fusion ${t.request.fusion}, `,
      `depth ${t.request.depth}, realm ${t.scope.realm}`)];
  sections.push(el("section", { id: "stage-arms" }, el("h2", {}, "1. Arms: what each lane found"),
    Object.entries(t.arms || {}).map(([lane, found]) => el("div", {},
      el("h3", {}, `${lane} (weight ${t.request.lanes[lane] ?? "—"}): ${found.length}`),
      table(["rank", "memory", "raw"], found.slice(0, 20).map((f) => [f.rank, short(f.ref), f.raw]))))));
  sections.push(el("section", { id: "stage-fusion" }, el("h2", {}, "2. Fusion"),
    (t.fusion || []).slice(0, 20).map((f) => el("div", {}, el("p", { class: "meta" }, short(f.ref),
      ` fused ${f.score}`), traceBars(Object.entries(f.contributions || {}), "contributions")))));
  sections.push(el("section", { id: "stage-scoring" }, el("h2", {}, "3. Scoring"),
    table(["memory", "final", "factors"], (t.scoring || []).slice(0, 20).map((s) => [short(s.ref),
      s.final, Object.entries(s.factors || {}).map(([k, v]) => `${k} ${v}`).join(", ")]))));
  const gate = t.gate || {};
  sections.push(el("section", { id: "stage-gate" }, el("h2", {}, "4. Gate"),
    el("p", {}, `band ${gate.band}, signal ${gate.signal} against threshold ${gate.threshold} `,
      `(calibration ${gate.calibration})`),
    table(["memory", "decision", "reason"], (gate.decisions || []).map((d) =>
      [short(d.ref), d.decision, d.reason]))));
  const order = t.order || {};
  sections.push(el("section", { id: "stage-order" }, el("h2", {}, "5. Order"),
    el("p", {}, `returned ${(order.returned || []).length}, cut ${(order.cut || []).length}`),
    el("ol", {}, (order.returned || []).map((id) => el("li", {}, short(id))))));
  if ((t.reservation || []).length || lastRecall.time_cue) {
    sections.push(el("section", { id: "stage-cue" }, el("h2", {}, "6. Time cue: moves and seats"),
      el("pre", { class: "mono" }, JSON.stringify({ reservation: t.reservation,
        time_cue: lastRecall.time_cue }, null, 1))));
  }
  const coverage = t.coverage || { parts: [] };
  sections.push(el("section", { id: "stage-coverage" }, el("h2", {}, "Coverage of the query"),
    table(["part", "kind", "covered by"], coverage.parts.map((p, i) => [
      lastRecall.query.slice(p.span[0], p.span[1]), p.kind,
      el("span", {}, ((coverage.covered_by || [])[i] || []).map((id) => [short(id), " "]))]))));
  sections.push(el("section", { id: "stage-timing" }, el("h2", {}, "Timing (ms)"),
    traceBars(Object.entries(t.timing_ms || {}).filter(([k]) => k !== "total"), "timing")));
  show(...sections);
  ready();
}

// --- one memory -----------------------------------------------------------------------------

function confirmed(question) {
  return window.confirm(question);
}

async function memoryPage(id) {
  show(el("p", { class: "note" }, "Loading…"));
  let memory, chain;
  try {
    memory = (await api("get_memory", { id })).memory;
    chain = await api("provenance", { id });
  } catch (err) {
    show(el("h1", {}, "Memory"), failure(err));
    ready();
    return;
  }
  const act = (label, question, run, danger) => el("button", { type: "button",
    class: danger ? "danger" : null, id: `act-${label.toLowerCase().replace(/\s+/g, "-")}`,
    onclick: async () => {
      if (!confirmed(question)) return;
      try { await run(); memoryPage(id); } catch (err) { main().prepend(failure(err)); }
    } }, label);
  const forgotten = Boolean(memory.deleted_at);
  const actions = el("div", { class: "actions" },
    act("Strengthen", "Record evidence for this memory?", () => api("strengthen", { id })),
    act("Weaken", "Record evidence against this memory?", () => api("weaken", { id })),
    forgotten
      ? act("Restore", "Bring this memory back?", () => api("restore", { id }))
      : act("Forget", "Forget this memory? (Restore brings it back.)",
        () => api("forget", { id }), true));
  const newer = el("input", { type: "text", id: "supersede-by", "aria-label": "Id of the newer memory",
    placeholder: "id of the memory that replaces it" });
  const supersede = el("form", { class: "actions", id: "supersede" }, newer,
    el("button", { type: "submit" }, "Supersede"));
  supersede.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!newer.value.trim() || !confirmed(`Record that ${newer.value.trim()} replaces this memory?`)) return;
    try { await api("supersede", { old_id: id, new_id: newer.value.trim() }); memoryPage(id); }
    catch (err) { main().prepend(failure(err)); }
  });
  const kind = el("input", { type: "text", id: "edit-kind", value: memory.kind, "aria-label": "Kind" });
  const tags = el("input", { type: "text", id: "edit-tags", value: memory.tags.join(", "),
    "aria-label": "Tags, comma-separated" });
  const edit = el("form", { class: "actions", id: "edit" }, el("label", { for: "edit-kind" }, "Kind"),
    kind, el("label", { for: "edit-tags" }, "Tags"), tags, el("button", { type: "submit" }, "Save"));
  edit.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!confirmed("Save the kind and tags?")) return;
    const list = tags.value.split(",").map((t) => t.trim()).filter(Boolean);
    try { await api("edit_memory", { id, kind: kind.value.trim(), tags: list }); memoryPage(id); }
    catch (err) { main().prepend(failure(err)); }
  });
  const c = memory.confidence || {};
  const fields = [["id", memory.id], ["kind", memory.kind], ["realm", memory.realm],
    ["tags", memory.tags.join(", ")], ["created", memory.created_at],
    ["event time", memory.event_time], ["forgotten", memory.deleted_at || "no"],
    ["strength / tier", `${memory.strength} / ${memory.tier}`],
    ["confidence", `μ ${c.mu}, σ² ${c.sigma_sq}, ${c.n} pieces of evidence (strengthen, weaken, `
      + "repeats)"], ["accessed", `${memory.access_count} times, last ${memory.last_accessed || "never"}`],
    ["supersedes", memory.supersedes ? memoryLink(memory.supersedes) : "—"],
    ["superseded by", memory.superseded_by ? memoryLink(memory.superseded_by) : "—"]];
  const linkRow = (l) => [memoryLink(l.id), l.role || l.kind, l.at, l.excerpt];
  show(el("h1", {}, "Memory"),
    el("p", { class: "hit-text", id: "content" }, memory.content),
    actions,
    table(["field", "value"], fields),
    el("h2", {}, "Provenance"),
    el("p", {}, `Source: ${chain.source_kind}${chain.source_name ? ` (${chain.source_name})` : ""}, `,
      `trust ${chain.trust}`, chain.via ? `, made by ${chain.via}` : "",
      `; ${chain.independent_sources} independent source(s).`),
    chain.turns.length ? table(["drawn from", "who", "when", "text"], chain.turns.map(linkRow)) : "",
    chain.replaced.length ? table(["replaced", "kind", "when", "text"], chain.replaced.map(linkRow)) : "",
    chain.replications.length ? table(["also stored by", "when"],
      chain.replications.map((r) => [r.source, r.at])) : "",
    (chain.symbols || []).length ? table(["code it names", "where", "since it was linked"],
      chain.symbols.map((s) => [s.qualified, s.path || "gone", s.changed ? "changed" : "same"])) : "",
    el("h2", {}, "Correct it"), edit, supersede);
  ready();
}

// --- status, calibration, relations, code ---------------------------------------------------

async function statusPage() {
  try {
    const s = await api("memory_status", {});
    const daemon = s.daemon || {};
    const upkeep = (daemon.upkeep || {}).tasks || {};
    show(el("h1", {}, "Status"),
      table(["what", "value"], [["store", s.store], ["schema", s.schema_version],
        ["size", `${(s.size_bytes / 1048576).toFixed(2)} MiB`],
        ["model", `${s.model.name} (${s.model.dim} dimensions)`],
        ["memories", `${s.memories} (${s.forgotten} forgotten)`], ["edges", s.triplets],
        ["episodes", s.episodes], ["calibration", `${s.calibration.source}, threshold `
          + s.calibration.threshold], ["spool", `${s.spool.waiting} waiting`],
        ["daemon", daemon.pid ? `pid ${daemon.pid}, HTTP ${daemon.http || "off"}` : "—"]]),
      el("h2", {}, "Realms"), table(["realm", "memories"], Object.entries(s.per_realm || {})),
      el("h2", {}, "Kinds"), table(["kind", "memories"], Object.entries(s.per_kind || {})),
      el("h2", {}, "Upkeep"), table(["task", "every (s)", "steps", "last sweep", "error"],
        Object.entries(upkeep).map(([name, t]) => [name, t.interval_s, t.steps,
          t.last ? `${t.last.seen} seen, ${t.last.changed} changed` : "—", t.error || ""])));
  } catch (err) {
    show(el("h1", {}, "Status"), failure(err));
  }
  ready();
}

const COLOURS = ["#1f5fbf", "#8a4b00", "#0a6b2e"];

function axes(W, H, L, B, T, R, xLabel, yLabel) {
  const x = (v) => L + v * (W - L - R);
  const y = (v) => H - B - v * (H - B - T);
  const parts = [
    svg("line", { x1: x(0), y1: y(0), x2: x(1), y2: y(0), class: "axis" }),
    svg("line", { x1: x(0), y1: y(0), x2: x(0), y2: y(1), class: "axis" }),
    svg("text", { x: x(0.5), y: H - 8, "text-anchor": "middle" }, xLabel),
    svg("text", { x: 12, y: y(0.5), transform: `rotate(-90 12 ${y(0.5)})`, "text-anchor": "middle" },
      yLabel),
  ];
  for (const t of [0, 0.5, 1]) {
    parts.push(svg("text", { x: x(t), y: y(0) + 16, "text-anchor": "middle" }, t));
    parts.push(svg("text", { x: x(0) - 6, y: y(t) + 4, "text-anchor": "end" }, t));
  }
  return { x, y, parts };
}

function curvePlot(series, threshold) {
  const W = 520, H = 320;
  const { x, y, parts } = axes(W, H, 48, 40, 12, 12, "raw maximum relevance (cosine)",
    "calibrated chance");
  parts.push(svg("line", { x1: x(0), y1: y(threshold), x2: x(1), y2: y(threshold),
    class: "axis", "stroke-dasharray": "5 4" }));
  parts.push(svg("text", { x: x(0) + 6, y: y(threshold) - 6 }, `KNOWN at ${threshold} and above`));
  series.forEach(([name, points], i) => {
    const d = points.map(([r, p], j) => `${j ? "L" : "M"}${x(r).toFixed(1)},${y(p).toFixed(1)}`).join("");
    parts.push(svg("path", { d, class: "curve", stroke: COLOURS[i % 3] }));
    parts.push(svg("line", { x1: W - 150, y1: 22 + 16 * i, x2: W - 130, y2: 22 + 16 * i,
      stroke: COLOURS[i % 3], "stroke-width": 3 }));
    parts.push(svg("text", { x: W - 124, y: 26 + 16 * i }, `realm of ${name}`));
  });
  return svg("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img", id: "calibration-curve",
    "aria-label": "The calibrated chance of each raw relevance, and the band's threshold" }, parts);
}

function reliabilityPlot(bins) {
  const W = 360, H = 320;
  const { x, y, parts } = axes(W, H, 48, 40, 12, 12, "predicted (the chance shown)",
    "observed (hit@3)");
  parts.push(svg("line", { x1: x(0), y1: y(0), x2: x(1), y2: y(1), class: "axis",
    "stroke-dasharray": "2 4" }));
  for (const b of bins) {
    parts.push(svg("circle", { cx: x(b.predicted), cy: y(b.observed),
      r: 3 + Math.min(6, Math.log2(1 + b.count)), fill: "#8a1f11" },
      svg("title", {}, `${b.count} queries: predicted ${b.predicted}, observed ${b.observed}`)));
  }
  return svg("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img", id: "reliability",
    "aria-label": "Reliability diagram: predicted against observed, per bin" }, parts);
}

async function calibrationPage() {
  try {
    const data = await api("calibrate", { show: true });
    const fit = data.calibration;
    const bins = data.reliability;
    show(el("h1", {}, "Calibration"),
      el("p", {}, `Fit in use: ${fit.source}` + (fit.fitted_at ? `, ${fit.fitted_at}` : "") +
        `; KNOWN when the calibrated chance is at least ${fit.threshold}.`),
      curvePlot(Object.entries(data.curve), fit.threshold),
      el("h2", {}, "Reliability"),
      bins ? el("div", {}, reliabilityPlot(bins), table(["bin", "queries", "predicted", "observed"],
        bins.map((b) => [`${b.low}–${b.high}`, b.count, b.predicted, b.observed])))
        : el("p", { class: "note" }, "No reliability diagram: the default fit is in use. "
          + "`chitta calibrate GOLDEN` fits this store and keeps its diagram."));
  } catch (err) {
    show(el("h1", {}, "Calibration"), failure(err));
  }
  ready();
}

async function graphPage() {
  const realmBox = el("input", { type: "text", id: "graph-realm", placeholder: "default",
    "aria-label": "Realm" });
  const out = el("section", { id: "graph" });
  const draw = async () => {
    const realm = realmBox.value.trim() || undefined;
    try {
      const edges = (await api("find_triplets", { realm, limit: 200 })).triplets || [];
      const aliases = (await api("list_aliases", { realm })).aliases || [];
      const names = [...new Set(edges.flatMap((e) => [e.subject, e.object])
        .concat(aliases.flatMap((a) => [a.alias, a.canonical_key])))];
      const W = 640, H = 420, cx = W / 2, cy = H / 2, radius = Math.min(W, H) / 2 - 60;
      const at = new Map(names.map((n, i) => [n, [cx + radius * Math.cos((2 * Math.PI * i) / Math.max(1, names.length)),
        cy + radius * Math.sin((2 * Math.PI * i) / Math.max(1, names.length))]]));
      const shapes = [svg("defs", {}, svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 16,
        refY: 5, markerWidth: 8, markerHeight: 8, orient: "auto-start-reverse" },
      svg("path", { d: "M0,0 L10,5 L0,10 z", fill: "#666" })))];
      for (const e of edges) {
        const [x1, y1] = at.get(e.subject), [x2, y2] = at.get(e.object);
        shapes.push(svg("line", { x1, y1, x2, y2, class: "edge", "marker-end": "url(#arrow)" }));
        shapes.push(svg("text", { x: (x1 + x2) / 2, y: (y1 + y2) / 2 - 4, "text-anchor": "middle" }, e.predicate));
      }
      for (const a of aliases) {
        const [x1, y1] = at.get(a.alias), [x2, y2] = at.get(a.canonical_key);
        shapes.push(svg("line", { x1, y1, x2, y2, class: "alias" }));
      }
      for (const [name, [x, y]] of at) {
        shapes.push(svg("circle", { cx: x, cy: y, r: 6, class: "node" }));
        shapes.push(svg("text", { x, y: y + 18, "text-anchor": "middle" }, name));
      }
      out.replaceChildren(
        names.length ? svg("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img",
          "aria-label": "The realm's entities, their edges (solid) and aliases (dashed)" }, shapes)
          : el("p", {}, "No edges or aliases in this realm."),
        el("h2", {}, "Edges"), table(["subject", "predicate", "object", "since"],
          edges.map((e) => [e.subject, e.predicate, e.object, e.valid_from])),
        el("h2", {}, "Aliases"), table(["alias", "names"], aliases.map((a) => [a.alias, a.canonical_key])));
    } catch (err) {
      out.replaceChildren(failure(err));
    }
    ready();
  };
  const form = el("form", { class: "actions" }, el("label", { for: "graph-realm" }, "Realm"), realmBox,
    el("button", { type: "submit" }, "Show"));
  form.addEventListener("submit", (event) => { event.preventDefault(); draw(); });
  show(el("h1", {}, "Relations"), form, out);
  draw();
}

async function codePage() {
  const name = el("input", { type: "search", id: "symbol", "aria-label": "Symbol name",
    placeholder: "a symbol: Cart.total" });
  const out = el("section", { id: "code" });
  const form = el("form", { class: "actions" }, name, el("button", { type: "submit" }, "Find"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const found = (await api("find_symbol", { name: name.value })).symbols || [];
      const callers = found.length ? await api("symbol_callers", { symbol: found[0].id }) : null;
      out.replaceChildren(table(["symbol", "kind", "where", "signature"], found.map((s) =>
        [s.qualified, s.kind, `${s.path}:${s.start_line}`, s.signature || ""])),
        callers ? el("h2", {}, `Callers of ${found[0].qualified}`) : "",
        callers ? el("pre", { class: "mono" }, JSON.stringify(callers.callers ?? callers, null, 1)) : "");
    } catch (err) {
      out.replaceChildren(failure(err));
    }
  });
  let outline;
  try {
    outline = (await api("code_outline", {})).outline;
  } catch (err) {
    outline = null;
  }
  show(el("h1", {}, "Code"), outline ? el("pre", { class: "mono", id: "outline" }, outline)
    : el("p", { class: "note" }, "No code indexed in this realm: `chitta code index PATH`."), form, out);
  ready();
}

// --- routing --------------------------------------------------------------------------------

const ROUTES = [
  [/^#\/memory\/(.+)$/, (m) => memoryPage(decodeURIComponent(m[1]))],
  [/^#\/trace$/, tracePage],
  [/^#\/status$/, statusPage],
  [/^#\/calibration$/, calibrationPage],
  [/^#\/graph$/, graphPage],
  [/^#\/code$/, codePage],
  [/^.*$/, searchPage],
];

function route() {
  const hash = window.location.hash || "#/search";
  delete main().dataset.ready;
  for (const a of document.querySelectorAll("header nav a")) {
    if (a.getAttribute("href") === hash.split("/").slice(0, 2).join("/")) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  for (const [pattern, page] of ROUTES) {
    const match = hash.match(pattern);
    if (match) {
      page(match);
      return;
    }
  }
}

document.getElementById("logout").addEventListener("click", async () => {
  await fetch("/logout", { method: "POST", credentials: "same-origin",
    headers: { "X-CSRF-Token": csrfToken() } });
  window.location.assign("/login");
});
window.addEventListener("hashchange", route);
route();
