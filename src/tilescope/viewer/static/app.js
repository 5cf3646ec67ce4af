// tilescope view: the page. Plain JavaScript and 2-D canvas; no network beyond the server it came from
// (or none at all, in the self-contained HTML file). Data: one container per launch (viewer/pack.py).
(() => {
  "use strict";

  const V = window.tilescopeVendor || {};
  const FLAG = { READ: 1, WRITE: 2, MASKED: 4, OUTSIDE: 8, ATOMIC: 16, CONFLICT: 32, MULTIWRITE: 64, INSIDE: 128 };
  const CLASSES = ["read", "write", "masked", "outside"];
  const MODES = [
    ["program", "program (distinct colours)"], ["order", "program order"], ["access", "read / write"],
    ["writers", "writer programs"], ["readers", "reader programs"], ["conflicts", "overlaps and conflicts"],
  ];
  const MAX_CSS_WIDTH = 860, MAX_CSS_HEIGHT = 360, MAX_CELL_PX = 28, MAX_OP_ROWS = 2000;

  // ---------------------------------------------------------------- colours
  function rgb(hex) { const n = parseInt(hex.slice(1), 16); return [(n >> 16) & 255, (n >> 8) & 255, n & 255]; }
  function pack32(r, g, b) { return ((255 << 24) | (b << 16) | (g << 8) | r) >>> 0; }
  function hex32(hex) { const [r, g, b] = rgb(hex); return pack32(r, g, b); }
  function cssColor(c) { return `rgb(${c & 255},${(c >>> 8) & 255},${(c >>> 16) & 255})`; }
  function parseCss(s) {
    if (s.startsWith("#")) return hex32(s);
    const m = s.match(/\d+(\.\d+)?/g).map(Number); return pack32(m[0], m[1], m[2]);
  }
  function lut(interp, fallback) {
    const out = new Uint32Array(256);
    for (let i = 0; i < 256; i++) out[i] = interp ? parseCss(interp(i / 255)) : fallback(i / 255);
    return out;
  }
  function dim(c) { // most of the way to white: the selected program's footprint stands out
    const r = c & 255, g = (c >>> 8) & 255, b = (c >>> 16) & 255;
    return pack32(r + ((255 - r) * 0.62) | 0, g + ((255 - g) * 0.62) | 0, b + ((255 - b) * 0.62) | 0);
  }
  const C = {
    empty: hex32("#eef0f3"), ghostA: hex32("#d5d9df"), ghostB: hex32("#c7ccd3"), masked: hex32("#a3a9b3"),
    outside: hex32("#d946ef"), overlap: hex32("#e11d48"), conflict: hex32("#f97316"), touched: hex32("#cbd5e1"),
    read: hex32("#2563eb"), write: hex32("#ea580c"), rw: hex32("#7c3aed"), readLight: hex32("#93c5fd"),
    writeLight: hex32("#fdba74"), rwLight: hex32("#c4b5fd"), selMasked: hex32("#6b7280"),
  };
  const grey = (t) => { const v = 230 - (t * 200) | 0; return pack32(v, v, v); };
  const TURBO = lut(V.interpolateTurbo, grey), VIRIDIS = lut(V.interpolateViridis, grey);
  const CATEGORICAL = (V.schemeTableau10 || ["#4e79a7", "#f28e2c", "#e15759", "#76b7b2", "#59a14f", "#edc949",
    "#af7aa1", "#ff9da7", "#9c755f", "#bab0ab"]).map(hex32);

  // ---------------------------------------------------------------- containers
  function parseContainer(buffer) {
    const bytes = new Uint8Array(buffer);
    const magic = String.fromCharCode(bytes[0], bytes[1], bytes[2], bytes[3]);
    if (magic !== "TSV1") throw new Error("not a tilescope viewer container");
    const length = new DataView(buffer).getUint32(4, true);
    const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + length)));
    const start = 8 + length, arrays = {};
    const types = { int8: Int8Array, uint8: Uint8Array, int16: Int16Array, uint16: Uint16Array, int32: Int32Array,
      uint32: Uint32Array, float32: Float32Array, float64: Float64Array };
    for (const [name, spec] of Object.entries(header.arrays)) {
      const T = types[spec.dtype];
      const count = spec.shape.reduce((a, b) => a * b, 1);
      arrays[name] = new T(buffer, start + spec.offset, count);
    }
    return { meta: header.meta, arrays };
  }
  async function inflateBase64(text) {
    const raw = atob(text.trim());
    const bytes = new Uint8Array(raw.length);
    for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return await new Response(stream).arrayBuffer();
  }

  class ServerSource {
    constructor(token) { this.token = token; }
    url(path) { return `${path}?token=${encodeURIComponent(this.token)}`; }
    async get(path) {
      const r = await fetch(this.url(path), { credentials: "same-origin" });
      if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
      return r;
    }
    async index() { return (await this.get("/api/index")).json(); }
    async launch(n) { return parseContainer(await (await this.get(`/api/launch/${n}`)).arrayBuffer()); }
    async values(n, p) { return parseContainer(await (await this.get(`/api/launch/${n}/values/${p}`)).arrayBuffer()); }
  }
  class InlineSource {
    async index() { return JSON.parse(document.getElementById("tilescope-index").textContent); }
    async launch(n) {
      const el = document.getElementById(`tilescope-launch-${n}`);
      return el ? parseContainer(await inflateBase64(el.textContent)) : null;
    }
    async values(n, p) {
      const text = state.launch && (state.launch.meta.inline_values || {})[String(p)];
      return text ? parseContainer(await inflateBase64(text)) : null;
    }
  }

  // ---------------------------------------------------------------- state
  const config = JSON.parse(document.getElementById("tilescope-config").textContent);
  const source = config.mode === "server" ? new ServerSource(config.token) : new InlineSource();
  const state = { index: null, launch: null, number: 0, program: -1, mode: "program", finding: null, line: null,
    maps: [], values: null, valuesFor: null };
  window.tilescope = { state, pixel, cellCenter, footprintCells, ready: false };

  // ---------------------------------------------------------------- helpers
  const $ = (sel, root = document) => root.querySelector(sel);
  function el(tag, attrs = {}, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (k === "class") e.className = v; else if (k === "text") e.textContent = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v); else if (v !== null && v !== undefined) e.setAttribute(k, v);
    }
    for (const c of children) if (c !== null && c !== undefined) e.append(c);
    return e;
  }
  const base = (p) => String(p || "").split("/").pop();
  const plural = (n, word) => `${n.toLocaleString()} ${word}${n === 1 ? "" : "s"}`;
  function bytesText(n) {
    const units = ["B", "KiB", "MiB", "GiB"]; let i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return i ? `${n.toFixed(1)} ${units[i]}` : `${n} B`;
  }
  function compact(n) {
    if (n < 1e4) return String(n);
    const units = [[1e9, "G"], [1e6, "M"], [1e3, "K"]];
    for (const [v, u] of units) if (n >= v) return `${(n / v).toFixed(n >= 10 * v ? 0 : 1)}${u}`;
    return String(n);
  }
  function pid(linear, grid) {
    const x = linear % grid[0], y = Math.floor(linear / grid[0]) % grid[1], z = Math.floor(linear / (grid[0] * grid[1]));
    return [x, y, z];
  }
  function pidText(linear, grid) {
    const p = pid(linear, grid);
    if (grid[2] > 1) return `(${p[0]}, ${p[1]}, ${p[2]})`;
    if (grid[1] > 1) return `(${p[0]}, ${p[1]})`;
    return `(${p[0]})`;
  }
  function dtypeShape(a) { return `${a.dtype}[${(a.shape || []).join(", ")}]`; }
  function lowerBound(arr, value) {
    let lo = 0, hi = arr.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (arr[mid] < value) lo = mid + 1; else hi = mid; }
    return lo;
  }
  function showError(message) {
    $("#app").replaceChildren(el("div", { class: "error-box", text: message }));
    document.body.dataset.ready = "error";
  }

  // ---------------------------------------------------------------- routing
  async function route() {
    const m = location.hash.match(/^#\/launch\/(\d+)(?:\/program\/(-?\d+))?/);
    try {
      if (!state.index) {
        state.index = await source.index();
        $("#trace-name").textContent = `${state.index.trace} · ${plural(state.index.launches.length, "launch")}`;
        banner();
      }
      if (m) await showLaunch(Number(m[1]), m[2] === undefined ? -1 : Number(m[2]));
      else showLaunchList();
    } catch (err) {
      showError(String(err && err.message || err));
    }
  }
  function setHash() {
    const h = `#/launch/${state.number}` + (state.program >= 0 ? `/program/${state.program}` : "");
    if (location.hash !== h) history.replaceState(null, "", h);
  }
  function banner() {
    const notes = [...(config.notes || []), ...(state.index.problems || [])];
    const b = $("#banner");
    b.replaceChildren(...notes.map((n) => el("p", { text: n })));
    b.hidden = !notes.length;
  }

  // ---------------------------------------------------------------- launch list
  function showLaunchList() {
    state.launch = null; state.number = 0;
    $("#crumbs").textContent = "";
    const rows = state.index.launches.map((L) => {
      const tensors = L.arguments.filter((a) => a.kind === "tensor" || a.kind === "descriptor");
      const scalars = L.arguments.filter((a) => a.kind === "scalar" || a.kind === "constexpr");
      return el("tr", { "data-launch": L.launch, onclick: () => { location.hash = `#/launch/${L.launch}`; } },
        el("td", { class: "num", text: L.launch }),
        el("td", {}, el("b", { text: L.kernel }), el("div", { class: "meta", text: `${base(L.file)}:${L.line}` })),
        el("td", { class: "mono", text: L.grid.join(" × ") }),
        el("td", { class: "num", text: L.programs.toLocaleString() }),
        el("td", { class: "mono" }, tensors.map((a) => `${a.name}: ${dtypeShape(a)}`).join("\n"),
          el("div", { class: "meta", text: scalars.map((a) => `${a.name}=${a.value}`).join(", ") })),
        el("td", { text: L.status }),
        el("td", { class: "num", text: Number(L.rows).toLocaleString() }),
        el("td", { class: "num" }, el("span", { class: "badge" + (L.findings ? " error" : ""), text: L.findings })));
    });
    const table = el("table", { id: "launch-list" },
      el("thead", {}, el("tr", {}, ...["launch", "kernel", "grid", "programs", "tensor arguments", "status", "op rows",
        "findings"].map((h) => el("th", { text: h })))), el("tbody", {}, ...rows));
    const byClient = {};
    for (const r of state.index.reports) {
      const c = byClient[r.client] || (byClient[r.client] = { findings: 0, files: 0 });
      c.findings += r.findings; c.files += 1;
    }
    const reports = Object.entries(byClient).map(([client, c]) =>
      `${client}: ${plural(c.findings, "finding")}${c.files > 1 ? ` in ${c.files} report files` : ""}`);
    $("#app").replaceChildren(el("h1", { text: "Launches" }),
      el("p", { class: "meta", text: reports.length ? `Reports: ${reports.join("; ")}` :
        "No client reports beside this trace; out-of-bounds lanes are computed from the trace itself." }), table);
    document.body.dataset.view = "launches";
    document.body.dataset.ready = "1";
    window.tilescope.ready = true;
  }

  // ---------------------------------------------------------------- launch view
  async function showLaunch(number, program) {
    if (state.number !== number || !state.launch) {
      document.body.dataset.ready = "0";
      $("#app").replaceChildren(el("p", { class: "loading", text: `Loading launch ${number}…` }));
      const launch = await source.launch(number);
      if (!launch) {
        showError(`Launch ${number} is listed but not embedded in this file (it did not fit the size limit).`);
        return;
      }
      state.launch = launch; state.number = number; state.finding = null; state.line = null;
      state.values = null; state.valuesFor = null;
      buildLaunchView();
    }
    selectProgram(program, { keepHash: true });
    document.body.dataset.view = "launch";
    document.body.dataset.ready = "1";
    window.tilescope.ready = true;
  }

  function buildLaunchView() {
    const { meta } = state.launch;
    const P = meta.programs;
    $("#crumbs").replaceChildren(el("a", { href: "#/", text: "all launches" }), ` › launch ${meta.launch}`);
    document.title = `${meta.kernel} · launch ${meta.launch} · tilescope view`;
    const constexprs = Object.entries(meta.constexprs || {}).map(([k, v]) => `${k}=${v}`).join(", ");
    const head = el("section", { class: "launch-head" },
      el("h1", {}, meta.kernel, " ", el("small", { text: `launch ${meta.launch} · ${base(meta.file)}:${meta.line}` })),
      el("div", { class: "meta" }, `grid ${meta.grid.join(" × ")} = ${plural(P, "program")} · ${meta.status} · values ${meta.values}`,
        constexprs ? ` · ${constexprs}` : "", ` · ${plural(meta.ops.total_rows, "op row")}`));
    const slider = el("input", { type: "range", id: "program-slider", min: 0, max: Math.max(0, P - 1), value: 0,
      oninput: (e) => selectProgram(Number(e.target.value)) });
    const mode = el("select", { id: "mode", onchange: (e) => { state.mode = e.target.value; drawMaps(); } },
      ...MODES.map(([v, label]) => el("option", { value: v, text: label })));
    mode.value = state.mode;
    const controls = el("section", { class: "controls" },
      el("span", {}, el("button", { id: "all-programs", onclick: () => selectProgram(-1), text: "All programs" }), " ",
        el("button", { id: "prev-program", onclick: () => step(-1), text: "◀" }), " ",
        el("button", { id: "next-program", onclick: () => step(1), text: "▶" })),
      el("span", {}, el("label", { for: "program-slider", text: "program " }), slider),
      el("span", { id: "program-label" }),
      el("span", {}, el("label", { for: "mode", text: "colour by " }), mode),
      legend());
    const maps = el("div", { class: "maps", id: "maps" });
    state.maps = meta.tensors.map((t, k) => buildTensorCard(t, k));
    maps.append(...state.maps.map((m) => m.card));
    if (!meta.tensors.length) maps.append(el("p", { class: "hint", text: "This launch has no tensor arguments." }));
    const side = el("aside", { class: "side" }, findingsPanel(), sourcePanel());
    const ops = el("section", { id: "ops" }, el("h2", { id: "ops-title", text: "Ops" }),
      el("div", { class: "ops-wrap" }, el("table", { class: "ops", id: "ops-table" })), el("div", { id: "value-view" }));
    $("#app").replaceChildren(head, controls, el("div", { class: "layout" }, maps, side), ops);
    for (const m of state.maps) setWindow(m); // now that the cards have a width
    const first = document.querySelector("tr.src-line.has-finding") || document.querySelector("tr.src-line.has-ops");
    const wrap = document.querySelector(".source-wrap");
    if (first && wrap) wrap.scrollTop = Math.max(0, first.offsetTop - wrap.clientHeight / 3);
  }

  function legend() {
    const item = (c, text) => el("span", {}, el("i", { style: `background:${cssColor(c)}` }), text);
    return el("span", { class: "legend", id: "legend" }, item(C.read, "read (selected)"), item(C.write, "written"),
      item(C.rw, "both"), item(C.masked, "masked-off lane"), item(C.outside, "outside the tensor"),
      item(C.overlap, "written by 2+ programs"), item(C.ghostA, "not part of the tensor"));
  }

  function step(d) {
    const P = state.launch.meta.programs;
    selectProgram(state.program < 0 ? (d > 0 ? 0 : P - 1) : (state.program + d + P) % P);
  }

  function selectProgram(program, opts = {}) {
    const meta = state.launch.meta;
    state.program = program >= 0 && program < meta.programs ? program : -1;
    const label = $("#program-label");
    label.textContent = state.program < 0 ? `all ${plural(meta.programs, "program")}` :
      `program ${pidText(state.program, meta.grid)} · #${state.program}`;
    document.body.dataset.program = String(state.program);
    $("#all-programs").classList.toggle("active", state.program < 0);
    if (state.program >= 0) $("#program-slider").value = String(state.program);
    if (state.program >= 0) for (const m of state.maps) followFootprint(m);
    drawMaps();
    renderOps();
    if (!opts.keepHash || state.program >= 0) setHash();
  }

  // ---------------------------------------------------------------- element maps
  function buildTensorCard(t, k) {
    const g = t.geometry, s = t.stats;
    const per = g.factor_rows * g.factor_cols > 1 ? `1 cell = ${g.factor_rows}×${g.factor_cols} elements (downsampled)` :
      "1 cell = 1 element";
    const layout = g.shape.length === 1 ? `${g.wrap} per row · ` : g.shape.length >= 3 ? `leading dims flattened into rows · ` : "";
    const stats = `${s.cells_read.toLocaleString()} cells read · ${s.cells_written.toLocaleString()} written · ` +
      `${plural(s.outside_lanes, "lane")} outside · ${plural(s.masked_lanes, "masked-off lane")} · ` +
      `${s.multiwrite_cells.toLocaleString()} written by 2+ programs · ${s.conflict_cells.toLocaleString()} read/write conflicts` +
      (s.untouched_cells ? ` · ${s.untouched_cells.toLocaleString()} never touched` : "");
    const canvas = el("canvas", { class: "map", "data-tensor": t.name });
    const overlay = el("canvas", { class: "overlay" });
    const marks = el("div", { class: "marks" });
    const wrap = el("div", { class: "canvas-wrap" }, canvas, overlay, marks);
    const footprint = el("div", { class: "footprint" });
    const card = el("div", { class: "tensor-card", "data-tensor": t.name, "data-index": k },
      el("h3", {}, t.name, " ", el("small", { text: `${t.dtype}[${g.shape.join(", ")}] · ${layout}${per}` }),
        t.shares && t.shares.length ? el("small", { class: "shares", text: ` · same memory as ${t.shares.join(", ")}` }) : ""),
      el("div", { class: "stats", text: stats }));
    const m = { t, k, g, card, canvas, overlay, marks, footprint, slice: 0, window: [0, g.cell_rows], cache: {} };
    if (g.shape.length >= 3 && g.factor_rows === 1) {
      const slices = Math.ceil(g.rows / g.slice_rows);
      const sliceInput = el("input", { type: "range", min: 0, max: slices - 1, value: 0,
        oninput: (e) => { m.slice = Number(e.target.value); sliceLabel.textContent = sliceText(m); setWindow(m); drawMap(m); } });
      const sliceLabel = el("span", { class: "meta" });
      card.append(el("div", { class: "slice" }, el("label", { text: `slice over [${g.shape.slice(0, -2).join(", ")}] ` }),
        sliceInput, " ", sliceLabel));
      m.sliceLabel = sliceLabel;
      sliceLabel.textContent = sliceText(m);
    }
    card.append(wrap, footprint);
    setWindow(m);
    canvas.addEventListener("click", (e) => {
      const cell = cellAt(m, e);
      if (cell < 0) return;
      const owner = state.launch.arrays[`t${k}.owner`][cell];
      selectProgram(owner >= 0 ? owner : -1);
    });
    canvas.addEventListener("mousemove", (e) => tooltip(m, e));
    canvas.addEventListener("mouseleave", () => { $("#tooltip").hidden = true; });
    return m;
  }
  function sliceText(m) {
    const lead = m.g.shape.slice(0, -2);
    const idx = []; let s = m.slice;
    for (let d = lead.length - 1; d >= 0; d--) { idx.unshift(s % lead[d]); s = Math.floor(s / lead[d]); }
    return `[${idx.join(", ")}, :, :]`;
  }
  function setWindow(m) {
    const g = m.g;
    if (g.shape.length >= 3 && g.factor_rows === 1) {
      let lo = g.before_rows + m.slice * g.slice_rows, hi = lo + g.slice_rows;
      if (m.slice === 0) lo = 0;
      if (hi >= g.before_rows + g.rows) hi = g.cell_rows;
      m.window = [lo, hi];
    } else m.window = [0, g.cell_rows];
    const rows = m.window[1] - m.window[0], cols = g.cell_cols;
    m.canvas.width = cols; m.canvas.height = rows;
    const avail = Math.max(120, Math.min(MAX_CSS_WIDTH, (m.card.clientWidth || MAX_CSS_WIDTH + 22) - 22));
    let scale = Math.min(MAX_CELL_PX, avail / cols, MAX_CSS_HEIGHT / rows);
    scale = scale >= 1 ? Math.floor(scale) : scale;
    m.cssW = Math.max(1, Math.round(cols * scale)); m.cssH = Math.max(1, Math.round(rows * scale));
    m.canvas.style.width = `${m.cssW}px`; m.canvas.style.height = `${m.cssH}px`;
    const dpr = window.devicePixelRatio || 1;
    m.overlay.width = Math.round(m.cssW * dpr); m.overlay.height = Math.round(m.cssH * dpr);
    m.overlay.style.width = `${m.cssW}px`; m.overlay.style.height = `${m.cssH}px`;
    m.cache = {};
  }
  function cellAt(m, e) {
    const rect = m.canvas.getBoundingClientRect();
    const cc = Math.floor((e.clientX - rect.left) / rect.width * m.g.cell_cols);
    const cr = Math.floor((e.clientY - rect.top) / rect.height * (m.window[1] - m.window[0])) + m.window[0];
    if (cc < 0 || cc >= m.g.cell_cols || cr < m.window[0] || cr >= m.window[1]) return -1;
    return cr * m.g.cell_cols + cc;
  }
  function elementOf(g, cell) {
    const cr = Math.floor(cell / g.cell_cols), cc = cell % g.cell_cols;
    const row = cr * g.factor_rows - g.before_rows, col = cc * g.factor_cols - g.before_cols;
    if (!g.shape.length) return [row];
    if (g.shape.length === 1) return [row * g.wrap + col];
    const coords = []; let r = row;
    for (let d = g.shape.length - 2; d >= 1; d--) { const s = g.shape[d]; coords.unshift(((r % s) + s) % s); r = Math.floor(r / s); }
    return [r, ...coords, col];
  }
  function tooltip(m, e) {
    const cell = cellAt(m, e), tip = $("#tooltip");
    if (cell < 0) { tip.hidden = true; return; }
    const A = state.launch.arrays, k = m.k, meta = state.launch.meta;
    const f = A[`t${k}.flags`][cell], owner = A[`t${k}.owner`][cell];
    const what = [];
    if (f & FLAG.READ) what.push("read"); if (f & FLAG.WRITE) what.push("written"); if (f & FLAG.ATOMIC) what.push("atomic");
    if (f & FLAG.OUTSIDE) what.push("attempted from outside the tensor"); if (f & FLAG.MASKED) what.push("a masked-off lane pointed here");
    if (f & FLAG.MULTIWRITE) what.push("written by 2+ programs"); else if (f & FLAG.CONFLICT) what.push("read and written by different programs");
    const element = elementOf(m.g, cell);
    const down = m.g.factor_rows * m.g.factor_cols > 1 ? " (first of the cell)" : "";
    tip.replaceChildren(
      el("div", {}, el("b", { text: `${m.t.name}[${element.join(", ")}]` }), down, (f & FLAG.INSIDE) ? "" : " · not part of the tensor"),
      el("div", { text: owner >= 0 ? `program ${pidText(owner, meta.grid)}${(f & FLAG.WRITE) ? " (lowest writer)" : ""}` : "no program" }),
      el("div", { text: `${A[`t${k}.writers`][cell]} writer / ${A[`t${k}.readers`][cell]} reader programs` }),
      el("div", { text: what.join(", ") || "untouched" }));
    tip.style.left = `${e.clientX + 14}px`; tip.style.top = `${e.clientY + 12}px`;
    tip.hidden = false;
  }

  function baseImage(m) {
    if (m.cache[state.mode]) return m.cache[state.mode];
    const A = state.launch.arrays, k = m.k, g = m.g, meta = state.launch.meta;
    const flags = A[`t${k}.flags`], owner = A[`t${k}.owner`], writers = A[`t${k}.writers`], readers = A[`t${k}.readers`];
    const [lo, hi] = m.window, cols = g.cell_cols, out = new Uint32Array((hi - lo) * cols);
    const gx = meta.grid[0], gy = meta.grid[1], span = Math.max(1, meta.programs - 1);
    const mode = state.mode;
    for (let cr = lo; cr < hi; cr++) {
      for (let cc = 0; cc < cols; cc++) {
        const i = cr * cols + cc, f = flags[i];
        let c;
        if (f & FLAG.OUTSIDE) c = C.outside;
        else if (!(f & (FLAG.READ | FLAG.WRITE))) c = (f & FLAG.MASKED) ? C.masked : (f & FLAG.INSIDE) ? C.empty : (((cr + cc) & 1) ? C.ghostA : C.ghostB);
        else if (mode === "program") {
          if (f & FLAG.MULTIWRITE) c = C.overlap;
          else { const o = owner[i], x = o % gx, y = Math.floor(o / gx) % gy, z = Math.floor(o / (gx * gy)); c = CATEGORICAL[(x + 2 * y + 4 * z) % CATEGORICAL.length]; }
        } else if (mode === "order") c = TURBO[Math.round(owner[i] / span * 255)];
        else if (mode === "access") c = (f & FLAG.WRITE) && (f & FLAG.READ) ? C.rwLight : (f & FLAG.WRITE) ? C.writeLight : C.readLight;
        else if (mode === "writers") c = writers[i] ? VIRIDIS[Math.min(255, Math.round(Math.log2(writers[i]) / 8 * 255))] : C.touched;
        else if (mode === "readers") c = readers[i] ? VIRIDIS[Math.min(255, Math.round(Math.log2(readers[i]) / 8 * 255))] : C.touched;
        else c = (f & FLAG.MULTIWRITE) ? C.overlap : (f & FLAG.CONFLICT) ? C.conflict : C.touched;
        out[(cr - lo) * cols + cc] = c;
      }
    }
    m.cache[state.mode] = out;
    return out;
  }

  function lineSites() { // the site ids on the selected source line, or null for every site
    if (state.line === null) return null;
    return new Set(state.launch.meta.sites.filter((s) => s.line === state.line).map((s) => s.site));
  }
  function footprintRuns(k, program, sites = null) { // [class, first cell, cells]; program -1: every program
    const A = state.launch.arrays, t = state.launch.meta.tensors[k], S = t.sites.length;
    const runs = [];
    if (sites && !t.sites.some((x) => sites.has(x))) return runs;
    const split = sites && S > 1; // several sites touch this tensor: use the per-site runs
    const group = A[split ? `t${k}.site_runs_group` : `t${k}.runs_group`];
    const start = A[split ? `t${k}.site_runs_start` : `t${k}.runs_start`];
    const length = A[split ? `t${k}.site_runs_length` : `t${k}.runs_length`];
    const per = split ? S * 4 : 4;
    const lo = program < 0 ? 0 : lowerBound(group, program * per), hi = program < 0 ? group.length : lowerBound(group, (program + 1) * per);
    for (let i = lo; i < hi; i++) {
      if (split && !sites.has(t.sites[(group[i] >> 2) % S])) continue;
      runs.push([group[i] & 3, start[i], length[i]]);
    }
    return runs;
  }
  function footprintCells(k, program, sites = null) { // cells per class, for tests and the summary line
    const out = { read: 0, write: 0, masked: 0, outside: 0 };
    for (const [cls, , n] of footprintRuns(k, program, sites)) out[CLASSES[cls]] += n;
    return out;
  }

  function drawMaps() { for (const m of state.maps) drawMap(m); }
  function drawMap(m) {
    const ctx = m.canvas.getContext("2d");
    const [lo, hi] = m.window, cols = m.g.cell_cols, rows = hi - lo;
    if (!rows || !cols) return;
    const img = ctx.createImageData(cols, rows);
    const px = new Uint32Array(img.data.buffer);
    const baseImg = baseImage(m), sites = lineSites();
    if (state.program < 0 && !sites) px.set(baseImg);
    else {
      for (let i = 0; i < px.length; i++) px[i] = dim(baseImg[i]);
      const painted = new Uint8Array(px.length);
      for (const [cls, s, n] of footprintRuns(m.k, state.program, sites)) {
        for (let cell = s; cell < s + n; cell++) {
          const cr = Math.floor(cell / cols);
          if (cr < lo || cr >= hi) continue;
          const j = cell - lo * cols;
          if (cls === 0) { px[j] = painted[j] & 2 ? C.rw : C.read; painted[j] |= 1; }
          else if (cls === 1) { px[j] = painted[j] & 1 ? C.rw : C.write; painted[j] |= 2; }
          else if (cls === 3) { px[j] = C.outside; painted[j] |= 4; }
          else if (!painted[j]) px[j] = C.selMasked;
        }
      }
    }
    ctx.putImageData(img, 0, 0);
    drawOverlay(m);
    summarizeFootprint(m);
  }
  function summarizeFootprint(m) {
    const meta = state.launch.meta, sites = lineSites();
    if (state.program < 0 && !sites) { m.footprint.replaceChildren(el("span", { text: "click an element to select the program that owns it" })); return; }
    const c = footprintCells(m.k, state.program, sites);
    const parts = [`read ${c.read.toLocaleString()}`, `written ${c.write.toLocaleString()}`];
    if (c.outside) parts.push(`outside ${c.outside.toLocaleString()}`);
    if (c.masked) parts.push(`masked-off ${c.masked.toLocaleString()}`);
    const who = state.program < 0 ? "all programs" : `program ${pidText(state.program, meta.grid)}`;
    m.footprint.replaceChildren(el("b", { text: who + (sites ? `, line ${state.line}` : "") }), `: ${parts.join(" · ")} cells`);
    m.footprint.dataset.read = c.read; m.footprint.dataset.write = c.write; m.footprint.dataset.outside = c.outside;
  }

  function cellBox(m, cell) { // CSS box of a cell inside the canvas, or null when outside the window
    const cr = Math.floor(cell / m.g.cell_cols), cc = cell % m.g.cell_cols;
    if (cr < m.window[0] || cr >= m.window[1]) return null;
    const w = m.cssW / m.g.cell_cols, h = m.cssH / (m.window[1] - m.window[0]);
    return { x: cc * w, y: (cr - m.window[0]) * h, w, h };
  }
  function drawOverlay(m) {
    const ctx = m.overlay.getContext("2d"), dpr = window.devicePixelRatio || 1;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, m.cssW, m.cssH);
    m.marks.replaceChildren();
    const A = state.launch.arrays;
    const cw = m.cssW / m.g.cell_cols, ch = m.cssH / (m.window[1] - m.window[0]);
    if (cw >= 8 && ch >= 8) { // faint cell grid when cells are big enough to count
      ctx.strokeStyle = "rgba(255,255,255,0.55)"; ctx.lineWidth = 1; ctx.beginPath();
      for (let c = 1; c < m.g.cell_cols; c++) { ctx.moveTo(c * cw, 0); ctx.lineTo(c * cw, m.cssH); }
      for (let r = 1; r < m.window[1] - m.window[0]; r++) { ctx.moveTo(0, r * ch); ctx.lineTo(m.cssW, r * ch); }
      ctx.stroke();
    }
    for (const f of state.launch.meta.findings) {
      const selected = state.finding === f.id;
      if (selected && f.bad && f.bad.tensor === m.k) { // every lane of the site that fell outside
        const sites = A[`t${m.k}.outside_site`], cells = A[`t${m.k}.outside_cell`];
        ctx.strokeStyle = "#86198f"; ctx.lineWidth = 1.5;
        for (let i = 0; i < sites.length; i++) {
          if (!f.bad.sites.includes(sites[i])) continue;
          const b = cellBox(m, cells[i]);
          if (b) ctx.strokeRect(b.x + 0.75, b.y + 0.75, Math.max(1, b.w - 1.5), Math.max(1, b.h - 1.5));
        }
      }
      const cells = new Map(); // the selected finding's labels, one per marked cell of this map
      for (const mark of f.marks) {
        if (mark.tensor !== m.k) continue;
        const b = cellBox(m, mark.cell);
        if (!b) continue;
        const size = Math.max(14, Math.min(40, Math.max(b.w, b.h) + 8));
        const cx = b.x + b.w / 2, cy = b.y + b.h / 2;
        const ring = el("div", { class: "mark" + (selected ? " selected" : ""), "data-finding": f.id,
          "data-element": mark.element.join(","), "data-cell": mark.cell,
          style: `left:${cx}px;top:${cy}px;width:${size}px;height:${size}px`, title: `${f.kind}: ${mark.label}` });
        m.marks.append(ring);
        if (!selected || !mark.label) continue;
        const flip = cx > m.cssW * 0.6; // near the right edge the label goes to the mark's left
        const at = cells.get(mark.cell) || { x: flip ? cx - size / 2 - 2 : cx + size / 2 + 2, y: cy - 8, flip, labels: [] };
        if (!at.labels.includes(mark.label)) at.labels.push(mark.label);
        cells.set(mark.cell, at);
      }
      // both sides of a race get a label each; a run of marks (sectors, lanes) one, for its first cell
      const spots = [...cells.values()];
      spots.slice(0, spots.length > 2 ? 1 : 2).forEach((at) => {
        const more = spots.length > 2 ? ` (+${plural(spots.length - 1, "more element")})` : "";
        m.marks.append(el("div", { class: "mark-label" + (at.flip ? " flip" : ""), text: at.labels.join(" · ") + more,
          style: `left:${at.x}px;top:${Math.max(0, at.y)}px` }));
      });
    }
  }

  // test hooks: what is drawn where
  function pixel(k, cellRow, cellCol) {
    const m = state.maps[k], ctx = m.canvas.getContext("2d");
    const d = ctx.getImageData(cellCol, cellRow - m.window[0], 1, 1).data;
    return [d[0], d[1], d[2]];
  }
  function cellCenter(k, cell) {
    const m = state.maps[k], b = cellBox(m, cell);
    if (!b) return null;
    const rect = m.canvas.getBoundingClientRect();
    return { x: rect.left + b.x + b.w / 2, y: rect.top + b.y + b.h / 2 };
  }

  // ---------------------------------------------------------------- findings
  function findingsPanel() {
    const { meta } = state.launch;
    const list = el("ul", { id: "finding-list" });
    for (const f of meta.findings) {
      const labels = [...new Set(f.marks.map((m) => m.label).filter(Boolean))];
      const marks = labels.slice(0, 2).join("; ") + (labels.length > 2 ? `; … (${plural(f.marks.length, "element")})` : "");
      const programs = f.program_count ? `${plural(f.program_count, "program")}: ` +
        f.programs.slice(0, 6).map((p) => `(${p.filter((_, i) => i < 1 || meta.grid[i] > 1).join(", ")})`).join(" ") +
        (f.program_count > 6 ? " …" : "") : "";
      list.append(el("li", { class: "finding", "data-id": f.id, "data-line": f.line, onclick: () => selectFinding(f.id) },
        el("div", {}, el("span", { class: `badge ${f.severity}`, text: f.severity }), " ", el("b", { text: f.kind }),
          " ", el("span", { class: "meta", text: `(${f.client})` })),
        el("div", { class: "msg", text: f.message }),
        el("div", { class: "extra" }, el("span", { class: "where", text: `${base(f.file)}:${f.line}${f.column ? ":" + f.column : ""}` }),
          marks ? ` · ${marks}` : "", programs ? ` · ${programs}` : ""),
        ...f.notes.slice(0, 4).map((n) => el("div", { class: "extra", text: `= ${n.label}: ${n.text}${n.line ? `   (line ${n.line})` : ""}` }))));
    }
    const reports = [...new Set(state.index.reports.map((r) => r.client))].join(", ");
    return el("section", { id: "findings" }, el("h2", {}, `Findings `, el("span", { class: "badge" + (meta.findings.length ? " error" : ""), text: meta.findings.length })),
      meta.findings.length ? list : el("p", { class: "hint", text: reports ? `No findings of ${reports} in this launch.` : "No findings in this launch." }));
  }
  function selectFinding(id) {
    const f = state.launch.meta.findings.find((x) => x.id === id);
    state.finding = state.finding === id ? null : id;
    for (const li of document.querySelectorAll("li.finding")) li.classList.toggle("selected", Number(li.dataset.id) === state.finding);
    if (state.finding !== null && f) {
      selectLine(f.line, { scroll: true, toggle: false });
      const mark = f.marks.find((m) => m.program !== null && m.program !== undefined);
      const meta = state.launch.meta;
      const first = mark ? mark.program : f.programs.length ? f.programs[0][0] + meta.grid[0] * (f.programs[0][1] + meta.grid[1] * f.programs[0][2]) : -1;
      if (mark) { const m = state.maps[mark.tensor]; if (m && m.g.shape.length >= 3) revealCell(m, mark.cell); }
      selectProgram(first);
      const card = mark && state.maps[mark.tensor] && state.maps[mark.tensor].card;
      if (card) card.scrollIntoView({ block: "nearest" });
    } else drawMaps();
  }
  function followFootprint(m) { // a sliced map shows the slice where the selected program's footprint is
    if (!m.sliceLabel) return;
    const runs = footprintRuns(m.k, state.program).filter(([cls]) => cls !== 2);
    const cols = m.g.cell_cols;
    if (!runs.length || runs.some(([, s, n]) => Math.floor((s + n - 1) / cols) >= m.window[0] && Math.floor(s / cols) < m.window[1])) return;
    revealCell(m, runs[0][1]);
  }
  function revealCell(m, cell) {
    const cr = Math.floor(cell / m.g.cell_cols);
    if (cr >= m.window[0] && cr < m.window[1]) return;
    m.slice = Math.max(0, Math.min(Math.ceil(m.g.rows / m.g.slice_rows) - 1, Math.floor((cr - m.g.before_rows) / m.g.slice_rows)));
    const input = m.card.querySelector(".slice input"); if (input) input.value = String(m.slice);
    if (m.sliceLabel) m.sliceLabel.textContent = sliceText(m);
    setWindow(m);
  }

  // ---------------------------------------------------------------- source
  function sourcePanel() {
    const { meta } = state.launch, src = meta.source;
    const table = el("table", { class: "source", id: "source-table" });
    const counts = meta.lines || {};
    const findingLines = {};
    for (const f of meta.findings) for (const l of f.lines) findingLines[l] = (findingLines[l] || 0) + 1;
    src.lines.forEach((text, i) => {
      const n = src.first_line + i, c = counts[String(n)];
      const code = el("td", { class: "code" });
      if (V.hljs && text.trim()) code.innerHTML = V.hljs.highlight(text, { language: "python", ignoreIllegals: true }).value;
      else code.textContent = text;
      const tr = el("tr", { class: "src-line" + (c && c.rows ? " has-ops" : "") + (findingLines[n] ? " has-finding" : ""), "data-line": n,
        onclick: () => selectLine(n, { toggle: true }),
        title: c ? `${plural(c.rows, "program-op row")}, ${plural(c.lanes, "enabled lane")}, ${bytesText(c.bytes)}` +
          (c.outside ? `, ${plural(c.outside, "lane")} outside` : "") + (findingLines[n] ? `, ${plural(findingLines[n], "finding")}` : "") : "" },
        el("td", { class: "ln", text: n }),
        el("td", { class: "count", text: c && c.rows ? compact(c.lanes) : "" }),
        el("td", { class: "count", text: c && c.rows ? bytesText(c.bytes) : "" }),
        el("td", { class: "count", text: findingLines[n] ? `⚠ ${findingLines[n]}` : c && c.outside ? `${c.outside} out` : "" }),
        code);
      table.append(tr);
    });
    const note = src.verified ? `${base(src.file)} (lines ${src.first_line}–${src.first_line + src.lines.length - 1}); per line over all programs: lanes accessed, bytes moved, findings` :
      `${base(src.file)}: the file is not available or changed since the trace; showing the lines the trace recorded`;
    return el("section", { id: "source" }, el("h2", { text: "Source" }), el("div", { class: "meta", text: note }),
      el("div", { class: "source-wrap" }, table));
  }
  function selectLine(n, opts = {}) {
    state.line = opts.toggle && state.line === n ? null : n;
    for (const tr of document.querySelectorAll("tr.src-line")) tr.classList.toggle("selected", Number(tr.dataset.line) === state.line);
    const row = document.querySelector(`tr.src-line[data-line="${state.line}"]`);
    if (row && opts.scroll) row.scrollIntoView({ block: "center" });
    renderOps();
    drawMaps();
  }

  // ---------------------------------------------------------------- ops of the selected program
  function renderOps() {
    const table = $("#ops-table"); if (!table) return;
    const { meta, arrays: A } = state.launch, ops = meta.ops, title = $("#ops-title");
    $("#value-view").replaceChildren();
    if (state.program < 0) {
      title.textContent = "Ops";
      table.replaceChildren(el("tr", {}, el("td", { class: "hint", text: "Select a program (slider, ◀ ▶, or click an element) to see its ops in order." })));
      return;
    }
    const lo = A["ops.offsets"][state.program], hi = A["ops.offsets"][state.program + 1];
    const siteLine = {}; for (const s of meta.sites) siteLine[s.site] = s.line;
    const titled = (shown) => { title.textContent = `Ops of program ${pidText(state.program, meta.grid)}` +
      (state.line !== null ? ` at line ${state.line} (${shown} of ${plural(hi - lo, "row")})` : ` (${plural(hi - lo, "row")})`); };
    titled(hi - lo);
    if (hi === lo) {
      table.replaceChildren(el("tr", {}, el("td", { class: "hint", text: ops.complete ? "This program recorded no ops." :
        `Op rows of this program are not in this file (it keeps ${ops.programs_included} of ${meta.programs} programs' rows).` })));
      return;
    }
    const head = el("tr", {}, ...["op", "kind", "line", "argument", "dtype", "shape", "loop", "lanes", "bytes", "outside", "values"].map((h) => el("th", { text: h })));
    const body = [];
    const depth = ops.loop_depth, rank = ops.rank;
    for (let r = lo; r < hi && body.length < MAX_OP_ROWS; r++) {
      const line = siteLine[A["ops.site"][r]];
      if (state.line !== null && line !== state.line) continue;
      const shape = []; for (let d = 0; d < rank; d++) { const v = A["ops.shape"][r * rank + d]; if (v >= 0) shape.push(v); }
      const loops = [];
      for (let d = 0; d < depth; d++) {
        const s = A["ops.loop_sites"][r * depth + d], it = A["ops.loop_iterations"][r * depth + d];
        if (s >= 0) loops.push(`${meta.loops[String(s)] || "L" + (siteLine[s] || "?")}=${it}`);
      }
      const arg = A["ops.argument"][r], outside = A["ops.outside"][r];
      body.push(el("tr", { class: outside ? "bad" : "", "data-row": r - lo, "data-line": line,
        title: "click: show only this line's elements", onclick: (e) => { if (!e.target.closest("canvas, a")) selectLine(line, { toggle: true }); } },
        el("td", { class: "num", text: A["ops.op"][r] }), el("td", { text: ops.kinds[A["ops.kind"][r]] || "?" }),
        el("td", { class: "num" }, el("a", { href: "javascript:void 0", text: line ?? "?", onclick: (e) => { e.preventDefault(); selectLine(line, { scroll: true }); } })),
        el("td", { text: arg >= 0 ? ops.arguments[arg] : "" }), el("td", { text: ops.dtypes[A["ops.dtype"][r]] || "" }),
        el("td", { text: `[${shape.join(", ")}]` }), el("td", { text: loops.join(" ") }),
        el("td", { class: "num", text: arg >= 0 ? `${A["ops.active"][r]}/${A["ops.lanes"][r]}` : "" }),
        el("td", { class: "num", text: bytesText(A["ops.bytes"][r]) }),
        el("td", { class: "num" + (outside ? " outside" : ""), text: outside || "" }),
        el("td", { class: "values" })));
    }
    table.replaceChildren(el("thead", {}, head), el("tbody", {}, ...body));
    titled(body.length);
    if (meta.values !== "off") loadValues(lo);
  }
  async function loadValues(lo) {
    const key = `${state.number}:${state.program}`;
    if (state.valuesFor !== key) {
      state.valuesFor = key; state.values = null;
      try { state.values = await source.values(state.number, state.program); } catch (err) { state.values = null; }
      if (state.valuesFor !== key) return;
    }
    const v = state.values;
    if (!v) return;
    for (const [i, tile] of v.meta.tiles.entries()) {
      const tr = document.querySelector(`#ops-table tr[data-row="${tile.position}"]`);
      if (!tr) continue;
      const data = v.arrays[`v${i}`];
      const thumb = heatmap(data, tile, 48);
      thumb.addEventListener("click", () => showValues(tr, data, tile));
      tr.querySelector("td.values").replaceChildren(thumb);
    }
  }
  function heatmap(data, tile, maxPx) {
    const [h, w] = tile.tile, c = el("canvas", { width: w, height: h, title: `min ${tile.min}, max ${tile.max}` });
    const scale = Math.max(1, Math.floor(maxPx / Math.max(h, w)));
    c.style.width = `${Math.max(4, Math.min(maxPx * 4, w * scale))}px`; c.style.height = `${Math.max(4, Math.min(maxPx, h * scale))}px`;
    const ctx = c.getContext("2d"), img = ctx.createImageData(w, h), px = new Uint32Array(img.data.buffer);
    const span = tile.max - tile.min || 1;
    for (let i = 0; i < data.length; i++) {
      const x = data[i];
      px[i] = Number.isFinite(x) ? VIRIDIS[Math.max(0, Math.min(255, Math.round((x - tile.min) / span * 255)))] : (((i + Math.floor(i / w)) & 1) ? C.ghostA : C.ghostB);
    }
    ctx.putImageData(img, 0, 0);
    return c;
  }
  function showValues(tr, data, tile) {
    const view = $("#value-view");
    const big = heatmap(data, tile, 320);
    const cells = tile.tile[0] * tile.tile[1];
    big.style.width = `${Math.min(900, tile.tile[1] * Math.max(1, Math.floor(320 / Math.max(...tile.tile))))}px`;
    big.style.height = "auto";
    view.replaceChildren(el("h3", { text: `Values of op ${tr.firstChild.textContent} (shape [${tile.shape.join(", ")}])` }),
      el("div", { class: "meta", text: `min ${tile.min.toPrecision(6)} · max ${tile.max.toPrecision(6)} · ${cells.toLocaleString()} cells` +
        (tile.step > 1 ? ` · every ${tile.step}th lane per axis` : "") + " · hatched: masked-off lane · colour: viridis from min to max" }), big);
  }

  // ---------------------------------------------------------------- start
  document.addEventListener("keydown", (e) => {
    if (!state.launch || e.target.closest && e.target.closest("input, select, textarea")) return;
    if (e.key === "ArrowRight") step(1); else if (e.key === "ArrowLeft") step(-1); else if (e.key === "Escape") selectProgram(-1);
  });
  let resizeTimer = 0;
  window.addEventListener("resize", () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => { if (state.launch) { for (const m of state.maps) setWindow(m); drawMaps(); } }, 150);
  });
  window.addEventListener("hashchange", route);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", route); else route();
})();
